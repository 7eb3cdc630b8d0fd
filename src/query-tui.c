/*
 * query-tui.c: the questions only the terminal UI asks (see query-tui.h).
 *
 * Every question here must stay cheap on a run of ten million
 * allocations: the offload table groups by the offload_run index, and the
 * diff reads the ranges of the
 * allocations_run_step and allocations_crossing indexes between the two
 * steps.  A block is live at
 * the end of step s when it was allocated in a step <= s (an unknown
 * step counts as step 1, as in the step_deltas view) and not freed by
 * then.
 */
#include "config.h"

#include "query-int.h"
#include "query-tui.h"

#include <stdlib.h>
#include <string.h>

/*
 * The offload engine's decisions per step of run `run`, in step order:
 * *out (the caller frees it) gets *n rows, none when the run has no
 * offload events.  Events without a step came before the first marker:
 * they count as step 1, as allocations do.  0, or -1 with *cause.
 */
int
query_tui_offload(struct query *q, int64_t run,
    struct tui_offload_step **out, size_t *n, char **cause)
{
	struct tui_offload_step	*rows = NULL, *r;
	sqlite3_stmt		*st;
	size_t			 nrows = 0;
	int			 rc;

	*out = NULL;
	*n = 0;
	st = query_prepare(q, "SELECT coalesce(step, 1),"
	    " sum(kind = 'pack'), sum(kind = 'offload'),"
	    " sum(CASE WHEN kind = 'offload' THEN coalesce(bytes, 0) END),"
	    " sum(kind = 'stash'),"
	    " sum(CASE WHEN kind = 'stash' THEN coalesce(bytes, 0) END),"
	    " sum(kind = 'reap'), sum(kind = 'unpack'), sum(kind = 'prefetch'),"
	    " sum(kind = 'dedupe_hit'), sum(kind = 'dedupe_release'),"
	    " sum(kind = 'pool_fallback'),"
	    " sum(CASE WHEN kind = 'pool_fallback' THEN coalesce(bytes, 0)"
	    " END), sum(kind = 'exit_sync')"
	    " FROM offload_events WHERE run_id = ? GROUP BY 1 ORDER BY 1",
	    cause);
	if (st == NULL)
		return (-1);
	sqlite3_bind_int64(st, 1, run);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		rows = xreallocarray(rows, nrows + 1, sizeof *rows);
		r = &rows[nrows++];
		r->step = sqlite3_column_int64(st, 0);
		r->packs = sqlite3_column_int64(st, 1);
		r->offloads = sqlite3_column_int64(st, 2);
		r->offload_bytes = sqlite3_column_int64(st, 3);
		r->stashes = sqlite3_column_int64(st, 4);
		r->stash_bytes = sqlite3_column_int64(st, 5);
		r->reaps = sqlite3_column_int64(st, 6);
		r->unpacks = sqlite3_column_int64(st, 7);
		r->prefetches = sqlite3_column_int64(st, 8);
		r->dedupe_hits = sqlite3_column_int64(st, 9);
		r->dedupe_releases = sqlite3_column_int64(st, 10);
		r->fallbacks = sqlite3_column_int64(st, 11);
		r->fallback_bytes = sqlite3_column_int64(st, 12);
		r->exit_syncs = sqlite3_column_int64(st, 13);
	}
	if (rc != SQLITE_DONE) {
		query_fail(q, cause);
		sqlite3_finalize(st);
		free(rows);
		return (-1);
	}
	sqlite3_finalize(st);
	*out = rows;
	*n = nrows;
	return (0);
}

/*
 * The blocks of the diff, as (id, added, bytes): ?1 run, ?2 the earlier
 * step, ?3 the later, ?4 layer.  Added blocks come from the range of the
 * allocations_run_step index between the steps; gone blocks from the
 * allocations_crossing index, which holds only the blocks that outlive
 * their step (the WHERE term must match the index's to use it).
 */
#define DIFF_BLOCKS \
	" SELECT id, 1 AS added, bytes FROM allocations WHERE run_id = ?1" \
	"  AND (?4 < 0 OR layer = ?4) AND alloc_step > ?2" \
	"  AND alloc_step <= ?3 AND (free_step IS NULL OR free_step > ?3)" \
	" UNION ALL" \
	" SELECT id, 0, bytes FROM allocations WHERE run_id = ?1" \
	"  AND (?4 < 0 OR layer = ?4) AND free_step > coalesce(alloc_step, 1)" \
	"  AND free_step > ?2 AND free_step <= ?3" \
	"  AND coalesce(alloc_step, 1) <= ?2"

