/*
 * query-timeline.c: a run as a stream of timed items, for exports.
 *
 * Every kind of item comes from one SELECT with the same columns
 * (process_id, device, stream, layer, start_ns, end_ns, bytes, number,
 * name), so a caller sees one struct whatever the table.  Live-byte
 * changes are every allocation's two events (+bytes at alloc_ns, -bytes
 * at free_ns) walked once in time order (query-events.c), summed per
 * instant for each track and each device total (the sum over its
 * streams), so that a running sum over a track is its live bytes; an
 * allocation made before the trace began (alloc_ns unknown) counts from
 * the run's first instant.  Allocations themselves are read largest
 * first, as many as asked, then in time order.
 *
 * The bounds read the allocations once, without sorting or grouping them
 * (a GROUP BY or UNION over 20 M events sorts them all: two minutes), so
 * they count the events, not the distinct instants of each track.
 */
#include "config.h"

#include "query-int.h"

#include <stdlib.h>
#include <string.h>

/* The run's first instant, for allocations of unknown time. */
#define TIMELINE_T0 \
	"(SELECT min(t) FROM (SELECT min(alloc_ns) AS t FROM allocations" \
	" WHERE run_id = ?1 UNION ALL SELECT min(start_ns) FROM memcpys" \
	" WHERE run_id = ?1 UNION ALL SELECT min(end_ns) FROM steps" \
	" WHERE run_id = ?1 UNION ALL SELECT min(time_ns) FROM" \
	" offload_events WHERE run_id = ?1))"

static const char *const timeline_sql[QUERY_ITEM_MAX] = {
	[QUERY_ITEM_PROCESS] = "SELECT id, NULL, NULL, NULL, start_ns,"
	    " end_ns, NULL, coalesce(rank, -1), 'pid ' || coalesce(pid, '?')"
	    " || coalesce(' rank ' || rank, '') || coalesce(' on ' || host,"
	    " '') FROM processes WHERE run_id = ?1 ORDER BY id",
	[QUERY_ITEM_STREAM] = "SELECT DISTINCT process_id, device, stream,"
	    " NULL, NULL, NULL, NULL, NULL, NULL FROM (SELECT process_id,"
	    " device, stream FROM streams WHERE run_id = ?1 UNION ALL"
	    " SELECT process_id, device, stream FROM allocations WHERE"
	    " run_id = ?1 UNION ALL SELECT process_id, device, stream FROM"
	    " memcpys WHERE run_id = ?1) ORDER BY 1, 2, 3",
	[QUERY_ITEM_MEMCPY] = "SELECT process_id, device, stream, NULL,"
	    " start_ns, end_ns, bytes, kind, NULL FROM memcpys WHERE"
	    " run_id = ?1 AND start_ns IS NOT NULL ORDER BY start_ns",
	[QUERY_ITEM_STEP] = "SELECT NULL, NULL, NULL, NULL, coalesce(start_ns,"
	    " " TIMELINE_T0 "), end_ns, NULL, step, name FROM steps WHERE"
	    " run_id = ?1 ORDER BY step",
	[QUERY_ITEM_OFFLOAD] = "SELECT process_id, device, stream, NULL,"
	    " time_ns, NULL, bytes, step, kind FROM offload_events WHERE"
	    " run_id = ?1 AND time_ns IS NOT NULL ORDER BY time_ns",
	[QUERY_ITEM_ALLOCATION] = "SELECT a.process_id, a.device, a.stream,"
	    " a.layer, coalesce(a.alloc_ns, " TIMELINE_T0 "), a.free_ns,"
	    " a.bytes, a.id, s.label FROM (SELECT id, process_id, device,"
	    " stream, layer, alloc_ns, free_ns, bytes, site_id FROM"
	    " allocations WHERE run_id = ?1 ORDER BY bytes DESC, id LIMIT ?2)"
	    " a LEFT JOIN sites s ON s.id = a.site_id ORDER BY 5, a.id",
};

/* Call fn once per row of st, a statement of timeline_sql[kind]. */
static int
timeline_read(struct query *q, sqlite3_stmt *st, enum query_item_kind kind,
    query_item_fn fn, void *arg, char **cause)
{
	struct query_item	 it;
	int			 rc;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		it.kind = kind;
		it.process_id = query_column_int(st, 0);
		it.device = query_column_int(st, 1);
		it.stream = query_column_u64(st, 2);
		it.layer = query_column_int(st, 3);
		it.start_ns = query_column_u64(st, 4);
		it.end_ns = query_column_u64(st, 5);
		it.bytes = sqlite3_column_int64(st, 6);
		it.number = query_column_int(st, 7);
		it.name = (const char *)sqlite3_column_text(st, 8);
		fn(arg, &it);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return (query_fail(q, cause));
	return (0);
}

