/*
 * query-report.c: what the HTML report shows, aggregated so that the page
 * stays small for any run (report.h): the run's extent, the live bytes
 * over time (query-report-walk.c), the steps, the copies and offload
 * decisions per lane and bucket, the lanes' names, all in a fixed order.
 */
#include "config.h"

#include "query-int.h"
#include "report.h"

#include <stdlib.h>
#include <string.h>

#include "unknown.h"

/* A process of the run: its rank and name on each of its lanes. */
static void
on_process(void *arg, const struct query_item *it)
{
	struct report		*r = arg;
	struct report_lane	*l;
	size_t			 i;

	for (i = 0; i < r->nlanes; i++) {
		l = &r->lanes[i];
		if (l->process_id != it->process_id)
			continue;
		l->rank = it->number;
		free(l->name);
		l->name = it->name != NULL ? xstrdup(it->name) : NULL;
	}
}

/*
 * The steps, with their times from t0.  Read here rather than through
 * query_timeline, which gives a step of unknown start the run's first
 * instant by reading every allocation once more.
 */
static int
report_steps(struct query *q, struct report *r, char **cause)
{
	sqlite3_stmt		*st;
	struct report_step	*s;
	uint64_t		 end;
	int			 rc;

	if ((st = query_prepare(q, "SELECT step, start_ns, end_ns, name FROM"
	    " steps WHERE run_id = ?1 ORDER BY step", cause)) == NULL)
		return (-1);
	sqlite3_bind_int64(st, 1, r->run_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		r->steps = xreallocarray(r->steps, r->nsteps + 1,
		    sizeof *r->steps);
		s = &r->steps[r->nsteps++];
		s->step = sqlite3_column_int64(st, 0);
		s->start_ns = query_column_u64(st, 1);
		if (s->start_ns != UNKNOWN_U64)
			s->start_ns = s->start_ns > r->t0_ns ? s->start_ns -
			    r->t0_ns : 0;
		end = (uint64_t)sqlite3_column_int64(st, 2);
		s->end_ns = end > r->t0_ns ? end - r->t0_ns : 0;
		s->name = query_column_text(st, 3);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return (query_fail(q, cause));
	return (0);
}

/* A lane's array of bucket values, made on first use. */
static int64_t *
lane_buckets(struct report *r, int64_t **p)
{
	if (*p == NULL)
		*p = xcalloc(r->nbuckets, sizeof **p);
	return (*p);
}

/* A copy: its bytes out (device to host) or in, at its start. */
static void
on_memcpy(void *arg, const struct query_item *it)
{
	struct report		*r = arg;
	struct report_lane	*l;
	size_t			 b;

	if (it->number != EVENT_COPY_DTOH && it->number != EVENT_COPY_HTOD)
		return;
	l = &r->lanes[query_report_walk_lane(r, it->process_id, it->device)];
	b = query_report_walk_bucket(r, it->start_ns - r->t0_ns);
	if (it->number == EVENT_COPY_DTOH)
		lane_buckets(r, &l->copy_out)[b] += it->bytes;
	else
		lane_buckets(r, &l->copy_in)[b] += it->bytes;
}

/*
 * An offload decision: bytes sent out and brought back, and the stash's
 * change (a stash holds its source until it is reaped).
 */
static void
on_offload(void *arg, const struct query_item *it)
{
	struct report		*r = arg;
	struct report_lane	*l;
	size_t			 b;

	if (it->name == NULL)
		return;
	l = &r->lanes[query_report_walk_lane(r, it->process_id, it->device)];
	b = query_report_walk_bucket(r, it->start_ns - r->t0_ns);
	lane_buckets(r, &l->offloaded);
	lane_buckets(r, &l->prefetched);
	lane_buckets(r, &l->stash);
	if (strcmp(it->name, "offload") == 0)
		l->offloaded[b] += it->bytes;
	else if (strcmp(it->name, "prefetch") == 0)
		l->prefetched[b] += it->bytes;
	else if (strcmp(it->name, "stash") == 0)
		l->stash[b] += it->bytes;
	else if (strcmp(it->name, "reap") == 0)
		l->stash[b] -= it->bytes;
}

/* Copies and offload decisions per lane and bucket. */
static int
report_copies(struct query *q, struct report *r, char **cause)
{
	size_t		 i, b;

	if (r->nbuckets == 0)
		return (0);
	if (query_timeline(q, r->run_id, QUERY_ITEM_MEMCPY, on_memcpy, r,
	    cause) != 0 || query_timeline(q, r->run_id, QUERY_ITEM_OFFLOAD,
	    on_offload, r, cause) != 0)
		return (-1);
	/* The stash holds the running sum of what was stashed and reaped. */
	for (i = 0; i < r->nlanes; i++) {
		for (b = 1; r->lanes[i].stash != NULL && b < r->nbuckets; b++)
			r->lanes[i].stash[b] += r->lanes[i].stash[b - 1];
	}
	return (0);
}

static int
cmp_lane(const void *a, const void *b)
{
	const struct report_lane	*x = a, *y = b;
	uint64_t			 rx = (uint64_t)x->rank;
	uint64_t			 ry = (uint64_t)y->rank;

	/* Unknown ranks (-1) last. */
	if (rx != ry)
		return (rx < ry ? -1 : 1);
	if (x->process_id != y->process_id)
		return (x->process_id < y->process_id ? -1 : 1);
	return ((x->device > y->device) - (x->device < y->device));
}

/*
 * Sort the lanes, then the tracks by lane and layer and the series by
 * track and stream, and point each to its new place.
 */
struct rq_order {
	size_t		 key1;
	uint64_t	 key2;
	size_t		 old;
};

static int
cmp_order(const void *a, const void *b)
{
	const struct rq_order	*x = a, *y = b;

	if (x->key1 != y->key1)
		return (x->key1 < y->key1 ? -1 : 1);
	return ((x->key2 > y->key2) - (x->key2 < y->key2));
}

static size_t *
order_apply(void *base, size_t n, size_t size, struct rq_order *o)
{
	char	*copy;
	size_t	*where, i;

	util_sort(o, n, sizeof *o, cmp_order);
	copy = xreallocarray(NULL, n + 1, size);
	if (n > 0)	/* base may be NULL for no rows */
		memcpy(copy, base, n * size);
	where = xreallocarray(NULL, n + 1, sizeof *where);
	for (i = 0; i < n; i++) {
		memcpy((char *)base + i * size, copy + o[i].old * size, size);
		where[o[i].old] = i;
	}
	free(copy);
	return (where);
}

static void
report_order(struct report *r)
{
	struct rq_order	*o;
	size_t		*lane_at, *track_at, i, j, n;

	n = r->nlanes > r->ntracks ? r->nlanes : r->ntracks;
	o = xreallocarray(NULL, (n > r->nseries ? n : r->nseries) + 1,
	    sizeof *o);
	/* A lane's key is how many lanes come before it: few lanes. */
	for (i = 0; i < r->nlanes; i++) {
		o[i].key1 = 0;
		for (j = 0; j < r->nlanes; j++)
			o[i].key1 += cmp_lane(&r->lanes[j], &r->lanes[i]) < 0;
		o[i].key2 = 0;
		o[i].old = i;
	}
	lane_at = order_apply(r->lanes, r->nlanes, sizeof *r->lanes, o);
	for (i = 0; i < r->ntracks; i++) {
		o[i].key1 = lane_at[r->tracks[i].lane];
		o[i].key2 = (uint64_t)r->tracks[i].layer;
		o[i].old = i;
		r->tracks[i].lane = o[i].key1;
	}
	track_at = order_apply(r->tracks, r->ntracks, sizeof *r->tracks, o);
	for (i = 0; i < r->nseries; i++) {
		o[i].key1 = track_at[r->series[i].track];
		o[i].key2 = r->series[i].stream;
		o[i].old = i;
		r->series[i].track = o[i].key1;
	}
	free(order_apply(r->series, r->nseries, sizeof *r->series, o));
	for (i = 0; i < r->ntracks; i++)
		r->tracks[i].nseries = 0;
	for (i = r->nseries; i > 0; i--) {
		r->tracks[r->series[i - 1].track].first = i - 1;
		r->tracks[r->series[i - 1].track].nseries++;
	}
	free(o);
	free(lane_at);
	free(track_at);
}

/*
 * The step that instant ns (from t0) is in: the first whose end is at or
 * after it; after the last step, the step after it; -1 without steps.
 */
int64_t
query_report_step_at(const struct report *r, uint64_t ns)
{
	size_t	lo = 0, hi = r->nsteps, mid;

	if (r->nsteps == 0 || ns == UNKNOWN_U64)
		return (UNKNOWN_INT);
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (r->steps[mid].end_ns < ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == r->nsteps)
		return (r->steps[r->nsteps - 1].step + 1);
	return (r->steps[lo].step);
}

/*
 * The run's first and last instants over copies, steps and offload
 * decisions (t0 UNKNOWN_U64 when it has none; report_live adds the
 * allocations').  0, or -1 with *cause when there is no such run.
 */
static int
report_bounds(struct query *q, struct report *r, char **cause)
{
	sqlite3_stmt	*st;
	int		 rc, found = 0;

	if ((st = query_prepare(q, "SELECT (SELECT count(*) FROM runs WHERE"
	    " id = ?1), min(a), max(b) FROM (SELECT min(start_ns)"
	    " AS a, max(coalesce(end_ns, start_ns)) AS b FROM memcpys WHERE"
	    " run_id = ?1 UNION ALL SELECT"
	    " min(coalesce(start_ns, end_ns)), max(end_ns) FROM steps WHERE"
	    " run_id = ?1 UNION ALL SELECT min(time_ns), max(time_ns) FROM"
	    " offload_events WHERE run_id = ?1)", cause)) == NULL)
		return (-1);
	sqlite3_bind_int64(st, 1, r->run_id);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		found = sqlite3_column_int(st, 0) == 1;
		r->t0_ns = query_column_u64(st, 1);
		r->span_ns = r->t0_ns == UNKNOWN_U64 ? 0 :
		    (uint64_t)sqlite3_column_int64(st, 2) - r->t0_ns;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW)
		return (query_fail(q, cause));
	if (found)
		return (0);
	if (r->run_id == 0)
		xasprintf(cause, "%s: holds no run", q->path);
	else
		xasprintf(cause, "%s: no run %lld", q->path,
		    (long long)r->run_id);
	return (-1);
}

