/*
 * query-diff.c: the blocks live at one point and not at another, for
 * vramtrace diff and the TUI's diff screen alike.
 *
 * A point is a step end of a run or the end of a run.  A block is live at
 * the end of step s when it was made in a step <= s (an unknown step
 * counts as step 1, as in the step_deltas view) and not freed by then; at
 * the end of a run when it was never freed.  What is live at B and not at
 * A is new, what is live at A and not at B is gone.  Within one run of one
 * file a block is its row (one freed and made again at the same address is
 * gone and new); between runs or files blocks are matched by device,
 * address and size.  What differs is summed per (site, device, stream); as
 * site ids belong to one database, those groups are matched by the name
 * people know the site by (site_origin_name: the program's own line, its
 * caller and the library's frame within, else the label), which a stack
 * of C++ frames does not hide as it hides the label.
 *
 * There are three ways to the answer, the cheapest that applies first:
 *
 *	two step ends of one run that has its allocation groups: a read of
 *	the groups (a few thousand rows) gives everything;
 *
 *	two step ends of one run without them (still being recorded): the
 *	blocks that differ are those in the ranges of the allocations_run_step
 *	and allocations_crossing indexes between the two steps (DIFF_RANGE);
 *	only the live bytes at A and B need a pass over the run;
 *
 *	else each side's live blocks are read into an array sorted by (device,
 *	address, bytes), or by row id within one run, and a merge pairs the
 *	blocks live at both; what is left over is new or gone.
 *
 * The TUI pages through the blocks that differ (query_diff_blocks) with the
 * same DIFF_RANGE.
 */
#include "config.h"

#include "query-int.h"

#include <sys/stat.h>

#include <stdlib.h>
#include <string.h>

/*
 * The SQL condition that a row (allocation or group) is live at the end of
 * step `s`, a parameter: made by then (no step: step 1), not freed by then.
 */
#define LIVE_AT(s) " coalesce(alloc_step, 1) <= " s " AND (free_step IS" \
	" NULL OR free_step > " s ")"

struct dblk {
	int64_t		 id;		/* 0 when pairing by address */
	int32_t		 device;
	uint64_t	 stream;
	uint64_t	 address;
	int64_t		 bytes;
	int64_t		 site_id;
};

struct dside {
	struct dblk	*b;
	size_t		 n;
};

static int
cmp_block(const void *x, const void *y)
{
	const struct dblk	*a = x, *b = y;

	if (a->id != b->id)
		return (a->id < b->id ? -1 : 1);
	if (a->device != b->device)
		return (a->device < b->device ? -1 : 1);
	if (a->address != b->address)
		return (a->address < b->address ? -1 : 1);
	return ((a->bytes > b->bytes) - (a->bytes < b->bytes));
}

static int
cmp_site(const void *x, const void *y)
{
	const struct dblk	*a = x, *b = y;

	if (a->site_id != b->site_id)
		return (a->site_id < b->site_id ? -1 : 1);
	if (a->device != b->device)
		return (a->device < b->device ? -1 : 1);
	return ((a->stream > b->stream) - (a->stream < b->stream));
}

static int
step_exists(struct query *q, const struct diff_point *p)
{
	sqlite3_stmt	*st;
	int		 found;

	if ((st = query_prepare(q, "SELECT 1 FROM steps WHERE run_id = ?1"
	    " AND step = ?2", NULL)) == NULL)
		return (0);
	sqlite3_bind_int64(st, 1, p->run_id);
	sqlite3_bind_int64(st, 2, p->step);
	found = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return (found);
}

/* Load the blocks live at point p of q (checked). */
static int
load_side(struct query *q, struct diff_point *p, int layer, int by_id,
    struct dside *d, char **cause)
{
	sqlite3_stmt	*st;
	struct dblk	*b;
	size_t		 alloc = 0;
	int		 rc;

