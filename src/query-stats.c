/*
 * query-stats.c: the allocator's state at the end of a run, per device and
 * stream (query.h).
 *
 * A snapshot holds the caching allocator's own state: its segments (the
 * reserved memory, with the allocated and requested bytes PyTorch counts)
 * and every block of each, allocated or free ("inactive"), so the free
 * bytes inside the segments and the largest free block are exact, and its
 * settings.  A recording sees allocations only: the segment layer's live
 * bytes (the driver's allocations) are reserved, the innermost layer's
 * (blocks, else pool allocations) allocated, and what is free inside the
 * segments is not known.  Fragmentation is 1 - largest free / free: 0 when
 * the free memory is one block, near 1 when it is scattered in pieces too
 * small for a large request.
 */
#include "config.h"

#include "query-int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "unknown.h"

static struct stats_row *
row_add(struct stats *s, int32_t device, uint64_t stream)
{
	struct stats_row	*w;

	s->rows = xreallocarray(s->rows, s->nrows + 1, sizeof *s->rows);
	w = &s->rows[s->nrows++];
	memset(w, 0, sizeof *w);
	w->device = device;
	w->stream = stream;
	w->reserved = w->segments = w->allocated = w->blocks = UNKNOWN_INT;
	w->requested = w->free = w->free_blocks = UNKNOWN_INT;
	w->largest_free = UNKNOWN_INT;
	return (w);
}

/*
 * Each segment of snapshot ?1 with its blocks counted: device, stream,
 * address, size, allocated and requested bytes (PyTorch's), allocated
 * blocks, free bytes, free blocks, the largest free block.  The one
 * definition behind the totals (stats_snapshot) and the segment list
 * (query_stats_segments).
 */
#define STATS_SNAPSHOT_SEGMENTS \
	"SELECT s.device AS device, s.stream AS stream, s.address AS" \
	" address, s.total_size AS size, s.allocated_size AS allocated," \
	" s.requested_size AS requested, b.used AS used, b.free AS free," \
	" b.nfree AS nfree, b.largest AS largest FROM segments s JOIN" \
	" (SELECT segment_id, sum(CASE WHEN state = 'inactive' THEN size" \
	" ELSE 0 END) AS free, sum(state = 'inactive') AS nfree, max(CASE" \
	" WHEN state = 'inactive' THEN size ELSE 0 END) AS largest," \
	" sum(state <> 'inactive') AS used FROM blocks WHERE snapshot_id =" \
	" ?1 GROUP BY segment_id) b ON b.segment_id = s.id WHERE" \
	" s.snapshot_id = ?1"

/*
 * The allocations of run ?1 live at the end in the segment layer and in
 * the innermost layer ?2: a recording's reserved and allocated memory.
 */
#define STATS_LIVE_WHERE \
	" FROM allocations WHERE run_id = ?1 AND free_ns IS NULL AND" \
	" device >= 0 AND layer IN (0, ?2)"

/* The run's last snapshot with segments, or 0 (none) or less. */
static int64_t
stats_snapshot_id(struct query *q, int64_t run_id)
{
	return (query_int_arg(q, "SELECT max(s.id) FROM snapshots s WHERE"
	    " s.run_id = ?1 AND EXISTS (SELECT 1 FROM segments WHERE"
	    " snapshot_id = s.id)", run_id));
}

