/*
 * bench.c: helpers for the benchmarks that write synthetic events through
 * the real writer.
 */
#include "config.h"

#include "bench.h"

/* The next value of a xorshift64 generator whose state is *s (not 0). */
uint64_t
bench_random(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return (*s);
}

/* Write one event through src; a failure ends the benchmark. */
void
bench_put(struct store_source *src, const struct event *ev)
{
	char	*cause = NULL;

	if (store_source_event(src, ev, &cause) != 0)
		fatal("%s", cause);
}
