/*
 * query-usage.c: live bytes per step from usage samples, for a run with no
 * allocations (vramtrace attach).
 *
 * NVML tells how much memory a process holds on each device and nothing
 * about streams or blocks, so each device becomes one stream of unknown
 * handle, marked the default (it has no garbage kinds), and its live bytes
 * at a step are those of its last sample at or before the step's end.
 * Steps that end before a device's first sample take that sample's value
 * (the process held it when sampling began), so they add no growth.  The
 * usage is all a process holds, so the report is in the segment layer.
 */
#include "config.h"

#include "query-int.h"

/* Give the steps from k on the last value, and add s to the totals. */
static void
usage_finish(struct leak_report *r, struct leak_stream *s, size_t k,
    int64_t last)
{
	size_t	i;

	if (s == NULL)
		return;
	for (; k < r->nsteps; k++)
		s->live_per_step[k] = last;
	for (i = 0; i < r->nsteps; i++)
		r->steps[i].live_bytes += s->live_per_step[i];
	s->live_bytes = r->nsteps > 0 ? s->live_per_step[r->nsteps - 1] :
	    last;
}

/*
 * Fill r's streams (one per device) and its steps' live bytes from the
 * usage samples of its run, and set r->usage_only, when it has samples;
 * r's steps are loaded and it has no streams yet.  0 (nothing changes
 * without samples), or -1 with *cause.
 */
int
query_usage(struct query *q, struct leak_report *r, char **cause)
{
	sqlite3_stmt		*st;
	struct leak_stream	*s = NULL;
	int64_t			 used, last = 0;
	uint64_t		 t;
	size_t			 k = 0;
	int			 rc;

	st = query_prepare(q, "SELECT device, time_ns, used_bytes FROM"
	    " usage_samples WHERE run_id = ?1 ORDER BY device, time_ns",
	    cause);
	if (st == NULL)
		return (-1);
	sqlite3_bind_int64(st, 1, r->run_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		t = (uint64_t)sqlite3_column_int64(st, 1);
		used = sqlite3_column_int64(st, 2);
		if (s == NULL || s->device != sqlite3_column_int(st, 0)) {
			usage_finish(r, s, k, last);
			s = leak_report_stream(r, sqlite3_column_int(st, 0),
			    EVENT_NONE);
			s->is_default = s->default_known = 1;
			k = 0;
			last = used;
		}
		for (; k < r->nsteps && r->steps[k].end_ns < t; k++)
			s->live_per_step[k] = last;
		last = used;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return (query_fail(q, cause));
	usage_finish(r, s, k, last);
	if (s != NULL) {
		r->usage_only = 1;
		r->layer = EVENT_LAYER_SEGMENT;
	}
	return (0);
}
