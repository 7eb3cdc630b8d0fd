/*
 * t-store.c: the store round trip.  A known set of events goes in through
 * a store source; the same rows and sums come back out of the file.  Also
 * the errors for files that are not ours, newer schemas, and atomic
 * writes that fail; and the groups of a bulk run, summed as its rows are
 * inserted or rebuilt from its rows when steps came late, through sorted
 * runs on disk (built with STORE_GROUPS_MAX of 4), equal SQL's GROUP BY.
 */
#include "config.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vramtrace.h"
#include "query.h"
#include "tap.h"

#define T(n)	(1000000000ULL * 1700000000ULL + (uint64_t)(n) * 1000)
#define MiB	(1024 * 1024)

static struct store_source *src;

static void
put(struct event *ev)
{
	char	*cause = NULL;

	if (store_source_event(src, ev, &cause) != 0) {
		printf("# %s\n", cause);
		exit(1);
	}
}

static void
string(uint32_t id, const char *text)
{
	struct event	ev = { .type = EVENT_STRING };

	ev.u.string.id = id;
	ev.u.string.length = (uint32_t)strlen(text);
	ev.u.string.text = text;
	put(&ev);
}

static void
mem(int type, uint64_t t, uint64_t addr, uint64_t bytes, uint64_t stream,
    uint32_t site)
{
	struct event	ev = { .type = (uint8_t)type, .time_ns = t };

	ev.u.alloc.address = addr;
	ev.u.alloc.bytes = bytes;
	ev.u.alloc.requested = EVENT_NONE;
	ev.u.alloc.stream = stream;
	ev.u.alloc.correlation = EVENT_NONE;
	ev.u.alloc.site = site;
	ev.u.alloc.layer = EVENT_LAYER_POOL;
	put(&ev);
}

static void
simple(int type, uint64_t t)
{
	struct event	ev = { .type = (uint8_t)type, .time_ns = t };

	ev.u.step.step = -1;
	put(&ev);
}

static int64_t
one(sqlite3 *db, const char *sql)
{
	sqlite3_stmt	*st;
	int64_t		 v = -999;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		printf("# %s: %s\n", sql, sqlite3_errmsg(db));
		return (v);
	}
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_type(st, 0) == SQLITE_NULL ? -1 :
		    sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return (v);
}

/*
 * A run of NBIG allocations, every size twice (ties order by id), the odd
 * ones on stream 7 and freed at once, the even ones on 8 and left live.
 */
#define NBIG	10050
/* The rows of each order written: an eighth of the run's (store-top.c). */
#define NBIG_KEPT	(NBIG / 8)
static void
write_big(const char *path)
{
	struct store_run_info	 info = { .source = "replay" };
	struct store		*s;
	char			*cause = NULL, frame[64];
	uint64_t		 i, bytes;

	if ((s = store_open(path, STORE_CREATE, &cause)) == NULL ||
	    store_run_begin(s, &info, &cause) != 0) {
		printf("# %s\n", cause);
		exit(1);
	}
	src = store_source_create(s, "big");
	/* Five stacks, and every seventh block without one. */
	for (i = 0; i < 5; i++) {
		snprintf(frame, sizeof frame, "f%d\tbig.py\t%d\n", (int)i,
		    (int)i + 1);
		string(10 + (uint32_t)i, frame);
	}
	for (i = 0; i < NBIG; i++) {
		bytes = 4096 * ((i * 7919) % NBIG / 2 + 1);
		mem(EVENT_ALLOC, T(2 * i + 1), 0x100000 + 0x1000 * i, bytes,
		    i % 2 == 0 ? 8 : 7, i % 7 == 0 ? 0 : 10 + (uint32_t)(i % 5));
		if (i % 2 == 1)
			mem(EVENT_FREE, T(2 * i + 2), 0x100000 + 0x1000 * i,
			    bytes, 7, 0);
	}
	if (store_source_drain(src, &cause) != 0)
		exit(1);
	store_source_free(src);
	if (store_run_finish(s, 0, T(3 * NBIG), 1, &cause) != 0 ||
	    store_close(s, &cause) != 0) {
		printf("# %s\n", cause);
		exit(1);
	}
}

