/*
 * store-regroup.c: a run's allocation_groups rebuilt from its rows, when
 * its steps came after its rows were written (an import, whose markers
 * come last; a recording whose markers came late).
 *
 * The run's rows are read once, in the order of their ids from the run's
 * first (a run's rows follow each other: a sequential read, no index),
 * and summed into the groups table of store-groups.c, which may hold
 * STORE_REGROUP_MAX groups.  When it is full, its groups are sorted by
 * key and written as one sorted run to an unlinked temporary file
 * ($TMPDIR, else /tmp), and the table starts again, empty.  At the end, if
 * no run was written, the table's groups are inserted; otherwise the table
 * becomes the last run and the runs are merged, equal keys summed, so that
 * each group is inserted once.  Memory: the table, and a buffer per run.
 * A sum past 2^63 fails as SQLite's sum() would.
 */
#include "config.h"

#include "store-int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Groups read back at once from each sorted run. */
#define REGROUP_CHUNK	256

/* One sorted run in the file: where it is, and what was read of it. */
struct regroup_run {
	off_t			 at;		/* next byte to read */
	off_t			 end;
	struct store_group	 buf[REGROUP_CHUNK];
	size_t			 n;		/* in buf */
	size_t			 i;		/* next in buf */
};

struct regroup {
	struct store		*s;
	sqlite3_stmt		*ins;
	int			 fd;		/* -1 until a run is written */
	off_t			 size;
	struct regroup_run	*runs;
	size_t			 nruns;
};

/* Group g's key columns, in the order the runs are sorted by. */
static void
regroup_key(const struct store_group *g, int64_t k[7])
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
regroup_compare(const void *a, const void *b)
{
	int64_t	x[7], y[7];
	size_t	i;

	regroup_key(a, x);
	regroup_key(b, y);
	for (i = 0; i < 7; i++) {
		if (x[i] != y[i])
			return (x[i] < y[i] ? -1 : 1);
	}
	return (0);
}

static int
regroup_io_error(struct regroup *rg, char **cause)
{
	if (cause != NULL)
		*cause = xstrerror_cause("%s: cannot group the allocations in"
		    " a temporary file", rg->s->path);
	return (-1);
}

/*
 * Write the table's groups, sorted, as a new run at the end of the file,
 * and empty the table.  0, or -1 with *cause.
 */
static int
regroup_spill(struct regroup *rg, char **cause)
{
	struct store_groups	*gs = &rg->s->groups;
	struct store_group	*v;
	size_t			 i, n = 0, len;
	ssize_t			 w;

	if (rg->fd == -1 &&
	    (rg->fd = util_scratch_file("vramtrace-groups")) == -1)
		return (regroup_io_error(rg, cause));
	v = xreallocarray(NULL, gs->count == 0 ? 1 : gs->count, sizeof *v);
	for (i = 0; gs->slots != NULL && i <= gs->mask; i++) {
		if (gs->slots[i].blocks != 0)
			v[n++] = gs->slots[i];
	}
	util_sort(v, n, sizeof *v, regroup_compare);
	rg->runs = xreallocarray(rg->runs, rg->nruns + 1, sizeof *rg->runs);
	memset(&rg->runs[rg->nruns], 0, sizeof *rg->runs);
	rg->runs[rg->nruns].at = rg->size;
	for (len = n * sizeof *v, i = 0; i < len; i += (size_t)w) {
		if ((w = pwrite(rg->fd, (char *)v + i, len - i,
		    rg->size + (off_t)i)) <= 0) {
			free(v);
			return (regroup_io_error(rg, cause));
		}
	}
	free(v);
	rg->size += (off_t)len;
	rg->runs[rg->nruns++].end = rg->size;
	store_groups_reset(gs);
	gs->valid = 0;
	return (0);
}

/*
 * The next group of run r (NULL when it is done), read in chunks.  Sets
 * *failed on a read error.
 */
static struct store_group *
regroup_peek(struct regroup *rg, struct regroup_run *r, int *failed)
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
	got = pread(rg->fd, r->buf, want, r->at);
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
 * that hold it, is inserted, until every run is done.  0, or -1 with
 * *cause.
 */
