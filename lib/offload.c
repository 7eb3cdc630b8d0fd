/*
 * offload.c: the activation offload engine.
 *
 * One engine per device.  It owns two side streams (device-to-host d2h and
 * host-to-device h2d), a pool of events, the pinned slab, the entries of
 * the current step with their forward and backward stashes, the dedupe
 * table and the budget selection.  It owns no GPU tensor: the caller (the
 * Python binding) holds sources and restored buffers under entry ids and
 * lets them go when a DROP request says so; it allocates GPU buffers when
 * an ALLOC request (a prefetch) or NEED_BUFFER (an unpack) asks.
 *
 * The invariants of design.md, and where each is kept:
 *
 * 1. A dedupe key names a tensor whose copy the engine still has: it is
 *    inserted when the source enters the forward stash and released when
 *    the entry is unpacked for the last time or dropped
 *    (offload_release_key); a hit must match the generation of the
 *    address (offload-dedupe.c), which tells the storage copied from a
 *    later one at its address once the engine no longer holds it.  So a
 *    storage saved again is a hit whether or not its copy is done, and a
 *    step's candidates do not depend on how fast copies run.
 * 2. vramtrace_offload_exit() syncs the copy streams and empties both
 *    stashes; the binding calls it from a finally block.  _enter() drops
 *    every entry left by a step whose backward never ran (offload_drop_all).
 * 3. Every wait names the stream the caller computes on, passed in with
 *    each call (captured before any side stream is current): d2h waits on
 *    compute before a device-to-host copy; h2d waits on compute (the buffer
 *    was just allocated there) and on the device-to-host copy before a
 *    host-to-device copy; compute waits on that copy before unpack returns,
 *    and on the device-to-host copy before a reaped source is let go.  A
 *    wait of a stream on itself is counted (offload_wait), never issued by
 *    a correct engine.  Slab blocks are reused only after their last copy's
 *    event (offload-slab.c).
 * 4. The slab is allocated on the first enter (a set size) or on the
 *    second (sized from the first step's peak), and then again, larger,
 *    only at an enter after a step that did not fit (offload_slab_size).
 *    Packing takes blocks from it; only a full slab makes it allocate,
 *    recorded as POOL_FALLBACK.
 *
 * Overlap.  Forward lets a source go as soon as its copy is seen done
 * (cudaEventQuery at every pack, kept tensors' too); compute waits on a
 * copy only while the forward stash is over its bound
 * (offload_stash_over).
 * When a step offloads a selection (budget, max_memory), backward's first
 * call lets go of the sources still held (compute waits for their
 * copies), so that all the bytes chosen to go are off the GPU at the peak.
 * Otherwise the sources held when backward begins, the last packed, stay
 * until backward unpacks them, which it does first: let go once their
 * copies were done, they came back on demand (the walk below had passed
 * them).
 * Backward asks for the next host copies, last packed first, at every
 * unpack (vramtrace_offload_reached), within the room left: copies back
 * run ahead without raising the peak.
 *
 * Memory.  A caller that measures memory lets the engine learn the step
 * once (offload-profile.c): how much the step allocates at each hook
 * whatever the engine does.  Later steps follow the profile with no
 * measurement: with max_memory, the fewest candidates (the earliest) are
 * offloaded so that the predicted peak fits, forward holds sources within
 * the headroom of each hook, and backward brings a tensor back where it
 * fits the headroom of every hook until it is unpacked; without
 * max_memory the same headroom is taken under the step's own predicted
 * peak.  A step that would offload every candidate (no max_memory, or one
 * out of reach) keeps the last ones whose stay does not raise its
 * predicted peak: backward unpacks them first, so their copies out and
 * back would wait on each other between forward and backward and lower no
 * peak.  A step that measures nothing falls back on what backward freed
 * since it began.
 *
 * Waste.  A tensor whose storage outlives its copy (the caller finds it
 * alive when backward begins, vramtrace_offload_alive) is never offloaded
 * again: its bytes would leave the GPU and come back, and stay there too.
 *
 * Every decision is sent as an EVENT_OFFLOAD record through client.h.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "offload.h"

#include "client.h"
#include "lib.h"

struct vramtrace_offload {
	struct offload_ops		 ops;	/* a copy: arg is per engine */
	struct vramtrace_offload_config	 cfg;
	uint64_t			 d2h;
	uint64_t			 h2d;
	struct offload_event_pool	 events;
	struct offload_slab		 slab;
	struct offload_dedupe		 dedupe;
	struct offload_dedupe		 kept;	/* keys kept this step */
	struct offload_stash		 stash;
	struct offload_budget		 budget;
	struct offload_profile		 profile;

	uint64_t			*own;	/* host buffers not in the slab */
	size_t				 nown;
	size_t				 aown;

	struct vramtrace_offload_request *req;
	size_t				 nreq;
	size_t				 areq;
	size_t				 hreq;	/* next request to hand out */

	struct vramtrace_offload_stats	 st;
	uint64_t			 kept_bytes;	/* kept this step */
	uint64_t			 largest; /* largest pack this step */
	int				 backward;	/* _reached() was called */
	int64_t				 ceiling; /* allocated at backward */
	int64_t				 max_memory; /* 0: none */
	int64_t				 margin;	/* below max_memory */
	int64_t				 overshoot; /* peaks seen over it */
	int				 tail;	/* this plan keeps a free tail */
	size_t				 mode_cutoff; /* before the plan */
	int				 by_pack; /* this plan cuts by pack: */
	uint32_t			 keep_from; /* new candidates stay */
	int				 tail_over; /* one went over it */
	int				 idle;	/* this step may skip the hooks */
	uint64_t			 casts;	/* RECOMPUTE bytes this step */
	uint64_t			 last_casts; /* of the last step packing */
	int64_t				 limit;	/* this step's plan */
	uint64_t			 req_bytes; /* ALLOC not restored */
	uint64_t			 host_live;	/* this step */
	uint64_t			 host_peak;	/* any step */
	uint64_t			 slab_grown; /* the slab's last size */
	uint64_t			 sized_fallbacks; /* then */
	int				 inside;
	char				 error[256];
};

