/*
 * store-rows.c: the rows of a run, every event table's writer in one
 * place.
 *
 * Each writer binds one prepared statement (rows_sql, prepared when the
 * store opens) and steps it inside the store's transaction.  Allocations
 * are the one table with a life: a row waits in the live table
 * (store-live.c) from its alloc until its free, so that the pair costs one
 * INSERT; rows still live when the transaction commits are inserted
 * without a free time and remember their rowid, so that a later free is
 * an UPDATE of that row.  Every final allocation is also counted in its
 * group (store-groups.c) and offered to the first-rows heaps
 * (store-top.c).
 *
 * Step numbers: a row gets its alloc and free step from the step
 * boundaries known when it is written (store-steps.c).  Rows written
 * before the first boundary get theirs when it comes (assign_unstepped);
 * a boundary that comes late marks the run for store_rows_assign_steps()
 * when it finishes.  A bulk load's rows wait for the steps, which come
 * last, in store-pending.c, and are inserted once, with them, by
 * store-queue.c's writer thread, as are its blocks still live when it
 * finishes (insert_queued).  Until then, store_rows_alloc_begin(),
 * store_rows_alloc_free_requested() and store_rows_alloc_end() of a bulk
 * load touch only the live table and the rows kept (no SQL, no other
 * part of the store): import-pipe.c makes them in a second thread while
 * the first writes sites, segments, blocks and marks.
 */
#include "config.h"

#include "store-int.h"

#include <stdlib.h>
#include <string.h>

static int	insert_pending(struct store *, const struct store_allocation *,
		    char **);

static const struct store_sql_text rows_sql[] = {
	{ STMT_ALLOC, STORE_ALLOC_INSERT STORE_ALLOC_VALUES },
	{ STMT_FREE_UPDATE, "UPDATE allocations SET free_requested_ns = ?2,"
	    " free_ns = ?3, free_step = ?4 WHERE id = ?1" },
	{ STMT_MEMCPY, "INSERT INTO memcpys(run_id, process_id, device,"
	    " stream, kind, bytes, src_device, dst_device, start_ns, end_ns,"
	    " correlation_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10,"
	    " ?11)" },
	{ STMT_OFFLOAD, "INSERT INTO offload_events(run_id, process_id,"
	    " device, stream, time_ns, step, kind, tensor_id, storage_key,"
	    " generation, bytes) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9,"
	    " ?10, ?11)" },
	{ STMT_STREAM_CREATE, "INSERT INTO streams(run_id, process_id,"
	    " device, stream, handle, context, priority, flags, created_ns,"
	    " destroyed_ns) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)" },
	{ STMT_STREAM_DESTROY, "UPDATE streams SET destroyed_ns = ?4"
	    " WHERE id = (SELECT max(id) FROM streams WHERE run_id = ?1"
	    " AND process_id IS ?2 AND stream = ?3 AND destroyed_ns IS NULL)" },
	{ STMT_STEP, "INSERT OR IGNORE INTO steps(run_id, step, start_ns,"
	    " end_ns, name) VALUES (?1, ?2, ?3, ?4, ?5)" },
	{ STMT_MARK, "INSERT INTO marks(run_id, process_id, device, time_ns,"
	    " stage, name) VALUES (?1, ?2, ?3, ?4, ?5, ?6)" },
	{ STMT_DROPPED, "INSERT INTO dropped_records(run_id, process_id,"
	    " time_ns, source, count) VALUES (?1, ?2, ?3, ?4, ?5)" },
	{ STMT_DEVICE, "INSERT INTO devices(run_id, process_id, device, name,"
	    " total_bytes) VALUES (?1, ?2, ?3, ?4, ?5)" },
	{ STMT_PROCESS, "INSERT INTO processes(run_id, pid, rank, local_rank,"
	    " host, command, allocator, start_ns, job) VALUES (?1, ?2, ?3, ?4,"
	    " ?5, ?6, ?7, ?8, ?9)" },
	{ STMT_PROCESS_END, "UPDATE processes SET end_ns = ?2 WHERE id = ?1" },
	{ STMT_USAGE, "INSERT INTO usage_samples(run_id, device, time_ns,"
	    " used_bytes) VALUES (?1, ?2, ?3, ?4)" },
	{ STMT_CHECK_STEP_ADD, "UPDATE offload_check_steps SET"
	    " packs = packs + ?5, unpacks = unpacks + ?6,"
	    " checked = checked + ?7, differ = differ + ?8,"
	    " packed_bytes = packed_bytes + ?9, moved_bytes = moved_bytes + ?10,"
	    " device = CASE WHEN device IS ?11 THEN device ELSE -1 END"
	    " WHERE run_id = ?1 AND process_id IS ?2 AND step = ?3"
	    " AND engine IS ?4" },
	{ STMT_CHECK_STEP, "INSERT INTO offload_check_steps(run_id,"
	    " process_id, step, engine, packs, unpacks, checked, differ,"
	    " packed_bytes, moved_bytes, device) VALUES (?1, ?2, ?3, ?4, ?5,"
	    " ?6, ?7, ?8, ?9, ?10, ?11)" },
	{ STMT_CHECK_DIFF, "INSERT INTO offload_check_diffs(run_id,"
	    " process_id, device, step, pack_index, engine, shape, dtype,"
	    " bytes, differs, detail, pack_where, pack_ns, unpack_ns,"
	    " pack_site_id, unpack_site_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6,"
	    " ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)" },
};

