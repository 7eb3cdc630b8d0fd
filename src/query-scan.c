/*
 * query-scan.c: the numbers behind the leak verdict of a run, or of one
 * process of it, in one pass.
 *
 * One read of a run's allocation groups (the allocations summed by layer,
 * device, stream, alloc step, free step and site: the allocation_groups
 * table the writer fills when the run finishes, or the same GROUP BY over
 * the allocations of a run that never finished) gives everything: per
 * (layer, device, stream) the bytes that became live and stopped being
 * live in each step, whose running sum is the live bytes at each step end;
 * the bytes never freed; the last step that allocated; and per site the
 * bytes still live at the last step end that were allocated after the
 * warm-up.  leak.c then judges the numbers.
 *
 * A key's deltas live in an array of nsteps + 2 slots: slot k is step k
 * (1..nsteps), slot nsteps + 1 is after the last marker; an allocation with
 * no step (alloc_ns unknown, before tracing began) counts from step 1.  A
 * run with no steps (a snapshot without allocation history) has one slot,
 * the end: its streams hold what is live there, its suspects every site
 * that holds it.
 */
#include "config.h"

#include "query-int.h"

#include <stdlib.h>
#include <string.h>

/* One (layer, device, stream) as the scan accumulates it. */
struct lk_key {
	int		 layer;
	int32_t		 device;
	uint64_t	 stream;
	int64_t		*delta;		/* bytes, nsteps + 2 slots */
	int64_t		*delta_n;	/* blocks */
	int64_t		 alloc_bytes;
	int64_t		 last_alloc_step;
	int64_t		 unfreed_bytes;
	int64_t		 unfreed_blocks;
	int64_t		 new_live_bytes;
	int64_t		 new_live_blocks;
};

/*
 * One (layer, site, device, stream): the bytes (and blocks) it holds that
 * were made after the warm-up and are live at the last step, and its live
 * bytes at the end of the warm-up and of the last step.  It is a suspect
 * only when it holds such bytes and its live bytes grew: a site that makes
 * the same blocks every step and frees them the next is live at every step
 * end, but it does not grow.
 */
struct lk_site {
	int		 layer;
	int64_t		 site_id;
	int32_t		 device;
	uint64_t	 stream;
	int64_t		 bytes;
	int64_t		 blocks;
	int64_t		 live_warmup;
	int64_t		 live_last;
};

struct lk_scan {
	int64_t		 nsteps;
	int		 warmup;
	struct lk_key	*keys;
	size_t		 nkeys;
	size_t		 keys_alloc;
	struct slots	 key_slots;	/* keys by (layer, device, stream) */
	struct lk_site	*sites;
	size_t		 nsites;
	size_t		 sites_cap;	/* grown by doubling */
};

static uint64_t
scan_key_hash_at(size_t pos, const void *arg)
{
	const struct lk_key	*k = &((const struct lk_scan *)arg)->keys[pos];

	return (slots_hash_stream(k->stream, k->device, (uint64_t)k->layer));
}

/* A key scan_key() looks for. */
struct lk_key_want {
	const struct lk_scan *sc;
	int		 layer;
	int32_t		 device;
	uint64_t	 stream;
};

static int
scan_key_same(size_t pos, const void *arg)
{
	const struct lk_key_want *w = arg;
	const struct lk_key	*k = &w->sc->keys[pos];

	return (k->layer == w->layer && k->device == w->device &&
	    k->stream == w->stream);
}

/*
 * The key (layer, device, stream), added if new; found through slots.c,
 * so that a run of many streams is not quadratic.
 */