/*
 * What memory at enter may move, and a peak pass its prediction, before a
 * plan is thought wrong, when max_memory gives no margin.
 */
#define OFFLOAD_TOLERANCE	((int64_t)16 << 20)

#define BROKEN(e, what) (((e)->cfg.breaks & VRAMTRACE_OFFLOAD_BREAK_##what) != 0)

static int
offload_fail(struct vramtrace_offload *e, const char *what)
{
	const char	*why = e->ops.error(e->ops.arg);

	snprintf(e->error, sizeof e->error, "%s%s%s", what,
	    why != NULL ? ": " : "", why != NULL ? why : "");
	return (-1);
}

static void
offload_emit(struct vramtrace_offload *e, enum event_offload_kind kind,
    uint64_t id, const struct offload_key *k, uint64_t bytes, uint64_t stream)
{
	struct event	ev;

	memset(&ev, 0, sizeof ev);
	ev.type = EVENT_OFFLOAD;
	ev.time_ns = lib_now_ns();
	ev.u.offload.tensor = id;
	ev.u.offload.storage = k != NULL ? k->storage : EVENT_NONE;
	ev.u.offload.generation = k != NULL ? k->generation : EVENT_NONE;
	ev.u.offload.bytes = bytes;
	ev.u.offload.stream = stream;
	ev.u.offload.device = e->cfg.device;
	ev.u.offload.kind = (uint8_t)kind;
	client_emit(&ev);
}

static int
offload_request(struct vramtrace_offload *e, uint32_t kind, uint64_t id,
    uint64_t bytes)
{
	struct vramtrace_offload_request	*r;
	size_t					 alloc;

	if (e->nreq == e->areq) {
		alloc = e->areq == 0 ? 64 : e->areq * 2;
		if ((r = realloc(e->req, alloc * sizeof *r)) == NULL) {
			snprintf(e->error, sizeof e->error, "out of memory");
			return (-1);
		}
		e->req = r;
		e->areq = alloc;
	}
	r = &e->req[e->nreq++];
	memset(r, 0, sizeof *r);
	r->kind = kind;
	r->id = id;
	r->bytes = bytes;
	return (0);
}

/* Forget queued prefetches: nothing is brought back outside a context. */
static void
offload_forget_allocs(struct vramtrace_offload *e)
{
	size_t	i, n = e->hreq;

	for (i = e->hreq; i < e->nreq; i++) {
		if (e->req[i].kind != VRAMTRACE_OFFLOAD_REQ_ALLOC)
			e->req[n++] = e->req[i];
	}
	e->nreq = n;
}

/* Make stream wait for event slot ev; a wait on itself is counted. */
static int
offload_wait(struct vramtrace_offload *e, uint64_t stream, uint32_t ev)
{
	if (ev == OFFLOAD_NO_EVENT)
		return (0);
	if (e->events.slots[ev].stream == stream)
		e->st.self_waits++;
	if (e->ops.stream_wait(e->ops.arg, stream,
	    e->events.slots[ev].handle) != 0)
		return (offload_fail(e, "cudaStreamWaitEvent"));
	return (0);
}

/*
 * Make side wait for the work queued so far on compute.  Broken on
 * purpose with BREAK_STREAM_WAIT: the event is recorded on the side stream
 * itself, which is what reading the "current" stream inside the side
 * stream's context does (torchtitan PR 2581).
 */
static int
offload_follow(struct vramtrace_offload *e, uint64_t side, uint64_t compute)
{
	uint32_t	ev;
	int		rc;

	if (offload_event_take(&e->events, &ev) != 0)
		return (offload_fail(e, "cudaEventCreate"));
	if (offload_event_record(&e->events, ev,
	    BROKEN(e, STREAM_WAIT) ? side : compute) != 0)
		rc = offload_fail(e, "cudaEventRecord");
	else
		rc = offload_wait(e, side, ev);
	offload_event_unref(&e->events, ev);
	return (rc);
}

/* Record a new event for a copy just issued on stream into *ev. */
static int
offload_mark(struct vramtrace_offload *e, uint64_t stream, uint32_t *ev)
{
	if (offload_event_take(&e->events, ev) != 0)
		return (offload_fail(e, "cudaEventCreate"));
	if (offload_event_record(&e->events, *ev, stream) != 0) {
		offload_event_unref(&e->events, *ev);
		*ev = OFFLOAD_NO_EVENT;
		return (offload_fail(e, "cudaEventRecord"));
	}
	return (0);
}

static void
offload_release_key(struct vramtrace_offload *e, struct offload_entry *en)
{
	if (!en->has_key)
		return;
	en->has_key = 0;
	if (offload_dedupe_release(&e->dedupe, &en->key, en->id)) {
		e->st.dedupe_releases++;
		offload_emit(e, EVENT_OFFLOAD_DEDUPE_RELEASE, en->id, &en->key,
		    en->bytes, EVENT_NONE);
	}
}

/* Find host memory for en: a slab block, or else an allocation. */
static int
offload_host_get(struct vramtrace_offload *e, struct offload_entry *en)
{
	uint64_t	*own, off;
	size_t		 alloc;

	if (!BROKEN(e, SLAB)) {
		if (offload_slab_alloc(&e->slab, &e->events, en->bytes, &off)
		    == 0) {
			en->slab_off = off;
			en->host = e->slab.base + off;
			return (0);
		}
		e->st.pool_fallbacks++;
		offload_emit(e, EVENT_OFFLOAD_POOL_FALLBACK, en->id, &en->key,
		    en->bytes, EVENT_NONE);
	}
	if (e->nown == e->aown) {
		alloc = e->aown == 0 ? 64 : e->aown * 2;
		if ((own = realloc(e->own, alloc * sizeof *own)) == NULL) {
			snprintf(e->error, sizeof e->error, "out of memory");
			return (-1);
		}
		e->own = own;
		e->aown = alloc;
	}
	if (e->ops.host_alloc(e->ops.arg, en->bytes, e->cfg.use_pin_memory,
	    &en->host) != 0)
		return (offload_fail(e, "cudaHostAlloc"));
	e->st.host_allocs++;
	e->own[e->nown++] = en->host;
	return (0);
}