/*
 * Page every block of the big run in `sort` order from offset `at` through
 * query_blocks (with a stream filter when stream is not 0) and compare
 * each row with the order SQLite gives over all rows.
 */
static int
big_page_ok(struct query *q, sqlite3 *db, enum block_sort sort,
    int desc, uint64_t stream, int64_t at)
{
	static const char *const columns[] = {
		[SORT_SIZE] = "bytes", [SORT_AGE] = "alloc_ns",
		[SORT_STREAM] = "stream", [SORT_SITE] = "site_id"
	};
	struct block_filter	 f;
	struct block_row	 rows[40];
	sqlite3_stmt		*st;
	char			*cause = NULL, sql[256];
	int			 n, i = 0, good;

	memset(&f, 0, sizeof f);
	f.layer = -1;
	f.sort = sort;
	f.descending = desc;
	f.has_stream = stream != 0;
	f.stream = stream;
	if ((n = query_blocks(q, &f, at, rows, 40, &cause)) != 40) {
		printf("# %d rows: %s\n", n, cause != NULL ? cause : "");
		return (0);
	}
	snprintf(sql, sizeof sql, "SELECT id FROM allocations WHERE ?1 = 0 OR"
	    " stream = ?1 ORDER BY %s %s, id LIMIT 40 OFFSET ?2",
	    columns[sort], desc ? "DESC" : "ASC");
	sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	sqlite3_bind_int64(st, 1, (int64_t)stream);
	sqlite3_bind_int64(st, 2, at);
	good = 1;
	while (sqlite3_step(st) == SQLITE_ROW && i < n)
		good &= sqlite3_column_int64(st, 0) == rows[i++].id;
	sqlite3_finalize(st);
	return (good && i == 40);
}

/* Are the pages of the big run at 0, k - 40 and k - 20 right? */
static int
big_pages_ok(struct query *q, sqlite3 *db, enum block_sort sort,
    int desc, uint64_t stream, int64_t k)
{
	return (big_page_ok(q, db, sort, desc, stream, 0) &&
	    big_page_ok(q, db, sort, desc, stream, k - 40) &&
	    big_page_ok(q, db, sort, desc, stream, k - 20));
}

