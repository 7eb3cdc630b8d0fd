/*
 * t-offload.c: the offload engine's bookkeeping, without a GPU.
 *
 * A fake runtime stands in for CUDA: events are numbers whose completion
 * the test decides.  Covers slab carving, alignment, reuse only after the
 * last copy's event and the full-slab case; dedupe generations (a reused
 * address with a new generation is not a hit) and release; the order in
 * which the forward stash is reaped; the budget selection, with tensors
 * whose storage outlived their copies kept; the memory profile's
 * predictions, cutoff and headroom.
 */
#include "config.h"

#include <string.h>

#include "offload.h"
#include "tap.h"

#define FAKE_EVENTS	64
static int	fake_done[FAKE_EVENTS];
static uint64_t	fake_next;

static int
fake_event_create(void *arg, uint64_t *ev)
{
	(void)arg;
	*ev = fake_next++;
	return (0);
}

static void
fake_event_destroy(void *arg, uint64_t ev)
{
	(void)arg;
	(void)ev;
}

static int
fake_event_record(void *arg, uint64_t ev, uint64_t stream)
{
	(void)arg;
	(void)stream;
	fake_done[ev] = 0;
	return (0);
}

static int
fake_event_done(void *arg, uint64_t ev)
{
	(void)arg;
	return (fake_done[ev]);
}

static const struct offload_ops fake_ops = {
	.event_create = fake_event_create,
	.event_destroy = fake_event_destroy,
	.event_record = fake_event_record,
	.event_done = fake_event_done,
};

static void
test_slab(void)
{
	struct offload_event_pool	pool;
	struct offload_slab		slab;
	uint64_t			a, b, c, d;
	uint32_t			ev;

	offload_event_init(&pool, &fake_ops);
	tap_eq(offload_slab_init(&slab, 0x10000, 4096), 0, "slab: init");
	tap_ok(offload_slab_alloc(&slab, &pool, 100, &a) == 0 && a == 0,
	    "slab: first block at 0");
	tap_ok(offload_slab_alloc(&slab, &pool, 513, &b) == 0 && b == 512,
	    "slab: next block aligned to %d", OFFLOAD_SLAB_ALIGN);
	tap_ok(offload_slab_alloc(&slab, &pool, 1024, &c) == 0 &&
	    c % OFFLOAD_SLAB_ALIGN == 0 && c >= b + 1024,
	    "slab: blocks never overlap");
	tap_eq(offload_slab_alloc(&slab, &pool, 4096, &d), -1,
	    "slab: full slab refuses (the engine falls back)");

	/* b's last copy is still running: its block is not reused. */
	offload_event_take(&pool, &ev);
	offload_event_record(&pool, ev, 1);
	offload_slab_free(&slab, &pool, b, 513, ev);
	offload_event_unref(&pool, ev);
	tap_ok(offload_slab_alloc(&slab, &pool, 1024, &d) != 0 || d != b,
	    "slab: block not reused before its copy's event completed");
	if (d != b)
		offload_slab_free(&slab, &pool, d, 1024, OFFLOAD_NO_EVENT);
	fake_done[pool.slots[ev].handle] = 1;
	tap_ok(offload_slab_alloc(&slab, &pool, 1024, &d) == 0 && d == b,
	    "slab: reused once the event completed");
	tap_eq(pool.slots[ev].refs, 0, "slab: event reference given back");

	offload_slab_free(&slab, &pool, a, 100, OFFLOAD_NO_EVENT);
	offload_slab_free(&slab, &pool, c, 1024, OFFLOAD_NO_EVENT);
	offload_slab_free(&slab, &pool, d, 1024, OFFLOAD_NO_EVENT);
	tap_ok(slab.used == 0 && slab.nfree == 1 && slab.free[0].len == 4096,
	    "slab: freed blocks coalesce into one range");

	offload_slab_alloc(&slab, &pool, 600, &a);
	offload_event_take(&pool, &ev);
	offload_event_record(&pool, ev, 1);
	offload_slab_free(&slab, &pool, a, 600, ev);
	offload_event_unref(&pool, ev);
	offload_slab_reset(&slab, &pool);
	tap_ok(slab.used == 0 && slab.npending == 0 &&
	    pool.slots[ev].refs == 0, "slab: reset after a sync frees all");
	offload_slab_clear(&slab, &pool);
	offload_event_destroy(&pool);
}