/*
 * en has been unpacked by every handle: forget its key, give its slab
 * block back after its last copy, and let the caller drop what it holds.
 */
static int
offload_release(struct vramtrace_offload *e, struct offload_entry *en)
{
	uint32_t	last;
	int		held = en->where == OFFLOAD_FWD || en->where == OFFLOAD_BWD;

	offload_release_key(e, en);
	offload_profile_gone(&e->profile, en->candidate, en->pack);
	last = en->ev_h2d != OFFLOAD_NO_EVENT ? en->ev_h2d : en->ev_d2h;
	if (en->slab_off != UINT64_MAX &&
	    offload_slab_free(&e->slab, &e->events, en->slab_off, en->bytes,
	    last) != 0) {
		snprintf(e->error, sizeof e->error, "out of memory");
		return (-1);
	}
	offload_event_unref(&e->events, en->ev_d2h);
	offload_event_unref(&e->events, en->ev_h2d);
	en->ev_d2h = en->ev_h2d = OFFLOAD_NO_EVENT;
	e->host_live -= en->bytes;
	offload_stash_move(&e->stash, en, OFFLOAD_GONE);
	if (held)
		return (offload_request(e, VRAMTRACE_OFFLOAD_REQ_DROP, en->id, 0));
	return (0);
}

/*
 * Let go of en's GPU source once compute has waited for its copy (no wait
 * when the copy was seen done).
 */
static int
offload_reap(struct vramtrace_offload *e, struct offload_entry *en,
    uint64_t compute, int done)
{
	if (!done && offload_wait(e, compute, en->ev_d2h) != 0)
		return (-1);
	offload_stash_move(&e->stash, en, OFFLOAD_HOST);
	e->st.reaps++;
	offload_emit(e, EVENT_OFFLOAD_REAP, en->id, &en->key, en->bytes,
	    compute);
	return (offload_request(e, VRAMTRACE_OFFLOAD_REQ_DROP, en->id, 0));
}

/*
 * A step that offloads a selection, known (not a learning step): budget
 * mode, or max_memory following the profile.
 */
static int
offload_selective(struct vramtrace_offload *e)
{
	return ((e->budget.budget >= 0 || e->max_memory > 0) &&
	    e->budget.cutoff != SIZE_MAX);
}

/*
 * Whether the forward stash is over its bound: with max_memory, in a step
 * that follows the profile, the sources held must fit the headroom the
 * profile predicts at this hook; in budget mode, once the step's selection
 * is known, the bytes kept plus the sources held must fit the budget
 * (forward runs ahead of its copies as far as memory lets it); otherwise
 * max_fwd_stash sources.
 */
static int
offload_stash_over(struct vramtrace_offload *e)
{
	struct offload_profile	*p = &e->profile;

	if (e->max_memory > 0 && offload_profile_usable(p))
		return ((int64_t)e->stash.fwd_bytes > p->room[p->hook - 1]);
	if (e->budget.budget >= 0 && e->budget.cutoff != SIZE_MAX)
		return (e->kept_bytes + e->stash.fwd_bytes >
		    (uint64_t)e->budget.budget);
	return (e->stash.nfwd > e->cfg.max_fwd_stash);
}

/*
 * Let go of the sources whose copies are done (oldest first, never newest,
 * the one just stashed), then, with a compute stream, of the oldest ones
 * while the forward stash is over its bound, or all of them with all set
 * (compute then waits for their copies: that bound is what makes offload
 * lower the peak).  Runs at every pack, kept tensors' too: in budget mode
 * the offloaded tensors come first and their sources must go while
 * forward goes on keeping the rest.
 */
static int
offload_reap_some(struct vramtrace_offload *e, struct offload_entry *newest,
    uint64_t compute, int all)
{
	struct offload_entry	*old;
	int			 done;

	while ((old = offload_stash_oldest_fwd(&e->stash)) != NULL &&
	    old != newest) {
		done = offload_event_done(&e->events, old->ev_d2h);
		if (!done) {
			if (compute == EVENT_NONE ||
			    (!all && !offload_stash_over(e)))
				break;
			e->st.fwd_waits++;
		}
		if (offload_reap(e, old, compute, done) != 0)
			return (-1);
	}
	return (0);
}

static int
offload_sync(struct vramtrace_offload *e)
{
	if (!e->cfg.use_streams || e->d2h == 0 || e->h2d == 0)
		return (0);
	if (e->ops.stream_sync(e->ops.arg, e->d2h) != 0 ||
	    e->ops.stream_sync(e->ops.arg, e->h2d) != 0)
		return (offload_fail(e, "cudaStreamSynchronize"));
	return (0);
}

/*
 * Drop everything the last step left: after the copy streams are idle,
 * every held tensor is let go and every entry, key, event reference, slab
 * block and own host buffer is released.
 */