static struct lk_key *
scan_key(struct lk_scan *sc, int layer, int32_t device, uint64_t stream)
{
	struct lk_key_want	 w = { sc, layer, device, stream };
	struct lk_key		*k;
	uint64_t		 h = slots_hash_stream(stream, device,
	    (uint64_t)layer);
	size_t			*slot;

	slot = slots_find(&sc->key_slots, h, scan_key_same, &w);
	if (slot != NULL && *slot != 0)
		return (&sc->keys[*slot - 1]);
	if (sc->nkeys == sc->keys_alloc) {
		sc->keys_alloc = sc->keys_alloc == 0 ? 16 : 2 * sc->keys_alloc;
		sc->keys = xreallocarray(sc->keys, sc->keys_alloc,
		    sizeof *sc->keys);
	}
	slots_reserve(&sc->key_slots, sc->nkeys, scan_key_hash_at, sc);
	*slots_find(&sc->key_slots, h, scan_key_same, &w) = sc->nkeys + 1;
	k = &sc->keys[sc->nkeys++];
	memset(k, 0, sizeof *k);
	k->layer = layer;
	k->device = device;
	k->stream = stream;
	k->delta = xcalloc((size_t)sc->nsteps + 2, sizeof *k->delta);
	k->delta_n = xcalloc((size_t)sc->nsteps + 2, sizeof *k->delta_n);
	return (k);
}

static struct lk_site *
scan_site(struct lk_scan *sc, const struct lk_key *k, int64_t site_id)
{
	struct lk_site	*s;

	if (sc->nsites == sc->sites_cap) {
		sc->sites_cap = sc->sites_cap == 0 ? 64 : 2 * sc->sites_cap;
		sc->sites = xreallocarray(sc->sites, sc->sites_cap,
		    sizeof *sc->sites);
	}
	s = &sc->sites[sc->nsites++];
	memset(s, 0, sizeof *s);
	s->layer = k->layer;
	s->site_id = site_id;
	s->device = k->device;
	s->stream = k->stream;
	return (s);
}

static int
cmp_site_key(const void *a, const void *b)
{
	const struct lk_site	*x = a, *y = b;

	if (x->layer != y->layer)
		return (x->layer < y->layer ? -1 : 1);
	if (x->site_id != y->site_id)
		return (x->site_id < y->site_id ? -1 : 1);
	if (x->device != y->device)
		return (x->device < y->device ? -1 : 1);
	return ((x->stream > y->stream) - (x->stream < y->stream));
}

static int
cmp_key(const void *a, const void *b)
{
	const struct lk_key	*x = a, *y = b;

	if (x->layer != y->layer)
		return (x->layer < y->layer ? -1 : 1);
	if (x->device != y->device)
		return (x->device < y->device ? -1 : 1);
	return ((x->stream > y->stream) - (x->stream < y->stream));
}

/* Merge the rows of each (layer, site, device, stream) into one. */
static void
scan_merge_sites(struct lk_scan *sc)
{
	size_t	i, n = 0;

	util_sort(sc->sites, sc->nsites, sizeof *sc->sites, cmp_site_key);
	for (i = 0; i < sc->nsites; i++) {
		if (n > 0 && cmp_site_key(&sc->sites[n - 1],
		    &sc->sites[i]) == 0) {
			sc->sites[n - 1].bytes += sc->sites[i].bytes;
			sc->sites[n - 1].blocks += sc->sites[i].blocks;
			sc->sites[n - 1].live_warmup +=
			    sc->sites[i].live_warmup;
			sc->sites[n - 1].live_last += sc->sites[i].live_last;
		} else
			sc->sites[n++] = sc->sites[i];
	}
	sc->nsites = n;
}

/* The groups of run ?1 (of process ?2 unless 0), as scan_groups() reads. */
#define SCAN_GROUPS "SELECT layer, device, stream, alloc_step, free_step," \
	" site_id, bytes, blocks FROM allocation_groups WHERE run_id = ?1" \
	" AND (?2 = 0 OR process_id = ?2)"

/* A step of the scan's slots: 1 .. nsteps + 1 (0, unknown: 1). */
static int64_t
scan_slot(const struct lk_scan *sc, int64_t step)
{
	if (step < 1)
		return (1);
	return (step > sc->nsteps + 1 ? sc->nsteps + 1 : step);
}