/* Prepare the row writers' statements (store_open).  0, or -1 with *cause. */
int
store_rows_prepare(struct store *s, char **cause)
{
	return (store_sql_prepare(s, rows_sql,
	    sizeof rows_sql / sizeof rows_sql[0], cause));
}

/*
 * Statement id with the transaction open and its first two parameters
 * bound: the run and process_id (0: NULL), as every event table begins.
 * NULL with *cause when the transaction cannot open.
 */
static sqlite3_stmt *
run_stmt(struct store *s, enum store_stmt id, int64_t process_id,
    char **cause)
{
	sqlite3_stmt	*st = s->stmt[id];

	if (store_sql_begin(s, cause) != 0)
		return (NULL);
	sqlite3_bind_int64(st, 1, s->run_id);
	store_sql_bind_id(st, 2, process_id);
	return (st);
}

/*
 * Add a process row for a PROCESS_START; host, command and job are its
 * resolved strings (NULL: unknown), start_ns 0 is unknown.  Sets *id to
 * the processes.id.  0, or -1 with *cause.
 */
int
store_rows_process(struct store *s, const struct event_process *p,
    const char *host, const char *command, const char *job, uint64_t start_ns,
    int64_t *id, char **cause)
{
	sqlite3_stmt	*st = s->stmt[STMT_PROCESS];
	const char	*allocator = NULL;

	if (store_sql_begin(s, cause) != 0)
		return (-1);
	if (p->flags & EVENT_PROCESS_ASYNC_ALLOCATOR)
		allocator = "async";
	else if (p->flags & EVENT_PROCESS_NATIVE_ALLOCATOR)
		allocator = "native";
	sqlite3_bind_int64(st, 1, s->run_id);
	sqlite3_bind_int64(st, 2, p->pid);
	if (p->rank >= 0)
		sqlite3_bind_int(st, 3, p->rank);
	if (p->local_rank >= 0)
		sqlite3_bind_int(st, 4, p->local_rank);
	store_sql_bind_text(st, 5, host);
	store_sql_bind_text(st, 6, command);
	store_sql_bind_text(st, 7, allocator);
	store_sql_bind_opt(st, 8, start_ns == 0 ? EVENT_NONE : start_ns);
	store_sql_bind_text(st, 9, job);
	if (store_sql_step(s, st, "processes", cause) != 0)
		return (-1);
	*id = sqlite3_last_insert_rowid(s->db);
	return (0);
}

/* The process process_id (> 0) ended at end_ns.  0, or -1 with *cause. */
int
store_rows_process_end(struct store *s, int64_t process_id, uint64_t end_ns,
    char **cause)
{
	sqlite3_stmt	*st = s->stmt[STMT_PROCESS_END];

	if (store_sql_begin(s, cause) != 0)
		return (-1);
	sqlite3_bind_int64(st, 1, process_id);
	store_sql_bind_opt(st, 2, end_ns);
	return (store_sql_step(s, st, "processes", cause));
}

/*
 * Add device d of process_id, named name (NULL: unknown).  0, or -1 with
 * *cause.
 */