static int
offload_drop_all(struct vramtrace_offload *e)
{
	struct offload_entry	*en;
	size_t			 i;
	int			 rc = 0;

	if (offload_sync(e) != 0)
		return (-1);
	for (i = 0; i < e->stash.n; i++) {
		en = &e->stash.entries[i];
		if (en->where == OFFLOAD_GONE)
			continue;
		e->st.dropped_entries++;
		offload_emit(e, EVENT_OFFLOAD_REAP, en->id, &en->key, en->bytes,
		    EVENT_NONE);
		if ((en->where == OFFLOAD_FWD || en->where == OFFLOAD_BWD) &&
		    offload_request(e, VRAMTRACE_OFFLOAD_REQ_DROP, en->id, 0) != 0)
			rc = -1;
		offload_event_unref(&e->events, en->ev_d2h);
		offload_event_unref(&e->events, en->ev_h2d);
	}
	offload_dedupe_clear(&e->dedupe);
	offload_stash_reset(&e->stash);
	e->req_bytes = 0;
	offload_slab_reset(&e->slab, &e->events);
	for (i = 0; i < e->nown; i++)
		e->ops.host_free(e->ops.arg, e->own[i], e->cfg.use_pin_memory);
	e->nown = 0;
	e->host_live = 0;
	return (rc);
}

/*
 * Allocate the slab: a set size, once; otherwise after the first step, at
 * its peak and an eighth more, and again, larger, at an enter after a step
 * that did not fit (a pinned allocation per tensor that fell back, freed
 * at the next enter, costs a device sync each way: batches longer than the
 * first one did that at every step).  So the slab grows until the largest
 * step fits, and no further.  Runs after offload_drop_all: nothing is in
 * the slab, no copy runs.
 */
static int
offload_slab_size(struct vramtrace_offload *e)
{
	uint64_t	size = e->cfg.slab_bytes, base, most;

	if (BROKEN(e, SLAB))
		return (0);
	if (e->slab.base != 0) {
		if (size != 0 || e->st.pool_fallbacks == e->sized_fallbacks)
			return (0);
		e->ops.host_free(e->ops.arg, e->slab.base,
		    e->cfg.use_pin_memory);
		offload_slab_clear(&e->slab, &e->events);
	}
	if (size == 0 && e->st.step > 0 && e->host_peak > 0) {
		most = e->host_peak > e->slab_grown ? e->host_peak :
		    e->slab_grown;
		size = most + most / 8;
		size = (size + (2 << 20) - 1) & ~(uint64_t)((2 << 20) - 1);
	}
	e->sized_fallbacks = e->st.pool_fallbacks;
	e->slab_grown = size;
	if (size == 0)
		return (0);
	if (e->ops.host_alloc(e->ops.arg, size, e->cfg.use_pin_memory,
	    &base) != 0)
		return (offload_fail(e, "cudaHostAlloc (slab)"));
	e->st.host_allocs++;
	if (offload_slab_init(&e->slab, base, size) != 0) {
		e->ops.host_free(e->ops.arg, base, e->cfg.use_pin_memory);
		snprintf(e->error, sizeof e->error, "out of memory");
		return (-1);
	}
	e->slab.ignore_events = BROKEN(e, STREAM_WAIT);
	return (0);
}

/*
 * The limit in bytes: cfg.max_memory, or its fraction of the device's
 * memory; the margin below it absorbs what the profile cannot see (1%).
 */
static int
offload_max_memory(struct vramtrace_offload *e)
{
	uint64_t	total = 0, bytes = e->cfg.max_memory;

	if (e->cfg.max_memory_fraction > 0) {
		if (e->cfg.max_memory_fraction > 1 ||
		    e->ops.mem_total(e->ops.arg, &total) != 0) {
			snprintf(e->error, sizeof e->error,
			    "max_memory fraction %g: not in (0, 1] or no "
			    "device size", e->cfg.max_memory_fraction);
			return (-1);
		}
		bytes = (uint64_t)(e->cfg.max_memory_fraction * (double)total);
	}
	e->max_memory = bytes > INT64_MAX ? INT64_MAX : (int64_t)bytes;
	e->margin = e->max_memory / 100;
	return (0);
}

/*
 * Create an engine over ops (offload-cuda.c's for the GPU, a fake one in
 * tests).  Returns NULL with a message in err on failure.
 */
struct vramtrace_offload *
offload_engine_create(const struct offload_ops *ops,
    const struct vramtrace_offload_config *cfg, char *err, size_t errlen)
{
	struct vramtrace_offload	*e;

	if ((e = calloc(1, sizeof *e)) == NULL) {
		if (err != NULL)
			snprintf(err, errlen, "out of memory");
		return (NULL);
	}
	e->ops = *ops;
	e->cfg = *cfg;
	if (e->cfg.max_fwd_stash == 0)
		e->cfg.max_fwd_stash = 1;
	offload_event_init(&e->events, &e->ops);
	offload_slab_init(&e->slab, 0, 0);
	offload_dedupe_init(&e->dedupe);
	offload_dedupe_init(&e->kept);
	offload_stash_init(&e->stash);
	offload_budget_init(&e->budget, cfg->budget);
	offload_profile_init(&e->profile);
	if (offload_max_memory(e) != 0) {
		if (err != NULL)
			snprintf(err, errlen, "%s", e->error);
		vramtrace_offload_free(e);
		return (NULL);
	}
	if (e->cfg.use_streams &&
	    (ops->stream_create(ops->arg, &e->d2h) != 0 ||
	    ops->stream_create(ops->arg, &e->h2d) != 0)) {
		offload_fail(e, "cudaStreamCreate");
		if (err != NULL)
			snprintf(err, errlen, "%s", e->error);
		vramtrace_offload_free(e);
		return (NULL);
	}
	client_start("offload");
	return (e);
}

void
vramtrace_offload_free(struct vramtrace_offload *e)
{
	if (e == NULL)
		return;
	offload_drop_all(e);
	if (e->slab.base != 0)
		e->ops.host_free(e->ops.arg, e->slab.base,
		    e->cfg.use_pin_memory);
	offload_slab_clear(&e->slab, &e->events);
	offload_event_destroy(&e->events);
	if (e->d2h != 0)
		e->ops.stream_destroy(e->ops.arg, e->d2h);
	if (e->h2d != 0)
		e->ops.stream_destroy(e->ops.arg, e->h2d);
	offload_stash_free(&e->stash);
	offload_dedupe_clear(&e->kept);
	offload_budget_free(&e->budget);
	offload_profile_free(&e->profile);
	free(e->own);
	free(e->req);
	free(e);
}

