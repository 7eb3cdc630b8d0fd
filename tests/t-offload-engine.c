/*
 * t-offload-engine.c: the offload engine's decisions over a fake runtime.
 *
 * Streams, events and copies are numbers; no event ever completes, so
 * every source the engine lets go is one it made the compute stream wait
 * for.  Covers:
 *
 *  - the hand-over from forward to backward: in budget mode the budget's
 *    bound leaves the slack of the last tensor kept, so a source can
 *    still be held when backward begins; the first vramtrace_offload_reached
 *    of the step lets it go (a DROP request, compute waiting for its copy).
 *    Without a budget the held sources are the last layer's, which backward
 *    uses first: they stay;
 *  - max_memory: a learning step measured by the test (memory of a small
 *    "program" plus what the engine holds) gives the profile; the next
 *    steps, measuring nothing, offload only the earliest tensors the limit
 *    needs, hold sources within the headroom of each hook, and bring the
 *    offloaded ones back ahead within the headroom left; a step with other
 *    tensors, or memory at enter that moved, makes the next one learn;
 *  - a step that would offload everything keeps the last tensors whose
 *    stay does not raise the predicted peak (until a step that kept them
 *    goes over max_memory), where the learned step made them, whatever
 *    number a later step gives them;
 *  - a backward run after the context ended still brings tensors back
 *    ahead, and its end lets go of what it brought back and never used;
 *  - a storage saved twice is one candidate whether or not its first copy
 *    was done (timing), and stays with its first save when the engine kept
 *    that: the profile stays valid;
 *  - idle steps: under a max_memory or a budget with room for every tensor
 *    and every cast made again, a step may run without the hooks; what
 *    the engine learned stays through such steps, and one that went over
 *    max_memory, or in budget mode past its predicted peak, makes the
 *    next learn;
 *  - batches of other lengths: a step whose tensors are larger is planned
 *    at their scale, a smaller one as the learned step, and neither makes
 *    the next learn.
 */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "fake-runtime.h"
#include "tap.h"

#define COMPUTE		7		/* the caller's stream */
#define BYTES		100		/* each saved tensor */

/* Whether the queued requests hold a DROP of id; empties the queue. */
static int
dropped(struct vramtrace_offload *e, uint64_t id)
{
	struct vramtrace_offload_request	r;
	int					found = 0;

	while (vramtrace_offload_next(e, &r))
		found |= r.kind == VRAMTRACE_OFFLOAD_REQ_DROP && r.id == id;
	return (found);
}

static uint64_t	tensor_bytes = BYTES;	/* a longer or shorter batch's */
static uint64_t	tensor_first;		/* tensor 0's, when not 0 */

/* Saved tensor i of tensor_bytes (its own storage) in generation gen. */
static void
tensor(struct vramtrace_offload_tensor *t, int i, uint64_t gen)
{
	memset(t, 0, sizeof *t);
	t->storage = t->src = 0x10000 * (uint64_t)(i + 1);
	t->generation = gen;
	t->bytes = i == 0 && tensor_first != 0 ? tensor_first : tensor_bytes;
	t->ndim = 1;
	t->shape[0] = (int64_t)t->bytes;
	t->stride[0] = 1;
}

/*
 * Two steps of three saved tensors of BYTES each, the second stopped when
 * backward begins: returns whether the first vramtrace_offload_reached of
 * the second step dropped the first tensor's source, and sets *waits to
 * the waits of the compute stream it issued.
 */
static int
second_step_drops(int64_t budget, int *waits)
{
	struct vramtrace_offload_config	 cfg;
	struct vramtrace_offload_tensor	 t;
	struct vramtrace_offload	*e;
	uint64_t			 id[3], got, n;
	int				 step, i, rc, found;

	vramtrace_offload_config_init(&cfg);
	cfg.budget = budget;
	cfg.min_offload_size = 1;
	cfg.slab_bytes = 4096;
	if ((e = offload_engine_create(&fake_runtime_ops, &cfg, NULL, 0)) == NULL)
		return (-1);
	for (step = 0; step < 2; step++) {
		vramtrace_offload_enter(e, -1);
		dropped(e, 0);
		for (i = 0; i < 3; i++) {
			tensor(&t, i, (uint64_t)(step * 3 + i + 1));
			id[i] = 0;
			vramtrace_offload_pack(e, &t, COMPUTE, &id[i]);
		}
		dropped(e, 0);
		if (step == 1)
			break;
		vramtrace_offload_reached(e, -1, COMPUTE);
		for (i = 2; i >= 0; i--) {
			rc = vramtrace_offload_unpack(e, id[i], COMPUTE, &n);
			if (rc == VRAMTRACE_OFFLOAD_NEED_BUFFER) {
				vramtrace_offload_restore(e, id[i], 0x1000,
				    COMPUTE);
				vramtrace_offload_unpack(e, id[i], COMPUTE,
				    &got);
			}
		}
		vramtrace_offload_exit(e);
	}
	fake_runtime_waits = 0;
	vramtrace_offload_reached(e, -1, COMPUTE);
	*waits = fake_runtime_waits;
	found = id[0] != 0 && dropped(e, id[0]);
	vramtrace_offload_exit(e);
	dropped(e, 0);
	vramtrace_offload_free(e);
	return (found);
}

/*
 * The program of the max_memory steps: four saved tensors; what it
 * allocates itself (the engine's holdings aside) after each pack and
 * before each unpack, last packed first.  The loss makes the peak when
 * backward begins.
 */
