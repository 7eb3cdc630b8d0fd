/*
 * store-groups.c: the allocation_groups summary of a run, kept while the
 * run is written.
 *
 * Every allocation row, once final (freed, or live when the run finishes),
 * adds its bytes to the group of (process, layer, device, stream, alloc
 * step, free step, site), the same columns the rows hold; the process keeps
 * the ranks of a torchrun job apart.  The leak analysis reads
 * these few groups instead of grouping millions of rows (query-leaks.c), so
 * neither it nor the writer pays for a wide index.  The groups live in an
 * open-addressing hash table; a step of 0 stands for NULL.
 *
 * Rows made final before the first step marker wait in a small list and
 * join the groups when the marker comes; when more than
 * STORE_GROUPS_PENDING_MAX wait (an importer, whose markers come after the
 * trace), the list is dropped and the groups are rebuilt from the rows
 * (which get their steps when the marker comes) at finish, so that the
 * list does not grow with the run.  When step numbers are recomputed
 * (late markers, importers), the groups are rebuilt from the rows when the
 * run finishes, in bounded memory (store-regroup.c).
 */
#include "config.h"

#include "store-int.h"

#include <stdlib.h>
#include <string.h>

static int
group_same(const struct store_group *a, const struct store_group *b)
{
	return (a->process_id == b->process_id && a->layer == b->layer &&
	    a->device == b->device &&
	    a->stream == b->stream && a->alloc_step == b->alloc_step &&
	    a->free_step == b->free_step && a->site_id == b->site_id);
}

/*
 * Add g to its group in table gs.  0, or -1 when the group's bytes would
 * pass 2^63 (the group keeps its old sum).
 */
int
store_groups_put(struct store_groups *gs, const struct store_group *g)
{
	struct store_group	*old, *slot;
	size_t			 i, n;

	if (2 * (gs->count + 1) > gs->mask + 1) {
		old = gs->slots;
		n = gs->mask + 1;
		gs->mask = n == 1 ? 15 : 2 * n - 1;	/* small: per pair of steps */
		gs->slots = xcalloc(gs->mask + 1, sizeof *gs->slots);
		gs->count = 0;
		for (i = 0; old != NULL && i < n; i++) {
			if (old[i].blocks != 0)
				(void)store_groups_put(gs, &old[i]);
		}
		free(old);
	}
	for (i = store_group_key_hash(g) & gs->mask;; i = (i + 1) & gs->mask) {
		slot = &gs->slots[i];
		if (slot->blocks == 0) {
			*slot = *g;
			gs->count++;
			return (0);
		}
		if (group_same(slot, g)) {
			if (__builtin_add_overflow(slot->bytes, g->bytes,
			    &slot->bytes))
				return (-1);
			slot->blocks += g->blocks;
			return (0);
		}
	}
}

/* Forget all groups and pending rows (a new run). */
void
store_groups_reset(struct store_groups *gs)
{
	free(gs->slots);
	free(gs->pending);
	memset(gs, 0, sizeof *gs);
	gs->valid = 1;
}

/*
 * Add final allocation a (free_ns EVENT_NONE: live at the end) to its group,
 * or keep it for later when no step boundary is known yet.
 */
void
store_groups_note(struct store *s, const struct store_allocation *a)
{
	struct store_groups	*gs = &s->groups;
	struct store_group	 g;

	if (!gs->valid)
		return;		/* regrouped from the rows at finish */
	if (!store_steps_known(&s->steps, a->process_id)) {
		if (gs->npending == STORE_GROUPS_PENDING_MAX) {
			free(gs->pending);
			gs->pending = NULL;
			gs->npending = gs->pending_alloc = 0;
			gs->valid = 0;
			return;
		}
		if (gs->npending == gs->pending_alloc) {
			gs->pending_alloc = gs->pending_alloc == 0 ? 64 :
			    2 * gs->pending_alloc;
			gs->pending = xreallocarray(gs->pending,
			    gs->pending_alloc, sizeof *gs->pending);
		}
		gs->pending[gs->npending++] = *a;
		return;
	}
	g.process_id = a->process_id;
	g.layer = a->layer;
	g.device = a->device;
	g.stream = a->stream;
	g.alloc_step = store_steps_of(&s->steps, a->process_id, a->alloc_ns);
	g.free_step = a->free_ns == EVENT_NONE ? 0 :
	    store_steps_of(&s->steps, a->process_id, a->free_ns);
	g.site_id = a->site_id;
	g.bytes = (int64_t)a->bytes;
	g.blocks = 1;
	(void)store_groups_put(gs, &g);	/* past 2^63 a sum stays */
}

