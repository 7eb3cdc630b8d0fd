/*
 * Data-only reader for PyTorch memory snapshot pickles (protocols 2 to 5).
 *
 * The reader runs the pickle stack machine for the opcodes a snapshot uses
 * and nothing else: it never imports, calls or builds objects, so GLOBAL,
 * REDUCE and friends end the parse with an error.  The result is a tree of
 * values (none, bool, int, float, str, bytes, list, tuple, dict) in which
 * memoized nodes are shared, not copied.  The top-level value must be a dict.
 *
 * The input is read twice: a first pass finds the memo slots that a later
 * opcode refers to, so that the second, which builds the values, keeps only
 * those.  Large snapshots are read in streaming mode: each element of the
 * top-level "segments" list, of every "device_traces[d]" list and, when
 * asked, of "external_annotations" is handed to a callback as soon as it is
 * complete and freed after it, and the values of top-level keys the caller
 * does not keep are read and dropped, so memory stays near the size of the
 * shared strings and frames whatever the file's size.  A back-reference to
 * a value that is no longer in memory (a streamed element, a streamed list,
 * a dropped value: what a script that filters or merges snapshots writes)
 * reads that value's bytes again, so it gives what Python's unpickler
 * gives: a trace list referenced twice streams its elements twice.
 *
 * Values returned by the reader are read-only and owned by the root; they
 * live until pickle_free() on the root, except the element given to the
 * callback, which lives only during the call.  Every error is one line,
 * "FILE: what is wrong", returned through a char **cause the caller frees.
 */

#ifndef PICKLE_H
#define PICKLE_H

#include <stddef.h>
#include <stdint.h>

/* Hard limits; input beyond them is refused with an error. */
#define PICKLE_STACK_MAX	(1u << 20)	/* values on the stack */
#define PICKLE_MARK_MAX		(1u << 16)	/* open MARKs */
#define PICKLE_DEPTH_MAX	64		/* container nesting */
#define PICKLE_MEMO_MAX		(1u << 28)	/* memo slots */
#define PICKLE_STR_MAX		(64u << 20)	/* bytes in one str or bytes */
#ifndef PICKLE_MEMORY_MAX	/* tests build a reader with small budgets */
#define PICKLE_MEMORY_MAX	(512u << 20)	/* bytes of values held at once */
#endif
#ifndef PICKLE_MEMO_SOFT
#define PICKLE_MEMO_SOFT	(16u << 20)	/* held bytes that evict memo values */
#endif
#define PICKLE_REREAD_MAX	16		/* bytes read again, per input byte */
#define PICKLE_REREAD_DEPTH	16		/* values read again, nested */

/* How often the progress callback is called, in bytes read. */
#define PICKLE_PROGRESS_STEP	(4u << 20)

struct pickle_value;

enum pickle_type {
	PICKLE_NONE,
	PICKLE_BOOL,
	PICKLE_INT,
	PICKLE_FLOAT,
	PICKLE_STR,
	PICKLE_BYTES,
	PICKLE_LIST,
	PICKLE_TUPLE,
	PICKLE_DICT,
	PICKLE_UINT64	/* an int of 2^63 to 2^64 - 1, past int64_t: how
			   PyTorch writes an unsigned field's -1 */
};

/* Which streamed list an element belongs to. */
enum pickle_list_kind {
	PICKLE_SEGMENTS,	/* top-level "segments" */
	PICKLE_TRACE,		/* top-level "device_traces"[device] */
	PICKLE_ANNOTATION	/* top-level "external_annotations" */
};

/* What a parse cost, for tests and benchmarks. */
struct pickle_stats {
	uint64_t	 peak_bytes;	/* most bytes of values held at once */
	uint64_t	 memo_slots;	/* memo slots the file defines */
	uint64_t	 memo_refs;	/* bytes of the pass-1 bitmap */
	uint64_t	 reread_bytes;	/* bytes read again for shared values */
};

/*
 * Streaming and progress hooks; any member may be NULL (0).
 *
 * element() is called for each element appended to a streamed list, in
 * file order; index counts the elements of that list from 0 and device is
 * the index into "device_traces" (0 for the others).  The value is valid
 * only during the call.  Return 1 (or more) to consume it: the reader
 * frees it and does not keep it in the list (a later back-reference reads
 * it again from the input).  Return 0 to keep it in the list, or -1 with
 * *cause set (malloc'ed, one line) to stop the parse; that cause is
 * returned unchanged to the caller of the parse (or "FILE: element
 * callback failed" if left NULL).  A list that appears twice (a
 * back-reference) is streamed twice: "device_traces" = [t, t] gives two
 * devices, each with the elements of t.
 *
 * annotations: stream "external_annotations" too (kind PICKLE_ANNOTATION).
 *
 * keep: when element() is set and keep is not NULL, the NULL-terminated
 * list of the other top-level keys whose values are kept in the tree; the
 * containers under any other key are read and dropped (they stay in the
 * tree, empty).  NULL keeps them all.
 *
 * progress() is called every PICKLE_PROGRESS_STEP bytes of the second
 * pass and once at the end; total is the file size.
 *
 * stats, if not NULL, is filled at the end of the parse, failed or not.
 */
struct pickle_callbacks {
	int	 (*element)(void *arg, enum pickle_list_kind kind,
		     size_t device, size_t index,
		     const struct pickle_value *value, char **cause);
	void	 (*progress)(void *arg, uint64_t done, uint64_t total);
	void	*arg;
	int	 annotations;
	const char *const *keep;
	struct pickle_stats *stats;
};

/* pickle-parse.c */
struct pickle_value	*pickle_parse_file(const char *path,
			     const struct pickle_callbacks *cb, char **cause);
struct pickle_value	*pickle_parse_fd(int fd, const char *name,
			     const struct pickle_callbacks *cb, char **cause);
struct pickle_value	*pickle_parse_buffer(const void *buf, size_t len,
			     const char *name,
			     const struct pickle_callbacks *cb, char **cause);

/* pickle.c */
void			 pickle_free(struct pickle_value *root);
enum pickle_type	 pickle_type(const struct pickle_value *v);
const char		*pickle_type_name(enum pickle_type type);
int			 pickle_same(const struct pickle_value *a,
			     const struct pickle_value *b);
int			 pickle_is_none(const struct pickle_value *v);
int			 pickle_bool(const struct pickle_value *v, int *out);
int			 pickle_int(const struct pickle_value *v, int64_t *out);
int			 pickle_uint(const struct pickle_value *v,
			     uint64_t *out);
int			 pickle_float(const struct pickle_value *v,
			     double *out);
const char		*pickle_str(const struct pickle_value *v, size_t *len);
const void		*pickle_bytes(const struct pickle_value *v,
			     size_t *len);
size_t			 pickle_list_len(const struct pickle_value *v);
const struct pickle_value *pickle_list_at(const struct pickle_value *v,
			     size_t i);
size_t			 pickle_dict_len(const struct pickle_value *v);
const struct pickle_value *pickle_dict_key_at(const struct pickle_value *v,
			     size_t i);
const struct pickle_value *pickle_dict_value_at(const struct pickle_value *v,
			     size_t i);
const struct pickle_value *pickle_dict_get(const struct pickle_value *v,
			     const char *key);
int			 pickle_span(const struct pickle_value *v,
			     uint64_t *start, uint64_t *end);

#endif /* PICKLE_H */