int
store_rows_device(struct store *s, int64_t process_id,
    const struct event_device *d, const char *name, char **cause)
{
	sqlite3_stmt	*st;

	if ((st = run_stmt(s, STMT_DEVICE, process_id, cause)) == NULL)
		return (-1);
	sqlite3_bind_int(st, 3, d->device);
	store_sql_bind_text(st, 4, name);
	store_sql_bind_opt(st, 5, d->total_bytes == 0 ? EVENT_NONE :
	    d->total_bytes);
	return (store_sql_step(s, st, "devices", cause));
}

/*
 * Add the records a source lost at time_ns (0: unknown); source_name
 * (NULL: unknown) says which buffer lost them.  0, or -1 with *cause.
 */
int
store_rows_dropped(struct store *s, int64_t process_id, uint64_t time_ns,
    const struct event_dropped *d, const char *source_name, char **cause)
{
	sqlite3_stmt	*st;

	if ((st = run_stmt(s, STMT_DROPPED, process_id, cause)) == NULL)
		return (-1);
	store_sql_bind_opt(st, 3, time_ns);
	store_sql_bind_text(st, 4, source_name);
	sqlite3_bind_int64(st, 5, (int64_t)d->count);
	return (store_sql_step(s, st, "dropped_records", cause));
}

/*
 * Add copy m of process_id, started at start_ns (0: unknown); its device
 * is the GPU end of the copy.  0, or -1 with *cause.
 */
int
store_rows_memcpy(struct store *s, int64_t process_id, uint64_t start_ns,
    const struct event_memcpy *m, char **cause)
{
	sqlite3_stmt	*st;
	int32_t		 device;

	device = m->kind == EVENT_COPY_HTOD ? m->dst_device : m->src_device;
	if ((st = run_stmt(s, STMT_MEMCPY, process_id, cause)) == NULL)
		return (-1);
	sqlite3_bind_int(st, 3, device);
	store_sql_bind_opt(st, 4, m->stream);
	sqlite3_bind_int(st, 5, m->kind);
	sqlite3_bind_int64(st, 6, (int64_t)m->bytes);
	sqlite3_bind_int(st, 7, m->src_device);
	sqlite3_bind_int(st, 8, m->dst_device);
	store_sql_bind_opt(st, 9, start_ns == 0 ? EVENT_NONE : start_ns);
	store_sql_bind_opt(st, 10, m->end_ns == 0 ? EVENT_NONE : m->end_ns);
	store_sql_bind_opt(st, 11, m->correlation);
	return (store_sql_step(s, st, "memcpys", cause));
}

/*
 * Add offload decision o of process_id at time_ns, in its step when steps
 * are known (else it gets one with the first boundary).  0, or -1 with
 * *cause.
 */
int
store_rows_offload(struct store *s, int64_t process_id, uint64_t time_ns,
    const struct event_offload *o, char **cause)
{
	sqlite3_stmt	*st;

	if ((st = run_stmt(s, STMT_OFFLOAD, process_id, cause)) == NULL)
		return (-1);
	sqlite3_bind_int(st, 3, o->device);
	store_sql_bind_opt(st, 4, o->stream);
	sqlite3_bind_int64(st, 5, (int64_t)time_ns);
	if (store_steps_known(&s->steps, process_id))
		sqlite3_bind_int64(st, 6, store_steps_of(&s->steps,
		    process_id, time_ns));
	else
		s->unstepped = 1;
	sqlite3_bind_text(st, 7, event_offload_kind_name(o->kind), -1,
	    SQLITE_STATIC);
	store_sql_bind_opt(st, 8, o->tensor);
	store_sql_bind_opt(st, 9, o->storage);
	store_sql_bind_opt(st, 10, o->generation);
	store_sql_bind_opt(st, 11, o->bytes);
	return (store_sql_step(s, st, "offload_events", cause));
}

/*
 * Add what an engine (its class, NULL: unknown) of process_id did in a
 * checker step to the row of that process, engine and step, or make that
 * row: the checker sends its tallies as deltas.  0, or -1 with *cause.
 */