static void
check_big(void)
{
	static const struct {
		enum block_sort	 sort;
		int			 desc;
		const char		*name;
	} orders[] = {
		{ SORT_SIZE, 0, "size, smallest first" },
		{ SORT_AGE, 0, "age, oldest first" },
		{ SORT_AGE, 1, "age, newest first" },
		{ SORT_STREAM, 0, "stream" },
		{ SORT_STREAM, 1, "stream, descending" },
		{ SORT_SITE, 0, "site" },
		{ SORT_SITE, 1, "site, descending" }
	};
	struct block_filter	 f;
	struct query		*q;
	sqlite3			*db;
	char			 path[512], sql[256], *cause = NULL;
	size_t			 i;

	snprintf(path, sizeof path, "%s/big.db", tap_tmpdir());
	write_big(path);
	sqlite3_open(path, &db);
	tap_eq(one(db, "SELECT count(*) FROM allocation_top"), NBIG_KEPT,
	    "allocation_top keeps an eighth (%d) of the %d rows", NBIG_KEPT,
	    NBIG);
	snprintf(sql, sizeof sql, "SELECT count(*) FROM allocation_top t JOIN"
	    " (SELECT id FROM allocations ORDER BY bytes DESC, id LIMIT %d) a"
	    " ON a.id = t.allocation_id", NBIG_KEPT);
	tap_eq(one(db, sql), NBIG_KEPT, "the largest, ties by id");
	if ((q = query_open(path, &cause)) == NULL) {
		printf("# %s\n", cause);
		exit(1);
	}
	memset(&f, 0, sizeof f);
	f.layer = -1;
	f.sort = SORT_SIZE;
	f.descending = 1;
	tap_eq(query_blocks_quick(q, &f), NBIG_KEPT, "all blocks by size:"
	    " %d read quickly", NBIG_KEPT);
	tap_ok(big_page_ok(q, db, SORT_SIZE, 1, 0, 0) &&
	    big_page_ok(q, db, SORT_SIZE, 1, 0, NBIG_KEPT - 40),
	    "pages of the largest blocks come in SQLite's order");
	tap_ok(big_page_ok(q, db, SORT_SIZE, 1, 0, NBIG_KEPT - 20) &&
	    big_page_ok(q, db, SORT_SIZE, 1, 0, 9980),
	    "pages past them too");
	for (i = 0; i < sizeof orders / sizeof orders[0]; i++) {
		f.sort = orders[i].sort;
		f.descending = orders[i].desc;
		tap_eq(query_blocks_quick(q, &f), NBIG_KEPT, "all blocks by"
		    " %s: %d read quickly", orders[i].name, NBIG_KEPT);
		tap_ok(big_pages_ok(q, db, orders[i].sort, orders[i].desc, 0,
		    NBIG_KEPT), "by %s, in SQLite's order, and past them",
		    orders[i].name);
	}
	f.sort = SORT_SIZE;
	f.descending = 1;
	f.has_stream = 1;
	f.stream = 8;
	tap_eq(query_blocks_quick(q, &f), NBIG_KEPT, "on stream 8: %d read"
	    " quickly", NBIG_KEPT);
	tap_ok(big_page_ok(q, db, SORT_SIZE, 1, 8, 4980),
	    "and its last page is right");
	f.has_stream = 0;
	f.live_only = 1;
	tap_eq(query_blocks_quick(q, &f), -1, "live blocks: no bound");
	query_close(q);
	sqlite3_close(db);

	/* Fewer kept rows than a stream has: the first come from them. */
	snprintf(path, sizeof path, "%s/big100.db", tap_tmpdir());
	setenv("VRAMTRACE_TOP_ROWS", "100", 1);
	write_big(path);
	unsetenv("VRAMTRACE_TOP_ROWS");
	sqlite3_open(path, &db);
	if ((q = query_open(path, &cause)) == NULL) {
		printf("# %s\n", cause);
		exit(1);
	}
	tap_eq(one(db, "SELECT count(*) FROM allocation_heads WHERE sort ="
	    " 6"), 200, "VRAMTRACE_TOP_ROWS=100: the largest 100 of 2"
	    " streams");
	f.live_only = 0;
	f.has_stream = 1;
	tap_eq(query_blocks_quick(q, &f), 100, "on stream 8: 100 read"
	    " quickly");
	tap_ok(big_pages_ok(q, db, SORT_SIZE, 1, 8, 100), "pages of stream 8"
	    " by size come in SQLite's order, and past them");
	f.has_stream = 0;
	for (i = 0; i < sizeof orders / sizeof orders[0]; i++) {
		f.sort = orders[i].sort;
		f.descending = orders[i].desc;
		tap_ok(query_blocks_quick(q, &f) == 100 &&
		    big_pages_ok(q, db, orders[i].sort, orders[i].desc, 0, 100),
		    "100 kept by %s: in SQLite's order, and past them",
		    orders[i].name);
	}
	query_close(q);
	sqlite3_close(db);
}

