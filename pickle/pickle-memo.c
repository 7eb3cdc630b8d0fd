/*
 * pickle-memo.c: the memo slots a later opcode can still read.
 *
 * Python's unpickler keeps every memoized value to the end; a snapshot
 * memoizes every dict it writes, so that memo grows with the file.  Here
 * pass 1 (pickle-scan.c) leaves in refs one bit per index, set when some
 * GET reads that index, and only those slots are kept: the shared strings,
 * frames and stacks of a snapshot, not its millions of trace entries.  A
 * kept slot is an entry of an open-addressing hash table (linear probing,
 * at most half full, deleted by shifting back), which holds the value and
 * the offset of the PUT that stored it.  When the value is a container
 * whose items are not in memory (a lossy one, pickle-role.c) and it is
 * complete, it is retired: the entry goes and a record of its bytes goes to
 * the spill (pickle-spill.c), from which a later GET replays it.
 *
 * The table is also a cache.  In a real snapshot tens of thousands of
 * stacks are each referenced a few times right after they are written and
 * never again, so keeping every referenced slot to the end grows with the
 * file.  When the parser holds more than PICKLE_MEMO_SOFT bytes, a CLOCK
 * sweep evicts the values not read since the last sweep the same way: any
 * complete value can be rebuilt from its bytes, so an evicted value that
 * is referenced again costs a replay, never a wrong answer.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "pickle-int.h"

#include <stdlib.h>
#include <string.h>

/* Whether pass 1 saw a GET of index i. */
int
pickle_memo_wanted(const struct pickle_memo *m, uint64_t i)
{
	return (i / 8 < m->refs_len && (m->refs[i / 8] >> (i % 8)) & 1);
}

static int
pickle_memo_grow(struct pickle_memo *m, uint64_t *mem)
{
	struct pickle_memo_entry	*old = m->tab, *e;
	size_t				 cap = m->tab_cap, i, h;

	m->tab_cap = cap == 0 ? 64 : cap * 2;
	m->tab = calloc(m->tab_cap, sizeof *m->tab);
	if (m->tab == NULL) {
		m->tab = old;
		m->tab_cap = cap;
		return (-1);
	}
	*mem += (m->tab_cap - cap) * sizeof *m->tab;
	for (i = 0; i < cap; i++) {
		if (!old[i].used)
			continue;
		h = pickle_memo_hash(old[i].index, m->tab_cap);
		while (m->tab[h].used)
			h = (h + 1) & (m->tab_cap - 1);
		e = &m->tab[h];
		*e = old[i];
	}
	free(old);
	return (0);
}

/*
 * Store v (taking its reference) at index i, replacing what was there:
 * at[0] is the offset of the PUT, at[1] and at[2] where the bytes of v
 * begin and end (for a container, its own start and end are used).
 * Returns -1 when out of memory (v is then still the caller's).
 */
int
pickle_memo_store(struct pickle_memo *m, uint32_t i,
    const struct pickle_value *v, const uint64_t *at, uint64_t *mem)
{
	struct pickle_memo_entry	*e;
	size_t				 h;

	if ((e = pickle_memo_find(m, i)) != NULL) {
		pickle_value_unref(&e->v, mem);
		e->v = *v;
		e->put_at = at[0];
		e->start = at[1];
		e->end = at[2];
		return (0);
	}
	if ((m->tab_len + 1) * 2 > m->tab_cap &&
	    pickle_memo_grow(m, mem) != 0)
		return (-1);
	for (h = pickle_memo_hash(i, m->tab_cap); m->tab[h].used;
	    h = (h + 1) & (m->tab_cap - 1))
		/* nothing */;
	e = &m->tab[h];
	e->used = 1;
	e->hot = 0;
	e->index = i;
	e->put_at = at[0];
	e->start = at[1];
	e->end = at[2];
	e->v = *v;
	m->tab_len++;
	return (0);
}

