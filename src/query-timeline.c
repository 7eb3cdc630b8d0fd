/*
 * query-timeline.c: a run as a stream of timed items, for exports.
 *
 * Every kind of item comes from one SELECT with the same columns
 * (process_id, device, stream, layer, start_ns, end_ns, bytes, number,
 * name), so a caller sees one struct whatever the table.  Live-byte
 * changes are the allocations read twice (+bytes at alloc_ns, -bytes at
 * free_ns), summed per instant and ordered by track and time, so that a
 * running sum over a track is its live bytes; an allocation made before
 * the trace began (alloc_ns unknown) counts from the run's first instant.
 */
#include "config.h"

#include "query-int.h"

#include <stdlib.h>

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
	[QUERY_ITEM_CHANGE] = "SELECT process_id, device, stream, layer, t,"
	    " NULL, sum(b), NULL, NULL FROM (SELECT process_id, device,"
	    " stream, layer, coalesce(alloc_ns, " TIMELINE_T0 ") AS t, bytes"
	    " AS b FROM allocations WHERE run_id = ?1 UNION ALL SELECT"
	    " process_id, device, stream, layer, free_ns, -bytes FROM"
	    " allocations WHERE run_id = ?1 AND free_ns IS NOT NULL)"
	    " GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5",
	[QUERY_ITEM_MEMCPY] = "SELECT process_id, device, stream, NULL,"
	    " start_ns, end_ns, bytes, kind, NULL FROM memcpys WHERE"
	    " run_id = ?1 AND start_ns IS NOT NULL ORDER BY start_ns",
	[QUERY_ITEM_STEP] = "SELECT NULL, NULL, NULL, NULL, coalesce(start_ns,"
	    " " TIMELINE_T0 "), end_ns, NULL, step, name FROM steps WHERE"
	    " run_id = ?1 ORDER BY step",
	[QUERY_ITEM_OFFLOAD] = "SELECT process_id, device, stream, NULL,"
	    " time_ns, NULL, bytes, step, kind FROM offload_events WHERE"
	    " run_id = ?1 AND time_ns IS NOT NULL ORDER BY time_ns",
};

/*
 * Call fn once per item of kind `kind` of run run_id (0: the newest), in
 * the order the kind defines (changes: by track, then time).  Fields the
 * database does not know are spelled as unknown.h says (UNKNOWN_U64,
 * UNKNOWN_INT, NULL); item->name is valid during the call only.
 * Returns 0, or -1 with *cause.
 */
int
query_timeline(struct query *q, int64_t run_id, enum query_item_kind kind,
    query_item_fn fn, void *arg, char **cause)
{
	struct query_item	 it;
	sqlite3_stmt		*st;
	int			 rc;

	if (run_id == 0)
		run_id = query_latest_run(q);
	if ((st = query_prepare(q, timeline_sql[kind], cause)) == NULL)
		return (-1);
	sqlite3_bind_int64(st, 1, run_id);
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
 * Fill *b for run run_id (0: the newest): its first and last instants over
 * allocations, frees, copies, steps and offload events (UNKNOWN_U64 when it
 * holds no timed item), the number of live-byte changes (QUERY_ITEM_CHANGE
 * items) and of their tracks.  0, or -1 with *cause on error or when there
 * is no such run.
 */
int
query_timeline_bounds(struct query *q, int64_t run_id,
    struct query_bounds *b, char **cause)
{
	sqlite3_stmt	*st;
	int		 rc;

	if (run_id == 0)
		run_id = query_latest_run(q);
	if ((st = query_prepare(q, "WITH ch AS (SELECT process_id, device,"
	    " stream, layer, alloc_ns AS t FROM allocations WHERE run_id = ?1"
	    " UNION SELECT process_id, device, stream, layer, free_ns FROM"
	    " allocations WHERE run_id = ?1 AND free_ns IS NOT NULL)"
	    " SELECT (SELECT count(*) FROM runs WHERE id = ?1), min(t), max(t),"
	    " (SELECT count(*) FROM ch), (SELECT count(*) FROM (SELECT"
	    " DISTINCT process_id, device, stream, layer FROM ch))"
	    " FROM (SELECT t FROM ch"
	    " UNION ALL SELECT start_ns FROM memcpys WHERE run_id = ?1"
	    " UNION ALL SELECT end_ns FROM memcpys WHERE run_id = ?1"
	    " UNION ALL SELECT end_ns FROM steps WHERE run_id = ?1"
	    " UNION ALL SELECT time_ns FROM offload_events WHERE"
	    " run_id = ?1)", cause)) == NULL)
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
		b->first_ns = query_column_u64(st, 1);
		b->last_ns = query_column_u64(st, 2);
		b->changes = sqlite3_column_int64(st, 3);
		b->tracks = sqlite3_column_int64(st, 4);
	} else
		query_fail(q, cause);
	sqlite3_finalize(st);
	return (rc == SQLITE_ROW ? 0 : -1);
}