#define NT		4
static const int64_t	fwd_mem[NT] = { 1000, 1050, 1100, 1300 };
static const int64_t	bwd_mem[NT] = { 1300, 1200, 1100, 1000 };

/*
 * Another program: the peak comes after backward unpacked the last
 * tensor (a language model's loss: its backward makes the step's peak
 * once the log-probabilities came back).
 */
static const int64_t	fwd_late[NT] = { 1000, 1050, 1100, 1150 };
static const int64_t	bwd_late[NT] = { 1150, 1500, 1100, 1000 };

static const int64_t	*prog_fwd = fwd_mem;	/* the program run */
static const int64_t	*prog_bwd = bwd_mem;
static int		 prog_casts;	/* casts of BYTES it packs first */

struct step_result {
	int	learn;			/* what enter returned */
	int	rc[NT];			/* what pack returned */
	int	from_buffer;		/* unpacks of a buffer brought back */
	int	alloc_first;		/* ALLOC requests at backward's start */
	int	fwd_waits;		/* compute waited on a copy in forward */
	int	alloc0;			/* ALLOC requests for the first tensor */
};

/* Bytes the engine holds on the GPU now. */
static int64_t
engine_held(struct vramtrace_offload *e)
{
	struct vramtrace_offload_stats	s;

	vramtrace_offload_stats(e, &s);
	return ((int64_t)(s.fwd_stash + s.bwd_stash) * BYTES);
}

static uint64_t	first_id;		/* the step's first tensor */
static int	first_allocs;		/* ALLOC requests for it */

/*
 * Serve the queued requests as the binding does (restore what ALLOC asks
 * for); returns how many ALLOC requests there were.
 */
static int
serve(struct vramtrace_offload *e)
{
	struct vramtrace_offload_request	r;
	int					n = 0;

	while (vramtrace_offload_next(e, &r)) {
		if (r.kind != VRAMTRACE_OFFLOAD_REQ_ALLOC)
			continue;
		n++;
		first_allocs += r.id == first_id;
		vramtrace_offload_restore(e, r.id, 0x9000, COMPUTE);
	}
	return (n);
}

/*
 * One step of the program with ntensors saved tensors (NT, or fewer for a
 * step that differs), memory measured only while the engine learns; with
 * skip0 backward never unpacks the first tensor (as selective
 * checkpointing's early stop leaves the last output it saved).
 */
static void
program_step_skip(struct vramtrace_offload *e, int64_t enter_mem,
    int ntensors, int skip0, struct step_result *r)
{
	struct vramtrace_offload_tensor	t;
	struct vramtrace_offload_stats	s;
	uint64_t			id[NT], n, waits;
	int				i, learn, allocs;

	memset(r, 0, sizeof *r);
	vramtrace_offload_stats(e, &s);
	waits = s.fwd_waits;
	r->learn = learn = vramtrace_offload_enter(e, enter_mem);
	serve(e);
	for (i = 0; i < prog_casts; i++) {
		tensor(&t, 100 + i, 1);
		t.flags = VRAMTRACE_OFFLOAD_TENSOR_KEEP |
		    VRAMTRACE_OFFLOAD_TENSOR_RECOMPUTE;
		vramtrace_offload_pack(e, &t, COMPUTE, &n);
	}
	for (i = 0; i < ntensors; i++) {
		tensor(&t, i, 100 + (uint64_t)i);
		id[i] = 0;
		r->rc[i] = vramtrace_offload_pack(e, &t, COMPUTE, &id[i]);
		if (i == 0) {
			first_id = id[0];
			first_allocs = 0;
		}
		serve(e);
		if (learn)
			vramtrace_offload_sample(e, prog_fwd[i] + engine_held(e));
	}
	vramtrace_offload_stats(e, &s);
	r->fwd_waits = (int)(s.fwd_waits - waits);
	for (i = ntensors - 1; i >= 0; i--) {
		vramtrace_offload_reached(e, learn ?
		    prog_bwd[NT - 1 - i] + engine_held(e) : -1, COMPUTE);
		allocs = serve(e);
		if (i == ntensors - 1)
			r->alloc_first = allocs;
		if (r->rc[i] == VRAMTRACE_OFFLOAD_KEPT || (i == 0 && skip0))
			continue;
		switch (vramtrace_offload_unpack(e, id[i], COMPUTE, &n)) {
		case VRAMTRACE_OFFLOAD_NEED_BUFFER:
			vramtrace_offload_restore(e, id[i], 0x9000, COMPUTE);
			vramtrace_offload_unpack(e, id[i], COMPUTE, &n);
			break;
		case VRAMTRACE_OFFLOAD_FROM_BUFFER:
			r->from_buffer++;
			break;
		}
		serve(e);
	}
	r->alloc0 = first_allocs;
	vramtrace_offload_exit(e);
	serve(e);
}

static void
program_step(struct vramtrace_offload *e, int64_t enter_mem, int ntensors,
    struct step_result *r)
{
	program_step_skip(e, enter_mem, ntensors, 0, r);
}