	st = query_prepare(q, "SELECT device, stream, address, bytes, site_id,"
	    " id FROM allocations WHERE run_id = ?1 AND layer = ?2 AND CASE"
	    " WHEN ?3 = 0 THEN free_ns IS NULL ELSE" LIVE_AT("?3") " END",
	    cause);
	if (st == NULL)
		return (-1);
	sqlite3_bind_int64(st, 1, p->run_id);
	sqlite3_bind_int(st, 2, layer);
	sqlite3_bind_int64(st, 3, p->step);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (d->n == alloc) {
			alloc = alloc == 0 ? 1024 : 2 * alloc;
			d->b = xreallocarray(d->b, alloc, sizeof *d->b);
		}
		b = &d->b[d->n++];
		b->device = query_column_int(st, 0);
		b->stream = query_column_u64(st, 1);
		b->address = (uint64_t)sqlite3_column_int64(st, 2);
		b->bytes = sqlite3_column_int64(st, 3);
		b->site_id = query_column_int(st, 4);
		b->id = by_id ? sqlite3_column_int64(st, 5) : 0;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return (query_fail(q, cause));
	util_sort(d->b, d->n, sizeof *d->b, cmp_block);
	return (0);
}

/*
 * Name group g by its site in q: its label and the name people know it
 * by, the key groups are merged by (none without a stack).  0, or -1.
 */
static int
group_name(struct query *q, struct diff_group *g, char **cause)
{
	if (g->site_id < 0)
		return (0);
	return (query_site_name(q, g->site_id, &g->site, &g->name, cause));
}

/*
 * Append the groups of blocks v[0..n) (summed per site, device, stream) to
 * r, as new (is_new) or gone, with their names from q.  0, or -1.
 */
static int
add_groups(struct query *q, struct diff_report *r, struct dblk *v, size_t n,
    int is_new, char **cause)
{
	struct diff_group	*g = NULL;
	size_t			 i;

	util_sort(v, n, sizeof *v, cmp_site);
	for (i = 0; i < n; i++) {
		if (i == 0 || cmp_site(&v[i - 1], &v[i]) != 0) {
			r->groups = xreallocarray(r->groups, r->ngroups + 1,
			    sizeof *r->groups);
			g = &r->groups[r->ngroups++];
			memset(g, 0, sizeof *g);
			g->site_id = v[i].site_id;
			g->device = v[i].device;
			g->stream = v[i].stream;
			if (group_name(q, g, cause) != 0)
				return (-1);
		}
		if (is_new) {
			g->new_bytes += v[i].bytes;
			g->new_blocks++;
		} else {
			g->gone_bytes += v[i].bytes;
			g->gone_blocks++;
		}
	}
	return (0);
}

static int
cmp_group_key(const void *x, const void *y)
{
	const struct diff_group	*a = x, *b = y;
	int			 c;

	c = strcmp(a->name != NULL ? a->name : "", b->name != NULL ? b->name :
	    "");
	if (c != 0)
		return (c);
	if (a->device != b->device)
		return (a->device < b->device ? -1 : 1);
	return ((a->stream > b->stream) - (a->stream < b->stream));
}

static int64_t
net_size(const struct diff_group *g)
{
	int64_t	net = g->new_bytes - g->gone_bytes;

	return (net < 0 ? -net : net);
}

static int
cmp_group_size(const void *x, const void *y)
{
	int64_t	a = net_size(x), b = net_size(y);

	if (a != b)
		return ((a < b) - (a > b));
	return (cmp_group_key(x, y));
}

/* Merge the new and gone groups of one name, device and stream. */
static void
merge_groups(struct diff_report *r)
{
	struct diff_group	*g, *last;
	size_t			 i, n = 0;

	util_sort(r->groups, r->ngroups, sizeof *r->groups, cmp_group_key);
	for (i = 0; i < r->ngroups; i++) {
		g = &r->groups[i];
		last = n > 0 ? &r->groups[n - 1] : NULL;
		if (last != NULL && cmp_group_key(last, g) == 0) {
			last->new_bytes += g->new_bytes;
			last->new_blocks += g->new_blocks;
			last->gone_bytes += g->gone_bytes;
			last->gone_blocks += g->gone_blocks;
			free(g->site);
			free(g->name);
		} else
			r->groups[n++] = *g;
	}
	r->ngroups = n;
	util_sort(r->groups, r->ngroups, sizeof *r->groups, cmp_group_size);
}

