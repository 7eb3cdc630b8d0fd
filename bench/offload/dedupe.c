/*
 * dedupe.c: what the offload engine's dedupe table costs a pack, without
 * a GPU.  A step of 2,000 offloaded tensors of one shape, whose storages
 * the caching allocator gives out again from a few addresses (a source is
 * let go once its copy is done, and the next tensor of its size gets its
 * address: every layer of a transformer saves the same shapes): each pack
 * looks its key up and inserts it, backward releases the keys last packed
 * first.  Prints nanoseconds a pack (lookup, insert and release) for keys
 * spread over 1, 8, 64 and 2,000 addresses, the best of 5 rounds of 20
 * steps.  Built by `make bench`; not installed.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "offload.h"

#define DEDUPE_PACKS	2000
#define DEDUPE_STEPS	20
#define DEDUPE_ROUNDS	5

/* The key of pack i of a step whose storages come from addrs addresses. */
static void
pack_key(struct offload_key *k, int i, int addrs)
{
	memset(k, 0, sizeof *k);
	k->storage = 0x7f0000000000ULL + (uint64_t)(i % addrs) * 16384;
	k->generation = (uint64_t)i + 1;
	k->ndim = 2;
	k->shape[0] = 64;
	k->shape[1] = 64;
	k->stride[0] = 64;
	k->stride[1] = 1;
	k->dtype = 15;
}

/* Nanoseconds a pack over one round of DEDUPE_STEPS steps. */
static double
round_ns(struct offload_dedupe *d, int addrs)
{
	struct offload_key	k;
	struct timespec		a, b;
	uint64_t		id;
	int			s, i;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (s = 0; s < DEDUPE_STEPS; s++) {
		for (i = 0; i < DEDUPE_PACKS; i++) {
			pack_key(&k, i, addrs);
			if (offload_dedupe_find(d, &k, 1, &id) ||
			    offload_dedupe_insert(d, &k, (uint64_t)i) != 1) {
				fprintf(stderr, "dedupe: pack %d: a hit or no "
				    "insert\n", i);
				exit(1);
			}
		}
		for (i = DEDUPE_PACKS - 1; i >= 0; i--) {
			pack_key(&k, i, addrs);
			offload_dedupe_release(d, &k, (uint64_t)i);
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	if (d->count != 0) {
		fprintf(stderr, "dedupe: %zu keys left\n", d->count);
		exit(1);
	}
	return (((double)(b.tv_sec - a.tv_sec) * 1e9 +
	    (double)(b.tv_nsec - a.tv_nsec)) / (DEDUPE_STEPS * DEDUPE_PACKS));
}

int
main(void)
{
	static const int	addrs[] = { 1, 8, 64, DEDUPE_PACKS };
	struct offload_dedupe	d;
	double			best, ns;
	size_t			i;
	int			r;

	printf("dedupe table: %d packs a step, best of %d rounds of %d "
	    "steps\n", DEDUPE_PACKS, DEDUPE_ROUNDS, DEDUPE_STEPS);
	printf("%-10s %14s\n", "addresses", "ns a pack");
	for (i = 0; i < sizeof addrs / sizeof addrs[0]; i++) {
		offload_dedupe_init(&d);
		for (best = 0, r = 0; r < DEDUPE_ROUNDS; r++) {
			ns = round_ns(&d, addrs[i]);
			if (r == 0 || ns < best)
				best = ns;
		}
		offload_dedupe_clear(&d);
		printf("%-10d %14.0f\n", addrs[i], best);
	}
	return (0);
}
