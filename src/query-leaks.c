/*
 * query-leaks.c: the leak report of a run: its verdict, growth, streams and
 * suspects, and for a job of several ranks each rank alone.
 *
 * The work is done below this file, which only puts the parts together:
 *
 *	query-leaks.c	a run's report, ranks included
 *	query-ranks.c	each ranked process of the run, alone
 *	query-scan.c	one pass over the allocation groups of a run, or of
 *			one process: steps, streams, suspects, the verdict
 *	query-usage.c	a run with usage samples only (attach)
 *	leak.c		the pure judgement of the numbers
 *
 * so that no two of them call each other.
 */
#include "config.h"

#include "query-int.h"

/*
 * Analyse run opts->run_id (0: the newest) of q, or only the allocations and
 * streams of process opts->process_id when it is not 0.  A whole run with
 * two or more ranked processes gets each rank analysed alone and the skew;
 * a run with no allocations is analysed from its usage samples.  Returns 0
 * with *out set (the caller frees it with leak_report_free), or -1 with
 * *cause when the run does not exist or the database cannot be read.  A
 * run with no steps is not an error: its verdict is INCONCLUSIVE.
 */
int
query_leaks(struct query *q, const struct leak_options *opts,
    struct leak_report **out, char **cause)
{
	struct leak_report	*r;

	if (query_scan(q, opts, &r, cause) != 0)
		return (-1);
	if (opts->process_id == 0 && query_ranks(q, opts, r, cause) != 0) {
		leak_report_free(r);
		return (-1);
	}
	*out = r;
	return (0);
}

/*
 * The run of report r judged again in the host layer (pinned host
 * memory), into *host: when opts chose the layer rather than asked for one
 * and the run allocated pinned memory; else *host is NULL.  The caller
 * frees it with leak_report_free.  0, or -1 with *cause.
 */
int
query_leaks_host(struct query *q, const struct leak_options *opts,
    const struct leak_report *r, struct leak_report **host, char **cause)
{
	struct leak_options	o = *opts;

	*host = NULL;
	if (opts->layer >= 0 || !query_run_has_host(q, r->run_id))
		return (0);
	o.run_id = r->run_id;
	o.layer = EVENT_LAYER_HOST;
	return (query_leaks(q, &o, host, cause));
}
