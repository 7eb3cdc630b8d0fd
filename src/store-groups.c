/*
 * store-groups.c: the allocation_groups summary of a run, kept while the
 * run is written.
 *
 * Every allocation row, once final (freed, or live when the run finishes),
 * adds its bytes to the group of (process, layer, device, stream, alloc
 * step, free step, site), the same columns the rows hold; the process keeps
 * the ranks of a torchrun job apart.  The leak analysis reads
 * these few groups instead of grouping millions of rows (query-leaks.c), so
 * neither it nor the writer pays for a wide index.  The groups are summed
 * in bounded memory (store-groups-table.c); a step of 0 stands for NULL.
 *
 * Rows made final before the first step marker wait in a small list and
 * join the groups when the marker comes; when more than
 * STORE_GROUPS_PENDING_MAX wait, the list is dropped and the groups are
 * rebuilt from the rows (which get their steps when the marker comes) at
 * finish, so that the list does not grow with the run.  A bulk load's rows
 * wait for their steps in store-pending.c and join the groups as they are
 * inserted with them.  When step numbers are recomputed for rows already
 * written (late markers), the groups are rebuilt from the rows when the
 * run finishes (store-regroup.c).
 */
#include "config.h"

#include "store-int.h"

#include <stdlib.h>
#include <string.h>

/* Forget all groups and pending rows (a new run). */
void
store_groups_reset(struct store_groups *gs)
{
	store_groups_table_free(gs);
	free(gs->pending);
	gs->pending = NULL;
	gs->npending = gs->pending_alloc = 0;
	gs->valid = 1;
}

/*
 * Give up keeping the groups while writing: they are rebuilt from the rows
 * at finish (store-regroup.c), which reports what went wrong, if anything
 * still does.
 */
static void
groups_give_up(struct store *s)
{
	store_groups_reset(&s->groups);
	s->groups.valid = 0;
}

/*
 * The group of final row a alone, with the steps known now; steps stay
 * NULL (0) for a process that has none.
 */
static void
groups_of(struct store *s, const struct store_allocation *a,
    struct store_group *g)
{
	int	known = store_steps_known(&s->steps, a->process_id);

	g->process_id = a->process_id;
	g->layer = a->layer;
	g->device = a->device;
	g->stream = a->stream;
	g->alloc_step = known ? store_steps_of(&s->steps, a->process_id,
	    a->alloc_ns) : 0;
	g->free_step = !known || a->free_ns == EVENT_NONE ? 0 :
	    store_steps_of(&s->steps, a->process_id, a->free_ns);
	g->site_id = a->site_id;
	g->bytes = (int64_t)a->bytes;
	g->blocks = 1;
}

/*
 * Add final allocation a (free_ns EVENT_NONE: live at the end) to its group,
 * or keep it for later when no step boundary is known yet (but for a bulk
 * load, whose steps are all known when its rows come).
 */
void
store_groups_note(struct store *s, const struct store_allocation *a)
{
	struct store_groups	*gs = &s->groups;
	struct store_group	 g;

	if (!gs->valid)
		return;		/* regrouped from the rows at finish */
	if (!(s->flags & STORE_BULK) &&
	    !store_steps_known(&s->steps, a->process_id)) {
		if (gs->npending == STORE_GROUPS_PENDING_MAX) {
			groups_give_up(s);
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
	groups_of(s, a, &g);
	if (store_groups_table_add(s, &g, NULL) != 0)
		groups_give_up(s);
}

/* Add the pending rows, now that steps are known (or will never be). */
void
store_groups_flush_pending(struct store *s)
{
	struct store_groups	*gs = &s->groups;
	struct store_allocation	*pending = gs->pending;
	struct store_group	 g;
	size_t			 i, n = gs->npending;

	gs->pending = NULL;
	gs->npending = gs->pending_alloc = 0;
	for (i = 0; i < n && gs->valid; i++) {
		groups_of(s, &pending[i], &g);
		if (store_groups_table_add(s, &g, NULL) != 0)
			groups_give_up(s);
	}
	free(pending);
}

static void
bind_step(sqlite3_stmt *st, int i, int64_t step)
{
	if (step > 0)
		sqlite3_bind_int64(st, i, step);
	else
		sqlite3_bind_null(st, i);
}

/* Groups bound for their INSERT (store_groups_write). */
struct groups_batch {
	struct store_insert	 insert;
	struct store_group	 g[STORE_INSERT_MANY];
	size_t			 n;
};

/* Bind group row of store arg (store_insert_bind_fn). */
static void
groups_bind(sqlite3_stmt *st, int skip, const void *row, void *arg)
{
	const struct store_group	*g = row;

	store_group_key_bind(arg, st, skip, g);
	bind_step(st, skip + 6, g->alloc_step);
	bind_step(st, skip + 7, g->free_step);
	store_sql_bind_id(st, skip + 8, g->site_id);
	sqlite3_bind_int64(st, skip + 9, g->bytes);
	sqlite3_bind_int64(st, skip + 10, g->blocks);
}

/*
 * Insert the groups of batch b into allocation_groups and add them to the
 * run's step sums (store-alloc-steps.c).  0, or -1 with *cause.
 */
static int
groups_insert(struct store *s, struct groups_batch *b, char **cause)
{
	size_t	i;

	if (store_insert_rows(s, &b->insert, b->g, sizeof b->g[0], b->n,
	    groups_bind, s, 0, cause) != 0)
		return (-1);
	for (i = 0; i < b->n; i++)
		store_alloc_steps_note(&s->step_sums, &b->g[i]);
	b->n = 0;
	return (0);
}

/* Add group g to batch arg, inserted when full (store_groups_fn). */
static int
groups_add(struct store *s, const struct store_group *g, void *arg,
    char **cause)
{
	struct groups_batch	*b = arg;

	b->g[b->n++] = *g;
	return (b->n == STORE_INSERT_MANY ? groups_insert(s, b, cause) : 0);
}

/*
 * Write the run's groups, kept while writing (groups.valid, pending rows
 * flushed) or summed by store_regroup(), into allocation_groups, and
 * forget them.  0, or -1 with *cause.
 */
int
store_groups_write(struct store *s, char **cause)
{
	struct groups_batch	*b = xcalloc(1, sizeof *b);
	int			 rc;

	rc = store_insert_prepare(s, &b->insert, "allocation_groups",
	    "INSERT INTO allocation_groups VALUES ",
	    "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", 10, cause);
	if (rc == 0) {
		rc = store_groups_table_each(s, groups_add, b, cause);
		if (rc == 0)
			rc = groups_insert(s, b, cause);
		store_insert_finalize(&b->insert);
	}
	free(b);
	store_groups_reset(&s->groups);
	return (rc);
}
