/*
 * export.c: how long `vramtrace export` spends reading a large run: the
 * bounds (query_timeline_bounds), the live-byte changes and device totals
 * (one walk: query_timeline_live), then each other kind of timed item and
 * the allocations written as slices, each alone.
 *
 * usage: bench-export DB [RUN [ALLOCATIONS]]   (a database made by
 * bench/leaks; ALLOCATIONS the largest read as slices, default 100000)
 *
 * Prints one line per figure: seconds of CPU and wall, and what was read.
 */
#include "config.h"

#include "vramtrace.h"

#include <inttypes.h>
#include <stdlib.h>
#include <time.h>

#include "query.h"

static double
wall(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((double)ts.tv_sec + (double)ts.tv_nsec / 1e9);
}

static double
cpu(void)
{
	return ((double)clock() / CLOCKS_PER_SEC);
}

/* Count the items. */
static void
count(void *arg, const struct query_item *it)
{
	(void)it;
	(*(int64_t *)arg)++;
}

static void
report(const char *what, double w0, double c0, int64_t n)
{
	printf("%-18s %8.3f s wall %8.3f s CPU %12" PRId64 " items\n", what,
	    wall() - w0, cpu() - c0, n);
}

int
main(int argc, char **argv)
{
	static const char *const	 names[QUERY_ITEM_MAX] = {
		"processes", "streams", "changes+totals", NULL, "copies",
		"steps", "offload", "allocations"
	};
	struct query_bounds		 b;
	struct query			*q;
	char				*cause = NULL;
	int64_t				 run, limit, n;
	double				 w0, c0;
	int				 k, rc;

	log_program = "bench-export";
	if (argc < 2 || argc > 4) {
		fprintf(stderr, "usage: bench-export DB [RUN [ALLOCATIONS]]\n");
		return (2);
	}
	run = argc > 2 ? strtoll(argv[2], NULL, 10) : 0;
	limit = argc > 3 ? strtoll(argv[3], NULL, 10) : 100000;
	if ((q = query_open(argv[1], &cause)) == NULL)
		fatal("%s", cause);
	w0 = wall();
	c0 = cpu();
	if (query_timeline_bounds(q, run, &b, &cause) != 0)
		fatal("%s", cause);
	report("bounds", w0, c0, b.events);
	printf("%-18s %" PRId64 " tracks, %" PRId64 " device totals\n", "",
	    b.tracks, b.totals);
	for (k = 0; k < QUERY_ITEM_MAX; k++) {
		if (k == QUERY_ITEM_TOTAL)
			continue;	/* with the changes */
		n = 0;
		w0 = wall();
		c0 = cpu();
		if (k == QUERY_ITEM_CHANGE)
			rc = query_timeline_live(q, b.run_id, b.first_ns, count,
			    &n, &cause);
		else if (k == QUERY_ITEM_ALLOCATION)
			rc = query_timeline_allocations(q, b.run_id, limit,
			    count, &n, &cause);
		else
			rc = query_timeline(q, b.run_id, k, count, &n, &cause);
		if (rc != 0)
			fatal("%s", cause);
		report(names[k], w0, c0, n);
	}
	query_close(q);
	return (0);
}