/*
 * The live bytes of r's run: the walk (query-report-walk.c), or, for the
 * peak alone (not whole), the few steps query_peak_steps() walks where the
 * run has allocation_steps.  0, or -1 with *cause.
 */
static int
report_walk(struct query *q, struct report *r, size_t window, int whole,
    char **cause)
{
	sqlite3_stmt	*st;
	int		 rc;

	if (!whole && (rc = query_peak_steps(q, r, cause)) != 1)
		return (rc);
	/*
	 * The range of the allocations' ids, which the passes read in table
	 * order (a run's rows are written together; a row added after this,
	 * by a recording still going on, is left out).
	 */
	if ((st = query_prepare(q, "SELECT (SELECT coalesce(min(id), 0) FROM"
	    " allocations WHERE run_id = ?1), (SELECT coalesce(max(id), -1)"
	    " FROM allocations WHERE run_id = ?1)", cause)) == NULL)
		return (-1);
	sqlite3_bind_int64(st, 1, r->run_id);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		r->first_id = sqlite3_column_int64(st, 0);
		r->last_id = sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW)
		return (query_fail(q, cause));
	return (query_report_walk(q, r, window, cause));
}

/*
 * The report of run run_id (0: the newest) in layer, as query_report says;
 * without `whole`, only what the peaks need: no copies, no offload
 * decisions, no processes' names, lanes not ordered.
 */
