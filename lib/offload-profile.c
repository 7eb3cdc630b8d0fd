/*
 * offload-profile.c: one step's memory, learned once, so that the engine
 * chooses what to offload and when to bring it back without asking the
 * allocator at every tensor.
 *
 * A step is a sequence of hooks: every pack inside the context and every
 * unpack, numbered from 0.  In a learning step every candidate is
 * offloaded and the caller measures the memory allocated after every
 * operation (offload_profile_sample).  The profile keeps, for each hook h:
 *
 *   base[h]  the most memory seen from hook h to hook h + 1, less what the
 *            engine held at the time (sources whose copies ran, buffers
 *            brought back and not yet unpacked): what the step needs
 *            whatever the engine does;
 *   live[h]  how many candidates, in pack order, are alive at h: in
 *            forward those packed so far, in backward those up to the last
 *            one still to be unpacked (backward unpacks last packed
 *            first, layer by layer).  A candidate never unpacked (the
 *            output selective checkpointing saved and its early stop did
 *            not need) does not count: it would hold every earlier one
 *            alive.  So backward's counts are found when the step ends,
 *            from the hook at which each candidate was unpacked.
 *
 * Prediction.  Keeping candidates k.. on the GPU instead of offloading
 * them adds, at hook h, the bytes of candidates k..live[h]-1:
 *
 *   pred(h, k) = base[h] + max(0, P(live[h]) - P(k))
 *
 * with P the prefix sums of the candidates' bytes (a candidate kept
 * anyway, whose storage outlived its copy, counts 0: it is in base).  The
 * prediction falls as k grows, so the smallest k whose peak fits a limit
 * is found by bisection: it offloads the fewest bytes, and the earliest
 * ones, whose copies overlap the most compute.  The cutoff goes to the
 * steps that follow as the pack that made candidate k in the learned step
 * (cpack): they keep the new candidates of that pack and the later ones,
 * whatever numbers they give them (see below).  For the chosen k, the
 * headroom room[h] = limit - pred(h, k) is what the engine may hold at h:
 * in forward the sources whose copies still run; in backward the buffers
 * brought back ahead, each from the hook that asks for it to the hook
 * before which the learned step unpacked it: a buffer is booked (extra[h])
 * over those hooks only where it fits all of them.  Which hook that is
 * goes by pack, not by candidate: the packs repeat from step to step, the
 * candidates do not (see below); an entry that several packs share is
 * unpacked at the latest of theirs (offload_profile_until).
 *
 * A steady step must repeat the learned one: the same hooks, packs and
 * unpacks in the same order (cur_seq, a hash of them).  The candidates
 * are not compared: a storage saved again is no candidate, a dedupe hit
 * (whether or not its copy is done) or kept with its first save, so they
 * follow from the packs; the plan goes by pack all the same (below).  A
 * step that differs makes the next one learn again.
 *
 * Nor the same sizes: batches of another length (a trainer that pads each
 * batch to its longest sequence) save the same tensors, larger or
 * smaller.  A step's scale is the size of its first activation (the first
 * pack the engine may offload) over the learned step's, known before any
 * decision: the memory above enter and the candidates' bytes are
 * predicted that many times larger, never smaller (a longer batch: what
 * grows with it grows in proportion, what does not, the gradients, is
 * overestimated; a shorter one: predicted as the learned step, since
 * what does not shrink with it cannot be told apart), so that a plan
 * errs on the side of offloading more.  Until the first activation
 * comes, a step is planned at the largest scale seen (first_max).  A step
 * that packed more bytes in all than its scale tells (the first
 * activation did not grow with the rest) makes the next one learn.
 * Memory at enter that moved since the profile was learned shifts every
 * prediction by as much, except for the first profile: when memory at
 * enter moved by more than the tolerance since it, the next step learns
 * again, since the first step also made what stays for good (the
 * optimizer's state after it, workspaces during it: counted twice if only
 * shifted).  A later profile is only shifted (a training loop that keeps
 * something on the GPU every step does not relearn every step).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "offload.h"

#define OFFLOAD_PROFILE_SEED	1469598103934665603ULL
#define OFFLOAD_PROFILE_PRIME	1099511628211ULL

static void
offload_profile_mix(struct offload_profile *p, uint64_t v)
{
	p->cur_seq = (p->cur_seq ^ v) * OFFLOAD_PROFILE_PRIME;
}

/* An empty profile: nothing learned. */
void
offload_profile_init(struct offload_profile *p)
{
	memset(p, 0, sizeof *p);
	p->cur_seq = OFFLOAD_PROFILE_SEED;
}