static void
key_init(struct offload_key *k, uint64_t storage, uint64_t generation)
{
	memset(k, 0, sizeof *k);
	k->storage = storage;
	k->generation = generation;
	k->ndim = 2;
	k->shape[0] = 4;
	k->shape[1] = 8;
	k->stride[0] = 8;
	k->stride[1] = 1;
}

static void
test_dedupe(void)
{
	struct offload_dedupe	d;
	struct offload_key	k1, k2, view;
	uint64_t		id = 0;
	int			i, found;

	offload_dedupe_init(&d);
	key_init(&k1, 0x7000, 1);
	key_init(&k2, 0x7000, 2);	/* the same address, reused */
	view = k1;
	view.stride[0] = 1;
	view.stride[1] = 4;
	tap_eq(offload_dedupe_insert(&d, &k1, 10), 1, "dedupe: insert");
	tap_ok(offload_dedupe_find(&d, &k1, 1, &id) == 1 && id == 10,
	    "dedupe: a live tensor's key hits");
	tap_eq(offload_dedupe_find(&d, &k2, 1, &id), 0,
	    "dedupe: a reused address with a new generation is not a hit");
	tap_eq(offload_dedupe_find(&d, &k2, 0, &id), 1,
	    "dedupe: ignoring generations (the bug) would hit");
	tap_eq(offload_dedupe_find(&d, &view, 1, &id), 0,
	    "dedupe: another stride is another key");
	tap_eq(offload_dedupe_release(&d, &k1, 11), 0,
	    "dedupe: release by another id leaves the key");
	tap_eq(offload_dedupe_release(&d, &k1, 10), 1,
	    "dedupe: release by its id removes it");
	tap_eq(offload_dedupe_find(&d, &k1, 1, &id), 0,
	    "dedupe: released key no longer hits");
	for (i = 0; i < 1000; i++) {
		key_init(&k1, 0x100000 + (uint64_t)i * 4096, 1);
		offload_dedupe_insert(&d, &k1, (uint64_t)i);
	}
	key_init(&k1, 0x100000 + 777 * 4096, 1);
	tap_ok(d.count == 1000 && offload_dedupe_find(&d, &k1, 1, &id) &&
	    id == 777, "dedupe: table grows and still finds keys");
	offload_dedupe_clear(&d);
	for (i = 1; i <= 1000; i++) {	/* one address, given out again */
		key_init(&k1, 0x7000, (uint64_t)i);
		offload_dedupe_insert(&d, &k1, (uint64_t)i);
	}
	key_init(&k1, 0x7000, 600);
	tap_ok(offload_dedupe_release(&d, &k1, 600) &&
	    !offload_dedupe_find(&d, &k1, 1, &id), "dedupe: one generation of "
	    "an address given out 1000 times released");
	for (found = 0, i = 1; i <= 1000; i++) {
		key_init(&k1, 0x7000, (uint64_t)i);
		found += offload_dedupe_find(&d, &k1, 1, &id) &&
		    id == (uint64_t)i;
	}
	tap_eq(found, 999, "dedupe: every other generation of it finds its "
	    "own tensor");
	key_init(&k1, 0x7000, 600);
	tap_ok(offload_dedupe_find(&d, &k1, 0, &id) && id != 600,
	    "dedupe: ignoring generations (the bug), the released one hits "
	    "another tensor");
	offload_dedupe_clear(&d);
	tap_eq((int64_t)d.count, 0, "dedupe: clear");
}

