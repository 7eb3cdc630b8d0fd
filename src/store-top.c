/*
 * store-top.c: the largest allocations of a run, kept while it is written.
 *
 * The blocks view pages every allocation of a run by size, and nothing
 * else orders millions of rows by size: a (run_id, bytes) index over all
 * rows would cost seconds at finish and ~15 bytes a row.  Instead every
 * row, as it gets its id, is offered to a bounded min-heap of the
 * STORE_TOP_ROWS largest, ordered as the view orders them: bytes
 * descending, then id ascending.  heap[0] is the smallest kept; a row that
 * does not beat it is dropped at the cost of one comparison, so the writer
 * barely notices.  When the run finishes the heap becomes the rows of
 * allocation_top.  Every row not in the table ranks below every row in it,
 * so the first rows of any filter, in that order, are exact as long as the
 * table holds enough of them (query-blocks.c).
 */
#include "config.h"

#include "store-int.h"

#include <stdlib.h>

/* Does row a rank above row b (larger, or as large and older)? */
static int
top_above(const struct store_top_row *a, const struct store_top_row *b)
{
	if (a->bytes != b->bytes)
		return (a->bytes > b->bytes);
	return (a->id < b->id);
}

static void
top_sift_down(struct store_top *t, size_t i)
{
	struct store_top_row	 r = t->heap[i];
	size_t			 c;

	for (;;) {
		c = 2 * i + 1;
		if (c >= t->n)
			break;
		if (c + 1 < t->n && top_above(&t->heap[c], &t->heap[c + 1]))
			c++;
		if (!top_above(&r, &t->heap[c]))
			break;
		t->heap[i] = t->heap[c];
		i = c;
	}
	t->heap[i] = r;
}

/* Forget the rows kept (a new run). */
void
store_top_reset(struct store_top *t)
{
	free(t->heap);
	t->heap = NULL;
	t->n = 0;
}

/* Offer row id of the run, of `bytes` bytes. */
void
store_top_note(struct store_top *t, int64_t id, int64_t bytes)
{
	struct store_top_row	 r = { id, bytes };
	size_t			 i;

	if (t->n == STORE_TOP_ROWS) {
		if (top_above(&r, &t->heap[0])) {
			t->heap[0] = r;
			top_sift_down(t, 0);
		}
		return;
	}
	if (t->heap == NULL)
		t->heap = xreallocarray(NULL, STORE_TOP_ROWS, sizeof *t->heap);
	for (i = t->n++; i > 0 && top_above(&t->heap[(i - 1) / 2], &r);
	    i = (i - 1) / 2)
		t->heap[i] = t->heap[(i - 1) / 2];
	t->heap[i] = r;
}

/* Write the rows kept into allocation_top.  0, or -1 with *cause. */
int
store_top_write(struct store *s, char **cause)
{
	struct store_top	*t = &s->top;
	sqlite3_stmt		*st;
	size_t			 i;

	if (sqlite3_exec(s->db, store_top_sql, NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(s->db, "INSERT INTO allocation_top VALUES"
	    " (?1, ?2, ?3)", -1, &st, NULL) != SQLITE_OK)
		return (store_error(s, cause, "cannot keep the largest:"));
	for (i = 0; i < t->n; i++) {
		sqlite3_bind_int64(st, 1, s->run_id);
		sqlite3_bind_int64(st, 2, t->heap[i].bytes);
		sqlite3_bind_int64(st, 3, t->heap[i].id);
		if (sqlite3_step(st) != SQLITE_DONE) {
			sqlite3_finalize(st);
			return (store_error(s, cause,
			    "cannot keep the largest:"));
		}
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return (0);
}