int
store_rows_check_step(struct store *s, int64_t process_id,
    const struct event_check_step *c, const char *engine, char **cause)
{
	static const enum store_stmt	 ids[] = { STMT_CHECK_STEP_ADD,
					    STMT_CHECK_STEP };
	sqlite3_stmt			*st;
	size_t				 i;

	for (i = 0; i < sizeof ids / sizeof ids[0]; i++) {
		if ((st = run_stmt(s, ids[i], process_id, cause)) == NULL)
			return (-1);
		sqlite3_bind_int64(st, 3, c->step);
		store_sql_bind_text(st, 4, engine);
		sqlite3_bind_int64(st, 5, (int64_t)c->packs);
		sqlite3_bind_int64(st, 6, (int64_t)c->unpacks);
		sqlite3_bind_int64(st, 7, (int64_t)c->checked);
		sqlite3_bind_int64(st, 8, (int64_t)c->differ);
		sqlite3_bind_int64(st, 9, (int64_t)c->packed_bytes);
		sqlite3_bind_int64(st, 10, (int64_t)c->moved_bytes);
		sqlite3_bind_int(st, 11, c->device);
		if (store_sql_step(s, st, "offload_check_steps", cause) != 0)
			return (-1);
		if (sqlite3_changes(s->db) > 0)
			break;
	}
	return (0);
}

/*
 * Add a saved tensor of process_id, packed at pack_ns, that came back
 * different: d with its strings and stacks resolved in n.  0, or -1 with
 * *cause.
 */
int
store_rows_check_diff(struct store *s, int64_t process_id, uint64_t pack_ns,
    const struct event_check_diff *d, const struct store_check_names *n,
    char **cause)
{
	sqlite3_stmt	*st;

	if ((st = run_stmt(s, STMT_CHECK_DIFF, process_id, cause)) == NULL)
		return (-1);
	sqlite3_bind_int(st, 3, d->device);
	sqlite3_bind_int64(st, 4, d->step);
	sqlite3_bind_int64(st, 5, (int64_t)d->index);
	store_sql_bind_text(st, 6, n->engine);
	store_sql_bind_text(st, 7, n->shape);
	store_sql_bind_text(st, 8, n->dtype);
	sqlite3_bind_int64(st, 9, (int64_t)d->bytes);
	sqlite3_bind_int(st, 10, (int)d->differs);
	store_sql_bind_text(st, 11, n->detail);
	store_sql_bind_text(st, 12, n->where);
	store_sql_bind_opt(st, 13, pack_ns == 0 ? EVENT_NONE : pack_ns);
	store_sql_bind_opt(st, 14, d->unpack_ns == 0 ? EVENT_NONE :
	    d->unpack_ns);
	store_sql_bind_id(st, 15, n->pack_site);
	store_sql_bind_id(st, 16, n->unpack_site);
	return (store_sql_step(s, st, "offload_check_diffs", cause));
}

/*
 * Add a named instant or annotation of process_id (0: none) on device (-1:
 * none) at time_ns, stage "START", "END" or NULL.  0, or -1 with *cause.
 */
int
store_rows_mark(struct store *s, int64_t process_id, int32_t device,
    uint64_t time_ns, const char *stage, const char *name, char **cause)
{
	sqlite3_stmt	*st;

	if ((st = run_stmt(s, STMT_MARK, process_id, cause)) == NULL)
		return (-1);
	sqlite3_bind_int(st, 3, device);
	store_sql_bind_opt(st, 4, time_ns);
	store_sql_bind_text(st, 5, stage);
	store_sql_bind_text(st, 6, name);
	return (store_sql_step(s, st, "marks", cause));
}

/* Insert a lifetime of stream es; see store_rows_stream(). */
static int
stream_insert(struct store *s, int64_t process_id,
    const struct event_stream *es, int detailed, uint64_t created_ns,
    uint64_t destroyed_ns, char **cause)
{
	sqlite3_stmt	*st;

	if ((st = run_stmt(s, STMT_STREAM_CREATE, process_id,
	    cause)) == NULL)
		return (-1);
	sqlite3_bind_int(st, 3, es->device);
	sqlite3_bind_int64(st, 4, (int64_t)es->stream);
	store_sql_bind_opt(st, 5, es->handle);
	store_sql_bind_opt(st, 6, es->context);
	if (detailed) {
		sqlite3_bind_int(st, 7, es->priority);
		sqlite3_bind_int64(st, 8, es->flags);
	}
	store_sql_bind_opt(st, 9, created_ns);
	store_sql_bind_opt(st, 10, destroyed_ns);
	return (store_sql_step(s, st, "streams", cause));
}

/*
 * Add a stream of the current run, created at created_ns (EVENT_NONE:
 * unknown).  Its priority and flags are stored only when `detailed` (an
 * importer knows neither).  0, or -1 with *cause.
 */
