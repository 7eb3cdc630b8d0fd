/*
 * query-origin.c: the frames that name a site to people (its origin, the
 * origin's caller and the library frame within), read from site_frames;
 * site-origin.c says which they are.
 */
#include "config.h"

#include "query-int.h"
#include "site-origin.h"

#include <stdlib.h>

/* A site's frames as frames_read() gives them. */
struct frames {
	struct site_frame	*v;
	size_t			 n;
};

static void
frames_free(struct frames *f)
{
	size_t	i;

	for (i = 0; i < f->n; i++) {
		free((char *)f->v[i].filename);
		free((char *)f->v[i].name);
	}
	free(f->v);
}

/* Read site site_id's frames, innermost first, into *f.  0, or -1. */
static int
frames_read(struct query *q, int64_t site_id, struct frames *f,
    char **cause)
{
	sqlite3_stmt	*st;
	size_t		 alloc = 0;
	int		 rc;

	f->v = NULL;
	f->n = 0;
	if ((st = query_prepare(q, "SELECT f.filename, f.line, f.name FROM"
	    " site_frames sf JOIN frames f ON f.id = sf.frame_id WHERE"
	    " sf.site_id = ?1 ORDER BY sf.depth", cause)) == NULL)
		return (-1);
	sqlite3_bind_int64(st, 1, site_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (f->n == alloc) {
			alloc = alloc == 0 ? 32 : 2 * alloc;
			f->v = xreallocarray(f->v, alloc, sizeof *f->v);
		}
		f->v[f->n].filename = query_column_text(st, 0);
		f->v[f->n].line = sqlite3_column_int64(st, 1);
		f->v[f->n].name = query_column_text(st, 2);
		f->n++;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		frames_free(f);
		return (query_fail(q, cause));
	}
	return (0);
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
	struct frames		f;
	struct site_origin	o;

	*origin = *caller = *within = NULL;
	if (frames_read(q, site_id, &f, cause) != 0)
		return (-1);
	site_origin_find(f.v, f.n, &o);
	*origin = site_frame_label_at(f.v, o.origin);
	*caller = site_frame_label_at(f.v, o.caller);
	*within = site_frame_label_at(f.v, o.within);
	frames_free(&f);
	return (0);
}

/*
 * Set *label to site site_id's label and *name to the name people know it
 * by: the one the writer stored (sites.name), else site_name() of its
 * frames, as the writer makes it (a file written before sites had names).
 * The caller frees both.  0, or -1 with *cause.
 */
int
query_site_name(struct query *q, int64_t site_id, char **label, char **name,
    char **cause)
{
	sqlite3_stmt	*st;
	struct frames	 f;
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
	if (frames_read(q, site_id, &f, cause) != 0) {
		free(*label);
		*label = NULL;
		return (-1);
	}
	*name = site_name(f.v, f.n, *label);
	frames_free(&f);
	return (0);
}