static struct vramtrace_offload *
engine_stash(int64_t budget, uint64_t max_memory, uint64_t prefetch,
    uint32_t stash)
{
	struct vramtrace_offload_config	cfg;

	vramtrace_offload_config_init(&cfg);
	cfg.max_fwd_stash = stash;
	cfg.budget = budget;
	cfg.max_memory = max_memory;
	cfg.prefetch = prefetch;
	cfg.min_offload_size = 1;
	cfg.slab_bytes = 4096;
	return (offload_engine_create(&fake_runtime_ops, &cfg, NULL, 0));
}

static struct vramtrace_offload *
engine(int64_t budget, uint64_t max_memory, uint64_t prefetch)
{
	return (engine_stash(budget, max_memory, prefetch, 5));
}

static void
test_max_memory(void)
{
	struct vramtrace_offload	*e;
	struct vramtrace_offload_stats	 s;
	struct step_result		 r;
	uint64_t			 waits;
	int				 kept;

	/*
	 * 1530 less its 1% margin is 1515: keeping the last two tensors
	 * peaks at 1300 + 200 when backward begins, keeping three at 1600.
	 */
	if ((e = engine(-1, 1530, 0)) == NULL) {
		tap_ok(0, "max_memory: engine");
		return;
	}
	program_step(e, 1000, NT, &r);
	tap_ok(r.learn == 1 && r.rc[0] == VRAMTRACE_OFFLOAD_STASHED &&
	    r.rc[3] == VRAMTRACE_OFFLOAD_STASHED,
	    "max_memory: the first step learns, offloading every tensor");

	program_step(e, 1000, NT, &r);
	vramtrace_offload_stats(e, &s);
	kept = (r.rc[2] == VRAMTRACE_OFFLOAD_KEPT) +
	    (r.rc[3] == VRAMTRACE_OFFLOAD_KEPT);
	tap_ok(r.learn == 0 && r.rc[0] == VRAMTRACE_OFFLOAD_STASHED &&
	    r.rc[1] == VRAMTRACE_OFFLOAD_STASHED && kept == 2,
	    "max_memory: then only the two earliest tensors go");
	tap_eq((int64_t)s.predicted_peak, 1500,
	    "max_memory: predicted peak 1500 within 1515");
	tap_ok(r.fwd_waits == 2,
	    "max_memory: forward lets sources go where the headroom ends");
	tap_ok(r.alloc_first == 0 && r.from_buffer == 2 && s.bwd_waits == 0,
	    "max_memory: no prefetch at the peak, then both come back ahead");

	program_step(e, 1000, NT, &r);
	tap_eq(r.learn, 0, "max_memory: a step like the profile keeps it");
	program_step(e, 1000, NT - 1, &r);
	program_step(e, 1000, NT, &r);
	tap_eq(r.learn, 1, "max_memory: after a step that differs, relearn");
	program_step(e, 1000, NT, &r);
	program_step(e, 1000 + 100, NT, &r);
	vramtrace_offload_stats(e, &s);
	tap_ok(r.learn == 0 && s.predicted_peak == 1500 &&
	    r.rc[2] == VRAMTRACE_OFFLOAD_STASHED &&
	    r.rc[3] == VRAMTRACE_OFFLOAD_KEPT,
	    "max_memory: memory at enter moved under a later profile: shifted, "
	    "one more tensor goes (learn %d, predicted %" PRIu64 ")", r.learn,
	    s.predicted_peak);
	vramtrace_offload_free(e);

	/*
	 * A step went 10 over 1530 (temporaries no sample saw): the plans
	 * keep 10 and the 1% margin (15) more below (1490; without the margin
	 * again, 1505), so keeping two tensors (1500) no longer fits and one
	 * more goes; a peak within the limit changes nothing,
	 * and no report keeps more than an eighth of the limit below it.
	 */
	if ((e = engine(-1, 1530, 0)) == NULL)
		return;
	program_step(e, 1000, NT, &r);
	vramtrace_offload_peak(e, 1530);
	program_step(e, 1000, NT, &r);
	vramtrace_offload_stats(e, &s);
	tap_ok(s.predicted_peak == 1500 && r.rc[2] == VRAMTRACE_OFFLOAD_KEPT,
	    "max_memory: a peak within it changes no plan");
	vramtrace_offload_peak(e, 1540);
	program_step(e, 1000, NT, &r);
	vramtrace_offload_stats(e, &s);
	tap_ok(r.learn == 0 && s.predicted_peak == 1400 &&
	    r.rc[2] == VRAMTRACE_OFFLOAD_STASHED &&
	    r.rc[3] == VRAMTRACE_OFFLOAD_KEPT,
	    "max_memory: a step 10 over it: the next keeps 10 and the margin "
	    "more below, one more tensor goes (predicted %" PRIu64 ")",
	    s.predicted_peak);
	vramtrace_offload_peak(e, 1 << 30);
	program_step(e, 1000, NT, &r);
	vramtrace_offload_stats(e, &s);
	tap_ok(s.predicted_peak == 1300 && r.rc[3] == VRAMTRACE_OFFLOAD_STASHED,
	    "max_memory: a huge peak keeps at most an eighth below (1324): "
	    "every tensor goes (predicted %" PRIu64 ")", s.predicted_peak);
	vramtrace_offload_free(e);

	/*
	 * A limit that even offloading everything misses: every tensor goes,
	 * under the predicted peak (1300) rather than the limit, which left
	 * no headroom anywhere: past the peak, where memory falls, tensors
	 * come back ahead (without the plan, all four on demand).
	 */
	if ((e = engine(-1, 1000, 0)) == NULL)
		return;
	program_step(e, 1000, NT, &r);
	vramtrace_offload_stats(e, &s);
	waits = s.bwd_waits;
	program_step(e, 1000, NT, &r);
	vramtrace_offload_stats(e, &s);
	waits = s.bwd_waits - waits;
	tap_ok(r.rc[3] == VRAMTRACE_OFFLOAD_STASHED &&
	    s.predicted_peak == 1300 && r.from_buffer == 2 && waits == 2,
	    "max_memory out of reach: everything goes, planned under the "
	    "predicted peak (%d brought back ahead, %" PRIu64 " on demand)",
	    r.from_buffer, waits);
	vramtrace_offload_free(e);

	/*
	 * No limit, one source held: every tensor goes and comes back ahead
	 * where the peak allows; the first is never unpacked.
	 */
	if ((e = engine_stash(-1, 0, 0, 1)) == NULL)
		return;
	program_step_skip(e, 1000, NT, 1, &r);
	kept = r.learn;
	program_step_skip(e, 1000, NT, 1, &r);
	tap_ok(kept == 1 && r.learn == 0 && r.alloc0 == 0 &&
	    r.from_buffer >= 1, "unused: after the learning step, others are "
	    "brought back ahead, not the one never unpacked");
	vramtrace_offload_free(e);
}

