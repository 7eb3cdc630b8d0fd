/*
 * store-alloc-steps.c: the allocation_steps summary of a run, written
 * when it finishes (and again when a merge adds to it).
 *
 * A row per (process, layer, device, stream, step) says what the step
 * allocated (by alloc_step) and what it freed (by free_step); the live
 * bytes at the end of step k are the running sum of alloc_bytes minus
 * freed_bytes up to k.  A step of NULL holds the allocations with no step
 * (made before tracing began); an allocation never freed adds to no
 * freed column.  It is computed from the run's allocation_groups, which
 * store-groups.c has just written, so both tables always say the same;
 * the leak analysis (query-scan.c) then reads O(steps x streams) rows for
 * the series and only the groups live at a step end it asks about.
 *
 * A run's sums are added up in memory as its groups are written
 * (store_alloc_steps_note), in a hash table of at most STORE_STEP_SUMS_MAX
 * rows; a run with more, or with a sum past 2^63, is summed by SQL from
 * its allocation_groups instead (which fails on the overflow as sum()
 * does).  Both give the same rows; the table saves a sort of two rows per
 * group (a second and a half for 600,000 groups).
 */
#include "config.h"

#include "store-int.h"

#include <stdlib.h>
#include <string.h>

/* Forget the sums (a new run); they are valid again, and empty. */
void
store_alloc_steps_reset(struct store_step_sums *t)
{
	free(t->slots);
	memset(t, 0, sizeof *t);
	t->valid = 1;
}

/* The slot of key k, empty if k has none yet.  The table has room. */
static struct store_step_sum *
sum_slot(struct store_step_sums *t, const struct store_group *k)
{
	struct store_step_sum	*e;
	size_t			 i;

	for (i = store_group_key_hash(k) & t->mask;; i = (i + 1) & t->mask) {
		e = &t->slots[i];
		if (e->key.blocks == 0 || (e->key.process_id == k->process_id &&
		    e->key.layer == k->layer && e->key.device == k->device &&
		    e->key.stream == k->stream &&
		    e->key.alloc_step == k->alloc_step))
			return (e);
	}
}

/* Double the table. */
static void
sum_grow(struct store_step_sums *t)
{
	struct store_step_sum	*old = t->slots;
	size_t			 n = t->slots == NULL ? 0 : t->mask + 1, i;

	t->mask = n == 0 ? 255 : 2 * n - 1;
	t->slots = xcalloc(t->mask + 1, sizeof *t->slots);
	for (i = 0; i < n; i++) {
		if (old[i].key.blocks != 0)
			*sum_slot(t, &old[i].key) = old[i];
	}
	free(old);
}

/* Give up the table: the run is summed by SQL. */
static void
sum_drop(struct store_step_sums *t)
{
	store_alloc_steps_reset(t);
	t->valid = 0;
}

/*
 * Add bytes and blocks to the allocated (freed = 0) or freed sums of g's
 * stream at step.  0, or -1 when the table is full or a sum overflows.
 */
static int
sum_add(struct store_step_sums *t, const struct store_group *g,
    int64_t step, int freed)
{
	struct store_group	 k = *g;
	struct store_step_sum	*e;
	int64_t			*bytes, *blocks;

	k.alloc_step = step > 0 ? step : 0;	/* as bind_step() writes it */
	k.free_step = k.site_id = k.bytes = 0;
	k.blocks = 1;
	if (t->slots == NULL || 2 * (t->count + 1) > t->mask + 1) {
		if (t->count >= STORE_STEP_SUMS_MAX)
			return (-1);
		sum_grow(t);
	}
	e = sum_slot(t, &k);
	if (e->key.blocks == 0) {
		e->key = k;
		t->count++;
	}
	bytes = freed ? &e->freed_bytes : &e->alloc_bytes;
	blocks = freed ? &e->freed_blocks : &e->alloc_blocks;
	if (__builtin_add_overflow(*bytes, g->bytes, bytes) ||
	    __builtin_add_overflow(*blocks, g->blocks, blocks))
		return (-1);
	return (0);
}

/*
 * Add group g, as it is written into allocation_groups, to the sums of
 * its alloc step and of its free step (if any).
 */
void
store_alloc_steps_note(struct store_step_sums *t, const struct store_group *g)
{
	if (!t->valid)
		return;
	if (sum_add(t, g, g->alloc_step, 0) != 0 || (g->free_step != 0 &&
	    sum_add(t, g, g->free_step, 1) != 0))
		sum_drop(t);
}

/*
 * (Re)write the allocation_steps rows of the runs the SQL expression runs
 * names (a parenthesised list or subquery of run ids, e.g. "(3)") from
 * their allocation_groups, inside the current transaction.  0, or -1 with
 * *cause.
 */
int
store_alloc_steps_write(struct store *s, const char *runs, char **cause)
{
	char	*sql;
	int	 rc;

	xasprintf(&sql, "DELETE FROM allocation_steps WHERE run_id IN %s;"
	    " INSERT INTO allocation_steps SELECT run_id, process_id, layer,"
	    " device, stream, step, sum(ab), sum(an), sum(fb), sum(fn) FROM"
	    " (SELECT run_id, process_id, layer, device, stream, alloc_step"
	    " AS step, bytes AS ab, blocks AS an, 0 AS fb, 0 AS fn FROM"
	    " allocation_groups WHERE run_id IN %s UNION ALL SELECT run_id,"
	    " process_id, layer, device, stream, free_step, 0, 0, bytes,"
	    " blocks FROM allocation_groups WHERE run_id IN %s AND free_step"
	    " IS NOT NULL) GROUP BY run_id, process_id, layer, device, stream,"
	    " step;", runs, runs, runs);
	rc = store_sql_exec(s, sql, "cannot sum the steps", cause);
	free(sql);
	return (rc);
}

/*
 * Write the allocation_steps rows of the current run, which has none yet,
 * once its groups are written: from the sums in memory, or by
 * store_alloc_steps_write() when they were given up.  0, or -1 with
 * *cause.
 */
int
store_alloc_steps_write_run(struct store *s, char **cause)
{
	struct store_step_sums	*t = &s->step_sums;
	struct store_step_sum	*e;
	sqlite3_stmt		*st;
	char			*runs;
	size_t			 i;
	int			 rc = 0;

	if (!t->valid) {
		xasprintf(&runs, "(%lld)", (long long)s->run_id);
		rc = store_alloc_steps_write(s, runs, cause);
		free(runs);
		return (rc);
	}
	if (sqlite3_prepare_v2(s->db, "INSERT INTO allocation_steps VALUES"
	    " (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)", -1, &st, NULL) !=
	    SQLITE_OK)
		return (store_sql_error(s, cause, "cannot sum the steps:"));
	for (i = 0; t->slots != NULL && i <= t->mask && rc == 0; i++) {
		e = &t->slots[i];
		if (e->key.blocks == 0)
			continue;
		store_group_key_bind(s, st, 0, &e->key);
		store_sql_bind_id(st, 6, e->key.alloc_step);
		sqlite3_bind_int64(st, 7, e->alloc_bytes);
		sqlite3_bind_int64(st, 8, e->alloc_blocks);
		sqlite3_bind_int64(st, 9, e->freed_bytes);
		sqlite3_bind_int64(st, 10, e->freed_blocks);
		if (sqlite3_step(st) != SQLITE_DONE)
			rc = store_sql_error(s, cause, "cannot sum the steps:");
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	store_alloc_steps_reset(t);
	return (rc);
}
