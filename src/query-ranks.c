/*
 * query-ranks.c: the ranks of a job, each analysed alone.
 *
 * Under torchrun every rank is a process of the same run (processes.rank)
 * and its allocations and streams carry its process id; query_scan with
 * a process_id reads only those (allocation_groups keeps the processes
 * apart), so each rank gets its own verdict and growth in the
 * layer of the whole run, and leak_skew (leak.c) compares the fastest rank
 * with the median.  A run with fewer than two ranked processes has no
 * ranks, and its report is as it was.
 */
#include "config.h"

#include "query-int.h"

#include <stdlib.h>

static int
cmp_device(const void *a, const void *b)
{
	int32_t	x = *(const int32_t *)a, y = *(const int32_t *)b;

	return ((x > y) - (x < y));
}

/* Take a rank's verdict, growth and devices from its own report. */
static void
rank_fill(struct leak_rank *k, const struct leak_report *pr)
{
	size_t	i, j;

	k->verdict = pr->verdict;
	k->growth_bytes_per_step = pr->growth_bytes_per_step;
	k->grew_fraction = pr->grew_fraction;
	k->devices = xreallocarray(NULL, pr->nstreams + 1, sizeof *k->devices);
	for (i = 0; i < pr->nstreams; i++) {
		if (pr->streams[i].device >= 0)
			k->devices[k->ndevices++] = pr->streams[i].device;
	}
	util_sort(k->devices, k->ndevices, sizeof *k->devices, cmp_device);
	for (i = j = 0; i < k->ndevices; i++) {
		if (j == 0 || k->devices[j - 1] != k->devices[i])
			k->devices[j++] = k->devices[i];
	}
	k->ndevices = j;
}

/* Read the ranked processes of r's run into r->ranks, by rank. */
static int
ranks_load(struct query *q, struct leak_report *r, size_t n, char **cause)
{
	sqlite3_stmt		*st;
	struct leak_rank	*k;
	int			 rc;

	st = query_prepare(q, "SELECT id, rank, local_rank, pid, host FROM"
	    " processes WHERE run_id = ?1 AND rank IS NOT NULL ORDER BY rank,"
	    " id", cause);
	if (st == NULL)
		return (-1);
	sqlite3_bind_int64(st, 1, r->run_id);
	r->ranks = xcalloc(n, sizeof *r->ranks);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && r->nranks < n) {
		k = &r->ranks[r->nranks++];
		k->process_id = sqlite3_column_int64(st, 0);
		k->rank = sqlite3_column_int64(st, 1);
		k->local_rank = query_column_int(st, 2);
		k->pid = query_column_int(st, 3);
		k->host = query_column_text(st, 4);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		return (query_fail(q, cause));
	return (0);
}

/*
 * Fill r->ranks and r->skew when r's run has two or more processes with a
 * rank, analysing each with the options of opts in r's layer.  0 (r->nranks
 * stays 0 for fewer ranks), or -1 with *cause.
 */
int
query_ranks(struct query *q, const struct leak_options *opts,
    struct leak_report *r, char **cause)
{
	struct leak_options	 one = *opts;
	struct leak_report	*pr;
	int64_t			 n;
	size_t			 i;

	n = query_int_arg(q, "SELECT count(*) FROM processes WHERE"
	    " run_id = ?1 AND rank IS NOT NULL", r->run_id);
	if (n < 0)
		return (query_fail(q, cause));
	if (n < 2)
		return (0);
	if (ranks_load(q, r, (size_t)n, cause) != 0)
		return (-1);
	one.run_id = r->run_id;
	one.layer = r->layer;
	for (i = 0; i < r->nranks; i++) {
		one.process_id = r->ranks[i].process_id;
		if (query_scan(q, &one, &pr, cause) != 0)
			return (-1);
		rank_fill(&r->ranks[i], pr);
		leak_report_free(pr);
	}
	leak_skew(r->ranks, r->nranks, &r->skew);
	return (0);
}
