/*
 * query-blocks.c: blocks (allocation rows) for browsing, a page at a time,
 * and the frames of an allocation site.
 *
 * Live blocks by size have an index (allocations_live).  Every block by
 * size, largest first, pages from allocation_top, the run's largest rows
 * kept by the writer (store-top.c); by size smallest first, by age and by
 * stream, and by size on one stream, from allocation_heads, its first rows
 * in that order: a row not kept ranks below every row kept, so a full page
 * of kept rows that match is the right page.
 */
#include "config.h"

#include "query-int.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static const char *
sort_column(enum block_sort sort)
{
	switch (sort) {
	case SORT_AGE:
		return ("a.alloc_ns");
	case SORT_STEP:
		return ("a.alloc_step");
	case SORT_STREAM:
		return ("a.stream");
	case SORT_SITE:
		return ("a.site_id");
	default:
		return ("a.bytes");
	}
}

/*
 * The SQL for the blocks of ?1 in q that match f, in f's order: `what`
 * selects, `tail` ends it; a search finds ?6 in the site's name or label.
 * With `head` 0, only the run's largest rows (allocation_top) are read;
 * above 0, only its first rows in that order (allocation_heads.sort).  The
 * caller frees it.
 */
static char *
blocks_sql(struct query *q, const struct block_filter *f, int head,
    const char *what, const char *tail)
{
	char	*sql, *from;

	/* CROSS JOIN: the kept rows first, whatever ANALYZE guessed. */
	if (head == 0)
		from = xstrdup("allocation_top t CROSS JOIN allocations a ON"
		    " a.id = t.allocation_id");
	else if (head > 0)
		xasprintf(&from, "allocation_heads t CROSS JOIN allocations a"
		    " ON a.id = t.allocation_id AND t.sort = %d AND t.part ="
		    " %lld", head, head == 6 ? (long long)f->stream : 0LL);
	else
		from = xstrdup("allocations a");
	xasprintf(&sql, "SELECT %s FROM %s LEFT JOIN sites s ON"
	    " s.id = a.site_id WHERE a.run_id = ?1%s%s%s%s%s%s%s ORDER BY %s"
	    " %s, a.id%s", what, from, head >= 0 ? " AND t.run_id = ?1" : "",
	    f->live_only ? " AND a.free_ns IS NULL" : "",
	    f->layer >= 0 ? " AND a.layer = ?2" : "",
	    f->has_stream ? " AND a.stream = ?3" : "",
	    f->step_min > 0 ? " AND a.alloc_step >= ?4" : "",
	    f->step_max > 0 ? " AND a.alloc_step <= ?5" : "",
	    f->search == NULL ? "" : query_has_site_names(q) ?
	    " AND (instr(s.label, ?6) > 0 OR instr(s.name, ?6) > 0)" :
	    " AND instr(s.label, ?6) > 0",
	    sort_column(f->sort), f->descending ? "DESC" : "ASC", tail);
	free(from);
	return (sql);
}

static sqlite3_stmt *
blocks_prepare(struct query *q, const struct block_filter *f, int64_t run,
    const char *sql, char **cause)
{
	sqlite3_stmt	*st;

	if ((st = query_prepare(q, sql, cause)) == NULL)
		return (NULL);
	sqlite3_bind_int64(st, 1, run);
	sqlite3_bind_int(st, 2, f->layer);
	sqlite3_bind_int64(st, 3, (int64_t)f->stream);
	sqlite3_bind_int64(st, 4, f->step_min);
	sqlite3_bind_int64(st, 5, f->step_max);
	if (f->search != NULL)
		sqlite3_bind_text(st, 6, f->search, -1, SQLITE_STATIC);
	return (st);
}

/*
 * Which of the run's first rows serve f's order: 0 allocation_top, above
 * 0 that sort of allocation_heads (store-top.c), -1 none.
 */
static int
blocks_head(const struct block_filter *f)
{
	if (f->live_only)
		return (-1);
	switch (f->sort) {
	case SORT_SIZE:
		if (!f->descending)
			return (1);
		return (f->has_stream ? 6 : 0);
	case SORT_AGE:
		return (f->descending ? 3 : 2);
	case SORT_STREAM:
		return (f->descending ? 5 : 4);
	case SORT_SITE:
		return (f->descending ? 8 : 7);
	default:
		return (-1);
	}
}

/*
 * How many of the run's first rows in f's order the tables hold (head:
 * blocks_head), -1 when none serve it or the run has none kept, or
 * INT64_MAX when they are all its rows (of f's stream, for head 6).
 */
static int64_t
blocks_top_rows(struct query *q, const struct block_filter *f, int64_t run,
    int head)
{
	char	*sql, *all_sql;
	int64_t	 n, all;

	if (head < 0)
		return (-1);
	xasprintf(&sql, "SELECT count(*) FROM sqlite_master WHERE type ="
	    " 'table' AND name = '%s'", head == 0 ? "allocation_top" :
	    "allocation_heads");
	n = query_int(q, sql);
	free(sql);
	if (n != 1)
		return (-1);
	if (head == 0) {
		sql = xstrdup("SELECT count(*) FROM allocation_top WHERE"
		    " run_id = ?1");
		all_sql = xstrdup("SELECT sum(blocks) FROM allocation_groups"
		    " WHERE run_id = ?1");
	} else if (head == 6) {
		xasprintf(&sql, "SELECT count(*) FROM allocation_heads WHERE"
		    " run_id = ?1 AND sort = 6 AND part = %lld",
		    (long long)f->stream);
		xasprintf(&all_sql, "SELECT sum(blocks) FROM allocation_groups"
		    " WHERE run_id = ?1 AND stream = %lld",
		    (long long)f->stream);
	} else {
		xasprintf(&sql, "SELECT count(*) FROM allocation_heads WHERE"
		    " run_id = ?1 AND sort = %d AND part = 0", head);
		all_sql = xstrdup("SELECT sum(blocks) FROM allocation_groups"
		    " WHERE run_id = ?1");
	}
	n = query_int_arg(q, sql, run);
	all = n > 0 ? query_int_arg(q, all_sql, run) : 0;
	free(sql);
	free(all_sql);
	if (n <= 0)
		return (-1);
	return (query_has_groups(q, run) && n >= all ? INT64_MAX : n);
}

