/*
 * tui-data.c: what the UI knows about the database, and keeping it fresh.
 *
 * The run header (query_run) is cheap and read at once, so the first
 * frame never waits for the analysis.  The leak report reads every
 * allocation, so on the screen it is computed by a worker thread on its
 * own connection (SQLite connections are not shared between threads),
 * with the pinned host memory's beside it (t->pinned, where the run has
 * some); until it arrives t->report is NULL and the views say "analysing".
 * With --live the database is polled every TUI_POLL_NS with a query that
 * reads only maxima of keys, and anything new re-reads the header and
 * starts another analysis.  t->generation counts the changes so that views
 * know when to re-read their own rows.
 */
#include "config.h"

#include "tui.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define TUI_POLL_NS	500000000ULL

/* The counts of the run header: those of the small tables, cheap. */
#define TUI_DATA_COUNTS (QUERY_COUNT_PROCESSES | QUERY_COUNT_DEVICES | \
	QUERY_COUNT_STREAMS | QUERY_COUNT_STEPS | QUERY_COUNT_OFFLOAD_EVENTS | \
	QUERY_COUNT_DROPPED_RECORDS)

struct tui_worker {
	pthread_t		 thread;
	pthread_mutex_t		 lock;
	int			 done;		/* under lock */
	char			*path;
	int64_t			 run_id;
	struct leak_report	*report;
	struct leak_report	*pinned;
	char			*cause;
};

/*
 * The leak report of run `run` into *out and, judged beside it as leaks
 * judges it, its pinned host memory's into *pinned (NULL where the run has
 * none).  On failure both are NULL and *cause says why.
 */
static void
tui_data_leaks(struct query *q, int64_t run, struct leak_report **out,
    struct leak_report **pinned, char **cause)
{
	struct leak_options	o;

	*out = *pinned = NULL;
	leak_options_init(&o);
	o.run_id = run;
	if (query_leaks(q, &o, out, cause) == 0 &&
	    query_leaks_host(q, &o, *out, pinned, cause) == 0)
		return;
	leak_report_free(*out);
	*out = NULL;
}

/* An analysis done: its reports, or why there are none, replace t's. */
static void
tui_data_take(struct tui *t, struct leak_report *r,
    struct leak_report *pinned, char *cause)
{
	leak_report_free(t->report);
	leak_report_free(t->pinned);
	free(t->report_error);
	t->report = r;
	t->pinned = pinned;
	t->report_error = cause;
	t->generation++;
}

/* Read run `run` (0: the newest) into t->run and t->runs.  0, or -1. */
static int
tui_data_run(struct tui *t, int64_t run, char **cause)
{
	struct query_run	r;
	struct query_counts	c;

	if (query_run(t->q, run, TUI_DATA_COUNTS, &r, cause) != 0 ||
	    query_run_counts(t->q, 0, QUERY_COUNT_RUNS, &c, cause) != 0) {
		query_run_free(&r);
		return (-1);
	}
	query_run_free(&t->run);
	t->run = r;
	t->runs = c.runs;
	return (0);
}

static void *
tui_data_work(void *arg)
{
	struct tui_worker	*w = arg;
	struct leak_report	*r = NULL, *pinned = NULL;
	struct query		*q;
	char			*cause = NULL;

	if ((q = query_open(w->path, &cause)) != NULL) {
		tui_data_leaks(q, w->run_id, &r, &pinned, &cause);
		query_close(q);
	}
	pthread_mutex_lock(&w->lock);
	w->report = r;
	w->pinned = pinned;
	w->cause = cause;
	w->done = 1;
	pthread_mutex_unlock(&w->lock);
	return (NULL);
}

/*
 * Open path (a database or a snapshot pickle) for the UI, on run `run`
 * (0: the newest); `live` follows a database that is still being written.
 * 0, or -1 with *cause.
 */
int
tui_data_open(struct tui *t, const char *path, int64_t run, int live,
    char **cause)
{
	memset(t, 0, sizeof *t);
	t->want_run = run;
	t->live = live;
	if ((t->path = input_database(path, cause)) == NULL ||
	    (t->q = query_open(t->path, cause)) == NULL)
		return (-1);
	if (tui_data_run(t, run, cause) != 0)
		return (-1);
	query_run_poll(t->q, t->run.id, &t->poll);
	t->polled_ns = lib_now_ns();
	return (0);
}

static void
tui_data_join(struct tui *t)
{
	struct tui_worker	*w = t->worker;

	pthread_join(w->thread, NULL);
	pthread_mutex_destroy(&w->lock);
	tui_data_take(t, w->report, w->pinned, w->cause);
	free(w->path);
	free(w);
	t->worker = NULL;
}

/* Wait for the analysis, then close everything tui_data_open() opened. */
void
tui_data_close(struct tui *t)
{
	if (t->worker != NULL)
		tui_data_join(t);
	leak_report_free(t->report);
	leak_report_free(t->pinned);
	free(t->report_error);
	query_run_free(&t->run);
	query_close(t->q);
	free(t->path);
}

/*
 * Compute the leak report of the run, and its pinned host memory's: in
 * place when `wait` is set (--dump), else in a worker thread whose result
 * tui_data_update() collects.  Does nothing while a worker is already
 * running.
 */
void
tui_data_analyse(struct tui *t, int wait)
{
	struct tui_worker	*w;
	struct leak_report	*r, *pinned;
	char			*cause = NULL;

	if (t->worker != NULL)
		return;
	if (wait) {
		tui_data_leaks(t->q, t->run.id, &r, &pinned, &cause);
		tui_data_take(t, r, pinned, cause);
		return;
	}
	w = xcalloc(1, sizeof *w);
	w->path = xstrdup(t->path);
	w->run_id = t->run.id;
	pthread_mutex_init(&w->lock, NULL);
	if (pthread_create(&w->thread, NULL, tui_data_work, w) != 0) {
		pthread_mutex_destroy(&w->lock);
		free(w->path);
		free(w);
		tui_data_analyse(t, 1);
		return;
	}
	t->worker = w;
}

/* Whether an analysis is running. */
int
tui_data_busy(struct tui *t)
{
	return (t->worker != NULL);
}

static int
tui_data_poll(struct tui *t)
{
	struct query_poll	 p;
	char			*cause = NULL;

	t->polled_ns = lib_now_ns();
	if (t->worker != NULL)
		return (0);	/* look again once this analysis is in */
	if (query_run_poll(t->q, t->want_run, &p) != 0 ||
	    memcmp(&p, &t->poll, sizeof p) == 0)
		return (0);
	if (tui_data_run(t, p.run_id, &cause) != 0) {
		tui_frame_fail(t, cause);
		return (0);
	}
	t->poll = p;
	t->generation++;
	tui_data_analyse(t, 0);
	return (1);
}

/*
 * Collect a finished analysis and, with --live, poll the database when it
 * is time.  Returns 1 when the data changed (redraw), else 0.  Cheap
 * enough to call on every pass of the main loop.
 */
int
tui_data_update(struct tui *t)
{
	int	changed = 0, done = 0;

	if (t->worker != NULL) {
		pthread_mutex_lock(&t->worker->lock);
		done = t->worker->done;
		pthread_mutex_unlock(&t->worker->lock);
		if (done) {
			tui_data_join(t);
			changed = 1;
		}
	}
	if (t->live && lib_now_ns() - t->polled_ns >= TUI_POLL_NS)
		changed |= tui_data_poll(t);
	return (changed);
}