static int
report_build(struct query *q, int64_t run_id, int layer, size_t window,
    int whole, struct report **out, char **cause)
{
	struct report		*r;
	size_t			 i;

	*out = NULL;
	r = xcalloc(1, sizeof *r);
	r->run_id = run_id != 0 ? run_id : query_latest_run(q);
	r->layer = layer;
	r->peak.ns = UNKNOWN_U64;
	r->peak.step = UNKNOWN_INT;
	if (report_bounds(q, r, cause) != 0 ||
	    report_walk(q, r, window, whole, cause) != 0 ||
	    report_steps(q, r, cause) != 0 || (whole &&
	    (report_copies(q, r, cause) != 0 ||
	    query_timeline(q, r->run_id, QUERY_ITEM_PROCESS, on_process, r,
	    cause) != 0))) {
		query_report_free(r);
		return (-1);
	}
	for (i = 0; i < r->ntracks; i++)
		r->tracks[i].peak.step = query_report_step_at(r,
		    r->tracks[i].peak.ns);
	r->peak.step = query_report_step_at(r, r->peak.ns);
	if (whole)
		report_order(r);
	*out = r;
	return (0);
}

/*
 * Aggregate run run_id (0: the newest) for the HTML report: lanes, tracks
 * and series of live bytes in buckets of time, their exact peaks, the peak
 * of `layer` over every device lane (every lane for pinned host memory,
 * the host layer), steps, copies and offload decisions (report.h).
 * window is how many events are sorted at once at most (0:
 * QUERY_EVENTS_WINDOW; the tests make it small), which bounds the memory
 * used; the result does not depend on it.  The holders are left empty
 * (query_report_sites).  Returns 0 with *out (free with
 * query_report_free), or -1 with *cause when the run does not exist or
 * cannot be read.
 */