static int
blocks_read(struct query *q, const struct block_filter *f, int64_t run,
    int head, int64_t offset, struct block_row *rows, int max, char **cause)
{
	sqlite3_stmt	*st;
	char		*sql, *what;
	struct block_row *r;
	int		 n = 0, rc = SQLITE_DONE;

	xasprintf(&what, "a.id, a.device, a.stream, a.layer, a.address,"
	    " a.bytes, a.alloc_ns, a.free_ns, a.alloc_step, a.site_id, %s",
	    query_site_shown(q));
	sql = blocks_sql(q, f, head, what, " LIMIT ?7 OFFSET ?8");
	free(what);
	st = blocks_prepare(q, f, run, sql, cause);
	free(sql);
	if (st == NULL)
		return (-1);
	sqlite3_bind_int(st, 7, max);
	sqlite3_bind_int64(st, 8, offset);
	while (n < max && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		r = &rows[n++];
		r->id = sqlite3_column_int64(st, 0);
		r->device = query_column_int(st, 1);
		r->stream = query_column_u64(st, 2);
		r->layer = sqlite3_column_int(st, 3);
		r->address = (uint64_t)sqlite3_column_int64(st, 4);
		r->bytes = sqlite3_column_int64(st, 5);
		r->alloc_ns = query_column_u64(st, 6);
		r->free_ns = query_column_u64(st, 7);
		r->alloc_step = query_column_int(st, 8);
		r->site_id = query_column_int(st, 9);
		query_column_copy(st, 10, r->site, sizeof r->site);
	}
	if (n < max && rc != SQLITE_DONE) {
		sqlite3_finalize(st);
		return (query_fail(q, cause));
	}
	sqlite3_finalize(st);
	return (n);
}

/*
 * Fill rows[0..max) with the blocks of run f->run_id (0: the newest) that
 * match f, in f's order, after skipping `offset` of them.  Returns the
 * number of rows filled (0 past the end), or -1 with *cause.  Sites are
 * given by name (query_site_shown), cut to the row's buffer.  Every block
 * by size, age or stream comes from the run's first rows in that order
 * while they have a full page; past them every row is read
 * (query_blocks_quick says where).
 */
int
query_blocks(struct query *q, const struct block_filter *f,
    int64_t offset, struct block_row *rows, int max, char **cause)
{
	int64_t	run = f->run_id != 0 ? f->run_id : query_latest_run(q);
	int	head = blocks_head(f);
	int64_t	top = blocks_top_rows(q, f, run, head);
	int	n;

	if (top < 0)
		return (blocks_read(q, f, run, -1, offset, rows, max, cause));
	n = blocks_read(q, f, run, head, offset, rows, max, cause);
	if (n < 0 || n == max || top == INT64_MAX)
		return (n);
	return (blocks_read(q, f, run, -1, offset, rows, max, cause));
}

/*
 * How many blocks matching f query_blocks() reads from the run's
 * first rows in f's order without going through every row: -1 when there
 * is no such bound (by step, live blocks, a run whose rows are all kept,
 * or none kept).  0 when there are none, or on errors.
 */
int64_t
query_blocks_quick(struct query *q, const struct block_filter *f)
{
	sqlite3_stmt	*st;
	char		*sql;
	int64_t		 run = f->run_id != 0 ? f->run_id : query_latest_run(q);
	int		 head = blocks_head(f);
	int64_t		 top = blocks_top_rows(q, f, run, head), n = 0;

	if (top < 0 || top == INT64_MAX)
		return (-1);
	sql = blocks_sql(q, f, head, "count(*)", "");
	st = blocks_prepare(q, f, run, sql, NULL);
	free(sql);
	if (st == NULL)
		return (0);
	if (sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return (n);
}

/*
 * Fill frames[0..max) with the frames of site site_id, innermost first.
 * Returns their number (0 for an unknown site), or -1 with *cause.
 */
int
query_blocks_frames(struct query *q, int64_t site_id,
    struct frame_row *frames, int max, char **cause)
{
	sqlite3_stmt	*st;
	int		 n = 0, rc = SQLITE_DONE;

	st = query_prepare(q, "SELECT f.name, f.filename, f.line FROM"
	    " site_frames sf JOIN frames f ON f.id = sf.frame_id WHERE"
	    " sf.site_id = ?1 ORDER BY sf.depth", cause);
	if (st == NULL)
		return (-1);
	sqlite3_bind_int64(st, 1, site_id);
	while (n < max && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		query_column_copy(st, 0, frames[n].name,
		    sizeof frames[n].name);
		query_column_copy(st, 1, frames[n].filename,
		    sizeof frames[n].filename);
		frames[n].line = sqlite3_column_int64(st, 2);
		n++;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return (query_fail(q, cause));
	return (n);
}
