/*
 * slots.c: positions of the items of a caller's array, found by a hash of
 * their content.  The caller owns the items and says how to hash one and
 * whether one is the item looked for; slots keeps only positions + 1, so
 * the array may move (realloc) freely.  Items are never removed.
 */
#include "config.h"

#include <stdlib.h>

#include "vramtrace.h"
#include "slots.h"

/* The slot of hash h: the item's for which same(pos, arg) holds, or an
 * empty one.  The table must exist (slots_reserve). */
static size_t *
slots_walk(const struct slots *t, uint64_t h, slots_same_fn same, const void *arg)
{
	size_t	j;

	h *= 0x9e3779b97f4a7c15ULL;	/* spread handles that differ high */
	for (j = (size_t)(h >> 32) & t->mask; t->slot[j] != 0;
	    j = (j + 1) & t->mask) {
		if (same != NULL && same(t->slot[j] - 1, arg))
			break;
	}
	return (&t->slot[j]);
}

/*
 * The hash of a stream of a device with one more number (its layer, its
 * process; 0 when none), for the tables of streams and of what is kept
 * per stream.
 */
uint64_t
slots_hash_stream(uint64_t stream, int32_t device, uint64_t other)
{
	return (stream ^ ((uint64_t)(uint32_t)device << 40) ^
	    (other * 0xff51afd7ed558ccdULL));
}

/*
 * The slot of the item with hash h for which same(pos, arg) holds: *slot
 * is its position + 1, or 0 when there is none, and then the caller may
 * store the position + 1 of an item it adds there (after slots_reserve).
 * NULL when the table is empty and has no slot yet.  The table itself is
 * not changed: a const one may be searched.
 */
size_t *
slots_find(const struct slots *t, uint64_t h, slots_same_fn same, const void *arg)
{
	if (t->slot == NULL)
		return (NULL);
	return (slots_walk(t, h, same, arg));
}

/*
 * Make room for an item at position n (the caller's array holds n items,
 * each hashed by hash(pos, arg)): the table grows, and is filled again,
 * when it would be more than half full.
 */
void
slots_reserve(struct slots *t, size_t n, slots_hash_fn hash, const void *arg)
{
	size_t	i;

	if (t->slot != NULL && 2 * (n + 1) <= t->mask + 1)
		return;
	t->mask = t->slot == NULL ? 63 : 2 * t->mask + 1;
	while (2 * (n + 1) > t->mask + 1)
		t->mask = 2 * t->mask + 1;
	free(t->slot);
	t->slot = xcalloc(t->mask + 1, sizeof *t->slot);
	for (i = 0; i < n; i++)
		*slots_walk(t, hash(i, arg), NULL, NULL) = i + 1;
}

/* Free the table; it is empty and usable again. */
void
slots_free(struct slots *t)
{
	free(t->slot);
	t->slot = NULL;
	t->mask = 0;
}
