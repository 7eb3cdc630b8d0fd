/*
 * store-groups-table.c: the run's groups summed in bounded memory.
 *
 * The groups live in an open-addressing hash table of STORE_GROUPS_MAX
 * groups at most.  When it is full, its groups are sorted by key and
 * written as one sorted run to an unlinked temporary file ($TMPDIR, else
 * /tmp), and the table starts again, empty.  When the groups are read
 * out, if no run was written, the table's groups come as they are;
 * otherwise the table becomes the last run and the runs are merged, equal
 * keys summed, so that each group comes once.  Memory: the table, and a
 * buffer per run while they are merged.  A sum past 2^63 fails as
 * SQLite's sum() would.
 */
#include "config.h"

#include "store-int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Groups read back at once from each sorted run. */
#define SPILL_CHUNK	256

/* What failed when the temporary file cannot be written or read. */
#define TABLE_IO	"group the allocations in a temporary file"

/* One sorted run in the file, while the runs are merged. */
struct spill_reader {
	off_t			 at;		/* next byte to read */
	off_t			 end;
	struct store_group	 buf[SPILL_CHUNK];
	size_t			 n;		/* in buf */
	size_t			 i;		/* next in buf */
};

static int
table_same(const struct store_group *a, const struct store_group *b)
{
	return (a->process_id == b->process_id && a->layer == b->layer &&
	    a->device == b->device &&
	    a->stream == b->stream && a->alloc_step == b->alloc_step &&
	    a->free_step == b->free_step && a->site_id == b->site_id);
}

/*
 * Add g to its group in the table.  0, or -1 when the group's bytes would
 * pass 2^63 (the group keeps its old sum).
 */
static int
table_put(struct store_groups *gs, const struct store_group *g)
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
				(void)table_put(gs, &old[i]);
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
		if (table_same(slot, g)) {
			if (__builtin_add_overflow(slot->bytes, g->bytes,
			    &slot->bytes))
				return (-1);
			slot->blocks += g->blocks;
			return (0);
		}
	}
}

/* Group g's key columns, in the order the runs are sorted by. */
static void
table_key(const struct store_group *g, int64_t k[7])
{
	k[0] = g->process_id;
	k[1] = g->layer;
	k[2] = g->device;
	k[3] = (int64_t)g->stream;
	k[4] = g->alloc_step;
	k[5] = g->free_step;
	k[6] = g->site_id;
}

/* The order of the runs: every key column, one after the other. */
static int
table_compare(const void *a, const void *b)
{
	int64_t	x[7], y[7];
	size_t	i;

	table_key(a, x);
	table_key(b, y);
	for (i = 0; i < 7; i++) {
		if (x[i] != y[i])
			return (x[i] < y[i] ? -1 : 1);
	}
	return (0);
}

/* Empty the table (the sorted runs stay). */
static void
table_clear(struct store_groups *gs)
{
	free(gs->slots);
	gs->slots = NULL;
	gs->mask = gs->count = 0;
}

/*
 * Write the table's groups, sorted, as a new run at the end of the file,
 * and empty the table.  0, or -1 with *cause.
 */
static int
table_spill(struct store *s, char **cause)
{
	struct store_groups	*gs = &s->groups;
	struct store_group	*v;
	size_t			 i, n = 0, len;
	ssize_t			 w;

	if (gs->spill_fd == -1 &&
	    (gs->spill_fd = util_scratch_file("vramtrace-groups")) == -1)
		return (store_io_error(s, cause, TABLE_IO));
	v = xreallocarray(NULL, gs->count == 0 ? 1 : gs->count, sizeof *v);
	for (i = 0; gs->slots != NULL && i <= gs->mask; i++) {
		if (gs->slots[i].blocks != 0)
			v[n++] = gs->slots[i];
	}
	util_sort(v, n, sizeof *v, table_compare);
	for (len = n * sizeof *v, i = 0; i < len; i += (size_t)w) {
		if ((w = pwrite(gs->spill_fd, (char *)v + i, len - i,
		    gs->spill_size + (off_t)i)) <= 0) {
			free(v);
			return (store_io_error(s, cause, TABLE_IO));
		}
	}
	free(v);
	gs->runs = xreallocarray(gs->runs, gs->nruns + 1, sizeof *gs->runs);
	gs->runs[gs->nruns++] = gs->spill_size;
	gs->spill_size += (off_t)len;
	table_clear(gs);
	return (0);
}