const char *
vramtrace_offload_error(struct vramtrace_offload *e)
{
	return (e->error);
}

/*
 * Whether the step just planned may run without the hooks: its plan
 * offloads nothing, and keeping every saved tensor, the casts the hooks
 * would have made again in backward (RECOMPUTE) kept too, fits: under
 * max_memory its predicted peak is within the limit, in budget mode the
 * bytes the step before saved are within the budget.  The casts' bytes
 * are those of the last step that packed; counting them all at the peak
 * errs on the safe side, as does the plan's scale (the largest seen).
 */
static int
offload_idle_fits(struct vramtrace_offload *e)
{
	struct offload_profile	*p = &e->profile;

	if (e->budget.cutoff != 0)
		return (0);
	if (e->max_memory > 0)
		return (offload_profile_peak(p, 0) + (int64_t)e->last_casts <=
		    e->max_memory - e->margin - e->overshoot);
	return (e->budget.budget >= 0 && e->budget.kept + e->last_casts <=
	    (uint64_t)e->budget.budget);
}

/*
 * A step that follows the profile: with max_memory, the fewest candidates
 * to offload so that the predicted peak fits; otherwise the selection the
 * mode made, under its own predicted peak plus cfg.prefetch.  Then the
 * headroom of each hook for that selection.  A max_memory that even
 * offloading everything does not meet is planned as no max_memory: under
 * the predicted peak, not under a limit that would leave no headroom
 * (forward waiting on every copy, backward bringing nothing back ahead).
 *
 * Without a budget, a step that offloads every candidate (no max_memory,
 * or one out of reach) keeps the last ones whose stay on the GPU does not
 * raise that predicted peak (the smallest cutoff within it): backward
 * unpacks them first, so their copies out and back would lie on the path
 * from forward to backward (the loss's log-probabilities of a language
 * model, copied out as forward ends and needed back at once) and lower no
 * peak.  Once a step that kept them went over max_memory, none are kept.
 *
 * The cutoff of these plans goes by pack (the learned pack of candidate
 * k): a step numbers its candidates as they come, and the packs are what
 * the profile checks a step against, so a step whose candidates came
 * otherwise would still be planned right.  Budget mode keeps its own
 * cutoff, by candidate, chosen from the step before.
 */
static void
offload_plan(struct vramtrace_offload *e)
{
	struct offload_profile	*p = &e->profile;
	int64_t			 peak;
	size_t			 k;

	if (e->max_memory > 0) {
		e->limit = e->max_memory - e->margin - e->overshoot;
		k = offload_profile_cutoff(p, e->limit);
	} else {
		k = e->budget.cutoff == SIZE_MAX ? p->ncand : e->budget.cutoff;
		e->limit = -1;
	}
	peak = offload_profile_peak(p, k);
	e->tail = 0;
	if (k >= p->ncand && !e->tail_over &&
	    (e->max_memory > 0 || e->budget.budget < 0)) {
		k = offload_profile_cutoff(p, peak);
		e->tail = k < p->ncand;
	}
	if (e->max_memory > 0 || k < p->ncand)
		e->budget.cutoff = k;
	if (e->max_memory > 0 || e->budget.budget < 0) {
		e->by_pack = 1;
		e->keep_from = offload_profile_pack_of(p, k);
	}
	if (peak > e->limit)
		e->limit = peak + (int64_t)e->cfg.prefetch;
	e->st.predicted_peak = (uint64_t)peak;
	offload_profile_plan(p, k, e->limit);
}

/* Whether the step that ends now ran idle: without any hook. */
static int
offload_skipped(const struct vramtrace_offload *e)
{
	return (e->idle && e->profile.hook == 0);
}

/* Contract in include/libvramtrace.h (as for every vramtrace_offload_*). */
int
vramtrace_offload_enter(struct vramtrace_offload *e, int64_t allocated)
{
	int	learn;

	if (!BROKEN(e, EXIT_CLEANUP) && offload_drop_all(e) != 0)
		return (-1);
	if (offload_slab_size(e) != 0)
		return (-1);
	/*
	 * A step run without the hooks leaves what the last step that
	 * packed taught (its candidates, their flags, its casts) as it was.
	 */
	if (!offload_skipped(e)) {
		offload_profile_end(&e->profile, e->budget.seen,
		    e->budget.alive, e->budget.nseen);
		offload_budget_step(&e->budget);
	}
	if (e->profile.hook > 0)
		e->last_casts = e->casts;
	e->casts = 0;
	e->idle = 0;
	learn = offload_profile_begin(&e->profile, allocated,
	    e->margin > 0 ? e->margin : OFFLOAD_TOLERANCE);
	e->st.predicted_peak = 0;
	e->tail = 0;
	e->by_pack = 0;
	if (learn) {
		e->budget.cutoff = SIZE_MAX;
		e->st.learning_steps++;
	} else if (e->profile.valid && e->profile.n > 0) {
		e->mode_cutoff = e->budget.cutoff;
		offload_plan(e);
		e->idle = offload_idle_fits(e);
	} else if (e->max_memory > 0)
		e->budget.cutoff = SIZE_MAX;
	offload_dedupe_clear(&e->kept);
	e->kept_bytes = 0;
	e->largest = 0;
	e->backward = 0;
	e->ceiling = -1;
	e->st.step++;
	e->inside = 1;
	return (learn);
}

void
vramtrace_offload_sample(struct vramtrace_offload *e, int64_t allocated)
{
	offload_profile_sample(&e->profile, allocated - (int64_t)(e->req_bytes +
	    e->stash.fwd_bytes + e->stash.bwd_bytes));
}