int
store_rows_stream(struct store *s, int64_t process_id,
    const struct event_stream *es, int detailed, uint64_t created_ns,
    char **cause)
{
	return (stream_insert(s, process_id, es, detailed, created_ns,
	    EVENT_NONE, cause));
}

/*
 * The stream es of the current run was destroyed at destroyed_ns: its
 * newest open lifetime ends, or, if it was created before tracing began, a
 * lifetime with only an end is added.  0, or -1 with *cause.
 */
int
store_rows_stream_end(struct store *s, int64_t process_id,
    const struct event_stream *es, uint64_t destroyed_ns, char **cause)
{
	sqlite3_stmt	*st;

	if ((st = run_stmt(s, STMT_STREAM_DESTROY, process_id,
	    cause)) == NULL)
		return (-1);
	sqlite3_bind_int64(st, 3, (int64_t)es->stream);
	sqlite3_bind_int64(st, 4, (int64_t)destroyed_ns);
	if (store_sql_step(s, st, "streams", cause) != 0)
		return (-1);
	if (sqlite3_changes(s->db) > 0)
		return (0);
	return (stream_insert(s, process_id, es, 0, EVENT_NONE, destroyed_ns,
	    cause));
}

/*
 * Add a sample of the device memory the run's process used on device at
 * time_ns (attach, which sees totals only).  0, or -1 with *cause.
 */
int
store_rows_usage(struct store *s, int32_t device, uint64_t time_ns,
    uint64_t used_bytes, char **cause)
{
	sqlite3_stmt	*st = s->stmt[STMT_USAGE];

	if (store_sql_begin(s, cause) != 0)
		return (-1);
	sqlite3_bind_int64(st, 1, s->run_id);
	sqlite3_bind_int(st, 2, device);
	sqlite3_bind_int64(st, 3, (int64_t)time_ns);
	sqlite3_bind_int64(st, 4, (int64_t)used_bytes);
	return (store_sql_step(s, st, "usage_samples", cause));
}

static void
step_of_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct store	*s = sqlite3_user_data(ctx);

	(void)argc;
	if (sqlite3_value_type(argv[1]) == SQLITE_NULL) {
		sqlite3_result_int64(ctx, 1);
		return;
	}
	sqlite3_result_int64(ctx, store_steps_of(&s->steps,
	    sqlite3_value_int64(argv[0]),
	    (uint64_t)sqlite3_value_int64(argv[1])));
}

/*
 * Run insert(s, cause), which inserts allocation rows: a bulk load's that
 * has some to insert (`any`) through the writer thread of store-queue.c,
 * others one at a time.  0, or -1 with *cause.
 */
static int
insert_queued(struct store *s, int any, int (*insert)(struct store *,
    char **), char **cause)
{
	int	rc;

	if (!(s->flags & STORE_BULK) || !any)
		return (insert(s, cause));
	if (store_queue_begin(s, cause) != 0)
		return (-1);
	rc = insert(s, cause);
	if (store_queue_end(s, rc != 0, rc == 0 ? cause : NULL) != 0)
		rc = -1;
	return (rc);
}

/* Insert the rows that waited for their steps (insert_queued's insert). */
static int
insert_pending_all(struct store *s, char **cause)
{
	return (store_pending_insert(s, insert_pending, cause));
}

#define ASSIGN_ALLOC_SQL \
	"UPDATE allocations SET alloc_step = vt_step_of(coalesce(process_id," \
	" 0), alloc_ns), free_step = CASE WHEN free_ns IS NULL THEN NULL" \
	" ELSE vt_step_of(coalesce(process_id, 0), free_ns) END" \
	" WHERE run_id = ?1"
#define ASSIGN_OFFLOAD_SQL \
	"UPDATE offload_events SET step = vt_step_of(coalesce(process_id, 0)," \
	" time_ns) WHERE run_id = ?1"

/*
 * Give the run's rows (those the caller's AND narrows them to) their steps
 * from the boundaries known now.
 */
