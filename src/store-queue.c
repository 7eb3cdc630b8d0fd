/*
 * store-queue.c: a bulk load's allocation rows written by a second
 * thread, and how any allocation row is bound to its INSERT.
 *
 * When an import's steps are known, its rows (hundreds of thousands)
 * leave store-pending.c at once, and when it finishes, the blocks still
 * live leave the live table.  Working out each row (its steps, its
 * group, the first-rows heaps) and SQLite inserting it take about as long
 * as each other, so the two overlap: the caller's thread fills batches of
 * rows with their ids and steps decided, and a writer thread inserts
 * them (worker.c: a ring of 4 batches of STORE_QUEUE_ROWS rows, about
 * 2 MB; the caller waits when all are full, so memory does not grow with
 * the load), many rows to an INSERT (store-insert.c).
 *
 * The writer owns the SQLite connection from store_queue_begin() to
 * store_queue_end(): the caller touches no SQL in between.  Rows get the
 * ids SQLite gives them (the table's largest id plus one, counted up),
 * which the caller counts too, so that it knows each one at once.
 * Signals reach the caller's thread as before (store-atomic.c); one that
 * interrupts an append stops the writer's statement through
 * sqlite3_interrupt(), and the writer's error stops the caller at its
 * next batch.  An error on either side stops both: the writer drops the
 * batches left, the caller writes no more.
 */
#include "config.h"

#include "store-int.h"

#include <stdlib.h>

#include "worker.h"

/* Rows in a batch of the writer's (worker.c keeps 4 batches). */
#define STORE_QUEUE_ROWS	4096

/* A row to insert: its values, id and steps (STORE_QUEUE_NO_STEP: NULL). */
struct queue_row {
	struct store_allocation	 a;
	int64_t			 id;
	int64_t			 alloc_step;
	int64_t			 free_step;
};

/* The writer of a store (s->queue). */
struct store_queue {
	struct worker		*worker;
	struct store_insert	 insert;	/* the writer's INSERTs */
	int64_t			 next_id;	/* the next row's id */
};

/* Bind step (STORE_QUEUE_NO_STEP: NULL) to parameter i of st. */
static void
queue_bind_step(sqlite3_stmt *st, int i, int64_t step)
{
	if (step == STORE_QUEUE_NO_STEP)
		sqlite3_bind_null(st, i);
	else
		sqlite3_bind_int64(st, i, step);
}

/*
 * Bind allocation row a of run run_id, with its steps (STORE_QUEUE_NO_STEP:
 * NULL), to the STORE_ALLOC_PARAMS parameters of st after the first `skip`
 * (st: an INSERT of STORE_ALLOC_INSERT whose rows SQLite numbers, such as
 * the store's STMT_ALLOC): every one of them, so that the caller may step
 * st without clearing the last row's bindings.
 */
void
store_queue_bind(sqlite3_stmt *st, int skip, int64_t run_id,
    const struct store_allocation *a, int64_t alloc_step, int64_t free_step)
{
	sqlite3_bind_int64(st, skip + 1, run_id);
	store_sql_bind_id(st, skip + 2, a->process_id);
	sqlite3_bind_int(st, skip + 3, a->device);
	store_sql_bind_opt(st, skip + 4, a->stream);
	sqlite3_bind_int(st, skip + 5, a->layer);
	sqlite3_bind_int64(st, skip + 6, (int64_t)a->address);
	sqlite3_bind_int64(st, skip + 7, (int64_t)a->bytes);
	store_sql_bind_opt(st, skip + 8, a->requested);
	store_sql_bind_opt(st, skip + 9, a->alloc_ns);
	store_sql_bind_opt(st, skip + 10, a->free_requested_ns);
	store_sql_bind_opt(st, skip + 11, a->free_ns);
	queue_bind_step(st, skip + 12, alloc_step);
	queue_bind_step(st, skip + 13, free_step);
	store_sql_bind_id(st, skip + 14, a->site_id);
	store_sql_bind_opt(st, skip + 15, a->correlation);
}

/* Bind queue_row row of store arg (store_insert_bind_fn). */
static void
queue_bind_row(sqlite3_stmt *st, int skip, const void *row, void *arg)
{
	const struct queue_row	*r = row;
	struct store		*s = arg;

	store_queue_bind(st, skip, s->run_id, &r->a, r->alloc_step,
	    r->free_step);
}

/*
 * The writer: insert one batch of rows of store arg.  SQLite numbers them:
 * a row it numbers is appended to the table's b-tree, where one numbered
 * by the caller costs a search for a row of that number first; the number
 * it gives is the one counted for the row, or the store is broken.  0, or
 * -1 with *cause.
 */
static int
queue_write(void *arg, void *items, size_t n, char **cause)
{
	struct store		*s = arg;
	const struct queue_row	*rows = items;

	return (store_insert_rows(s, &s->queue->insert, rows, sizeof *rows, n,
	    queue_bind_row, s, rows[0].id, cause));
}

/*
 * Start writing s's allocation rows in a second thread: from now until
 * store_queue_end() the caller makes no SQLite call on s.  The rows are
 * numbered from the table's largest id plus one.  0, or -1 with *cause
 * (nothing started).
 */
int
store_queue_begin(struct store *s, char **cause)
{
	struct store_insert	 insert;
	sqlite3_stmt		*st;
	int64_t			 max;
	int			 rc;

	if (sqlite3_prepare_v2(s->db, "SELECT coalesce(max(id), 0) FROM"
	    " allocations", -1, &st, NULL) != SQLITE_OK)
		return (store_sql_error(s, cause, "cannot read allocations:"));
	rc = sqlite3_step(st);
	max = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW)
		return (store_sql_error(s, cause, "cannot read allocations:"));
	if (store_insert_prepare(s, &insert, "allocations", STORE_ALLOC_INSERT,
	    STORE_ALLOC_VALUES, STORE_ALLOC_PARAMS, cause) != 0)
		return (-1);
	s->queue = xcalloc(1, sizeof *s->queue);
	s->queue->insert = insert;
	s->queue->next_id = max + 1;
	s->queue->worker = worker_start(sizeof (struct queue_row),
	    STORE_QUEUE_ROWS, queue_write, s);
	return (0);
}

/*
 * Queue row a of s (whose writer store_queue_begin() started) with its
 * steps (STORE_QUEUE_NO_STEP: NULL); its id in *id.  Waits while every
 * batch is full.  0, or -1 with *cause when the writer failed (its
 * message, given once).
 */
int
store_queue_row(struct store *s, const struct store_allocation *a,
    int64_t alloc_step, int64_t free_step, int64_t *id, char **cause)
{
	struct queue_row	*r = worker_slot(s->queue->worker);

	r->a = *a;
	r->id = *id = s->queue->next_id++;
	r->alloc_step = alloc_step;
	r->free_step = free_step;
	return (worker_push(s->queue->worker, cause));
}

/*
 * Stop s's writer and give the connection back to the caller: with
 * `drop` 0, once every row queued is written; with `drop` 1 (the caller
 * failed), at once, dropping what is left.  0, or -1 when the writer
 * failed, with *cause its message unless store_queue_row() gave it.
 */
int
store_queue_end(struct store *s, int drop, char **cause)
{
	int	rc;

	if (s->queue == NULL)
		return (0);
	rc = worker_end(s->queue->worker, drop, cause);
	store_insert_finalize(&s->queue->insert);
	free(s->queue);
	s->queue = NULL;
	return (rc);
}