/* Add the pending rows, now that steps are known (or will never be). */
void
store_groups_flush_pending(struct store *s)
{
	struct store_groups	*gs = &s->groups;
	struct store_group	 g;
	size_t			 i, n = gs->npending;

	gs->npending = gs->pending_alloc = 0;
	for (i = 0; i < n; i++) {
		if (store_steps_known(&s->steps, gs->pending[i].process_id)) {
			store_groups_note(s, &gs->pending[i]);
			continue;
		}
		/* No steps at all: the rows' steps stay NULL. */
		memset(&g, 0, sizeof g);
		g.process_id = gs->pending[i].process_id;
		g.layer = gs->pending[i].layer;
		g.device = gs->pending[i].device;
		g.stream = gs->pending[i].stream;
		g.site_id = gs->pending[i].site_id;
		g.bytes = (int64_t)gs->pending[i].bytes;
		g.blocks = 1;
		(void)store_groups_put(gs, &g);
	}
	free(gs->pending);
	gs->pending = NULL;
}

static void
bind_step(sqlite3_stmt *st, int i, int64_t step)
{
	if (step > 0)
		sqlite3_bind_int64(st, i, step);
	else
		sqlite3_bind_null(st, i);
}

/*
 * Insert group g into allocation_groups with st (store_groups_statement),
 * and add it to the run's step sums
 * (store-alloc-steps.c).  0, or -1 with *cause.
 */
int
store_groups_insert_one(struct store *s, sqlite3_stmt *st,
    const struct store_group *g, char **cause)
{
	store_group_key_bind(s, st, g);
	bind_step(st, 6, g->alloc_step);
	bind_step(st, 7, g->free_step);
	store_sql_bind_id(st, 8, g->site_id);
	sqlite3_bind_int64(st, 9, g->bytes);
	sqlite3_bind_int64(st, 10, g->blocks);
	if (sqlite3_step(st) != SQLITE_DONE)
		return (store_sql_error(s, cause, "cannot group:"));
	sqlite3_reset(st);
	store_alloc_steps_note(&s->step_sums, g);
	return (0);
}

/*
 * Insert the groups of the table into allocation_groups with st (as
 * store_groups_insert_one), and empty the table.  0, or -1 with *cause.
 */
int
store_groups_insert(struct store *s, sqlite3_stmt *st, char **cause)
{
	struct store_groups	*gs = &s->groups;
	size_t			 i;

	for (i = 0; gs->slots != NULL && i <= gs->mask; i++) {
		if (gs->slots[i].blocks != 0 &&
		    store_groups_insert_one(s, st, &gs->slots[i], cause) != 0)
			return (-1);
	}
	store_groups_reset(gs);
	return (0);
}

/*
 * The statement that inserts a group of the current run, for
 * store_groups_insert_one() (the caller finalizes it).  NULL with *cause.
 */
sqlite3_stmt *
store_groups_statement(struct store *s, char **cause)
{
	sqlite3_stmt	*st;

	if (sqlite3_prepare_v2(s->db, "INSERT INTO allocation_groups VALUES"
	    " (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)", -1, &st, NULL) !=
	    SQLITE_OK) {
		store_sql_error(s, cause, "cannot group:");
		return (NULL);
	}
	return (st);
}

/*
 * Write the run's groups, kept while writing (groups.valid; otherwise
 * store_regroup() rebuilds them from the rows), into allocation_groups.
 * 0, or -1 with *cause.
 */
int
store_groups_write(struct store *s, char **cause)
{
	sqlite3_stmt	*st;
	int		 rc;

	if ((st = store_groups_statement(s, cause)) == NULL)
		return (-1);
	store_groups_flush_pending(s);
	rc = store_groups_insert(s, st, cause);
	sqlite3_finalize(st);
	return (rc);
}
