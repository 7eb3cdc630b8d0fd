/*
 * offload-budget.c: budget mode, offload only what the GPU cannot keep.
 *
 * Given a budget (bytes of saved activations allowed to stay on the GPU),
 * the best tensors to offload are the earliest ones: their device-to-host
 * copies overlap the rest of the forward pass, and backward needs them
 * last, so their host-to-device copies overlap the backward of the later
 * layers.  The last layer's tensors should stay: backward starts with them,
 * and nothing could hide their copy back.
 *
 * Autograd packs in forward order, and a training step packs the same
 * sequence every time.  So the engine learns the sequence of candidate
 * sizes (tensors large enough to offload and not deduplicated) during one
 * step, plus the bytes it keeps anyway (small tensors, parameters,
 * duplicates), and on the next step offloads candidate i only when i is
 * before the cutoff: the smallest prefix whose removal makes the rest fit.
 * The first step offloads every candidate (nothing is known yet, and that
 * is the safe side); every step relearns, so a changing model settles
 * within a step.
 */
#include "config.h"

#include <stdlib.h>

#include "offload.h"

/* Budget mode with budget bytes, or off when budget is negative. */
void
offload_budget_init(struct offload_budget *b, int64_t budget)
{
	b->budget = budget;
	b->seen = NULL;
	b->nseen = b->aseen = 0;
	b->fixed = 0;
	b->cutoff = SIZE_MAX;
	b->index = 0;
}

/* Free the learned sequence. */
void
offload_budget_free(struct offload_budget *b)
{
	free(b->seen);
	offload_budget_init(b, b->budget);
}

/*
 * The smallest k such that fixed plus the bytes of candidates k..n-1 is
 * within budget: offloading candidates 0..k-1 is enough.  Returns n when
 * even offloading every candidate does not fit (offload them all).
 */
size_t
offload_budget_select(const uint64_t *bytes, size_t n, uint64_t fixed,
    uint64_t budget)
{
	uint64_t	kept = fixed;
	size_t		k = n;

	/* Keep candidates from the end while they fit. */
	while (k > 0 && kept + bytes[k - 1] <= budget) {
		kept += bytes[k - 1];
		k--;
	}
	return (kept <= budget ? k : n);
}

/*
 * A new step begins: choose the cutoff from the sequence learned in the
 * step before (if it saw anything) and start learning again.
 */
void
offload_budget_step(struct offload_budget *b)
{
	if (b->budget >= 0 && (b->nseen > 0 || b->fixed > 0))
		b->cutoff = offload_budget_select(b->seen, b->nseen, b->fixed,
		    (uint64_t)b->budget);
	b->nseen = 0;
	b->fixed = 0;
	b->index = 0;
}

/* Count bytes that stay on the GPU whatever the budget says. */
void
offload_budget_fixed(struct offload_budget *b, uint64_t bytes)
{
	b->fixed += bytes;
}

/*
 * The next candidate of this step has bytes: 1 to offload it, 0 to keep
 * it.  Without a budget, or while learning, every candidate is offloaded.
 */
int
offload_budget_decide(struct offload_budget *b, uint64_t bytes)
{
	uint64_t	*seen;
	size_t		 i = b->index++, alloc;

	if (b->budget < 0)
		return (1);
	if (b->nseen == b->aseen) {
		alloc = b->aseen == 0 ? 256 : b->aseen * 2;
		seen = realloc(b->seen, alloc * sizeof *seen);
		if (seen != NULL) {
			b->seen = seen;
			b->aseen = alloc;
		}
	}
	if (b->nseen < b->aseen)
		b->seen[b->nseen++] = bytes;
	return (i < b->cutoff);
}
