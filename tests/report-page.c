/*
 * report-page.c: write the HTML report of a database or pickle, for the
 * tests and the benchmark until `vramtrace report --html` calls the same
 * functions.
 *
 * usage: report-page DB|PICKLE OUT.html [RUN [WINDOW]]
 *
 * WINDOW is how many events the walk sorts at once (query_report; 0: the
 * default).  Prints the seconds the aggregation and the writing took on
 * stderr.
 */
#include "config.h"

#include "vramtrace.h"
#include "report.h"

#include <stdlib.h>
#include <time.h>

#include "query.h"

static double
now(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((double)ts.tv_sec + (double)ts.tv_nsec / 1e9);
}

int
main(int argc, char **argv)
{
	struct leak_options	 opts;
	struct leak_report	*lr = NULL;
	struct report		*r = NULL;
	struct query_run	 run = { 0 };
	struct query		*q;
	char			*cause = NULL;
	FILE			*f;
	double			 t0 = now(), t1;
	size_t			 window;

	log_program = "report-page";
	if (argc < 3 || argc > 5) {
		fprintf(stderr, "usage: report-page DB|PICKLE OUT.html "
		    "[RUN [WINDOW]]\n");
		return (2);
	}
	leak_options_init(&opts);
	opts.run_id = argc >= 4 ? strtoll(argv[3], NULL, 10) : 0;
	window = argc >= 5 ? strtoull(argv[4], NULL, 10) : 0;
	if ((q = input_open(argv[1], &cause)) == NULL ||
	    query_run(q, opts.run_id, QUERY_COUNT_PROCESSES |
	    QUERY_COUNT_DEVICES | QUERY_COUNT_ALLOCATIONS, &run, &cause) != 0 ||
	    query_leaks(q, &opts, &lr, &cause) != 0 ||
	    query_report(q, run.id, lr->layer, window, &r, &cause) != 0 ||
	    query_report_sites(q, r, &cause) != 0)
		fatal("%s", cause);
	t1 = now();
	if ((f = fopen(argv[2], "w")) == NULL)
		fatal("%s: cannot create", argv[2]);
	if (report_html_write(f, &run, r, lr, &cause) != 0 || fclose(f) != 0)
		fatal("%s: cannot write", argv[2]);
	fprintf(stderr, "aggregate %.3f s, write %.3f s\n", t1 - t0,
	    now() - t1);
	query_report_free(r);
	leak_report_free(lr);
	query_run_free(&run);
	query_close(q);
	return (0);
}