/*
 * Add bytes (blocks) allocated in step a and freed in step f (0: never)
 * to k's series and totals.
 */
static void
scan_series(struct lk_scan *sc, struct lk_key *k, int64_t a, int64_t f,
    int64_t bytes, int64_t blocks)
{
	a = scan_slot(sc, a);
	k->delta[a] += bytes;
	k->delta_n[a] += blocks;
	k->alloc_bytes += bytes;
	if (blocks > 0 && a > k->last_alloc_step)
		k->last_alloc_step = a;
	if (f > 0) {
		f = scan_slot(sc, f);
		k->delta[f] -= bytes;
		k->delta_n[f] -= blocks;
	} else {
		k->unfreed_bytes += bytes;
		k->unfreed_blocks += blocks;
	}
}

/*
 * Add a row of allocation_steps to k's series and totals: bytes (blocks)
 * made in step (0: none known) and freed in it.
 */
static void
scan_step_row(struct lk_scan *sc, struct lk_key *k, int64_t step,
    int64_t alloc_bytes, int64_t alloc_blocks, int64_t freed_bytes,
    int64_t freed_blocks)
{
	scan_series(sc, k, step, 0, alloc_bytes, alloc_blocks);
	/* Freed in step: no longer live from it on, and not unfreed. */
	step = scan_slot(sc, step);
	k->delta[step] -= freed_bytes;
	k->delta_n[step] -= freed_blocks;
	k->unfreed_bytes -= freed_bytes;
	k->unfreed_blocks -= freed_blocks;
}

/*
 * Add one group to the sites and to k's bytes made after the warm-up and
 * live at the last step.  Only a group live at the end of the last step
 * or of the warm-up adds anything (scan_summed() reads only those).
 */
static void
scan_sites(struct lk_scan *sc, struct lk_key *k, int64_t a, int64_t f,
    int64_t site_id, int64_t bytes, int64_t blocks)
{
	struct lk_site	*s = NULL;
	int64_t		 last = sc->nsteps, w = sc->warmup;

	a = scan_slot(sc, a);
	if (f > last + 1)
		f = last + 1;
	if (last == 0) {
		/* No steps: what is live at the end is what it holds. */
		if (f <= 0) {
			s = scan_site(sc, k, site_id);
			s->bytes = s->live_last = bytes;
			s->blocks = blocks;
		}
		return;
	}
	if (a > w && a <= last && (f <= 0 || f > last)) {
		k->new_live_bytes += bytes;
		k->new_live_blocks += blocks;
		s = scan_site(sc, k, site_id);
		s->bytes = bytes;
		s->blocks = blocks;
	}
	if (a <= last && (f <= 0 || f > last)) {
		if (s == NULL)
			s = scan_site(sc, k, site_id);
		s->live_last = bytes;
	}

	if (w >= 1 && a <= w && (f <= 0 || f > w)) {
		if (s == NULL)
			s = scan_site(sc, k, site_id);
		s->live_warmup = bytes;
	}
}

/* sql with ?1 run_id and ?2 process_id bound; NULL with *cause. */
static sqlite3_stmt *
scan_prepare(struct query *q, const char *sql, int64_t run_id,
    int64_t process_id, char **cause)
{
	sqlite3_stmt	*st;

	if ((st = query_prepare(q, sql, cause)) == NULL)
		return (NULL);
	sqlite3_bind_int64(st, 1, run_id);
	sqlite3_bind_int64(st, 2, process_id);
	return (st);
}

/* The key of a row whose first columns are layer, device and stream. */
static struct lk_key *
scan_row_key(struct lk_scan *sc, sqlite3_stmt *st)
{
	return (scan_key(sc, sqlite3_column_int(st, 0),
	    query_column_int(st, 1), query_column_u64(st, 2)));
}

