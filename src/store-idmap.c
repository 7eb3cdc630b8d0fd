/*
 * store-idmap.c: a small map from 64-bit hashes to row ids, so that a
 * frame or a stack the store has written before costs a hash and no SQL
 * (store-site.c).
 *
 * Shape: open addressing with linear probing over two parallel
 * power-of-two arrays, at most half full; a key of 0 marks an empty slot,
 * so 0 is never a key.  Entries are never removed.
 */
#include "config.h"

#include "store-int.h"

#include <stdlib.h>
#include <string.h>

/* Free a map's memory; it is empty and usable again. */
void
store_idmap_free(struct store_idmap *m)
{
	free(m->keys);
	free(m->ids);
	memset(m, 0, sizeof *m);
}

/* The id stored for key, or 0. */
int64_t
store_idmap_get(struct store_idmap *m, uint64_t key)
{
	size_t	j;

	if (m->keys == NULL)
		return (0);
	for (j = key & m->mask; m->keys[j] != 0; j = (j + 1) & m->mask) {
		if (m->keys[j] == key)
			return (m->ids[j]);
	}
	return (0);
}

/* Store id under key (key != 0), replacing what was there. */
void
store_idmap_put(struct store_idmap *m, uint64_t key, int64_t id)
{
	uint64_t	*okeys = m->keys;
	int64_t		*oids = m->ids;
	size_t		 n = m->mask + 1, i, j;

	if (m->keys == NULL || 2 * (m->count + 1) > m->mask + 1) {
		m->mask = m->keys == NULL ? 255 : 2 * n - 1;
		m->keys = xcalloc(m->mask + 1, sizeof *m->keys);
		m->ids = xcalloc(m->mask + 1, sizeof *m->ids);
		m->count = 0;
		for (i = 0; okeys != NULL && i < n; i++) {
			if (okeys[i] != 0)
				store_idmap_put(m, okeys[i], oids[i]);
		}
		free(okeys);
		free(oids);
	}
	for (j = key & m->mask; m->keys[j] != 0; j = (j + 1) & m->mask) {
		if (m->keys[j] == key) {
			m->ids[j] = id;
			return;
		}
	}
	m->keys[j] = key;
	m->ids[j] = id;
	m->count++;
}
