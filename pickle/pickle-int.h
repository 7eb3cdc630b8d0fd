/*
 * Shapes shared by the pickle reader's files; not part of the API.
 *
 * A struct pickle_value is a 16-byte tagged union.  Scalars (none, bool,
 * int, float) live inline wherever the value is stored: on the parser's
 * stack, in the memo, or in a container's item array.  Strings, bytes and
 * containers are reference-counted heap nodes; copying a value that points
 * to a node takes a reference (pickle_value_ref), dropping it releases one
 * (pickle_value_unref), and the last release frees the node and releases
 * its items.  This is how a memoized node is shared rather than copied.
 * Every allocation and release of a node is counted in bytes (the mem
 * arguments) so that the parser can hold itself to PICKLE_MEMORY_MAX.
 *
 * Invariants of a container:
 * - a dict stores its pairs flat, key then value, so len is even;
 * - once a container is put inside another one (or given to the element
 *   callback) it is placed and sealed: it can never receive items again
 *   (nor can a copy rebuilt from its bytes, which is sealed).  Hence no
 *   container can reach itself (no cycles, so reference counting frees
 *   everything) and its depth, computed when it is sealed, never changes;
 *   the depth cap bounds the recursion of free;
 * - its bytes are [start, end) of the input: replaying them on an empty
 *   stack builds it again, unless it was changed after a POP dropped it
 *   from the stack (moved).
 *
 * Roles (see pickle-role.c) say what a container is for: the streamed
 * lists and the containers whose items are dropped are "lossy", their
 * items are not in memory, and where their content is needed again it is
 * rebuilt from their bytes (pickle-parse.c).
 */

#ifndef PICKLE_INTERNAL_H
#define PICKLE_INTERNAL_H

#include "pickle.h"

#include <string.h>

/* No memo slot refers to this container; no container is below. */
#define PICKLE_NO_SLOT		UINT32_MAX

/* The most bytes of a LONG1 or LONG4 read (pickle_op_longn). */
#define PICKLE_LONG_MAX		9

/* What a container is for (pickle-role.c). */
enum pickle_role {
	PICKLE_ROLE_NONE,		/* a value kept whole */
	PICKLE_ROLE_ROOT,		/* the top-level dict */
	PICKLE_ROLE_ELEMENT,		/* an element of a streamed list */
	PICKLE_ROLE_SEGMENTS,		/* top-level "segments" */
	PICKLE_ROLE_ANNOTATIONS,	/* top-level "external_annotations" */
	PICKLE_ROLE_TRACE,		/* one list inside "device_traces" */
	PICKLE_ROLE_DEVICE_TRACES,	/* top-level "device_traces" */
	PICKLE_ROLE_DISCARD		/* a value read and dropped */
};

struct pickle_str {
	uint32_t		 refs;
	size_t			 len;
	char			 data[];	/* len bytes and a NUL */
};

struct pickle_container {
	uint32_t		 refs;
	uint32_t		 slot;		/* memo index, or PICKLE_NO_SLOT */
	uint8_t			 depth;		/* 1 + deepest item */
	uint8_t			 sealed;	/* takes no more items */
	uint8_t			 placed;	/* was put somewhere */
	uint8_t			 role;		/* enum pickle_role */
	uint8_t			 popped;	/* a POP dropped it once */
	uint8_t			 moved;		/* changed after that */
	size_t			 device;	/* for PICKLE_ROLE_TRACE */
	size_t			 streamed;	/* elements given to callback */
	uint64_t		 start;		/* offset of its first opcode */
	uint64_t		 end;		/* just after its last one */
	size_t			 len;
	size_t			 cap;
	struct pickle_value	*items;
};

struct pickle_value {
	uint8_t			 type;	/* enum pickle_type */
	union {
		int			 b;
		int64_t			 i;
		double			 f;
		struct pickle_str	*s;
		struct pickle_container	*c;
	} u;
};

/*
 * Buffered input from a regular file through pread() (never mmap, whose
 * touched pages would count toward RSS), or from a caller's buffer.  The
 * bytes not yet parsed are [p, end); start..end is the window, which
 * begins at file offset base.  limit is where this reader stops (the file
 * size, or the end of a range being replayed).  total is the input size.
 */
#define PICKLE_READ_BUF		(256u << 10)
#define PICKLE_REPLAY_BUF	(64u << 10)

struct pickle_reader {
	int				 fd;	/* -1 for a buffer */
	unsigned char			*buf;	/* window storage, fd mode */
	size_t				 size;	/* of buf */
	const unsigned char		*data;	/* the whole input, buffer mode */
	const unsigned char		*start;
	const unsigned char		*p;
	const unsigned char		*end;
	uint64_t			 base;
	uint64_t			 limit;
	uint64_t			 total;
	uint64_t			 next_progress;
	const struct pickle_callbacks	*cb;	/* progress; NULL in replays */
};

