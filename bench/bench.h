/*
 * bench.h: what the benchmark programs that write through the store share
 * (bench.c).
 */
#ifndef BENCH_H
#define BENCH_H

#include <stdint.h>

#include "vramtrace.h"

/* Allocations live at any time in the churn. */
#define BENCH_LIVE	4096

/* A working set that allocates into free slots and frees full ones. */
struct bench_churn {
	uint64_t	live[BENCH_LIVE];	/* address, 0: free slot */
	uint64_t	seed;
	uint64_t	next_addr;
};

uint64_t bench_random(uint64_t *);
void	 bench_churn_init(struct bench_churn *);
size_t	 bench_churn_next(struct bench_churn *, struct event *, uint64_t,
	     unsigned int);
void	 bench_put(struct store_source *, const struct event *);
void	 bench_step(struct store_source *, uint64_t);
void	 bench_finish(struct store *, struct store_source *);

#endif
