/*
 * store-ingest.c: how fast the real writer takes allocation and free
 * events, and how many bytes of database each costs.
 *
 * usage: store-ingest [MILLIONS-OF-EVENTS] [DB]   (default 4, a temp file)
 *
 * The events look like a training run: a working set of live allocations
 * on a few streams, each freed some time after it was made, a step marker
 * every 100,000 events, a commit every 500,000 (the collector commits on a
 * timer).  The time includes finishing the run (indexes, ANALYZE).
 */
#include "config.h"

#include "vramtrace.h"
#include "bench.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>



int
main(int argc, char **argv)
{
	struct store_run_info	 info = { .source = "replay" };
	struct store		*s;
	struct store_source	*src;
	struct event		 ev;
	struct bench_churn	 churn;
	struct stat		 sb;
	uint64_t		 n, i, t0, t1, tf, t = 1700000000000000000ULL;
	char			 path[256], *cause = NULL;
	double			 secs;
	size_t			 k;

	n = (argc > 1 ? strtoull(argv[1], NULL, 10) : 4) * 1000000;
	if (argc > 2)
		snprintf(path, sizeof path, "%s", argv[2]);
	else
		snprintf(path, sizeof path, "/tmp/store-ingest-%d.db",
		    (int)getpid());
	unlink(path);
	t0 = lib_now_ns();
	if ((s = store_open(path, STORE_CREATE, &cause)) == NULL)
		fatal("%s", cause);
	if (store_run_begin(s, &info, &cause) != 0)
		fatal("%s", cause);
	src = store_source_create(s, "bench");
	bench_churn_init(&churn);
	for (i = 0; i < n; i++) {
		t += 1000 + bench_random(&churn.seed) % 1000;
		k = bench_churn_next(&churn, &ev, t, 16);
		ev.u.alloc.correlation = i;
		ev.u.alloc.stream = 13 + (k & 3);
		bench_put(src, &ev);
		if (i % 100000 == 99999)
			bench_step(src, t);
		if (i % 500000 == 499999 && store_commit(s, &cause) != 0)
			fatal("%s", cause);
	}
	tf = lib_now_ns();
	bench_finish(s, src);
	t1 = lib_now_ns();
	secs = (double)(t1 - t0) / 1e9;
	if (stat(path, &sb) != 0)
		fatal("%s: cannot stat", path);
	printf("events            %" PRIu64 "\n", n);
	printf("seconds           %.2f\n", secs);
	printf("events per second %.0f\n", (double)n / secs);
	printf("of which finishing %.2f s (indexes, ANALYZE)\n",
	    (double)(t1 - tf) / 1e9);
	printf("database bytes    %lld\n", (long long)sb.st_size);
	printf("bytes per event   %.1f\n", (double)sb.st_size / (double)n);
	if (argc <= 2)
		unlink(path);
	return (0);
}
