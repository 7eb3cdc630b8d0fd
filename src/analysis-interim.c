/*
 * analysis-interim.c: a plain implementation of analysis.h that lets the
 * TUI run and be tested before the analysis engine lands on main.  It
 * goes away, whole, when main brings the real one; nothing else may come
 * to depend on it.
 *
 * It reads the step_growth and stream_growth views for the analysed layer
 * (the highest of block, pool, segment that has rows), takes the median of
 * pairwise slopes after the warm-up steps, and calls a side stream (not
 * the lowest stream of its device) GARBAGE growing when its slope is over
 * the threshold, destroyed when it was destroyed with live bytes.
 */
#include "config.h"

#include "query-int.h"
#include "analysis.h"

#include <stdlib.h>
#include <string.h>

static int
interim_error(struct query *q, char **cause)
{
	xasprintf(cause, "%s: %s", q->path, sqlite3_errmsg(q->db));
	return (-1);
}

static int
interim_cmp(const void *a, const void *b)
{
	double	x = *(const double *)a, y = *(const double *)b;

	return (x < y ? -1 : x > y);
}

/* Median pairwise slope and the fraction of steps that grew. */
static void
interim_slope(const int64_t *v, size_t n, size_t warmup, double *slope,
    double *grew)
{
	double	*s;
	size_t	 i, j, k = 0, up = 0;

	*slope = *grew = 0;
	if (n < warmup + 2)
		return;
	s = xcalloc((n - warmup) * (n - warmup), sizeof *s);
	for (i = warmup; i < n; i++) {
		if (i > warmup && v[i] > v[i - 1])
			up++;
		for (j = i + 1; j < n; j++)
			s[k++] = (double)(v[j] - v[i]) / (double)(j - i);
	}
	qsort(s, k, sizeof *s, interim_cmp);
	*slope = k % 2 ? s[k / 2] : (s[k / 2 - 1] + s[k / 2]) / 2;
	*grew = (double)up / (double)(n - warmup - 1);
	free(s);
}

static int
interim_layer(struct query *q, int64_t run)
{
	char	sql[160];
	int	layer;

	for (layer = 2; layer >= 0; layer--) {
		snprintf(sql, sizeof sql, "SELECT EXISTS(SELECT 1 FROM"
		    " allocations WHERE run_id = %lld AND layer = %d)",
		    (long long)run, layer);
		if (query_int(q, sql) == 1)
			return (layer);
	}
	return (2);
}

static int
interim_steps(struct query *q, struct leak_report *r, char **cause)
{
	sqlite3_stmt	*st;
	struct leak_step *s;
	int		 rc;

	st = query_prepare(q, "SELECT s.step, s.end_ns, coalesce(g.live_bytes,"
	    " 0) FROM steps s LEFT JOIN step_growth g ON g.run_id = s.run_id"
	    " AND g.step = s.step AND g.layer = ?2 WHERE s.run_id = ?1"
	    " ORDER BY s.step", cause);
	if (st == NULL)
		return (-1);
	sqlite3_bind_int64(st, 1, r->run_id);
	sqlite3_bind_int(st, 2, r->layer);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		r->steps = xreallocarray(r->steps, r->nsteps + 1,
		    sizeof *r->steps);
		s = &r->steps[r->nsteps];
		s->step = sqlite3_column_int64(st, 0);
		s->end_ns = (uint64_t)sqlite3_column_int64(st, 1);
		s->live_bytes = sqlite3_column_int64(st, 2);
		s->delta_bytes = r->nsteps == 0 ? 0 :
		    s->live_bytes - s[-1].live_bytes;
		if (s->live_bytes > r->peak_bytes)
			r->peak_bytes = s->live_bytes;
		r->nsteps++;
	}
	sqlite3_finalize(st);
	return (rc == SQLITE_DONE ? 0 : interim_error(q, cause));
}

static struct leak_stream *
interim_stream(struct leak_report *r, int32_t device, uint64_t stream)
{
	struct leak_stream	*s;
	size_t			 i;

	for (i = 0; i < r->nstreams; i++) {
		s = &r->streams[i];
		if (s->device == device && s->stream == stream)
			return (s);
	}
	r->streams = xreallocarray(r->streams, r->nstreams + 1,
	    sizeof *r->streams);
	s = &r->streams[r->nstreams++];
	memset(s, 0, sizeof *s);
	s->device = device;
	s->stream = stream;
	s->live_per_step = xcalloc(r->nsteps + 1, sizeof *s->live_per_step);
	return (s);
}