int
vramtrace_offload_idle(const struct vramtrace_offload *e)
{
	return (e->inside && e->idle);
}

void
vramtrace_offload_peak(struct vramtrace_offload *e, int64_t peak)
{
	int64_t	cap = e->max_memory / 8;

	/*
	 * Budget mode has no limit to go over: an idle step whose peak
	 * passed what keeping every tensor predicts saved more than the
	 * profile knows (longer sequences), which may not fit the budget.
	 */
	if (e->max_memory <= 0 && offload_skipped(e) && peak >
	    offload_profile_peak(&e->profile, 0) + (int64_t)e->last_casts +
	    OFFLOAD_TOLERANCE)
		e->profile.valid = 0;
	if (e->max_memory <= 0 || peak <= e->max_memory)
		return;
	if (e->tail)
		e->tail_over = 1;
	/* The steps may have changed unseen: learn them again. */
	if (offload_skipped(e))
		e->profile.valid = 0;
	/*
	 * The plan that went over filled its limit (backward brings tensors
	 * back ahead up to it), so the excess is the prediction's error less
	 * the margin: keeping only the excess below would aim the next steps
	 * at max_memory itself, where any jitter goes over.  The margin is
	 * kept below again, for that jitter.
	 */
	e->overshoot += peak - e->max_memory + e->margin;
	if (e->overshoot > cap)
		e->overshoot = cap;
}

/*
 * Sync the copy streams and empty both stashes: sources and buffers
 * brought back are let go (DROP), entries keep their host copies and
 * their dedupe keys.
 */
static int
offload_settle(struct vramtrace_offload *e)
{
	struct offload_entry	*en;
	size_t			 i;
	int			 rc = 0;

	if (offload_sync(e) != 0)
		return (-1);
	offload_forget_allocs(e);
	e->req_bytes = 0;
	for (i = 0; i < e->stash.n; i++) {
		en = &e->stash.entries[i];
		en->requested = 0;
		if (en->where == OFFLOAD_BWD) {
			offload_event_unref(&e->events, en->ev_h2d);
			en->ev_h2d = OFFLOAD_NO_EVENT;
		} else if (en->where != OFFLOAD_FWD)
			continue;
		offload_stash_move(&e->stash, en, OFFLOAD_HOST);
		if (offload_request(e, VRAMTRACE_OFFLOAD_REQ_DROP, en->id, 0)
		    != 0)
			rc = -1;
	}
	return (rc);
}

int
vramtrace_offload_exit(struct vramtrace_offload *e)
{
	int	rc;

	e->inside = 0;
	if (offload_skipped(e))
		e->st.idle_steps++;
	if (BROKEN(e, EXIT_CLEANUP))
		return (0);
	rc = offload_settle(e);
	e->st.exit_syncs++;
	offload_emit(e, EVENT_OFFLOAD_EXIT_SYNC, 0, NULL, 0, EVENT_NONE);
	return (rc);
}

int
vramtrace_offload_backward_done(struct vramtrace_offload *e)
{
	if (e->inside || BROKEN(e, EXIT_CLEANUP))
		return (0);
	return (offload_settle(e));
}

static int
offload_keep(struct vramtrace_offload *e, uint64_t bytes, int fixed)
{
	e->st.kept++;
	e->st.kept_bytes += bytes;
	e->kept_bytes += bytes;
	if (fixed)
		offload_budget_fixed(&e->budget, bytes);
	return (VRAMTRACE_OFFLOAD_KEPT);
}

static void
offload_key_from(struct offload_key *k, const struct vramtrace_offload_tensor *t)
{
	int32_t	n = t->ndim < VRAMTRACE_OFFLOAD_MAX_DIMS ? t->ndim :
		    VRAMTRACE_OFFLOAD_MAX_DIMS;

	memset(k, 0, sizeof *k);
	k->storage = t->storage;
	k->generation = t->generation;
	k->version = t->version;
	k->offset = t->offset;
	k->ndim = t->ndim;
	k->dtype = t->dtype;
	memcpy(k->shape, t->shape, (size_t)n * sizeof k->shape[0]);
	memcpy(k->stride, t->stride, (size_t)n * sizeof k->stride[0]);
}

/* Issue en's device-to-host copy; with streams, stash its source. */
static int
offload_copy_out(struct vramtrace_offload *e, struct offload_entry *en,
    uint64_t src, uint64_t compute)
{
	uint64_t	stream = e->cfg.use_streams ? e->d2h : compute;
	int		rc;

	if (e->cfg.use_streams && offload_follow(e, e->d2h, compute) != 0)
		return (-1);
	if (e->ops.copy(e->ops.arg, en->host, src, en->bytes, stream) != 0)
		return (offload_fail(e, "cudaMemcpyAsync (device to host)"));
	if (offload_mark(e, stream, &en->ev_d2h) != 0)
		return (-1);
	e->st.offloads++;
	e->st.offloaded_bytes += en->bytes;
	e->host_live += en->bytes;
	if (e->host_live > e->host_peak)
		e->host_peak = e->host_live;
	offload_emit(e, EVENT_OFFLOAD_COPY, en->id, &en->key, en->bytes,
	    stream);
	if (!e->cfg.use_streams)
		return (VRAMTRACE_OFFLOAD_COPIED);

	/* The source stays alive until its copy is known to be done. */
	offload_stash_move(&e->stash, en, OFFLOAD_FWD);
	rc = offload_dedupe_insert(&e->dedupe, &en->key, en->id);
	if (rc < 0) {
		snprintf(e->error, sizeof e->error, "out of memory");
		return (-1);
	}
	en->has_key = rc == 1;
	offload_emit(e, EVENT_OFFLOAD_STASH, en->id, &en->key, en->bytes,
	    stream);
	if (offload_reap_some(e, en, compute, 0) != 0)
		return (-1);
	return (VRAMTRACE_OFFLOAD_STASHED);
}