/*
 * Call fn once per item of kind `kind` (not QUERY_ITEM_CHANGE nor
 * QUERY_ITEM_TOTAL: see query_timeline_live; not QUERY_ITEM_ALLOCATION:
 * see query_timeline_allocations) of run run_id (0: the newest), in the
 * order the kind defines.  Fields the
 * database does not know are spelled as unknown.h says (UNKNOWN_U64,
 * UNKNOWN_INT, NULL); item->name is valid during the call only.
 * Returns 0, or -1 with *cause.
 */
int
query_timeline(struct query *q, int64_t run_id, enum query_item_kind kind,
    query_item_fn fn, void *arg, char **cause)
{
	sqlite3_stmt	*st;

	if (timeline_sql[kind] == NULL) {
		xasprintf(cause, "%s: no query for items of kind %d", q->path,
		    (int)kind);
		return (-1);
	}
	if (run_id == 0)
		run_id = query_latest_run(q);
	if ((st = query_prepare(q, timeline_sql[kind], cause)) == NULL)
		return (-1);
	sqlite3_bind_int64(st, 1, run_id);
	return (timeline_read(q, st, kind, fn, arg, cause));
}

/*
 * Call fn once per allocation of run run_id (0: the newest), for the
 * `limit` largest (-1: all; equal sizes by id), in time order: a
 * QUERY_ITEM_ALLOCATION item from its allocation (an unknown time: the
 * run's first instant) to its free (UNKNOWN_U64: never freed), with its
 * bytes, its id in number and its site's label in name (NULL: no stack;
 * valid during the call only).  Returns 0, or -1 with *cause.
 */
int
query_timeline_allocations(struct query *q, int64_t run_id, int64_t limit,
    query_item_fn fn, void *arg, char **cause)
{
	sqlite3_stmt	*st;

	if (run_id == 0)
		run_id = query_latest_run(q);
	if ((st = query_prepare(q, timeline_sql[QUERY_ITEM_ALLOCATION],
	    cause)) == NULL)
		return (-1);
	sqlite3_bind_int64(st, 1, run_id);
	sqlite3_bind_int64(st, 2, limit);
	return (timeline_read(q, st, QUERY_ITEM_ALLOCATION, fn, arg, cause));
}

/*
 * A track of the live walk: a series (process, device, stream, layer) or
 * a device's total (process, device, layer), with its change at the
 * instant being walked.
 */
struct tl_track {
	struct query_item	 item;	/* number: the track's rank */
	int64_t			 delta;
	uint32_t		 seen;
	size_t			 total;	/* a series': its total's index */
};

struct tl_live {
	struct query_events	 e;
	struct tl_track		*series;	/* numbered as the walk's */
	size_t			 nseries;
	struct tl_track		*totals;
	size_t			 ntotals;
	struct tl_track		**touched;
	size_t			 ntouched;
	uint32_t		 stamp;
	query_item_fn		 fn;
	void			*arg;
};

/* A new series, and its device total when new. */
static void
timeline_series(void *arg, size_t series, const struct query_series *k)
{
	struct tl_live	*l = arg;
	struct tl_track	*s, *t;
	size_t		 i;

	(void)series;
	for (i = 0; i < l->ntotals; i++) {
		t = &l->totals[i];
		if (t->item.process_id == k->process_id && t->item.device ==
		    k->device && t->item.layer == k->layer)
			break;
	}
	if (i == l->ntotals) {
		l->totals = xreallocarray(l->totals, l->ntotals + 1,
		    sizeof *l->totals);
		t = &l->totals[l->ntotals++];
		memset(t, 0, sizeof *t);
		t->item.kind = QUERY_ITEM_TOTAL;
		t->item.process_id = k->process_id;
		t->item.device = k->device;
		t->item.stream = UNKNOWN_U64;
		t->item.layer = k->layer;
		t->item.end_ns = UNKNOWN_U64;
	}
	l->series = xreallocarray(l->series, l->nseries + 1,
	    sizeof *l->series);
	s = &l->series[l->nseries++];
	memset(s, 0, sizeof *s);
	s->item = l->totals[i].item;
	s->item.kind = QUERY_ITEM_CHANGE;
	s->item.stream = k->stream;
	s->total = i;
}