/*
 * Read the groups the statement returns (layer, device, stream, alloc
 * step, free step, site, bytes, blocks) into the sites, and into the
 * series too when series is set.  0, or -1 with *cause.
 */
static int
scan_groups(struct query *q, sqlite3_stmt *st, struct lk_scan *sc,
    int series, char **cause)
{
	struct lk_key	*k;
	int64_t		 a, f, bytes, blocks;
	int		 rc;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		k = scan_row_key(sc, st);
		/* An unknown step is 0: before the first, or never freed. */
		a = sqlite3_column_int64(st, 3);
		f = sqlite3_column_int64(st, 4);
		bytes = sqlite3_column_int64(st, 6);
		blocks = sqlite3_column_int64(st, 7);
		if (series)
			scan_series(sc, k, a, f, bytes, blocks);
		scan_sites(sc, k, a, f, query_column_int(st, 5), bytes,
		    blocks);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return (query_fail(q, cause));
	return (0);
}

/*
 * Scan a run that has allocation_steps: the series from them, and the
 * sites from the groups that can add to one (scan_sites): those live at
 * the end of the last step (never freed, or freed after it) and those
 * made by the end of the warm-up and freed by the last step, a few ranges
 * of the indexes allocation_groups_free and _alloc, not every group.
 */
static int
scan_summed(struct query *q, int64_t run_id, int64_t process_id,
    struct lk_scan *sc, char **cause)
{
	sqlite3_stmt	*st;
	struct lk_key	*k;
	int		 rc;

	st = scan_prepare(q, "SELECT layer, device, stream, step,"
	    " alloc_bytes, alloc_blocks, freed_bytes, freed_blocks"
	    " FROM allocation_steps WHERE run_id = ?1 AND (?2 = 0 OR"
	    " process_id = ?2)", run_id, process_id, cause);
	if (st == NULL)
		return (-1);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		k = scan_row_key(sc, st);
		scan_step_row(sc, k, sqlite3_column_int64(st, 3),
		    sqlite3_column_int64(st, 4), sqlite3_column_int64(st, 5),
		    sqlite3_column_int64(st, 6), sqlite3_column_int64(st, 7));
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return (query_fail(q, cause));
	st = scan_prepare(q, SCAN_GROUPS " AND free_step IS NULL"
	    " UNION ALL " SCAN_GROUPS " AND ?3 > 0 AND free_step > ?3"
	    " UNION ALL " SCAN_GROUPS " AND ?3 > 0 AND alloc_step IS NULL"
	    " AND +free_step <= ?3"
	    " UNION ALL " SCAN_GROUPS " AND alloc_step <= ?4 AND"
	    " +free_step <= ?3", run_id, process_id, cause);
	if (st == NULL)
		return (-1);
	sqlite3_bind_int64(st, 3, sc->nsteps);
	sqlite3_bind_int64(st, 4, sc->warmup);
	return (scan_groups(q, st, sc, 0, cause));
}

/* What each (layer, device, stream) allocated, live or not. */
#define SCAN_TOTALS(table) "SELECT layer, device, stream, sum(bytes) FROM " \
	table " WHERE run_id = ?1 AND (?2 = 0 OR process_id = ?2) GROUP BY" \
	" layer, device, stream"

/*
 * Scan a run without steps.  Its one slot is the end, and its rows and
 * groups have no free step, freed or not (vramtrace-db(5)): what is live
 * at the end is read from the allocations not freed (a few rows, through
 * the partial index allocations_live), then what each stream allocated in
 * all from the groups (from every allocation in a run that never
 * finished).  0, or -1 with *cause.
 */
static int
scan_stepless(struct query *q, int64_t run_id, int64_t process_id,
    struct lk_scan *sc, char **cause)
{
	sqlite3_stmt	*st;
	struct lk_key	*k;
	int		 rc;

