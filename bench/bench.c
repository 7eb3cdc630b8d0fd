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

/* Start an empty working set. */
void
bench_churn_init(struct bench_churn *c)
{
	memset(c, 0, sizeof *c);
	c->seed = 88172645463325252ULL;
	c->next_addr = 0x7f0000000000ULL;
}

/*
 * Make the next pool-layer event at time t: pick a slot at random; free
 * its allocation if it has one, else allocate 512 << (0 .. shifts-1) bytes
 * into it.  The caller sets the stream, site and correlation.  Returns the
 * slot; setting c->live[slot] to 0 afterwards leaks that allocation.
 */
size_t
bench_churn_next(struct bench_churn *c, struct event *ev, uint64_t t,
    unsigned int shifts)
{
	size_t	k = bench_random(&c->seed) % BENCH_LIVE;

	memset(ev, 0, sizeof *ev);
	ev->time_ns = t;
	ev->u.alloc.requested = EVENT_NONE;
	ev->u.alloc.correlation = EVENT_NONE;
	ev->u.alloc.layer = EVENT_LAYER_POOL;
	if (c->live[k] != 0) {
		ev->type = EVENT_FREE;
		ev->u.alloc.address = c->live[k];
		c->live[k] = 0;
	} else {
		ev->type = EVENT_ALLOC;
		ev->u.alloc.address = c->next_addr;
		ev->u.alloc.bytes = 512u << (bench_random(&c->seed) % shifts);
		c->next_addr += 1 << 22;
		c->live[k] = ev->u.alloc.address;
	}
	return (k);
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
	if (store_run_finish(s, 0, 0, 1, &cause) != 0 ||
	    store_close(s, &cause) != 0)
		fatal("%s", cause);
}