/* Free the learned arrays. */
void
offload_profile_free(struct offload_profile *p)
{
	free(p->base);
	free(p->live);
	free(p->room);
	free(p->extra);
	free(p->gone);
	free(p->back);
	free(p->at);
	free(p->owner);
	free(p->cpack);
	free(p->prefix);
	offload_profile_init(p);
}

/* Backward's live counts: candidates unpacked after each hook. */
static void
offload_profile_backward_live(struct offload_profile *p)
{
	uint32_t	most = p->gone[p->hook];
	size_t		h;

	for (h = p->hook; h > 0; h--) {
		if (p->back[h - 1])
			p->live[h - 1] = most;
		if (p->gone[h - 1] > most)
			most = p->gone[h - 1];
	}
}

/*
 * Whether this step packed more bytes than its scale tells (the learned
 * step's packs times the scale, and 1/16 more): its sizes changed in a way
 * the first activation did not show.
 */
static int
offload_profile_outgrown(const struct offload_profile *p)
{
	double	most = (double)p->packed * (p->scale > 1 ? p->scale : 1);

	return ((double)p->cur_packed > most + most / 16);
}

/*
 * The step ends.  A learning step that was measured becomes the profile,
 * with the bytes and flags of its n candidates (alive[i]: kept anyway);
 * a steady step that did not repeat the profile's sequence invalidates it.
 * A step with no hook (no forward inside the context) changes nothing.
 */
void
offload_profile_end(struct offload_profile *p, const uint64_t *bytes,
    const uint8_t *alive, size_t n)
{
	uint64_t	*prefix;
	size_t		 i;

	if (p->hook == 0)
		return;
	if (!p->learning) {
		if (p->valid && (p->hook != p->n || p->cur_seq != p->seq ||
		    offload_profile_outgrown(p)))
			p->valid = 0;
		return;
	}
	p->learning = 0;
	p->packed = p->cur_packed;
	p->valid = 0;
	if (!p->sampled)
		return;
	/* A pack that a dedupe hit made goes with the entry it hit. */
	for (i = 0; i < p->nat; i++)
		if (p->owner[i] < i)
			p->at[i] = p->at[p->owner[i]];
	if (n + 1 > p->aprefix) {
		if ((prefix = realloc(p->prefix, (n + 1) * sizeof *prefix)) ==
		    NULL)
			return;
		p->prefix = prefix;
		p->aprefix = n + 1;
	}
	offload_profile_backward_live(p);
	p->prefix[0] = 0;
	for (i = 0; i < n; i++)
		p->prefix[i + 1] = p->prefix[i] + (alive[i] ? 0 : bytes[i]);
	p->ncand = n;
	p->n = p->hook;
	p->seq = p->cur_seq;
	p->valid = 1;
	p->learned++;
}

/* The scale of a step whose first activation has bytes: at least 1. */
static double
offload_profile_ratio(const struct offload_profile *p, uint64_t bytes)
{
	if (p->first == 0 || bytes <= p->first)
		return (1);
	return ((double)bytes / (double)p->first);
}

/*
 * The first activation of this step (the first pack that may be
 * offloaded) has bytes: the step's scale.  Returns 1 when a step that
 * follows the profile now has another scale than it was planned with (plan
 * it again), else 0.
 */
int
offload_profile_activation(struct offload_profile *p, uint64_t bytes)
{
	double	scale;

	if (p->seen_first || p->hook == 0)
		return (0);
	p->seen_first = 1;
	if (p->learning)
		p->first = bytes;
	if (bytes > p->first_max)
		p->first_max = bytes;
	if (p->learning || !p->valid)
		return (0);
	scale = offload_profile_ratio(p, bytes);
	if (scale == p->scale)
		return (0);
	p->scale = scale;
	return (1);
}

/*
 * A step begins with enter_mem bytes allocated (negative: not measured).
 * Returns 1 when this step must learn (measured, and no profile, or the
 * first profile and memory at enter moved by more than tolerance), else 0.
 */
int
offload_profile_begin(struct offload_profile *p, int64_t enter_mem,
    int64_t tolerance)
{
	int64_t	d;

	p->hook = 0;
	p->npack = 0;
	p->sampled = 0;
	p->cur_seq = OFFLOAD_PROFILE_SEED;
	p->cur_packed = 0;
	p->shift = 0;
	p->learning = 0;
	p->seen_first = 0;
	p->scale = offload_profile_ratio(p, p->first_max);
	if (enter_mem < 0)
		return (0);
	d = enter_mem - p->enter_mem;
	if (p->valid && (p->learned > 1 || (d <= tolerance && -d <= tolerance))) {
		p->shift = d;
		return (0);
	}
	p->scale = 1;
	p->valid = 0;
	p->learning = 1;
	p->enter_mem = enter_mem;
	p->last = enter_mem;
	p->nat = 0;
	return (1);
}