	st = scan_prepare(q, "SELECT layer, device, stream, 0, 0, site_id,"
	    " sum(bytes), count(*) FROM allocations WHERE run_id = ?1 AND"
	    " (?2 = 0 OR process_id = ?2) AND free_ns IS NULL GROUP BY"
	    " layer, device, stream, site_id", run_id, process_id, cause);
	if (st == NULL || scan_groups(q, st, sc, 1, cause) != 0)
		return (-1);
	st = scan_prepare(q, query_has_groups(q, run_id) ?
	    SCAN_TOTALS("allocation_groups") : SCAN_TOTALS("allocations"),
	    run_id, process_id, cause);
	if (st == NULL)
		return (-1);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		k = scan_row_key(sc, st);
		k->alloc_bytes = sqlite3_column_int64(st, 3);
		k->last_alloc_step = 1;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return (query_fail(q, cause));
	return (0);
}

/*
 * Scan the groups of run_id, of process process_id only unless 0: from
 * allocation_steps and the groups that matter when the run has them, else
 * every group (or, for a run that never finished, the allocations grouped
 * as allocation_groups would have them).  A run without steps is read
 * apart (scan_stepless).
 */
static int
scan_run(struct query *q, int64_t run_id, int64_t process_id,
    struct lk_scan *sc, char **cause)
{
	sqlite3_stmt	*st;
	int		 complete;

	if (sc->nsteps == 0)
		return (scan_stepless(q, run_id, process_id, sc, cause));
	if (query_has_alloc_steps(q, run_id))
		return (scan_summed(q, run_id, process_id, sc, cause));
	complete = query_has_groups(q, run_id);
	st = scan_prepare(q, complete ? SCAN_GROUPS : "SELECT layer, device, stream, alloc_step,"
	    " free_step, site_id, sum(bytes), count(*) FROM allocations"
	    " WHERE run_id = ?1 AND (?2 = 0 OR process_id = ?2) GROUP BY"
	    " layer, device, stream, alloc_step, free_step, site_id", run_id,
	    process_id, cause);
	if (st == NULL)
		return (-1);
	return (scan_groups(q, st, sc, 1, cause));
}

static void
scan_free(struct lk_scan *sc)
{
	size_t	i;

	for (i = 0; i < sc->nkeys; i++) {
		free(sc->keys[i].delta);
		free(sc->keys[i].delta_n);
	}
	free(sc->keys);
	slots_free(&sc->key_slots);
	free(sc->sites);
}