/*
 * The late-peak program, 1500 when tensor 2 is unpacked: keeping tensor 3
 * adds 100 only up to its own unpack (1250 at most), keeping 2 as well
 * adds it at the peak (1600).  So a step that would offload everything
 * keeps tensor 3 (no copy out and back between forward and backward),
 * without max_memory or with one out of reach, until a step that kept it
 * goes over max_memory.
 */
static void
test_free_tail(void)
{
	struct vramtrace_offload	*e;
	struct vramtrace_offload_stats	 s;
	struct step_result		 r;
	int				 learn;

	prog_fwd = fwd_late;
	prog_bwd = bwd_late;
	if ((e = engine(-1, 0, 0)) == NULL) {
		tap_ok(0, "free tail: engine");
		goto out;
	}
	program_step(e, 1000, NT, &r);
	learn = r.learn;
	program_step(e, 1000, NT, &r);
	vramtrace_offload_stats(e, &s);
	tap_ok(learn == 1 && r.learn == 0 &&
	    r.rc[0] == VRAMTRACE_OFFLOAD_STASHED &&
	    r.rc[2] == VRAMTRACE_OFFLOAD_STASHED &&
	    r.rc[3] == VRAMTRACE_OFFLOAD_KEPT && s.predicted_peak == 1500,
	    "free tail: without max_memory the last tensor, free at the peak, "
	    "stays (rc %d %d, predicted %" PRIu64 ")", r.rc[2], r.rc[3],
	    s.predicted_peak);
	vramtrace_offload_free(e);

	/* A step over max_memory before any kept it changes nothing. */
	if ((e = engine(-1, 1000, 0)) == NULL)
		goto out;
	program_step(e, 1000, NT, &r);
	vramtrace_offload_peak(e, 1500);
	program_step(e, 1000, NT, &r);
	tap_ok(r.rc[2] == VRAMTRACE_OFFLOAD_STASHED &&
	    r.rc[3] == VRAMTRACE_OFFLOAD_KEPT,
	    "free tail: with max_memory out of reach, the same");
	vramtrace_offload_peak(e, 1600);
	program_step(e, 1000, NT, &r);
	tap_ok(r.learn == 0 && r.rc[3] == VRAMTRACE_OFFLOAD_STASHED,
	    "free tail: after a step that kept it went over max_memory, "
	    "everything goes (rc %d %d learn %d)", r.rc[2], r.rc[3], r.learn);
	vramtrace_offload_free(e);
out:
	prog_fwd = fwd_mem;
	prog_bwd = bwd_mem;
}

/*
 * The backward of a step that packed n tensors (what pack returned in rc,
 * their ids in id), last packed first: a point reached before each unpack
 * (measured while the engine learns: mem[k] at the k-th, plus what the
 * engine holds), buffers restored on demand; then the step's exit.
 */
static void
backward_exit(struct vramtrace_offload *e, int learn, int n, const int *rc,
    const uint64_t *id, const int64_t *mem)
{
	uint64_t	got;
	int		i;

	for (i = n - 1; i >= 0; i--) {
		vramtrace_offload_reached(e, learn ?
		    mem[n - 1 - i] + engine_held(e) : -1, COMPUTE);
		serve(e);
		if (rc[i] != VRAMTRACE_OFFLOAD_KEPT &&
		    vramtrace_offload_unpack(e, id[i], COMPUTE, &got) ==
		    VRAMTRACE_OFFLOAD_NEED_BUFFER) {
			vramtrace_offload_restore(e, id[i], 0x9000, COMPUTE);
			vramtrace_offload_unpack(e, id[i], COMPUTE, &got);
		}
		serve(e);
	}
	vramtrace_offload_exit(e);
	serve(e);
}

/*
 * One step of the late-peak program saving storages A, B, A again and C,
 * the copies done at once while the engine learns and never otherwise:
 * the learning step lets A go before A's second save, a later step still
 * holds A then.  rc gets what each pack returned; returns what enter
 * returned.
 */