/* Room for hook h in the per-hook arrays: 0, or -1 when out of memory. */
static int
offload_profile_grow(struct offload_profile *p, size_t h)
{
	int64_t		*base, *room, *extra;
	uint32_t	*live, *gone;
	uint8_t		*back;
	size_t		 alloc;

	if (h < p->alloc)
		return (0);
	alloc = p->alloc == 0 ? 1024 : p->alloc * 2;
	if ((base = realloc(p->base, alloc * sizeof *base)) == NULL)
		return (-1);
	p->base = base;
	if ((live = realloc(p->live, alloc * sizeof *live)) == NULL)
		return (-1);
	p->live = live;
	if ((room = realloc(p->room, alloc * sizeof *room)) == NULL)
		return (-1);
	p->room = room;
	if ((extra = realloc(p->extra, alloc * sizeof *extra)) == NULL)
		return (-1);
	p->extra = extra;
	if ((gone = realloc(p->gone, alloc * sizeof *gone)) == NULL)
		return (-1);
	p->gone = gone;
	if ((back = realloc(p->back, alloc * sizeof *back)) == NULL)
		return (-1);
	p->back = back;
	p->alloc = alloc;
	return (0);
}

/* Room for pack j in the per-pack arrays: 0, or -1 when out of memory. */
static int
offload_profile_grow_packs(struct offload_profile *p, size_t j)
{
	uint32_t	*at, *owner;
	size_t		 alloc;

	if (j < p->aat)
		return (0);
	alloc = p->aat == 0 ? 256 : p->aat * 2;
	if ((at = realloc(p->at, alloc * sizeof *at)) == NULL)
		return (-1);
	p->at = at;
	if ((owner = realloc(p->owner, alloc * sizeof *owner)) == NULL)
		return (-1);
	p->owner = owner;
	p->aat = alloc;
	return (0);
}

/*
 * The next hook of the step (its index is hook - 1): a pack of bytes (its
 * index among packs is npack - 1), or an unpack (backward).  While
 * learning it starts with the last base seen and, in forward, the live
 * count of the hook before.  Out of memory, this step stops learning (the
 * next one learns again).
 */
void
offload_profile_hook(struct offload_profile *p, int backward, uint64_t bytes)
{
	size_t	h = p->hook++, j = backward ? 0 : p->npack++;

	offload_profile_mix(p, backward ? 1 : 2);
	p->cur_packed += bytes;
	if (!p->learning)
		return;
	if (offload_profile_grow(p, h + 1) != 0 ||
	    (!backward && offload_profile_grow_packs(p, j) != 0)) {
		p->learning = 0;
		p->sampled = 0;
		p->valid = 0;
		return;
	}
	if (!backward) {
		p->at[j] = OFFLOAD_UNUSED;
		p->owner[j] = UINT32_MAX;
		p->nat = j + 1;
	}
	p->base[h] = p->last;
	p->live[h] = h > 0 ? p->live[h - 1] : 0;
	p->back[h] = (uint8_t)(backward != 0);
	if (h == 0)
		p->gone[0] = 0;
	p->gone[h + 1] = 0;
}

/*
 * While learning: candidate i, made by pack j, was unpacked for the last
 * time, after the current hook (before the next one).
 */
void
offload_profile_gone(struct offload_profile *p, size_t i, uint32_t j)
{
	if (!p->learning || p->hook == 0)
		return;
	if (i + 1 > p->gone[p->hook])
		p->gone[p->hook] = (uint32_t)(i + 1);
	if (j < p->nat)
		p->at[j] = (uint32_t)p->hook;
}

/* While learning: the current pack is a dedupe hit on pack j's entry. */
void
offload_profile_owner(struct offload_profile *p, uint32_t j)
{
	if (p->learning && p->npack > 0 && j < p->npack - 1)
		p->owner[p->npack - 1] = j;
}

/*
 * While learning: n candidates are alive at the current forward hook, the
 * last of them made by the current pack.  Out of memory, this step stops
 * learning.
 */
void
offload_profile_live(struct offload_profile *p, uint32_t n)
{
	uint32_t	*cpack;
	size_t		 alloc;

	if (!p->learning || p->hook == 0 || n == 0 || p->npack == 0)
		return;
	p->live[p->hook - 1] = n;
	if (n > p->acpack) {
		alloc = p->acpack == 0 ? 256 : p->acpack * 2;
		while (alloc < n)
			alloc *= 2;
		if ((cpack = realloc(p->cpack, alloc * sizeof *cpack)) ==
		    NULL) {
			p->learning = 0;
			p->sampled = 0;
			p->valid = 0;
			return;
		}
		p->cpack = cpack;
		p->acpack = alloc;
	}
	p->cpack[n - 1] = (uint32_t)(p->npack - 1);
}