static int
load_steps(struct query *q, struct leak_report *r, char **cause)
{
	sqlite3_stmt	*st;
	int64_t		 n;
	int		 rc;

	n = query_int_arg(q, "SELECT count(*) FROM steps WHERE run_id = ?1",
	    r->run_id);
	if (n < 0)
		return (query_fail(q, cause));
	r->steps = xcalloc((size_t)n + 1, sizeof *r->steps);
	st = query_prepare(q, "SELECT step, end_ns FROM steps WHERE"
	    " run_id = ?1 ORDER BY step", cause);
	if (st == NULL)
		return (-1);
	sqlite3_bind_int64(st, 1, r->run_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && r->nsteps < (size_t)n) {
		r->steps[r->nsteps].step = sqlite3_column_int64(st, 0);
		r->steps[r->nsteps].end_ns = (uint64_t)sqlite3_column_int64(st,
		    1);
		r->nsteps++;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		return (query_fail(q, cause));
	return (0);
}

/*
 * A snapshot's trace that begins after steps ended (PyTorch kept its last
 * max_entries events): the live bytes at those steps' ends are not known
 * (blocks freed before the trace are missing, blocks it saw freed but not
 * made count from the start).  Those at the end of any later step are
 * whole: each block live then is freed in the trace or live at the dump.
 * So the warm-up reaches to the first step that ends after the trace
 * begins (r->history_from).  0, or -1 with *cause.
 */
static int
history_from(struct query *q, struct leak_report *r, char **cause)
{
	int64_t	before;

	before = query_int_arg(q, "SELECT count(*) FROM steps WHERE run_id ="
	    " ?1 AND end_ns < (SELECT start_ns FROM runs WHERE id = ?1)",
	    r->run_id);
	if (before < 0)
		return (query_fail(q, cause));
	if (before > 0 && (size_t)before < r->nsteps) {
		r->history_from = (int)before + 1;
		if (r->warmup < r->history_from)
			r->warmup = r->history_from;
	}
	return (0);
}

/*
 * Live bytes and blocks at each step end from a key's deltas, and at the
 * end of the last step (with no steps, at the end: what the run left).
 */
static void
stream_fill(struct leak_report *r, struct leak_stream *s,
    const struct lk_key *k)
{
	int64_t	bytes = 0, blocks = 0;
	size_t	i;

	if (r->nsteps == 0) {
		bytes = k->delta[1];
		blocks = k->delta_n[1];
	}
	for (i = 0; i < r->nsteps; i++) {
		bytes += k->delta[i + 1];
		blocks += k->delta_n[i + 1];
		s->live_per_step[i] = bytes;
		r->steps[i].live_bytes += bytes;
	}
	s->live_bytes = bytes;
	s->live_blocks = blocks;
	s->alloc_bytes = k->alloc_bytes;
	s->last_alloc_step = k->last_alloc_step;
	s->unfreed_bytes = k->unfreed_bytes;
	s->unfreed_blocks = k->unfreed_blocks;
	s->new_live_bytes = k->new_live_bytes;
	s->new_live_blocks = k->new_live_blocks;
}

/*
 * The streams of the analysed layer, and those holding live segments of
 * layer 0 (which can be stranded without using the analysed layer).
 */
static void
build_streams(struct leak_report *r, const struct lk_scan *sc)
{
	const struct lk_key	*k;
	struct leak_stream	*s;
	size_t			 i;
	int64_t			 live, n;

	for (i = 0; i < sc->nkeys; i++) {
		k = &sc->keys[i];
		if (k->layer == r->layer)
			stream_fill(r, leak_report_stream(r, k->device,
			    k->stream), k);
	}
	if (r->layer == EVENT_LAYER_SEGMENT)
		return;
	for (i = 0; i < sc->nkeys; i++) {
		k = &sc->keys[i];
		if (k->layer != EVENT_LAYER_SEGMENT)
			continue;
		for (live = n = 0; n < sc->nsteps; n++)
			live += k->delta[n + 1];
		if (live <= 0)
			continue;
		s = leak_report_stream(r, k->device, k->stream);
		s->segment_bytes = live;
		for (live = n = 0; n < sc->nsteps; n++)
			live += k->delta_n[n + 1];
		s->segment_blocks = live;
	}
}

/* The report whose streams stream_order() sorts (qsort has no argument). */
static const struct leak_report *stream_order_report;

static int
cmp_stream_order(const void *a, const void *b)
{
	uint64_t	x, y;

	x = stream_order_report->streams[*(const size_t *)a].stream;
	y = stream_order_report->streams[*(const size_t *)b].stream;
	return ((x > y) - (x < y));
}

/*
 * The indexes of r's streams in order of stream handle, so that the rows
 * naming a handle find its streams (one per device) by bisection, not by
 * a scan of every stream each (200,000 streams took minutes).
 */
static size_t *
stream_order(const struct leak_report *r)
{
	size_t	*order, i;

	order = xreallocarray(NULL, r->nstreams + 1, sizeof *order);
	for (i = 0; i < r->nstreams; i++)
		order[i] = i;
	stream_order_report = r;
	util_sort(order, r->nstreams, sizeof *order, cmp_stream_order);
	return (order);
}

/* The first position in order (of r's n streams) of handle stream, or n. */
static size_t
stream_order_find(const struct leak_report *r, const size_t *order,
    uint64_t stream)
{
	size_t	lo = 0, hi = r->nstreams, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (r->streams[order[mid]].stream < stream)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (lo);
}

/*
 * Streams' lifetimes, handles (of the latest lifetime that knows one) and
 * whether the data names the default stream: the CUPTI NULL stream (flags
 * 3) of a recording, stream 0 or 2 (legacy and per-thread default) of an
 * imported snapshot.  A row without a device applies to the handle on
 * every device.
 */
static int
load_stream_info(struct query *q, struct leak_report *r, int64_t process_id,
    char **cause)
{
	sqlite3_stmt		*st;
	struct leak_stream	*s;
	size_t			 i, *order;
	int			 rc;
	uint64_t		 stream;
	int32_t			 device;

	st = query_prepare(q, "SELECT device, stream, flags, created_ns,"
	    " destroyed_ns, handle FROM streams WHERE run_id = ?1 AND (?2 = 0"
	    " OR process_id = ?2) ORDER BY id", cause);
	if (st == NULL)
		return (-1);
	sqlite3_bind_int64(st, 1, r->run_id);
	sqlite3_bind_int64(st, 2, process_id);
	order = stream_order(r);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		device = query_column_int(st, 0);
		stream = query_column_u64(st, 1);
		for (i = stream_order_find(r, order, stream); i < r->nstreams &&
		    r->streams[order[i]].stream == stream; i++) {
			s = &r->streams[order[i]];
			if (s->device != device &&
			    sqlite3_column_type(st, 0) != SQLITE_NULL)
				continue;
			if (query_column_int(st, 2) == 3)
				s->is_default = s->default_known = 1;
			s->created_ns = query_column_u64(st, 3);
			s->destroyed_ns = query_column_u64(st, 4);
			if (sqlite3_column_type(st, 5) != SQLITE_NULL)
				s->handle = query_column_u64(st, 5);
		}
	}
	sqlite3_finalize(st);
	free(order);
	if (rc != SQLITE_DONE)
		return (query_fail(q, cause));
	for (i = 0; r->imported && i < r->nstreams; i++) {
		s = &r->streams[i];
		if (s->stream == 0 || s->stream == 2)
			s->is_default = s->default_known = 1;
	}
	return (0);
}