/* The state in snapshot `snap`'s segments and blocks. */
static int
stats_snapshot(struct query *q, struct stats *s, int64_t snap, char **cause)
{
	sqlite3_stmt		*st;
	struct stats_row	*w;
	int			 rc;

	if ((st = query_prepare(q, "SELECT device, stream, sum(size),"
	    " count(*), sum(allocated), sum(used), CASE WHEN count(requested)"
	    " = count(*) THEN sum(requested) END, sum(free), sum(nfree),"
	    " max(largest) FROM (" STATS_SNAPSHOT_SEGMENTS ") GROUP BY 1, 2"
	    " ORDER BY 1, 2", cause)) == NULL)
		return (-1);
	sqlite3_bind_int64(st, 1, snap);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		w = row_add(s, sqlite3_column_int(st, 0),
		    query_column_u64(st, 1));
		w->reserved = sqlite3_column_int64(st, 2);
		w->segments = sqlite3_column_int64(st, 3);
		w->allocated = query_column_int(st, 4);
		w->blocks = sqlite3_column_int64(st, 5);
		w->requested = query_column_int(st, 6);
		w->free = sqlite3_column_int64(st, 7);
		w->free_blocks = sqlite3_column_int64(st, 8);
		w->largest_free = sqlite3_column_int64(st, 9);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return (query_fail(q, cause));
	if ((st = query_prepare(q, "SELECT key, value FROM allocator_settings"
	    " WHERE snapshot_id = ?1 ORDER BY key", cause)) == NULL)
		return (-1);
	sqlite3_bind_int64(st, 1, snap);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		s->settings = xreallocarray(s->settings, s->nsettings + 1,
		    sizeof *s->settings);
		s->settings[s->nsettings].key = query_column_text(st, 0);
		s->settings[s->nsettings++].value = query_column_text(st, 1);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return (query_fail(q, cause));
	return (0);
}

/*
 * The state in the allocations live at the end: the segment layer's are
 * reserved, the innermost layer's allocated (when it is not the segments).
 */
static int
stats_live(struct query *q, struct stats *s, char **cause)
{
	sqlite3_stmt		*st;
	struct stats_row	*w = NULL;
	int32_t			 device;
	uint64_t		 stream;
	int			 rc, layer, inner;

	inner = query_run_layer(q, s->run_id);
	if ((st = query_prepare(q, "SELECT device, stream, layer, sum(bytes),"
	    " count(*), CASE WHEN count(requested_bytes) = count(*) THEN"
	    " sum(requested_bytes) END" STATS_LIVE_WHERE " GROUP BY 1, 2, 3"
	    " ORDER BY 1, 2, 3", cause)) == NULL)
		return (-1);
	sqlite3_bind_int64(st, 1, s->run_id);
	sqlite3_bind_int(st, 2, inner);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		device = sqlite3_column_int(st, 0);
		stream = query_column_u64(st, 1);
		layer = sqlite3_column_int(st, 2);
		if (w == NULL || w->device != device || w->stream != stream)
			w = row_add(s, device, stream);
		if (layer == EVENT_LAYER_SEGMENT) {
			w->reserved = sqlite3_column_int64(st, 3);
			w->segments = sqlite3_column_int64(st, 4);
		}
		if (layer == inner && inner != EVENT_LAYER_SEGMENT) {
			w->allocated = sqlite3_column_int64(st, 3);
			w->blocks = sqlite3_column_int64(st, 4);
			w->requested = query_column_int(st, 5);
		}
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return (query_fail(q, cause));
	return (0);
}

/* a + b, unknown when either is. */
static int64_t
add_known(int64_t a, int64_t b)
{
	return (a < 0 || b < 0 ? UNKNOWN_INT : a + b);
}

/*
 * Insert each device's total before its streams, and every row's
 * fragmentation.
 */
static void
stats_totals(struct stats *s)
{
	struct stats_row	*out, *t = NULL, *w;
	size_t			 i, n = 0;

	/* At most a total per row. */
	out = xreallocarray(NULL, 2 * s->nrows + 1, sizeof *out);
	for (i = 0; i < s->nrows; i++) {
		w = &s->rows[i];
		if (t == NULL || t->device != w->device) {
			t = &out[n++];
			*t = *w;
			t->stream = UNKNOWN_U64;
			t->all = 1;
		} else {
			t->reserved = add_known(t->reserved, w->reserved);
			t->segments = add_known(t->segments, w->segments);
			t->allocated = add_known(t->allocated, w->allocated);
			t->blocks = add_known(t->blocks, w->blocks);
			t->requested = add_known(t->requested, w->requested);
			t->free = add_known(t->free, w->free);
			t->free_blocks = add_known(t->free_blocks,
			    w->free_blocks);
			if (w->largest_free > t->largest_free)
				t->largest_free = w->largest_free;
		}
		out[n++] = *w;
	}
	for (i = 0; i < n; i++) {
		w = &out[i];
		w->fragmentation = w->free < 0 || w->largest_free < 0 ?
		    UNKNOWN_DOUBLE : w->free == 0 ? 0 : 1 -
		    (double)w->largest_free / (double)w->free;
	}
	free(s->rows);
	s->rows = out;
	s->nrows = n;
}

