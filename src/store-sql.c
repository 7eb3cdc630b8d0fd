/*
 * store-sql.c: the SQL helpers at the bottom of the store family.
 *
 * Every other store file writes through these: they open the store's one
 * transaction, prepare a file's statements, step a prepared write, bind
 * optional values and turn a failure into the family's error, "PATH: what
 * failed: SQLite's message".  They call no other file of the family, so
 * the family has no circle of calls (tests/layout.py).
 */
#include "config.h"

#include "store-int.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/*
 * Set *cause to "PATH: MESSAGE" (with SQLite's message appended when the
 * message ends in ':'), mark the store failed (store_failed) and return
 * -1.  cause may be NULL.
 */
int
store_sql_error(struct store *s, char **cause, const char *fmt, ...)
{
	va_list	 ap;
	char	*msg;
	size_t	 len;

	s->failed = 1;
	if (cause == NULL)
		return (-1);
	va_start(ap, fmt);
	xvasprintf(&msg, fmt, ap);
	va_end(ap);
	len = strlen(msg);
	if (len > 0 && msg[len - 1] == ':' && s->db != NULL)
		xasprintf(cause, "%s: %s %s", s->path, msg,
		    sqlite3_errmsg(s->db));
	else
		xasprintf(cause, "%s: %s", s->path, msg);
	free(msg);
	return (-1);
}

/*
 * Prepare the n statements of table t into the store's slots, to be
 * finalized when it closes.  0, or -1 with *cause.
 */
int
store_sql_prepare(struct store *s, const struct store_sql_text *t, size_t n,
    char **cause)
{
	size_t	i;

	for (i = 0; i < n; i++) {
		if (sqlite3_prepare_v3(s->db, t[i].sql, -1,
		    SQLITE_PREPARE_PERSISTENT, &s->stmt[t[i].id], NULL) !=
		    SQLITE_OK)
			return (store_sql_error(s, cause,
			    "cannot prepare a statement:"));
	}
	return (0);
}

/* Bind an optional integer: EVENT_NONE becomes NULL. */
void
store_sql_bind_opt(sqlite3_stmt *st, int i, uint64_t v)
{
	if (v == EVENT_NONE)
		sqlite3_bind_null(st, i);
	else
		sqlite3_bind_int64(st, i, (int64_t)v);
}

/* Bind a row id: 0 (none) becomes NULL. */
void
store_sql_bind_id(sqlite3_stmt *st, int i, int64_t id)
{
	if (id == 0)
		sqlite3_bind_null(st, i);
	else
		sqlite3_bind_int64(st, i, id);
}

/* Bind an optional string (copied): NULL stays NULL. */
void
store_sql_bind_text(sqlite3_stmt *st, int i, const char *v)
{
	if (v == NULL)
		sqlite3_bind_null(st, i);
	else
		sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
}

/*
 * Set *cause to "PATH: cannot DOING: strerror(errno)" for a temporary file
 * of the store's that could not be written or read back (a full disk), mark
 * the store failed, as its database would be, and return -1.  cause may be
 * NULL.
 */
int
store_io_error(struct store *s, char **cause, const char *doing)
{
	s->failed = 1;
	if (cause != NULL)
		*cause = xstrerror_cause("%s: cannot %s", s->path, doing);
	return (-1);
}

/*
 * Run a write statement whose every parameter the caller binds each time
 * to completion and reset it, keeping its bindings (the next row binds them
 * all again); count it towards the next automatic commit.  0, or -1 with
 * *cause ("PATH: cannot write to TABLE: SQLite's message"; "PATH:
 * interrupted" once a signal stopped the store, store-atomic.c).
 */
int
store_sql_step_bound(struct store *s, sqlite3_stmt *st, const char *table,
    char **cause)
{
	int	rc;

	if (s->interrupted) {
		sqlite3_reset(st);
		return (store_sql_error(s, cause, "interrupted"));
	}
	if ((rc = sqlite3_step(st)) != SQLITE_DONE)
		store_sql_error(s, cause, "cannot write to %s:", table);
	sqlite3_reset(st);
	s->writes++;
	return (rc == SQLITE_DONE ? 0 : -1);
}

/*
 * store_sql_step_bound(), then clear the statement's bindings: for writers
 * that leave NULL parameters unbound.
 */
int
store_sql_step(struct store *s, sqlite3_stmt *st, const char *table,
    char **cause)
{
	int	rc;

	rc = store_sql_step_bound(s, st, table, cause);
	sqlite3_clear_bindings(st);
	return (rc);
}

/*
 * Run SQL text, statements without results.  0, or -1 with *cause
 * ("PATH: DOING: SQLite's message").
 */
int
store_sql_exec(struct store *s, const char *sql, const char *doing,
    char **cause)
{
	if (s->interrupted)
		return (store_sql_error(s, cause, "interrupted"));
	if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return (store_sql_error(s, cause, "%s:", doing));
	return (0);
}

/* Open the store's transaction if none is open.  0, or -1 with *cause. */
int
store_sql_begin(struct store *s, char **cause)
{
	if (s->in_txn)
		return (0);
	if (store_sql_exec(s, "BEGIN", "cannot begin a transaction",
	    cause) != 0)
		return (-1);
	s->in_txn = 1;
	return (0);
}

/*
 * Open path (a plain file name, never an SQLite URI: util_sqlite_uri) for
 * reading and writing, creating it if missing, into s->db; a busy
 * database fails at once.  0, or -1 with *cause.
 */
int
store_sql_open(struct store *s, const char *path, char **cause)
{
	char	*uri = util_sqlite_uri(path, NULL);
	int	 rc;

	rc = sqlite3_open_v2(uri, &s->db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI, NULL);
	free(uri);
	if (rc != SQLITE_OK)
		return (store_sql_error(s, cause, "cannot open:"));
	sqlite3_busy_timeout(s->db, 0);
	return (0);
}

/*
 * Whether table of the attached database schema ("main", "src") has column:
 * 1 or 0, or -1 with *cause.  Files written before a column was added to
 * the schema lack it.
 */
int
store_sql_has_column(struct store *s, const char *schema, const char *table,
    const char *column, char **cause)
{
	sqlite3_stmt	*st;
	int		 have;

	if (sqlite3_prepare_v2(s->db, "SELECT 1 FROM pragma_table_info(?1,"
	    " ?2) WHERE name = ?3", -1, &st, NULL) != SQLITE_OK)
		return (store_sql_error(s, cause, "cannot read the schema:"));
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, schema, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, column, -1, SQLITE_STATIC);
	have = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return (have);
}
