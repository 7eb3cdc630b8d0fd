/*
 * query-diff.c: the block-level difference between two points.
 *
 * A point is a step end of a run or the end of a run.  Each side's live
 * blocks are read into an array sorted by (device, address, bytes), or by
 * row id when both points are in one run of one file, where a block is its
 * row (a block freed and made again at the same address is gone and new);
 * a merge pairs the blocks that are live at both points, and what is left
 * over is
 * new (only at B) or gone (only at A).  Those are summed per (site, device,
 * stream) on each side; as site ids belong to one database, the groups of
 * the two sides are then matched by the site's label.
 */
#include "config.h"

#include "query-int.h"

#include <sys/stat.h>

#include <stdlib.h>
#include <string.h>

#include "analysis.h"

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
	    " id FROM allocations WHERE run_id = ?1 AND layer = ?2 AND CASE WHEN"
	    " ?3 = 0 THEN free_ns IS NULL ELSE coalesce(alloc_step, 1) <= ?3"
	    " AND (free_step IS NULL OR free_step > ?3) END", cause);
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
		b->site_id = sqlite3_column_int64(st, 4);
		b->id = by_id ? sqlite3_column_int64(st, 5) : 0;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return (query_fail(q, cause));
	util_sort(d->b, d->n, sizeof *d->b, cmp_block);
	return (0);
}

/*
 * Append the groups of blocks v[0..n) (summed per site, device, stream) to
 * r, as new (is_new) or gone, with labels from q.  0, or -1.
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
			if (g->site_id != 0 && query_site_label(q, g->site_id,
			    &g->site, cause) != 0)
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

	c = strcmp(a->site != NULL ? a->site : "", b->site != NULL ? b->site :
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

/* Merge the new and gone groups of one label, device and stream. */
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
 * Fill r (points resolved and checked, layer set) from the allocation
 * groups of its run: a group is live at step S when it was made by S
 * (no step: step 1, as the rows count it) and not freed by S.  0, or -1.
 */
static int
diff_from_groups(struct query *q, struct diff_report *r, char **cause)
{
	struct diff_group	*g;
	sqlite3_stmt		*st;
	int			 rc;

	st = query_prepare(q, "SELECT site_id, device, stream,"
	    " sum(CASE WHEN lb AND NOT la THEN bytes ELSE 0 END),"
	    " sum(CASE WHEN lb AND NOT la THEN blocks ELSE 0 END),"
	    " sum(CASE WHEN la AND NOT lb THEN bytes ELSE 0 END),"
	    " sum(CASE WHEN la AND NOT lb THEN blocks ELSE 0 END),"
	    " sum(CASE WHEN la THEN bytes ELSE 0 END),"
	    " sum(CASE WHEN lb THEN bytes ELSE 0 END) FROM (SELECT *,"
	    " coalesce(alloc_step, 1) <= ?2 AND (free_step IS NULL OR"
	    " free_step > ?2) AS la, coalesce(alloc_step, 1) <= ?3 AND"
	    " (free_step IS NULL OR free_step > ?3) AS lb FROM"
	    " allocation_groups WHERE run_id = ?1 AND layer = ?4)"
	    " GROUP BY site_id, device, stream", cause);
	if (st == NULL)
		return (-1);
	sqlite3_bind_int64(st, 1, r->a.run_id);
	sqlite3_bind_int64(st, 2, r->a.step);
	sqlite3_bind_int64(st, 3, r->b.step);
	sqlite3_bind_int(st, 4, r->layer);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		r->a_bytes += sqlite3_column_int64(st, 7);
		r->b_bytes += sqlite3_column_int64(st, 8);
		if (sqlite3_column_int64(st, 4) == 0 &&
		    sqlite3_column_int64(st, 6) == 0)
			continue;
		r->groups = xreallocarray(r->groups, r->ngroups + 1,
		    sizeof *r->groups);
		g = &r->groups[r->ngroups++];
		memset(g, 0, sizeof *g);
		g->site_id = sqlite3_column_int64(st, 0);
		g->device = query_column_int(st, 1);
		g->stream = query_column_u64(st, 2);
		g->new_bytes = sqlite3_column_int64(st, 3);
		g->new_blocks = sqlite3_column_int64(st, 4);
		g->gone_bytes = sqlite3_column_int64(st, 5);
		g->gone_blocks = sqlite3_column_int64(st, 6);
		r->new_bytes += g->new_bytes;
		r->new_blocks += g->new_blocks;
		r->gone_bytes += g->gone_bytes;
		r->gone_blocks += g->gone_blocks;
		if (g->site_id != 0 && query_site_label(q, g->site_id,
		    &g->site, cause) != 0) {
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
diff_report_free(struct diff_report *r)
{
	size_t	i;

	if (r == NULL)
		return;
	for (i = 0; i < r->ngroups; i++)
		free(r->groups[i].site);
	free(r->groups);
	free(r);
}

/*
 * Compare point a of qa with point b of qb (the same handle or two) in
 * `layer` (-1: what B's run would be analysed in).  Returns 0 with *out set
 * (the caller frees it with diff_report_free), or -1 with *cause when a run
 * or a step does not exist or a database cannot be read.
 */
int
analysis_diff(struct query *qa, const struct diff_point *a,
    struct query *qb, const struct diff_point *b, int layer,
    struct diff_report **out, char **cause)
{
	struct diff_report	*r;
	struct dside		 da = { NULL, 0 }, db = { NULL, 0 };
	size_t			 na, nb, i;
	int			 one_run;

	r = xcalloc(1, sizeof *r);
	r->a = *a;
	r->b = *b;
	if (r->b.run_id == 0)
		r->b.run_id = query_latest_run(qb);
	r->layer = layer >= 0 ? layer : query_run_layer(qb, r->b.run_id);
	if (check_point(qa, &r->a, cause) != 0 ||
	    check_point(qb, &r->b, cause) != 0)
		goto fail;
	one_run = r->a.run_id == r->b.run_id && same_file(qa, qb);
	if (one_run && r->a.step != 0 && r->b.step != 0 &&
	    query_has_groups(qb, r->b.run_id)) {
		if (diff_from_groups(qb, r, cause) != 0)
			goto fail;
		*out = r;
		return (0);
	}
	if (load_side(qa, &r->a, r->layer, one_run, &da, cause) != 0 ||
	    load_side(qb, &r->b, r->layer, one_run, &db, cause) != 0)
		goto fail;
	r->a_bytes = sum_bytes(&da);
	r->b_bytes = sum_bytes(&db);
	pair_blocks(&da, &db, &na, &nb);
	for (i = 0; i < nb; i++)
		r->new_bytes += db.b[i].bytes;
	for (i = 0; i < na; i++)
		r->gone_bytes += da.b[i].bytes;
	r->new_blocks = (int64_t)nb;
	r->gone_blocks = (int64_t)na;
	if (add_groups(qb, r, db.b, nb, 1, cause) != 0 ||
	    add_groups(qa, r, da.b, na, 0, cause) != 0)
		goto fail;
	merge_groups(r);
	free(da.b);
	free(db.b);
	*out = r;
	return (0);

fail:
	free(da.b);
	free(db.b);
	diff_report_free(r);
	return (-1);
}
