/*
 * Values of the pickle reader: node lifetime and read-only accessors.
 *
 * See pickle-internal.h for the shape: inline scalars, reference-counted
 * str/bytes/container nodes, dicts stored as flat key/value pairs, and
 * containers sealed once nested, which keeps the graph acyclic and its
 * depth bounded.  The accessors take NULL and values of the wrong type and
 * answer -1, NULL or 0 so that calls can be chained without checks.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "pickle-int.h"

#include <stdlib.h>
#include <string.h>

static uint64_t
pickle_container_bytes(const struct pickle_container *c)
{
	return (sizeof *c + c->cap * sizeof *c->items);
}

/* Drop one reference to str or bytes node s, freeing it with the last. */
static void
pickle_str_unref(struct pickle_str *s, uint64_t *mem)
{
	if (--s->refs != 0)
		return;
	if (mem != NULL)
		*mem -= sizeof *s + s->len + 1;
	free(s);
}

/*
 * The last reference to c went: drop its items' references and take its
 * bytes off *mem (mem may be NULL); the node and its item array stay.
 */
static void
pickle_container_release(struct pickle_container *c, uint64_t *mem)
{
	struct pickle_value	*item;
	size_t			 i;

	/* Items are mostly scalars and shared strings. */
	for (i = 0; i < c->len; i++) {
		item = &c->items[i];
		if (pickle_value_is_container(item))
			pickle_value_unref(item, mem);
		else if (item->type == PICKLE_STR ||
		    item->type == PICKLE_BYTES)
			pickle_str_unref(item->u.s, mem);
	}
	if (mem != NULL)
		*mem -= pickle_container_bytes(c);
}

/*
 * Drop one reference to the node v points to and free it with the last
 * one, taking the bytes freed off *mem (mem may be NULL).  Recursion is
 * bounded by PICKLE_DEPTH_MAX.  v becomes none.
 */
void
pickle_value_unref(struct pickle_value *v, uint64_t *mem)
{
	struct pickle_container	*c;

	if (pickle_value_is_container(v)) {
		c = v->u.c;
		if (--c->refs == 0) {
			pickle_container_release(c, mem);
			pickle_container_free(c);
		}
	} else if (v->type == PICKLE_STR || v->type == PICKLE_BYTES)
		pickle_str_unref(v->u.s, mem);
	v->type = PICKLE_NONE;
}

/*
 * pickle_value_unref(), except that a container this frees is kept in
 * *spare, its item array with it, for the next pickle_value_container()
 * to use (the one there before is freed): the parser makes and frees a
 * streamed element for each one it reads.  Not one of more than
 * PICKLE_SPARE_ITEMS items, whose memory would stay uncounted.
 */
void
pickle_value_unref_spare(struct pickle_value *v, uint64_t *mem,
    struct pickle_container **spare)
{
	struct pickle_container	*c;

	if (!pickle_value_is_container(v) || v->u.c->refs > 1 ||
	    v->u.c->cap > PICKLE_SPARE_ITEMS) {
		pickle_value_unref(v, mem);
		return;
	}
	c = v->u.c;
	c->refs = 0;
	pickle_container_release(c, mem);
	pickle_container_free(*spare);
	*spare = c;
	v->type = PICKLE_NONE;
}

/*
 * Free container node c and its item array, once its items' references are
 * dropped: a node pickle_value_unref_spare() kept, say.  NULL is allowed.
 */
void
pickle_container_free(struct pickle_container *c)
{
	if (c == NULL)
		return;
	free(c->items);
	free(c);
}

/*
 * Make v a new str or bytes node of len bytes (uninitialised, with a NUL
 * after them) and one reference, adding its size to *mem.  Returns -1 when
 * out of memory.
 */
int
pickle_value_str(struct pickle_value *v, enum pickle_type type, size_t len,
    uint64_t *mem)
{
	struct pickle_str	*s;

	s = malloc(sizeof *s + len + 1);
	if (s == NULL)
		return (-1);
	*mem += sizeof *s + len + 1;
	s->refs = 1;
	s->len = len;
	s->data[len] = '\0';
	v->type = type;
	v->u.s = s;
	return (0);
}

static int
pickle_grow(struct pickle_container *c, size_t need, uint64_t *mem)
{
	struct pickle_value	*items;
	size_t			 cap;

	if (need <= c->cap)
		return (0);
	cap = c->cap < 4 ? 4 : c->cap;
	while (cap < need)
		cap *= 2;
	items = realloc(c->items, cap * sizeof *items);
	if (items == NULL)
		return (-1);
	*mem += (cap - c->cap) * sizeof *items;
	c->items = items;
	c->cap = cap;
	return (0);
}

