/*
 * offload-slab.c: carving the pinned host slab into per-tensor blocks.
 *
 * The slab is one host allocation made once (cudaHostAlloc is slow, about
 * 3 ms a call, and it synchronizes the device), so the engine hands out
 * pieces of it instead.  Offsets are relative to the slab's base; every
 * block starts and ends on OFFLOAD_SLAB_ALIGN bytes, which keeps DMA
 * transfers aligned whatever the element size.
 *
 * Free space is an array of ranges sorted by offset, with no two ranges
 * touching (they are merged when a block comes back).  Allocation is first
 * fit: blocks come and go almost in stack order (forward packs in order,
 * backward unpacks in reverse), so the list stays short.  A block whose
 * last copy (device-to-host, or host-to-device when it was restored) may
 * still be running is not free yet: it waits in the pending array with
 * a reference to that copy's event and joins the free ranges only once the
 * event has completed.  That is the rule "a pinned buffer is reused only
 * after the event of its last copy completed"; ignore_events switches it
 * off for the test that shows why it exists.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "offload.h"

static uint64_t
offload_slab_round(uint64_t bytes)
{
	if (bytes == 0)
		bytes = 1;
	return ((bytes + OFFLOAD_SLAB_ALIGN - 1) &
	    ~(uint64_t)(OFFLOAD_SLAB_ALIGN - 1));
}

static int
offload_slab_grow(struct offload_range **a, size_t n, size_t *alloc)
{
	struct offload_range	*r;
	size_t			 want;

	if (n < *alloc)
		return (0);
	want = *alloc == 0 ? 16 : *alloc * 2;
	if ((r = realloc(*a, want * sizeof *r)) == NULL)
		return (-1);
	*a = r;
	*alloc = want;
	return (0);
}

/* Put [off, off + len) back among the free ranges, merging neighbours. */
static int
offload_slab_insert(struct offload_slab *s, uint64_t off, uint64_t len)
{
	size_t	lo = 0, hi = s->nfree, i;
	int	prev, next;

	while (lo < hi) {
		i = (lo + hi) / 2;
		if (s->free[i].off < off)
			lo = i + 1;
		else
			hi = i;
	}
	i = lo;
	prev = i > 0 && s->free[i - 1].off + s->free[i - 1].len == off;
	next = i < s->nfree && off + len == s->free[i].off;
	if (prev && next) {
		s->free[i - 1].len += len + s->free[i].len;
		memmove(&s->free[i], &s->free[i + 1],
		    (s->nfree - i - 1) * sizeof *s->free);
		s->nfree--;
	} else if (prev)
		s->free[i - 1].len += len;
	else if (next) {
		s->free[i].off = off;
		s->free[i].len += len;
	} else {
		if (offload_slab_grow(&s->free, s->nfree, &s->afree) != 0)
			return (-1);
		memmove(&s->free[i + 1], &s->free[i],
		    (s->nfree - i) * sizeof *s->free);
		s->free[i].off = off;
		s->free[i].len = len;
		s->nfree++;
	}
	s->used -= len;
	return (0);
}

/* Move every pending block whose copy completed to the free ranges. */
static void
offload_slab_collect(struct offload_slab *s, struct offload_event_pool *p)
{
	struct offload_range	*r;
	size_t			 i = 0;

	while (i < s->npending) {
		r = &s->pending[i];
		if (!s->ignore_events && !offload_event_done(p, r->event)) {
			i++;
			continue;
		}
		if (offload_slab_insert(s, r->off, r->len) != 0)
			return;		/* stays pending; tried again later */
		offload_event_unref(p, r->event);
		*r = s->pending[--s->npending];
	}
}

/*
 * Start a slab of size bytes at host address base (0 and 0: no slab; every
 * allocation fails).  Returns 0, or -1 when out of memory.
 */
int
offload_slab_init(struct offload_slab *s, uint64_t base, uint64_t size)
{
	memset(s, 0, sizeof *s);
	s->base = base;
	s->size = size & ~(uint64_t)(OFFLOAD_SLAB_ALIGN - 1);
	s->used = s->size;
	if (s->size == 0)
		return (0);
	return (offload_slab_insert(s, 0, s->size));
}

/*
 * Release the bookkeeping and the references of pending blocks; the host
 * memory itself belongs to the caller.  The slab is left with no space.
 */
void
offload_slab_clear(struct offload_slab *s, struct offload_event_pool *p)
{
	size_t	i;

	for (i = 0; i < s->npending; i++)
		offload_event_unref(p, s->pending[i].event);
	free(s->free);
	free(s->pending);
	memset(s, 0, sizeof *s);
}

/*
 * Carve an aligned block of at least bytes; its offset goes to *off.
 * Returns 0, or -1 when no free range is large enough (the caller falls
 * back to its own allocation).
 */
int
offload_slab_alloc(struct offload_slab *s, struct offload_event_pool *p,
    uint64_t bytes, uint64_t *off)
{
	uint64_t	len = offload_slab_round(bytes);
	size_t		i;

	offload_slab_collect(s, p);
	for (i = 0; i < s->nfree; i++) {
		if (s->free[i].len < len)
			continue;
		*off = s->free[i].off;
		s->free[i].off += len;
		s->free[i].len -= len;
		if (s->free[i].len == 0) {
			memmove(&s->free[i], &s->free[i + 1],
			    (s->nfree - i - 1) * sizeof *s->free);
			s->nfree--;
		}
		s->used += len;
		return (0);
	}
	return (-1);
}

/*
 * Give back the block at off of bytes (as asked of _alloc).  event is the
 * block's last copy (OFFLOAD_NO_EVENT: none): the slab takes its own
 * reference and reuses the block only after the event completed.  Returns
 * 0, or -1 when out of memory (the block is then lost until _reset).
 */
int
offload_slab_free(struct offload_slab *s, struct offload_event_pool *p,
    uint64_t off, uint64_t bytes, uint32_t event)
{
	struct offload_range	*r;

	if (offload_slab_grow(&s->pending, s->npending, &s->apending) != 0)
		return (-1);
	r = &s->pending[s->npending++];
	r->off = off;
	r->len = offload_slab_round(bytes);
	r->event = event;
	offload_event_ref(p, event);
	offload_slab_collect(s, p);
	return (0);
}

/*
 * Make the whole slab free again.  The caller has synchronized every
 * stream that copied to or from it, and forgets every block it had.
 */
void
offload_slab_reset(struct offload_slab *s, struct offload_event_pool *p)
{
	uint64_t	base = s->base, size = s->size;

	offload_slab_clear(s, p);
	if (offload_slab_init(s, base, size) != 0) {
		/* Out of memory for one range: keep the slab, empty. */
		s->base = base;
		s->size = size;
		s->used = size;
	}
}
