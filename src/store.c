/*
 * store.c: the only writer of vramtrace databases.
 *
 * A store is one open SQLite database in WAL mode with its insert
 * statements prepared once.  Writes go into one long transaction that
 * store_commit() ends (the collector commits on its flush timer; importers
 * commit at the end), so rows cost no fsync each.  Allocations wait in the
 * live table (store-live.c) until they are freed or the transaction
 * commits.  A run starts with store_run_begin() and is marked complete by
 * store_run_finish(), which also builds the secondary indexes: until then a
 * reader sees complete = 0.
 *
 * With STORE_ATOMIC the database is written under a temporary name in the
 * same directory and renamed over the real name by store_close(), so a
 * failed import never leaves a file that looks complete.
 */
#include "config.h"

#include "store-int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Commit on our own after this many statements, to bound the WAL. */
#define STORE_AUTOCOMMIT	(1u << 21)


static const char *stmt_sql[STMT_MAX] = {
	[STMT_ALLOC] = "INSERT INTO allocations(run_id, process_id, device,"
	    " stream, layer, address, bytes, requested_bytes, alloc_ns,"
	    " free_requested_ns, free_ns, alloc_step, free_step, site_id,"
	    " correlation_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9,"
	    " ?10, ?11, ?12, ?13, ?14, ?15)",
	[STMT_FREE_UPDATE] = "UPDATE allocations SET free_requested_ns = ?2,"
	    " free_ns = ?3, free_step = ?4 WHERE id = ?1",
	[STMT_MEMCPY] = "INSERT INTO memcpys(run_id, process_id, device,"
	    " stream, kind, bytes, src_device, dst_device, start_ns, end_ns,"
	    " correlation_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10,"
	    " ?11)",
	[STMT_OFFLOAD] = "INSERT INTO offload_events(run_id, process_id,"
	    " device, stream, time_ns, step, kind, tensor_id, storage_key,"
	    " generation, bytes) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9,"
	    " ?10, ?11)",
	[STMT_STREAM_CREATE] = "INSERT INTO streams(run_id, process_id,"
	    " device, stream, handle, context, priority, flags, created_ns)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
	[STMT_STREAM_DESTROY] = "UPDATE streams SET destroyed_ns = ?4"
	    " WHERE id = (SELECT max(id) FROM streams WHERE run_id = ?1"
	    " AND process_id IS ?2 AND stream = ?3 AND destroyed_ns IS NULL)",
	[STMT_STREAM_DESTROY_INSERT] = "INSERT INTO streams(run_id,"
	    " process_id, device, stream, handle, context, destroyed_ns)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
	[STMT_STEP] = "INSERT OR IGNORE INTO steps(run_id, step, start_ns,"
	    " end_ns, name) VALUES (?1, ?2, ?3, ?4, ?5)",
	[STMT_MARK] = "INSERT INTO marks(run_id, process_id, device, time_ns,"
	    " stage, name) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
	[STMT_DROPPED] = "INSERT INTO dropped_records(run_id, process_id,"
	    " time_ns, source, count) VALUES (?1, ?2, ?3, ?4, ?5)",
	[STMT_DEVICE] = "INSERT INTO devices(run_id, process_id, device, name,"
	    " total_bytes) VALUES (?1, ?2, ?3, ?4, ?5)",
	[STMT_PROCESS] = "INSERT INTO processes(run_id, pid, rank, local_rank,"
	    " host, command, allocator, start_ns) VALUES (?1, ?2, ?3, ?4, ?5,"
	    " ?6, ?7, ?8)",
	[STMT_PROCESS_END] = "UPDATE processes SET end_ns = ?2 WHERE id = ?1",
	[STMT_FRAME_INSERT] = "INSERT OR IGNORE INTO frames(name, filename,"
	    " line) VALUES (?1, ?2, ?3)",
	[STMT_FRAME_FIND] = "SELECT id FROM frames WHERE name = ?1 AND"
	    " filename = ?2 AND line = ?3",
	[STMT_SITE_INSERT] = "INSERT INTO sites(hash, depth, label)"
	    " VALUES (?1, ?2, ?3) ON CONFLICT(hash) DO NOTHING",
	[STMT_SITE_FIND] = "SELECT id FROM sites WHERE hash = ?1",
	[STMT_SITE_FRAME] = "INSERT INTO site_frames(site_id, depth, frame_id)"
	    " VALUES (?1, ?2, ?3)",
	[STMT_SITE_KIND] = "UPDATE sites SET kind = ?2 WHERE id = ?1 AND"
	    " kind IS NULL",
	[STMT_USAGE] = "INSERT INTO usage_samples(run_id, device, time_ns,"
	    " used_bytes) VALUES (?1, ?2, ?3, ?4)",
};