/*
 * Make v a new empty list, tuple or dict with room for cap values and one
 * reference, adding its size to *mem: in the node *spare (which becomes
 * NULL) when there is one, with its item array, else in new memory.
 * Returns -1 when out of memory.
 */
int
pickle_value_container(struct pickle_value *v, enum pickle_type type,
    size_t cap, uint64_t *mem, struct pickle_container **spare)
{
	struct pickle_container	*c;
	struct pickle_value	*items;

	if ((c = *spare) != NULL) {
		*spare = NULL;
		items = c->items;
		memset(c, 0, sizeof *c);
		c->items = items;	/* pickle_grow reallocs it */
	} else if ((c = calloc(1, sizeof *c)) == NULL)
		return (-1);
	c->refs = 1;
	c->slot = PICKLE_NO_SLOT;
	c->depth = 1;
	if (pickle_grow(c, cap, mem) != 0) {
		pickle_container_free(c);
		return (-1);
	}
	*mem += sizeof *c;
	v->type = type;
	v->u.c = c;
	return (0);
}

/*
 * Move n values (and their references) to the end of c, sealing the
 * containers among them and updating the depth of c; growth is added to
 * *mem.  The caller has checked that c is not sealed, that no item is c
 * and the depth cap.  Returns -1 when out of memory; the items are then
 * still the caller's.
 */
int
pickle_value_append(struct pickle_container *c,
    const struct pickle_value *items, size_t n, uint64_t *mem)
{
	size_t	i;

	if (n == 0)
		return (0);
	if (n > SIZE_MAX / sizeof *items - c->len ||
	    pickle_grow(c, c->len + n, mem) != 0)
		return (-1);
	memcpy(c->items + c->len, items, n * sizeof *items);
	c->len += n;
	for (i = 0; i < n; i++) {
		if (!pickle_value_is_container(&items[i]))
			continue;
		items[i].u.c->sealed = 1;
		if (items[i].u.c->depth >= c->depth)
			c->depth = items[i].u.c->depth + 1;
	}
	return (0);
}

/*
 * Free a tree returned by a pickle_parse_*() function; nodes still shared
 * elsewhere are not touched.  NULL is allowed.
 */
void
pickle_free(struct pickle_value *root)
{
	if (root == NULL)
		return;
	pickle_value_unref(root, NULL);
	free(root);
}

/* The type of v.  v must not be NULL. */
enum pickle_type
pickle_type(const struct pickle_value *v)
{
	return (v->type);
}

/* A static lowercase name of type, for messages ("list", "dict"). */
const char *
pickle_type_name(enum pickle_type type)
{
	static const char *names[] = {
		"none", "bool", "int", "float", "str", "bytes", "list",
		"tuple", "dict", "int"
	};

	if ((size_t)type >= sizeof names / sizeof names[0])
		return ("unknown");
	return (names[type]);
}

/*
 * Whether a and b are the same str, bytes or container node (not merely
 * equal), as two back-references to one memoized list are.  0 for NULL.
 */
int
pickle_same(const struct pickle_value *a, const struct pickle_value *b)
{
	if (a == NULL || b == NULL || a->type != b->type ||
	    !pickle_value_is_node(a))
		return (0);
	if (pickle_value_is_container(a))
		return (a->u.c == b->u.c);
	return (a->u.s == b->u.s);
}

/* 1 if v is none, 0 otherwise (also for NULL). */
int
pickle_is_none(const struct pickle_value *v)
{
	return (v != NULL && v->type == PICKLE_NONE);
}

/* Store a bool v in *out as 0 or 1.  Returns -1 if v is NULL or no bool. */
int
pickle_bool(const struct pickle_value *v, int *out)
{
	if (v == NULL || v->type != PICKLE_BOOL)
		return (-1);
	*out = v->u.b;
	return (0);
}

/*
 * Store an int v in *out.  Returns -1 if v is NULL, no int (bools too) or
 * past int64_t (PICKLE_UINT64).
 */
int
pickle_int(const struct pickle_value *v, int64_t *out)
{
	if (v == NULL || v->type != PICKLE_INT)
		return (-1);
	*out = v->u.i;
	return (0);
}

/*
 * Store a float v, or an int v converted, in *out.  Returns -1 if v is NULL
 * or neither.
 */
