/*
 * offload-stash.c: the entries of one step and the stashes over them.
 *
 * Every offloaded tensor gets an entry; entries are kept in an array in
 * pack order (which is forward order), and an id is the entry's index plus
 * the id of the first entry of the step, so ids grow for the life of the
 * engine and a handle left from an earlier step never finds a newer entry.
 *
 * The forward stash is the set of entries in state OFFLOAD_FWD: the caller
 * holds their GPU source until the device-to-host copy is known to be done
 * (and backward may take it back without any copy).  Since entries are in
 * pack order, the oldest stashed entry is the first FWD entry; fwd_cursor
 * remembers that no FWD entry lies before it, so reaping in order is
 * amortized constant time.  The backward stash is the set of entries in
 * state OFFLOAD_BWD: the caller holds a GPU buffer restored from the host
 * copy, waiting for autograd to ask for it.  The counters nfwd, nbwd and
 * live always equal the number of entries in each state, which is what the
 * tests read to show that leaving a context empties every stash; fwd_bytes
 * and bwd_bytes, the bytes of each stash, are what the engine holds on the
 * GPU beyond what autograd would.
 *
 * Backward unpacks last packed first, so the walk that brings entries back
 * ahead goes down the array.  An entry that a later pack saved again (a
 * dedupe hit) is needed at that later pack's turn, earlier than its place
 * says: saves lists every such hit with its pack, and the walk merges the
 * two lists by pack, the latest first, so that it comes to such an entry
 * in time rather than when backward asks for it (the same storage saved
 * in two places of a layer, a model's input used by every layer).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "offload.h"

/* An empty stash whose first id is 1. */
void
offload_stash_init(struct offload_stash *st)
{
	memset(st, 0, sizeof *st);
	st->base = st->next_id = 1;
}

/* Free the entries' array.  The caller released what entries refer to. */
void
offload_stash_free(struct offload_stash *st)
{
	free(st->entries);
	free(st->saves);
	offload_stash_init(st);
}

/*
 * Forget every entry (the caller has released their events, slab blocks
 * and keys); ids keep growing.
 */
void
offload_stash_reset(struct offload_stash *st)
{
	st->n = 0;
	st->base = st->next_id;
	st->fwd_cursor = 0;
	st->nfwd = st->nbwd = st->live = 0;
	st->fwd_bytes = st->bwd_bytes = 0;
	st->nsaves = st->walk_entry = st->walk_save = 0;
}

/*
 * Append an entry in state OFFLOAD_HOST with a new id, no events and no
 * slab block.  Returns it (valid until the next _add), or NULL when out of
 * memory.
 */
struct offload_entry *
offload_stash_add(struct offload_stash *st)
{
	struct offload_entry	*e;
	size_t			 alloc;

	if (st->n == st->alloc) {
		alloc = st->alloc == 0 ? 256 : st->alloc * 2;
		if ((e = realloc(st->entries, alloc * sizeof *e)) == NULL)
			return (NULL);
		st->entries = e;
		st->alloc = alloc;
	}
	e = &st->entries[st->n++];
	memset(e, 0, sizeof *e);
	e->id = st->next_id++;
	e->slab_off = UINT64_MAX;
	e->ev_d2h = e->ev_h2d = OFFLOAD_NO_EVENT;
	e->where = OFFLOAD_HOST;
	st->live++;
	return (e);
}

/* The entry with this id in the current step, or NULL. */
struct offload_entry *
offload_stash_get(struct offload_stash *st, uint64_t id)
{
	if (id < st->base || id - st->base >= st->n)
		return (NULL);
	return (&st->entries[id - st->base]);
}

/* Move e to state where, keeping the counters right. */
void
offload_stash_move(struct offload_stash *st, struct offload_entry *e,
    enum offload_where where)
{
	switch (e->where) {
	case OFFLOAD_FWD:
		st->nfwd--;
		st->fwd_bytes -= e->bytes;
		break;
	case OFFLOAD_BWD:
		st->nbwd--;
		st->bwd_bytes -= e->bytes;
		break;
	case OFFLOAD_GONE:
		st->live++;
		break;
	}
	switch (where) {
	case OFFLOAD_FWD:
		st->nfwd++;
		st->fwd_bytes += e->bytes;
		break;
	case OFFLOAD_BWD:
		st->nbwd++;
		st->bwd_bytes += e->bytes;
		break;
	case OFFLOAD_GONE:
		st->live--;
		break;
	default:
		break;
	}
	e->where = where;
}

/* The oldest entry in the forward stash, or NULL when it is empty. */
struct offload_entry *
offload_stash_oldest_fwd(struct offload_stash *st)
{
	if (st->nfwd == 0)
		return (NULL);
	while (st->entries[st->fwd_cursor].where != OFFLOAD_FWD)
		st->fwd_cursor++;
	return (&st->entries[st->fwd_cursor]);
}

/*
 * Pack number pack was a dedupe hit on the entry with this id.  Returns 0,
 * or -1 when out of memory.
 */
int
offload_stash_saved_again(struct offload_stash *st, uint64_t id,
    uint32_t pack)
{
	struct offload_save	*s;
	size_t			 alloc;

	if (st->nsaves == st->asaves) {
		alloc = st->asaves == 0 ? 64 : st->asaves * 2;
		if ((s = realloc(st->saves, alloc * sizeof *s)) == NULL)
			return (-1);
		st->saves = s;
		st->asaves = alloc;
	}
	st->saves[st->nsaves].id = id;
	st->saves[st->nsaves].pack = pack;
	st->nsaves++;
	return (0);
}

/* Start the walk in backward's order at the last pack. */
void
offload_stash_walk_start(struct offload_stash *st)
{
	st->walk_entry = st->n;
	st->walk_save = st->nsaves;
}

/*
 * The next entry of the walk, by the latest pack that saved it and is not
 * yet walked (an entry may come more than once), or NULL at its end.  It
 * stays the next until offload_stash_walk_next().
 */
struct offload_entry *
offload_stash_walk(struct offload_stash *st)
{
	struct offload_entry	*en = NULL;
	struct offload_save	*s = NULL;

	if (st->walk_entry > 0)
		en = &st->entries[st->walk_entry - 1];
	if (st->walk_save > 0)
		s = &st->saves[st->walk_save - 1];
	st->walk_from_save = s != NULL && (en == NULL || s->pack > en->pack);
	return (st->walk_from_save ? offload_stash_get(st, s->id) : en);
}

/* Pass the entry offload_stash_walk() gave. */
void
offload_stash_walk_next(struct offload_stash *st)
{
	if (st->walk_from_save)
		st->walk_save--;
	else if (st->walk_entry > 0)
		st->walk_entry--;
}