/*
 * Split the two sorted sides into the blocks only B has (into a->b's
 * front, returned in *nb_new) and those only A has (*na_gone).
 */
static void
pair_blocks(struct dside *a, struct dside *b, size_t *na_gone,
    size_t *nb_new)
{
	size_t	i = 0, j = 0, ga = 0, nb = 0;
	int	c;

	while (i < a->n || j < b->n) {
		c = i == a->n ? 1 : j == b->n ? -1 : cmp_block(&a->b[i],
		    &b->b[j]);
		if (c == 0) {
			i++;
			j++;
		} else if (c < 0)
			a->b[ga++] = a->b[i++];
		else
			b->b[nb++] = b->b[j++];
	}
	*na_gone = ga;
	*nb_new = nb;
}

static int64_t
sum_bytes(const struct dside *d)
{
	int64_t	sum = 0;
	size_t	i;

	for (i = 0; i < d->n; i++)
		sum += d->b[i].bytes;
	return (sum);
}

/* Are qa and qb the same database file? */
static int
same_file(struct query *qa, struct query *qb)
{
	struct stat	sa, sb;

	if (qa == qb)
		return (1);
	if (stat(qa->path, &sa) != 0 || stat(qb->path, &sb) != 0)
		return (0);
	return (sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino);
}

/*
 * The blocks of run ?1 in layer ?4 that are live at the end of one of the
 * steps ?2 < ?3 and not of the other: "appeared" are live at ?3 only.  The
 * ones that appeared come from the range of the allocations_run_step index
 * between the steps, the others from the allocations_crossing index, which
 * holds only the blocks that outlive their step (the WHERE term must match
 * the index's to use it).  ?5 is 1 when A is the later step, so that
 * is_new (live at B only) is "appeared" turned round.
 */
#define DIFF_RANGE \
	"SELECT id, appeared <> ?5 AS is_new, device, stream, layer, bytes," \
	" alloc_step, free_step, site_id FROM (" \
	" SELECT *, 1 AS appeared FROM allocations WHERE run_id = ?1" \
	"  AND layer = ?4 AND alloc_step > ?2" \
	"  AND alloc_step <= ?3 AND (free_step IS NULL OR free_step > ?3)" \
	" UNION ALL" \
	" SELECT *, 0 FROM allocations WHERE run_id = ?1" \
	"  AND layer = ?4 AND free_step > coalesce(alloc_step, 1)" \
	"  AND free_step > ?2 AND free_step <= ?3" \
	"  AND coalesce(alloc_step, 1) <= ?2)"

/* Prepare sql, which holds DIFF_RANGE, for steps a and b of run_id. */
static sqlite3_stmt *
range_prepare(struct query *q, const char *sql, int64_t run_id, int64_t a,
    int64_t b, int layer, char **cause)
{
	sqlite3_stmt	*st;

	if ((st = query_prepare(q, sql, cause)) == NULL)
		return (NULL);
	sqlite3_bind_int64(st, 1, run_id);
	sqlite3_bind_int64(st, 2, a < b ? a : b);
	sqlite3_bind_int64(st, 3, a < b ? b : a);
	sqlite3_bind_int(st, 4, layer);
	sqlite3_bind_int(st, 5, a > b);
	return (st);
}

/*
 * Prepare sql for two step ends of one run as r has them: ?1 the run, ?2
 * step A, ?3 step B, ?4 the layer.
 */
