/*
 * query-check.c: the offload check of a run (vramtrace record
 * --check-offload): how many saved tensors the checker compared, how many
 * came back different, and the first of those.
 *
 * A run was checked when it has rows in offload_check_steps (the checker
 * sends one per engine and step, even when nothing differed).  A database
 * made before the check's tables existed, opened read-only, has no such
 * tables: its runs were not checked, which is not an error.
 */
#include "config.h"

#include "query-int.h"

#include <stdlib.h>
#include <string.h>

/* 1 when the database has the offload check's tables. */
static int
check_has_tables(struct query *q)
{
	return (query_int(q, "SELECT count(*) FROM sqlite_master WHERE type ="
	    " 'table' AND name IN ('offload_check_steps',"
	    " 'offload_check_diffs')") == 2);
}

/* The totals of run over its check-step rows into *c.  0, or -1. */
static int
check_totals(struct query *q, int64_t run, struct query_check *c,
    char **cause)
{
	sqlite3_stmt	*st;
	int		 rc;

	if ((st = query_prepare(q, "SELECT count(*), count(DISTINCT step),"
	    " count(DISTINCT engine), sum(packs), sum(unpacks), sum(checked),"
	    " sum(differ), sum(packed_bytes), sum(moved_bytes),"
	    " (SELECT count(*) FROM offload_check_diffs WHERE run_id = ?1)"
	    " FROM offload_check_steps WHERE run_id = ?1", cause)) == NULL)
		return (-1);
	sqlite3_bind_int64(st, 1, run);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		c->checked_run = sqlite3_column_int64(st, 0) > 0 ||
		    sqlite3_column_int64(st, 9) > 0;
		c->steps = sqlite3_column_int64(st, 1);
		c->engines = sqlite3_column_int64(st, 2);
		c->packs = sqlite3_column_int64(st, 3);
		c->unpacks = sqlite3_column_int64(st, 4);
		c->checked = sqlite3_column_int64(st, 5);
		c->differ = sqlite3_column_int64(st, 6);
		c->packed_bytes = sqlite3_column_int64(st, 7);
		c->moved_bytes = sqlite3_column_int64(st, 8);
		c->diffs = sqlite3_column_int64(st, 9);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW)
		return (query_fail(q, cause));
	return (0);
}

/* The first max differences of run, by step and pack number, into *c. */
static int
check_first(struct query *q, int64_t run, size_t max, struct query_check *c,
    char **cause)
{
	struct query_check_diff	*d;
	sqlite3_stmt		*st;
	int			 rc;

	if ((st = query_prepare(q, "SELECT d.step, d.pack_index, d.bytes,"
	    " d.device, d.differs, d.engine, d.shape, d.dtype, d.detail,"
	    " d.pack_where, p.label, u.label, d.pack_site_id,"
	    " d.unpack_site_id FROM offload_check_diffs d"
	    " LEFT JOIN sites p ON p.id = d.pack_site_id"
	    " LEFT JOIN sites u ON u.id = d.unpack_site_id"
	    " WHERE d.run_id = ?1 ORDER BY d.step, d.pack_index, d.id"
	    " LIMIT ?2", cause)) == NULL)
		return (-1);
	sqlite3_bind_int64(st, 1, run);
	sqlite3_bind_int64(st, 2, (int64_t)max);
	c->first = xcalloc(max > 0 ? max : 1, sizeof *c->first);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		d = &c->first[c->nfirst++];
		d->step = query_column_int(st, 0);
		d->index = query_column_int(st, 1);
		d->bytes = query_column_int(st, 2);
		d->device = (int)query_column_int(st, 3);
		d->differs = (unsigned int)sqlite3_column_int(st, 4);
		d->engine = query_column_text(st, 5);
		d->shape = query_column_text(st, 6);
		d->dtype = query_column_text(st, 7);
		d->detail = query_column_text(st, 8);
		d->where = query_column_text(st, 9);
		d->pack_site = query_column_text(st, 10);
		d->unpack_site = query_column_text(st, 11);
		d->pack_site_id = query_column_int(st, 12);
		d->unpack_site_id = query_column_int(st, 13);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return (query_fail(q, cause));
	return (0);
}

/*
 * Fill *c with the offload check of run `run`: its totals, and its first
 * `max` differences (c->first, c->nfirst).  c->checked_run is 0 when the
 * run was not checked (then every count is 0).  Free with
 * query_check_free(), also after an error.  0, or -1 with *cause.
 */
int
query_check(struct query *q, int64_t run, size_t max, struct query_check *c,
    char **cause)
{
	memset(c, 0, sizeof *c);
	if (!check_has_tables(q))
		return (0);
	if (check_totals(q, run, c, cause) != 0)
		return (-1);
	if (c->diffs == 0 || max == 0)
		return (0);
	return (check_first(q, run, max, c, cause));
}

/* Free what query_check() filled in c; c itself is the caller's. */
void
query_check_free(struct query_check *c)
{
	struct query_check_diff	*d;
	size_t			 i;

	for (i = 0; i < c->nfirst; i++) {
		d = &c->first[i];
		free(d->engine);
		free(d->shape);
		free(d->dtype);
		free(d->detail);
		free(d->where);
		free(d->pack_site);
		free(d->unpack_site);
	}
	free(c->first);
	memset(c, 0, sizeof *c);
}
