/*
 * import-check.c: a snapshot's values held to PyTorch's format (the
 * reference's section 6), so that an impossible value (a negative size, a
 * dict where a list belongs, a device no machine has) is refused instead
 * of becoming rows that change a verdict.
 *
 * Every message is one line naming the file, the key path of the value
 * ("segments[3].blocks[0].size", "device_traces[0][17].time_us") and the
 * value, or its type when it has the wrong one.  The path of the element
 * being read is kept in the import state (import_check_at); the checks add
 * the key.  Keys a snapshot may lack are checked only when present
 * (IMPORT_OPTIONAL); keys PyTorch does not write are ignored.
 */
#include "config.h"

#include "import.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/*
 * Say which element the next checks read: `at` with its indexes a and b
 * (0 where it has fewer).  Nothing is written out until a message needs
 * it (import_check_path), so the checks of a valid element cost no text.
 */
void
import_check_at(struct import_state *st, enum import_at at, size_t a,
    size_t b)
{
	st->at = at;
	st->at_a = a;
	st->at_b = b;
	st->at_frame = 0;
}

/*
 * The key path of the element being checked, as a message shows it: the
 * list of its kind, then the inner list when it has two indexes, then its
 * frame.
 */
const char *
import_check_path(struct import_state *st)
{
	static const struct {
		const char	*outer, *inner;	/* NULL: no such index */
	} names[] = {
		[IMPORT_AT_ROOT] = { NULL, NULL },
		[IMPORT_AT_DEVICE] = { "device_traces", NULL },
		[IMPORT_AT_TRACE] = { "device_traces", "" },
		[IMPORT_AT_SEGMENT] = { "segments", NULL },
		[IMPORT_AT_BLOCK] = { "segments", ".blocks" },
		[IMPORT_AT_ANNOTATION] = { "external_annotations", NULL },
	};
	const char	*inner = names[st->at].inner;
	size_t		 n = 0;

	st->path[0] = '\0';
	if (names[st->at].outer != NULL)
		snprintf(st->path, sizeof st->path, "%s[%zu]",
		    names[st->at].outer, st->at_a);
	if (inner != NULL && (n = strlen(st->path)) < sizeof st->path)
		snprintf(st->path + n, sizeof st->path - n, "%s[%zu]", inner,
		    st->at_b);
	if (st->at_frame > 0 && (n = strlen(st->path)) < sizeof st->path)
		snprintf(st->path + n, sizeof st->path - n, "%sframes[%zu]",
		    n > 0 ? "." : "", st->at_frame - 1);
	return (st->path);
}

/* The refusal: "FILE: PATH.KEY what (not a PyTorch memory snapshot)". */
static int
check_fail(struct import_state *st, const char *key, char **cause,
    const char *fmt, ...) printflike(4, 5);
static int
check_fail(struct import_state *st, const char *key, char **cause,
    const char *fmt, ...)
{
	va_list	ap;
	char	what[160];

	const char *path = import_check_path(st);

	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	xasprintf(cause, "%s: %s%s%s %s (not a PyTorch memory snapshot)",
	    st->file, path, key != NULL && path[0] != '\0' ? "." : "",
	    key != NULL ? key : "", what);
	return (-1);
}

/*
 * Set *out to v, the value found at key (NULL: missing), which must be of
 * type want; a missing key sets *out to NULL when flags has
 * IMPORT_OPTIONAL.  0, or -1 with *cause.
 */
static int
check_found(struct import_state *st, const struct pickle_value *v,
    const char *key, enum pickle_type want, int flags,
    const struct pickle_value **out, char **cause)
{
	*out = NULL;
	if (v == NULL) {
		if (flags & IMPORT_OPTIONAL)
			return (0);
		return (check_fail(st, key, cause, "is missing"));
	}
	if (pickle_type(v) != want)
		return (check_fail(st, key, cause, "is a%s %s, not a%s %s",
		    pickle_type(v) == PICKLE_INT ? "n" : "",
		    pickle_type_name(pickle_type(v)),
		    want == PICKLE_INT ? "n" : "", pickle_type_name(want)));
	*out = v;
	return (0);
}

/*
 * Set *out to key of dict d (d itself when key is NULL), which must be of
 * type want; a missing key sets *out to NULL when flags has
 * IMPORT_OPTIONAL.  0, or -1 with *cause.
 */
int
import_check_value(struct import_state *st, const struct pickle_value *d,
    const char *key, enum pickle_type want, int flags,
    const struct pickle_value **out, char **cause)
{
	return (check_found(st, key != NULL ? pickle_dict_get(d, key) : d, key,
	    want, flags, out, cause));
}

/*
 * Read the int at key of dict d into *out; it must lie in min to max.  A
 * missing key leaves *out alone when flags has IMPORT_OPTIONAL.  0, or -1
 * with *cause.
 */
int
import_check_int(struct import_state *st, const struct pickle_value *d,
    const char *key, int64_t min, int64_t max, int flags, int64_t *out,
    char **cause)
{
	const struct pickle_value	*v;
	int64_t				 n;
	uint64_t			 u;

	v = key != NULL ? pickle_dict_get(d, key) : d;
	if (pickle_int(v, &n) == 0 && n >= min && n <= max) {
		*out = n;	/* the common case, a valid int, at once */
		return (0);
	}
	if (v != NULL && pickle_type(v) == PICKLE_UINT64 &&
	    pickle_uint(v, &u) == 0)
		return (check_fail(st, key, cause, "is %" PRIu64 ", not in %"
		    PRId64 " to %" PRId64, u, min, max));
	if (check_found(st, v, key, PICKLE_INT, flags, &v, cause) != 0)
		return (-1);
	if (v == NULL)
		return (0);
	pickle_int(v, &n);
	if (n < min && min == 0)
		return (check_fail(st, key, cause, "is %" PRId64 ", negative",
		    n));
	if (n < min || n > max)
		return (check_fail(st, key, cause, "is %" PRId64 ", not in %"
		    PRId64 " to %" PRId64, n, min, max));
	*out = n;
	return (0);
}

