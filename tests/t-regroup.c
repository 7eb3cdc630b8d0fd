/*
 * t-regroup.c: a run's groups rebuilt from its rows at finish
 * (store-regroup.c), built with STORE_REGROUP_MAX so small that the
 * groups go through many sorted runs on disk and their merge.  A bulk
 * run (steps after the rows, as an import writes) must give the
 * allocation_groups and allocation_steps that SQL's GROUP BY gives from
 * its rows, on a new file and appended to one.
 */
#include "config.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "vramtrace.h"
#include "tap.h"

#define T(n)	(1000000000ULL + (uint64_t)(n) * 1000)
#define NROWS	3000
#define NSTEPS	40

static void
die(const char *what, char *cause)
{
	printf("# %s: %s\n", what, cause != NULL ? cause : "?");
	exit(1);
}

/*
 * One bulk run: NROWS allocations on three streams and seven sites, each
 * freed some steps later (every ninth never), then NSTEPS step ends.
 */
static void
write_run(const char *path, int flags)
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
		a.alloc_ns = T(i);
		a.free_requested_ns = a.free_ns = EVENT_NONE;
		a.site_id = 0;
		if (store_rows_alloc_begin(s, &a, &cause) != 0)
			die("alloc", cause);
	}
	for (i = 0; i < NROWS; i++) {
		if (i % 9 == 0)
			continue;
		memset(&a, 0, sizeof a);
		a.layer = EVENT_LAYER_BLOCK;
		a.address = 0x100000 + 0x1000 * i;
		life = (i * 7919) % NROWS;
		if (store_rows_alloc_end(s, &a, EVENT_NONE, T(i + life),
		    &cause) != 0)
			die("free", cause);
	}
	for (i = 1; i <= NSTEPS; i++) {
		if (store_rows_step(s, 0, (int64_t)i, T((i - 1) * 2 * NROWS /
		    NSTEPS), T(i * 2 * NROWS / NSTEPS), NULL, &cause) != 0)
			die("step", cause);
	}
	if (store_rows_assign_steps(s, &cause) != 0 ||
	    store_run_finish(s, 0, 0, &cause) != 0 ||
	    store_close(s, &cause) != 0)
		die("finish", cause);
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
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return (v);
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
check(const char *path, int runs)
{
	sqlite3	*db;

	if (sqlite3_open(path, &db) != SQLITE_OK)
		die("open", (char *)sqlite3_errmsg(db));
	tap_eq(one(db, "SELECT count(DISTINCT run_id) FROM allocations"),
	    runs, "%d run(s) of rows", runs);
	tap_ok(one(db, "SELECT count(*) FROM allocation_groups WHERE"
	    " run_id = 1") > 20 * STORE_REGROUP_MAX, "a run's groups are many"
	    " times what the table holds (%d): they went through sorted runs",
	    STORE_REGROUP_MAX);
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
	char	path[512];

	tap_plan(14);
	snprintf(path, sizeof path, "%s/regroup.db", tap_tmpdir());
	write_run(path, STORE_CREATE);
	check(path, 1);
	write_run(path, STORE_APPEND);
	check(path, 2);
	return (tap_done());
}