static void
test_stash(void)
{
	struct offload_stash	 st;
	struct offload_entry	*e;
	int			 i;

	offload_stash_init(&st);
	for (i = 0; i < 7; i++)
		offload_stash_move(&st, offload_stash_add(&st), OFFLOAD_FWD);
	tap_ok(st.nfwd == 7 && st.live == 7, "stash: 7 sources stashed");
	e = offload_stash_oldest_fwd(&st);
	tap_eq((int64_t)e->id, 1, "stash: the oldest is reaped first");
	offload_stash_move(&st, e, OFFLOAD_HOST);
	/* Backward took entry 2 straight from the stash. */
	offload_stash_move(&st, offload_stash_get(&st, 2), OFFLOAD_GONE);
	e = offload_stash_oldest_fwd(&st);
	tap_eq((int64_t)e->id, 3, "stash: reaping skips what was unpacked");
	tap_ok(st.nfwd == 5 && st.live == 6 && st.nbwd == 0,
	    "stash: counters follow the states");
	offload_stash_reset(&st);
	tap_ok(st.nfwd == 0 && st.live == 0 &&
	    offload_stash_get(&st, 3) == NULL,
	    "stash: reset forgets the step, old ids find nothing");
	tap_eq((int64_t)offload_stash_add(&st)->id, 8,
	    "stash: ids keep growing across steps");
	offload_stash_free(&st);
}

static void
test_budget(void)
{
	struct offload_budget	b;
	uint64_t		seq[] = { 40, 30, 20, 10 };
	uint8_t			none[4] = { 0 }, first[4] = { 1, 0, 0, 0 };
	int			i, got[4];

	tap_eq((int64_t)offload_budget_select(seq, none, 4, 5, 35), 2,
	    "budget: offload the earliest until the rest fits");
	tap_eq((int64_t)offload_budget_select(seq, none, 4, 5, 1000), 0,
	    "budget: nothing offloaded when all fits");
	tap_eq((int64_t)offload_budget_select(seq, none, 4, 50, 20), 4,
	    "budget: everything offloaded when nothing fits");
	tap_eq((int64_t)offload_budget_select(seq, first, 4, 5, 60), 3,
	    "budget: an alive candidate counts as kept, later ones go");

	offload_budget_init(&b, 35);
	offload_budget_step(&b);
	for (i = 0; i < 4; i++)
		got[i] = offload_budget_decide(&b, seq[i], -1, (size_t)i);
	tap_ok(got[0] && got[1] && got[2] && got[3],
	    "budget: the learning step offloads every candidate");
	offload_budget_fixed(&b, 5);
	offload_budget_step(&b);
	for (i = 0; i < 4; i++)
		got[i] = offload_budget_decide(&b, seq[i], -1, (size_t)i);
	tap_ok(got[0] && got[1] && !got[2] && !got[3],
	    "budget: later steps keep the last layers' tensors");
	/*
	 * Candidate 0 outlived its copy: kept; with it the rest can no
	 * longer fit, so every other candidate goes.
	 */
	offload_budget_alive(&b, 0, 0);
	offload_budget_fixed(&b, 5);
	offload_budget_step(&b);
	for (i = 0; i < 4; i++)
		got[i] = offload_budget_decide(&b, seq[i], -1, (size_t)i);
	tap_ok(!got[0] && got[1] && got[2] && got[3],
	    "budget: an alive candidate stays, the others make room");
	offload_budget_fixed(&b, 5);
	offload_budget_step(&b);
	tap_eq(offload_budget_decide(&b, 41, -1, 0), 1,
	    "budget: another size at that index forgets the flag");
	offload_budget_free(&b);

	offload_budget_init(&b, -1);
	offload_budget_step(&b);
	tap_eq(offload_budget_decide(&b, 1, -1, 0), 1,
	    "budget: off offloads all");
	offload_budget_alive(&b, 0, 0);
	offload_budget_step(&b);
	tap_eq(offload_budget_decide(&b, 1, -1, 0), 0,
	    "budget: off still keeps an alive candidate");
	offload_budget_step(&b);
	tap_ok(offload_budget_decide(&b, 1, 1, 0) == 0 &&
	    offload_budget_decide(&b, 1, 0, 1) == 0 &&
	    offload_budget_decide(&b, 1, 1, 2) == 1,
	    "budget: a cutoff the caller places decides, but an alive "
	    "candidate stays");
	offload_budget_free(&b);

	/*
	 * Packs 0, 2 and 3 make candidates of one size (pack 1 is a dedupe
	 * hit) and the one of pack 3 outlived its copy.  In the next step
	 * pack 1 makes a candidate too: the flag stays with pack 3, now
	 * candidate 3, and the tensor of pack 2, now candidate 2, goes.
	 */
	offload_budget_init(&b, -1);
	offload_budget_step(&b);
	got[0] = offload_budget_decide(&b, 8, -1, 0);
	got[1] = offload_budget_decide(&b, 8, -1, 2);
	got[2] = offload_budget_decide(&b, 8, -1, 3);
	offload_budget_alive(&b, 2, 3);
	offload_budget_step(&b);
	for (i = 0; i < 4; i++)
		got[i] = offload_budget_decide(&b, 8, -1, (size_t)i);
	tap_ok(got[0] && got[1] && got[2] && !got[3] && b.alive[3] &&
	    !b.alive[2],
	    "budget: an alive flag stays with its pack when another pack "
	    "makes a candidate before it");
	offload_budget_free(&b);
}