static int
timing_step(struct vramtrace_offload *e, int *rc)
{
	static const int		 storage[NT] = { 0, 1, 0, 2 };
	struct vramtrace_offload_tensor	 t;
	uint64_t			 id[NT];
	int				 i, learn;

	learn = vramtrace_offload_enter(e, 1000);
	serve(e);
	fake_runtime_done = learn;
	for (i = 0; i < NT; i++) {
		tensor(&t, storage[i], 200 + (uint64_t)storage[i]);
		id[i] = 0;
		rc[i] = vramtrace_offload_pack(e, &t, COMPUTE, &id[i]);
		serve(e);
		if (learn)
			vramtrace_offload_sample(e, fwd_late[i] + engine_held(e));
	}
	backward_exit(e, learn, NT, rc, id, bwd_late);
	fake_runtime_done = 0;
	return (learn);
}

/*
 * A's second save is a dedupe hit whether or not A's copy was done and
 * its source let go (the learning step) or not (the next): the steps
 * number the same three candidates, and the plan keeps the last, C.
 */
static void
test_saved_again(void)
{
	struct vramtrace_offload	*e;
	struct vramtrace_offload_stats	 s;
	int				 rc[NT], learned[NT], learn;

	if ((e = engine(-1, 0, 0)) == NULL) {
		tap_ok(0, "saved again: engine");
		return;
	}
	learn = timing_step(e, learned);
	vramtrace_offload_stats(e, &s);
	timing_step(e, rc);
	tap_ok(learn == 1 && s.reaps > 0 &&
	    learned[2] == VRAMTRACE_OFFLOAD_DEDUPED &&
	    rc[2] == VRAMTRACE_OFFLOAD_DEDUPED &&
	    rc[3] == VRAMTRACE_OFFLOAD_KEPT,
	    "saved again: a storage saved after its copy was done and let go "
	    "is one copy, as when it was still held (rc %d then %d %d)",
	    learned[2], rc[2], rc[3]);
	learn = timing_step(e, rc);
	tap_ok(learn == 0 && rc[3] == VRAMTRACE_OFFLOAD_KEPT,
	    "saved again: and the profile holds");
	vramtrace_offload_free(e);
}

/*
 * One step saving storage A, B, then A again (same key), one source held:
 * B's pack lets A go (not its key), so A's second save is a dedupe hit
 * when A was offloaded, kept with it when A was kept.  Returns what enter
 * returned.
 */
static int
twice_step(struct vramtrace_offload *e)
{
	static const int64_t		flat[3] = { 1000, 1000, 1000 };
	struct vramtrace_offload_tensor	t;
	uint64_t			id[3];
	int				i, rc[3], learn;

	learn = vramtrace_offload_enter(e, 1000);
	serve(e);
	for (i = 0; i < 3; i++) {
		tensor(&t, i == 2 ? 0 : i, 50 + (uint64_t)(i == 2 ? 0 : i));
		rc[i] = vramtrace_offload_pack(e, &t, COMPUTE, &id[i]);
		serve(e);
		if (learn)
			vramtrace_offload_sample(e, 1000 + engine_held(e));
	}
	backward_exit(e, learn, 3, rc, id, flat);
	return (learn);
}

static void
test_twice(void)
{
	struct vramtrace_offload	*e;
	int				 learn[3];

	/* Room for everything: the steady steps keep all three. */
	if ((e = engine_stash(-1, (uint64_t)1 << 40, 0, 1)) == NULL)
		return;
	learn[0] = twice_step(e);
	learn[1] = twice_step(e);
	learn[2] = twice_step(e);
	tap_ok(learn[0] == 1 && learn[1] == 0 && learn[2] == 0,
	    "twice: a storage saved again, offloaded then kept: the profile "
	    "holds "
	    "(learned %d %d %d)", learn[0], learn[1], learn[2]);
	vramtrace_offload_free(e);
}

/* Enter a step, measuring nothing, and pack three tensors into id. */
static void
forward_three(struct vramtrace_offload *e, uint64_t *id)
{
	struct vramtrace_offload_tensor	t;
	int				i;

	vramtrace_offload_enter(e, -1);
	serve(e);
	for (i = 0; i < 3; i++) {
		tensor(&t, i, 1 + (uint64_t)i);
		vramtrace_offload_pack(e, &t, COMPUTE, &id[i]);
		serve(e);
	}
}

static void
test_backward_outside(void)
{
	struct vramtrace_offload		*e;
	struct vramtrace_offload_request	 r;
	struct vramtrace_offload_stats		 s;
	uint64_t				 id[3], n;
	int					 i, allocs = 0, dropped0 = 0;

	if ((e = engine(-1, 0, 1 << 20)) == NULL) {
		tap_ok(0, "outside: engine");
		return;
	}
	forward_three(e, id);
	vramtrace_offload_exit(e);
	serve(e);
	vramtrace_offload_reached(e, -1, COMPUTE);
	allocs = serve(e);
	tap_eq(allocs, 3, "outside: backward after exit brings all back ahead");
	for (i = 2; i >= 1; i--) {
		vramtrace_offload_reached(e, -1, COMPUTE);
		serve(e);
		vramtrace_offload_unpack(e, id[i], COMPUTE, &n);
	}
	vramtrace_offload_backward_done(e);
	while (vramtrace_offload_next(e, &r))
		dropped0 |= r.kind == VRAMTRACE_OFFLOAD_REQ_DROP &&
		    r.id == id[0];
	vramtrace_offload_stats(e, &s);
	tap_ok(dropped0 && s.bwd_stash == 0,
	    "outside: its end lets go of a buffer never unpacked");
	vramtrace_offload_free(e);
}