static void
write_known(const char *path)
{
	struct store_run_info	 info = { .source = "replay" };
	struct store		*s;
	struct event		 ev;
	char			*cause = NULL;

	s = store_open(path, STORE_CREATE, &cause);
	if (s == NULL || store_run_begin(s, &info, &cause) != 0) {
		printf("# %s\n", cause);
		exit(1);
	}
	src = store_source_create(s, "known");
	string(1, "host-a");
	string(2, "forward\ttrain.py\t42\nmain\ttrain.py\t90\n");
	memset(&ev, 0, sizeof ev);
	ev.type = EVENT_PROCESS_START;
	ev.time_ns = T(0);
	ev.u.process.pid = 77;
	ev.u.process.rank = 0;
	ev.u.process.local_rank = 0;
	ev.u.process.host = 1;
	put(&ev);
	memset(&ev, 0, sizeof ev);
	ev.type = EVENT_STREAM_CREATE;
	ev.time_ns = T(0);
	ev.u.stream.stream = 14;
	ev.u.stream.handle = 0xabc;
	ev.u.stream.context = 1;
	put(&ev);
	mem(EVENT_ALLOC, T(1), 0x1000, 1 * MiB, 13, 2);	/* A */
	mem(EVENT_ALLOC, T(2), 0x2000, 2 * MiB, 14, 2);	/* B, never freed */
	mem(EVENT_ALLOC, T(3), 0x3000, 4 * MiB, 13, 0);	/* C */
	simple(EVENT_STEP_END, T(4));
	/* Apply what the source holds, then commit: C is written while live. */
	if (store_source_drain(src, &cause) != 0 ||
	    store_commit(s, &cause) != 0)
		exit(1);
	mem(EVENT_FREE, T(5), 0x1000, 1 * MiB, 13, 0);
	mem(EVENT_FREE, T(6), 0x3000, 4 * MiB, 13, 0);
	mem(EVENT_FREE, T(6), 0x9000, 8 * MiB, 13, 0);	/* D: no alloc */
	mem(EVENT_ALLOC, T(6), 0x5000, 16 * MiB, 13, 0);	/* E1 */
	mem(EVENT_ALLOC, T(8), 0x5000, 16 * MiB, 13, 0);	/* E2: lost free */
	memset(&ev, 0, sizeof ev);
	ev.type = EVENT_STREAM_DESTROY;
	ev.time_ns = T(6);
	ev.u.stream.stream = 14;
	put(&ev);
	simple(EVENT_STEP_END, T(7));
	memset(&ev, 0, sizeof ev);
	ev.type = EVENT_MEMCPY;
	ev.time_ns = T(5);
	ev.u.memcpy.bytes = 3 * MiB;
	ev.u.memcpy.stream = 14;
	ev.u.memcpy.end_ns = T(6);
	ev.u.memcpy.kind = EVENT_COPY_DTOH;
	ev.u.memcpy.dst_device = -1;
	put(&ev);
	memset(&ev, 0, sizeof ev);
	ev.type = EVENT_OFFLOAD;
	ev.time_ns = T(5);
	ev.u.offload.kind = EVENT_OFFLOAD_REAP;
	ev.u.offload.bytes = 4096;
	ev.u.offload.stream = EVENT_NONE;
	put(&ev);
	memset(&ev, 0, sizeof ev);
	ev.type = EVENT_DROPPED;
	ev.u.dropped.count = 5;
	put(&ev);
	put(&ev);
	/*
	 * Out of order, as CUPTI delivers the buffers of two threads: X is
	 * allocated again (T 11) before its earlier free (T 10) arrives.
	 */
	mem(EVENT_ALLOC, T(9), 0x7000, 32 * MiB, 13, 0);
	mem(EVENT_ALLOC, T(11), 0x7000, 32 * MiB, 13, 0);
	mem(EVENT_FREE, T(10), 0x7000, 32 * MiB, 13, 0);
	mem(EVENT_FREE, T(12), 0x7000, 32 * MiB, 13, 0);
	if (store_source_drain(src, &cause) != 0)
		exit(1);
	store_source_free(src);
	if (store_run_finish(s, 3, T(9), 1, &cause) != 0 ||
	    store_close(s, &cause) != 0) {
		printf("# %s\n", cause);
		exit(1);
	}
}

#define NROWS	3000
#define NSTEPS	40
#define TB(n)	(1000000000ULL + (uint64_t)(n) * 1000)

