/*
 * store-snapshot.c: the rows of an imported PyTorch memory snapshot, for
 * the importer (import*.c), which speaks only store_*.
 *
 * A snapshot belongs to the run being written: store_snapshot_begin()
 * adds its row and makes it the store's current snapshot, the other calls
 * add to it (its segments and their blocks, its allocator settings, its
 * trace entries counted per action), and store_snapshot_finish() writes
 * its totals and gives the run what only the snapshot knows.  The
 * snapshot's integers are stored as read; the trace's allocations are
 * ordinary rows of the run (store-rows.c).
 */
#include "config.h"

#include "store-int.h"

static const struct store_sql_text snapshot_sql[] = {
	{ STMT_SEGMENT, "INSERT INTO segments(snapshot_id, device, address,"
	    " total_size, allocated_size, active_size, requested_size, stream,"
	    " segment_type, pool_id, is_expandable, site_id) VALUES (?1, ?2,"
	    " ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)" },
	{ STMT_BLOCK, "INSERT INTO blocks(snapshot_id, segment_id, address,"
	    " size, requested_size, state, site_id) VALUES (?1, ?2, ?3, ?4,"
	    " ?5, ?6, ?7)" },
	{ STMT_SETTING, "INSERT OR REPLACE INTO allocator_settings("
	    "snapshot_id, key, value) VALUES (?1, ?2, ?3)" },
	{ STMT_ACTION, "INSERT INTO trace_actions(snapshot_id, device,"
	    " action, count) VALUES (?1, ?2, ?3, ?4)" },
};

/* Prepare the snapshot tables' statements.  0, or -1 with *cause. */
int
store_snapshot_prepare(struct store *s, char **cause)
{
	return (store_sql_prepare(s, snapshot_sql,
	    sizeof snapshot_sql / sizeof snapshot_sql[0], cause));
}

/*
 * Run a write to table made for one use: the integers ints[0 .. n) bound
 * as ?1 .. ?n (EVENT_NONE: NULL), then text, when not NULL, as ?n+1.  0,
 * or -1 with *cause.
 */
static int
snapshot_once(struct store *s, const char *sql, const char *table,
    const uint64_t *ints, int n, const char *text, char **cause)
{
	sqlite3_stmt	*st;
	int		 i;

	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
		return (store_sql_error(s, cause, "cannot write to %s:",
		    table));
	for (i = 0; i < n; i++)
		store_sql_bind_opt(st, i + 1, ints[i]);
	if (text != NULL)
		store_sql_bind_text(st, n + 1, text);
	i = store_sql_step(s, st, table, cause);
	sqlite3_finalize(st);
	return (i);
}

/*
 * Begin the snapshot read from file (its size file_bytes; -1: unknown) in
 * the current run; the calls below add to it.  0, or -1 with *cause.
 */
int
store_snapshot_begin(struct store *s, const char *file, int64_t file_bytes,
    char **cause)
{
	uint64_t	ints[2];

	if (store_sql_begin(s, cause) != 0)
		return (-1);
	ints[0] = (uint64_t)s->run_id;
	ints[1] = file_bytes < 0 ? EVENT_NONE : (uint64_t)file_bytes;
	if (snapshot_once(s, "INSERT INTO snapshots(run_id, file_bytes,"
	    " file, trace_entries, annotations) VALUES (?1, ?2, ?3, 0, 0)",
	    "snapshots", ints, 2, file, cause) != 0)
		return (-1);
	s->snapshot_id = sqlite3_last_insert_rowid(s->db);
	return (0);
}

/*
 * Add segment g of the current snapshot and set *id to its row id, for
 * its blocks.  0, or -1 with *cause.
 */
int
store_snapshot_segment(struct store *s, const struct store_segment *g,
    int64_t *id, char **cause)
{
	sqlite3_stmt	*st = s->stmt[STMT_SEGMENT];

	if (store_sql_begin(s, cause) != 0)
		return (-1);
	sqlite3_bind_int64(st, 1, s->snapshot_id);
	sqlite3_bind_int64(st, 2, g->device);
	sqlite3_bind_int64(st, 3, g->address);
	sqlite3_bind_int64(st, 4, g->total_size);
	sqlite3_bind_int64(st, 5, g->allocated_size);
	sqlite3_bind_int64(st, 6, g->active_size);
	sqlite3_bind_int64(st, 7, g->requested_size);
	sqlite3_bind_int64(st, 8, g->stream);
	store_sql_bind_text(st, 9, g->segment_type);
	store_sql_bind_text(st, 10, g->pool_id);
	sqlite3_bind_int(st, 11, g->expandable);
	store_sql_bind_id(st, 12, g->site_id);
	if (store_sql_step(s, st, "segments", cause) != 0)
		return (-1);
	*id = sqlite3_last_insert_rowid(s->db);
	return (0);
}

