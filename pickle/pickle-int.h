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
 *
 * Invariants of a container:
 * - a dict stores its pairs flat, key then value, so len is even;
 * - once a container is put inside another one it is sealed and can never
 *   receive items again.  Hence no container can reach itself (no cycles,
 *   so reference counting frees everything) and its depth, computed when it
 *   is sealed, never changes; the depth cap bounds the recursion of free.
 */

#ifndef PICKLE_INTERNAL_H
#define PICKLE_INTERNAL_H

#include "pickle.h"

/* A memo slot whose element was consumed by the streaming callback. */
#define PICKLE_CONSUMED		0xff

/* No memo slot refers to this container. */
#define PICKLE_NO_SLOT		UINT32_MAX

/* Role of a list whose elements go to the streaming callback. */
enum pickle_role {
	PICKLE_ROLE_NONE,
	PICKLE_ROLE_SEGMENTS,		/* top-level "segments" */
	PICKLE_ROLE_DEVICE_TRACES,	/* top-level "device_traces" */
	PICKLE_ROLE_TRACE		/* one list inside "device_traces" */
};

struct pickle_str {
	uint32_t		 refs;
	size_t			 len;
	char			 data[];	/* len bytes and a NUL */
};

struct pickle_container {
	uint32_t		 refs;
	uint32_t		 slot;		/* or PICKLE_NO_SLOT */
	uint8_t			 depth;		/* 1 + deepest item */
	uint8_t			 sealed;
	uint8_t			 role;		/* enum pickle_role */
	size_t			 device;	/* for PICKLE_ROLE_TRACE */
	size_t			 streamed;	/* elements given to callback */
	size_t			 len;
	size_t			 cap;
	struct pickle_value	*items;
};

struct pickle_value {
	uint8_t			 type;	/* enum pickle_type or CONSUMED */
	union {
		int			 b;
		int64_t			 i;
		double			 f;
		struct pickle_str	*s;
		struct pickle_container	*c;
	} u;
};

/*
 * Buffered input, from a file descriptor through read() (never mmap, whose
 * touched pages would count toward RSS) or from a caller's buffer.  The
 * bytes not yet parsed are [p, end); start..end is the window, which begins
 * at file offset base.  total is the input size, 0 if unknown.
 */
#define PICKLE_READ_BUF		(256u << 10)

struct pickle_reader {
	int				 fd;	/* -1 for a buffer */
	unsigned char			*buf;	/* ours, fd mode */
	const unsigned char		*start;
	const unsigned char		*p;
	const unsigned char		*end;
	uint64_t			 base;
	uint64_t			 total;
	uint64_t			 next_progress;
	const struct pickle_callbacks	*cb;
};

/* The parser's state (pickle-parse.c). */
struct pickle_parser {
	const char			*name;
	struct pickle_reader		 r;
	const struct pickle_callbacks	*cb;
	uint64_t			 op;	/* offset of this opcode */
	size_t				 devices; /* trace lists seen */

	struct pickle_value		*stack;
	size_t				 depth;
	size_t				 stack_cap;
	size_t				*marks;
	size_t				 nmarks;
	size_t				 marks_cap;
	struct pickle_value		*memo;
	size_t				 nmemo;
	size_t				 memo_cap;

	char				*cause;
};

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

/* pickle-stream.c */
void	 pickle_stream_role(struct pickle_parser *p,
	     struct pickle_container *c);
int	 pickle_stream_element(struct pickle_parser *p,
	     struct pickle_container *list, struct pickle_value *v);

/* pickle-read.c */
int	 pickle_read_open(struct pickle_reader *r, int fd,
	     const struct pickle_callbacks *cb);
void	 pickle_read_buffer(struct pickle_reader *r, const void *buf,
	     size_t len, const struct pickle_callbacks *cb);
void	 pickle_read_close(struct pickle_reader *r);
uint64_t pickle_read_offset(const struct pickle_reader *r);
int	 pickle_read_fill(struct pickle_reader *r, size_t n);
int	 pickle_read_copy(struct pickle_reader *r, void *dst, size_t n);
void	 pickle_read_done(struct pickle_reader *r);

/* pickle.c */
int	 pickle_value_is_node(const struct pickle_value *v);
uint8_t	 pickle_value_depth(const struct pickle_value *v);
int	 pickle_value_ref(struct pickle_value *v);
void	 pickle_value_unref(struct pickle_value *v);
int	 pickle_value_str(struct pickle_value *v, enum pickle_type type,
	     size_t len);
int	 pickle_value_container(struct pickle_value *v, enum pickle_type type,
	     size_t cap);
int	 pickle_value_append(struct pickle_container *c,
	     const struct pickle_value *items, size_t n);

#endif /* PICKLE_INTERNAL_H */
