/*
 * query-diff.c: the block-level difference between two points.
 *
 * A point is a step end of a run or the end of a run.  Each side's live
 * blocks are read into an array sorted by (device, address, bytes); a merge
 * pairs the blocks that are live at both points, and what is left over is
 * new (only at B) or gone (only at A).  Those are summed per (site, device,
 * stream) on each side; as site ids belong to one database, the groups of
 * the two sides are then matched by the site's label.
 */
#include "config.h"

#include "query-int.h"

#include <stdlib.h>
#include <string.h>

#include "analysis.h"

struct dblk {
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

/* Check point p of q (resolving run 0) and load its live blocks. */
static int
load_side(struct query *q, struct diff_point *p, int layer, struct dside *d,
    char **cause)
{
	sqlite3_stmt	*st;
	struct dblk	*b;
	char		*source = NULL;
	size_t		 alloc = 0;
	int		 rc;

	if (p->run_id == 0)
		p->run_id = query_latest_run(q);
	if (query_run_source(q, p->run_id, &source, cause) != 0)
		return (-1);
	free(source);
	if (p->step != 0 && !step_exists(q, p)) {
		xasprintf(cause, "no step %lld in run %lld", (long long)p->step,
		    (long long)p->run_id);
		return (-1);
	}
	st = query_prepare(q, "SELECT device, stream, address, bytes, site_id"
	    " FROM allocations WHERE run_id = ?1 AND layer = ?2 AND CASE WHEN"
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
		b->device = sqlite3_column_type(st, 0) == SQLITE_NULL ? -1 :
		    sqlite3_column_int(st, 0);
		b->stream = sqlite3_column_type(st, 1) == SQLITE_NULL ?
		    EVENT_NONE : (uint64_t)sqlite3_column_int64(st, 1);
		b->address = (uint64_t)sqlite3_column_int64(st, 2);
		b->bytes = sqlite3_column_int64(st, 3);
		b->site_id = sqlite3_column_int64(st, 4);
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

	return ((a < b) - (a > b));
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

	r = xcalloc(1, sizeof *r);
	r->a = *a;
	r->b = *b;
	if (r->b.run_id == 0)
		r->b.run_id = query_latest_run(qb);
	r->layer = layer >= 0 ? layer : query_run_layer(qb, r->b.run_id);
	if (load_side(qa, &r->a, r->layer, &da, cause) != 0 ||
	    load_side(qb, &r->b, r->layer, &db, cause) != 0)
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