static sqlite3_stmt *
steps_prepare(struct query *q, const struct diff_report *r, const char *sql,
    char **cause)
{
	sqlite3_stmt	*st;

	if ((st = query_prepare(q, sql, cause)) == NULL)
		return (NULL);
	sqlite3_bind_int64(st, 1, r->a.run_id);
	sqlite3_bind_int64(st, 2, r->a.step);
	sqlite3_bind_int64(st, 3, r->b.step);
	sqlite3_bind_int(st, 4, r->layer);
	return (st);
}

/*
 * Add the rows of st to r: per (site_id, device, stream), the new bytes
 * and blocks and the gone bytes and blocks, then (with `live`) the bytes
 * live at A and at B.  The totals always; the groups, with their labels,
 * when `what` asks.  0, or -1.
 */
static int
groups_read(struct query *q, struct diff_report *r, sqlite3_stmt *st,
    int live, unsigned int what, char **cause)
{
	struct diff_group	*g;
	int			 rc;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (live) {
			r->a_bytes += sqlite3_column_int64(st, 7);
			r->b_bytes += sqlite3_column_int64(st, 8);
		}
		if (sqlite3_column_int64(st, 4) == 0 &&
		    sqlite3_column_int64(st, 6) == 0)
			continue;
		r->new_bytes += sqlite3_column_int64(st, 3);
		r->new_blocks += sqlite3_column_int64(st, 4);
		r->gone_bytes += sqlite3_column_int64(st, 5);
		r->gone_blocks += sqlite3_column_int64(st, 6);
		if (~what & QUERY_DIFF_GROUPS)
			continue;
		r->groups = xreallocarray(r->groups, r->ngroups + 1,
		    sizeof *r->groups);
		g = &r->groups[r->ngroups++];
		memset(g, 0, sizeof *g);
		g->site_id = query_column_int(st, 0);
		g->device = query_column_int(st, 1);
		g->stream = query_column_u64(st, 2);
		g->new_bytes = sqlite3_column_int64(st, 3);
		g->new_blocks = sqlite3_column_int64(st, 4);
		g->gone_bytes = sqlite3_column_int64(st, 5);
		g->gone_blocks = sqlite3_column_int64(st, 6);
		if (group_name(q, g, cause) != 0) {
			sqlite3_finalize(st);
			return (-1);
		}
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return (query_fail(q, cause));
	merge_groups(r);
	return (0);
}

/*
 * Fill r (points resolved and checked, layer set) from the allocation
 * groups of its run: a group is live at step S when it was made by S
 * (no step: step 1, as the rows count it) and not freed by S.  0, or -1.
 */
static int
diff_from_groups(struct query *q, struct diff_report *r, unsigned int what,
    char **cause)
{
	sqlite3_stmt	*st;

	st = steps_prepare(q, r, "SELECT site_id, device, stream,"
	    " sum(CASE WHEN lb AND NOT la THEN bytes ELSE 0 END),"
	    " sum(CASE WHEN lb AND NOT la THEN blocks ELSE 0 END),"
	    " sum(CASE WHEN la AND NOT lb THEN bytes ELSE 0 END),"
	    " sum(CASE WHEN la AND NOT lb THEN blocks ELSE 0 END),"
	    " sum(CASE WHEN la THEN bytes ELSE 0 END),"
	    " sum(CASE WHEN lb THEN bytes ELSE 0 END) FROM (SELECT *,"
	    LIVE_AT("?2") " AS la," LIVE_AT("?3") " AS lb FROM"
	    " allocation_groups WHERE run_id = ?1 AND layer = ?4)"
	    " GROUP BY site_id, device, stream", cause);
	if (st == NULL)
		return (-1);
	return (groups_read(q, r, st, 1, what, cause));
}

/*
 * Fill r (points resolved and checked, layer set, two steps of one run)
 * from the blocks that differ (DIFF_RANGE) and, when `what` asks, the live
 * bytes at A and B from a pass over the run.  0, or -1.
 */