/*
 * Copies done at once, storages A, B, C saved, then A again: backward
 * needs A first.  With room for one buffer at a time, its first call
 * brings A back (the walk takes A at its later save), so A's unpack finds
 * its buffer rather than waiting for one (C's place comes first by A's
 * entry alone).
 */
static void
test_saved_again_first(void)
{
	struct vramtrace_offload_tensor	 t;
	struct vramtrace_offload_stats	 s;
	struct vramtrace_offload	*e;
	uint64_t			 id[4], n;
	int				 i, rc;

	if ((e = engine(-1, 0, 3 * BYTES)) == NULL) {
		tap_ok(0, "saved again first: engine");
		return;
	}
	fake_runtime_done = 1;
	vramtrace_offload_enter(e, -1);
	serve(e);
	for (i = 0; i < 4; i++) {
		tensor(&t, i % 3, 1 + (uint64_t)(i % 3));
		vramtrace_offload_pack(e, &t, COMPUTE, &id[i]);
		serve(e);
	}
	vramtrace_offload_reached(e, -1, COMPUTE);
	serve(e);
	rc = vramtrace_offload_unpack(e, id[3], COMPUTE, &n);
	vramtrace_offload_stats(e, &s);
	tap_ok(id[3] == id[0] && rc == VRAMTRACE_OFFLOAD_FROM_BUFFER &&
	    s.bwd_waits == 0,
	    "saved again: backward's first call brings back the storage saved "
	    "last, before the one packed last (rc %d, %" PRIu64 " on demand)",
	    rc, s.bwd_waits);
	vramtrace_offload_exit(e);
	serve(e);
	fake_runtime_done = 0;
	vramtrace_offload_free(e);
}

/*
 * A storage saved, written in place (its version moves), saved again: the
 * second save is a copy of its own, since the first holds the bytes before
 * the write; saved a third time at the same version, it is the second's.
 */
static void
test_written_between(void)
{
	struct vramtrace_offload_tensor	 t;
	struct vramtrace_offload_stats	 s;
	struct vramtrace_offload	*e;
	uint64_t			 id[4], n;
	int				 i, rc[4], back = 0;
	static const uint32_t		 version[4] = { 0, 0, 1, 1 };

	if ((e = engine(-1, 0, 0)) == NULL) {
		tap_ok(0, "written in place: engine");
		return;
	}
	fake_runtime_done = 1;
	vramtrace_offload_enter(e, -1);
	serve(e);
	for (i = 0; i < 4; i++) {
		tensor(&t, i == 1, 1 + (uint64_t)(i == 1));
		t.version = version[i];
		rc[i] = vramtrace_offload_pack(e, &t, COMPUTE, &id[i]);
		serve(e);
	}
	vramtrace_offload_stats(e, &s);
	for (i = 3; i >= 0; i--) {
		if (vramtrace_offload_unpack(e, id[i], COMPUTE, &n) < 0)
			back = -1;
		serve(e);
	}
	tap_ok(rc[2] == VRAMTRACE_OFFLOAD_STASHED && id[2] != id[0] &&
	    rc[3] == VRAMTRACE_OFFLOAD_DEDUPED && id[3] == id[2] &&
	    s.offloads == 3 && s.dedupe_hits == 1 && back == 0,
	    "written in place between two saves: a copy of its own, then a "
	    "hit at the same version (rc %d %d, %" PRIu64 " copies, %" PRIu64
	    " hits)", rc[2], rc[3], s.offloads, s.dedupe_hits);
	vramtrace_offload_exit(e);
	serve(e);
	fake_runtime_done = 0;
	vramtrace_offload_free(e);
}

/*
 * Without a selection, copies done: the source still held when backward
 * begins (the last packed: forward let the others go) stays until
 * backward unpacks it, rather than going at backward's first call and
 * coming back on demand.
 */
static void
test_backward_keeps(void)
{
	struct vramtrace_offload	*e;
	uint64_t			 id[3], n;
	int				 rc;

	if ((e = engine(-1, 0, 0)) == NULL) {
		tap_ok(0, "backward keeps: engine");
		return;
	}
	fake_runtime_done = 1;
	forward_three(e, id);
	vramtrace_offload_reached(e, -1, COMPUTE);
	serve(e);
	rc = vramtrace_offload_unpack(e, id[2], COMPUTE, &n);
	tap_eq(rc, VRAMTRACE_OFFLOAD_FROM_STASH,
	    "no selection: a source held when backward begins stays until "
	    "unpacked");
	vramtrace_offload_exit(e);
	serve(e);
	fake_runtime_done = 0;
	vramtrace_offload_free(e);
}

/*
 * A step that the binding runs idle: entered, its hooks left out, ended.
 * Returns what vramtrace_offload_idle() said, or -1 when the step learns.
 */
static int
idle_step_at(struct vramtrace_offload *e, int64_t enter_mem)
{
	int	idle;

	if (vramtrace_offload_enter(e, enter_mem) != 0)
		idle = -1;
	else
		idle = vramtrace_offload_idle(e);
	vramtrace_offload_exit(e);
	return (idle);
}

static int
idle_step(struct vramtrace_offload *e)
{
	return (idle_step_at(e, 1000));
}

