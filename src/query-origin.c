/*
 * query-origin.c: the frames that name a site to people (its origin, the
 * origin's caller and the library frame within), read from site_frames;
 * site-origin.c says which they are.
 */
#include "config.h"

#include "query-int.h"
#include "site-origin.h"

#include <stdlib.h>

/* The frame at index i of frames as a label, or NULL for i < 0. */
static char *
label_at(const struct site_frame *frames, long i)
{
	return (i >= 0 ? site_frame_label(frames[i].filename, frames[i].line,
	    frames[i].name) : NULL);
}

/*
 * Set *origin, *caller and *within (the caller frees them) to the labels
 * of site site_id's origin, its caller and the library's frame within it,
 * each NULL where the stack has none (site-origin.c).  0, or -1 with
 * *cause.
 */
int
query_site_origin(struct query *q, int64_t site_id, char **origin,
    char **caller, char **within, char **cause)
{
	sqlite3_stmt		*st;
	struct site_frame	*frames = NULL;
	struct site_origin	 o;
	size_t			 n = 0, alloc = 0, i;
	int			 rc;

	*origin = *caller = *within = NULL;
	if ((st = query_prepare(q, "SELECT f.filename, f.line, f.name FROM"
	    " site_frames sf JOIN frames f ON f.id = sf.frame_id WHERE"
	    " sf.site_id = ?1 ORDER BY sf.depth", cause)) == NULL)
		return (-1);
	sqlite3_bind_int64(st, 1, site_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (n == alloc) {
			alloc = alloc == 0 ? 32 : 2 * alloc;
			frames = xreallocarray(frames, alloc, sizeof *frames);
		}
		frames[n].filename = query_column_text(st, 0);
		frames[n].line = sqlite3_column_int64(st, 1);
		frames[n].name = query_column_text(st, 2);
		n++;
	}
	if (rc == SQLITE_DONE) {
		site_origin_find(frames, n, &o);
		*origin = label_at(frames, o.origin);
		*caller = label_at(frames, o.caller);
		*within = label_at(frames, o.within);
	}
	for (i = 0; i < n; i++) {
		free((char *)frames[i].filename);
		free((char *)frames[i].name);
	}
	free(frames);
	sqlite3_finalize(st);
	return (rc == SQLITE_DONE ? 0 : query_fail(q, cause));
}

/*
 * Set *label to site site_id's label and *name to the name people know it
 * by (site_origin_name): the caller frees both.  0, or -1 with *cause.
 */
int
query_site_name(struct query *q, int64_t site_id, char **label, char **name,
    char **cause)
{
	char	*origin, *caller, *within;

	*name = NULL;
	if (query_site_label(q, site_id, label, cause) != 0)
		return (-1);
	if (query_site_origin(q, site_id, &origin, &caller, &within,
	    cause) != 0) {
		free(*label);
		*label = NULL;
		return (-1);
	}
	*name = site_origin_name(origin, caller, within, *label);
	free(origin);
	free(caller);
	free(within);
	return (0);
}