int
vramtrace_offload_pack(struct vramtrace_offload *e,
    const struct vramtrace_offload_tensor *t, uint64_t compute, uint64_t *id)
{
	struct offload_key	 k;
	struct offload_entry	*en;
	uint64_t		 hit;
	int			 rc;

	if (t->ndim < 0) {
		snprintf(e->error, sizeof e->error, "bad tensor rank");
		return (-1);
	}
	offload_key_from(&k, t);
	e->st.packs++;
	if (e->inside)
		offload_profile_hook(&e->profile, 0, t->bytes);
	if (t->bytes > e->largest)
		e->largest = t->bytes;
	offload_emit(e, EVENT_OFFLOAD_PACK, 0, &k, t->bytes, compute);
	if (e->inside && offload_reap_some(e, NULL, compute, 0) != 0)
		return (-1);
	if (!e->inside || t->bytes < e->cfg.min_offload_size)
		return (offload_keep(e, t->bytes, 1));
	if (t->flags & VRAMTRACE_OFFLOAD_TENSOR_RECOMPUTE) {
		e->st.recomputed++;
		e->st.recomputed_bytes += t->bytes;
		e->casts += t->bytes;
		return (VRAMTRACE_OFFLOAD_RECOMPUTE);
	}
	if (t->flags & VRAMTRACE_OFFLOAD_TENSOR_KEEP)
		return (offload_keep(e, t->bytes, 1));
	/*
	 * The step's first activation tells its scale (offload-profile.c):
	 * plan again from what enter planned from.
	 */
	if (offload_profile_activation(&e->profile, t->bytes) &&
	    e->profile.n > 0) {
		e->budget.cutoff = e->mode_cutoff;
		offload_plan(e);
	}

	if (offload_dedupe_find(&e->dedupe, &k, !BROKEN(e, DEDUPE_GENERATION),
	    &hit) && (en = offload_stash_get(&e->stash, hit)) != NULL &&
	    en->where != OFFLOAD_GONE && en->refs > 0) {
		if (offload_stash_saved_again(&e->stash, hit,
		    (uint32_t)e->profile.npack - 1) != 0) {
			snprintf(e->error, sizeof e->error, "out of memory");
			return (-1);
		}
		en->refs++;
		offload_profile_owner(&e->profile, en->pack);
		en->until = offload_profile_until(&e->profile,
		    (uint32_t)e->profile.npack - 1, en->until);
		e->st.dedupe_hits++;
		offload_emit(e, EVENT_OFFLOAD_DEDUPE_HIT, hit, &k, t->bytes,
		    compute);
		*id = hit;
		return (VRAMTRACE_OFFLOAD_DEDUPED);
	}
	/*
	 * Another view of a storage the budget kept is kept too, and is no
	 * new candidate: each step then sees the sequence the budget learnt.
	 */
	if (offload_dedupe_find(&e->kept, &k, 1, &hit)) {
		e->st.kept++;
		return (VRAMTRACE_OFFLOAD_KEPT);
	}
	rc = offload_budget_decide(&e->budget, t->bytes, !e->by_pack ? -1 :
	    e->profile.npack - 1 < e->keep_from, e->profile.npack - 1);
	offload_profile_live(&e->profile, (uint32_t)e->budget.index);
	if (!rc) {
		if (offload_dedupe_insert(&e->kept, &k, 0) < 0) {
			snprintf(e->error, sizeof e->error, "out of memory");
			return (-1);
		}
		return (offload_keep(e, t->bytes, 0));
	}

	if ((en = offload_stash_add(&e->stash)) == NULL) {
		snprintf(e->error, sizeof e->error, "out of memory");
		return (-1);
	}
	en->key = k;
	en->bytes = t->bytes;
	en->candidate = e->budget.index - 1;
	en->pack = (uint32_t)e->profile.npack - 1;
	en->until = offload_profile_until(&e->profile, en->pack,
	    OFFLOAD_UNUSED);
	en->refs = 1;
	if (offload_host_get(e, en) != 0 ||
	    (rc = offload_copy_out(e, en, t->src, compute)) < 0) {
		offload_stash_move(&e->stash, en, OFFLOAD_GONE);
		return (-1);
	}
	*id = en->id;
	return (rc);
}

/*
 * The room for bringing tensors back ahead at this hook, when the step
 * follows no profile: see vramtrace_offload_reached() in
 * include/libvramtrace.h.
 */
static int64_t
offload_room(struct vramtrace_offload *e, int64_t allocated)
{
	int64_t	reserve = (int64_t)e->cfg.prefetch - 2 * (int64_t)e->largest;

	if (allocated >= 0 && e->ceiling >= 0)
		return (e->ceiling - allocated + reserve);
	return (reserve);
}

/* Whether x fits the room to be brought back now; books it if so. */
static int
offload_fits(struct vramtrace_offload *e, struct offload_entry *x,
    int64_t *left)
{
	if (offload_profile_usable(&e->profile))
		return (offload_profile_book(&e->profile, x->until, x->bytes));
	if ((int64_t)x->bytes > *left)
		return (0);
	*left -= (int64_t)x->bytes;
	return (1);
}

/*
 * Bring back the host copies backward needs next, last packed first (an
 * entry saved again, at its latest save: offload_stash_walk), as long as
 * their bytes fit the room (see Overlap at the top).  The walk only moves
 * down: an entry passed over (its source still held, or gone) needs no
 * prefetch, and one unpacked before its turn was restored on demand.
 * (Stopping the walk at a source still held instead, until its copy is
 * done, was measured slower: the requests then come late, when the CPU is
 * far ahead of the GPU.)
 *
 * A step that follows the profile skips the entries the learned step never
 * unpacked.
 *
 * When a step offloads a selection, a source still held when backward
 * begins is one chosen to go that the bound let stay (the bound has the
 * slack of the last candidate kept): it goes now, compute waiting for its
 * copy, which was issued early in forward, so that it neither stays
 * through the peak nor, passed over by the walk, comes back on demand.
 *
 * While learning, each call is a point of the profile.
 */