/*
 * Records of values whose bytes are replayed when referenced again (their
 * nodes are gone), one per memo index, kept in an unlinked temporary file
 * behind a small page cache so that memory does not grow with their number.
 */
#define PICKLE_SPILL_PAGE	4096u
#define PICKLE_SPILL_PAGES	32u

struct pickle_spill_rec {
	uint64_t		 start;
	uint64_t		 end;		/* 0: cannot be replayed */
	uint64_t		 put_at;	/* 0: no record */
};

struct pickle_spill_page {
	uint64_t		 number;	/* UINT64_MAX: empty */
	int			 dirty;
	unsigned char		 data[PICKLE_SPILL_PAGE];
};

struct pickle_spill {
	int			 fd;		/* -1 until a page must go */
	struct pickle_spill_page *pages[PICKLE_SPILL_PAGES];
};

/*
 * The memo.  Pass 1 (pickle-scan.c) marks in refs every index that some
 * GET reads; only those slots are kept.  A kept value lives in the hash
 * table until it is a lossy container that is complete, or until it is
 * evicted when the parser holds too much; then only its bytes' record
 * does, in the spill.  n counts the slots defined so far.
 */
struct pickle_memo_entry {
	uint32_t		 index;
	uint8_t			 used;
	uint8_t			 hot;		/* read since the last sweep */
	uint64_t		 put_at;	/* offset of the PUT */
	uint64_t		 start;		/* its bytes, when no container */
	uint64_t		 end;
	struct pickle_value	 v;
};

struct pickle_memo {
	size_t			 n;
	uint8_t			*refs;		/* bitmap from pass 1 */
	size_t			 refs_len;	/* bytes */
	struct pickle_memo_entry *tab;
	size_t			 tab_cap;	/* a power of two, or 0 */
	size_t			 tab_len;
	size_t			 hand;		/* of the eviction sweep */
	struct pickle_spill	 spill;
};

/* The parser's state (pickle-parse.c). */
struct pickle_parser {
	const char			*name;
	struct pickle_reader		 r;	/* main, or the replay's */
	const struct pickle_callbacks	*cb;
	uint64_t			 op;	/* offset of this opcode */
	uint64_t			 total;	/* input size */
	size_t				 devices; /* trace lists seen */
	unsigned			 tops;	/* streamed keys seen */

	/* The stack, with each value's first offset and nearest container */
	struct pickle_value		*stack;
	uint64_t			*starts;
	uint64_t			*ends;
	uint32_t			*near;
	size_t				 depth;
	size_t				 stack_cap;
	size_t				*marks;
	uint64_t			*mark_at;
	size_t				 nmarks;
	size_t				 marks_cap;

	/* Replays: what they may not touch, the role they force, the cost */
	size_t				 floor;
	size_t				 mark_floor;
	int				 force;	/* a role, or -1 */
	size_t				 force_floor; /* where it began */
	unsigned			 replays; /* nested now */
	unsigned char			*replay_buf[PICKLE_REREAD_DEPTH];
	uint64_t			 replay_base[PICKLE_REREAD_DEPTH];
	size_t				 replay_len[PICKLE_REREAD_DEPTH];
	uint64_t			 reread;

	struct pickle_memo		 memo;
	uint64_t			*roots;	/* offsets of the root's values */
	size_t				 nroots;
	size_t				 roots_cap;
	uint64_t			 mem;	/* bytes held */
	uint64_t			 peak;
	uint64_t			 evict_at; /* mem that starts a sweep */
	struct pickle_container		*spare;	/* the last element freed */

	char				*cause;
};

/*
 * The small value helpers every opcode uses, inline: whether v points to a
 * heap node, to a container; its nesting depth (0 for scalars and
 * strings); one more reference to its node, or -1 if the count would
 * overflow (only a hostile file gets there).
 */
static inline int
pickle_value_is_container(const struct pickle_value *v)
{
	return (v->type == PICKLE_LIST || v->type == PICKLE_TUPLE ||
	    v->type == PICKLE_DICT);
}

static inline int
pickle_value_is_node(const struct pickle_value *v)
{
	return (v->type == PICKLE_STR || v->type == PICKLE_BYTES ||
	    pickle_value_is_container(v));
}

static inline uint8_t
pickle_value_depth(const struct pickle_value *v)
{
	return (pickle_value_is_container(v) ? v->u.c->depth : 0);
}