static int
interim_streams(struct query *q, struct leak_report *r, char **cause)
{
	sqlite3_stmt		*st;
	struct leak_stream	*s;
	int32_t			 dev;
	uint64_t		 id;
	size_t			 i;
	int64_t			 k;
	int			 rc;

	st = query_prepare(q, "SELECT coalesce(device, -1), stream, step,"
	    " live_bytes FROM stream_growth WHERE run_id = ?1 AND layer = ?2"
	    " UNION ALL SELECT coalesce(device, -1), stream, 0, NULL FROM"
	    " streams WHERE run_id = ?1", cause);
	if (st == NULL)
		return (-1);
	sqlite3_bind_int64(st, 1, r->run_id);
	sqlite3_bind_int(st, 2, r->layer);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		dev = sqlite3_column_int(st, 0);
		id = sqlite3_column_type(st, 1) == SQLITE_NULL ? EVENT_NONE :
		    (uint64_t)sqlite3_column_int64(st, 1);
		s = interim_stream(r, dev, id);
		for (i = 0; i < r->nsteps; i++) {
			if (r->steps[i].step == sqlite3_column_int64(st, 2))
				s->live_per_step[i] =
				    sqlite3_column_int64(st, 3);
		}
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return (interim_error(q, cause));

	st = query_prepare(q, "SELECT coalesce(device, -1), stream,"
	    " min(created_ns), max(destroyed_ns) FROM streams WHERE"
	    " run_id = ?1 GROUP BY 1, 2", cause);
	if (st == NULL)
		return (-1);
	sqlite3_bind_int64(st, 1, r->run_id);
	while (sqlite3_step(st) == SQLITE_ROW) {
		s = interim_stream(r, sqlite3_column_int(st, 0),
		    (uint64_t)sqlite3_column_int64(st, 1));
		s->created_ns = (uint64_t)sqlite3_column_int64(st, 2);
		s->destroyed_ns = (uint64_t)sqlite3_column_int64(st, 3);
	}
	sqlite3_finalize(st);

	st = query_prepare(q, "SELECT coalesce(device, -1), stream, count(*),"
	    " sum(bytes) FROM allocations WHERE run_id = ?1 AND layer = ?2"
	    " AND free_ns IS NULL GROUP BY 1, 2", cause);
	if (st == NULL)
		return (-1);
	sqlite3_bind_int64(st, 1, r->run_id);
	sqlite3_bind_int(st, 2, r->layer);
	while (sqlite3_step(st) == SQLITE_ROW) {
		s = interim_stream(r, sqlite3_column_int(st, 0),
		    sqlite3_column_type(st, 1) == SQLITE_NULL ? EVENT_NONE :
		    (uint64_t)sqlite3_column_int64(st, 1));
		s->live_blocks = sqlite3_column_int64(st, 2);
		s->live_bytes = sqlite3_column_int64(st, 3);
	}
	sqlite3_finalize(st);

	for (i = 0; i < r->nstreams; i++) {
		s = &r->streams[i];
		s->is_default = 1;
		for (k = 0; k < (int64_t)r->nstreams; k++) {
			if (r->streams[k].device == s->device &&
			    r->streams[k].stream < s->stream)
				s->is_default = 0;
		}
		interim_slope(s->live_per_step, r->nsteps, (size_t)r->warmup,
		    &s->growth_bytes_per_step, &s->grew_fraction);
		if (s->destroyed_ns != 0 && s->live_bytes > 0)
			s->garbage = LEAK_GARBAGE_DESTROYED;
		else if (!s->is_default && s->grew_fraction > 0.5 &&
		    s->growth_bytes_per_step > (double)r->threshold)
			s->garbage = LEAK_GARBAGE_GROWING;
		if (s->garbage != LEAK_GARBAGE_NONE) {
			s->garbage_bytes = s->live_bytes;
			s->garbage_blocks = s->live_blocks;
		}
	}
	return (0);
}

