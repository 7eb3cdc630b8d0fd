/*
 * worker.h: a second thread fed batches of fixed-size items (worker.c),
 * for a producer and a consumer that take about as long as each other.
 */
#ifndef WORKER_H
#define WORKER_H

#include <stddef.h>

/*
 * What the thread does with n items (1 or more), in the order they were
 * pushed: 0, or -1 with *cause (one line, allocated), which stops it.
 */
typedef int	(*worker_fn)(void *arg, void *items, size_t n, char **cause);

struct worker;

struct worker	*worker_start(size_t, size_t, worker_fn, void *);
void		*worker_slot(struct worker *);
int		 worker_push(struct worker *, char **);
int		 worker_end(struct worker *, int, char **);

#endif
