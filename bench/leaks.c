/*
 * leaks.c: how long vramtrace leaks takes on a large run.
 *
 * usage: bench-leaks [MILLIONS-OF-ALLOCATIONS] [DB]   (default 10, a temp
 * file; an existing DB is reused)
 *
 * Writes a run through the real writer (a store source, as `vramtrace
 * record` does): the allocations spread over 100 steps on four streams
 * (stream 7 is the NULL stream), each freed soon after it was made, except
 * one in a thousand on side stream 13 that is never freed (a leak), and
 * then times the analysis (query_open and query_leaks, what `vramtrace
 * leaks` does before printing).
 */
#include "config.h"

#include "vramtrace.h"
#include "bench.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "query.h"

#define STEPS	100


static void
site_strings(struct store_source *src)
{
	struct event	ev;
	char		text[64];
	uint32_t	i;

	for (i = 1; i <= 16; i++) {
		memset(&ev, 0, sizeof ev);
		snprintf(text, sizeof text, "op%u\tmodel.py\t%u\n", i, 10 * i);
		ev.type = EVENT_STRING;
		ev.u.string.id = i;
		ev.u.string.length = (uint32_t)strlen(text);
		ev.u.string.text = text;
		bench_put(src, &ev);
	}
}

static void
generate(const char *path, uint64_t n)
{
	struct store_run_info	 info = { .source = "replay" };
	struct store		*s;
	struct store_source	*src;
	struct event		 ev;
	struct bench_churn	 churn;
	uint64_t		 i, made = 0, t = 1700000000000000000ULL;
	char			*cause = NULL;
	size_t			 k;

	if ((s = store_open(path, STORE_CREATE, &cause)) == NULL)
		fatal("%s", cause);
	if (store_run_begin(s, &info, &cause) != 0)
		fatal("%s", cause);
	src = store_source_create(s, "bench");
	site_strings(src);
	memset(&ev, 0, sizeof ev);
	ev.type = EVENT_STREAM_CREATE;
	ev.u.stream.stream = 7;
	ev.u.stream.flags = 3;
	ev.u.stream.handle = ev.u.stream.context = EVENT_NONE;
	bench_put(src, &ev);
	bench_churn_init(&churn);
	for (i = 0; made < n; i++) {
		t += 1000;
		k = bench_churn_next(&churn, &ev, t, 12);
		ev.u.alloc.stream = 7 + 2 * (k & 3);
		if (ev.type == EVENT_ALLOC) {
			ev.u.alloc.site = 1 + (uint32_t)(k % 16);
			/* A few in a thousand on stream 13 stay. */
			if (ev.u.alloc.stream == 13 && made % 1000 < 4)
				churn.live[k] = 0;
			made++;
		}
		bench_put(src, &ev);
		if (made % (n / STEPS) == 0 && ev.type == EVENT_ALLOC)
			bench_step(src, t);
		if (i % 500000 == 499999 && store_commit(s, &cause) != 0)
			fatal("%s", cause);
	}
	bench_finish(s, src);
}

int
main(int argc, char **argv)
{
	struct leak_options	 opts = { .warmup = 1,
	    .threshold = 1024 * 1024, .layer = -1 };
	struct leak_report	*r;
	struct query		*q;
	struct stat		 sb;
	uint64_t		 n, t0, t1;
	char			 path[256], *cause = NULL;

	n = (argc > 1 ? strtoull(argv[1], NULL, 10) : 10) * 1000000;
	if (argc > 2)
		snprintf(path, sizeof path, "%s", argv[2]);
	else
		snprintf(path, sizeof path, "/tmp/bench-leaks-%d.db",
		    (int)getpid());
	if (stat(path, &sb) != 0) {
		t0 = lib_now_ns();
		generate(path, n);
		printf("generated %" PRIu64 " allocations in %.1f s\n", n,
		    (double)(lib_now_ns() - t0) / 1e9);
	}
	t0 = lib_now_ns();
	if ((q = query_open(path, &cause)) == NULL ||
	    query_leaks(q, &opts, &r, &cause) != 0)
		fatal("%s", cause);
	t1 = lib_now_ns();
	printf("verdict %s, %+.0f bytes per step, %zu steps, %zu streams\n",
	    leak_verdict_name(r->verdict), r->growth_bytes_per_step,
	    r->nsteps, r->nstreams);
	printf("leaks seconds     %.3f\n", (double)(t1 - t0) / 1e9);
	leak_report_free(r);
	query_close(q);
	if (argc <= 2)
		unlink(path);
	return (0);
}
