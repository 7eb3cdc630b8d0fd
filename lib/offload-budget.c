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
 *
 * Some candidates are useless to offload: their GPU storage stays alive
 * anyway (the input batch the training loop holds, a tensor also saved
 * outside the hooks), so their copies cost bandwidth and lower no peak.
 * The caller reports them once backward begins (offload_budget_alive); the
 * flag sticks to the pack that made the candidate (its place among all
 * the tensors the step saved) while later steps see a candidate of the
 * same size there: such a candidate is never offloaded again, with or
 * without a budget, and the selection counts its bytes as kept.  By pack,
 * not by candidate: the packs are what the profile checks a step against
 * (a step's candidates are numbered as they come), and a flag that slid
 * onto another tensor of the same size would keep a tensor whose storage
 * offloading frees, memory no prediction counts.  seen and alive are this step's
 * candidates, for the selection and the profile; pbytes and palive are by
 * pack and hold what earlier steps left there.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "offload.h"

/* Budget mode with budget bytes, or off when budget is negative. */
void
offload_budget_init(struct offload_budget *b, int64_t budget)
{
	b->budget = budget;
	b->seen = NULL;
	b->alive = NULL;
	b->nseen = b->aseen = 0;
	b->pbytes = NULL;
	b->palive = NULL;
	b->apack = 0;
	b->fixed = 0;
	b->kept = 0;
	b->cutoff = SIZE_MAX;
	b->index = 0;
}

/* Free the learned sequence. */
void
offload_budget_free(struct offload_budget *b)
{
	free(b->seen);
	free(b->alive);
	free(b->pbytes);
	free(b->palive);
	offload_budget_init(b, b->budget);
}

/*
 * The smallest k such that fixed plus the bytes of the alive candidates
 * (kept wherever they are) and of the others from k to n-1 is within
 * budget: offloading the candidates before k that are not alive is
 * enough.  Returns n when even that for every candidate does not fit
 * (offload them all).  alive may be NULL only when n is 0.
 */
size_t
offload_budget_select(const uint64_t *bytes, const uint8_t *alive,
    size_t n, uint64_t fixed, uint64_t budget)
{
	uint64_t	kept = fixed;
	size_t		i, k = n;

	for (i = 0; i < n; i++)
		kept += alive[i] ? bytes[i] : 0;
	/* Keep candidates from the end while they fit. */
	while (k > 0 && (alive[k - 1] || kept + bytes[k - 1] <= budget)) {
		kept += alive[k - 1] ? 0 : bytes[k - 1];
		k--;
	}
	return (kept <= budget ? k : n);
}

/*
 * Room for index i in a pair of arrays of capacity *cap (sizes and flags):
 * 0, or -1 when out of memory.  Flags of a new capacity start cleared.
 */
static int
offload_budget_grow(uint64_t **bytes, uint8_t **flags, size_t *cap,
    size_t i)
{
	uint64_t	*nb;
	uint8_t		*nf;
	size_t		 alloc;

	if (i < *cap)
		return (0);
	alloc = *cap == 0 ? 256 : *cap * 2;
	while (alloc <= i)
		alloc *= 2;
	if ((nb = realloc(*bytes, alloc * sizeof *nb)) == NULL)
		return (-1);
	*bytes = nb;
	if ((nf = realloc(*flags, alloc * sizeof *nf)) == NULL)
		return (-1);
	*flags = nf;
	memset(nf + *cap, 0, alloc - *cap);
	*cap = alloc;
	return (0);
}

/*
 * A new step begins: choose the cutoff from the sequence learned in the
 * step before (if it saw anything), note what that step would have kept
 * with every candidate on the GPU, and start learning again.
 */
void
offload_budget_step(struct offload_budget *b)
{
	size_t	i;

	b->kept = b->fixed;
	for (i = 0; i < b->nseen; i++)
		b->kept += b->seen[i];
	if (b->budget < 0)
		b->cutoff = SIZE_MAX;
	else if (b->nseen > 0 || b->fixed > 0)
		b->cutoff = offload_budget_select(b->seen, b->alive, b->nseen,
		    b->fixed, (uint64_t)b->budget);
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
 * The next candidate of this step, made by pack, has bytes: 1 to offload
 * it, 0 to keep it.  A candidate that pack made alive in an earlier step,
 * of the same size, is kept; otherwise candidates before the cutoff are
 * offloaded (every one without a budget or while learning: the cutoff is
 * SIZE_MAX; the engine may set another, see offload-profile.c).  before,
 * when not negative, says instead whether the candidate comes before the
 * cutoff (the engine places a cutoff learned from the profile by pack:
 * which packs make candidates varies from step to step).  Its index is
 * b->index - 1 after the call.
 */
int
offload_budget_decide(struct offload_budget *b, uint64_t bytes, int before,
    size_t pack)
{
	size_t	i = b->index++;
	int	alive = 0;

	/* Out of memory: the flags are lost, the step goes on without. */
	if (offload_budget_grow(&b->pbytes, &b->palive, &b->apack, pack) == 0) {
		alive = b->pbytes[pack] == bytes && b->palive[pack];
		b->pbytes[pack] = bytes;
		b->palive[pack] = (uint8_t)alive;
	}
	/* Out of memory: this step's sequence stops here. */
	if (i == b->nseen &&
	    offload_budget_grow(&b->seen, &b->alive, &b->aseen, i) == 0) {
		b->seen[i] = bytes;
		b->alive[i] = (uint8_t)alive;
		b->nseen = i + 1;
	}
	if (alive)
		return (0);
	return (before >= 0 ? before != 0 : i < b->cutoff);
}

/*
 * Candidate i of this step, made by pack, offloaded, still had its GPU
 * storage alive when backward began: keep it from now on.  What was not
 * recorded is ignored.
 */
void
offload_budget_alive(struct offload_budget *b, size_t i, size_t pack)
{
	if (i < b->nseen)
		b->alive[i] = 1;
	if (pack < b->apack)
		b->palive[pack] = 1;
}