static int
assign_steps(struct store *s, const char *alloc_sql, const char *offload_sql,
    char **cause)
{
	const char	*sql[2] = { alloc_sql, offload_sql };
	sqlite3_stmt	*st;
	size_t		 i;
	int		 rc;

	if (s->steps.run.n == 0)
		return (0);
	if (store_sql_begin(s, cause) != 0)
		return (-1);
	sqlite3_create_function(s->db, "vt_step_of", 2, SQLITE_UTF8, s,
	    step_of_fn, NULL, NULL);
	for (i = 0; i < 2; i++) {
		if (sqlite3_prepare_v2(s->db, sql[i], -1, &st, NULL) !=
		    SQLITE_OK)
			return (store_sql_error(s, cause,
			    "cannot assign steps:"));
		sqlite3_bind_int64(st, 1, s->run_id);
		rc = sqlite3_step(st);
		sqlite3_finalize(st);
		if (rc != SQLITE_DONE)
			return (store_sql_error(s, cause,
			    "cannot assign steps:"));
	}
	return (0);
}

/*
 * Give every allocation of the current run its alloc and free step from the
 * steps known now (importers call this once all markers are in; the writer
 * calls it when a marker came late): those written, and then the rows of
 * a bulk load that waited for them.  0, or -1 with *cause.
 */
int
store_rows_assign_steps(struct store *s, char **cause)
{
	int	written = s->run_first_alloc != 0;

	if (assign_steps(s, ASSIGN_ALLOC_SQL, ASSIGN_OFFLOAD_SQL, cause) != 0)
		return (-1);
	/* Rows only waiting (a bulk load): their groups come with them. */
	if (!written)
		store_groups_reset(&s->groups);
	if (insert_queued(s, store_pending_any(&s->pending),
	    insert_pending_all, cause) != 0)
		return (-1);
	s->steps.dirty = 0;
	s->unstepped = 0;
	if (written)
		s->groups.valid = 0;	/* steps changed: regroup at finish */
	return (0);
}

/*
 * At the first step boundary: give their steps to the rows written before
 * it (one step's worth at most, so this is cheap).  0, or -1 with *cause.
 */
static int
assign_unstepped(struct store *s, char **cause)
{
	if (assign_steps(s, ASSIGN_ALLOC_SQL " AND (alloc_step IS NULL OR"
	    " (free_step IS NULL AND free_ns IS NOT NULL))",
	    ASSIGN_OFFLOAD_SQL " AND step IS NULL", cause) != 0)
		return (-1);
	s->unstepped = 0;
	store_groups_flush_pending(s);
	return (0);
}

/*
 * Record the end of step `step` (-1: the process's next) of process_id
 * (0: none, an importer) at end_ns, starting at start_ns (0: the previous
 * end), with an optional name; the run's step k is where the first process
 * to reach it ended it (store_steps_add).  At the first boundary the rows
 * written before it get their steps.  0, or -1 with *cause.
 */
int
store_rows_step(struct store *s, int64_t process_id, int64_t step,
    uint64_t start_ns, uint64_t end_ns, const char *name, char **cause)
{
	sqlite3_stmt	*st = s->stmt[STMT_STEP];

	switch (store_steps_add(&s->steps, process_id, &step, &start_ns,
	    end_ns)) {
	case STORE_STEPS_IGNORED:
		return (0);
	case STORE_STEPS_RUN:
		if (store_sql_begin(s, cause) != 0)
			return (-1);
		sqlite3_bind_int64(st, 1, s->run_id);
		sqlite3_bind_int64(st, 2, step);
		store_sql_bind_opt(st, 3, start_ns == 0 ? EVENT_NONE :
		    start_ns);
		sqlite3_bind_int64(st, 4, (int64_t)end_ns);
		store_sql_bind_text(st, 5, name);
		if (store_sql_step(s, st, "steps", cause) != 0)
			return (-1);
		break;
	case STORE_STEPS_PROCESS:
		break;
	}
	/* A bulk load's rows get their steps once, when all are known. */
	if (s->unstepped && !(s->flags & STORE_BULK))
		return (assign_unstepped(s, cause));
	return (0);
}

/*
 * Insert row a now, with the steps known now, or queue it for the writer
 * thread while store_queue_begin() has one running; its id in *rowid.
 */
