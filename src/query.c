/*
 * query.c: the only reader of vramtrace databases.
 *
 * Every report, the TUI and the sql command ask their questions here; none
 * of them holds SQL.  A query handle is an SQLite connection that never
 * writes, whose schema version has been checked.  Each question is a
 * function that fills a plain struct or calls back once per row, so
 * callers never see SQLite types.  Larger families of questions live in
 * query-*.c files.
 *
 * Reading leaves nothing beside the database.  A database that record or
 * attach wrote is in WAL mode, which SQLite cannot read without its -wal
 * and -shm files: it makes them if they are missing, and only the last
 * connection to close removes them, holding an exclusive lock so that
 * they are never taken from a process still using them; a read-only
 * connection cannot take that lock, so it would leave them behind.  So:
 *
 *	with a -wal (or -journal) that is not empty beside it, someone writes
 *	the database now or left committed data in its log: a read-only
 *	connection reads through them, as SQLite's locking wants, and leaves
 *	them as found;
 *
 *	else the connection is opened for writing and made query_only (every
 *	write fails): it writes nothing to the log, so the log it shares with
 *	another reader stays empty, and the last of them to close, SQLite's
 *	own close, removes what they made.
 *
 * Neither immutable nor nolock is used: both read without locks, so a
 * record --append starting meanwhile could change pages under the reader
 * (SQLite's documents warn of wrong results and SQLITE_CORRUPT).  A file
 * the user may not write is opened read-only by SQLite, as before.
 */
#include "config.h"

#include "query-int.h"

#include <stdlib.h>
#include <string.h>

static int
query_error(struct query *q, char **cause, const char *what)
{
	if (cause != NULL)
		xasprintf(cause, "%s: %s", q->path, what);
	return (-1);
}

/*
 * Open q->db on path without writing to it (see the top of the file;
 * util_sqlite_read_mode decides, by a plain file name, never a URI).
 */
static int
query_connect(struct query *q, const char *path)
{
	const char	*mode = util_sqlite_read_mode(path);
	char		*uri = util_sqlite_uri(path, mode);
	int		 rc;

	/* One thread uses a connection: no mutex on every call. */
	rc = sqlite3_open_v2(uri, &q->db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, NULL);
	free(uri);
	if (rc != SQLITE_OK)
		return (-1);
	if (strcmp(mode, "mode=rw") == 0 && sqlite3_exec(q->db,
	    "PRAGMA query_only = 1", NULL, NULL, NULL) != SQLITE_OK)
		return (-1);
	return (0);
}

/*
 * Open a database for reading.  Returns the handle, or NULL with *cause
 * set when the file is missing, is not a vramtrace database, is of a newer
 * schema, or is locked.  The file is never changed, and no file is left
 * beside it that was not there.
 */
struct query *
query_open(const char *path, char **cause)
{
	struct query	*q;
	char		*why;

	q = xcalloc(1, sizeof *q);
	q->path = xstrdup(path);
	if (util_check_input(path, cause) != 0)
		goto fail;
	if (query_connect(q, path) != 0) {
		query_error(q, cause, "cannot open");
		goto fail;
	}
	sqlite3_busy_timeout(q->db, 2000);
	if (store_schema_check(q->db, "main", &q->schema_version,
	    &why) != 0) {
		query_error(q, cause, why);
		free(why);
		goto fail;
	}
	return (q);

fail:
	query_close(q);
	return (NULL);
}

/* Close a handle; NULL is fine. */
void
query_close(struct query *q)
{
	if (q == NULL)
		return;
	sqlite3_close(q->db);
	free(q->path);
	free(q);
}

/*
 * Prepare a statement or set *cause.  For query-*.c: returns NULL with
 * "PATH: what: SQLite's message".
 */
sqlite3_stmt *
query_prepare(struct query *q, const char *sql, char **cause)
{
	sqlite3_stmt	*st;

	if (sqlite3_prepare_v2(q->db, sql, -1, &st, NULL) != SQLITE_OK) {
		query_fail(q, cause);
		return (NULL);
	}
	return (st);
}

/*
 * Run a query that returns one integer, with ?1 bound to arg if it has a
 * ?1.  NULL, no row or an error give -1.
 */
int64_t
query_int_arg(struct query *q, const char *sql, int64_t arg)
{
	sqlite3_stmt	*st;
	int64_t		 v = -1;

	if ((st = query_prepare(q, sql, NULL)) == NULL)
		return (-1);
	if (sqlite3_bind_parameter_count(st) > 0)
		sqlite3_bind_int64(st, 1, arg);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = query_column_int(st, 0);
	sqlite3_finalize(st);
	return (v);
}