/*
 * A learned step of 3 candidates of 100 bytes (the second kept anyway:
 * its storage outlived its copy): forward hooks see 1, 2, 3 candidates
 * alive over 1000, 1100, 1200 bytes; backward hooks over 1500, 1300,
 * 1100 unpack them last first, so 3, 2, 1 are alive.
 */
static void
learn_profile(struct offload_profile *p)
{
	static const int64_t	base[6] = { 1000, 1100, 1200, 1500, 1300, 1100 };
	uint64_t		bytes[3] = { 100, 100, 100 };
	uint8_t			alive[3] = { 0, 1, 0 };
	int			h;

	offload_profile_begin(p, 1000, 16);
	for (h = 0; h < 6; h++) {
		offload_profile_hook(p, h >= 3, 100);
		if (h < 3)
			offload_profile_live(p, (uint32_t)h + 1);
		offload_profile_sample(p, base[h]);
		if (h >= 3)
			offload_profile_gone(p, (size_t)(5 - h),
			    (uint32_t)(5 - h));
	}
	offload_profile_end(p, bytes, alive, 3);
}

static uint32_t
until(const struct offload_profile *p, uint32_t pack)
{
	return (offload_profile_until(p, pack, OFFLOAD_UNUSED));
}

/*
 * Packs 0 and 2 make entries, pack 1 is a dedupe hit on pack 0's; pack 2's
 * entry is never unpacked, pack 0's at the last of 3 unpacks.  Returns
 * what enter returned after the step.
 */
static int
learn_shared(struct offload_profile *p, int64_t enter_mem)
{
	uint64_t	bytes[2] = { 100, 100 };
	uint8_t		alive[2] = { 0, 0 };
	int		h, learn;

	if ((learn = offload_profile_begin(p, enter_mem, 16)) != 1)
		return (learn);
	for (h = 0; h < 3; h++) {
		offload_profile_hook(p, 0, 100);
		if (h == 1)
			offload_profile_owner(p, 0);
		offload_profile_sample(p, 1000);
	}
	for (h = 3; h < 6; h++) {
		if (h == 5)
			offload_profile_gone(p, 0, 0);
		offload_profile_hook(p, 1, 0);
		offload_profile_sample(p, 1000);
	}
	offload_profile_end(p, bytes, alive, 2);
	return (learn);
}

