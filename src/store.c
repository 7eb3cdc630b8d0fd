/*
 * store.c: a vramtrace database open for writing, from store_open() to
 * store_close(): its schema, its runs and its transaction.  The store
 * family (store*.c) is the only writer of vramtrace databases; the rows
 * of a run are written by store-rows.c, HACKING.md has the family's map.
 *
 * A store is one open SQLite database in WAL mode with its insert
 * statements prepared once, when it opens.  Writes go into one long
 * transaction that store_commit() ends (the collector commits on its flush
 * timer; importers commit at the end), so rows cost no fsync each.
 * Allocations wait in the live table (store-live.c) until they are freed
 * or the transaction commits.  A run starts with store_run_begin() and is
 * marked complete by store_run_finish(), which also builds the secondary
 * indexes: until then a reader sees complete = 0.
 *
 * With STORE_ATOMIC a run is added whole or not at all: a new database is
 * written under a temporary name in the same directory and renamed over
 * the real name by store_close(), so a failed import never leaves a file
 * that looks complete; an existing one gets the run in one transaction
 * (no automatic commits: SQLite spills what its cache cannot hold into
 * the WAL, or the rollback journal, and a failure rolls it all back) and
 * keeps its journal mode, so that a failed append leaves it byte for byte
 * as it was.  store-atomic.c makes the temporary file and handles the
 * signals that stop such a store.
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

/*
 * Every store's cache (KiB); temporary tables and sorts (the indexes built
 * when a run finishes) go to files, so that memory does not grow with the
 * run.  Sorts use two helper threads, except in a bulk load (an import):
 * each helper holds a sorted batch of up to the cache's size in memory,
 * which took an import of 1 GB from 160 MB to 290 MB, and the helpers
 * cost more CPU time than they save wall-clock time.
 */
#define STORE_PRAGMAS	" PRAGMA cache_size = -65536;" \
	" PRAGMA temp_store = FILE;"
#define STORE_THREADS	" PRAGMA threads = 2;"
#define STORE_THREADS_BULK " PRAGMA threads = 0;"

static int
store_check_schema(struct store *s, char **cause)
{
	char	*why;
	int	 version;

	if (store_schema_check(s->db, "main", &version, &why) == 0)
		return (0);
	store_sql_error(s, cause, "%s", why);
	free(why);
	return (-1);
}

/*
 * What was added to schema version 1 since it was first written, added to
 * a file made before it when it is opened for writing: the columns
 * sites.kind and processes.job, the offload check's tables and
 * allocation_steps; and the view garbage_stream_blocks made again (fixed
 * for runs without steps).  0, or -1 with *cause.
 */
static int
store_add_missing(struct store *s, char **cause)
{
	static const struct {
		const char	*table, *column, *type;
	} added[] = {
		{ "sites", "kind", "TEXT" },
		{ "sites", "name", "TEXT" },
		{ "processes", "job", "TEXT" },
	};
	char	*sql;
	size_t	 i;
	int	 have, rc;

	for (i = 0; i < sizeof added / sizeof added[0]; i++) {
		if ((have = store_sql_has_column(s, "main", added[i].table,
		    added[i].column, cause)) < 0)
			return (-1);
		if (have)
			continue;
		xasprintf(&sql, "ALTER TABLE %s ADD COLUMN %s %s",
		    added[i].table, added[i].column, added[i].type);
		rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
		free(sql);
		if (rc != SQLITE_OK)
			return (store_sql_error(s, cause, "cannot add %s.%s:",
			    added[i].table, added[i].column));
	}
	if (sqlite3_exec(s->db, store_schema_check_sql, NULL, NULL, NULL) !=
	    SQLITE_OK)
		return (store_sql_error(s, cause, "cannot add the offload"
		    " check's tables:"));
	if (sqlite3_exec(s->db, store_schema_steps_sql, NULL, NULL, NULL) !=
	    SQLITE_OK)
		return (store_sql_error(s, cause, "cannot add"
		    " allocation_steps:"));
	if (sqlite3_exec(s->db, store_schema_views_sql, NULL, NULL, NULL) !=
	    SQLITE_OK)
		return (store_sql_error(s, cause, "cannot make the view"
		    " garbage_stream_blocks again:"));
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
	rc = store_sql_exec(s, sql, "cannot create the schema", cause);
	free(sql);
	return (rc);
}

