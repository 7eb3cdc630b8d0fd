/*
 * offload.h: the offload engine's internal pieces, shared by lib/offload*.c.
 *
 * The engine is split so that all bookkeeping is pure C with no CUDA
 * header: the event pool (offload-event.c), the pinned slab carver
 * (offload-slab.c), the dedupe table (offload-dedupe.c), the entry table
 * with its stashes (offload-stash.c) and the budget selection
 * (offload-budget.c) are tested on any machine by tests/t-offload.c.  The
 * engine itself (offload.c) talks to the GPU only through struct
 * offload_ops; offload-cuda.c is the one file that includes the CUDA
 * runtime and provides the real table.  Streams, events and pointers are
 * uint64_t handles everywhere here.
 */
#ifndef OFFLOAD_H
#define OFFLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "libvramtrace.h"

/* What the engine needs from a GPU runtime; every call returns 0 or -1. */
struct offload_ops {
	int	(*stream_create)(void *, uint64_t *);
	void	(*stream_destroy)(void *, uint64_t);
	int	(*stream_sync)(void *, uint64_t);
	int	(*event_create)(void *, uint64_t *);
	void	(*event_destroy)(void *, uint64_t);
	int	(*event_record)(void *, uint64_t, uint64_t);
	int	(*event_done)(void *, uint64_t);	/* 1 done, 0 not yet */
	int	(*stream_wait)(void *, uint64_t, uint64_t);
	int	(*copy)(void *, uint64_t, uint64_t, uint64_t, uint64_t);
	int	(*host_alloc)(void *, uint64_t, int, uint64_t *);
	void	(*host_free)(void *, uint64_t, int);
	int	(*mem_total)(void *, uint64_t *);	/* device memory */
	const char *(*error)(void *);		/* the last failure */
	void	*arg;
};

/*
 * offload-event.c: a pool of reference-counted events.  A slot is taken
 * with one reference; whoever must later wait on or query the event takes
 * another.  A slot returns to the free list when its last reference goes;
 * the CUDA event itself is kept for the next taker.
 */
#define OFFLOAD_NO_EVENT	UINT32_MAX
struct offload_event_slot {
	uint64_t	handle;
	uint64_t	stream;		/* where it was last recorded */
	uint32_t	refs;
	uint32_t	next_free;
};
struct offload_event_pool {
	const struct offload_ops	*ops;
	struct offload_event_slot	*slots;
	uint32_t			 n;
	uint32_t			 alloc;
	uint32_t			 free_head;
};
void	 offload_event_init(struct offload_event_pool *,
	     const struct offload_ops *);
void	 offload_event_destroy(struct offload_event_pool *);
int	 offload_event_take(struct offload_event_pool *, uint32_t *);
void	 offload_event_ref(struct offload_event_pool *, uint32_t);
void	 offload_event_unref(struct offload_event_pool *, uint32_t);
int	 offload_event_record(struct offload_event_pool *, uint32_t,
	     uint64_t);
int	 offload_event_done(struct offload_event_pool *, uint32_t);

/*
 * offload-slab.c: carves one host allocation into aligned blocks.  Free
 * space is a sorted, coalesced list of ranges.  A freed block whose last
 * copy may still run is parked with that copy's event and only joins the
 * free list once the event has completed.
 */
#define OFFLOAD_SLAB_ALIGN	512
struct offload_range {
	uint64_t	off;
	uint64_t	len;
	uint32_t	event;		/* pending blocks only */
};
struct offload_slab {
	uint64_t		 base;	/* host address; 0: no slab */
	uint64_t		 size;
	uint64_t		 used;	/* bytes in blocks and pending */
	struct offload_range	*free;
	size_t			 nfree;
	size_t			 afree;
	struct offload_range	*pending;
	size_t			 npending;
	size_t			 apending;
	int			 ignore_events;	/* BREAK_STREAM_WAIT */
};
int	 offload_slab_init(struct offload_slab *, uint64_t, uint64_t);
void	 offload_slab_clear(struct offload_slab *,
	     struct offload_event_pool *);
int	 offload_slab_alloc(struct offload_slab *,
	     struct offload_event_pool *, uint64_t, uint64_t *);
int	 offload_slab_free(struct offload_slab *,
	     struct offload_event_pool *, uint64_t, uint64_t, uint32_t);
void	 offload_slab_reset(struct offload_slab *,
	     struct offload_event_pool *);

/*
 * offload-dedupe.c: the dedupe table, key -> tensor id.  The key is the
 * storage address with its allocation generation, the tensor's version,
 * the offset, dtype, shape and stride.
 */