/*
 * Add size, just read at key of the current element (a trace entry's or a
 * segment's), to the sizes of the file in all.  Past RUN_BYTES_MAX
 * (more than any run allocates) a sum of them, the live bytes of a step
 * or what a stream allocated, might not fit in 63 bits and come out
 * negative, which could turn a leak CLEAN.  0, or -1 with *cause.
 */
int
import_check_total(struct import_state *st, const char *key, int64_t size,
    char **cause)
{
	if ((uint64_t)size > RUN_BYTES_MAX - st->total_bytes)
		return (check_fail(st, key, cause, "is %" PRId64 ", which takes"
		    " the sizes of the file past 2 EiB in all", size));
	st->total_bytes += (uint64_t)size;
	return (0);
}

/*
 * Set *out to the str at key of dict d (NULL when missing and flags has
 * IMPORT_OPTIONAL).  0, or -1 with *cause.
 */
int
import_check_str(struct import_state *st, const struct pickle_value *d,
    const char *key, int flags, const char **out, char **cause)
{
	const struct pickle_value	*v;

	*out = NULL;
	if (import_check_value(st, d, key, PICKLE_STR, flags, &v,
	    cause) != 0)
		return (-1);
	if (v != NULL)
		*out = pickle_str(v, NULL);
	return (0);
}

/* Whether frame f's "line" is IMPORT_LINE_UNKNOWN: 1 or 0. */
int
import_line_unknown(const struct pickle_value *f)
{
	const struct pickle_value	*v = pickle_dict_get(f, "line");
	uint64_t			 line;

	return (v != NULL && pickle_type(v) == PICKLE_UINT64 &&
	    pickle_uint(v, &line) == 0 && line == IMPORT_LINE_UNKNOWN);
}

/*
 * Check the frames of list `frames` (the value of a "frames" key, already
 * known to be a list): each a dict with a str "name" and "filename" and
 * an optional "line" of at least 0, or IMPORT_LINE_UNKNOWN.  0, or -1 with
 * *cause.
 */
int
import_check_frames(struct import_state *st, const struct pickle_value *frames,
    char **cause)
{
	const struct pickle_value	*f;
	const char			*s;
	size_t				 i, len;
	int64_t				 line;
	int				 rc = 0;

	len = pickle_list_len(frames);
	for (i = 0; i < len && rc == 0; i++) {
		f = pickle_list_at(frames, i);
		st->at_frame = i + 1;	/* the path of the checks below */
		rc = import_check_value(st, f, NULL, PICKLE_DICT, 0, &f,
		    cause);
		if (rc == 0)
			rc = import_check_str(st, f, "name", 0, &s, cause);
		if (rc == 0)
			rc = import_check_str(st, f, "filename", 0, &s, cause);
		if (rc == 0 && !import_line_unknown(f))
			rc = import_check_int(st, f, "line", 0, INT64_MAX,
			    IMPORT_OPTIONAL, &line, cause);
	}
	if (rc == 0)
		st->at_frame = 0;
	return (rc);
}

/*
 * Check the types of the top-level keys after the parse: "segments" and
 * "external_annotations" lists, "device_traces" a list of at most
 * IMPORT_DEVICE_MAX lists, "allocator_settings" a dict.  One of
 * "segments" and "device_traces" must be there.  0, or -1 with *cause.
 */
int
import_check_root(struct import_state *st, const struct pickle_value *root,
    char **cause)
{
	const struct pickle_value	*segments, *traces, *v;
	size_t				 i, n;

	import_check_at(st, IMPORT_AT_ROOT, 0, 0);
	if (import_check_value(st, root, "segments", PICKLE_LIST,
	    IMPORT_OPTIONAL, &segments, cause) != 0 ||
	    import_check_value(st, root, "device_traces", PICKLE_LIST,
	    IMPORT_OPTIONAL, &traces, cause) != 0 ||
	    import_check_value(st, root, "external_annotations", PICKLE_LIST,
	    IMPORT_OPTIONAL, &v, cause) != 0 ||
	    import_check_value(st, root, "allocator_settings", PICKLE_DICT,
	    IMPORT_OPTIONAL, &v, cause) != 0)
		return (-1);
	if (segments == NULL && traces == NULL) {
		xasprintf(cause, "%s: no \"segments\" or \"device_traces\" "
		    "(not a PyTorch memory snapshot)", st->file);
		return (-1);
	}
	n = traces != NULL ? pickle_list_len(traces) : 0;
	if (n > IMPORT_DEVICE_MAX) {
		xasprintf(cause, "%s: device_traces has %zu devices, more than "
		    "%d (not a PyTorch memory snapshot)", st->file, n,
		    IMPORT_DEVICE_MAX);
		return (-1);
	}
	for (i = 0; i < n; i++) {
		import_check_at(st, IMPORT_AT_DEVICE, i, 0);
		if (import_check_value(st, pickle_list_at(traces, i), NULL,
		    PICKLE_LIST, 0, &v, cause) != 0)
			return (-1);
	}
	return (0);
}