/* Add block b of the current snapshot.  0, or -1 with *cause. */
int
store_snapshot_block(struct store *s, const struct store_block *b,
    char **cause)
{
	sqlite3_stmt	*st = s->stmt[STMT_BLOCK];

	if (store_sql_begin(s, cause) != 0)
		return (-1);
	sqlite3_bind_int64(st, 1, s->snapshot_id);
	sqlite3_bind_int64(st, 2, b->segment_id);
	sqlite3_bind_int64(st, 3, b->address);
	sqlite3_bind_int64(st, 4, b->size);
	if (b->requested_size >= 0)
		sqlite3_bind_int64(st, 5, b->requested_size);
	store_sql_bind_text(st, 6, b->state);
	store_sql_bind_id(st, 7, b->site_id);
	return (store_sql_step(s, st, "blocks", cause));
}

/*
 * Set allocator setting key of the current snapshot to value (text; a
 * later value of the same key replaces it).  0, or -1 with *cause.
 */
int
store_snapshot_setting(struct store *s, const char *key, const char *value,
    char **cause)
{
	sqlite3_stmt	*st = s->stmt[STMT_SETTING];

	if (store_sql_begin(s, cause) != 0)
		return (-1);
	sqlite3_bind_int64(st, 1, s->snapshot_id);
	store_sql_bind_text(st, 2, key);
	store_sql_bind_text(st, 3, value);
	return (store_sql_step(s, st, "allocator_settings", cause));
}

/*
 * The current snapshot's trace holds count entries of action on device.
 * 0, or -1 with *cause.
 */
int
store_snapshot_action(struct store *s, int32_t device, const char *action,
    int64_t count, char **cause)
{
	sqlite3_stmt	*st = s->stmt[STMT_ACTION];

	if (store_sql_begin(s, cause) != 0)
		return (-1);
	sqlite3_bind_int64(st, 1, s->snapshot_id);
	sqlite3_bind_int(st, 2, device);
	store_sql_bind_text(st, 3, action);
	sqlite3_bind_int64(st, 4, count);
	return (store_sql_step(s, st, "trace_actions", cause));
}

/*
 * End the current snapshot: its totals of trace entries and annotations,
 * and for its run the start (first_ns, the first trace entry; EVENT_NONE:
 * none, stored as unknown), where its steps came from (step_source) and
 * its allocator, read from the PYTORCH_CUDA_ALLOC_CONF setting.  0, or -1
 * with *cause.
 */
int
store_snapshot_finish(struct store *s, int64_t trace_entries,
    int64_t annotations, uint64_t first_ns, const char *step_source,
    char **cause)
{
	uint64_t	ints[3];

	if (store_sql_begin(s, cause) != 0)
		return (-1);
	ints[0] = (uint64_t)trace_entries;
	ints[1] = (uint64_t)annotations;
	ints[2] = (uint64_t)s->snapshot_id;
	if (snapshot_once(s, "UPDATE snapshots SET trace_entries = ?1,"
	    " annotations = ?2 WHERE id = ?3", "snapshots", ints, 3, NULL,
	    cause) != 0)
		return (-1);
	ints[0] = first_ns;
	ints[1] = (uint64_t)s->snapshot_id;
	ints[2] = (uint64_t)s->run_id;
	return (snapshot_once(s, "UPDATE runs SET start_ns = ?1,"
	    " allocator = (SELECT CASE WHEN value LIKE '%cudaMallocAsync%'"
	    " THEN 'async' ELSE 'native' END FROM allocator_settings WHERE"
	    " snapshot_id = ?2 AND key = 'PYTORCH_CUDA_ALLOC_CONF'),"
	    " step_source = ?4 WHERE id = ?3", "runs", ints, 3, step_source,
	    cause));
}