/*
 * Fill *out with the allocator's state at the end of run run_id (0: the
 * newest): from the run's last snapshot when it has one, else from its
 * live allocations.  Free with query_stats_free.  0, or -1 with *cause
 * when there is no such run or it cannot be read.
 */
int
query_stats(struct query *q, int64_t run_id, struct stats **out,
    char **cause)
{
	struct stats	*s;
	struct query_run run;
	int64_t		 snap;
	int		 rc;

	*out = NULL;
	if (query_run(q, run_id, 0, &run, cause) != 0) {
		query_run_free(&run);
		return (-1);
	}
	s = xcalloc(1, sizeof *s);
	s->run_id = run.id;
	s->allocator = run.allocator != NULL ? xstrdup(run.allocator) : NULL;
	query_run_free(&run);
	snap = stats_snapshot_id(q, s->run_id);
	s->snapshot = snap > 0;
	rc = s->snapshot ? stats_snapshot(q, s, snap, cause) :
	    stats_live(q, s, cause);
	if (rc != 0) {
		query_stats_free(s);
		return (-1);
	}
	stats_totals(s);
	*out = s;
	return (0);
}

/* Segments [offset, offset + max) of snapshot snap into out. */
static int
stats_segments_snapshot(struct query *q, int64_t snap, int64_t offset,
    struct stats_segment *out, int max, char **cause)
{
	sqlite3_stmt		*st;
	struct stats_segment	*g;
	int			 rc, n = 0;

	if ((st = query_prepare(q, "SELECT device, stream, address, size,"
	    " allocated, used, free, nfree, largest FROM ("
	    STATS_SNAPSHOT_SEGMENTS ") ORDER BY device, stream, address"
	    " LIMIT ?2 OFFSET ?3", cause)) == NULL)
		return (-1);
	sqlite3_bind_int64(st, 1, snap);
	sqlite3_bind_int(st, 2, max);
	sqlite3_bind_int64(st, 3, offset);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		g = &out[n++];
		g->device = sqlite3_column_int(st, 0);
		g->stream = query_column_u64(st, 1);
		g->address = query_column_u64(st, 2);
		g->size = sqlite3_column_int64(st, 3);
		g->allocated = query_column_int(st, 4);
		g->blocks = sqlite3_column_int64(st, 5);
		g->free = sqlite3_column_int64(st, 6);
		g->free_blocks = sqlite3_column_int64(st, 7);
		g->largest_free = sqlite3_column_int64(st, 8);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return (query_fail(q, cause));
	return (n);
}

/* A live allocation of a recording, for stats_segments_live. */
struct stats_live_alloc {
	int32_t		 device;
	uint64_t	 stream;
	uint64_t	 address;
	int64_t		 bytes;
};

static int
stats_live_cmp_address(const void *a0, const void *b0)
{
	const struct stats_live_alloc	*a = a0, *b = b0;

	if (a->device != b->device)
		return (a->device < b->device ? -1 : 1);
	return (a->address < b->address ? -1 : a->address > b->address);
}

static int
stats_segment_cmp(const void *a0, const void *b0)
{
	const struct stats_segment	*a = a0, *b = b0;

	if (a->device != b->device)
		return (a->device < b->device ? -1 : 1);
	if (a->stream != b->stream)
		return (a->stream < b->stream ? -1 : 1);
	return (a->address < b->address ? -1 : a->address > b->address);
}