/*
 * max_memory with room for every tensor: keeping all four peaks at 1700
 * (1300 + 400 when backward begins), within 1800 less its 1% margin.
 * After the learning step the steps run idle, and what the engine learned
 * stays through them; a caller that calls the hooks anyway keeps every
 * tensor; an idle step over max_memory makes the next one learn.  Casts
 * the hooks make again count as kept: two of them (200) leave no room
 * under 1750 (1732).
 */
static void
test_idle(void)
{
	struct vramtrace_offload	*e;
	struct vramtrace_offload_stats	 s;
	struct step_result		 r;
	int				 first, second, i, kept = 0;

	if ((e = engine(-1, 1800, 0)) == NULL) {
		tap_ok(0, "idle: engine");
		return;
	}
	program_step(e, 1000, NT, &r);
	first = idle_step(e);
	second = idle_step(e);
	tap_ok(r.learn == 1 && first == 1 && second == 1,
	    "idle: after the learning step, steps with room for every tensor "
	    "run without the hooks (%d, then %d)", first, second);
	program_step(e, 1000, NT, &r);
	for (i = 0; i < NT; i++)
		kept += r.rc[i] == VRAMTRACE_OFFLOAD_KEPT;
	vramtrace_offload_stats(e, &s);
	tap_ok(r.learn == 0 && kept == NT && s.idle_steps == 2 &&
	    s.learning_steps == 1 && idle_step(e) == 1,
	    "idle: hooks called anyway keep every tensor, nothing relearnt "
	    "(%d kept, %" PRIu64 " idle steps, %" PRIu64 " learning)", kept,
	    s.idle_steps, s.learning_steps);
	vramtrace_offload_peak(e, 1700);
	first = idle_step(e);
	vramtrace_offload_peak(e, 1810);
	second = idle_step(e);
	tap_ok(first == 1 && second == -1,
	    "idle: a peak within max_memory changes nothing, one over it makes "
	    "the next step learn (%d, %d)", first, second);
	vramtrace_offload_free(e);

	if ((e = engine(-1, 1750, 0)) == NULL)
		return;
	prog_casts = 2;
	program_step(e, 1000, NT, &r);
	first = idle_step(e);	/* the hooks left out all the same */
	program_step(e, 1000, NT, &r);
	kept = r.rc[0] == VRAMTRACE_OFFLOAD_KEPT;
	prog_casts = 0;
	program_step(e, 1000, NT, &r);		/* differs: the next learns */
	program_step(e, 1000, NT, &r);
	second = idle_step(e);
	tap_ok(r.learn == 1 && first == 0 && kept == 1 && second == 1,
	    "idle: casts made again count: with two, every tensor kept but "
	    "the hooks stay, a step without them in between (%d); without, "
	    "idle (%d)", first, second);
	vramtrace_offload_free(e);

	/*
	 * One cast, room for it under 1900 (1881): idle.  Idle steps keep
	 * what the last step that packed taught, its cast too: memory at
	 * enter 100 higher (a later profile shifts rather than relearns)
	 * leaves no room with the cast (1900).
	 */
	if ((e = engine(-1, 1900, 0)) == NULL)
		return;
	prog_casts = 1;
	program_step(e, 1000, NT, &r);
	program_step(e, 1000, NT - 1, &r);
	program_step(e, 1000, NT, &r);
	first = idle_step(e) + idle_step(e);
	second = idle_step_at(e, 1100);
	prog_casts = 0;
	tap_ok(r.learn == 1 && first == 2 && second == 0,
	    "idle: the cast is still counted after idle steps (%d, then %d at "
	    "enter 1100)", first, second);
	vramtrace_offload_free(e);

	/*
	 * Budget mode: every tensor (400) within the budget, so the steps
	 * after the learning one run idle; a peak as predicted with every
	 * tensor kept (1700) changes nothing, one past it and the tolerance
	 * makes the next step learn.  Without room for every tensor, or for
	 * the casts the hooks make again (two: 600 over 550), the hooks stay.
	 */
	if ((e = engine(100000, 0, 0)) == NULL)
		return;
	program_step(e, 1000, NT, &r);
	first = idle_step(e);
	vramtrace_offload_peak(e, 1700);
	second = idle_step(e);
	tap_ok(r.learn == 1 && first == 1 && second == 1,
	    "idle: in budget mode with room for every tensor, after the "
	    "learning step (%d, then %d after a peak as predicted)", first,
	    second);
	vramtrace_offload_peak(e, 1700 + (16 << 20) + 1);
	tap_eq(idle_step(e), -1, "idle: in budget mode, an idle step's peak "
	    "past the prediction makes the next step learn");
	vramtrace_offload_free(e);

	if ((e = engine(350, 0, 0)) == NULL)
		return;
	program_step(e, 1000, NT, &r);
	first = idle_step(e);
	vramtrace_offload_free(e);
	if ((e = engine(550, 0, 0)) == NULL)
		return;
	prog_casts = 2;
	program_step(e, 1000, NT, &r);
	second = idle_step(e);
	prog_casts = 0;
	tap_ok(first == 0 && second == 0,
	    "idle: not in budget mode without room for every tensor (%d) or "
	    "for the casts made again (%d)", first, second);
	vramtrace_offload_free(e);
}

/* One step of the program with saved tensors of bytes each. */
static void
program_step_of(struct vramtrace_offload *e, uint64_t bytes,
    struct step_result *r)
{
	tensor_bytes = bytes;
	program_step(e, 1000, NT, r);
	tensor_bytes = BYTES;
}

