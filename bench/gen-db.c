/*
 * gen-db.c: write a large run through the real writer, for the TUI bench.
 *
 * usage: gen-db [MILLIONS-OF-ALLOCATIONS] DB   (default 10)
 *
 * Events go through a store source, as `vramtrace record` writes them:
 * allocations over 100 steps on four streams, with 16 allocation sites,
 * each freed soon after it was made except one in a thousand on side
 * stream 13, never freed (a leak), and an offload event per 1000
 * allocations.  Refuses to overwrite DB.
 */
#include "config.h"

#include "vramtrace.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define LIVE	4096		/* allocations live at any time */
#define STEPS	100
#define SITES	16

static uint64_t
rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return (*s);
}

static void
put(struct store_source *src, const struct event *ev)
{
	char	*cause = NULL;

	if (store_source_event(src, ev, &cause) != 0)
		fatal("%s", cause);
}

static void
sites(struct store_source *src)
{
	struct event	 ev;
	char		*text;
	int		 i;

	for (i = 0; i < SITES; i++) {
		xasprintf(&text, "layer%d_forward\tmodel.py\t%d\n"
		    "train_step\ttrain.py\t%d\nmain\ttrain.py\t90\n", i,
		    100 + i, 40 + i % 4);
		memset(&ev, 0, sizeof ev);
		ev.type = EVENT_STRING;
		ev.u.string.id = (uint32_t)i + 1;
		ev.u.string.length = (uint32_t)strlen(text);
		ev.u.string.text = text;
		put(src, &ev);
		free(text);
	}
}

int
main(int argc, char **argv)
{
	struct store_run_info	 info = { .source = "replay" };
	struct store		*s;
	struct store_source	*src;
	struct event		 ev;
	uint64_t		 live[LIVE], seed = 88172645463325252ULL;
	uint64_t		 n, i, t = 1700000000000000000ULL, t0;
	uint64_t		 next_addr = 0x7f0000000000ULL;
	char			*cause = NULL;
	size_t			 k;

	if (argc != 3)
		fatal("usage: gen-db MILLIONS-OF-ALLOCATIONS DB");
	n = strtoull(argv[1], NULL, 10) * 1000000;
	t0 = util_now_ns();
	if ((s = store_open(argv[2], STORE_CREATE, &cause)) == NULL)
		fatal("%s", cause);
	store_run_begin(s, &info);
	src = store_source_create(s, "bench");
	sites(src);
	memset(live, 0, sizeof live);
	for (i = 0; i < n; i++) {
		k = rnd(&seed) % LIVE;
		if (live[k] != 0) {	/* free what lives in slot k first */
			t += 500;
			memset(&ev, 0, sizeof ev);
			ev.type = EVENT_FREE;
			ev.time_ns = t;
			ev.u.alloc.address = live[k];
			ev.u.alloc.requested = ev.u.alloc.correlation = EVENT_NONE;
			ev.u.alloc.stream = EVENT_NONE;
			ev.u.alloc.layer = EVENT_LAYER_BLOCK;
			put(src, &ev);
			live[k] = 0;
		}
		t += 1000;
		memset(&ev, 0, sizeof ev);
		ev.type = EVENT_ALLOC;
		ev.time_ns = t;
		ev.u.alloc.requested = EVENT_NONE;
		ev.u.alloc.correlation = i;
		ev.u.alloc.layer = EVENT_LAYER_BLOCK;
		ev.u.alloc.address = next_addr;
		ev.u.alloc.bytes = 512ULL << (rnd(&seed) % 16);
		ev.u.alloc.site = (uint32_t)(rnd(&seed) % SITES) + 1;
		next_addr += 1 << 22;
		if (i % 1000 == 999) {
			ev.u.alloc.stream = 13;	/* the leak: never freed */
			put(src, &ev);
		} else {
			ev.u.alloc.stream = 7 + (k & 3);
			put(src, &ev);
			live[k] = ev.u.alloc.address;
		}
		if (i % 1000 == 500) {
			memset(&ev, 0, sizeof ev);
			ev.type = EVENT_OFFLOAD;
			ev.time_ns = t;
			ev.u.offload.kind = (uint8_t)(1 + i / 1000 % 4);
			ev.u.offload.bytes = 1 << 20;
			ev.u.offload.stream = 13;
			put(src, &ev);
		}
		if (i % (n / STEPS) == n / STEPS - 1) {
			memset(&ev, 0, sizeof ev);
			ev.type = EVENT_STEP_END;
			ev.time_ns = t;
			ev.u.step.step = -1;
			put(src, &ev);
		}
		if (i % 500000 == 499999 && store_commit(s, &cause) != 0)
			fatal("%s", cause);
	}
	store_source_free(src);
	if (store_run_finish(s, 0, 0, &cause) != 0 ||
	    store_close(s, &cause) != 0)
		fatal("%s", cause);
	printf("%s: %" PRIu64 " allocations in %.1f s\n", argv[2], n,
	    (double)(util_now_ns() - t0) / 1e9);
	return (0);
}