static int
diff_from_range(struct query *q, struct diff_report *r, unsigned int what,
    char **cause)
{
	sqlite3_stmt	*st;
	int		 rc;

	st = range_prepare(q, "SELECT site_id, device, stream,"
	    " sum(CASE WHEN is_new THEN bytes ELSE 0 END), sum(is_new),"
	    " sum(CASE WHEN is_new THEN 0 ELSE bytes END), sum(NOT is_new)"
	    " FROM (" DIFF_RANGE ") GROUP BY site_id, device, stream",
	    r->a.run_id, r->a.step, r->b.step, r->layer, cause);
	if (st == NULL || groups_read(q, r, st, 0, what, cause) != 0)
		return (-1);
	if (~what & QUERY_DIFF_LIVE)
		return (0);
	st = steps_prepare(q, r, "SELECT coalesce(sum(CASE WHEN" LIVE_AT("?2")
	    " THEN bytes END), 0), coalesce(sum(CASE WHEN" LIVE_AT("?3")
	    " THEN bytes END), 0) FROM allocations WHERE run_id = ?1 AND"
	    " layer = ?4", cause);
	if (st == NULL)
		return (-1);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		r->a_bytes = sqlite3_column_int64(st, 0);
		r->b_bytes = sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW)
		return (query_fail(q, cause));
	return (0);
}

/*
 * Fill r (points resolved and checked, layer set) from the live blocks of
 * both sides, paired by row id within one run (one_run) or else by device,
 * address and size.  0, or -1.
 */
static int
diff_from_sides(struct query *qa, struct query *qb, struct diff_report *r,
    int one_run, unsigned int what, char **cause)
{
	struct dside	 da = { NULL, 0 }, db = { NULL, 0 };
	size_t		 na, nb, i;
	int		 rc = -1;

	if (load_side(qa, &r->a, r->layer, one_run, &da, cause) != 0 ||
	    load_side(qb, &r->b, r->layer, one_run, &db, cause) != 0)
		goto out;
	r->a_bytes = sum_bytes(&da);
	r->b_bytes = sum_bytes(&db);
	pair_blocks(&da, &db, &na, &nb);
	for (i = 0; i < nb; i++)
		r->new_bytes += db.b[i].bytes;
	for (i = 0; i < na; i++)
		r->gone_bytes += da.b[i].bytes;
	r->new_blocks = (int64_t)nb;
	r->gone_blocks = (int64_t)na;
	if (what & QUERY_DIFF_GROUPS) {
		if (add_groups(qb, r, db.b, nb, 1, cause) != 0 ||
		    add_groups(qa, r, da.b, na, 0, cause) != 0)
			goto out;
		merge_groups(r);
	}
	rc = 0;

out:
	free(da.b);
	free(db.b);
	return (rc);
}

/* Check point p of q (resolving run 0): its run and step exist. */
static int
check_point(struct query *q, struct diff_point *p, char **cause)
{
	struct query_run	run;
	int			rc;

	if (p->run_id == 0)
		p->run_id = query_latest_run(q);
	rc = query_run(q, p->run_id, 0, &run, cause);
	query_run_free(&run);
	if (rc != 0)
		return (-1);
	if (p->step != 0 && !step_exists(q, p)) {
		xasprintf(cause, "no step %lld in run %lld", (long long)p->step,
		    (long long)p->run_id);
		return (-1);
	}
	return (0);
}

/* Free a diff report; NULL is fine. */
void
query_diff_free(struct diff_report *r)
{
	size_t	i;

	if (r == NULL)
		return;
	for (i = 0; i < r->ngroups; i++) {
		free(r->groups[i].site);
		free(r->groups[i].name);
	}
	free(r->groups);
	free(r);
}

