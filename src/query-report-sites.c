/*
 * query-report-sites.c: the allocation sites that hold the report's layer
 * at the run's peak and at its end, with their stacks and their largest
 * blocks, for the page's icicle graph.
 *
 * At the peak instant T a block is live when it was made at or before T
 * (an unknown time counts as the run's first instant) and not freed by
 * then, the same rule the walk of query-report.c follows over the same
 * rows (the run's id range), so the sites' bytes at the peak add up to the
 * peak.  SQLite groups the live blocks by
 * site and numbers them by size; only the REPORT_SITE_BLOCKS largest of
 * each site come out, with the site's count and sum.  The REPORT_SITES
 * sites holding the most at either moment are kept, the rest summed in
 * other_sites and other_bytes.  Frames are stored once, by their id.
 */
#include "config.h"

#include "query-int.h"
#include "report.h"

#include <stdlib.h>
#include <string.h>

#include "unknown.h"

/* A site as the two moments' rows make it, before the cut. */
struct rs_site {
	int64_t			 site_id;
	int64_t			 bytes[REPORT_AT_MAX];
	int64_t			 blocks[REPORT_AT_MAX];
	struct report_block	*blk[REPORT_AT_MAX];
	size_t			 nblk[REPORT_AT_MAX];
};

struct rs_list {
	struct rs_site	*v;
	size_t		 n;
};

/* A frame id and where it went in report.frames. */
struct rs_frame {
	int64_t		 id;
	size_t		 at;
};

struct rs_frames {
	struct rs_frame	*v;		/* by id */
	size_t		 n;
};

#define LIVE_AT_PEAK "coalesce(alloc_ns, ?4) <= ?5 AND (free_ns IS NULL" \
	" OR free_ns > ?5)"
#define LIVE_AT_END "free_ns IS NULL"

static size_t
lane_of(const struct report *r, int64_t process_id, int32_t device)
{
	size_t	i;

	for (i = 0; i < r->nlanes; i++) {
		if (r->lanes[i].process_id == process_id &&
		    r->lanes[i].device == device)
			return (i);
	}
	return (0);
}

/* Read the sites holding the layer at one moment, by site id. */
static int
sites_read(struct query *q, const struct report *r, enum report_at at,
    struct rs_list *out, char **cause)
{
	sqlite3_stmt		*st;
	struct rs_site		*s = NULL;
	struct report_block	*b;
	char			*sql;
	int64_t			 site;
	uint64_t		 t0 = r->t0_ns != UNKNOWN_U64 ? r->t0_ns : 0;
	int			 rc;

