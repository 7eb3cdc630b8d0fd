/*
 * stack-table.c: the map the stack capture interns by, from an array of
 * 64-bit words (a stack's raw frames, a code object and an instruction
 * offset, ...) to a 64-bit value.
 *
 * Open addressing with linear probing over a power-of-two array of slots,
 * kept at most half full.  An entry owns a copy of its words; a hash of 0
 * marks an empty slot and is never produced by stack_table_hash().  The
 * tables live as long as the process and are never shrunk.  Callers
 * serialise access (a table is not thread-safe).  Nothing here exits or
 * prints: a failed allocation returns NULL and the caller goes without.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "stack.h"

/* A hash of the words, a multiply and a shift each (hot path); never 0. */
uint64_t
stack_table_hash(const uint64_t *w, uint32_t n)
{
	uint64_t	h = 0x9e3779b97f4a7c15ull ^ n;
	uint32_t	i;

	for (i = 0; i < n; i++) {
		h = (h ^ w[i]) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	return (h == 0 ? 1 : h);
}

/*
 * The entry for these words (hash from stack_table_hash()), or NULL.  The
 * entry stays valid until the next stack_table_add() to this table.
 */
struct stack_table_entry *
stack_table_find(struct stack_table *t, const uint64_t *w, uint32_t n,
    uint64_t hash)
{
	struct stack_table_entry	*e;
	size_t				 i;

	if (t->slots == NULL)
		return (NULL);
	for (i = hash & t->mask;; i = (i + 1) & t->mask) {
		e = &t->slots[i];
		if (e->hash == 0)
			return (NULL);
		if (e->hash == hash && e->nwords == n &&
		    memcmp(e->words, w, n * sizeof *w) == 0)
			return (e);
	}
}

static int
table_grow(struct stack_table *t)
{
	struct stack_table_entry	*old = t->slots, *e;
	size_t				 oldn = t->slots == NULL ? 0 :
					    t->mask + 1, n, i, j;

	n = oldn == 0 ? 256 : 2 * oldn;
	if ((t->slots = calloc(n, sizeof *t->slots)) == NULL) {
		t->slots = old;
		return (-1);
	}
	t->mask = n - 1;
	for (i = 0; i < oldn; i++) {
		if (old[i].hash == 0)
			continue;
		for (j = old[i].hash & t->mask; t->slots[j].hash != 0;
		    j = (j + 1) & t->mask)
			;
		e = &t->slots[j];
		*e = old[i];
	}
	free(old);
	return (0);
}

/*
 * Add words (not present yet) with value; the table copies them.  Returns
 * the new entry, or NULL when memory ran out.
 */
struct stack_table_entry *
stack_table_add(struct stack_table *t, const uint64_t *w, uint32_t n,
    uint64_t hash, uint64_t value)
{
	struct stack_table_entry	*e;
	uint64_t			*copy;
	size_t				 i;

	if ((t->slots == NULL || 2 * (t->count + 1) > t->mask + 1) &&
	    table_grow(t) != 0)
		return (NULL);
	if ((copy = malloc((n == 0 ? 1 : n) * sizeof *copy)) == NULL)
		return (NULL);
	memcpy(copy, w, n * sizeof *w);
	for (i = hash & t->mask; t->slots[i].hash != 0; i = (i + 1) & t->mask)
		;
	e = &t->slots[i];
	e->hash = hash;
	e->words = copy;
	e->nwords = n;
	e->value = value;
	t->count++;
	return (e);
}
