/*
 * import-pipe.c: a snapshot's trace entries handed to the store in a
 * second thread while the pickle is read.
 *
 * Reading and checking the pickle takes most of an import's first half;
 * what the store does with each trace entry (the live table, rows kept
 * for their steps) most of the rest.  So while the pickle is parsed, the
 * allocation events of the trace go to a worker thread (worker.c: a ring
 * of batches, bounded memory) that makes the store calls import-trace.c
 * would have made, in the same order.  In a bulk load before any step is
 * known those calls touch only the live table and the rows kept for
 * their steps, never SQL (store-rows.c says so), and the store calls this
 * thread makes meanwhile (sites, segments, blocks, marks) touch none of
 * that: the two share no state, and the SQLite connection stays with this
 * thread.  The first error in file order wins: an error of the worker
 * stops the parse at the next hand-over, and one of the parse lets the
 * worker finish what was queued before it, whose error came first.
 */
#include "config.h"

#include "import.h"

#include <stdlib.h>

#include "worker.h"

/* Events in a batch. */
#define IMPORT_PIPE_EVENTS	4096

/* An allocation event of the trace, with the store call it makes. */
struct pipe_event {
	enum import_pipe_op	 op;
	struct store_allocation	 a;
	uint64_t		 t1, t2;	/* the call's times */
};

/* The worker: make the store calls of n events.  0, or -1 with *cause. */
static int
pipe_apply(void *arg, void *items, size_t n, char **cause)
{
	struct store		*s = arg;
	const struct pipe_event	*e = items;
	size_t			 i;
	int			 rc;

	for (i = 0; i < n; i++, e++) {
		if (e->op == IMPORT_PIPE_BEGIN)
			rc = store_rows_alloc_begin(s, &e->a, cause);
		else if (e->op == IMPORT_PIPE_FREE_REQUESTED)
			rc = store_rows_alloc_free_requested(s, &e->a, e->t1,
			    cause);
		else
			rc = store_rows_alloc_end(s, &e->a, e->t1, e->t2,
			    cause);
		if (rc != 0)
			return (-1);
	}
	return (0);
}

/* Start the worker of st's store, for the parse. */
void
import_pipe_begin(struct import_state *st)
{
	st->pipe = worker_start(sizeof (struct pipe_event),
	    IMPORT_PIPE_EVENTS, pipe_apply, st->store);
}

/*
 * Queue the store call of an allocation event: op with allocation a and
 * times t1 and t2 (store_rows_alloc_free_requested's t; the free-requested
 * and free times of store_rows_alloc_end), as import-trace.c would have
 * made it, during the parse.  0, or -1 with *cause when the worker
 * failed.
 */
int
import_pipe_alloc(struct import_state *st, enum import_pipe_op op,
    const struct store_allocation *a, uint64_t t1, uint64_t t2, char **cause)
{
	struct pipe_event	*e;

	e = worker_slot(st->pipe);
	e->op = op;
	e->a = *a;
	e->t1 = t1;
	e->t2 = t2;
	return (worker_push(st->pipe, cause));
}

/*
 * After the parse: let the worker make the calls queued, and stop it.
 * `failed`: the parse failed with *cause, which the worker's error, if
 * it came first, replaces.  0, or -1 with *cause when the worker failed.
 */
int
import_pipe_end(struct import_state *st, int failed, char **cause)
{
	char	*why = NULL;
	int	 rc;

	if (st->pipe == NULL)
		return (0);
	rc = worker_end(st->pipe, 0, &why);
	st->pipe = NULL;
	if (why != NULL) {
		if (failed)
			free(*cause);
		*cause = why;
	}
	return (rc);
}
