/*
 * store-insert.c: rows inserted STORE_INSERT_MANY to a statement.
 *
 * SQLite spends a good part of a one-row INSERT on the statement itself:
 * starting it, opening the table's cursor, halting and resetting.  An
 * INSERT of many rows (VALUES (..), (..), ...) pays that once for all of
 * them, about a quarter fewer instructions a row at 32 rows for the
 * allocations.  The writers of bulk rows (store-queue.c, store-groups.c,
 * store-top.c) bind each row through a function of theirs at an offset,
 * and the rows left over at the end go in one at a time.
 */
#include "config.h"

#include "store-int.h"

#include <stdlib.h>
#include <string.h>

/* The text of head followed by n copies of values, comma separated. */
static char *
insert_text(const char *head, const char *values, int n)
{
	size_t	 h = strlen(head), v = strlen(values);
	char	*sql, *p;
	int	 i;

	sql = p = xmalloc(h + (size_t)n * (v + 1));
	memcpy(p, head, h);
	p += h;
	for (i = 0; i < n; i++) {
		if (i > 0)
			*p++ = ',';
		memcpy(p, values, v);
		p += v;
	}
	*p = '\0';
	return (sql);
}

/*
 * Prepare ins to insert rows into `table` with `head` ("INSERT INTO t(...)
 * VALUES "), each row's `values` ("(?, ?)", with `params` parameters).
 * 0, or -1 with *cause (nothing left to finalize).
 */
int
store_insert_prepare(struct store *s, struct store_insert *ins,
    const char *table, const char *head, const char *values, int params,
    char **cause)
{
	char	*one, *many;
	int	 rc;

	memset(ins, 0, sizeof *ins);
	ins->table = table;
	ins->params = params;
	one = insert_text(head, values, 1);
	many = insert_text(head, values, STORE_INSERT_MANY);
	rc = sqlite3_prepare_v2(s->db, one, -1, &ins->one, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(s->db, many, -1, &ins->many, NULL) != SQLITE_OK;
	free(one);
	free(many);
	if (rc != 0) {
		store_sql_error(s, cause, "cannot prepare a statement:");
		store_insert_finalize(ins);
		return (-1);
	}
	return (0);
}

/*
 * Insert the n rows at `rows`, each `size` bytes: STORE_INSERT_MANY to an
 * INSERT while that many are left, then one at a time.  bind(st, skip, row,
 * arg) binds a row to the ins->params parameters of st after the first
 * skip, every one of them (bindings are not cleared between statements).
 * With first_id > 0 the rows must take the ids first_id, first_id + 1, ...
 * in order (SQLite numbers a row the largest id plus one, so the last of
 * each INSERT is checked): any other id is a broken store, and fatal.  0,
 * or -1 with *cause ("cannot write to TABLE: ...").
 */
int
store_insert_rows(struct store *s, struct store_insert *ins,
    const void *rows, size_t size, size_t n, store_insert_bind_fn bind,
    void *arg, int64_t first_id, char **cause)
{
	const char	*row = rows;
	sqlite3_stmt	*st;
	size_t		 i, j, k;
	int64_t		 want, got;

	for (i = 0; i < n; i += k) {
		k = n - i >= STORE_INSERT_MANY ? STORE_INSERT_MANY : 1;
		st = k > 1 ? ins->many : ins->one;
		for (j = 0; j < k; j++)
			bind(st, (int)j * ins->params, row + (i + j) * size,
			    arg);
		if (store_sql_step_bound(s, st, ins->table, cause) != 0)
			return (-1);
		if (first_id <= 0)
			continue;
		want = first_id + (int64_t)(i + k - 1);
		if ((got = sqlite3_last_insert_rowid(s->db)) != want)
			fatal("%s: row %lld of %s took id %lld", s->path,
			    (long long)want, ins->table, (long long)got);
	}
	return (0);
}

/* Finalize ins's statements (prepared or not). */
void
store_insert_finalize(struct store_insert *ins)
{
	sqlite3_finalize(ins->one);
	sqlite3_finalize(ins->many);
	ins->one = ins->many = NULL;
}