int
pickle_float(const struct pickle_value *v, double *out)
{
	uint64_t	u;

	if (v == NULL)
		return (-1);
	if (v->type == PICKLE_FLOAT)
		*out = v->u.f;
	else if (v->type == PICKLE_INT)
		*out = (double)v->u.i;
	else if (pickle_uint(v, &u) == 0)	/* PICKLE_UINT64 */
		*out = (double)u;
	else
		return (-1);
	return (0);
}

/*
 * Store an int v of 0 to 2^64 - 1 in *out.  Returns -1 if v is NULL, no
 * int, or negative.
 */
int
pickle_uint(const struct pickle_value *v, uint64_t *out)
{
	if (v == NULL || (v->type != PICKLE_INT && v->type != PICKLE_UINT64) ||
	    (v->type == PICKLE_INT && v->u.i < 0))
		return (-1);
	memcpy(out, &v->u.i, sizeof *out);
	return (0);
}

static const char *
pickle_data(const struct pickle_value *v, enum pickle_type type, size_t *len)
{
	if (v == NULL || v->type != type)
		return (NULL);
	if (len != NULL)
		*len = v->u.s->len;
	return (v->u.s->data);
}

/*
 * The UTF-8 bytes of a str v, NUL-terminated, with their count in *len if
 * len is not NULL (a str may contain NUL).  Owned by the tree.  NULL if v is
 * NULL or no str.
 */
const char *
pickle_str(const struct pickle_value *v, size_t *len)
{
	return (pickle_data(v, PICKLE_STR, len));
}

/* Like pickle_str() for a bytes value. */
const void *
pickle_bytes(const struct pickle_value *v, size_t *len)
{
	return (pickle_data(v, PICKLE_BYTES, len));
}

/*
 * The number of items of a list or tuple v; 0 if v is NULL or of another
 * type (check pickle_type() to tell the two apart).
 */
size_t
pickle_list_len(const struct pickle_value *v)
{
	if (v == NULL || (v->type != PICKLE_LIST && v->type != PICKLE_TUPLE))
		return (0);
	return (v->u.c->len);
}

/* Item i of a list or tuple v; NULL if out of range, v NULL or no list. */
const struct pickle_value *
pickle_list_at(const struct pickle_value *v, size_t i)
{
	if (i >= pickle_list_len(v))
		return (NULL);
	return (&v->u.c->items[i]);
}

/* The number of pairs of a dict v; 0 if v is NULL or no dict. */
size_t
pickle_dict_len(const struct pickle_value *v)
{
	if (v == NULL || v->type != PICKLE_DICT)
		return (0);
	return (v->u.c->len / 2);
}

/*
 * Key of pair i of a dict v, in insertion order; NULL if out of range, v
 * NULL or no dict.  Keys are str, int, float, bool, none, bytes or tuple.
 */
const struct pickle_value *
pickle_dict_key_at(const struct pickle_value *v, size_t i)
{
	if (i >= pickle_dict_len(v))
		return (NULL);
	return (&v->u.c->items[2 * i]);
}

/* Value of pair i of a dict v; NULL as for pickle_dict_key_at(). */
const struct pickle_value *
pickle_dict_value_at(const struct pickle_value *v, size_t i)
{
	if (i >= pickle_dict_len(v))
		return (NULL);
	return (&v->u.c->items[2 * i + 1]);
}

/*
 * The bytes [*start, *end) of the input that build container v: reading
 * them again gives the same value, so two containers with the same span
 * are equal (a shared list seen twice, or read again).  0, or -1 when v
 * is NULL, no container, or was changed after a POP dropped it, so that
 * its bytes no longer say what it holds.
 */
int
pickle_span(const struct pickle_value *v, uint64_t *start, uint64_t *end)
{
	if (v == NULL || !pickle_value_is_container(v) || v->u.c->moved)
		return (-1);
	*start = v->u.c->start;
	*end = v->u.c->end;
	return (0);
}

/*
 * The value stored under the str key in a dict v; NULL if absent, v NULL or
 * no dict.  A key set twice keeps both pairs in iteration order and the
 * later value wins here, as the later SETITEM does in Python.
 */
const struct pickle_value *
pickle_dict_get(const struct pickle_value *v, const char *key)
{
	const struct pickle_value	*k;
	size_t				 i, len;

	len = strlen(key);
	for (i = pickle_dict_len(v); i > 0; i--) {
		k = &v->u.c->items[2 * (i - 1)];
		if (k->type == PICKLE_STR && k->u.s->len == len &&
		    k->u.s->data[0] == key[0] &&
		    memcmp(k->u.s->data, key, len) == 0)
			return (k + 1);
	}
	return (NULL);
}