static void
store_free(struct store *s)
{
	int	i;

	for (i = 0; i < STMT_MAX; i++)
		sqlite3_finalize(s->stmt[i]);
	if (s->db != NULL)
		sqlite3_close(s->db);
	store_atomic_forget(s);
	store_atomic_release(s);
	store_live_free(&s->live);
	store_pending_free(&s->pending);
	store_groups_reset(&s->groups);
	store_alloc_steps_reset(&s->step_sums);
	store_top_reset(&s->top);
	store_idmap_free(&s->sites);
	store_idmap_free(&s->frames);
	store_steps_reset(&s->steps);
	free(s->tmp_path);
	free(s->path);
	free(s);
}

/*
 * The settings of a store's connection.  An append that must leave the
 * file as it was on failure keeps its journal mode; a bulk load into a
 * temporary file (removed on any failure, renamed only when whole and
 * synced: store_close) needs no journal at all, so every page is written
 * once; everything else is written in WAL mode.  A bulk load sorts
 * without helper threads.
 */
static const char *
store_pragmas(const struct store *s)
{
	int	bulk = (s->flags & STORE_BULK) != 0;

	if (s->one_txn)
		return (bulk ? "PRAGMA synchronous = NORMAL;" STORE_PRAGMAS
		    STORE_THREADS_BULK : "PRAGMA synchronous = NORMAL;"
		    STORE_PRAGMAS STORE_THREADS);
	if (s->tmp_path != NULL && bulk)
		return ("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;"
		    STORE_PRAGMAS STORE_THREADS_BULK);
	return ("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"
	    STORE_PRAGMAS STORE_THREADS);
}

/*
 * Open a database for writing.  flags: STORE_CREATE makes a new database
 * (an existing file is an error), STORE_APPEND opens an existing vramtrace
 * database (or creates one if missing), STORE_ATOMIC adds the run whole or
 * not at all (see the top of the file).  Returns the store, or NULL with
 * *cause set ("PATH: what is wrong"); the file is left untouched on error.
 * A signal that interrupted an atomic store's opening ends the process by
 * that signal, as store_abort() does, instead of an error that misnames it.
 */
struct store *
store_open(const char *path, int flags, char **cause)
{
	struct store	*s;
	struct stat	 sb;
	const char	*target = path;
	int		 exists;

	s = xcalloc(1, sizeof *s);
	s->path = xstrdup(path);
	s->flags = flags;
	s->tmp_fd = -1;
	store_live_init(&s->live);
	s->pending.fd = -1;
	s->groups.spill_fd = -1;
	if (*path == '\0') {
		store_sql_error(s, cause, "an empty file name");
		goto fail;
	}
	exists = stat(path, &sb) == 0;
	if ((flags & STORE_CREATE) && exists) {
		store_sql_error(s, cause, "already exists (use --append to add "
		    "a run, or remove it)");
		goto fail;
	}
	if ((flags & STORE_APPEND) && exists && !S_ISREG(sb.st_mode)) {
		store_sql_error(s, cause, "not a regular file");
		goto fail;
	}
	if ((flags & STORE_ATOMIC) && !exists) {
		if (store_atomic_create(s, cause) != 0)
			goto fail;
		store_atomic_watch(s);
		target = s->tmp_path;
	}
	s->one_txn = (flags & STORE_ATOMIC) && exists;
	if (store_sql_open(s, target, cause) != 0)
		goto fail;
	if (s->one_txn)
		store_atomic_watch(s);
	if (exists && store_check_schema(s, cause) != 0)
		goto fail;
	if (sqlite3_exec(s->db, store_pragmas(s), NULL, NULL, NULL) !=
	    SQLITE_OK) {
		store_sql_error(s, cause,
		    sqlite3_errcode(s->db) == SQLITE_BUSY ?
		    "database is locked by another program" :
		    "cannot set up the database:");
		goto fail;
	}
	/* An atomic append upgrades an older file inside its one
	 * transaction: a failed run leaves the file as it was. */
	if (exists && ((s->one_txn && store_sql_begin(s, cause) != 0) ||
	    store_add_missing(s, cause) != 0))
		goto fail;
	if (!exists && store_create_schema(s, cause) != 0)
		goto fail;
	if (store_rows_prepare(s, cause) != 0 ||
	    store_site_prepare(s, cause) != 0 ||
	    store_snapshot_prepare(s, cause) != 0)
		goto fail;
	return (s);

fail:
	if (s->db != NULL) {
		sqlite3_close(s->db);
		s->db = NULL;
	}
	store_atomic_remove(s);
	store_free(s);
	store_atomic_reraise();	/* a signal that interrupted the opening */
	return (NULL);
}