static void
die(const char *what, char *cause)
{
	printf("# %s: %s\n", what, cause != NULL ? cause : "?");
	exit(1);
}

/*
 * One bulk run, as an import writes it: NROWS allocations on three
 * streams, each freed some steps later (every ninth never), NROWS / 10
 * written whole with no times (held since before the trace), then NSTEPS
 * step ends; the rows wait for the steps and are summed into their groups
 * as they are inserted.  With `early` steps ended before the frees, rows
 * are written with those steps and renumbered when the others come, so
 * that the groups are rebuilt from the rows (store-regroup.c).  The test
 * is built with a groups table of 4, so that they go through many sorted
 * runs on disk either way.
 */
/* The end of step i of write_bulk's run. */
static void
bulk_step(struct store *s, uint64_t i)
{
	char	*cause = NULL;

	if (store_rows_step(s, 0, (int64_t)i, TB((i - 1) * 2 * NROWS /
	    NSTEPS), TB(i * 2 * NROWS / NSTEPS), NULL, &cause) != 0)
		die("step", cause);
}

static void
write_bulk(const char *path, int flags, int early)
{
	struct store_run_info	 info = { .source = "import" };
	struct store_allocation	 a;
	struct store		*s;
	char			*cause = NULL;
	uint64_t		 i, life;

	if ((s = store_open(path, flags | STORE_ATOMIC | STORE_BULK,
	    &cause)) == NULL || store_run_begin(s, &info, &cause) != 0)
		die("open", cause);
	for (i = 0; i < NROWS; i++) {
		memset(&a, 0, sizeof a);
		a.layer = EVENT_LAYER_BLOCK;
		a.stream = i % 3;
		a.address = 0x100000 + 0x1000 * i;
		a.bytes = 512 * (i % 11 + 1);
		a.requested = a.correlation = EVENT_NONE;
		a.alloc_ns = TB(i);
		a.free_requested_ns = a.free_ns = EVENT_NONE;
		a.site_id = 0;
		if (store_rows_alloc_begin(s, &a, &cause) != 0)
			die("alloc", cause);
	}
	for (i = 0; i < NROWS / 10; i++) {	/* held since before the trace */
		a.stream = i % 3;
		a.address = 0x900000000 + 0x1000 * i;
		a.alloc_ns = a.free_requested_ns = a.free_ns = EVENT_NONE;
		if (store_rows_allocation(s, &a, &cause) != 0)
			die("held", cause);
	}
	for (i = 1; i <= (uint64_t)early; i++)
		bulk_step(s, i);
	for (i = 0; i < NROWS; i++) {
		if (i % 9 == 0)
			continue;
		memset(&a, 0, sizeof a);
		a.layer = EVENT_LAYER_BLOCK;
		a.address = 0x100000 + 0x1000 * i;
		life = (i * 7919) % NROWS;
		if (store_rows_alloc_end(s, &a, EVENT_NONE, TB(i + life),
		    &cause) != 0)
			die("free", cause);
	}
	for (i = (uint64_t)early + 1; i <= NSTEPS; i++)
		bulk_step(s, i);
	if (store_rows_assign_steps(s, &cause) != 0 ||
	    store_run_finish(s, 0, 0, 1, &cause) != 0 ||
	    store_close(s, &cause) != 0)
		die("finish", cause);
}

#define GROUPS_SQL "SELECT run_id, process_id, layer, device, stream," \
	" alloc_step, free_step, site_id, sum(bytes), count(*)" \
	" FROM allocations GROUP BY run_id, process_id, layer, device," \
	" stream, alloc_step, free_step, site_id"
#define GROUPS_TABLE "SELECT * FROM allocation_groups"
#define STEPS_SQL "SELECT run_id, process_id, layer, device, stream, step," \
	" sum(ab), sum(an), sum(fb), sum(fn) FROM (SELECT run_id," \
	" process_id, layer, device, stream, alloc_step AS step, bytes AS" \
	" ab, 1 AS an, 0 AS fb, 0 AS fn FROM allocations UNION ALL SELECT" \
	" run_id, process_id, layer, device, stream, free_step, 0, 0," \
	" bytes, 1 FROM allocations WHERE free_step IS NOT NULL) GROUP BY" \
	" run_id, process_id, layer, device, stream, step"