/* Run SQL text with no results inside the store.  0, or -1 with *cause. */
int
store_exec(struct store *s, const char *sql, char **cause)
{
	if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return (store_sql_error(s, cause, "SQL failed:"));
	return (0);
}

/* The open database handle (a sqlite3 *), for the importer's own tables. */
void *
store_db(struct store *s)
{
	return (s->db);
}

static int
store_check_schema(struct store *s, char **cause)
{
	sqlite3_stmt	*st;
	int		 rc, version;

	rc = sqlite3_prepare_v2(s->db,
	    "SELECT value FROM meta WHERE key = 'schema_version'", -1, &st,
	    NULL);
	if (rc == SQLITE_NOTADB)
		return (store_sql_error(s, cause, "not a vramtrace database "
		    "(not an SQLite file)"));
	if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED)
		return (store_sql_error(s, cause, "database is locked by another "
		    "program"));
	if (rc != SQLITE_OK)
		return (store_sql_error(s, cause, "not a vramtrace database "
		    "(no meta table)"));
	rc = sqlite3_step(st);
	version = rc == SQLITE_ROW ? sqlite3_column_int(st, 0) : -1;
	sqlite3_finalize(st);
	if (version < 1)
		return (store_sql_error(s, cause, "not a vramtrace database "
		    "(no schema version)"));
	if (version > STORE_SCHEMA_VERSION)
		return (store_sql_error(s, cause, "schema version %d is newer "
		    "than this vramtrace understands (%d)", version,
		    STORE_SCHEMA_VERSION));
	return (0);
}

/*
 * Columns added to schema version 1 since it was first written, added to
 * a file made before them when it is opened for writing: sites.kind.  0,
 * or -1 with *cause.
 */
static int
store_add_columns(struct store *s, char **cause)
{
	sqlite3_stmt	*st;
	int		 have;

	if (sqlite3_prepare_v2(s->db, "SELECT 1 FROM pragma_table_info("
	    "'sites') WHERE name = 'kind'", -1, &st, NULL) != SQLITE_OK)
		return (store_sql_error(s, cause, "cannot read the schema:"));
	have = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	if (have)
		return (0);
	if (sqlite3_exec(s->db, "ALTER TABLE sites ADD COLUMN kind TEXT",
	    NULL, NULL, NULL) != SQLITE_OK)
		return (store_sql_error(s, cause, "cannot add sites.kind:"));
	return (0);
}

static int
store_create_schema(struct store *s, char **cause)
{
	char	*sql;
	int	 rc;

	xasprintf(&sql, "BEGIN;\n%s"
	    "INSERT INTO meta VALUES ('schema_version', '%d');\n"
	    "INSERT INTO meta VALUES ('created_by', 'vramtrace %s');\n"
	    "COMMIT;", store_schema_sql, STORE_SCHEMA_VERSION,
	    PACKAGE_VERSION);
	rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
	free(sql);
	if (rc != SQLITE_OK)
		return (store_sql_error(s, cause, "cannot create the schema:"));
	return (0);
}

