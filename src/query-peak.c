/*
 * query-peak.c: the high-water mark of a run's layer over its device
 * lanes (every lane for pinned host memory: QUERY_PEAK_ROWS), from its
 * allocation_steps and the allocations of a few steps, for `vramtrace
 * leaks` on a run too large to walk whole.
 *
 * The walk (query-report-walk.c) applies every allocation's two events in
 * time order; the peak is the first instant of the highest total.  A
 * process's steps are intervals of time in order, so the total at the
 * start of step k is the sum of what the steps before it allocated less
 * what they freed (allocation_steps), and no instant of step k exceeds
 * that plus what step k allocated.  The steps are taken by that bound,
 * highest first, and walked one at a time (their allocations through the
 * indexes allocations_run_step and allocations_crossing), until no bound
 * left can reach the highest total found: a few steps of a long run.  The
 * first step is always walked: its earliest event is the run's first
 * instant, where the walk puts the allocations of unknown time.
 *
 * This holds for one process whose every allocation has a step; a run of
 * several processes (each with its own steps), or with allocations of no
 * step, is left to the walk.
 */
#include "config.h"

#include "query-int.h"
#include "report.h"

#include <stdlib.h>
#include <string.h>

#include "unknown.h"

/* A step of the run: its number and its bounds. */
struct pk_step {
	int64_t		 step;
	int64_t		 before;	/* live at its start */
	int64_t		 bound;		/* before + what it allocated */
};

/* What a step allocated and freed in the layer's rows (QUERY_PEAK_ROWS). */
struct pk_sum {
	int64_t		 alloc;
	int64_t		 freed;
	int		 rows;		/* 0: no row, no event */
};

/* An event of a step: its time and its change of the total. */
struct pk_event {
	uint64_t	 t;
	int64_t		 bytes;
};

struct pk_work {
	struct report	*r;
	struct pk_step	*steps;
	size_t		 nsteps;
	struct pk_event	*ev;
	size_t		 nev;
	size_t		 cap;
	uint64_t	 first;		/* earliest known time read */
	int64_t		 best;		/* highest total so far */
	uint64_t	 best_t;	/* its first instant (absolute) */
};

static int
cmp_event(const void *a, const void *b)
{
	const struct pk_event	*x = a, *y = b;

	return ((x->t > y->t) - (x->t < y->t));
}

/* Highest bound first; of equal bounds, the earliest step. */
static int
cmp_bound(const void *a, const void *b)
{
	const struct pk_step	*x = a, *y = b;

	if (x->bound != y->bound)
		return (x->bound < y->bound ? 1 : -1);
	return ((x->step > y->step) - (x->step < y->step));
}

static void
event_push(struct pk_work *w, uint64_t t, int64_t bytes)
{
	if (w->nev == w->cap) {
		w->cap = w->cap == 0 ? 1024 : 2 * w->cap;
		w->ev = xreallocarray(w->ev, w->cap, sizeof *w->ev);
	}
	w->ev[w->nev].t = t;
	w->ev[w->nev].bytes = bytes;
	w->nev++;
}

/*
 * Read the events of step k (every layer for the earliest time; the run's
 * layer in QUERY_PEAK_ROWS for the total).  0, or -1 with *cause.
 */
static int
step_read(struct query *q, struct pk_work *w, int64_t k, char **cause)
{
	sqlite3_stmt	*st;
	uint64_t	 t;
	int		 rc, i, counted;

	st = query_prepare(q, "SELECT coalesce(alloc_ns, 0), free_ns, 1,"
	    " free_step = ?2, bytes, layer = ?3 AND " QUERY_PEAK_ROWS
	    " FROM allocations WHERE run_id = ?1 AND alloc_step = ?2"
	    " UNION ALL SELECT 0, free_ns, 0, 1, bytes, layer = ?3 AND "
	    QUERY_PEAK_ROWS " FROM allocations WHERE run_id = ?1"
	    " AND free_step = ?2 AND free_step > coalesce(alloc_step, 1)",
	    cause);
	if (st == NULL)
		return (-1);
	sqlite3_bind_int64(st, 1, w->r->run_id);
	sqlite3_bind_int64(st, 2, k);
	sqlite3_bind_int(st, 3, w->r->layer);
	w->nev = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		counted = sqlite3_column_int(st, 5);
		for (i = 0; i < 2; i++) {
			if (!sqlite3_column_int(st, 2 + i))
				continue;	/* not in this step */
			t = (uint64_t)sqlite3_column_int64(st, i);
			if (t != 0 && t < w->first)
				w->first = t;
			if (counted)
				event_push(w, t, i == 0 ?
				    sqlite3_column_int64(st, 4) :
				    -sqlite3_column_int64(st, 4));
		}
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return (query_fail(q, cause));
	return (0);
}

/*
 * Walk the events read of step s from its total at the start, the first
 * instant of a higher total than any so far becoming the best.
 */
