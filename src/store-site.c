/*
 * store-site.c: stacks, deduplicated.
 *
 * A site is a stack of frames (innermost first).  Frames are rows of
 * `frames`, unique by (filename, line, name); a site is a row of `sites`
 * unique by a 64-bit hash of its frame ids, with its frames in
 * `site_frames`, its label (the innermost frame with a file) and its name
 * (site_name(): the program's line that leaks names it by).  Two maps from
 * 64-bit hashes to row ids (store-idmap.c) keep both lookups in memory, so
 * a stack that repeats costs a hash and no SQL.  A hash of 0 is reserved
 * for empty map slots and never stored.
 */
#include "config.h"

#include "store-int.h"
#include "site-origin.h"

#include <stdlib.h>
#include <string.h>

#define FNV_OFFSET	0xcbf29ce484222325ULL
#define FNV_PRIME	0x100000001b3ULL

static const struct store_sql_text site_sql[] = {
	{ STMT_FRAME_INSERT, "INSERT OR IGNORE INTO frames(name, filename,"
	    " line) VALUES (?1, ?2, ?3)" },
	{ STMT_FRAME_FIND, "SELECT id FROM frames WHERE name = ?1 AND"
	    " filename = ?2 AND line = ?3" },
	{ STMT_SITE_INSERT, "INSERT INTO sites(hash, depth, label, name)"
	    " VALUES (?1, ?2, ?3, ?4) ON CONFLICT(hash) DO NOTHING" },
	{ STMT_SITE_FIND, "SELECT id FROM sites WHERE hash = ?1" },
	{ STMT_SITE_FRAME, "INSERT INTO site_frames(site_id, depth, frame_id)"
	    " VALUES (?1, ?2, ?3)" },
	{ STMT_SITE_KIND, "UPDATE sites SET kind = ?2 WHERE id = ?1 AND"
	    " kind IS NULL" },
};

/* Prepare the statements of sites and frames.  0, or -1 with *cause. */
int
store_site_prepare(struct store *s, char **cause)
{
	return (store_sql_prepare(s, site_sql,
	    sizeof site_sql / sizeof site_sql[0], cause));
}

static uint64_t
fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char	*c = p;

	while (n-- > 0) {
		h ^= *c++;
		h *= FNV_PRIME;
	}
	return (h);
}

static uint64_t
nonzero(uint64_t h)
{
	return (h == 0 ? 1 : h);
}

/*
 * Step `find`, the SELECT of a row of table that an insert found there
 * already, and set *id to its first column.  0, or -1 with *cause.
 */
static int
site_find(struct store *s, sqlite3_stmt *find, const char *table,
    int64_t *id, char **cause)
{
	int	rc;

	if ((rc = sqlite3_step(find)) == SQLITE_ROW)
		*id = sqlite3_column_int64(find, 0);
	else
		store_sql_error(s, cause, "cannot find a row of %s:", table);
	sqlite3_reset(find);
	return (rc == SQLITE_ROW ? 0 : -1);
}

/* The id of frame f, adding it the first time.  0, or -1 with *cause. */
static int
frame_id(struct store *s, const struct store_frame *f, int64_t *id,
    char **cause)
{
	sqlite3_stmt	*st;
	uint64_t	 h;

	h = fnv(FNV_OFFSET, f->name, strlen(f->name) + 1);
	h = fnv(h, f->filename, strlen(f->filename) + 1);
	h = nonzero(fnv(h, &f->line, sizeof f->line));
	if ((*id = store_idmap_get(&s->frames, h)) != 0)
		return (0);
	st = s->stmt[STMT_FRAME_INSERT];
	sqlite3_bind_text(st, 1, f->name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, f->filename, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, f->line);
	if (store_sql_step(s, st, "frames", cause) != 0)
		return (-1);
	if (sqlite3_changes(s->db) > 0)
		*id = sqlite3_last_insert_rowid(s->db);
	else {
		st = s->stmt[STMT_FRAME_FIND];
		sqlite3_bind_text(st, 1, f->name, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, f->filename, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 3, f->line);
		if (site_find(s, st, "frames", id, cause) != 0)
			return (-1);
	}
	store_idmap_put(&s->frames, h, *id);
	return (0);
}