static int
insert_row(struct store *s, const struct store_allocation *a,
    int64_t *rowid, char **cause)
{
	sqlite3_stmt	*st = s->stmt[STMT_ALLOC];
	int64_t		 id, step[2] = { STORE_QUEUE_NO_STEP,
			     STORE_QUEUE_NO_STEP };

	if (store_steps_known(&s->steps, a->process_id)) {
		step[0] = store_steps_of(&s->steps, a->process_id,
		    a->alloc_ns);
		if (a->free_ns != EVENT_NONE)
			step[1] = store_steps_of(&s->steps, a->process_id,
			    a->free_ns);
	} else
		s->unstepped = 1;
	if (s->queue != NULL) {
		if (store_queue_row(s, a, step[0], step[1], &id, cause) != 0)
			return (-1);
	} else {
		store_queue_bind(st, 0, s->run_id, a, step[0], step[1]);
		if (store_sql_step(s, st, "allocations", cause) != 0)
			return (-1);
		id = sqlite3_last_insert_rowid(s->db);
	}
	if (s->run_first_alloc == 0)
		s->run_first_alloc = id;	/* store-regroup.c reads from it */
	store_top_note(&s->top, id, a);
	if (rowid != NULL)
		*rowid = id;	/* still live: its group comes when it ends */
	else
		store_groups_note(s, a);	/* final */
	return (0);
}

/* insert_row() of a row kept by store-pending.c. */
static int
insert_pending(struct store *s, const struct store_allocation *a,
    char **cause)
{
	return (insert_row(s, a, NULL, cause));
}

/*
 * Write row a (its id in *rowid, when rowid is not NULL): at once, or, in
 * a bulk load before its steps are known, when they are (store-pending.c).
 */
static int
insert_allocation(struct store *s, const struct store_allocation *a,
    int64_t *rowid, char **cause)
{
	if (rowid == NULL && (s->flags & STORE_BULK) &&
	    !store_steps_known(&s->steps, a->process_id))
		return (store_pending_add(s, a, cause));
	return (insert_row(s, a, rowid, cause));
}

/*
 * Add one complete allocation row (importers, and the writer itself):
 * alloc, free-requested and free times as known.  0, or -1 with *cause.
 */
int
store_rows_allocation(struct store *s, const struct store_allocation *a,
    char **cause)
{
	if (store_sql_begin(s, cause) != 0)
		return (-1);
	return (insert_allocation(s, a, NULL, cause));
}

/*
 * Complete live entry e with its free times, writing or updating its row,
 * and drop it from the live table.  0, or -1 with *cause.
 */
static int
live_end(struct store *s, struct store_live_entry *e,
    uint64_t free_requested_ns, uint64_t free_ns, char **cause)
{
	sqlite3_stmt	*st = s->stmt[STMT_FREE_UPDATE];
	int		 rc;

	if (store_sql_begin(s, cause) != 0)
		return (-1);
	e->a.free_requested_ns = free_requested_ns;
	e->a.free_ns = free_ns;
	if (e->rowid == 0)
		rc = insert_allocation(s, &e->a, NULL, cause);
	else {
		sqlite3_bind_int64(st, 1, e->rowid);
		store_sql_bind_opt(st, 2, free_requested_ns);
		store_sql_bind_opt(st, 3, free_ns);
		if (store_steps_known(&s->steps, e->a.process_id))
			sqlite3_bind_int64(st, 4, store_steps_of(&s->steps,
			    e->a.process_id, free_ns));
		else
			s->unstepped = 1;
		rc = store_sql_step(s, st, "allocations", cause);
		store_groups_note(s, &e->a);
	}
	store_live_remove(&s->live, e);
	return (rc);
}

/*
 * An allocation became live: it waits in the live table until it is freed
 * or the transaction commits.  If the address is live already, its free
 * was lost (dropped records, or a ring buffer that wrapped): the old
 * allocation ends where the new one starts.  0, or -1 with *cause.
 */
int
store_rows_alloc_begin(struct store *s, const struct store_allocation *a,
    char **cause)
{
	struct store_live_entry	*e;
	int			 dup;

	if (store_sql_begin(s, cause) != 0)
		return (-1);
	e = store_live_add(&s->live, a, &dup);
	if (!dup)
		return (0);
	if (live_end(s, e, a->alloc_ns, a->alloc_ns, cause) != 0)
		return (-1);
	store_live_add(&s->live, a, &dup);
	return (0);
}

/*
 * The program freed allocation a (its device, layer and address) at time
 * t, but the memory is not reusable yet (another stream still uses it).
 * If no allocation is live there, a was allocated before tracing began: it
 * becomes live with no alloc time.  0, or -1 with *cause.
 */