/* Remove entry e (its value already released), shifting back its run. */
static void
pickle_memo_remove(struct pickle_memo *m, struct pickle_memo_entry *e)
{
	size_t	hole = (size_t)(e - m->tab), h, home, mask = m->tab_cap - 1;

	m->tab_len--;
	for (h = (hole + 1) & mask; m->tab[h].used; h = (h + 1) & mask) {
		home = pickle_memo_hash(m->tab[h].index, m->tab_cap);
		/* Move h into the hole unless its home lies after the hole. */
		if (((h - home) & mask) >= ((h - hole) & mask)) {
			m->tab[hole] = m->tab[h];
			hole = h;
		}
	}
	memset(&m->tab[hole], 0, sizeof m->tab[hole]);
}

/* Replace entry e by the record of its bytes, in the spill.  -1 on error. */
static int
pickle_memo_spill(struct pickle_memo *m, struct pickle_memo_entry *e,
    uint64_t *mem)
{
	struct pickle_container		*c;
	struct pickle_spill_rec		 rec;

	rec.start = e->start;
	rec.end = e->end;
	if (pickle_value_is_container(&e->v)) {
		c = e->v.u.c;
		rec.start = c->start;
		rec.end = c->moved ? 0 : c->end;
		if (c->slot == e->index)
			c->slot = PICKLE_NO_SLOT;
	}
	rec.put_at = e->put_at;
	if (pickle_spill_put(&m->spill, e->index, &rec) != 0)
		return (-1);
	pickle_value_unref(&e->v, mem);
	pickle_memo_remove(m, e);
	return (0);
}

/*
 * Container c is complete and its items will not stay in memory: if its
 * memo slot still holds it, drop it from the table and keep only the
 * record of its bytes (none that can be replayed if it was moved).
 * Returns -1 with errno set when the spill cannot be written.
 */
int
pickle_memo_retire(struct pickle_memo *m, struct pickle_container *c,
    uint64_t *mem)
{
	struct pickle_memo_entry	*e;

	if (c->slot == PICKLE_NO_SLOT ||
	    (e = pickle_memo_find(m, c->slot)) == NULL ||
	    !pickle_value_is_container(&e->v) || e->v.u.c != c)
		return (0);
	return (pickle_memo_spill(m, e, mem));
}

/*
 * Evict values not read since the last sweep, to the spill, until *mem is
 * below low or the table was swept twice.  Containers not yet complete
 * (not sealed), or changed off the stack, stay.  Returns -1 with errno set
 * when the spill cannot be written.
 */
int
pickle_memo_evict(struct pickle_memo *m, uint64_t *mem, uint64_t low)
{
	struct pickle_memo_entry	*e;
	const struct pickle_container	*c;
	size_t				 n;

	for (n = 0; *mem > low && n < 2 * m->tab_cap; n++) {
		m->hand = (m->hand + 1) & (m->tab_cap - 1);
		e = &m->tab[m->hand];
		if (!e->used)
			continue;
		if (e->hot) {
			e->hot = 0;
			continue;
		}
		if (pickle_value_is_container(&e->v)) {
			c = e->v.u.c;
			if (!c->sealed || c->moved)
				continue;
		}
		if (pickle_memo_spill(m, e, mem) != 0)
			return (-1);
		/* The run after e shifted back into its place: look again. */
		m->hand = (m->hand - 1) & (m->tab_cap - 1);
	}
	return (0);
}

/* Release every value, the table, the bitmap and the spill. */
void
pickle_memo_free(struct pickle_memo *m, uint64_t *mem)
{
	size_t	i;

	for (i = 0; i < m->tab_cap; i++) {
		if (m->tab[i].used)
			pickle_value_unref(&m->tab[i].v, mem);
	}
	*mem -= m->tab_cap * sizeof *m->tab + m->refs_len;
	free(m->tab);
	free(m->refs);
	pickle_spill_close(&m->spill);
	memset(m, 0, sizeof *m);
	pickle_spill_init(&m->spill);
}
