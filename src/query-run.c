/*
 * query-run.c: what a run is, the one description of a run that info,
 * report, history and the TUI show; what a database holds; and a cheap
 * fingerprint for following a database that is still being written.
 *
 * A run's description is its row of the runs table, the devices it used
 * and, as the caller asks, counts of its rows.  The devices of a run are
 * those the small tables name: the devices table (a recording names each
 * device it makes a context on), its streams, the segments of its
 * snapshots (an import) and its usage samples (attach); never the
 * allocations, which would cost a pass over them.  Each count is one
 * SELECT of the table below, run only when asked for: those of the small
 * tables are cheap, those of allocations, memcpys, marks and sites read a
 * range of a large table or more.
 */
#include "config.h"

#include "query-int.h"

#include <stdlib.h>
#include <string.h>

/*
 * The SQL condition that column c is run ?1, or any run when ?1 is 0, in a
 * form that lets an index on c serve both.
 */
#define RUN_IS(c) " " c " BETWEEN ?1 AND coalesce(nullif(?1, 0)," \
	" 9223372036854775807)"

/* The devices of run ?1 (0: of every run), one row per mention. */
#define RUN_DEVICES \
	"SELECT device, name, total_bytes FROM devices WHERE" RUN_IS("run_id") \
	" UNION ALL SELECT device, NULL, NULL FROM streams WHERE device >= 0" \
	" AND" RUN_IS("run_id") " UNION ALL SELECT device, NULL, NULL FROM" \
	" segments WHERE snapshot_id IN (SELECT id FROM snapshots WHERE" \
	RUN_IS("run_id") ") UNION ALL SELECT device, NULL, NULL FROM" \
	" usage_samples WHERE" RUN_IS("run_id")

/* The columns of a run that run_read takes. */
#define RUN_COLUMNS "id, source, input, command, host, git_commit," \
	" allocator, step_source, start_ns, end_ns, complete"

static const struct {
	unsigned int	 what;
	size_t		 off;
	const char	*sql;
} run_counts[] = {
	{ QUERY_COUNT_RUNS, offsetof(struct query_counts, runs),
	  "SELECT count(*) FROM runs WHERE" RUN_IS("id") },
	{ QUERY_COUNT_INCOMPLETE_RUNS,
	  offsetof(struct query_counts, incomplete_runs),
	  "SELECT count(*) FROM runs WHERE complete = 0 AND" RUN_IS("id") },
	{ QUERY_COUNT_PROCESSES, offsetof(struct query_counts, processes),
	  "SELECT count(*) FROM processes WHERE" RUN_IS("run_id") },
	{ QUERY_COUNT_DEVICES, offsetof(struct query_counts, devices),
	  "SELECT count(DISTINCT device) FROM (" RUN_DEVICES ")" },
	{ QUERY_COUNT_STREAMS, offsetof(struct query_counts, streams),
	  "SELECT count(*) FROM (SELECT DISTINCT run_id, device, stream FROM"
	  " streams WHERE" RUN_IS("run_id") ")" },
	{ QUERY_COUNT_STEPS, offsetof(struct query_counts, steps),
	  "SELECT count(*) FROM steps WHERE" RUN_IS("run_id") },
	{ QUERY_COUNT_ALLOCATIONS, offsetof(struct query_counts, allocations),
	  "SELECT count(*) FROM allocations WHERE" RUN_IS("run_id") },
	{ QUERY_COUNT_MEMCPYS, offsetof(struct query_counts, memcpys),
	  "SELECT count(*) FROM memcpys WHERE" RUN_IS("run_id") },
	{ QUERY_COUNT_OFFLOAD_EVENTS,
	  offsetof(struct query_counts, offload_events),
	  "SELECT count(*) FROM offload_events WHERE" RUN_IS("run_id") },
	{ QUERY_COUNT_MARKS, offsetof(struct query_counts, marks),
	  "SELECT count(*) FROM marks WHERE" RUN_IS("run_id") },
	{ QUERY_COUNT_SITES, offsetof(struct query_counts, sites),
	  "SELECT count(*) FROM sites WHERE ?1 = 0 OR id IN (SELECT site_id"
	  " FROM allocations WHERE run_id = ?1 UNION SELECT site_id FROM"
	  " segments WHERE snapshot_id IN (SELECT id FROM snapshots WHERE"
	  " run_id = ?1) UNION SELECT site_id FROM blocks WHERE snapshot_id"
	  " IN (SELECT id FROM snapshots WHERE run_id = ?1))" },
	{ QUERY_COUNT_SNAPSHOTS, offsetof(struct query_counts, snapshots),
	  "SELECT count(*) FROM snapshots WHERE" RUN_IS("run_id") },
	{ QUERY_COUNT_SEGMENTS, offsetof(struct query_counts, segments),
	  "SELECT count(*) FROM segments WHERE snapshot_id IN (SELECT id FROM"
	  " snapshots WHERE" RUN_IS("run_id") ")" },
	{ QUERY_COUNT_BLOCKS, offsetof(struct query_counts, blocks),
	  "SELECT count(*) FROM blocks WHERE snapshot_id IN (SELECT id FROM"
	  " snapshots WHERE" RUN_IS("run_id") ")" },
	{ QUERY_COUNT_TRACE_ENTRIES,
	  offsetof(struct query_counts, trace_entries),
	  "SELECT coalesce(sum(trace_entries), 0) FROM snapshots WHERE"
	  RUN_IS("run_id") },
	{ QUERY_COUNT_DROPPED_RECORDS,
	  offsetof(struct query_counts, dropped_records),
	  "SELECT coalesce(sum(count), 0) FROM dropped_records WHERE"
	  RUN_IS("run_id") },
};