/*
 * The pack that made candidate k in the learned step: a step that follows
 * the profile keeps the new candidates of that pack and the later ones
 * (UINT32_MAX, none, when k is past the last candidate).
 */
uint32_t
offload_profile_pack_of(const struct offload_profile *p, size_t k)
{
	return (k < p->ncand ? p->cpack[k] : UINT32_MAX);
}

/*
 * While learning: v bytes were allocated beyond what the engine held, at
 * some point after the current hook.
 */
void
offload_profile_sample(struct offload_profile *p, int64_t v)
{
	if (!p->learning)
		return;
	p->sampled = 1;
	p->last = v;
	if (p->hook > 0 && v > p->base[p->hook - 1])
		p->base[p->hook - 1] = v;
}

/* Whether this step follows a profile and is still within it. */
int
offload_profile_usable(const struct offload_profile *p)
{
	return (p->valid && !p->learning && p->hook >= 1 && p->hook <= p->n);
}

/*
 * Memory predicted at hook h (< n) when candidates k.. stay, at this
 * step's scale.
 */
int64_t
offload_profile_pred(const struct offload_profile *p, size_t h, size_t k)
{
	size_t		live = p->live[h] < p->ncand ? p->live[h] : p->ncand;
	int64_t		above = p->base[h] - p->enter_mem, kept = 0;

	if (k > p->ncand)
		k = p->ncand;
	if (live > k)
		kept = (int64_t)(p->prefix[live] - p->prefix[k]);
	if (p->scale > 1) {
		if (above > 0)
			above = (int64_t)((double)above * p->scale);
		kept = (int64_t)((double)kept * p->scale);
	}
	return (p->enter_mem + above + p->shift + kept);
}

/* The step's predicted peak when candidates k.. stay. */
int64_t
offload_profile_peak(const struct offload_profile *p, size_t k)
{
	int64_t	peak = INT64_MIN, v;
	size_t	h;

	for (h = 0; h < p->n; h++) {
		v = offload_profile_pred(p, h, k);
		if (v > peak)
			peak = v;
	}
	return (peak);
}

/*
 * The smallest cutoff k (offload candidates before k) whose predicted
 * peak is within limit; every candidate (ncand) when none is.
 */
size_t
offload_profile_cutoff(const struct offload_profile *p, int64_t limit)
{
	size_t	lo = 0, hi = p->ncand, mid;

	if (offload_profile_peak(p, hi) > limit)
		return (hi);
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (offload_profile_peak(p, mid) <= limit)
			hi = mid;
		else
			lo = mid + 1;
	}
	return (lo);
}

/* For cutoff k: room[h], the headroom under limit; nothing booked. */
void
offload_profile_plan(struct offload_profile *p, size_t k, int64_t limit)
{
	size_t	h;

	for (h = 0; h < p->n; h++) {
		p->room[h] = limit - offload_profile_pred(p, h, k);
		p->extra[h] = 0;
	}
}

/*
 * The hook before which the learned step unpacked what pack j went to,
 * merged with until, what other packs of the same entry gave (start with
 * OFFLOAD_UNUSED): the latest of them, OFFLOAD_UNUSED when none was ever
 * unpacked (selective checkpointing's early stop leaves one: bringing it
 * back is waste), OFFLOAD_UNKNOWN when one was not learned or this step
 * follows no profile.
 */
uint32_t
offload_profile_until(const struct offload_profile *p, uint32_t j,
    uint32_t until)
{
	uint32_t	at = OFFLOAD_UNKNOWN;

	if (p->valid && !p->learning && j < p->nat)
		at = p->at[j];
	if (until == OFFLOAD_UNUSED)
		return (at);
	if (at == OFFLOAD_UNUSED)
		return (until);
	if (at == OFFLOAD_UNKNOWN || until == OFFLOAD_UNKNOWN)
		return (OFFLOAD_UNKNOWN);
	return (at > until ? at : until);
}

/*
 * Book a buffer of bytes brought back at the current hook until the hook
 * before which the learned step unpacked it (until, from
 * offload_profile_until; the end of the step if it never did, the current
 * hook alone if not known): 1 if it fits the headroom of every one of
 * those hooks (then it is booked), else 0.
 */
int
offload_profile_book(struct offload_profile *p, uint32_t until,
    uint64_t bytes)
{
	size_t	h = p->hook - 1, end = p->n, i;

	if (until == OFFLOAD_UNKNOWN)
		end = h + 1;
	else if (until != OFFLOAD_UNUSED && until < end)
		end = until;
	if (end <= h)
		end = h + 1;
	for (i = h; i < end; i++)
		if (p->room[i] - p->extra[i] < (int64_t)bytes)
			return (0);
	for (i = h; i < end; i++)
		p->extra[i] += (int64_t)bytes;
	return (1);
}