/*
 * A recording's segments: the segment layer's allocations live at the
 * end (as stats_live counts them), each with the innermost layer's live
 * allocations that lie inside it (same device, address within).  What is
 * free inside is not recorded.  All of them are read (a run holds few
 * segments at its end); [offset, offset + max) goes into out.
 */
static int
stats_segments_live(struct query *q, int64_t run_id, int64_t offset,
    struct stats_segment *out, int max, char **cause)
{
	sqlite3_stmt		*st;
	struct stats_live_alloc	*blk = NULL, *a;
	struct stats_segment	*seg = NULL, *g;
	size_t			 nblk = 0, nseg = 0, i, j;
	int			 rc, inner, n = 0;

	inner = query_run_layer(q, run_id);
	if ((st = query_prepare(q, "SELECT device, stream, layer, address,"
	    " bytes" STATS_LIVE_WHERE, cause)) == NULL)
		return (-1);
	sqlite3_bind_int64(st, 1, run_id);
	sqlite3_bind_int(st, 2, inner);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (sqlite3_column_int(st, 2) == EVENT_LAYER_SEGMENT) {
			seg = xreallocarray(seg, nseg + 1, sizeof *seg);
			g = &seg[nseg++];
			g->device = sqlite3_column_int(st, 0);
			g->stream = query_column_u64(st, 1);
			g->address = query_column_u64(st, 3);
			g->size = sqlite3_column_int64(st, 4);
			g->allocated = g->blocks = 0;
			g->free = g->free_blocks = UNKNOWN_INT;
			g->largest_free = UNKNOWN_INT;
			continue;
		}
		blk = xreallocarray(blk, nblk + 1, sizeof *blk);
		a = &blk[nblk++];
		a->device = sqlite3_column_int(st, 0);
		a->stream = query_column_u64(st, 1);
		a->address = query_column_u64(st, 3);
		a->bytes = sqlite3_column_int64(st, 4);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		free(blk);
		free(seg);
		return (query_fail(q, cause));
	}
	/*
	 * Live segments do not overlap: with both in address order, each
	 * block belongs to the last segment that starts at or below it.
	 */
	util_sort(blk, nblk, sizeof *blk, stats_live_cmp_address);
	util_sort(seg, nseg, sizeof *seg, stats_live_cmp_address);
	for (i = j = 0; nseg > 0 && i < nblk; i++) {
		a = &blk[i];
		while (j + 1 < nseg && (seg[j + 1].device < a->device ||
		    (seg[j + 1].device == a->device &&
		    seg[j + 1].address <= a->address)))
			j++;
		g = &seg[j];
		if (g->device == a->device && a->address >= g->address &&
		    a->address - g->address < (uint64_t)g->size) {
			g->allocated += a->bytes;
			g->blocks++;
		}
	}
	util_sort(seg, nseg, sizeof *seg, stats_segment_cmp);
	for (i = (size_t)offset; i < nseg && n < max; i++)
		out[n++] = seg[i];
	free(blk);
	free(seg);
	return (n);
}

/*
 * Fill out with at most max segments of run run_id's allocator at its
 * end, from the offset-th on, by device, stream and address: a snapshot's
 * segments as query_stats counts them, or a recording's live driver
 * allocations with the blocks inside each (free bytes unknown).  Returns
 * how many (fewer than max: the last page), or -1 with *cause.
 */
int
query_stats_segments(struct query *q, int64_t run_id, int64_t offset,
    struct stats_segment *out, int max, char **cause)
{
	int64_t	snap;

	if (offset < 0 || max <= 0)
		return (0);
	snap = stats_snapshot_id(q, run_id);
	if (snap > 0)
		return (stats_segments_snapshot(q, snap, offset, out, max,
		    cause));
	return (stats_segments_live(q, run_id, offset, out, max, cause));
}

/* Free what query_stats made; NULL is fine. */
void
query_stats_free(struct stats *s)
{
	size_t	i;

	if (s == NULL)
		return;
	for (i = 0; i < s->nsettings; i++) {
		free(s->settings[i].key);
		free(s->settings[i].value);
	}
	free(s->settings);
	free(s->rows);
	free(s->allocator);
	free(s);
}