static void
interim_suspects(struct query *q, struct leak_report *r)
{
	sqlite3_stmt		*st;
	struct leak_suspect	*s;

	st = query_prepare(q, "SELECT coalesce(a.site_id, 0), s.label,"
	    " sum(a.bytes), count(*), coalesce(a.device, -1), a.stream FROM"
	    " allocations a LEFT JOIN sites s ON s.id = a.site_id WHERE"
	    " a.run_id = ?1 AND a.layer = ?2 AND a.free_ns IS NULL AND"
	    " coalesce(a.alloc_step, 1) > ?3 GROUP BY 1, 5, 6"
	    " ORDER BY 3 DESC LIMIT 10", NULL);
	if (st == NULL)
		return;
	sqlite3_bind_int64(st, 1, r->run_id);
	sqlite3_bind_int(st, 2, r->layer);
	sqlite3_bind_int(st, 3, r->warmup);
	while (sqlite3_step(st) == SQLITE_ROW) {
		r->suspects = xreallocarray(r->suspects, r->nsuspects + 1,
		    sizeof *r->suspects);
		s = &r->suspects[r->nsuspects++];
		s->site_id = sqlite3_column_int64(st, 0);
		s->site = xstrdup(sqlite3_column_type(st, 1) == SQLITE_NULL ?
		    "(no stack)" : (const char *)sqlite3_column_text(st, 1));
		s->bytes = sqlite3_column_int64(st, 2);
		s->blocks = sqlite3_column_int64(st, 3);
		s->device = sqlite3_column_int(st, 4);
		s->stream = (uint64_t)sqlite3_column_int64(st, 5);
	}
	sqlite3_finalize(st);
}

/* See analysis.h. */
int
analysis_leaks(struct query *q, const struct leak_options *o,
    struct leak_report **out, char **cause)
{
	struct leak_report	*r;
	int64_t			*v;
	size_t			 i;

	r = xcalloc(1, sizeof *r);
	r->run_id = o->run_id != 0 ? o->run_id : query_latest_run(q);
	r->warmup = o->warmup;
	r->threshold = o->threshold;
	r->layer = o->layer >= 0 ? o->layer : interim_layer(q, r->run_id);
	if (interim_steps(q, r, cause) != 0 ||
	    interim_streams(q, r, cause) != 0) {
		leak_report_free(r);
		return (-1);
	}
	v = xcalloc(r->nsteps + 1, sizeof *v);
	for (i = 0; i < r->nsteps; i++)
		v[i] = r->steps[i].live_bytes;
	interim_slope(v, r->nsteps, (size_t)r->warmup,
	    &r->growth_bytes_per_step, &r->grew_fraction);
	free(v);
	r->steps_analysed = r->nsteps > (size_t)r->warmup ?
	    (int64_t)r->nsteps - r->warmup : 0;
	if (r->steps_analysed < 2) {
		r->verdict = LEAK_INCONCLUSIVE;
		r->reason = "fewer than two steps after the warm-up";
	} else if (r->growth_bytes_per_step > (double)r->threshold &&
	    r->grew_fraction > 0.5)
		r->verdict = LEAK_LEAK;
	else
		r->verdict = LEAK_CLEAN;
	interim_suspects(q, r);
	*out = r;
	return (0);
}

/* See analysis.h. */
void
leak_report_free(struct leak_report *r)
{
	size_t	i;

	if (r == NULL)
		return;
	for (i = 0; i < r->nstreams; i++)
		free(r->streams[i].live_per_step);
	for (i = 0; i < r->nsuspects; i++)
		free(r->suspects[i].site);
	free(r->streams);
	free(r->suspects);
	free(r->steps);
	free(r);
}

/* See analysis.h. */
const char *
leak_verdict_name(enum leak_verdict v)
{
	return (v == LEAK_LEAK ? "LEAK" : v == LEAK_CLEAN ? "CLEAN" :
	    "INCONCLUSIVE");
}

/* See analysis.h. */
const char *
leak_garbage_name(enum leak_garbage g)
{
	static const char *names[] = { "none", "destroyed", "growing",
	    "stranded" };

	return ((unsigned)g < 4 ? names[g] : "none");
}