int
store_rows_alloc_free_requested(struct store *s,
    const struct store_allocation *a, uint64_t t, char **cause)
{
	struct store_live_entry	*e;
	struct store_allocation	 before;

	if ((e = store_live_find(&s->live, a->address, a->device,
	    a->layer)) != NULL) {
		e->a.free_requested_ns = t;
		return (0);
	}
	before = *a;
	before.alloc_ns = EVENT_NONE;
	before.free_requested_ns = t;
	return (store_rows_alloc_begin(s, &before, cause));
}

/*
 * Allocation a (its device, layer and address) ended: freed at
 * free_requested_ns (EVENT_NONE: when store_rows_alloc_free_requested()
 * said, or at free_ns), reusable at free_ns.  The live allocation there
 * gets its row written or updated; if none is live, a was allocated before
 * tracing began and is written whole, with no alloc time.  0, or -1 with
 * *cause.
 */
int
store_rows_alloc_end(struct store *s, const struct store_allocation *a,
    uint64_t free_requested_ns, uint64_t free_ns, char **cause)
{
	struct store_live_entry	*e;
	struct store_allocation	 before;

	if ((e = store_live_find(&s->live, a->address, a->device,
	    a->layer)) == NULL) {
		before = *a;
		before.alloc_ns = EVENT_NONE;
		before.free_requested_ns = free_requested_ns != EVENT_NONE ?
		    free_requested_ns : free_ns;
		before.free_ns = free_ns;
		return (store_rows_allocation(s, &before, cause));
	}
	if (free_requested_ns == EVENT_NONE)
		free_requested_ns = e->a.free_requested_ns != EVENT_NONE ?
		    e->a.free_requested_ns : free_ns;
	return (live_end(s, e, free_requested_ns, free_ns, cause));
}

/*
 * Is an allocation live at (device, layer, address)?  If so, and bytes is
 * more than its own bytes while it has no row yet, it takes bytes: an
 * importer that learns at the end the true size of a block that is still
 * live (a snapshot's trace gives the size asked for, its segments the
 * block's) sizes it for its whole life.
 */
int
store_rows_alloc_live_size(struct store *s, int32_t device, int layer,
    uint64_t address, uint64_t bytes)
{
	struct store_live_entry	*e;

	if ((e = store_live_find(&s->live, address, device, layer)) == NULL)
		return (0);
	if (e->rowid == 0 && bytes > e->a.bytes)
		e->a.bytes = bytes;
	return (1);
}

/* What flush_live_one() needs: the store, and where a failure goes. */
struct flush_arg {
	struct store	*s;
	char		**cause;
};

static int
flush_live_one(struct store_live_entry *e, void *arg)
{
	struct flush_arg	*fa = arg;

	if (e->rowid != 0)
		return (0);
	return (insert_allocation(fa->s, &e->a, &e->rowid, fa->cause));
}

/* Insert the live allocations that have no row (insert_queued's insert). */
static int
insert_live_all(struct store *s, char **cause)
{
	struct flush_arg	fa = { s, cause };

	return (store_live_each(&s->live, flush_live_one, &fa));
}

/*
 * Before a commit: insert the rows that wait for their steps and the
 * live allocations that have no row yet, so that a reader (or a crash)
 * sees them; a bulk load's through the writer thread (the blocks still
 * live when a snapshot was taken can be a third of its rows).  0, or -1
 * with *cause.
 */
int
store_rows_flush(struct store *s, char **cause)
{
	if (insert_queued(s, store_pending_any(&s->pending),
	    insert_pending_all, cause) != 0)
		return (-1);
	return (insert_queued(s, s->live.count > 0, insert_live_all, cause));
}

/* A live entry at the end of the run is final: count it in its group. */
static int
note_live_one(struct store_live_entry *e, void *arg)
{
	store_groups_note(arg, &e->a);
	return (0);
}

/*
 * The run ends: what is still live stays live (its row has no free time)
 * and is final; the live table empties; step numbers are recomputed if a
 * boundary came late.  0, or -1 with *cause.
 */
int
store_rows_finish(struct store *s, char **cause)
{
	store_live_each(&s->live, note_live_one, s);
	if (store_rows_flush(s, cause) != 0)
		return (-1);
	store_live_free(&s->live);
	store_live_init(&s->live);
	if (s->steps.dirty && store_rows_assign_steps(s, cause) != 0)
		return (-1);
	return (0);
}
