/*
 * import-site.c: the site of a snapshot's frames list, checked, written
 * through the store, and remembered by the bytes that build its frames.
 *
 * Trace entries repeat a few stacks millions of times.  PyTorch writes
 * each frame dict once and refers to it (the memo) ever after, but most
 * entries get a list of their own around those references, and some a
 * reference to an earlier list.  The same bytes build the same value
 * (pickle_span), so the spans of a list's frames say which frames it
 * holds, whichever way the list itself came: a small direct-mapped cache
 * from that sequence of spans to its site answers all but the first of
 * them without checking the frames or hashing their strings again.  A
 * list with a frame that has no span, one deeper than IMPORT_SITE_DEPTH,
 * or one the cache lost takes the whole way, which gives the same site.
 */
#include "config.h"

#include "import.h"

#include <stdlib.h>
#include <string.h>

/* Sequences remembered (a power of two). */
#define IMPORT_SITE_CACHE	4096
/* The deepest list remembered. */
#define IMPORT_SITE_DEPTH	64

struct import_site_span {
	uint64_t	 hash;		/* 0: an empty slot */
	size_t		 n;		/* frames */
	uint64_t	*spans;		/* each frame's start and end */
	int64_t		 site;
};

/* Check the frames of list `frames`, then add its site to the store. */
static int
site_add(struct import_state *st, const struct pickle_value *frames,
    int64_t *site, char **cause)
{
	const struct pickle_value	*f;
	size_t				 n, i;

	if (import_check_frames(st, frames, cause) != 0)
		return (-1);
	n = pickle_list_len(frames);
	if (n > st->frames_alloc) {
		st->frames = xreallocarray(st->frames, n, sizeof *st->frames);
		st->frames_alloc = n;
	}
	for (i = 0; i < n; i++) {
		f = pickle_list_at(frames, i);
		st->frames[i].name = pickle_str(pickle_dict_get(f, "name"),
		    NULL);
		st->frames[i].filename = pickle_str(pickle_dict_get(f,
		    "filename"), NULL);
		if (import_line_unknown(f) || pickle_int(pickle_dict_get(f,
		    "line"), &st->frames[i].line) != 0)
			st->frames[i].line = 0;
	}
	return (store_site_add(st->store, st->frames, n, site, cause));
}

/*
 * The spans of the n frames of list `frames` into key[0..2n), and their
 * hash (never 0); 0 when a frame has no span or n is too large.
 */
static uint64_t
site_key(const struct pickle_value *frames, size_t n, uint64_t *key)
{
	uint64_t	h = n;
	size_t		i;

	if (n > IMPORT_SITE_DEPTH)
		return (0);
	for (i = 0; i < n; i++) {
		if (pickle_span(pickle_list_at(frames, i), &key[2 * i],
		    &key[2 * i + 1]) != 0)
			return (0);
		h = (h ^ key[2 * i]) * 0x9e3779b97f4a7c15ULL;
		h = (h ^ key[2 * i + 1]) * 0xff51afd7ed558ccdULL;
	}
	return (h != 0 ? h : 1);
}

/*
 * Set *site to the site of the frames list at key "frames" of dict d
 * (innermost first; optional), adding it to the store the first time; 0
 * for none.  The frames are checked the first time.  0, or -1 with
 * *cause.
 */
int
import_site_of(struct import_state *st, const struct pickle_value *d,
    int64_t *site, char **cause)
{
	const struct pickle_value	*frames;
	struct import_site_span		*c = NULL;
	uint64_t			 key[2 * IMPORT_SITE_DEPTH], h;
	size_t				 n;

	*site = 0;
	if (import_check_value(st, d, "frames", PICKLE_LIST, IMPORT_OPTIONAL,
	    &frames, cause) != 0)
		return (-1);
	if (frames == NULL || (n = pickle_list_len(frames)) == 0)
		return (0);
	if ((h = site_key(frames, n, key)) != 0) {
		if (st->sites == NULL)
			st->sites = xcalloc(IMPORT_SITE_CACHE,
			    sizeof *st->sites);
		c = &st->sites[h >> 52 & (IMPORT_SITE_CACHE - 1)];
		if (c->hash == h && c->n == n &&
		    memcmp(c->spans, key, 2 * n * sizeof *key) == 0) {
			*site = c->site;
			return (0);
		}
	}
	if (site_add(st, frames, site, cause) != 0)
		return (-1);
	if (c != NULL) {
		c->hash = h;
		c->n = n;
		c->spans = xreallocarray(c->spans, 2 * n, sizeof *c->spans);
		memcpy(c->spans, key, 2 * n * sizeof *key);
		c->site = *site;
	}
	return (0);
}

/* Free what the sites' state holds. */
void
import_site_free(struct import_state *st)
{
	size_t	i;

	for (i = 0; st->sites != NULL && i < IMPORT_SITE_CACHE; i++)
		free(st->sites[i].spans);
	free(st->sites);
	free(st->frames);
	st->sites = NULL;
	st->frames = NULL;
	st->frames_alloc = 0;
}