struct offload_key {
	uint64_t	storage;
	uint64_t	generation;
	int64_t		offset;
	int64_t		shape[VRAMTRACE_OFFLOAD_MAX_DIMS];
	int64_t		stride[VRAMTRACE_OFFLOAD_MAX_DIMS];
	int32_t		ndim;
	int32_t		dtype;
	uint32_t	version;
};
struct offload_dedupe_node;
struct offload_dedupe {
	struct offload_dedupe_node	**buckets;
	size_t				  nbuckets;	/* a power of 2 */
	size_t				  count;
};
void	 offload_dedupe_init(struct offload_dedupe *);
void	 offload_dedupe_clear(struct offload_dedupe *);
int	 offload_dedupe_find(struct offload_dedupe *,
	     const struct offload_key *, int, uint64_t *);
int	 offload_dedupe_insert(struct offload_dedupe *,
	     const struct offload_key *, uint64_t);
int	 offload_dedupe_release(struct offload_dedupe *,
	     const struct offload_key *, uint64_t);

/*
 * offload-stash.c: the entries of the current step, one per offloaded
 * tensor, in pack order, and the two stashes over them.  An entry moves
 * FWD (its GPU source is held) -> HOST (only the host copy) -> BWD (a GPU
 * copy was restored and is held) -> GONE; FWD may go straight to GONE when
 * backward asks before the source was reaped.  A dedupe hit records the
 * entry again at its own pack (a later save), and the walk that brings
 * entries back goes over both in backward's order (offload_stash_walk).
 */
enum offload_where {
	OFFLOAD_FWD = 1,
	OFFLOAD_HOST,
	OFFLOAD_BWD,
	OFFLOAD_GONE
};
struct offload_entry {
	uint64_t		id;
	struct offload_key	key;
	uint64_t		bytes;
	uint64_t		host;		/* host address of the copy */
	uint64_t		slab_off;	/* UINT64_MAX: own allocation */
	size_t			candidate;	/* its index in the budget */
	uint32_t		pack;		/* the step's pack that made it */
	uint32_t		until;		/* learned: see offload_profile_until */
	uint32_t		ev_d2h;
	uint32_t		ev_h2d;
	uint32_t		refs;		/* handles not yet unpacked */
	uint8_t			where;		/* enum offload_where */
	uint8_t			has_key;	/* in the dedupe table */
	uint8_t			requested;	/* an ALLOC is queued */
};
struct offload_stash {
	struct offload_entry	*entries;
	size_t			 n;
	size_t			 alloc;
	uint64_t		 base;		/* id of entries[0] */
	uint64_t		 next_id;
	size_t			 fwd_cursor;	/* no FWD entry before it */
	size_t			 nfwd;
	size_t			 nbwd;
	size_t			 live;		/* not GONE */
	uint64_t		 fwd_bytes;	/* of the FWD entries */
	uint64_t		 bwd_bytes;	/* of the BWD entries */
	struct offload_save {
		uint64_t	 id;
		uint32_t	 pack;
	}			*saves;		/* dedupe hits, in pack order */
	size_t			 nsaves;
	size_t			 asaves;
	size_t			 walk_entry;	/* entries not yet walked */
	size_t			 walk_save;	/* saves not yet walked */
	int			 walk_from_save; /* what _walk gave */
};
void	 offload_stash_init(struct offload_stash *);
void	 offload_stash_free(struct offload_stash *);
struct offload_entry *offload_stash_add(struct offload_stash *);
struct offload_entry *offload_stash_get(struct offload_stash *, uint64_t);
void	 offload_stash_move(struct offload_stash *, struct offload_entry *,
	     enum offload_where);
struct offload_entry *offload_stash_oldest_fwd(struct offload_stash *);
int	 offload_stash_saved_again(struct offload_stash *, uint64_t, uint32_t);
void	 offload_stash_walk_start(struct offload_stash *);
struct offload_entry *offload_stash_walk(struct offload_stash *);
void	 offload_stash_walk_next(struct offload_stash *);
void	 offload_stash_reset(struct offload_stash *);

/*
 * offload-budget.c: which tensors to offload so that the bytes kept on the
 * GPU fit a budget.  Learns the order and sizes of one step's candidates
 * and offloads the earliest ones on the next; never offloads again one
 * whose storage outlived its copy.
 */