/* Set every count of *c to UNKNOWN_INT. */
static void
counts_clear(struct query_counts *c)
{
	size_t	i;

	for (i = 0; i < sizeof run_counts / sizeof run_counts[0]; i++)
		*(int64_t *)((char *)c + run_counts[i].off) = UNKNOWN_INT;
}

/*
 * Fill *c with the counts `what` (QUERY_COUNT_* bits) of run run_id, or of
 * the whole database when run_id is 0; the counts not asked for are
 * UNKNOWN_INT.  A run's sites are those its allocations, segments and
 * blocks point to.  A run that does not exist has counts of 0.  0, or -1
 * with *cause.
 */
int
query_run_counts(struct query *q, int64_t run_id, unsigned int what,
    struct query_counts *c, char **cause)
{
	size_t	i;
	int64_t	v;

	counts_clear(c);
	for (i = 0; i < sizeof run_counts / sizeof run_counts[0]; i++) {
		if ((what & run_counts[i].what) == 0)
			continue;
		if ((v = query_int_arg(q, run_counts[i].sql, run_id)) < 0)
			return (query_fail(q, cause));
		*(int64_t *)((char *)c + run_counts[i].off) = v;
	}
	return (0);
}

/* Fill *r from a row whose columns from i on are RUN_COLUMNS. */
static void
run_read(sqlite3_stmt *st, int i, struct query_run *r)
{
	r->id = sqlite3_column_int64(st, i);
	r->source = query_column_text(st, i + 1);
	r->input = query_column_text(st, i + 2);
	r->command = query_column_text(st, i + 3);
	r->host = query_column_text(st, i + 4);
	r->git_commit = query_column_text(st, i + 5);
	r->allocator = query_column_text(st, i + 6);
	r->step_source = query_column_text(st, i + 7);
	r->start_ns = query_column_u64(st, i + 8);
	r->end_ns = query_column_u64(st, i + 9);
	r->complete = sqlite3_column_int(st, i + 10);
}

