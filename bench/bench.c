/*
 * bench.c: helpers for the benchmarks that write synthetic events through
 * the real writer.
 */
#include "config.h"

#include "bench.h"

#include <string.h>

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

/* End the source's current step at time t. */
void
bench_step(struct store_source *src, uint64_t t)
{
	struct event	ev;

	memset(&ev, 0, sizeof ev);
	ev.type = EVENT_STEP_END;
	ev.time_ns = t;
	ev.u.step.step = -1;
	bench_put(src, &ev);
}

/* Apply what src holds, free it, finish the run and close the store. */
void
bench_finish(struct store *s, struct store_source *src)
{
	char	*cause = NULL;

	if (store_source_drain(src, &cause) != 0)
		fatal("%s", cause);
	store_source_free(src);
	if (store_run_finish(s, 0, 0, &cause) != 0 ||
	    store_close(s, &cause) != 0)
		fatal("%s", cause);
}