struct offload_budget {
	int64_t		 budget;	/* -1: off, offload every candidate */
	uint64_t	*seen;		/* this step's candidate sizes */
	uint8_t		*alive;		/* 1: its storage outlives the copy */
	size_t		 nseen;
	size_t		 aseen;
	uint64_t	*pbytes;	/* by pack: the size it last made */
	uint8_t		*palive;	/* by pack: that candidate was alive */
	size_t		 apack;		/* packs the two have room for */
	uint64_t	 fixed;		/* bytes kept whatever we decide */
	uint64_t	 kept;		/* the step before's, all candidates kept */
	size_t		 cutoff;	/* offload candidates before it */
	size_t		 index;		/* this step's next candidate */
};
void	 offload_budget_init(struct offload_budget *, int64_t);
void	 offload_budget_free(struct offload_budget *);
void	 offload_budget_step(struct offload_budget *);
void	 offload_budget_fixed(struct offload_budget *, uint64_t);
int	 offload_budget_decide(struct offload_budget *, uint64_t, int,
	     size_t);
void	 offload_budget_alive(struct offload_budget *, size_t, size_t);
size_t	 offload_budget_select(const uint64_t *, const uint8_t *, size_t,
	     uint64_t, uint64_t);

/*
 * offload-profile.c: one step's memory, learned once, so that the engine
 * places copies and chooses what to offload without asking the allocator.
 * Hooks are the step's packs and unpacks, numbered from 0; packs alone are
 * numbered from 0 too.
 */
#define OFFLOAD_UNUSED	UINT32_MAX		/* never unpacked */
#define OFFLOAD_UNKNOWN	(UINT32_MAX - 1)	/* not learned */
struct offload_profile {
	int64_t		*base;		/* per hook: memory less the engine's */
	uint32_t	*live;		/* per hook: candidates alive */
	int64_t		*room;		/* per hook, this step: headroom */
	int64_t		*extra;		/* per hook, this step: booked */
	uint32_t	*gone;		/* per hook: last candidate unpacked, +1 */
	uint8_t		*back;		/* per hook: 1 in backward */
	uint32_t	*at;		/* per pack: hooks before its unpack */
	uint32_t	*owner;		/* per pack, learning: its entry's pack */
	uint32_t	*cpack;		/* per candidate: the pack that made it */
	size_t		 acpack;
	size_t		 nat;		/* packs learned */
	size_t		 aat;
	size_t		 n;		/* hooks of the profile */
	size_t		 alloc;
	uint64_t	*prefix;	/* bytes of candidates before i */
	size_t		 ncand;
	size_t		 aprefix;
	int64_t		 enter_mem;	/* allocated when it was learned */
	uint64_t	 seq;		/* the learned step's sequence */
	uint64_t	 packed;	/* bytes its packs had */
	uint64_t	 first;		/* its first activation's bytes */
	uint64_t	 first_max;	/* the most any step's first had */
	int		 valid;
	unsigned	 learned;	/* profiles learned so far */
	/* This step. */
	int		 learning;
	int		 sampled;	/* a sample arrived */
	size_t		 hook;		/* hooks so far */
	size_t		 npack;		/* packs so far */
	uint64_t	 cur_seq;
	uint64_t	 cur_packed;
	int64_t		 shift;		/* enter memory less enter_mem */
	double		 scale;		/* its activations over the learned */
	int		 seen_first;	/* its first activation came */
	int64_t		 last;		/* the last base seen */
};
void	 offload_profile_init(struct offload_profile *);
void	 offload_profile_free(struct offload_profile *);
void	 offload_profile_end(struct offload_profile *, const uint64_t *,
	     const uint8_t *, size_t);
int	 offload_profile_begin(struct offload_profile *, int64_t, int64_t);
void	 offload_profile_hook(struct offload_profile *, int, uint64_t);
void	 offload_profile_live(struct offload_profile *, uint32_t);
uint32_t offload_profile_pack_of(const struct offload_profile *, size_t);
void	 offload_profile_owner(struct offload_profile *, uint32_t);
void	 offload_profile_gone(struct offload_profile *, size_t, uint32_t);
uint32_t offload_profile_until(const struct offload_profile *, uint32_t,
	     uint32_t);
void	 offload_profile_sample(struct offload_profile *, int64_t);
int	 offload_profile_activation(struct offload_profile *, uint64_t);
int	 offload_profile_usable(const struct offload_profile *);
int64_t	 offload_profile_pred(const struct offload_profile *, size_t,
	     size_t);
int64_t	 offload_profile_peak(const struct offload_profile *, size_t);
size_t	 offload_profile_cutoff(const struct offload_profile *, int64_t);
void	 offload_profile_plan(struct offload_profile *, size_t, int64_t);
int	 offload_profile_book(struct offload_profile *, uint32_t, uint64_t);

/* offload.c */
struct vramtrace_offload *offload_engine_create(const struct offload_ops *,
	     const struct vramtrace_offload_config *, char *, size_t);

#endif