int
query_report(struct query *q, int64_t run_id, int layer, size_t window,
    struct report **out, char **cause)
{
	return (report_build(q, run_id, layer, window, 1, out, cause));
}

/*
 * The high-water mark of run run_id (0: the newest) in layer over its
 * device lanes (every lane for pinned host memory, the host layer), from
 * the same walk as the HTML report's peak (one computation of a peak):
 * *peak as report.peak says (its time from the run's first instant,
 * *t0_ns; UNKNOWN_U64 when nothing was live), with its step.  0, or -1
 * with *cause when the run does not exist or cannot be read.
 */
int
query_report_peak(struct query *q, int64_t run_id, int layer,
    struct report_peak *peak, uint64_t *t0_ns, char **cause)
{
	struct report	*r;

	if (report_build(q, run_id, layer, 0, 0, &r, cause) != 0)
		return (-1);
	*peak = r->peak;
	*t0_ns = r->t0_ns;
	query_report_free(r);
	return (0);
}

/* Free a report and everything it holds; NULL is fine. */
void
query_report_free(struct report *r)
{
	size_t	i;
	int	at;

	if (r == NULL)
		return;
	for (i = 0; i < r->nlanes; i++) {
		free(r->lanes[i].name);
		free(r->lanes[i].copy_out);
		free(r->lanes[i].copy_in);
		free(r->lanes[i].offloaded);
		free(r->lanes[i].prefetched);
		free(r->lanes[i].stash);
	}
	for (i = 0; i < r->nseries; i++)
		free(r->series[i].hi);
	for (i = 0; i < r->nsteps; i++)
		free(r->steps[i].name);
	for (i = 0; i < r->nframes; i++) {
		free(r->frames[i].name);
		free(r->frames[i].filename);
	}
	for (i = 0; i < r->nsites; i++) {
		free(r->sites[i].label);
		free(r->sites[i].frames);
	}
	for (at = 0; at < REPORT_AT_MAX; at++)
		free(r->blocks[at]);
	free(r->lanes);
	free(r->tracks);
	free(r->series);
	free(r->steps);
	free(r->frames);
	free(r->sites);
	free(r);
}