static int
stashed(const struct step_result *r)
{
	int	i, n = 0;

	for (i = 0; i < NT; i++)
		n += r->rc[i] == VRAMTRACE_OFFLOAD_STASHED;
	return (n);
}

/*
 * Batches of other lengths: the same tensors, larger or smaller.  Under
 * 1530 (1515) the learned step keeps two tensors; a step of twice the
 * size is predicted twice as far above enter (1600 when backward begins
 * with all gone): all four go, and no step relearns.  A shorter one is
 * planned as the learned step.  Under 1800 (idle at the learned size), a
 * step half again as large, seen once, keeps the next steps from idling.
 */
static void
test_scale(void)
{
	struct vramtrace_offload	*e;
	struct vramtrace_offload_stats	 s;
	struct step_result		 r;
	int				 first, second, third;

	if ((e = engine(-1, 1530, 0)) == NULL) {
		tap_ok(0, "scale: engine");
		return;
	}
	program_step(e, 1000, NT, &r);
	program_step_of(e, 200, &r);
	first = stashed(&r);
	vramtrace_offload_stats(e, &s);
	tap_ok(r.learn == 0 && first == NT && s.predicted_peak == 1600,
	    "scale: a step of tensors twice as large offloads all %d "
	    "(predicted %" PRIu64 ")", first, s.predicted_peak);
	program_step_of(e, 100, &r);
	second = stashed(&r);
	program_step_of(e, 50, &r);
	third = stashed(&r);
	vramtrace_offload_stats(e, &s);
	tap_ok(r.learn == 0 && second == 2 && third == 2 &&
	    s.learning_steps == 1, "scale: then the learned size offloads 2, "
	    "a half size as many (%d, %d), nothing relearnt", second, third);
	tensor_first = BYTES;
	program_step_of(e, 200, &r);
	tensor_first = 0;
	program_step(e, 1000, NT, &r);
	tap_eq(r.learn, 1, "scale: a step whose first activation stayed while "
	    "the others grew makes the next learn");
	vramtrace_offload_free(e);

	if ((e = engine(-1, 1800, 0)) == NULL)
		return;
	program_step(e, 1000, NT, &r);
	first = idle_step(e);
	program_step_of(e, 150, &r);
	second = stashed(&r);
	tap_ok(first == 1 && second > 0 && idle_step(e) == 0,
	    "scale: idle at the learned size; a step half again as large "
	    "offloads %d, and the steps after it do not idle", second);
	vramtrace_offload_free(e);
}

/*
 * The slab sized after the first step (1 MiB tensors: 6 MiB) is outgrown
 * by a step of 4 MiB tensors, each beyond it a pinned allocation of its
 * own; at the next enter it is replaced by one that fits, and the steps
 * of that size allocate nothing more.
 */
static void
test_slab_grows(void)
{
	struct vramtrace_offload_config	 cfg;
	struct vramtrace_offload	*e;
	struct vramtrace_offload_stats	 s;
	struct step_result		 r;
	uint64_t			 fallbacks, allocs;

	vramtrace_offload_config_init(&cfg);
	cfg.min_offload_size = 1;
	cfg.slab_bytes = 0;
	if ((e = offload_engine_create(&fake_runtime_ops, &cfg, NULL, 0)) ==
	    NULL) {
		tap_ok(0, "slab: engine");
		return;
	}
	program_step_of(e, 1 << 20, &r);
	program_step_of(e, 1 << 20, &r);
	program_step_of(e, 4 << 20, &r);
	vramtrace_offload_stats(e, &s);
	fallbacks = s.pool_fallbacks;
	program_step_of(e, 4 << 20, &r);
	vramtrace_offload_stats(e, &s);
	allocs = s.host_allocs;
	tap_ok(s.pool_fallbacks == fallbacks && s.slab_bytes >= 16 << 20,
	    "slab: outgrown by a step of larger tensors, it grows at the next "
	    "enter (%" PRIu64 " bytes, %" PRIu64 " fallbacks after)",
	    s.slab_bytes, s.pool_fallbacks - fallbacks);
	program_step_of(e, 4 << 20, &r);
	program_step_of(e, 1 << 20, &r);
	vramtrace_offload_stats(e, &s);
	tap_ok(s.host_allocs == allocs && s.pool_fallbacks == fallbacks,
	    "slab: then no pinned allocation at all (%" PRIu64 " more)",
	    s.host_allocs - allocs);
	vramtrace_offload_free(e);
}

int
main(void)
{
	int	waits;

	fake_runtime_counted = COMPUTE;
	tap_plan(42);
	/*
	 * A budget of two tensors: the second step offloads the first and
	 * keeps the others; with them kept, the bound is reached exactly, so
	 * the first source is still held when backward begins.
	 */
	tap_eq(second_step_drops(2 * BYTES, &waits), 1,
	    "budget: backward's first call lets go of a held source");
	tap_eq(waits, 1, "budget: compute waits for its copy");
	tap_eq(second_step_drops(-1, &waits), 0,
	    "no budget: the last layer's sources stay for backward");
	tap_eq(waits, 0, "no budget: no wait");
	test_max_memory();
	test_free_tail();
	test_saved_again();
	test_saved_again_first();
	test_written_between();
	test_twice();
	test_backward_outside();
	test_backward_keeps();
	test_idle();
	test_scale();
	test_slab_grows();
	return (tap_done());
}
