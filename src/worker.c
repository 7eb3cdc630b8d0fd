/*
 * worker.c: a second thread that takes batches of items from the caller's
 * thread, in order, so that the caller prepares the next items while it
 * works on the last ones.
 *
 * The batches are a ring of WORKER_BATCHES: the caller fills one while
 * the thread works through those handed over, and waits when all are
 * handed over, so memory stays at the ring's size whatever passes
 * through it.  The mutex that hands each batch over orders what either
 * side wrote before it.  The thread blocks every signal that can be
 * blocked, so that signals reach the caller's thread as they would without
 * it.  An error stops the thread; the caller learns of it at its next
 * hand-over and stops too.  fatal() in either thread ends the process.
 */
#include "config.h"

#include "worker.h"

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vramtrace.h"

/* Batches in the ring. */
#define WORKER_BATCHES	4

struct worker {
	pthread_t	 thread;
	pthread_mutex_t	 lock;
	pthread_cond_t	 cond;		/* head, tail, end or failed moved */
	worker_fn	 fn;
	void		*arg;
	size_t		 size;		/* bytes of an item */
	size_t		 max;		/* items in a batch */
	char		*items[WORKER_BATCHES];
	size_t		 n[WORKER_BATCHES];
	uint64_t	 head;		/* the next batch the thread takes */
	uint64_t	 tail;		/* batches handed over */
	int		 end;		/* 1: no more; 2: drop the rest */
	int		 failed;	/* the thread stopped on an error */
	char		*cause;		/* ...its message, until given */
};

static void *
worker_main(void *arg)
{
	struct worker	*w = arg;
	char		*cause = NULL;
	size_t		 k;
	int		 rc;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		while (w->head == w->tail && w->end == 0)
			pthread_cond_wait(&w->cond, &w->lock);
		if (w->end == 2 || w->head == w->tail)
			break;
		k = w->head % WORKER_BATCHES;
		pthread_mutex_unlock(&w->lock);
		rc = w->fn(w->arg, w->items[k], w->n[k], &cause);
		pthread_mutex_lock(&w->lock);
		if (rc != 0) {
			w->failed = 1;
			w->cause = cause != NULL ? cause :
			    xstrdup("a worker thread failed");
			pthread_cond_broadcast(&w->cond);
			break;
		}
		w->head++;
		pthread_cond_broadcast(&w->cond);
	}
	pthread_mutex_unlock(&w->lock);
	return (NULL);
}

/*
 * Start a thread that calls fn(arg, items, n, cause) on batches of up to
 * `max` items of `size` bytes, pushed by the caller.  Never fails (no
 * thread: fatal()).
 */
struct worker *
worker_start(size_t size, size_t max, worker_fn fn, void *arg)
{
	struct worker	*w = xcalloc(1, sizeof *w);
	sigset_t	 all, old;
	size_t		 i;
	int		 rc;

	w->fn = fn;
	w->arg = arg;
	w->size = size;
	w->max = max;
	for (i = 0; i < WORKER_BATCHES; i++)
		w->items[i] = xreallocarray(NULL, max, size);
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&w->thread, NULL, worker_main, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0)
		fatal("cannot start a thread: %s", strerror(rc));
	return (w);
}

/*
 * The place of the next item, for the caller to fill and then push with
 * worker_push().
 */
void *
worker_slot(struct worker *w)
{
	size_t	k = w->tail % WORKER_BATCHES;

	return (w->items[k] + w->n[k] * w->size);
}

/*
 * Add the item filled at worker_slot() to the batch; a full batch is
 * handed over, waiting while every batch is.  0, or -1 with *cause when
 * the thread failed (its message, given once).
 */
int
worker_push(struct worker *w, char **cause)
{
	size_t	k = w->tail % WORKER_BATCHES;
	int	failed;

	if (++w->n[k] < w->max)
		return (0);
	pthread_mutex_lock(&w->lock);
	w->tail++;
	pthread_cond_broadcast(&w->cond);
	while (!w->failed && w->tail - w->head == WORKER_BATCHES)
		pthread_cond_wait(&w->cond, &w->lock);
	if ((failed = w->failed) && cause != NULL && w->cause != NULL) {
		*cause = w->cause;
		w->cause = NULL;
	}
	w->n[w->tail % WORKER_BATCHES] = 0;
	pthread_mutex_unlock(&w->lock);
	return (failed ? -1 : 0);
}

/*
 * Stop the thread and free w: with `drop` 0, once it has
 * done every item pushed; with `drop` 1, at once, dropping the rest.  0,
 * or -1 when it failed, with *cause its message unless it was given.
 */
int
worker_end(struct worker *w, int drop, char **cause)
{
	size_t	i;
	int	failed;

	pthread_mutex_lock(&w->lock);
	if (!drop && w->n[w->tail % WORKER_BATCHES] > 0)
		w->tail++;	/* a batch is free: worker_push() waited */
	w->end = drop ? 2 : 1;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	if ((failed = w->failed) && w->cause != NULL) {
		if (cause != NULL)
			*cause = w->cause;
		else
			free(w->cause);
	}
	for (i = 0; i < WORKER_BATCHES; i++)
		free(w->items[i]);
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->cond);
	free(w);
	return (failed ? -1 : 0);
}