static void
test_profile_packs(void)
{
	struct offload_profile	p;
	int			learn[4];

	offload_profile_init(&p);
	learn[0] = learn_shared(&p, 1000);
	tap_ok(learn[0] == 1 && until(&p, 0) == 5 && until(&p, 1) == 5 &&
	    until(&p, 2) == OFFLOAD_UNUSED && until(&p, 3) == OFFLOAD_UNKNOWN,
	    "profile: a pack goes with its entry's last unpack; never "
	    "unpacked, not learned (%u %u %u %u)", until(&p, 0), until(&p, 1),
	    until(&p, 2), until(&p, 3));
	tap_ok(offload_profile_until(&p, 2, until(&p, 0)) == 5 &&
	    offload_profile_until(&p, 3, until(&p, 0)) == OFFLOAD_UNKNOWN,
	    "profile: an entry of several packs is unpacked at the latest");
	/* The first profile relearns when memory moved, a later one shifts. */
	learn[1] = learn_shared(&p, 1100);
	learn[2] = learn_shared(&p, 1200);
	learn[3] = learn_shared(&p, 900);
	tap_ok(learn[1] == 1 && learn[2] == 0 && learn[3] == 0 &&
	    p.shift == 900 - 1100,
	    "profile: memory moved: the first profile is learned again, the "
	    "second shifted (learned %d %d %d)", learn[1], learn[2], learn[3]);
	offload_profile_free(&p);
}

static void
test_profile(void)
{
	struct offload_profile	p;
	int			h;

	offload_profile_init(&p);
	tap_eq(offload_profile_begin(&p, 1000, 16), 1,
	    "profile: measured, nothing learned: learn");
	offload_profile_init(&p);
	learn_profile(&p);
	tap_ok(p.valid && p.n == 6, "profile: a measured step is learned");
	tap_eq(offload_profile_begin(&p, 1010, 16), 0,
	    "profile: memory at enter within the tolerance: follow it");
	/* Keeping all: 1500 + 100 + 100 (the kept one counts 0). */
	tap_eq(offload_profile_peak(&p, 0), 1710,
	    "profile: peak keeping all, shifted by enter memory");
	tap_eq((int64_t)offload_profile_cutoff(&p, 1620), 1,
	    "profile: cutoff offloads the earliest needed");
	tap_eq((int64_t)offload_profile_cutoff(&p, 100), 3,
	    "profile: nothing fits: offload every candidate");
	offload_profile_plan(&p, 3, 1610);
	/* A hook starts from the sample before it: 1500 at hook 4. */
	tap_ok(p.room[0] == 600 && p.room[3] == 100 && p.room[4] == 100 &&
	    p.room[5] == 300, "profile: room is the headroom of each hook");
	for (h = 0; h < 4; h++)
		offload_profile_hook(&p, h >= 3, 100);
	tap_eq(offload_profile_book(&p, until(&p, 0), 100), 1,
	    "profile: a buffer fits every hook until its unpack: booked");
	tap_eq(offload_profile_book(&p, until(&p, 1), 50), 0,
	    "profile: the next does not fit the hooks the first took");
	offload_profile_hook(&p, 1, 0);
	offload_profile_hook(&p, 1, 0);
	tap_eq(offload_profile_book(&p, until(&p, 1), 150), 1,
	    "profile: past its unpack a buffer holds the current hook only");
	offload_profile_hook(&p, 1, 0);
	offload_profile_end(&p, NULL, NULL, 0);
	tap_eq(offload_profile_begin(&p, 1000, 16), 1,
	    "profile: a step with other hooks makes the next one learn");
	offload_profile_free(&p);
}

int
main(void)
{
	tap_plan(55);
	test_slab();
	test_dedupe();
	test_stash();
	test_budget();
	test_profile();
	test_profile_packs();
	return (tap_done());
}