/*
 * The next group of run r (NULL when it is done), read in chunks.  Sets
 * *failed on a read error.
 */
static struct store_group *
table_peek(int fd, struct spill_reader *r, int *failed)
{
	size_t	want;
	ssize_t	got;

	if (r->i < r->n)
		return (&r->buf[r->i]);
	if (r->at >= r->end)
		return (NULL);
	want = sizeof r->buf;
	if ((off_t)want > r->end - r->at)
		want = (size_t)(r->end - r->at);
	got = pread(fd, r->buf, want, r->at);
	if (got <= 0 || (size_t)got % sizeof r->buf[0] != 0) {
		*failed = 1;
		return (NULL);
	}
	r->at += got;
	r->n = (size_t)got / sizeof r->buf[0];
	r->i = 0;
	return (&r->buf[0]);
}

/*
 * Merge the sorted runs: the smallest key of all, summed over the runs
 * that hold it, goes to fn, until every run is done.  0, or -1 with
 * *cause.
 */
static int
table_merge(struct store *s, struct spill_reader *rd, size_t nruns,
    store_groups_fn fn, void *arg, char **cause)
{
	struct store_group	 g, *e;
	size_t			 i;
	int			 fd = s->groups.spill_fd, failed = 0, found;

	for (;;) {
		found = 0;
		for (i = 0; i < nruns; i++) {
			e = table_peek(fd, &rd[i], &failed);
			if (e != NULL && (!found || table_compare(e, &g) < 0))
				g = *e;
			found |= e != NULL;
		}
		if (failed)
			return (store_io_error(s, cause, TABLE_IO));
		if (!found)
			return (0);
		g.bytes = g.blocks = 0;
		for (i = 0; i < nruns; i++) {
			e = table_peek(fd, &rd[i], &failed);
			if (e == NULL || table_compare(e, &g) != 0)
				continue;
			if (__builtin_add_overflow(g.bytes, e->bytes,
			    &g.bytes))
				return (store_sql_error(s, cause,
				    "cannot group: integer overflow"));
			g.blocks += e->blocks;
			rd[i].i++;
		}
		if (fn(s, &g, arg, cause) != 0)
			return (-1);
	}
}

/*
 * Add g to its group, sending the table to a sorted run on disk first when
 * it is full.  0, or -1 with *cause (a sum past 2^63, or the temporary
 * file cannot be written).
 */
int
store_groups_table_add(struct store *s, const struct store_group *g,
    char **cause)
{
	if (s->groups.count >= STORE_GROUPS_MAX && table_spill(s, cause) != 0)
		return (-1);
	if (table_put(&s->groups, g) != 0) {
		if (cause != NULL)
			xasprintf(cause, "%s: cannot group: integer overflow",
			    s->path);
		return (-1);
	}
	return (0);
}

/*
 * Call fn for every group, each once with its sums: those of the table,
 * or, once sorted runs were written, those of the runs and the table
 * merged in key order.  Stops and returns -1 (with *cause) when fn does
 * or the runs cannot be read back; else 0.  The groups stay.
 */
int
store_groups_table_each(struct store *s, store_groups_fn fn, void *arg,
    char **cause)
{
	struct store_groups	*gs = &s->groups;
	struct spill_reader	*rd;
	size_t			 i;
	int			 rc;

	if (gs->nruns == 0) {
		for (i = 0; gs->slots != NULL && i <= gs->mask; i++) {
			if (gs->slots[i].blocks != 0 &&
			    fn(s, &gs->slots[i], arg, cause) != 0)
				return (-1);
		}
		return (0);
	}
	if (table_spill(s, cause) != 0)
		return (-1);
	rd = xcalloc(gs->nruns, sizeof *rd);
	for (i = 0; i < gs->nruns; i++) {
		rd[i].at = gs->runs[i];
		rd[i].end = i + 1 < gs->nruns ? gs->runs[i + 1] :
		    gs->spill_size;
	}
	rc = table_merge(s, rd, gs->nruns, fn, arg, cause);
	free(rd);
	return (rc);
}

/* Forget every group: the table, the sorted runs and their file. */
void
store_groups_table_free(struct store_groups *gs)
{
	table_clear(gs);
	if (gs->spill_fd != -1)
		close(gs->spill_fd);
	free(gs->runs);
	gs->spill_fd = -1;
	gs->spill_size = 0;
	gs->runs = NULL;
	gs->nruns = 0;
}
