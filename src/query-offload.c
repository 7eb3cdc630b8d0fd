/*
 * query-offload.c: what the offload engine decided in each step of a run,
 * counted per kind of decision (pack, offload, stash, reap, ...).  It must
 * stay cheap on a run of ten million allocations: it groups by the
 * offload_run index.
 */
#include "config.h"

#include "query-int.h"

#include <stdlib.h>
#include <string.h>

/*
 * The offload engine's decisions per step of run `run`, in step order:
 * *out (the caller frees it) gets *n rows, none when the run has no
 * offload events.  Events without a step came before the first marker:
 * they count as step 1, as allocations do.  0, or -1 with *cause.
 */
int
query_offload(struct query *q, int64_t run,
    struct query_offload_step **out, size_t *n, char **cause)
{
	struct query_offload_step	*rows = NULL, *r;
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