/* Read the devices of r's run into r->devices, by number. */
static int
run_devices(struct query *q, struct query_run *r, char **cause)
{
	struct query_device	*d;
	sqlite3_stmt		*st;
	int			 rc;

	if ((st = query_prepare(q, "SELECT device, max(name),"
	    " max(total_bytes) FROM (" RUN_DEVICES ") GROUP BY device ORDER BY"
	    " device", cause)) == NULL)
		return (-1);
	sqlite3_bind_int64(st, 1, r->id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		r->devices = xreallocarray(r->devices, r->ndevices + 1,
		    sizeof *r->devices);
		d = &r->devices[r->ndevices++];
		d->device = sqlite3_column_int(st, 0);
		d->name = query_column_text(st, 1);
		d->total_bytes = query_column_int(st, 2);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return (query_fail(q, cause));
	return (0);
}

/*
 * Fill *r with what run run_id (0: the newest) is: its row, its devices
 * and the counts `what` (QUERY_COUNT_* bits; the rest are UNKNOWN_INT).
 * Free it with query_run_free, also after an error.  0, or -1 with *cause
 * when there is no such run or the database cannot be read.
 */
int
query_run(struct query *q, int64_t run_id, unsigned int what,
    struct query_run *r, char **cause)
{
	sqlite3_stmt	*st;
	int		 rc;

	memset(r, 0, sizeof *r);
	counts_clear(&r->counts);
	if ((r->id = run_id != 0 ? run_id : query_latest_run(q)) == 0) {
		xasprintf(cause, "%s: holds no run", q->path);
		return (-1);
	}
	if ((st = query_prepare(q, "SELECT " RUN_COLUMNS " FROM runs WHERE"
	    " id = ?1", cause)) == NULL)
		return (-1);
	sqlite3_bind_int64(st, 1, r->id);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW)
		run_read(st, 0, r);
	sqlite3_finalize(st);
	if (rc == SQLITE_DONE) {
		xasprintf(cause, "%s: no run %lld", q->path, (long long)r->id);
		return (-1);
	}
	if (rc != SQLITE_ROW)
		return (query_fail(q, cause));
	if (run_devices(q, r, cause) != 0 ||
	    query_run_counts(q, r->id, what & ~QUERY_COUNT_DEVICES, &r->counts,
	    cause) != 0)
		return (-1);
	if (what & QUERY_COUNT_DEVICES)
		r->counts.devices = (int64_t)r->ndevices;
	return (0);
}

/* Free what *r holds (not r); a zeroed *r is fine. */
void
query_run_free(struct query_run *r)
{
	size_t	i;

	free(r->source);
	free(r->input);
	free(r->command);
	free(r->host);
	free(r->git_commit);
	free(r->allocator);
	free(r->step_source);
	for (i = 0; i < r->ndevices; i++)
		free(r->devices[i].name);
	free(r->devices);
}

/*
 * Fill *out with every run, oldest first (by start time, then id; unknown
 * start times first), with its row and devices but no counts, and *n with
 * how many.  The caller frees each with query_run_free and the array with
 * free.  0, or -1 with *cause and nothing to free.
 */
int
query_run_list(struct query *q, struct query_run **out, size_t *n,
    char **cause)
{
	sqlite3_stmt	*st;
	struct query_run *r;
	size_t		 i;
	int		 rc;

	*out = NULL;
	*n = 0;
	if ((st = query_prepare(q, "SELECT " RUN_COLUMNS " FROM runs ORDER"
	    " BY start_ns, id", cause)) == NULL)
		return (-1);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		*out = xreallocarray(*out, *n + 1, sizeof **out);
		r = &(*out)[(*n)++];
		memset(r, 0, sizeof *r);
		counts_clear(&r->counts);
		run_read(st, 0, r);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		query_fail(q, cause);
	for (i = 0; rc == SQLITE_DONE && i < *n; i++) {
		if (run_devices(q, &(*out)[i], cause) != 0)
			rc = SQLITE_ERROR;
	}
	if (rc == SQLITE_DONE)
		return (0);
	while (*n > 0)
		query_run_free(&(*out)[--(*n)]);
	free(*out);
	*out = NULL;
	return (-1);
}

/*
 * Fill *p with the fingerprint of run run_id (0: the newest, which may
 * change while a recording runs): it changes when rows arrive.  Reads only
 * maxima of keys, so it can run twice a second.  0, or -1 when the
 * database cannot be read.
 */
int
query_run_poll(struct query *q, int64_t run_id, struct query_poll *p)
{
	memset(p, 0, sizeof *p);
	p->run_id = run_id != 0 ? run_id : query_latest_run(q);
	p->max_step = query_int_arg(q, "SELECT coalesce(max(step), 0) FROM"
	    " steps WHERE run_id = ?1", p->run_id);
	p->max_allocation = query_int(q, "SELECT coalesce(max(id), 0) FROM"
	    " allocations");
	p->max_offload = query_int(q, "SELECT coalesce(max(id), 0) FROM"
	    " offload_events");
	return (p->max_step < 0 || p->max_allocation < 0 ||
	    p->max_offload < 0 ? -1 : 0);
}
