/*
 * offload-dedupe.c: the dedupe table, from a tensor's key to the id of the
 * live offloaded tensor with that key.
 *
 * Autograd often saves the same tensor (or the same view of one storage)
 * for several nodes; copying it once is enough.  The key is everything that
 * makes two views read the same bytes the same way: the storage address,
 * the allocation generation of that address, the tensor's version, the
 * storage offset, dtype, shape and stride.  The generation is what makes
 * the table safe: the caching allocator hands a freed address to the next
 * tensor, and a key without it would take the newcomer for the dead tensor
 * and skip its copy (TRL PR 6241).  The version (autograd's counter of
 * writes in place) does the same for a tensor written in place between
 * two saves: its first copy holds the bytes before the write.  A key lives as long as the engine has the tensor's copy;
 * the engine releases it when the tensor is unpacked for the last time or
 * dropped, and release removes it only if it still names that id.  A
 * lookup can be told to ignore generations, which is the bug the tests
 * show failing.
 *
 * Shape: a chained hash table with a power-of-two bucket count that doubles
 * when the load passes 1; a node owns a copy of its key.  The hash covers
 * the whole key, the generation and version too: the caching allocator
 * gives a freed address to the next tensor of the same size, so a step's
 * keys share a few addresses, shapes and strides (every layer of a
 * transformer saves the same ones), and a hash of those alone would put
 * them in a few chains, each searched whole at every pack (all of them in
 * one, for a chain of operations on tensors of one size:
 * bench/offload/dedupe).  A lookup that ignores generations (the bug, for
 * tests) searches every chain.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "offload.h"

struct offload_dedupe_node {
	struct offload_key		 key;
	uint64_t			 id;
	struct offload_dedupe_node	*next;
};

static uint64_t
offload_dedupe_hash(const struct offload_key *k)
{
	uint64_t	h = 1469598103934665603ULL;
	int32_t		i;

	h = (h ^ k->storage) * 1099511628211ULL;
	h = (h ^ k->generation) * 1099511628211ULL;
	h = (h ^ k->version) * 1099511628211ULL;
	h = (h ^ (uint64_t)k->offset) * 1099511628211ULL;
	h = (h ^ (uint64_t)(uint32_t)k->dtype) * 1099511628211ULL;
	for (i = 0; i < k->ndim; i++) {
		h = (h ^ (uint64_t)k->shape[i]) * 1099511628211ULL;
		h = (h ^ (uint64_t)k->stride[i]) * 1099511628211ULL;
	}
	return (h ^ (h >> 29));
}

static int
offload_dedupe_same(const struct offload_key *a, const struct offload_key *b,
    int generation)
{
	size_t	n = (size_t)a->ndim * sizeof a->shape[0];

	if (a->storage != b->storage || a->offset != b->offset ||
	    a->dtype != b->dtype || a->ndim != b->ndim ||
	    a->version != b->version)
		return (0);
	if (generation && a->generation != b->generation)
		return (0);
	return (memcmp(a->shape, b->shape, n) == 0 &&
	    memcmp(a->stride, b->stride, n) == 0);
}

static int
offload_dedupe_resize(struct offload_dedupe *d, size_t nbuckets)
{
	struct offload_dedupe_node	**b, *node, *next;
	size_t				  i, h;

	if ((b = calloc(nbuckets, sizeof *b)) == NULL)
		return (-1);
	for (i = 0; i < d->nbuckets; i++) {
		for (node = d->buckets[i]; node != NULL; node = next) {
			next = node->next;
			h = offload_dedupe_hash(&node->key) & (nbuckets - 1);
			node->next = b[h];
			b[h] = node;
		}
	}
	free(d->buckets);
	d->buckets = b;
	d->nbuckets = nbuckets;
	return (0);
}

/* An empty table; memory comes with the first insert. */
void
offload_dedupe_init(struct offload_dedupe *d)
{
	d->buckets = NULL;
	d->nbuckets = 0;
	d->count = 0;
}

/* Remove every key and free the table's memory. */
void
offload_dedupe_clear(struct offload_dedupe *d)
{
	struct offload_dedupe_node	*node, *next;
	size_t				 i;

	for (i = 0; i < d->nbuckets; i++) {
		for (node = d->buckets[i]; node != NULL; node = next) {
			next = node->next;
			free(node);
		}
	}
	free(d->buckets);
	offload_dedupe_init(d);
}

/*
 * Look k up; with generation zero the generations are not compared (the
 * broken behaviour, for tests) and every chain is searched.  Returns 1 and
 * the id in *id on a hit, 0 on a miss.  Keys of more than
 * VRAMTRACE_OFFLOAD_MAX_DIMS never hit.
 */
int
offload_dedupe_find(struct offload_dedupe *d, const struct offload_key *k,
    int generation, uint64_t *id)
{
	struct offload_dedupe_node	*node;
	size_t				 i, n;

	if (d->nbuckets == 0 || k->ndim > VRAMTRACE_OFFLOAD_MAX_DIMS)
		return (0);
	i = generation ? offload_dedupe_hash(k) & (d->nbuckets - 1) : 0;
	for (n = generation ? i + 1 : d->nbuckets; i < n; i++) {
		for (node = d->buckets[i]; node != NULL; node = node->next) {
			if (offload_dedupe_same(&node->key, k, generation)) {
				*id = node->id;
				return (1);
			}
		}
	}
	return (0);
}

/*
 * Make k name id, replacing what it named before.  Returns 1 when k was
 * added, 0 when k is not deduplicated (too many dimensions), -1 when out of
 * memory.
 */
int
offload_dedupe_insert(struct offload_dedupe *d, const struct offload_key *k,
    uint64_t id)
{
	struct offload_dedupe_node	*node;
	size_t				 h;

	if (k->ndim < 0 || k->ndim > VRAMTRACE_OFFLOAD_MAX_DIMS)
		return (0);
	if (d->count >= d->nbuckets &&
	    offload_dedupe_resize(d, d->nbuckets == 0 ? 64 : d->nbuckets * 2)
	    != 0)
		return (-1);
	h = offload_dedupe_hash(k) & (d->nbuckets - 1);
	for (node = d->buckets[h]; node != NULL; node = node->next) {
		if (offload_dedupe_same(&node->key, k, 1)) {
			node->id = id;
			return (1);
		}
	}
	if ((node = malloc(sizeof *node)) == NULL)
		return (-1);
	node->key = *k;
	node->id = id;
	node->next = d->buckets[h];
	d->buckets[h] = node;
	d->count++;
	return (1);
}

/*
 * Remove k if it still names id (a later tensor may have taken the key).
 * Returns 1 when removed, else 0.
 */
int
offload_dedupe_release(struct offload_dedupe *d, const struct offload_key *k,
    uint64_t id)
{
	struct offload_dedupe_node	**pp, *node;

	if (d->nbuckets == 0 || k->ndim > VRAMTRACE_OFFLOAD_MAX_DIMS)
		return (0);
	pp = &d->buckets[offload_dedupe_hash(k) & (d->nbuckets - 1)];
	for (; (node = *pp) != NULL; pp = &node->next) {
		if (offload_dedupe_same(&node->key, k, 1) && node->id == id) {
			*pp = node->next;
			free(node);
			d->count--;
			return (1);
		}
	}
	return (0);
}