static char *
site_label(const struct store_frame *frames, size_t n)
{
	const struct store_frame	*f = &frames[0];
	size_t				 i;

	/* The innermost frame with a real file names the site best. */
	for (i = 0; i < n; i++) {
		if (strcmp(frames[i].filename, "??") != 0 &&
		    frames[i].filename[0] != '\0') {
			f = &frames[i];
			break;
		}
	}
	return (site_frame_label(f->filename, f->line, f->name));
}

/* Bind the label and the name of the site of frames[0..n) to st's ?3, ?4. */
static void
site_bind_names(sqlite3_stmt *st, const struct store_frame *frames, size_t n)
{
	struct site_frame	*f;
	char			*label, *name;
	size_t			 i;

	f = xreallocarray(NULL, n, sizeof *f);
	for (i = 0; i < n; i++) {
		f[i].filename = frames[i].filename;
		f[i].line = frames[i].line;
		f[i].name = frames[i].name;
	}
	label = site_label(frames, n);
	name = site_name(f, n, label);
	sqlite3_bind_text(st, 3, label, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 4, name, -1, SQLITE_TRANSIENT);
	free(label);
	free(name);
	free(f);
}

/*
 * Say which kind of stack site is ("python", "native"), unless it was said
 * already.  0, or -1 with *cause.
 */
int
store_site_kind(struct store *s, int64_t site, const char *kind,
    char **cause)
{
	sqlite3_stmt	*st = s->stmt[STMT_SITE_KIND];

	if (store_sql_begin(s, cause) != 0)
		return (-1);
	sqlite3_bind_int64(st, 1, site);
	store_sql_bind_text(st, 2, kind);
	return (store_sql_step(s, st, "sites", cause));
}

/*
 * Set *id to the id of the site with these frames (innermost first),
 * adding it the first time; n == 0 gives 0 (no site).  0, or -1 with
 * *cause.
 */
int
store_site_add(struct store *s, const struct store_frame *frames, size_t n,
    int64_t *id, char **cause)
{
	int64_t		*ids;
	uint64_t	 h = FNV_OFFSET;
	size_t		 i;
	sqlite3_stmt	*st;
	int		 rc = -1;

	*id = 0;
	if (n == 0)
		return (0);
	if (store_sql_begin(s, cause) != 0)
		return (-1);
	ids = xreallocarray(NULL, n, sizeof *ids);
	for (i = 0; i < n; i++) {
		if (frame_id(s, &frames[i], &ids[i], cause) != 0)
			goto out;
		h = fnv(h, &ids[i], sizeof ids[i]);
	}
	h = nonzero(h);
	if ((*id = store_idmap_get(&s->sites, h)) != 0) {
		rc = 0;
		goto out;
	}
	st = s->stmt[STMT_SITE_INSERT];
	sqlite3_bind_int64(st, 1, (int64_t)h);
	sqlite3_bind_int64(st, 2, (int64_t)n);
	site_bind_names(st, frames, n);
	if (store_sql_step(s, st, "sites", cause) != 0)
		goto out;
	if (sqlite3_changes(s->db) == 0) {
		/* Written by an earlier run of this database. */
		st = s->stmt[STMT_SITE_FIND];
		sqlite3_bind_int64(st, 1, (int64_t)h);
		if (site_find(s, st, "sites", id, cause) != 0)
			goto out;
	} else {
		*id = sqlite3_last_insert_rowid(s->db);
		st = s->stmt[STMT_SITE_FRAME];
		for (i = 0; i < n; i++) {
			sqlite3_bind_int64(st, 1, *id);
			sqlite3_bind_int64(st, 2, (int64_t)i);
			sqlite3_bind_int64(st, 3, ids[i]);
			if (store_sql_step(s, st, "site_frames", cause) != 0)
				goto out;
		}
	}
	store_idmap_put(&s->sites, h, *id);
	rc = 0;
out:
	free(ids);
	return (rc);
}