/* Compare two tracks as SQL orders integers: streams are signed. */
static int
timeline_cmp(const void *a0, const void *b0)
{
	const struct query_item	*a = &(*(struct tl_track *const *)a0)->item;
	const struct query_item	*b = &(*(struct tl_track *const *)b0)->item;

	if (a->process_id != b->process_id)
		return (a->process_id < b->process_id ? -1 : 1);
	if (a->device != b->device)
		return (a->device < b->device ? -1 : 1);
	if (a->stream != b->stream)
		return ((int64_t)a->stream < (int64_t)b->stream ? -1 : 1);
	return (a->layer < b->layer ? -1 : a->layer > b->layer);
}

/*
 * Every track is known: rank them, the series by process, device, stream
 * and layer, then the totals by process, device and layer.
 */
static void
timeline_ready(void *arg)
{
	struct tl_live	*l = arg;
	struct tl_track	**order;
	size_t		 i, n = l->nseries + l->ntotals;

	order = xreallocarray(NULL, n + 1, sizeof *order);
	for (i = 0; i < l->nseries; i++)
		order[i] = &l->series[i];
	util_sort(order, l->nseries, sizeof *order, timeline_cmp);
	for (i = 0; i < l->ntotals; i++)
		order[l->nseries + i] = &l->totals[i];
	util_sort(order + l->nseries, l->ntotals, sizeof *order, timeline_cmp);
	for (i = 0; i < n; i++)
		order[i]->item.number = (int64_t)i;
	free(order);
	l->touched = xreallocarray(NULL, n + 1, sizeof *l->touched);
}

static void
timeline_touch(struct tl_live *l, struct tl_track *k, int64_t bytes)
{
	if (k->seen != l->stamp) {
		k->seen = l->stamp;
		k->delta = 0;
		l->touched[l->ntouched++] = k;
	}
	k->delta += bytes;
}

/* One instant: a change item per track it touched. */
static void
timeline_instant(void *arg, uint64_t t, const struct query_event *ev,
    size_t n)
{
	struct tl_live	*l = arg;
	struct tl_track	*s, *k;
	uint64_t	 t0 = l->e.first != UNKNOWN_U64 ? l->e.first : 0;
	size_t		 i;

	l->stamp++;
	l->ntouched = 0;
	for (i = 0; i < n; i++) {
		s = &l->series[query_event_series(&ev[i])];
		timeline_touch(l, s, query_event_bytes(&ev[i]));
		timeline_touch(l, &l->totals[s->total],
		    query_event_bytes(&ev[i]));
	}
	for (i = 0; i < l->ntouched; i++) {
		k = l->touched[i];
		k->item.start_ns = t0 + t;
		k->item.bytes = k->delta;
		l->fn(l->arg, &k->item);
	}
}

/*
 * Call fn once per instant and track whose live bytes it changes, for
 * run run_id (0: the newest), in time order, reading every allocation in
 * one walk (several passes over the table for a run of more events than
 * fit in QUERY_EVENTS_WINDOW): a QUERY_ITEM_CHANGE item per (process,
 * device, stream, layer) and a QUERY_ITEM_TOTAL item per (process,
 * device, layer) the instant touched, with the change in bytes (its sum
 * over the instant, 0 included) and, in number, the track's rank: the
 * tracks by process, device, stream and layer, then the totals by
 * process, device and layer, numbered from 0.  An allocation of unknown
 * time counts from t0 (UNKNOWN_U64: the first allocation's or free's
 * time), which must be at or before every allocation and free.
 * Returns 0, or -1 with *cause.
 */
int
query_timeline_live(struct query *q, int64_t run_id, uint64_t t0,
    query_item_fn fn, void *arg, char **cause)
{
	struct tl_live	 l;
	sqlite3_stmt	*st;
	int		 rc;

	if (run_id == 0)
		run_id = query_latest_run(q);
	memset(&l, 0, sizeof l);
	if ((st = query_prepare(q, "SELECT coalesce(min(id), 0),"
	    " coalesce(max(id), -1) FROM allocations WHERE run_id = ?1",
	    cause)) == NULL)
		return (-1);
	sqlite3_bind_int64(st, 1, run_id);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		l.e.first_id = sqlite3_column_int64(st, 0);
		l.e.last_id = sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW)
		return (query_fail(q, cause));
	l.e.run_id = run_id;
	l.e.series = timeline_series;
	l.e.ready = timeline_ready;
	l.e.instant = timeline_instant;
	l.e.arg = &l;
	l.e.first = l.e.last = t0;
	l.fn = fn;
	l.arg = arg;
	rc = query_events_walk(q, &l.e, cause);
	free(l.series);
	free(l.totals);
	free(l.touched);
	return (rc);
}