static int
cmp_suspect(const void *a, const void *b)
{
	const struct lk_site	*x = a, *y = b;

	return ((x->bytes < y->bytes) - (x->bytes > y->bytes));
}

static int
build_suspects(struct query *q, struct leak_report *r, struct lk_scan *sc,
    char **cause)
{
	struct lk_site		*s;
	struct leak_suspect	*out;
	size_t			 i;

	scan_merge_sites(sc);
	util_sort(sc->sites, sc->nsites, sizeof *sc->sites, cmp_suspect);
	r->suspects = xcalloc(LEAK_MAX_SUSPECTS, sizeof *r->suspects);
	for (i = 0; i < sc->nsites && r->nsuspects < LEAK_MAX_SUSPECTS; i++) {
		s = &sc->sites[i];
		if (s->layer != r->layer || s->bytes <= 0 ||
		    s->live_last <= s->live_warmup)
			continue;
		out = &r->suspects[r->nsuspects++];
		out->site_id = s->site_id;
		out->bytes = s->bytes;
		out->blocks = s->blocks;
		out->device = s->device;
		out->stream = s->stream;
		if (s->site_id >= 0 && (query_site_label(q, s->site_id,
		    &out->site, cause) != 0 || query_site_origin(q,
		    s->site_id, &out->origin, &out->caller, &out->within,
		    cause) != 0))
			return (-1);
	}
	return (0);
}

/* bsearch() a device number among a run's devices (by number). */
static int
cmp_device_number(const void *key, const void *elem)
{
	int32_t				 d = *(const int32_t *)key;
	const struct query_device	*e = elem;

	return (d < e->device ? -1 : d > e->device);
}