int
vramtrace_offload_reached(struct vramtrace_offload *e, int64_t allocated,
    uint64_t compute)
{
	struct offload_entry	*x;
	int64_t			 left;

	offload_profile_hook(&e->profile, 1, 0);
	if (allocated >= 0)
		vramtrace_offload_sample(e, allocated);
	if (!e->cfg.use_streams || e->stash.live == 0)
		return (0);
	if (!e->backward) {
		e->backward = 1;
		if (offload_selective(e) &&
		    offload_reap_some(e, NULL, compute, 1) != 0)
			return (-1);
		offload_stash_walk_start(&e->stash);
		e->ceiling = allocated;
	}
	left = offload_room(e, allocated);
	while ((x = offload_stash_walk(&e->stash)) != NULL) {
		if (x->where != OFFLOAD_HOST || x->refs == 0 || x->requested ||
		    x->until == OFFLOAD_UNUSED) {
			offload_stash_walk_next(&e->stash);
			continue;
		}
		if (!offload_fits(e, x, &left))
			break;
		if (offload_request(e, VRAMTRACE_OFFLOAD_REQ_ALLOC, x->id,
		    x->bytes) != 0)
			return (-1);
		x->requested = 1;
		e->req_bytes += x->bytes;
		offload_stash_walk_next(&e->stash);
	}
	return (0);
}

int
vramtrace_offload_alive(struct vramtrace_offload *e, uint64_t id)
{
	struct offload_entry	*en = offload_stash_get(&e->stash, id);

	if (en == NULL || en->where == OFFLOAD_GONE) {
		snprintf(e->error, sizeof e->error, "tensor %" PRIu64
		    " is unknown or was already unpacked", id);
		return (-1);
	}
	offload_budget_alive(&e->budget, en->candidate, en->pack);
	return (0);
}

int
vramtrace_offload_unpack(struct vramtrace_offload *e, uint64_t id,
    uint64_t compute, uint64_t *bytes)
{
	struct offload_entry	*en = offload_stash_get(&e->stash, id);
	int			 rc;

	if (en == NULL || en->where == OFFLOAD_GONE || en->refs == 0) {
		snprintf(e->error, sizeof e->error, "tensor %" PRIu64
		    " is unknown or was already unpacked", id);
		return (-1);
	}
	switch (en->where) {
	case OFFLOAD_HOST:
		*bytes = en->bytes;
		e->st.bwd_waits++;
		return (VRAMTRACE_OFFLOAD_NEED_BUFFER);
	case OFFLOAD_BWD:
		if (e->cfg.use_streams &&
		    offload_wait(e, compute, en->ev_h2d) != 0)
			return (-1);
		rc = VRAMTRACE_OFFLOAD_FROM_BUFFER;
		break;
	default:
		rc = VRAMTRACE_OFFLOAD_FROM_STASH;
		break;
	}
	e->st.unpacks++;
	offload_emit(e, EVENT_OFFLOAD_UNPACK, id, &en->key, en->bytes, compute);
	if (--en->refs == 0 && offload_release(e, en) != 0)
		return (-1);
	return (rc);
}

int
vramtrace_offload_restore(struct vramtrace_offload *e, uint64_t id,
    uint64_t dst, uint64_t compute)
{
	struct offload_entry	*en = offload_stash_get(&e->stash, id);
	uint64_t		 stream = e->cfg.use_streams ? e->h2d : compute;

	if (en == NULL || en->where != OFFLOAD_HOST || en->refs == 0) {
		snprintf(e->error, sizeof e->error, "tensor %" PRIu64
		    " has no host copy to restore", id);
		return (-1);
	}
	if (e->cfg.use_streams && (offload_follow(e, e->h2d, compute) != 0 ||
	    offload_wait(e, e->h2d, en->ev_d2h) != 0))
		return (-1);
	if (e->ops.copy(e->ops.arg, dst, en->host, en->bytes, stream) != 0)
		return (offload_fail(e, "cudaMemcpyAsync (host to device)"));
	if (offload_mark(e, stream, &en->ev_h2d) != 0)
		return (-1);
	if (en->requested)
		e->req_bytes -= en->bytes;
	en->requested = 0;
	offload_stash_move(&e->stash, en, OFFLOAD_BWD);
	e->st.prefetches++;
	e->st.restored_bytes += en->bytes;
	offload_emit(e, EVENT_OFFLOAD_PREFETCH, id, &en->key, en->bytes, stream);
	return (0);
}

int
vramtrace_offload_next(struct vramtrace_offload *e,
    struct vramtrace_offload_request *r)
{
	if (e->hreq == e->nreq) {
		e->hreq = e->nreq = 0;
		return (0);
	}
	*r = e->req[e->hreq++];
	return (1);
}

void
vramtrace_offload_stats(struct vramtrace_offload *e,
    struct vramtrace_offload_stats *s)
{
	*s = e->st;
	s->live_entries = e->stash.live;
	s->fwd_stash = e->stash.nfwd;
	s->bwd_stash = e->stash.nbwd;
	s->slab_bytes = e->slab.size;
	s->slab_used = e->slab.used;
	s->dedupe_keys = e->dedupe.count;
	s->events = e->events.n;
	s->budget_cutoff = e->budget.cutoff == SIZE_MAX ? UINT64_MAX :
	    e->budget.cutoff;
	s->profile_hooks = e->profile.valid ? e->profile.n : 0;
	s->max_memory = (uint64_t)e->max_memory;
	s->hooks = e->profile.hook;
}
