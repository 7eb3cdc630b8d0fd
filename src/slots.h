/*
 * slots.h: positions of the items of a growing array, found by a hash of
 * their content (slots.c), for the lookups that would otherwise scan the
 * whole array per item (streams, keys: quadratic on many streams).
 */
#ifndef SLOTS_H
#define SLOTS_H

#include <stddef.h>
#include <stdint.h>

/* Open addressing with linear probing, at most half full. */
struct slots {
	size_t	*slot;		/* an item's position + 1; 0: empty */
	size_t	 mask;		/* slots - 1 */
};

/* Is the item at position pos the one the caller looks for (arg)? */
typedef int	 (*slots_same_fn)(size_t, const void *);
/* The hash of the item at position pos of the caller's array (arg). */
typedef uint64_t (*slots_hash_fn)(size_t, const void *);

uint64_t slots_hash_stream(uint64_t, int32_t, uint64_t);
size_t	*slots_find(const struct slots *, uint64_t, slots_same_fn, const void *);
void	 slots_reserve(struct slots *, size_t, slots_hash_fn, const void *);
void	 slots_free(struct slots *);

#endif