#define STEPS_TABLE "SELECT * FROM allocation_steps"

/* Check the file's groups and step sums against SQL's, for `runs`. */
static void
check_regroup(const char *path, int runs)
{
	sqlite3	*db;

	if (sqlite3_open(path, &db) != SQLITE_OK)
		die("open", (char *)sqlite3_errmsg(db));
	tap_eq(one(db, "SELECT count(DISTINCT run_id) FROM allocations"),
	    runs, "%d run(s) of rows", runs);
	tap_ok(one(db, "SELECT count(*) FROM allocation_groups WHERE"
	    " run_id = 1") > 20 * STORE_GROUPS_MAX, "a run's groups are many"
	    " times what the table holds (%d): they went through sorted runs",
	    STORE_GROUPS_MAX);
	tap_eq(one(db, "SELECT count(*) FROM (" GROUPS_SQL " EXCEPT "
	    GROUPS_TABLE ")"), 0, "every group of the rows is in"
	    " allocation_groups");
	tap_eq(one(db, "SELECT count(*) FROM (" GROUPS_TABLE " EXCEPT "
	    GROUPS_SQL ")"), 0, "and allocation_groups holds nothing else");
	tap_eq(one(db, "SELECT count(*) FROM allocation_groups") -
	    one(db, "SELECT count(*) FROM (" GROUPS_SQL ")"), 0,
	    "each group once");
	tap_eq(one(db, "SELECT count(*) FROM (" STEPS_SQL " EXCEPT "
	    STEPS_TABLE ")"), 0, "every step sum of the rows is in"
	    " allocation_steps");
	tap_eq(one(db, "SELECT count(*) FROM (" STEPS_TABLE " EXCEPT "
	    STEPS_SQL ")"), 0, "and allocation_steps holds nothing else");
	sqlite3_close(db);
}

