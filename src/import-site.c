/*
 * import-site.c: the site of a snapshot's frames list, checked, written
 * through the store, and remembered by the bytes that build the list.
 *
 * Trace entries repeat a few stacks millions of times, each a reference
 * to one memoized frames list (or a copy read again from its bytes).  The
 * same bytes build the same list (pickle_span), so a small direct-mapped
 * cache from a list's span to its site answers all but the first of them
 * without checking the frames or hashing them again; a list with no span,
 * or one the cache lost, takes the whole way, which gives the same site.
 */
#include "config.h"

#include "import.h"

#include <stdlib.h>

/* Spans remembered (a power of two): 96 KiB. */
#define IMPORT_SITE_CACHE	4096

struct import_site_span {
	uint64_t	 start;
	uint64_t	 end;		/* 0: an empty slot */
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
	uint64_t			 start, end;

	*site = 0;
	if (import_check_value(st, d, "frames", PICKLE_LIST, IMPORT_OPTIONAL,
	    &frames, cause) != 0)
		return (-1);
	if (frames == NULL || pickle_list_len(frames) == 0)
		return (0);
	if (pickle_span(frames, &start, &end) == 0) {
		if (st->sites == NULL)
			st->sites = xcalloc(IMPORT_SITE_CACHE,
			    sizeof *st->sites);
		c = &st->sites[((start * 0x9e3779b97f4a7c15ULL) ^ end) *
		    0xff51afd7ed558ccdULL >> 52 & (IMPORT_SITE_CACHE - 1)];
		if (c->start == start && c->end == end) {
			*site = c->site;
			return (0);
		}
	}
	if (site_add(st, frames, site, cause) != 0)
		return (-1);
	if (c != NULL) {
		c->start = start;
		c->end = end;
		c->site = *site;
	}
	return (0);
}

/* Free what the sites' state holds. */
void
import_site_free(struct import_state *st)
{
	free(st->sites);
	free(st->frames);
	st->sites = NULL;
	st->frames = NULL;
	st->frames_alloc = 0;
}