/* The earlier of two instants, either UNKNOWN_U64. */
static uint64_t
timeline_earlier(uint64_t a, uint64_t b)
{
	if (a == UNKNOWN_U64)
		return (b);
	return (b != UNKNOWN_U64 && b < a ? b : a);
}

/* The later of two instants, either UNKNOWN_U64. */
static uint64_t
timeline_later(uint64_t a, uint64_t b)
{
	if (a == UNKNOWN_U64)
		return (b);
	return (b != UNKNOWN_U64 && b > a ? b : a);
}

/* One (process, device, layer): a device total's track, for counting. */
struct timeline_total {
	int64_t		 process_id;
	int64_t		 device;
	int64_t		 layer;
};

/*
 * Count the tracks of run_id's allocations into b: its (process, device,
 * stream, layer) and its (process, device, layer).  A DISTINCT reads each
 * row once into a table of the few tracks; 0, or -1 with *cause.
 */
static int
timeline_tracks(struct query *q, int64_t run_id, struct query_bounds *b,
    char **cause)
{
	struct timeline_total	*t = NULL, k;
	sqlite3_stmt		*st;
	size_t			 n = 0, i;
	int			 rc;

	if ((st = query_prepare(q, "SELECT DISTINCT process_id, device,"
	    " layer, stream FROM allocations WHERE run_id = ?1 ORDER BY 1, 2,"
	    " 3", cause)) == NULL)
		return (-1);
	sqlite3_bind_int64(st, 1, run_id);
	b->tracks = b->totals = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		b->tracks++;
		k.process_id = query_column_int(st, 0);
		k.device = query_column_int(st, 1);
		k.layer = query_column_int(st, 2);
		for (i = 0; i < n; i++) {
			if (memcmp(&t[i], &k, sizeof k) == 0)
				break;
		}
		if (i == n) {
			t = xreallocarray(t, n + 1, sizeof *t);
			t[n++] = k;
		}
	}
	b->totals = (int64_t)n;
	free(t);
	sqlite3_finalize(st);
	return (rc == SQLITE_DONE ? 0 : query_fail(q, cause));
}

/*
 * Fill *b for run run_id (0: the newest): its first and last instants over
 * allocations, frees, copies, steps and offload events (UNKNOWN_U64 when it
 * holds no timed item), its allocations and frees (events: at least the
 * QUERY_ITEM_CHANGE items, more when a track has two at one instant), its
 * tracks and its device totals.  Reads each allocation of the run at most
 * twice, sorting none.  0, or -1 with *cause on error or when there is no
 * such run.
 */
int
query_timeline_bounds(struct query *q, int64_t run_id,
    struct query_bounds *b, char **cause)
{
	sqlite3_stmt	*st;
	int		 rc;

	if (run_id == 0)
		run_id = query_latest_run(q);
	/* Two columns of each bound: min() of values and NULL is NULL. */
	if ((st = query_prepare(q, "SELECT (SELECT count(*) FROM runs WHERE"
	    " id = ?1), min(lo), min(lo2), max(hi), max(hi2), sum(n) FROM"
	    " (SELECT min(alloc_ns) AS lo, min(free_ns) AS lo2, max(alloc_ns)"
	    " AS hi, max(free_ns) AS hi2, count(*) + count(free_ns) AS n FROM"
	    " allocations WHERE run_id = ?1 UNION ALL SELECT min(start_ns),"
	    " min(end_ns), max(start_ns), max(end_ns), 0 FROM memcpys WHERE"
	    " run_id = ?1 UNION ALL SELECT min(end_ns), NULL, max(end_ns),"
	    " NULL, 0 FROM steps WHERE run_id = ?1 UNION ALL SELECT"
	    " min(time_ns), NULL, max(time_ns), NULL, 0 FROM offload_events"
	    " WHERE run_id = ?1)", cause)) == NULL)
		return (-1);
	sqlite3_bind_int64(st, 1, run_id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && sqlite3_column_int(st, 0) == 0) {
		xasprintf(cause, "%s: no run %lld", q->path,
		    (long long)run_id);
		sqlite3_finalize(st);
		return (-1);
	}
	if (rc == SQLITE_ROW) {
		b->run_id = run_id;
		b->first_ns = timeline_earlier(query_column_u64(st, 1),
		    query_column_u64(st, 2));
		b->last_ns = timeline_later(query_column_u64(st, 3),
		    query_column_u64(st, 4));
		b->events = sqlite3_column_int64(st, 5);
	} else
		query_fail(q, cause);
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW)
		return (-1);
	return (timeline_tracks(q, run_id, b, cause));
}