int
main(void)
{
	char		 path[512], other[512], *cause = NULL;
	sqlite3		*db;
	struct store	*s;
	FILE		*f;

	tap_plan(80);
	snprintf(path, sizeof path, "%s/known.db", tap_tmpdir());
	write_known(path);
	sqlite3_open(path, &db);
	tap_eq(one(db, "SELECT count(*) FROM allocations"), 8,
	    "eight allocation rows (A, B, C, D, E1, E2, X1, X2)");
	tap_eq(one(db, "SELECT sum(bytes) FROM allocations"),
	    (1 + 2 + 4 + 8 + 16 + 16 + 64) * MiB, "their bytes add up");
	tap_eq(one(db, "SELECT free_ns FROM allocations WHERE address ="
	    " 0x7000 AND alloc_ns = 1700000000000009000"), (int64_t)T(10),
	    "events out of order: X1's late free ends X1, not X2");
	tap_eq(one(db, "SELECT free_ns FROM allocations WHERE address ="
	    " 0x7000 AND alloc_ns = 1700000000000011000"), (int64_t)T(12),
	    "and X2 ends with its own free");
	tap_eq(one(db, "SELECT count(*) FROM allocations WHERE free_ns IS"
	    " NULL"), 2, "B and E2 are live at the end");
	tap_eq(one(db, "SELECT sum(bytes) FROM live_blocks"), 18 * MiB,
	    "live_blocks holds their bytes");
	tap_eq(one(db, "SELECT free_ns FROM allocations WHERE address ="
	    " 0x3000"), (int64_t)T(6), "C, written while live, got its free"
	    " time");
	tap_eq(one(db, "SELECT free_step FROM allocations WHERE address ="
	    " 0x3000"), 2, "and its free step");
	tap_eq(one(db, "SELECT alloc_step FROM allocations WHERE address ="
	    " 0x1000"), 1, "A was allocated in step 1");
	tap_eq(one(db, "SELECT free_step FROM allocations WHERE address ="
	    " 0x1000"), 2, "and freed in step 2");
	tap_eq(one(db, "SELECT alloc_ns FROM allocations WHERE address ="
	    " 0x9000"), -1, "D (freed, never seen allocated) has no alloc"
	    " time");
	tap_eq(one(db, "SELECT free_ns FROM allocations WHERE address ="
	    " 0x5000 AND alloc_ns = " "1700000000000006000"),
	    (int64_t)T(8), "E1 ends where E2 starts");
	tap_eq(one(db, "SELECT alloc_step FROM allocations WHERE address ="
	    " 0x5000 AND free_ns IS NULL"), 3, "E2 is after the last step");
	tap_eq(one(db, "SELECT count(*) FROM steps"), 2, "two steps");
	tap_eq(one(db, "SELECT start_ns FROM steps WHERE step = 2"),
	    (int64_t)T(4), "step 2 starts where step 1 ends");
	tap_eq(one(db, "SELECT destroyed_ns FROM streams WHERE stream = 14"),
	    (int64_t)T(6), "stream 14's destroy time");
	tap_eq(one(db, "SELECT count(*) FROM sites"), 1,
	    "two allocations with one stack make one site");
	tap_ok(one(db, "SELECT count(*) FROM sites WHERE label ="
	    " 'train.py:42 forward'") == 1, "the site is labelled by its"
	    " innermost frame");
	tap_eq(one(db, "SELECT count(*) FROM frames"), 2, "two frames");
	tap_eq(one(db, "SELECT bytes FROM memcpys WHERE kind = 2"), 3 * MiB,
	    "the copy");
	tap_eq(one(db, "SELECT count(*) FROM offload_events WHERE kind ="
	    " 'reap' AND step = 2"), 1, "the offload event, by name, in its"
	    " step");
	tap_eq(one(db, "SELECT sum(count) FROM dropped_records"), 10,
	    "dropped records add up");
	tap_eq(one(db, "SELECT complete + exit_status FROM runs"), 4,
	    "the run is complete with its exit status");
	tap_eq(one(db, "SELECT live_bytes FROM step_growth WHERE layer = 1"
	    " AND step = 2"), (2 + 16) * MiB, "step_growth: live bytes at"
	    " the end of step 2");
	sqlite3_close(db);

	s = store_open(path, STORE_CREATE, &cause);
	tap_ok(s == NULL && strstr(cause, "already exists") != NULL,
	    "creating over a database is refused: %s", cause);
	free(cause);

	snprintf(other, sizeof other, "%s/text.db", tap_tmpdir());
	f = fopen(other, "w");
	fputs("hello, I am not a database, but I am long enough to have a "
	    "header of one hundred bytes or so, which SQLite reads first.\n",
	    f);
	fclose(f);
	s = store_open(other, STORE_APPEND, &cause);
	tap_ok(s == NULL && strstr(cause, "not a vramtrace database") !=
	    NULL, "appending to a text file is refused: %s", cause);
	free(cause);

	snprintf(other, sizeof other, "%s/atomic.db", tap_tmpdir());
	s = store_open(other, STORE_CREATE | STORE_ATOMIC, &cause);
	store_abort(s);
	tap_ok(access(other, F_OK) != 0, "an aborted atomic store leaves no "
	    "file");
	check_big();

	snprintf(other, sizeof other, "%s/regroup.db", tap_tmpdir());
	write_bulk(other, STORE_CREATE, 0);
	check_regroup(other, 1);
	write_bulk(other, STORE_APPEND, 0);
	check_regroup(other, 2);
	snprintf(other, sizeof other, "%s/late.db", tap_tmpdir());
	write_bulk(other, STORE_CREATE, NSTEPS / 2);
	check_regroup(other, 1);
	return (tap_done());
}