static int
store_prepare(struct store *s, char **cause)
{
	int	i;

	for (i = 0; i < STMT_MAX; i++) {
		if (sqlite3_prepare_v3(s->db, stmt_sql[i], -1,
		    SQLITE_PREPARE_PERSISTENT, &s->stmt[i], NULL) != SQLITE_OK)
			return (store_sql_error(s, cause,
			    "cannot prepare a statement:"));
	}
	return (0);
}

static void
remove_tmp(struct store *s)
{
	static const char	*suffix[] = { "", "-wal", "-shm", "-journal" };
	char			*p;
	size_t			 i;

	if (s->tmp_path == NULL)
		return;
	for (i = 0; i < sizeof suffix / sizeof suffix[0]; i++) {
		xasprintf(&p, "%s%s", s->tmp_path, suffix[i]);
		unlink(p);
		free(p);
	}
}

static void
store_free(struct store *s)
{
	int	i;

	for (i = 0; i < STMT_MAX; i++)
		sqlite3_finalize(s->stmt[i]);
	if (s->db != NULL)
		sqlite3_close(s->db);
	store_live_free(&s->live);
	store_groups_reset(&s->groups);
	store_top_reset(&s->top);
	store_idmap_free(&s->sites);
	store_idmap_free(&s->frames);
	store_steps_reset(s);
	free(s->tmp_path);
	free(s->path);
	free(s);
}

/*
 * Open a database for writing.  flags: STORE_CREATE makes a new database
 * (an existing file is an error), STORE_APPEND opens an existing vramtrace
 * database (or creates one if missing), STORE_ATOMIC (with STORE_CREATE)
 * writes a temporary file that store_close() renames into place.  Returns
 * the store, or NULL with *cause set ("PATH: what is wrong"); the file is
 * left untouched on error.
 */