/*
 * Whether writing to the database failed (SQLite refused a statement), as
 * opposed to an error of what was being written: a caller tells a bad
 * output from a bad input by it.  s may be NULL: a store that did not open
 * failed.
 */
int
store_failed(const struct store *s)
{
	return (s == NULL || s->failed);
}

/* The id of the run being written, or 0 before store_run_begin(). */
int64_t
store_run_id(struct store *s)
{
	return (s->run_id);
}

/*
 * Start a new run, the one store_run_id() names from now on.  Fields of
 * info that are NULL are stored as NULL, except host (this host) and start
 * (now).  0, or -1 with *cause.
 */
int
store_run_begin(struct store *s, const struct store_run_info *info,
    char **cause)
{
	sqlite3_stmt	*st;
	char		 host[256];
	int		 rc;

	if (store_sql_begin(s, cause) != 0)
		return (-1);
	if (sqlite3_prepare_v2(s->db, "INSERT INTO runs(source, input,"
	    " command, host, cwd, git_commit, allocator, step_source, version,"
	    " start_ns) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", -1, &st,
	    NULL) != SQLITE_OK)
		return (store_sql_error(s, cause, "cannot start a run:"));
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
	if ((rc = sqlite3_step(st)) != SQLITE_DONE)
		store_sql_error(s, cause, "cannot start a run:");
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return (-1);
	s->run_id = sqlite3_last_insert_rowid(s->db);
	s->run_first_alloc = 0;
	s->source_bytes = 0;
	store_steps_reset(&s->steps);
	s->unstepped = 0;
	store_groups_reset(&s->groups);
	if (s->flags & STORE_BULK)
		s->groups.valid = 0;	/* steps come last: group at finish */
	store_alloc_steps_reset(&s->step_sums);
	store_top_reset(&s->top);
	return (0);
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
	if (store_rows_flush(s, cause) != 0)
		return (-1);
	if (store_sql_exec(s, "COMMIT", "cannot commit", cause) != 0)
		return (-1);
	s->in_txn = 0;
	s->writes = 0;
	s->committed = s->applied;
	return (0);
}

/*
 * How many events the sources of this store (store-source.c) applied that
 * a commit has made durable: what a recording that stops at a failure
 * keeps, to be told from what it received.
 */
uint64_t
store_events_committed(const struct store *s)
{
	return (s->committed);
}

/*
 * Commit when the transaction has grown large, for the writers' loops;
 * never in the one transaction of an atomic append, nor in a bulk load's
 * temporary file, which has no journal to bound and no reader.
 */
int
store_maybe_commit(struct store *s, char **cause)
{
	if (s->writes < STORE_AUTOCOMMIT || s->one_txn ||
	    (s->tmp_path != NULL && (s->flags & STORE_BULK)))
		return (0);
	return (store_commit(s, cause));
}

/*
 * Write the current run's exit status (-1: unknown), end time (0: now)
 * and whether it is complete, in the open transaction.  0, or -1 with
 * *cause.
 */
static int
store_run_set_end(struct store *s, int exit_status, uint64_t end_ns,
    int complete, char **cause)
{
	sqlite3_stmt	*st;
	int		 rc;

	if (sqlite3_prepare_v2(s->db, "UPDATE runs SET end_ns = ?,"
	    " exit_status = ?, complete = ? WHERE id = ?", -1, &st, NULL)
	    != SQLITE_OK)
		return (store_sql_error(s, cause, "cannot end the run:"));
	sqlite3_bind_int64(st, 1, (int64_t)(end_ns != 0 ? end_ns :
	    lib_now_ns()));
	if (exit_status >= 0)
		sqlite3_bind_int(st, 2, exit_status);
	sqlite3_bind_int(st, 3, complete);
	sqlite3_bind_int64(st, 4, s->run_id);
	if ((rc = sqlite3_step(st)) != SQLITE_DONE)
		store_sql_error(s, cause, "cannot end the run:");
	sqlite3_finalize(st);
	return (rc == SQLITE_DONE ? 0 : -1);
}

