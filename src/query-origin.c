/*
 * query-origin.c: the frames that name a site to people (its origin, the
 * origin's caller and the library frame within), read from site_frames;
 * site-origin.c says which they are.
 */
#include "config.h"

#include "query-int.h"
#include "site-origin.h"

#include <stdlib.h>

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
		*origin = site_frame_label_at(frames, o.origin);
		*caller = site_frame_label_at(frames, o.caller);
		*within = site_frame_label_at(frames, o.within);
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
 * by: the one the writer stored (sites.name), else site_origin_name of its
 * frames (a file written before sites had names).  The caller frees both.
 * 0, or -1 with *cause.
 */
int
query_site_name(struct query *q, int64_t site_id, char **label, char **name,
    char **cause)
{
	sqlite3_stmt	*st;
	char		*origin, *caller, *within;
	int		 rc;

	*label = *name = NULL;
	if (query_has_site_names(q)) {
		if ((st = query_prepare(q, "SELECT label, name FROM sites"
		    " WHERE id = ?1", cause)) == NULL)
			return (-1);
		sqlite3_bind_int64(st, 1, site_id);
		if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			*label = query_column_text(st, 0);
			*name = query_column_text(st, 1);
		}
		sqlite3_finalize(st);
		if (rc != SQLITE_ROW && rc != SQLITE_DONE)
			return (query_fail(q, cause));
		if (*name != NULL)
			return (0);
		free(*label);
		*label = NULL;
	}
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