/* query_int_arg of a query without parameters. */
int64_t
query_int(struct query *q, const char *sql)
{
	return (query_int_arg(q, sql, 0));
}

/* Set *cause to "PATH: SQLite's last message" and return -1. */
int
query_fail(struct query *q, char **cause)
{
	return (query_error(q, cause, sqlite3_errmsg(q->db)));
}

/*
 * Set *label to the label of site site_id (the caller frees it), or to NULL
 * when there is no such site.  0, or -1 with *cause.
 */
int
query_site_label(struct query *q, int64_t site_id, char **label,
    char **cause)
{
	sqlite3_stmt	*st;
	int		 rc;

	*label = NULL;
	if ((st = query_prepare(q, "SELECT label FROM sites WHERE id = ?1",
	    cause)) == NULL)
		return (-1);
	sqlite3_bind_int64(st, 1, site_id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*label = query_column_text(st, 0);
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return (query_fail(q, cause));
	return (0);
}

/*
 * The column helpers of query*.c, one per type, each spelling a NULL the
 * way unknown.h says.
 */

/* Column i of st as an id, stream, address or time: UNKNOWN_U64 if NULL. */
uint64_t
query_column_u64(sqlite3_stmt *st, int i)
{
	if (sqlite3_column_type(st, i) == SQLITE_NULL)
		return (UNKNOWN_U64);
	return ((uint64_t)sqlite3_column_int64(st, i));
}

/*
 * Column i of st as an integer that is never negative when known (a count,
 * a step, a pid, a device, a layer): UNKNOWN_INT if NULL.
 */
int64_t
query_column_int(sqlite3_stmt *st, int i)
{
	if (sqlite3_column_type(st, i) == SQLITE_NULL)
		return (UNKNOWN_INT);
	return (sqlite3_column_int64(st, i));
}

/* Column i of st as a string the caller frees: NULL if NULL. */
char *
query_column_text(sqlite3_stmt *st, int i)
{
	const unsigned char	*v = sqlite3_column_text(st, i);

	return (v != NULL ? xstrdup((const char *)v) : NULL);
}

/* Copy column i of st into buf of len bytes, cut to fit: "" if NULL. */
void
query_column_copy(sqlite3_stmt *st, int i, char *buf, size_t len)
{
	const unsigned char	*v = sqlite3_column_text(st, i);

	snprintf(buf, len, "%s", v != NULL ? (const char *)v : "");
}

/*
 * Does the file's sites table have names (site_name())?  A file written
 * before the column existed has none; its sites are named from their
 * frames (query_site_name).
 */
int
query_has_site_names(struct query *q)
{
	return (query_int(q, "SELECT EXISTS (SELECT 1 FROM"
	    " pragma_table_info('sites') WHERE name = 'name')") == 1);
}

/*
 * The SQL expression a site s is shown by in q: its name (sites.name),
 * else its label in a file written before sites had names.
 */
const char *
query_site_shown(struct query *q)
{
	return (query_has_site_names(q) ? "coalesce(s.name, s.label)" :
	    "s.label");
}

/*
 * Does run run_id have its allocation_groups (it finished, written by a
 * vramtrace that keeps them per process)?
 */
int
query_has_groups(struct query *q, int64_t run_id)
{
	return (query_int_arg(q, "SELECT complete AND EXISTS (SELECT 1 FROM"
	    " pragma_table_info('allocation_groups') WHERE name ="
	    " 'process_id') FROM runs WHERE id = ?1", run_id) == 1);
}

/*
 * 1 when run_id finished with its allocation_steps (a file written before
 * the table existed, or a run of it written before, has none), else 0.
 */
int
query_has_alloc_steps(struct query *q, int64_t run_id)
{
	if (!query_has_groups(q, run_id) || query_int(q, "SELECT count(*)"
	    " FROM sqlite_master WHERE type = 'table' AND name ="
	    " 'allocation_steps'") != 1)
		return (0);
	return (query_int_arg(q, "SELECT EXISTS (SELECT 1 FROM"
	    " allocation_steps WHERE run_id = ?1)", run_id) == 1);
}

/*
 * 1 when run run_id allocated pinned host memory (the host layer), else 0:
 * from its step sums or its groups when it has them, else from its rows.
 */
int
query_run_has_host(struct query *q, int64_t run_id)
{
	if (query_has_alloc_steps(q, run_id))
		return (query_int_arg(q, "SELECT EXISTS (SELECT 1 FROM"
		    " allocation_steps WHERE run_id = ?1 AND layer = 3)",
		    run_id) == 1);
	if (query_has_groups(q, run_id))
		return (query_int_arg(q, "SELECT EXISTS (SELECT 1 FROM"
		    " allocation_groups WHERE run_id = ?1 AND layer = 3)",
		    run_id) == 1);
	return (query_int_arg(q, "SELECT EXISTS (SELECT 1 FROM allocations"
	    " WHERE run_id = ?1 AND layer = 3)", run_id) == 1);
}

/*
 * The layer a run is analysed in when none is asked for: block if it has
 * blocks, else pool, else segment.
 */
int
query_run_layer(struct query *q, int64_t run_id)
{
	int64_t	layer;

	/* A finished run has its steps, or its groups, to look at. */
	if (query_has_alloc_steps(q, run_id))
		layer = query_int_arg(q, "SELECT max(layer) FROM"
		    " allocation_steps WHERE run_id = ?1 AND layer IN (1, 2)",
		    run_id);
	else if (query_has_groups(q, run_id))
		layer = query_int_arg(q, "SELECT max(layer) FROM"
		    " allocation_groups WHERE run_id = ?1 AND layer IN (1, 2)",
		    run_id);
	else
		layer = query_int_arg(q, "SELECT CASE WHEN EXISTS (SELECT 1"
		    " FROM allocations WHERE run_id = ?1 AND layer = 2) THEN 2"
		    " WHEN EXISTS (SELECT 1 FROM allocations WHERE run_id = ?1"
		    " AND layer = 1) THEN 1 END", run_id);
	return (layer < 0 ? EVENT_LAYER_SEGMENT : (int)layer);
}

/*
 * 1 when an allocation of layer on device counts in the run's peak of that
 * layer (QUERY_PEAK_ROWS says the same in SQL): one on a device, for the
 * device's layers; every one for pinned host memory, whose device is -1.
 */
int
query_peak_counts(int layer, int32_t device)
{
	return (layer == EVENT_LAYER_HOST || device >= 0);
}

/* The id of the newest run, or 0 if there is none. */
int64_t
query_latest_run(struct query *q)
{
	int64_t	v;

	v = query_int(q, "SELECT max(id) FROM runs");
	return (v < 0 ? 0 : v);
}

/* The schema version of the database. */
int
query_schema_version(struct query *q)
{
	return (q->schema_version);
}

/* Does the database hold a complete import of the file at path? */
int
query_has_import(struct query *q, const char *path)
{
	sqlite3_stmt	*st;
	int		 found;

	if ((st = query_prepare(q, "SELECT 1 FROM runs WHERE source ="
	    " 'import' AND complete = 1 AND input = ?", NULL)) == NULL)
		return (0);
	sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
	found = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return (found);
}

/*
 * Run one read-only statement of the user's and call row() for the header
 * (values = column names, first = 1) and then for every row.  Statements
 * that would write are refused, as is more than one statement.  0, or -1
 * with *cause.
 */
int
query_sql(struct query *q, const char *sql, query_row_fn row, void *arg,
    char **cause)
{
	sqlite3_stmt	*st;
	const char	*tail;
	const char	**values;
	int		*types;
	int		 n, i, rc;

	if (sqlite3_prepare_v2(q->db, sql, -1, &st, &tail) != SQLITE_OK)
		return (query_fail(q, cause));
	if (st == NULL) {
		xasprintf(cause, "%s: empty query", q->path);
		return (-1);
	}
	tail += strspn(tail, " \t\r\n;");
	if (*tail != '\0') {
		sqlite3_finalize(st);
		xasprintf(cause, "%s: one statement at a time, please",
		    q->path);
		return (-1);
	}
	if (!sqlite3_stmt_readonly(st)) {
		sqlite3_finalize(st);
		xasprintf(cause, "%s: refusing a statement that writes "
		    "(vramtrace sql is read-only)", q->path);
		return (-1);
	}
	n = sqlite3_column_count(st);
	values = xcalloc((size_t)n + 1, sizeof *values);
	types = xcalloc((size_t)n + 1, sizeof *types);
	for (i = 0; i < n; i++) {
		values[i] = sqlite3_column_name(st, i);
		types[i] = QUERY_TEXT;
	}
	row(arg, n, values, types, 1);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		for (i = 0; i < n; i++) {
			switch (sqlite3_column_type(st, i)) {
			case SQLITE_NULL:
				types[i] = QUERY_NULL;
				break;
			case SQLITE_INTEGER:
			case SQLITE_FLOAT:
				types[i] = QUERY_NUMBER;
				break;
			default:
				types[i] = QUERY_TEXT;
				break;
			}
			values[i] = (const char *)sqlite3_column_text(st, i);
		}
		row(arg, n, values, types, 0);
	}
	free(values);
	free(types);
	if (rc != SQLITE_DONE) {
		query_fail(q, cause);
		sqlite3_finalize(st);
		return (-1);
	}
	sqlite3_finalize(st);
	return (0);
}
