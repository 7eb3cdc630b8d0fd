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
 * N+1 after the last end.  This file only keeps the timelines; the rows
 * that get their steps from them, and the steps table, are written by
 * store-rows.c.
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
store_steps_reset(struct store_steps *ss)
{
	size_t	i;

	free(ss->run.ends);
	for (i = 0; i < ss->nprocs; i++)
		free(ss->procs[i].ends);
	free(ss->procs);
	memset(ss, 0, sizeof *ss);
}

static struct store_timeline *
process_timeline(struct store_steps *ss, int64_t process_id, int create)
{
	size_t	i;

	for (i = 0; i < ss->nprocs; i++) {
		if (ss->procs[i].process_id == process_id)
			return (&ss->procs[i]);
	}
	if (!create)
		return (NULL);
	ss->procs = xreallocarray(ss->procs, ss->nprocs + 1,
	    sizeof *ss->procs);
	memset(&ss->procs[ss->nprocs], 0, sizeof *ss->procs);
	ss->procs[ss->nprocs].process_id = process_id;
	return (&ss->procs[ss->nprocs++]);
}

/* The timeline that gives process_id's rows their steps (maybe empty). */
static const struct store_timeline *
timeline_of(struct store_steps *ss, int64_t process_id)
{
	const struct store_timeline	*tl;

	if (process_id != 0 && (tl = process_timeline(ss, process_id, 0)) !=
	    NULL && tl->n > 0)
		return (tl);
	return (&ss->run);
}

/* Are steps known for rows of process_id (0: none) yet? */
int
store_steps_known(struct store_steps *ss, int64_t process_id)
{
	return (timeline_of(ss, process_id)->n > 0);
}

/*
 * The step a row of process_id at time t belongs to (EVENT_NONE: before
 * tracing began, step 1), from the boundaries known so far.
 */
int64_t
store_steps_of(struct store_steps *ss, int64_t process_id, uint64_t t)
{
	const struct store_timeline	*tl = timeline_of(ss, process_id);
	size_t				 lo = 0, hi = tl->n, mid;

	if (t == EVENT_NONE)
		return (1);
	if (t > ss->max_assigned_ns)
		ss->max_assigned_ns = t;
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
 * Add the end of step *step (-1: the process's next; set to the number it
 * gets) of process_id (0: none, an importer) at end_ns.  A process's steps
 * must arrive in order; a repeat or a gap is ignored.  The run's step k is
 * taken from the first process that ends it: then *start_ns (0: the
 * previous end; set to it) and *step are those of the run's new step.  A
 * boundary earlier than a time already given a step marks the steps
 * dirty, for recomputation at finish.  Returns STORE_STEPS_RUN when the
 * run has a new step (a steps row to write), STORE_STEPS_PROCESS when
 * only the process has, STORE_STEPS_IGNORED when neither.
 */
enum store_steps_added
store_steps_add(struct store_steps *ss, int64_t process_id, int64_t *step,
    uint64_t *start_ns, uint64_t end_ns)
{
	struct store_timeline	*tl = NULL, *run = &ss->run;

	if (process_id != 0) {
		tl = process_timeline(ss, process_id, 1);
		if (*step < 0)
			*step = (int64_t)tl->n + 1;
		if ((size_t)*step != tl->n + 1 ||
		    (tl->n > 0 && end_ns < tl->ends[tl->n - 1]))
			return (STORE_STEPS_IGNORED);
		timeline_append(tl, end_ns);
	} else if (*step < 0)
		*step = (int64_t)run->n + 1;
	if (end_ns < ss->max_assigned_ns)
		ss->dirty = 1;
	if ((size_t)*step == run->n + 1 &&
	    (run->n == 0 || end_ns >= run->ends[run->n - 1])) {
		/* The first process to end step k ends the run's step k. */
		if (*start_ns == 0 && run->n > 0)
			*start_ns = run->ends[run->n - 1];
		timeline_append(run, end_ns);
		return (STORE_STEPS_RUN);
	}
	return (tl == NULL ? STORE_STEPS_IGNORED : STORE_STEPS_PROCESS);
}