static inline int
pickle_value_ref(struct pickle_value *v)
{
	uint32_t	*refs;

	if (!pickle_value_is_node(v))
		return (0);
	refs = pickle_value_is_container(v) ? &v->u.c->refs : &v->u.s->refs;
	if (*refs == UINT32_MAX)
		return (-1);
	(*refs)++;
	return (0);
}

/* File offset of the next byte r has not given. */
static inline uint64_t
pickle_read_offset(const struct pickle_reader *r)
{
	return (r->base + (uint64_t)(r->p - r->start));
}

/*
 * The unsigned little-endian number of n bytes at b (n at most 8).  The
 * opcodes' sizes, 1, 2 and 4, are spelled out: a loop of n steps costs
 * every GET and int a few times what its load does.
 */
static inline uint64_t
pickle_le(const unsigned char *b, size_t n)
{
	uint64_t	v = 0;

	switch (n) {
	case 1:
		return (b[0]);
	case 2:
		return ((uint64_t)b[0] | (uint64_t)b[1] << 8);
	case 4:
		return ((uint64_t)b[0] | (uint64_t)b[1] << 8 |
		    (uint64_t)b[2] << 16 | (uint64_t)b[3] << 24);
	}
	while (n-- > 0)
		v = (v << 8) | b[n];
	return (v);
}

/* The memo's hash of index i, for a table of cap entries. */
static inline size_t
pickle_memo_hash(uint32_t i, size_t cap)
{
	return ((size_t)((i * UINT64_C(0x9e3779b97f4a7c15)) >> 32) &
	    (cap - 1));
}

/* The memo entry of index i, or NULL; inline, as every GET asks. */
static inline struct pickle_memo_entry *
pickle_memo_find(struct pickle_memo *m, uint32_t i)
{
	struct pickle_memo_entry	*e;
	size_t				 h;

	if (m->tab_cap == 0)
		return (NULL);
	for (h = pickle_memo_hash(i, m->tab_cap); ; h = (h + 1) &
	    (m->tab_cap - 1)) {
		e = &m->tab[h];
		if (!e->used)
			return (NULL);
		if (e->index == i)
			return (e);
	}
}

/* The two's complement little-endian number of n bytes at b (n at most 8). */
static inline int64_t
pickle_le_signed(const unsigned char *b, size_t n)
{
	uint64_t	u;
	int64_t		i;

	u = pickle_le(b, n);
	if (n > 0 && n < 8 && (b[n - 1] & 0x80))
		u |= UINT64_MAX << (8 * n);
	memcpy(&i, &u, sizeof i);
	return (i);
}

/* pickle-error.c */
char	*pickle_error_fmt(const char *fmt, ...)
	     __attribute__((format(printf, 1, 2)));
int	 pickle_error_set(struct pickle_parser *p, const char *fmt, ...)
	     __attribute__((format(printf, 2, 3)));
int	 pickle_error_nomem(struct pickle_parser *p);
int	 pickle_error_short(struct pickle_parser *p, const char *what);
const char *pickle_error_opname(int code);
int	 pickle_error_refuse(struct pickle_parser *p, int code);
int	 pickle_error_underflow(struct pickle_parser *p, int code);
const char *pickle_error_a(const struct pickle_value *v);
int	 pickle_error_not_dict(struct pickle_parser *p,
	     const struct pickle_value *v);
int	 pickle_error_memory(struct pickle_parser *p);
void	 pickle_error_replay(struct pickle_parser *p, uint64_t at);

/* pickle-stack.c */
size_t	 pickle_stack_avail(const struct pickle_parser *p);
int	 pickle_stack_push_grow(struct pickle_parser *p,
	     struct pickle_value *v, uint64_t start);
void	 pickle_stack_drop(struct pickle_parser *p, size_t n);
int	 pickle_stack_mark(struct pickle_parser *p);
int	 pickle_stack_pop_mark(struct pickle_parser *p, int code, size_t *n,
	     uint64_t *at);
void	 pickle_stack_free(struct pickle_parser *p);

/*
 * Push v, taking its reference (dropped on error); its opcodes begin at
 * offset start and end here.  The first value, at the bottom, must be a
 * dict.  Inline for the common case, a value above others with room left;
 * pickle-stack.c has the rest.  0, or -1 on error.
 */
static inline int
pickle_stack_push(struct pickle_parser *p, struct pickle_value *v,
    uint64_t start)
{
	size_t	d = p->depth;

	if (d == 0 || d == p->stack_cap)
		return (pickle_stack_push_grow(p, v, start));
	p->stack[d] = *v;
	p->starts[d] = start;
	p->ends[d] = pickle_read_offset(&p->r);
	p->near[d] = pickle_value_is_container(v) ? (uint32_t)d :
	    p->near[d - 1];
	p->depth = d + 1;
	return (0);
}