struct store *
store_open(const char *path, int flags, char **cause)
{
	struct store	*s;
	struct stat	 sb;
	const char	*target = path;
	int		 exists, fd;

	s = xcalloc(1, sizeof *s);
	s->path = xstrdup(path);
	s->flags = flags;
	store_live_init(&s->live);
	exists = stat(path, &sb) == 0;
	if ((flags & STORE_CREATE) && exists) {
		store_sql_error(s, cause, "already exists (use --append to add a "
		    "run, or remove it)");
		goto fail;
	}
	if ((flags & STORE_APPEND) && exists && !S_ISREG(sb.st_mode)) {
		store_sql_error(s, cause, "not a regular file");
		goto fail;
	}
	if ((flags & STORE_ATOMIC) && !exists) {
		xasprintf(&s->tmp_path, "%s.tmp-XXXXXX", path);
		if ((fd = util_mkstemp(s->tmp_path)) == -1) {
			*cause = xstrerror_cause("%s: cannot create a "
			    "temporary file", path);
			goto fail;
		}
		close(fd);
		target = s->tmp_path;
	}
	if (sqlite3_open_v2(target, &s->db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		store_sql_error(s, cause, "cannot open:");
		goto fail;
	}
	sqlite3_busy_timeout(s->db, 0);
	if (exists) {
		if (store_check_schema(s, cause) != 0 ||
		    store_add_columns(s, cause) != 0)
			goto fail;
	}
	if (sqlite3_exec(s->db, "PRAGMA journal_mode = WAL;"
	    "PRAGMA synchronous = NORMAL; PRAGMA cache_size = -65536;"
	    "PRAGMA temp_store = MEMORY; PRAGMA threads = 2;", NULL, NULL,
	    NULL) != SQLITE_OK) {
		store_sql_error(s, cause, sqlite3_errcode(s->db) == SQLITE_BUSY ?
		    "database is locked by another program" :
		    "cannot set up the database:");
		goto fail;
	}
	if (!exists && store_create_schema(s, cause) != 0)
		goto fail;
	if (store_prepare(s, cause) != 0)
		goto fail;
	return (s);

fail:
	if (s->db != NULL) {
		sqlite3_close(s->db);
		s->db = NULL;
	}
	remove_tmp(s);
	store_free(s);
	return (NULL);
}

/* The id of the run being written, or 0 before store_run_begin(). */
int64_t
store_run_id(struct store *s)
{
	return (s->run_id);
}

/*
 * Start a new run and return its id (> 0), or -1.  Fields of info that are
 * NULL are stored as NULL, except host (this host) and start (now).
 */
int64_t
store_run_begin(struct store *s, const struct store_run_info *info)
{
	sqlite3_stmt	*st;
	char		 host[256];
	int		 rc;

	if (store_sql_begin(s, NULL) != 0)
		return (-1);
	if (sqlite3_prepare_v2(s->db, "INSERT INTO runs(source, input,"
	    " command, host, cwd, git_commit, allocator, step_source, version,"
	    " start_ns) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", -1, &st,
	    NULL) != SQLITE_OK)
		return (-1);
	if (info->host == NULL && gethostname(host, sizeof host) == 0)
		host[sizeof host - 1] = '\0';
	else
		snprintf(host, sizeof host, "%s",
		    info->host != NULL ? info->host : "");
	store_sql_bind_text(st, 1, info->source);
	store_sql_bind_text(st, 2, info->input);
	store_sql_bind_text(st, 3, info->command);
	store_sql_bind_text(st, 4, host);
	store_sql_bind_text(st, 5, info->cwd);
	store_sql_bind_text(st, 6, info->git_commit);
	store_sql_bind_text(st, 7, info->allocator);
	store_sql_bind_text(st, 8, info->step_source);
	store_sql_bind_text(st, 9, PACKAGE_VERSION);
	sqlite3_bind_int64(st, 10, (int64_t)(info->start_ns != 0 ?
	    info->start_ns : lib_now_ns()));
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return (-1);
	s->run_id = sqlite3_last_insert_rowid(s->db);
	store_steps_reset(s);
	s->unstepped = 0;
	store_groups_reset(&s->groups);
	store_top_reset(&s->top);
	return (s->run_id);
}

/* Add a named instant or annotation (stage "START", "END" or NULL). */
int
store_add_mark(struct store *s, int64_t process_id, int32_t device,
    uint64_t time_ns, const char *stage, const char *name)
{
	sqlite3_stmt	*st = s->stmt[STMT_MARK];

	if (store_sql_begin(s, NULL) != 0)
		return (-1);
	sqlite3_bind_int64(st, 1, s->run_id);
	store_sql_bind_id(st, 2, process_id);
	sqlite3_bind_int(st, 3, device);
	store_sql_bind_opt(st, 4, time_ns);
	store_sql_bind_text(st, 5, stage);
	store_sql_bind_text(st, 6, name);
	return (store_sql_step(s, st));
}

/*
 * Add a stream of the current run, created at created_ns (EVENT_NONE:
 * unknown).  Its priority and flags are stored only when `detailed` (an
 * importer knows neither).  0, or -1.
 */
int
store_add_stream(struct store *s, int64_t process_id,
    const struct event_stream *es, int detailed, uint64_t created_ns)
{
	sqlite3_stmt	*st = s->stmt[STMT_STREAM_CREATE];

	if (store_sql_begin(s, NULL) != 0)
		return (-1);
	sqlite3_bind_int64(st, 1, s->run_id);
	store_sql_bind_id(st, 2, process_id);
	sqlite3_bind_int(st, 3, es->device);
	sqlite3_bind_int64(st, 4, (int64_t)es->stream);
	store_sql_bind_opt(st, 5, es->handle);
	store_sql_bind_opt(st, 6, es->context);
	if (detailed) {
		sqlite3_bind_int(st, 7, es->priority);
		sqlite3_bind_int64(st, 8, es->flags);
	}
	store_sql_bind_opt(st, 9, created_ns);
	return (store_sql_step(s, st));
}

/*
 * The stream es of the current run was destroyed at destroyed_ns: its
 * newest open lifetime ends, or, if it was created before tracing began, a
 * lifetime with only an end is added.  0, or -1.
 */
int
store_end_stream(struct store *s, int64_t process_id,
    const struct event_stream *es, uint64_t destroyed_ns)
{
	sqlite3_stmt	*st = s->stmt[STMT_STREAM_DESTROY];

	if (store_sql_begin(s, NULL) != 0)
		return (-1);
	sqlite3_bind_int64(st, 1, s->run_id);
	store_sql_bind_id(st, 2, process_id);
	sqlite3_bind_int64(st, 3, (int64_t)es->stream);
	sqlite3_bind_int64(st, 4, (int64_t)destroyed_ns);
	if (store_sql_step(s, st) != 0)
		return (-1);
	if (sqlite3_changes(s->db) > 0)
		return (0);
	st = s->stmt[STMT_STREAM_DESTROY_INSERT];
	sqlite3_bind_int64(st, 1, s->run_id);
	store_sql_bind_id(st, 2, process_id);
	sqlite3_bind_int(st, 3, es->device);
	sqlite3_bind_int64(st, 4, (int64_t)es->stream);
	store_sql_bind_opt(st, 5, es->handle);
	store_sql_bind_opt(st, 6, es->context);
	sqlite3_bind_int64(st, 7, (int64_t)destroyed_ns);
	return (store_sql_step(s, st));
}

/*
 * Add a sample of the device memory the run's process used on device at
 * time_ns (attach, which sees totals only).  0, or -1.
 */
int
store_add_usage(struct store *s, int32_t device, uint64_t time_ns,
    uint64_t used_bytes)
{
	sqlite3_stmt	*st = s->stmt[STMT_USAGE];

	if (store_sql_begin(s, NULL) != 0)
		return (-1);
	sqlite3_bind_int64(st, 1, s->run_id);
	sqlite3_bind_int(st, 2, device);
	sqlite3_bind_int64(st, 3, (int64_t)time_ns);
	sqlite3_bind_int64(st, 4, (int64_t)used_bytes);
	return (store_sql_step(s, st));
}

static int
insert_allocation(struct store *s, const struct store_allocation *a,
    int64_t *rowid)
{
	sqlite3_stmt	*st = s->stmt[STMT_ALLOC];
	int64_t		 id;

	sqlite3_bind_int64(st, 1, s->run_id);
	store_sql_bind_id(st, 2, a->process_id);
	sqlite3_bind_int(st, 3, a->device);
	store_sql_bind_opt(st, 4, a->stream);
	sqlite3_bind_int(st, 5, a->layer);
	sqlite3_bind_int64(st, 6, (int64_t)a->address);
	sqlite3_bind_int64(st, 7, (int64_t)a->bytes);
	store_sql_bind_opt(st, 8, a->requested);
	store_sql_bind_opt(st, 9, a->alloc_ns);
	store_sql_bind_opt(st, 10, a->free_requested_ns);
	store_sql_bind_opt(st, 11, a->free_ns);
	if (store_has_steps(s, a->process_id)) {
		sqlite3_bind_int64(st, 12, store_step_of(s, a->process_id,
		    a->alloc_ns));
		if (a->free_ns != EVENT_NONE)
			sqlite3_bind_int64(st, 13,
			    store_step_of(s, a->process_id, a->free_ns));
	} else
		s->unstepped = 1;
	if (a->site_id != 0)
		sqlite3_bind_int64(st, 14, a->site_id);
	store_sql_bind_opt(st, 15, a->correlation);
	if (store_sql_step(s, st) != 0)
		return (-1);
	id = sqlite3_last_insert_rowid(s->db);
	store_top_note(&s->top, id, a);
	if (rowid != NULL)
		*rowid = id;
	if (a->free_ns != EVENT_NONE)
		store_groups_note(s, a);
	return (0);
}

/*
 * Add one complete allocation row (importers, and the writer itself):
 * alloc, free-requested and free times as known.  0, or -1.
 */
int
store_add_allocation(struct store *s, const struct store_allocation *a)
{
	if (store_sql_begin(s, NULL) != 0)
		return (-1);
	return (insert_allocation(s, a, NULL));
}

/*
 * Complete live entry e with its free times, writing or updating its row,
 * and drop it from the live table.  0, or -1.
 */
static int
live_end(struct store *s, struct store_live_entry *e,
    uint64_t free_requested_ns, uint64_t free_ns)
{
	sqlite3_stmt	*st = s->stmt[STMT_FREE_UPDATE];
	int		 rc;

	if (store_sql_begin(s, NULL) != 0)
		return (-1);
	e->a.free_requested_ns = free_requested_ns;
	e->a.free_ns = free_ns;
	if (e->rowid == 0)
		rc = insert_allocation(s, &e->a, NULL);
	else {
		sqlite3_bind_int64(st, 1, e->rowid);
		store_sql_bind_opt(st, 2, free_requested_ns);
		store_sql_bind_opt(st, 3, free_ns);
		if (store_has_steps(s, e->a.process_id))
			sqlite3_bind_int64(st, 4, store_step_of(s,
			    e->a.process_id, free_ns));
		else
			s->unstepped = 1;
		rc = store_sql_step(s, st);
		store_groups_note(s, &e->a);
	}
	store_live_remove(&s->live, e);
	return (rc);
}

/*
 * An allocation became live: it waits in the live table until it is freed
 * or the transaction commits.  If the address is live already, its free
 * was lost (dropped records, or a ring buffer that wrapped): the old
 * allocation ends where the new one starts.  0, or -1.
 */
int
store_alloc_begin(struct store *s, const struct store_allocation *a)
{
	struct store_live_entry	*e;
	int			 dup;

	if (store_sql_begin(s, NULL) != 0)
		return (-1);
	e = store_live_add(&s->live, a, &dup);
	if (!dup)
		return (0);
	if (live_end(s, e, a->alloc_ns, a->alloc_ns) != 0)
		return (-1);
	store_live_add(&s->live, a, &dup);
	return (0);
}

/*
 * The program freed the live allocation at (device, layer, address) at
 * time t, but the memory is not reusable yet (another stream still uses
 * it).  Returns 0, 1 if no such allocation is live.
 */
int
store_alloc_free_requested(struct store *s, int32_t device, int layer,
    uint64_t address, uint64_t t)
{
	struct store_live_entry	*e;

	if ((e = store_live_find(&s->live, address, device, layer)) == NULL)
		return (1);
	e->a.free_requested_ns = t;
	return (0);
}

/*
 * The live allocation at (device, layer, address) ended: freed at
 * free_requested_ns (EVENT_NONE: when free_requested() said, or at
 * free_ns), reusable at free_ns.  Writes or updates its row.  Returns 0, 1
 * if no such allocation is live, -1 on a database error.
 */
int
store_alloc_end(struct store *s, int32_t device, int layer,
    uint64_t address, uint64_t free_requested_ns, uint64_t free_ns)
{
	struct store_live_entry	*e;

	if ((e = store_live_find(&s->live, address, device, layer)) == NULL)
		return (1);
	if (free_requested_ns == EVENT_NONE)
		free_requested_ns = e->a.free_requested_ns != EVENT_NONE ?
		    e->a.free_requested_ns : free_ns;
	return (live_end(s, e, free_requested_ns, free_ns) != 0 ? -1 : 0);
}

/* Is an allocation live at (device, layer, address)? */
int
store_alloc_is_live(struct store *s, int32_t device, int layer,
    uint64_t address)
{
	return (store_live_find(&s->live, address, device, layer) != NULL);
}

static int
flush_live_one(struct store_live_entry *e, void *arg)
{
	struct store	*s = arg;

	if (e->rowid != 0)
		return (0);
	return (insert_allocation(s, &e->a, &e->rowid));
}

/*
 * Commit the open transaction, writing live allocations first so that a
 * reader (or a crash) sees them.  0, or -1 with *cause.
 */
int
store_commit(struct store *s, char **cause)
{
	if (!s->in_txn)
		return (0);
	if (store_live_each(&s->live, flush_live_one, s) != 0)
		return (store_sql_error(s, cause, "cannot write allocations:"));
	if (sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		return (store_sql_error(s, cause, "cannot commit:"));
	s->in_txn = 0;
	s->writes = 0;
	return (0);
}

/* Commit when the transaction has grown large; for the writers' loops. */
int
store_maybe_commit(struct store *s, char **cause)
{
	if (s->writes < STORE_AUTOCOMMIT)
		return (0);
	return (store_commit(s, cause));
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
	sqlite3_result_int64(ctx, store_step_of(s,
	    sqlite3_value_int64(argv[0]),
	    (uint64_t)sqlite3_value_int64(argv[1])));
}

static int
assign_steps(struct store *s, const char *alloc_sql, const char *offload_sql,
    char **cause)
{
	const char	*sql[2] = { alloc_sql, offload_sql };
	sqlite3_stmt	*st;
	size_t		 i;
	int		 rc;

	if (s->run_steps.n == 0)
		return (0);
	if (store_sql_begin(s, cause) != 0)
		return (-1);
	sqlite3_create_function(s->db, "vt_step_of", 2, SQLITE_UTF8, s,
	    step_of_fn, NULL, NULL);
	for (i = 0; i < 2; i++) {
		if (sqlite3_prepare_v2(s->db, sql[i], -1, &st, NULL) !=
		    SQLITE_OK)
			return (store_sql_error(s, cause, "cannot assign steps:"));
		sqlite3_bind_int64(st, 1, s->run_id);
		rc = sqlite3_step(st);
		sqlite3_finalize(st);
		if (rc != SQLITE_DONE)
			return (store_sql_error(s, cause, "cannot assign steps:"));
	}
	return (0);
}

/*
 * Give every allocation of the current run its alloc and free step from the
 * steps known now (importers call this once all markers are in; the writer
 * calls it when a marker came late).  0, or -1 with *cause.
 */
int
store_assign_steps(struct store *s, char **cause)
{
	if (assign_steps(s, "UPDATE allocations SET"
	    " alloc_step = vt_step_of(coalesce(process_id, 0), alloc_ns), free_step = CASE WHEN"
	    " free_ns IS NULL THEN NULL ELSE vt_step_of(coalesce(process_id, 0), free_ns) END"
	    " WHERE run_id = ?", "UPDATE offload_events SET"
	    " step = vt_step_of(coalesce(process_id, 0), time_ns) WHERE run_id = ?", cause) != 0)
		return (-1);
	s->steps_dirty = 0;
	s->unstepped = 0;
	s->groups.valid = 0;	/* steps changed: regroup at finish */
	return (0);
}

/*
 * At the first step boundary: give their steps to the rows written before
 * it (one step's worth at most, so this is cheap).  0, or -1.
 */
int
store_assign_unstepped(struct store *s)
{
	if (assign_steps(s, "UPDATE allocations SET"
	    " alloc_step = vt_step_of(coalesce(process_id, 0), alloc_ns), free_step = CASE WHEN"
	    " free_ns IS NULL THEN NULL ELSE vt_step_of(coalesce(process_id, 0), free_ns) END"
	    " WHERE run_id = ?1 AND (alloc_step IS NULL OR (free_step IS NULL"
	    " AND free_ns IS NOT NULL))", "UPDATE offload_events SET"
	    " step = vt_step_of(coalesce(process_id, 0), time_ns) WHERE run_id = ?1 AND step IS NULL",
	    NULL) != 0)
		return (-1);
	s->unstepped = 0;
	store_groups_flush_pending(s);
	return (0);
}

/* A live entry at the end of the run is final: count it in its group. */
static int
note_live_one(struct store_live_entry *e, void *arg)
{
	store_groups_note(arg, &e->a);
	return (0);
}

/*
 * Finish the current run: write what is still live (never freed), fix step
 * numbers if markers came late, record the exit status (-1: unknown) and
 * end time (0: now), mark the run complete and build the indexes.  0, or -1
 * with *cause.
 */
int
store_run_finish(struct store *s, int exit_status, uint64_t end_ns,
    char **cause)
{
	sqlite3_stmt	*st;
	int		 rc;

	if (store_sql_begin(s, cause) != 0)
		return (-1);
	store_live_each(&s->live, note_live_one, s);
	if (store_live_each(&s->live, flush_live_one, s) != 0)
		return (store_sql_error(s, cause, "cannot write allocations:"));
	store_live_free(&s->live);
	store_live_init(&s->live);
	if (s->steps_dirty && store_assign_steps(s, cause) != 0)
		return (-1);
	if (store_groups_write(s, cause) != 0 || store_top_write(s, cause) != 0)
		return (-1);
	if (sqlite3_prepare_v2(s->db, "UPDATE runs SET end_ns = ?,"
	    " exit_status = ?, complete = 1 WHERE id = ?", -1, &st, NULL)
	    != SQLITE_OK)
		return (store_sql_error(s, cause, "cannot finish the run:"));
	sqlite3_bind_int64(st, 1, (int64_t)(end_ns != 0 ? end_ns :
	    lib_now_ns()));
	if (exit_status >= 0)
		sqlite3_bind_int(st, 2, exit_status);
	sqlite3_bind_int64(st, 3, s->run_id);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return (store_sql_error(s, cause, "cannot finish the run:"));
	if (sqlite3_exec(s->db, store_index_sql, NULL, NULL, NULL) !=
	    SQLITE_OK)
		return (store_sql_error(s, cause, "cannot build the indexes:"));
	return (store_commit(s, cause));
}

/*
 * Commit, checkpoint and close; with STORE_ATOMIC rename the temporary
 * file into place.  The store is freed whatever happens.  0, or -1 with
 * *cause (the temporary file is removed then).
 */
int
store_close(struct store *s, char **cause)
{
	int	rc = 0, i;

	if (store_commit(s, cause) != 0)
		rc = -1;
	for (i = 0; i < STMT_MAX; i++) {
		sqlite3_finalize(s->stmt[i]);
		s->stmt[i] = NULL;
	}
	if (rc == 0 && s->tmp_path != NULL &&
	    sqlite3_exec(s->db, "PRAGMA journal_mode = DELETE", NULL, NULL,
	    NULL) != SQLITE_OK)
		rc = store_sql_error(s, cause, "cannot checkpoint:");
	if (sqlite3_close(s->db) != SQLITE_OK && rc == 0)
		rc = store_sql_error(s, cause, "cannot close:");
	s->db = NULL;
	if (s->tmp_path != NULL) {
		if (rc == 0 && rename(s->tmp_path, s->path) != 0) {
			*cause = xstrerror_cause("%s: cannot rename %s",
			    s->path, s->tmp_path);
			rc = -1;
		}
		if (rc != 0)
			remove_tmp(s);
	}
	store_free(s);
	return (rc);
}

/*
 * Give up: roll back what is not committed, close, and remove the
 * temporary file of an atomic store.  For error paths.
 */
void
store_abort(struct store *s)
{
	int	i;

	for (i = 0; i < STMT_MAX; i++) {
		sqlite3_finalize(s->stmt[i]);
		s->stmt[i] = NULL;
	}
	if (s->in_txn)
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	sqlite3_close(s->db);
	s->db = NULL;
	remove_tmp(s);
	store_free(s);
}