/*
 * Finish the current run: write what is still live (never freed), fix step
 * numbers if markers came late, record the exit status (-1: unknown) and
 * end time (0: now), write its summaries (allocation_groups, allocation_top,
 * allocation_steps), mark the run complete and build the indexes.  A run
 * that lacks events (complete 0: record turned processes away) is written
 * alike but gets no summaries and stays marked unfinished, so that no
 * reader takes it for the whole.  0, or -1 with *cause.
 */
int
store_run_finish(struct store *s, int exit_status, uint64_t end_ns,
    int complete, char **cause)
{
	if (store_sql_begin(s, cause) != 0)
		return (-1);
	if (store_rows_finish(s, cause) != 0)
		return (-1);
	store_groups_flush_pending(s);
	if (complete && ((s->groups.valid ? store_groups_write(s, cause) :
	    store_regroup(s, cause)) != 0 || store_top_write(s, cause) != 0 ||
	    store_alloc_steps_write_run(s, cause) != 0))
		return (-1);
	if (store_run_set_end(s, exit_status, end_ns, complete, cause) != 0)
		return (-1);
	if (store_sql_exec(s, store_schema_index_sql,
	    "cannot build the indexes", cause) != 0)
		return (-1);
	return (store_commit(s, cause));
}

/*
 * End the current run without finishing it, after a failure (of the
 * database, or of store_run_finish): roll back what is not committed and,
 * in a transaction of its own, record the exit status (-1: unknown) and
 * end time (0: now) of a run that stays marked unfinished, with no
 * summaries.  What was committed stays as it is (so not for a
 * STORE_ATOMIC store, which keeps a run whole or not at all).  0, or -1
 * with *cause; either way the store is then fit only for store_close() or
 * store_abort().
 */
int
store_run_end(struct store *s, int exit_status, uint64_t end_ns,
    char **cause)
{
	if (!sqlite3_get_autocommit(s->db))
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	s->in_txn = 0;
	s->writes = 0;
	if (store_sql_begin(s, cause) != 0 ||
	    store_run_set_end(s, exit_status, end_ns, 0, cause) != 0 ||
	    store_sql_exec(s, "COMMIT", "cannot commit", cause) != 0)
		return (-1);
	s->in_txn = 0;
	return (0);
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
	/* The temporary file is renamed alone: its log goes into it first.
	 * A new database stays in WAL mode when --append made it, as a
	 * record --append does. */
	if (rc == 0 && s->tmp_path != NULL && sqlite3_exec(s->db,
	    !(s->flags & STORE_APPEND) ? "PRAGMA journal_mode = DELETE" :
	    (s->flags & STORE_BULK) ? "PRAGMA journal_mode = WAL" :
	    "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL) != SQLITE_OK)
		rc = store_sql_error(s, cause, "cannot checkpoint:");
	if (rc != 0 && s->in_txn)
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	if (sqlite3_close(s->db) != SQLITE_OK && rc == 0)
		rc = store_sql_error(s, cause, "cannot close:");
	s->db = NULL;
	if (s->tmp_path != NULL) {
		/* A bulk load was written without syncs (store_pragmas): its
		 * file is on disk before it takes the name. */
		if (rc == 0 && (s->flags & STORE_BULK) &&
		    fsync(s->tmp_fd) != 0) {
			if (cause != NULL)
				*cause = xstrerror_cause("%s: cannot sync %s",
				    s->path, s->tmp_path);
			rc = -1;
		}
		if (rc == 0 && rename(s->tmp_path, s->path) != 0) {
			if (cause != NULL)
				*cause = xstrerror_cause("%s: cannot rename "
				    "%s", s->path, s->tmp_path);
			rc = -1;
		}
		if (rc != 0)
			store_atomic_remove(s);
	}
	store_free(s);
	if (rc != 0)
		store_atomic_reraise();
	return (rc);
}

/*
 * Give up: roll back what is not committed, close, and remove the
 * temporary file of an atomic store.  For error paths.  When a signal
 * interrupted an atomic store, the process then ends by that signal
 * (store-atomic.c).
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
	store_atomic_remove(s);
	store_free(s);
	store_atomic_reraise();
}