/*
 * Compare point a of qa with point b of qb (the same handle or two) in
 * `layer` (-1: the one B's run is analysed in).  `what` asks for the groups
 * per site and stream with their labels (QUERY_DIFF_GROUPS; else none) and
 * for the bytes live at A and B (QUERY_DIFF_LIVE; else UNKNOWN_INT); the
 * totals of what is new and gone are always there.  Returns 0 with *out
 * set (the caller frees it with query_diff_free), or -1 with *cause when
 * a run or a step does not exist or a database cannot be read.
 */
int
query_diff(struct query *qa, const struct diff_point *a,
    struct query *qb, const struct diff_point *b, int layer,
    unsigned int what, struct diff_report **out, char **cause)
{
	struct diff_report	*r;
	int			 one_run, steps, rc;

	r = xcalloc(1, sizeof *r);
	r->a = *a;
	r->b = *b;
	if (r->b.run_id == 0)
		r->b.run_id = query_latest_run(qb);
	r->layer = layer >= 0 ? layer : query_run_layer(qb, r->b.run_id);
	if (check_point(qa, &r->a, cause) != 0 ||
	    check_point(qb, &r->b, cause) != 0) {
		query_diff_free(r);
		return (-1);
	}
	one_run = r->a.run_id == r->b.run_id && same_file(qa, qb);
	steps = one_run && r->a.step != 0 && r->b.step != 0;
	if (steps && query_has_groups(qb, r->b.run_id))
		rc = diff_from_groups(qb, r, what, cause);
	else if (steps)
		rc = diff_from_range(qb, r, what, cause);
	else
		rc = diff_from_sides(qa, qb, r, one_run, what, cause);
	if (rc != 0) {
		query_diff_free(r);
		return (-1);
	}
	if (~what & QUERY_DIFF_LIVE)
		r->a_bytes = r->b_bytes = UNKNOWN_INT;
	*out = r;
	return (0);
}

/*
 * Fill rows[0..max) with the blocks of run run_id that are live at the end
 * of step a and not of step b (gone) or the other way round (new), in
 * `layer` (-1: the one the run is analysed in), largest first, after
 * skipping `offset` of them: the blocks query_diff() counts for the two
 * steps.  Both steps are 1 or more.  Returns the number of rows (0 past
 * the end), or -1 with *cause.  Sites are given by name
 * (query_site_shown), cut to a row's buffer.
 */
int
query_diff_blocks(struct query *q, int64_t run_id, int64_t a, int64_t b,
    int layer, int64_t offset, struct diff_block *rows, int max, char **cause)
{
	sqlite3_stmt	*st;
	char		*sql;
	int		 n = 0, rc = SQLITE_DONE;

	if (layer < 0)
		layer = query_run_layer(q, run_id);
	xasprintf(&sql, "SELECT d.*, %s FROM (" DIFF_RANGE ") d LEFT JOIN"
	    " sites s ON s.id = d.site_id ORDER BY d.bytes DESC, d.id"
	    " LIMIT ?6 OFFSET ?7", query_site_shown(q));
	st = range_prepare(q, sql, run_id, a, b, layer, cause);
	free(sql);
	if (st == NULL)
		return (-1);
	sqlite3_bind_int(st, 6, max);
	sqlite3_bind_int64(st, 7, offset);
	while (n < max && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		rows[n].id = sqlite3_column_int64(st, 0);
		rows[n].is_new = sqlite3_column_int(st, 1);
		rows[n].device = query_column_int(st, 2);
		rows[n].stream = query_column_u64(st, 3);
		rows[n].layer = sqlite3_column_int(st, 4);
		rows[n].bytes = sqlite3_column_int64(st, 5);
		rows[n].alloc_step = query_column_int(st, 6);
		rows[n].free_step = query_column_int(st, 7);
		rows[n].site_id = query_column_int(st, 8);
		query_column_copy(st, 9, rows[n].site, sizeof rows[n].site);
		n++;
	}
	if (n < max && rc != SQLITE_DONE) {
		query_fail(q, cause);
		sqlite3_finalize(st);
		return (-1);
	}
	sqlite3_finalize(st);
	return (n);
}