/*
 * The memory of each stream's device, and of the devices the streams use
 * together (0 when any of them is unknown), from the run's devices: a
 * search per stream, each device counted once.
 */
static void
load_device_bytes(struct leak_report *r, const struct query_run *run)
{
	const struct query_device	*d;
	struct leak_stream		*s;
	uint8_t				*counted;
	size_t				 i;
	int				 known = r->nstreams > 0;

	r->device_bytes = 0;
	counted = xcalloc(run->ndevices + 1, 1);
	for (i = 0; i < r->nstreams; i++) {
		s = &r->streams[i];
		d = run->ndevices == 0 ? NULL : bsearch(&s->device,
		    run->devices, run->ndevices, sizeof *d, cmp_device_number);
		if (d != NULL && d->total_bytes > 0) {
			s->device_bytes = (uint64_t)d->total_bytes;
			if (!counted[d - run->devices])
				r->device_bytes += s->device_bytes;
			counted[d - run->devices] = 1;
		}
		known = known && s->device_bytes > 0;
	}
	free(counted);
	if (!known)
		r->device_bytes = 0;
}

/*
 * Analyse run opts->run_id (0: the newest) of q, or only the allocations and
 * streams of process opts->process_id when it is not 0: everything but the
 * ranks (query-ranks.c).  A whole run with no allocations is analysed from
 * its usage samples (query-usage.c).  Returns 0 with *out set (the caller
 * frees it with leak_report_free), or -1 with *cause when the run does not
 * exist or the database cannot be read.  A run with no steps is not an
 * error: its verdict is INCONCLUSIVE.
 */
int
query_scan(struct query *q, const struct leak_options *opts,
    struct leak_report **out, char **cause)
{
	struct lk_scan		 sc;
	struct leak_report	*r;
	struct query_run	 run;

	memset(&sc, 0, sizeof sc);
	r = xcalloc(1, sizeof *r);
	r->run_id = opts->run_id != 0 ? opts->run_id : query_latest_run(q);
	r->warmup = opts->warmup;
	r->threshold = opts->threshold;
	if (query_run(q, r->run_id, 0, &run, cause) != 0)
		goto fail;
	r->imported = run.source != NULL && strcmp(run.source, "import") == 0;
	if (r->imported && (r->no_history = query_int_arg(q, "SELECT NOT EXISTS"
	    " (SELECT 1 FROM snapshots WHERE run_id = ?1 AND"
	    " trace_entries > 0)", r->run_id)) < 0) {
		query_fail(q, cause);
		goto fail;
	}
	if (load_steps(q, r, cause) != 0 ||
	    (r->imported && !r->no_history && history_from(q, r, cause) != 0))
		goto fail;
	sc.nsteps = (int64_t)r->nsteps;
	sc.warmup = r->warmup;
	if (scan_run(q, r->run_id, opts->process_id, &sc, cause) != 0)
		goto fail;
	/*
	 * The streams in one order whatever order the rows came in (a file
	 * with allocation_steps or without): by layer, device and stream.
	 * No key is looked up after this (key_slots would be stale).
	 */
	util_sort(sc.keys, sc.nkeys, sizeof *sc.keys, cmp_key);
	r->layer = opts->layer >= 0 ? opts->layer :
	    query_run_layer(q, r->run_id);
	build_streams(r, &sc);
	if (sc.nkeys == 0 && opts->process_id == 0 &&
	    query_usage(q, r, cause) != 0)
		goto fail;
	if (load_stream_info(q, r, opts->process_id, cause) != 0)
		goto fail;
	if (build_suspects(q, r, &sc, cause) != 0)
		goto fail;
	if (r->layer != EVENT_LAYER_HOST)	/* not the device's memory */
		load_device_bytes(r, &run);
	leak_analyse(r);
	query_run_free(&run);
	scan_free(&sc);
	*out = r;
	return (0);

fail:
	query_run_free(&run);
	scan_free(&sc);
	leak_report_free(r);
	return (-1);
}