	xasprintf(&sql, "SELECT coalesce(site_id, 0), n, total, process_id,"
	    " device, stream, address, bytes, alloc_step, alloc_ns FROM"
	    " (SELECT site_id, process_id, device, stream, address, bytes,"
	    " alloc_step, alloc_ns, row_number() OVER (PARTITION BY site_id"
	    " ORDER BY bytes DESC, id) AS k, count(*) OVER (PARTITION BY"
	    " site_id) AS n, sum(bytes) OVER (PARTITION BY site_id) AS total"
	    " FROM allocations WHERE %s AND layer = ?2 AND " QUERY_PEAK_ROWS
	    " AND %s) WHERE k <= ?3 ORDER BY 1, k", at == REPORT_AT_PEAK ?
	    "id BETWEEN ?6 AND ?7 AND +run_id = ?1" : "run_id = ?1",
	    at == REPORT_AT_PEAK ? LIVE_AT_PEAK : LIVE_AT_END);
	st = query_prepare(q, sql, cause);
	free(sql);
	if (st == NULL)
		return (-1);
	sqlite3_bind_int64(st, 1, r->run_id);
	sqlite3_bind_int(st, 2, r->layer);
	sqlite3_bind_int(st, 3, REPORT_SITE_BLOCKS);
	sqlite3_bind_int64(st, 4, (int64_t)t0);
	sqlite3_bind_int64(st, 5, (int64_t)(t0 + r->peak.ns));
	sqlite3_bind_int64(st, 6, r->first_id);
	sqlite3_bind_int64(st, 7, r->last_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		site = sqlite3_column_int64(st, 0);
		if (s == NULL || s->site_id != site) {
			out->v = xreallocarray(out->v, out->n + 1,
			    sizeof *out->v);
			s = &out->v[out->n++];
			memset(s, 0, sizeof *s);
			s->site_id = site;
			s->blocks[at] = sqlite3_column_int64(st, 1);
			s->bytes[at] = sqlite3_column_int64(st, 2);
		}
		s->blk[at] = xreallocarray(s->blk[at], s->nblk[at] + 1,
		    sizeof *s->blk[at]);
		b = &s->blk[at][s->nblk[at]++];
		b->lane = lane_of(r, sqlite3_column_int64(st, 3),
		    query_column_int(st, 4));
		b->stream = query_column_u64(st, 5);
		b->address = (uint64_t)sqlite3_column_int64(st, 6);
		b->bytes = sqlite3_column_int64(st, 7);
		b->alloc_step = query_column_int(st, 8);
		if ((b->alloc_ns = query_column_u64(st, 9)) != UNKNOWN_U64)
			b->alloc_ns -= t0;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return (query_fail(q, cause));
	return (0);
}

/* Join two lists sorted by site id into *a; b is emptied. */
static void
sites_merge(struct rs_list *a, struct rs_list *b, enum report_at bat)
{
	struct rs_list	 m = { NULL, 0 };
	size_t		 i = 0, j = 0;

	m.v = xreallocarray(NULL, a->n + b->n + 1, sizeof *m.v);
	while (i < a->n || j < b->n) {
		if (j == b->n || (i < a->n && a->v[i].site_id <
		    b->v[j].site_id))
			m.v[m.n++] = a->v[i++];
		else if (i == a->n || b->v[j].site_id < a->v[i].site_id)
			m.v[m.n++] = b->v[j++];
		else {
			m.v[m.n] = a->v[i++];
			m.v[m.n].bytes[bat] = b->v[j].bytes[bat];
			m.v[m.n].blocks[bat] = b->v[j].blocks[bat];
			m.v[m.n].blk[bat] = b->v[j].blk[bat];
			m.v[m.n++].nblk[bat] = b->v[j++].nblk[bat];
		}
	}
	free(a->v);
	free(b->v);
	*a = m;
	b->v = NULL;
	b->n = 0;
}

static int
cmp_held(const void *x, const void *y)
{
	const struct rs_site	*a = x, *b = y;
	int64_t			 ma, mb;

	ma = a->bytes[0] > a->bytes[1] ? a->bytes[0] : a->bytes[1];
	mb = b->bytes[0] > b->bytes[1] ? b->bytes[0] : b->bytes[1];
	if (ma != mb)
		return (ma > mb ? -1 : 1);
	return ((a->site_id > b->site_id) - (a->site_id < b->site_id));
}

/* Where frame id went in report.frames, adding it when new. */
static size_t
frame_get(struct report *r, struct rs_frames *fs, sqlite3_stmt *st)
{
	int64_t			 id = sqlite3_column_int64(st, 0);
	size_t			 lo = 0, hi = fs->n, mid;
	struct report_frame	*f;
	const unsigned char	*text;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (fs->v[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < fs->n && fs->v[lo].id == id)
		return (fs->v[lo].at);
	fs->v = xreallocarray(fs->v, fs->n + 1, sizeof *fs->v);
	memmove(&fs->v[lo + 1], &fs->v[lo], (fs->n - lo) * sizeof *fs->v);
	fs->v[lo].id = id;
	fs->v[lo].at = r->nframes;
	fs->n++;
	r->frames = xreallocarray(r->frames, r->nframes + 1,
	    sizeof *r->frames);
	f = &r->frames[r->nframes];
	text = sqlite3_column_text(st, 1);
	f->name = xstrdup(text != NULL ? (const char *)text : "");
	text = sqlite3_column_text(st, 2);
	f->filename = xstrdup(text != NULL ? (const char *)text : "");
	f->line = sqlite3_column_int64(st, 3);
	return (r->nframes++);
}

/* Fill a kept site's label and frames, outermost first. */
static int
site_stack(struct query *q, struct report *r, struct report_site *s,
    struct rs_frames *fs, sqlite3_stmt *st, char **cause)
{
	int	rc;

	if (s->site_id == 0)
		return (0);
	if (query_site_label(q, s->site_id, &s->label, cause) != 0)
		return (-1);
	sqlite3_reset(st);
	sqlite3_bind_int64(st, 1, s->site_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		s->frames = xreallocarray(s->frames, s->nframes + 1,
		    sizeof *s->frames);
		s->frames[s->nframes++] = frame_get(r, fs, st);
	}
	if (rc != SQLITE_DONE)
		return (query_fail(q, cause));
	return (0);
}

/* Keep the sites that hold the most, with their blocks and stacks. */
static int
sites_keep(struct query *q, struct report *r, struct rs_list *l,
    char **cause)
{
	struct rs_frames	 fs = { NULL, 0 };
	struct report_site	*s;
	sqlite3_stmt		*st;
	size_t			 i, j, keep;
	int			 at, rc = 0;

	util_sort(l->v, l->n, sizeof *l->v, cmp_held);
	keep = l->n < REPORT_SITES ? l->n : REPORT_SITES;
	r->sites = xcalloc(keep + 1, sizeof *r->sites);
	for (i = 0; i < l->n; i++) {
		for (at = 0; at < REPORT_AT_MAX; at++) {
			if (i >= keep) {
				r->other_sites[at] += l->v[i].bytes[at] > 0;
				r->other_bytes[at] += l->v[i].bytes[at];
				continue;
			}
			r->blocks[at] = xreallocarray(r->blocks[at],
			    r->nblocks[at] + l->v[i].nblk[at] + 1,
			    sizeof *r->blocks[at]);
			for (j = 0; j < l->v[i].nblk[at]; j++) {
				l->v[i].blk[at][j].site = i;
				r->blocks[at][r->nblocks[at]++] =
				    l->v[i].blk[at][j];
			}
		}
		if (i >= keep)
			continue;
		s = &r->sites[r->nsites++];
		s->site_id = l->v[i].site_id;
		memcpy(s->bytes, l->v[i].bytes, sizeof s->bytes);
		memcpy(s->blocks, l->v[i].blocks, sizeof s->blocks);
	}
	st = query_prepare(q, "SELECT f.id, f.name, f.filename, f.line FROM"
	    " site_frames sf JOIN frames f ON f.id = sf.frame_id WHERE"
	    " sf.site_id = ?1 ORDER BY sf.depth DESC", cause);
	if (st == NULL)
		return (-1);
	for (i = 0; rc == 0 && i < r->nsites; i++)
		rc = site_stack(q, r, &r->sites[i], &fs, st, cause);
	sqlite3_finalize(st);
	free(fs.v);
	return (rc);
}

/*
 * Fill r's frames, sites and blocks: the sites holding r->layer on the
 * lanes of r's peak (the devices'; every lane for the host layer) at r's
 * peak and at the end of the run (report.h).  Call it once, after
 * query_report.  0, or -1 with *cause.
 */
int
query_report_sites(struct query *q, struct report *r, char **cause)
{
	struct rs_list	 l[REPORT_AT_MAX];
	size_t		 i;
	int		 at, rc = -1;

	memset(l, 0, sizeof l);
	for (at = 0; at < REPORT_AT_MAX; at++) {
		if (at == REPORT_AT_PEAK && r->peak.ns == UNKNOWN_U64)
			continue;
		if (sites_read(q, r, at, &l[at], cause) != 0)
			goto out;
	}
	sites_merge(&l[REPORT_AT_PEAK], &l[REPORT_AT_END], REPORT_AT_END);
	rc = sites_keep(q, r, &l[REPORT_AT_PEAK], cause);
out:
	for (at = 0; at < REPORT_AT_MAX; at++) {
		for (i = 0; i < l[at].n; i++) {
			free(l[at].v[i].blk[REPORT_AT_PEAK]);
			free(l[at].v[i].blk[REPORT_AT_END]);
		}
		free(l[at].v);
	}
	return (rc);
}