static void
step_walk(struct pk_work *w, const struct pk_step *s)
{
	int64_t		cur = s->before;
	uint64_t	t;
	size_t		i;

	for (i = 0; i < w->nev; i++) {
		if (w->ev[i].t < w->first)
			w->ev[i].t = w->first;	/* unknown: the first */
	}
	util_sort(w->ev, w->nev, sizeof *w->ev, cmp_event);
	for (i = 0; i < w->nev;) {
		t = w->ev[i].t;
		while (i < w->nev && w->ev[i].t == t)
			cur += w->ev[i++].bytes;
		if (cur > w->best || (cur == w->best && cur > 0 &&
		    t < w->best_t)) {
			w->best = cur;
			w->best_t = t;
		}
	}
}

/*
 * The steps of the run in the layer's rows of its peak (QUERY_PEAK_ROWS),
 * with their bounds, from one read of its allocation_steps (in no order:
 * the step is the index); 1 when the run is not one the steps answer for
 * (see the top), else 0, or -1 with *cause.
 */
static int
steps_load(struct query *q, struct pk_work *w, char **cause)
{
	sqlite3_stmt	*st;
	struct pk_step	*s;
	struct pk_sum	*sum = NULL;
	int64_t		 live = 0, k, process = 0;
	size_t		 n = 0, i;
	int		 rc, other = 0;

	st = query_prepare(q, "SELECT step, coalesce(process_id, 0), layer ="
	    " ?2 AND " QUERY_PEAK_ROWS ", alloc_bytes, freed_bytes FROM"
	    " allocation_steps WHERE run_id = ?1", cause);
	if (st == NULL)
		return (-1);
	sqlite3_bind_int64(st, 1, w->r->run_id);
	sqlite3_bind_int(st, 2, w->r->layer);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		k = sqlite3_column_int64(st, 0);
		if (n == 0)
			process = sqlite3_column_int64(st, 1);
		/* A step of no number, or of another process: walk. */
		if ((other = sqlite3_column_type(st, 0) == SQLITE_NULL ||
		    k < 1 || sqlite3_column_int64(st, 1) != process))
			break;
		if ((size_t)k >= n) {
			sum = xreallocarray(sum, 2 * (size_t)k, sizeof *sum);
			memset(sum + n, 0, (2 * (size_t)k - n) * sizeof *sum);
			n = 2 * (size_t)k;
		}
		sum[k].rows = 1;
		if (sqlite3_column_int(st, 2)) {
			sum[k].alloc += sqlite3_column_int64(st, 3);
			sum[k].freed += sqlite3_column_int64(st, 4);
		}
	}
	sqlite3_finalize(st);
	if (!other && rc != SQLITE_DONE) {
		free(sum);
		return (query_fail(q, cause));
	}
	for (i = 1; !other && i < n; i++) {
		if (!sum[i].rows)
			continue;	/* no event in it */
		w->steps = xreallocarray(w->steps, w->nsteps + 1,
		    sizeof *w->steps);
		s = &w->steps[w->nsteps++];
		s->step = (int64_t)i;
		s->before = live;
		s->bound = live + sum[i].alloc;
		live = s->bound - sum[i].freed;
	}
	free(sum);
	return (other);
}

/*
 * r's peak (r->peak: bytes, ns from r->t0_ns; not its step) and its first
 * instant r->t0_ns (on entry, that of its other tables: report_bounds in
 * query-report.c), as the walk would give them, for a finished run with
 * allocation_steps (r->run_id, r->layer).  Returns 0 when done, 1 when
 * the run is not one this answers for (nothing changed: walk it), -1 with
 * *cause when the database cannot be read.
 */
int
query_peak_steps(struct query *q, struct report *r, char **cause)
{
	struct pk_work	 w;
	uint64_t	 first;
	size_t		 i;
	int		 rc;

	if (!query_has_alloc_steps(q, r->run_id))
		return (1);
	memset(&w, 0, sizeof w);
	w.r = r;
	w.first = UINT64_MAX;
	if ((rc = steps_load(q, &w, cause)) != 0 || (rc = w.nsteps == 0))
		goto out;
	/* The first step: the first instant, then its walk. */
	if ((rc = step_read(q, &w, w.steps[0].step, cause)) != 0)
		goto out;
	if (w.first == UINT64_MAX) {
		rc = 1;		/* only times not known: walk it all */
		goto out;
	}
	if (r->t0_ns != UNKNOWN_U64 && r->t0_ns < w.first)
		w.first = r->t0_ns;
	step_walk(&w, &w.steps[0]);
	w.steps[0].bound = -1;	/* walked */
	util_sort(w.steps, w.nsteps, sizeof *w.steps, cmp_bound);
	first = w.first;
	for (i = 0; i < w.nsteps && w.steps[i].bound >= w.best; i++) {
		if (w.steps[i].bound == w.best && (w.best == 0 ||
		    w.steps[i].bound < 0))
			continue;
		if ((rc = step_read(q, &w, w.steps[i].step, cause)) != 0)
			goto out;
		if (w.first != first) {
			rc = 1;		/* steps not in time order: walk */
			goto out;
		}
		step_walk(&w, &w.steps[i]);
	}
	r->t0_ns = w.first;
	r->peak.bytes = w.best;
	r->peak.ns = w.best > 0 ? w.best_t - w.first : UNKNOWN_U64;
out:
	free(w.steps);
	free(w.ev);
	return (rc);
}