static sqlite3_stmt *
query_tui_diff_prepare(struct query *q, const char *sql, int64_t run,
    int64_t a, int64_t b, int layer, char **cause)
{
	sqlite3_stmt	*st;

	if ((st = query_prepare(q, sql, cause)) == NULL)
		return (NULL);
	sqlite3_bind_int64(st, 1, run);
	sqlite3_bind_int64(st, 2, a < b ? a : b);
	sqlite3_bind_int64(st, 3, a < b ? b : a);
	sqlite3_bind_int(st, 4, layer);
	return (st);
}

/*
 * Count the blocks of run `run` (layer `layer`, -1: all) that are live at
 * the end of one of steps a and b and not the other; "added" are live at
 * the later step only.  0, or -1 with *cause.
 */
int
query_tui_diff_summary(struct query *q, int64_t run, int64_t a, int64_t b,
    int layer, struct tui_diff_summary *out, char **cause)
{
	sqlite3_stmt	*st;
	int		 rc;

	memset(out, 0, sizeof *out);
	st = query_tui_diff_prepare(q, "SELECT coalesce(sum(added), 0),"
	    " coalesce(sum(CASE WHEN added THEN bytes END), 0),"
	    " coalesce(sum(NOT added), 0),"
	    " coalesce(sum(CASE WHEN NOT added THEN bytes END), 0)"
	    " FROM (" DIFF_BLOCKS ")", run, a, b, layer, cause);
	if (st == NULL)
		return (-1);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		out->added_blocks = sqlite3_column_int64(st, 0);
		out->added_bytes = sqlite3_column_int64(st, 1);
		out->removed_blocks = sqlite3_column_int64(st, 2);
		out->removed_bytes = sqlite3_column_int64(st, 3);
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		query_fail(q, cause);
		sqlite3_finalize(st);
		return (-1);
	}
	sqlite3_finalize(st);
	return (0);
}

/*
 * Fill rows[0..max) with the blocks that query_tui_diff_summary() counts,
 * largest first, skipping `offset`.  Returns the number of rows, or -1
 * with *cause.
 */
int
query_tui_diff(struct query *q, int64_t run, int64_t a, int64_t b,
    int layer, int64_t offset, struct tui_diff_row *rows, int max,
    char **cause)
{
	sqlite3_stmt	*st;
	int		 n = 0, rc = SQLITE_DONE;

	st = query_tui_diff_prepare(q, "SELECT a.id, d.added, a.device,"
	    " a.stream, a.layer, a.bytes, a.alloc_step, a.free_step,"
	    " a.site_id, s.label FROM (" DIFF_BLOCKS ") d"
	    " JOIN allocations a ON a.id = d.id"
	    " LEFT JOIN sites s ON s.id = a.site_id"
	    " ORDER BY d.bytes DESC, d.id LIMIT ?5 OFFSET ?6",
	    run, a, b, layer, cause);
	if (st == NULL)
		return (-1);
	sqlite3_bind_int(st, 5, max);
	sqlite3_bind_int64(st, 6, offset);
	while (n < max && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		rows[n].id = sqlite3_column_int64(st, 0);
		rows[n].added = sqlite3_column_int(st, 1);
		rows[n].device = query_column_int(st, 2);
		rows[n].stream = query_column_u64(st, 3);
		rows[n].layer = sqlite3_column_int(st, 4);
		rows[n].bytes = sqlite3_column_int64(st, 5);
		rows[n].alloc_step = sqlite3_column_int64(st, 6);
		rows[n].free_step = sqlite3_column_int64(st, 7);
		rows[n].site_id = sqlite3_column_int64(st, 8);
		query_column_copy(st, 9, rows[n].site, sizeof rows[n].site);
		n++;
	}
	if (n < max && rc != SQLITE_DONE) {
		query_fail(q, cause);
		sqlite3_finalize(st);
		return (-1);
	}
	sqlite3_finalize(st);
	return (n);
}