/* See analysis.h. */
int
analysis_blocks(struct query *q, const struct block_filter *f,
    int64_t offset, struct block_row *rows, int max, char **cause)
{
	static const char *order[] = { "a.bytes", "a.alloc_ns", "a.alloc_step",
	    "a.stream", "s.label" };
	sqlite3_stmt	*st;
	char		*sql;
	int		 n = 0, rc = SQLITE_DONE;

	xasprintf(&sql, "SELECT a.id, coalesce(a.device, -1), a.stream,"
	    " a.layer, a.address, a.bytes, a.alloc_ns, a.free_ns,"
	    " a.alloc_step, a.site_id, s.label FROM allocations a LEFT JOIN"
	    " sites s ON s.id = a.site_id WHERE a.run_id = ?1%s"
	    " AND (?3 < 0 OR a.layer = ?3)"
	    " AND (?4 = 0 OR a.stream = ?5)"
	    " AND (?6 = 0 OR coalesce(a.alloc_step, 1) >= ?6)"
	    " AND (?7 = 0 OR coalesce(a.alloc_step, 1) <= ?7)"
	    " AND (?8 IS NULL OR instr(s.label, ?8) > 0)"
	    " ORDER BY %s %s, a.id LIMIT ?9 OFFSET ?10",
	    f->live_only ? " AND a.free_ns IS NULL" : "",
	    order[(unsigned)f->sort < 5 ? f->sort : 0],
	    f->descending ? "DESC" : "ASC");
	st = query_prepare(q, sql, cause);
	free(sql);
	if (st == NULL)
		return (-1);
	sqlite3_bind_int64(st, 1, f->run_id != 0 ? f->run_id :
	    query_latest_run(q));
	sqlite3_bind_int(st, 3, f->layer);
	sqlite3_bind_int(st, 4, f->has_stream);
	sqlite3_bind_int64(st, 5, (int64_t)f->stream);
	sqlite3_bind_int64(st, 6, f->step_min);
	sqlite3_bind_int64(st, 7, f->step_max);
	if (f->search != NULL)
		sqlite3_bind_text(st, 8, f->search, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 9, max);
	sqlite3_bind_int64(st, 10, offset);
	while (n < max && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		rows[n].id = sqlite3_column_int64(st, 0);
		rows[n].device = sqlite3_column_int(st, 1);
		rows[n].stream = sqlite3_column_type(st, 2) == SQLITE_NULL ?
		    EVENT_NONE : (uint64_t)sqlite3_column_int64(st, 2);
		rows[n].layer = sqlite3_column_int(st, 3);
		rows[n].address = (uint64_t)sqlite3_column_int64(st, 4);
		rows[n].bytes = sqlite3_column_int64(st, 5);
		rows[n].alloc_ns = (uint64_t)sqlite3_column_int64(st, 6);
		rows[n].free_ns = (uint64_t)sqlite3_column_int64(st, 7);
		rows[n].alloc_step = sqlite3_column_int64(st, 8);
		rows[n].site_id = sqlite3_column_int64(st, 9);
		snprintf(rows[n].site, sizeof rows[n].site, "%s",
		    sqlite3_column_type(st, 10) == SQLITE_NULL ? "" :
		    (const char *)sqlite3_column_text(st, 10));
		n++;
	}
	sqlite3_finalize(st);
	if (n < max && rc != SQLITE_DONE)
		return (interim_error(q, cause));
	return (n);
}

/* See analysis.h. */
int
analysis_site_frames(struct query *q, int64_t site, struct frame_row *rows,
    int max, char **cause)
{
	sqlite3_stmt	*st;
	int		 n = 0;

	st = query_prepare(q, "SELECT f.name, f.filename, f.line FROM"
	    " site_frames sf JOIN frames f ON f.id = sf.frame_id WHERE"
	    " sf.site_id = ? ORDER BY sf.depth", cause);
	if (st == NULL)
		return (-1);
	sqlite3_bind_int64(st, 1, site);
	while (n < max && sqlite3_step(st) == SQLITE_ROW) {
		snprintf(rows[n].name, sizeof rows[n].name, "%s",
		    sqlite3_column_text(st, 0));
		snprintf(rows[n].filename, sizeof rows[n].filename, "%s",
		    sqlite3_column_text(st, 1));
		rows[n].line = sqlite3_column_int64(st, 2);
		n++;
	}
	sqlite3_finalize(st);
	return (n);
}