/* pickle-op.c */
const unsigned char *pickle_op_arg_fill(struct pickle_parser *p, int code,
	     size_t n);
int	 pickle_op_scalar(struct pickle_parser *p, enum pickle_type type,
	     int64_t i);
int	 pickle_op_string(struct pickle_parser *p, int code,
	     enum pickle_type type, uint64_t len);
int	 pickle_op_long(struct pickle_parser *p, const unsigned char *b,
	     size_t n);
int	 pickle_op_longn(struct pickle_parser *p, int code, uint64_t n);
int	 pickle_op_float(struct pickle_parser *p, const unsigned char *b);

/*
 * The n-byte argument of opcode code, taken from the input; NULL on error
 * (the input ends first).  Inline for the common case, all in the window.
 */
static inline const unsigned char *
pickle_op_arg(struct pickle_parser *p, int code, size_t n)
{
	const unsigned char	*arg;

	if ((size_t)(p->r.end - p->r.p) < n)
		return (pickle_op_arg_fill(p, code, n));
	arg = p->r.p;
	p->r.p += n;
	return (arg);
}

/* pickle-role.c */
enum pickle_role pickle_role_new(const struct pickle_parser *p,
	     enum pickle_type type);
int	 pickle_role_lossy(const struct pickle_value *v);
int	 pickle_role_root_value(const struct pickle_parser *p, uint64_t at);
int	 pickle_role_key(const struct pickle_parser *p,
	     const struct pickle_value *key);

/* pickle-stream.c */
int	 pickle_stream_element(struct pickle_parser *p,
	     struct pickle_container *list, struct pickle_value *v);
int	 pickle_stream_items(struct pickle_parser *p,
	     struct pickle_container *list, enum pickle_role role);

/* pickle-memo.c */
int	 pickle_memo_wanted(const struct pickle_memo *m, uint64_t i);
int	 pickle_memo_store(struct pickle_memo *m, uint32_t i,
	     const struct pickle_value *v, const uint64_t *at, uint64_t *mem);
int	 pickle_memo_retire(struct pickle_memo *m,
	     struct pickle_container *c, uint64_t *mem);
int	 pickle_memo_evict(struct pickle_memo *m, uint64_t *mem,
	     uint64_t low);
void	 pickle_memo_free(struct pickle_memo *m, uint64_t *mem);

/* pickle-spill.c */
void	 pickle_spill_init(struct pickle_spill *s);
int	 pickle_spill_put(struct pickle_spill *s, uint32_t i,
	     const struct pickle_spill_rec *rec);
int	 pickle_spill_get(struct pickle_spill *s, uint32_t i,
	     struct pickle_spill_rec *rec);
void	 pickle_spill_close(struct pickle_spill *s);

/* pickle-scan.c */
int	 pickle_scan(struct pickle_parser *p, struct pickle_reader *r);

/* pickle-read.c */
int	 pickle_read_open(struct pickle_reader *r, int fd, uint64_t total,
	     const struct pickle_callbacks *cb);
void	 pickle_read_buffer(struct pickle_reader *r, const void *buf,
	     size_t len, const struct pickle_callbacks *cb);
void	 pickle_read_range(struct pickle_reader *r,
	     const struct pickle_reader *from, unsigned char *buf,
	     size_t size, uint64_t wbase, size_t wlen, uint64_t start,
	     uint64_t end);
void	 pickle_read_close(struct pickle_reader *r);
int	 pickle_read_fill(struct pickle_reader *r, size_t n);
int	 pickle_read_byte(const struct pickle_reader *r, uint64_t at);
int	 pickle_read_copy(struct pickle_reader *r, void *dst, size_t n);
void	 pickle_read_done(struct pickle_reader *r);

/* pickle.c */
#define PICKLE_SPARE_ITEMS	64	/* the most a spare container keeps */
void	 pickle_value_unref(struct pickle_value *v, uint64_t *mem);
void	 pickle_value_unref_spare(struct pickle_value *v, uint64_t *mem,
	     struct pickle_container **spare);
void	 pickle_container_free(struct pickle_container *c);
int	 pickle_value_str(struct pickle_value *v, enum pickle_type type,
	     size_t len, uint64_t *mem);
int	 pickle_value_container(struct pickle_value *v, enum pickle_type type,
	     size_t cap, uint64_t *mem, struct pickle_container **spare);
int	 pickle_value_append(struct pickle_container *c,
	     const struct pickle_value *items, size_t n, uint64_t *mem);

#endif /* PICKLE_INTERNAL_H */
