/*
 * store-steps.c: step boundaries, per process and per run.
 *
 * Every process marks its own steps: under torchrun the ranks run at their
 * own pace, and a rank ahead of another by a few milliseconds would have
 * its allocations put into the wrong steps if all ranks shared one set of
 * boundaries.  So each process has a timeline, the ends of its steps in
 * order, and its allocations get their steps from it; step k of the run
 * (the steps table) is where the first process to reach it ended it.
 * Sources without a process (importers) use the run's timeline directly.
 *
 * A timeline is a growing array of end times, increasing; the step of a
 * time t is the first step whose end is at or after t, numbered from 1, or
 * N+1 after the last end.
 */
#include "config.h"

#include "store-int.h"

#include <stdlib.h>
#include <string.h>

static void
timeline_append(struct store_timeline *tl, uint64_t end_ns)
{
	if (tl->n == tl->alloc) {
		tl->alloc = tl->alloc == 0 ? 64 : 2 * tl->alloc;
		tl->ends = xreallocarray(tl->ends, tl->alloc,
		    sizeof *tl->ends);
	}
	tl->ends[tl->n++] = end_ns;
}

/* Forget every boundary (a new run begins, or the store closes). */
void
store_steps_reset(struct store *s)
{
	size_t	i;

	free(s->run_steps.ends);
	memset(&s->run_steps, 0, sizeof s->run_steps);
	for (i = 0; i < s->nprocs; i++)
		free(s->procs[i].ends);
	free(s->procs);
	s->procs = NULL;
	s->nprocs = 0;
	s->max_assigned_ns = 0;
	s->steps_dirty = 0;
}

static struct store_timeline *
process_timeline(struct store *s, int64_t process_id, int create)
{
	size_t	i;

	for (i = 0; i < s->nprocs; i++) {
		if (s->procs[i].process_id == process_id)
			return (&s->procs[i]);
	}
	if (!create)
		return (NULL);
	s->procs = xreallocarray(s->procs, s->nprocs + 1, sizeof *s->procs);
	memset(&s->procs[s->nprocs], 0, sizeof *s->procs);
	s->procs[s->nprocs].process_id = process_id;
	return (&s->procs[s->nprocs++]);
}

/* The timeline that gives process_id's rows their steps (maybe empty). */
static const struct store_timeline *
timeline_of(struct store *s, int64_t process_id)
{
	const struct store_timeline	*tl;

	if (process_id != 0 && (tl = process_timeline(s, process_id, 0)) !=
	    NULL && tl->n > 0)
		return (tl);
	return (&s->run_steps);
}

/* Are steps known for rows of process_id (0: none) yet? */
int
store_has_steps(struct store *s, int64_t process_id)
{
	return (timeline_of(s, process_id)->n > 0);
}

/*
 * The step a row of process_id at time t belongs to (EVENT_NONE: before
 * tracing began, step 1), from the boundaries known so far.
 */
int64_t
store_step_of(struct store *s, int64_t process_id, uint64_t t)
{
	const struct store_timeline	*tl = timeline_of(s, process_id);
	size_t				 lo = 0, hi = tl->n, mid;

	if (t == EVENT_NONE)
		return (1);
	if (t > s->max_assigned_ns)
		s->max_assigned_ns = t;
	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (tl->ends[mid] < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return ((int64_t)lo + 1);
}

/*
 * Record the end of step `step` (-1: the process's next) of process_id
 * (0: none, an importer) at end_ns, starting at start_ns (0: the previous
 * end), with an optional name.  A process's steps must arrive in order; a
 * repeat or a gap is ignored.  The run's step k is taken from the first
 * process that ends it.  A boundary earlier than a time already given a
 * step marks the steps for recomputation at finish.  0, or -1.
 */
int
store_add_step(struct store *s, int64_t process_id, int64_t step,
    uint64_t start_ns, uint64_t end_ns, const char *name)
{
	struct store_timeline	*tl = NULL, *run = &s->run_steps;
	sqlite3_stmt		*st = s->stmt[STMT_STEP];

	if (process_id != 0) {
		tl = process_timeline(s, process_id, 1);
		if (step < 0)
			step = (int64_t)tl->n + 1;
		if ((size_t)step != tl->n + 1 ||
		    (tl->n > 0 && end_ns < tl->ends[tl->n - 1]))
			return (0);
		timeline_append(tl, end_ns);
	} else if (step < 0)
		step = (int64_t)run->n + 1;
	if (end_ns < s->max_assigned_ns)
		s->steps_dirty = 1;
	if ((size_t)step == run->n + 1 &&
	    (run->n == 0 || end_ns >= run->ends[run->n - 1])) {
		/* The first process to end step k ends the run's step k. */
		if (start_ns == 0 && run->n > 0)
			start_ns = run->ends[run->n - 1];
		timeline_append(run, end_ns);
		if (store_sql_begin(s, NULL) != 0)
			return (-1);
		sqlite3_bind_int64(st, 1, s->run_id);
		sqlite3_bind_int64(st, 2, step);
		store_sql_bind_opt(st, 3, start_ns == 0 ? EVENT_NONE : start_ns);
		sqlite3_bind_int64(st, 4, (int64_t)end_ns);
		store_sql_bind_text(st, 5, name);
		if (store_sql_step(s, st) != 0)
			return (-1);
	} else if (tl == NULL)
		return (0);
	return (s->unstepped ? store_assign_unstepped(s) : 0);
}
