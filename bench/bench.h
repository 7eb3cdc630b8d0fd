/*
 * bench.h: what the benchmark programs that write through the store share
 * (bench.c).
 */
#ifndef BENCH_H
#define BENCH_H

#include <stdint.h>

#include "vramtrace.h"

uint64_t bench_random(uint64_t *);
void	 bench_put(struct store_source *, const struct event *);
void	 bench_step(struct store_source *, uint64_t);
void	 bench_finish(struct store *, struct store_source *);

#endif
