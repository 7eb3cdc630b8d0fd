/*
 * store-live.c: the table of allocations that are live in the writer.
 *
 * The store writes one row per allocation, with its free time, so an
 * allocation and its free cost one INSERT rather than an INSERT and an
 * UPDATE.  While an allocation is live its row waits here, keyed by (device,
 * layer, address); a free completes it.  At each commit the rows still live
 * are inserted with no free time and remember their rowid, so a later free
 * becomes an UPDATE of that row.
 *
 * Shape: open addressing with linear probing over a power-of-two array of
 * small slots (the key and the index of the entry in a dense pool, whose
 * freed places are reused), so that a probe reads 24 bytes and the entry
 * only on a hit; deletion uses backward-shift, so there are no tombstones
 * and a lookup stops at the first empty slot.  The table is at most half
 * full.  Entries keep their place in the pool while they are live, so a
 * pointer to one stays good until the next store_live_add().
 */
#include "config.h"

#include "store-int.h"

#include <stdlib.h>
#include <string.h>

static uint64_t
live_hash(uint64_t address, int32_t device, int layer)
{
	uint64_t	h;

	h = address ^ ((uint64_t)(uint32_t)device << 40) ^
	    ((uint64_t)layer << 58);
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return (h);
}

/* Make an empty table. */
void
store_live_init(struct store_live *t)
{
	memset(t, 0, sizeof *t);
}

/* Free a table's memory. */
void
store_live_free(struct store_live *t)
{
	free(t->slots);
	free(t->pool);
	free(t->spare);
	memset(t, 0, sizeof *t);
}

static void
live_grow(struct store_live *t)
{
	struct store_live_slot	*old = t->slots, *e;
	size_t			 n = t->mask + 1, i, j;

	t->mask = n == 1 ? 1023 : 2 * n - 1;
	t->slots = xcalloc(t->mask + 1, sizeof *t->slots);
	if (old == NULL)
		return;
	for (i = 0; i < n; i++) {
		e = &old[i];
		if (e->entry == 0)
			continue;
		j = live_hash(e->address, e->device, e->layer) & t->mask;
		while (t->slots[j].entry != 0)
			j = (j + 1) & t->mask;
		t->slots[j] = *e;
	}
	free(old);
}

/* The slot of (device, layer, address), or NULL. */
static struct store_live_slot *
live_slot(struct store_live *t, uint64_t address, int32_t device, int layer)
{
	struct store_live_slot	*e;
	size_t			 j;

	if (t->slots == NULL)
		return (NULL);
	j = live_hash(address, device, layer) & t->mask;
	for (;;) {
		e = &t->slots[j];
		if (e->entry == 0)
			return (NULL);
		if (e->address == address && e->device == device &&
		    e->layer == layer)
			return (e);
		j = (j + 1) & t->mask;
	}
}

/* Find the entry for (device, layer, address), or NULL. */
struct store_live_entry *
store_live_find(struct store_live *t, uint64_t address, int32_t device,
    int layer)
{
	struct store_live_slot	*e;

	if ((e = live_slot(t, address, device, layer)) == NULL)
		return (NULL);
	return (&t->pool[e->entry - 1]);
}

/* A place in the pool for a new entry: its index. */
static uint32_t
live_place(struct store_live *t)
{
	if (t->nspare > 0)
		return (t->spare[--t->nspare]);
	if (t->pool_used == t->pool_alloc) {
		t->pool_alloc = t->pool_alloc == 0 ? 512 : 2 * t->pool_alloc;
		if (t->pool_alloc > UINT32_MAX)
			fatal("too many live allocations");
		t->pool = xreallocarray(t->pool, t->pool_alloc,
		    sizeof *t->pool);
		t->spare = xreallocarray(t->spare, t->pool_alloc,
		    sizeof *t->spare);
	}
	return ((uint32_t)t->pool_used++);
}

/*
 * Add a live allocation and return its entry (rowid 0: not inserted yet).
 * If the key is already live, that entry is returned unchanged and *dup is
 * set: the caller decides what a second allocation of a live address means.
 */
struct store_live_entry *
store_live_add(struct store_live *t, const struct store_allocation *a,
    int *dup)
{
	struct store_live_entry	*e;
	struct store_live_slot	*slot;
	size_t			 j;
	uint32_t		 k;

	*dup = 0;
	if ((e = store_live_find(t, a->address, a->device, a->layer)) != NULL) {
		*dup = 1;
		return (e);
	}
	if (t->slots == NULL || 2 * (t->count + 1) > t->mask + 1)
		live_grow(t);
	j = live_hash(a->address, a->device, a->layer) & t->mask;
	while (t->slots[j].entry != 0)
		j = (j + 1) & t->mask;
	k = live_place(t);
	slot = &t->slots[j];
	slot->address = a->address;
	slot->device = a->device;
	slot->layer = a->layer;
	slot->entry = k + 1;
	e = &t->pool[k];
	e->rowid = 0;
	e->a = *a;
	t->count++;
	return (e);
}

/* Remove an entry that store_live_find() or store_live_add() returned. */
void
store_live_remove(struct store_live *t, struct store_live_entry *e)
{
	struct store_live_slot	*s;
	size_t			 i, j, k;

	s = live_slot(t, e->a.address, e->a.device, e->a.layer);
	t->spare[t->nspare++] = s->entry - 1;
	i = j = (size_t)(s - t->slots);
	t->slots[i].entry = 0;
	for (;;) {
		j = (j + 1) & t->mask;
		if (t->slots[j].entry == 0)
			break;
		k = live_hash(t->slots[j].address, t->slots[j].device,
		    t->slots[j].layer) & t->mask;
		/* Move j back to the hole at i unless its home lies in (i, j]. */
		if ((i <= j) ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		t->slots[i] = t->slots[j];
		t->slots[j].entry = 0;
		i = j;
	}
	t->count--;
}

/*
 * Call fn for every live entry, in slot order.  fn may change the entry's
 * rowid but not add or remove entries.  Stops and returns -1 when fn does.
 */
int
store_live_each(struct store_live *t,
    int (*fn)(struct store_live_entry *, void *), void *arg)
{
	size_t	i;

	if (t->slots == NULL)
		return (0);
	for (i = 0; i <= t->mask; i++) {
		if (t->slots[i].entry != 0 &&
		    fn(&t->pool[t->slots[i].entry - 1], arg) != 0)
			return (-1);
	}
	return (0);
}