static int
regroup_merge(struct regroup *rg, char **cause)
{
	struct store_group	 g, *e;
	size_t			 i;
	int			 failed = 0, found;

	for (;;) {
		found = 0;
		for (i = 0; i < rg->nruns; i++) {
			e = regroup_peek(rg, &rg->runs[i], &failed);
			if (e != NULL && (!found || regroup_compare(e, &g) < 0))
				g = *e;
			found |= e != NULL;
		}
		if (failed)
			return (regroup_io_error(rg, cause));
		if (!found)
			return (0);
		g.bytes = g.blocks = 0;
		for (i = 0; i < rg->nruns; i++) {
			e = regroup_peek(rg, &rg->runs[i], &failed);
			if (e == NULL || regroup_compare(e, &g) != 0)
				continue;
			if (__builtin_add_overflow(g.bytes, e->bytes,
			    &g.bytes))
				return (store_sql_error(rg->s, cause,
				    "cannot group: integer overflow"));
			g.blocks += e->blocks;
			rg->runs[i].i++;
		}
		if (store_groups_insert_one(rg->s, rg->ins, &g, cause) != 0)
			return (-1);
	}
}

/*
 * Read the run's rows into groups (spilled as sorted runs when the table
 * is full).  0, or -1 with *cause.
 */
static int
regroup_read(struct regroup *rg, char **cause)
{
	struct store		*s = rg->s;
	struct store_group	 g;
	sqlite3_stmt		*st;
	int			 rc;

	if (sqlite3_prepare_v2(s->db, "SELECT process_id, layer, device,"
	    " stream, alloc_step, free_step, site_id, bytes FROM allocations"
	    " NOT INDEXED WHERE id >= ?2 AND run_id = ?1", -1, &st, NULL) !=
	    SQLITE_OK)
		return (store_sql_error(s, cause, "cannot group:"));
	sqlite3_bind_int64(st, 1, s->run_id);
	sqlite3_bind_int64(st, 2, s->run_first_alloc);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		g.process_id = sqlite3_column_int64(st, 0);
		g.layer = sqlite3_column_int(st, 1);
		g.device = sqlite3_column_int(st, 2);
		g.stream = sqlite3_column_type(st, 3) == SQLITE_NULL ?
		    EVENT_NONE : (uint64_t)sqlite3_column_int64(st, 3);
		g.alloc_step = sqlite3_column_int64(st, 4);
		g.free_step = sqlite3_column_int64(st, 5);
		g.site_id = sqlite3_column_int64(st, 6);
		g.bytes = sqlite3_column_int64(st, 7);
		g.blocks = 1;
		if (s->groups.count >= STORE_REGROUP_MAX &&
		    regroup_spill(rg, cause) != 0)
			break;
		if (store_groups_put(&s->groups, &g) != 0) {
			store_sql_error(s, cause, "cannot group: integer"
			    " overflow");
			break;
		}
	}
	sqlite3_finalize(st);
	if (rc == SQLITE_DONE)
		return (0);
	if (rc != SQLITE_ROW)
		store_sql_error(s, cause, "cannot group:");
	return (-1);
}

/*
 * Rebuild the current run's groups from its rows and insert them into
 * allocation_groups, in bounded memory: for a run whose groups were not
 * kept while it was written (!groups.valid).  0, or -1 with *cause.
 */
int
store_regroup(struct store *s, char **cause)
{
	struct regroup	rg;
	int		rc;

	memset(&rg, 0, sizeof rg);
	rg.s = s;
	rg.fd = -1;
	if ((rg.ins = store_groups_statement(s, cause)) == NULL)
		return (-1);
	store_groups_reset(&s->groups);
	s->groups.valid = 0;
	if (s->run_first_alloc == 0)
		rc = 0;		/* no rows */
	else if ((rc = regroup_read(&rg, cause)) == 0) {
		if (rg.nruns == 0)
			rc = store_groups_insert(s, rg.ins, cause);
		else if ((rc = regroup_spill(&rg, cause)) == 0)
			rc = regroup_merge(&rg, cause);
	}
	if (rg.fd != -1)
		close(rg.fd);
	sqlite3_finalize(rg.ins);
	free(rg.runs);
	store_groups_reset(&s->groups);
	return (rc);
}
