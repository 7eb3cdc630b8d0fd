/*
 * query-events.c: every allocation of a run as two events, +bytes at its
 * alloc time and -bytes at its free, walked in time order, all those of
 * one instant together (query-int.h), for the HTML report's buckets
 * (query-report-walk.c) and the export's counters (query-timeline.c).
 *
 * Sorting every event in SQLite takes long (11 s for 10 M allocations), so
 * the walk reads the allocations in table order and sorts in C, a window
 * of time at a time.  A pass keeps the events from the window's start on
 * while they fit in the window's buffer; when the buffer is full it keeps
 * the earliest seven eighths and ends the window there, so that after the
 * pass the buffer holds every event of the window.  The first pass also
 * finds the run's extent and every series; the usual run fits in it
 * whole.  Memory stays near twice the buffer (the sort's scratch).
 *
 * An event packs its series, its sign and its bytes in one word: series in
 * the top 16 bits, a free flag in bit 47, the bytes below (128 TiB).
 */
#include "config.h"

#include "query-int.h"

#include <stdlib.h>
#include <string.h>

#include "unknown.h"

#define EVENT_FREE_BIT		(ALLOCATION_BYTES_MAX + 1)
#define EVENT_BYTES_MASK	ALLOCATION_BYTES_MAX

/* The lookup of a series by its key: open addressing, half full. */
struct qe_slot {
	struct query_series	 key;
	size_t			 series;	/* + 1; 0: empty */
};

struct qe_work {
	struct query_events	*e;
	struct qe_slot		*slots;
	size_t			 mask;
	size_t			 nseries;
	struct query_event	*ev;
	struct query_event	*tmp;		/* the sort's scratch */
	size_t			 nev, cap_ev;
	int			 first_pass;
	uint64_t		 start, end;	/* the window being read */
	char			*cause;		/* why a row was refused */
};

/* The series of event e. */
size_t
query_event_series(const struct query_event *e)
{
	return ((size_t)(e->w >> 48));
}

/* The change of live bytes event e makes: its bytes, negative for a free. */
int64_t
query_event_bytes(const struct query_event *e)
{
	int64_t	d = (int64_t)(e->w & EVENT_BYTES_MASK);

	return ((e->w & EVENT_FREE_BIT) ? -d : d);
}

static uint64_t
slot_hash(const struct query_series *k)
{
	uint64_t	h;

	h = k->stream ^ ((uint64_t)k->process_id << 20) ^
	    ((uint64_t)(uint32_t)k->device << 40) ^ ((uint64_t)k->layer << 60);
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return (h);
}

static void
slots_grow(struct qe_work *w)
{
	struct qe_slot	*old = w->slots, *s;
	size_t		 n = w->mask + 1, i, j;

	w->mask = old == NULL ? 63 : 2 * n - 1;
	w->slots = xcalloc(w->mask + 1, sizeof *w->slots);
	for (i = 0; old != NULL && i < n; i++) {
		if (old[i].series == 0)
			continue;
		s = &old[i];
		for (j = slot_hash(&s->key) & w->mask; w->slots[j].series != 0;
		    j = (j + 1) & w->mask)
			;
		w->slots[j] = *s;
	}
	free(old);
}

/*
 * The series of key k, told to e->series() when new; SIZE_MAX when there
 * would be too many.
 */
static size_t
series_get(struct qe_work *w, const struct query_series *k)
{
	struct qe_slot	*s;
	size_t		 i;

	if (w->slots == NULL)
		slots_grow(w);
	for (i = slot_hash(k) & w->mask;; i = (i + 1) & w->mask) {
		s = &w->slots[i];
		if (s->series == 0)
			break;
		if (s->key.process_id == k->process_id && s->key.device ==
		    k->device && s->key.layer == k->layer && s->key.stream ==
		    k->stream)
			return (s->series - 1);
	}
	if (w->nseries >= QUERY_EVENTS_MAX_SERIES)
		return (SIZE_MAX);
	s->key = *k;
	s->series = ++w->nseries;
	w->e->series(w->e->arg, w->nseries - 1, k);
	if (2 * (w->nseries + 1) > w->mask + 1)
		slots_grow(w);
	return (w->nseries - 1);
}

static void
event_add(struct qe_work *w, uint64_t t, size_t series, int is_free,
    int64_t bytes)
{
	if (w->nev == w->cap_ev) {
		w->cap_ev = w->cap_ev == 0 ? 4096 : 2 * w->cap_ev;
		w->ev = xreallocarray(w->ev, w->cap_ev, sizeof *w->ev);
	}
	w->ev[w->nev].t = t;
	w->ev[w->nev].w = (uint64_t)series << 48 | (is_free ?
	    EVENT_FREE_BIT : 0) | ((uint64_t)bytes & EVENT_BYTES_MASK);
	w->nev++;
}

static int
cmp_event_time(const void *a, const void *b)
{
	uint64_t	x = ((const struct query_event *)a)->t;
	uint64_t	y = ((const struct query_event *)b)->t;

	return ((x > y) - (x < y));
}

/*
 * The buffer is full (the window's events): keep its earliest seven
 * eighths and end the window before the rest.  The window's first instant
 * stays whole, however many events it has.
 */
static void
window_cut(struct qe_work *w)
{
	uint64_t	 end;
	size_t		 i, k;

	end = ((struct query_event *)util_select(w->ev, w->nev, sizeof *w->ev,
	    w->nev / 8 * 7, cmp_event_time))->t;
	if (end <= w->start)
		end = w->start + 1;
	for (i = k = 0; i < w->nev; i++) {
		if (w->ev[i].t < end)
			w->ev[k++] = w->ev[i];
	}
	w->nev = k;
	w->end = end;
}

/*
 * One allocation: its events in the window [start, end), times as read;
 * in the first pass, the extent of the times too.  The row is (process or
 * 0, device or -1, stream or -1 (UNKNOWN_U64), layer, alloc time or 0 (it
 * counts from the run's first instant), free time or -1 (not freed),
 * bytes): reading each column once, without asking its type, halves the
 * cost of a pass.
 */
static int
pass_row(struct qe_work *w, sqlite3_stmt *st)
{
	struct query_events	*e = w->e;
	struct query_series	 k;
	uint64_t		 t[2];
	int64_t			 bytes;
	size_t			 s;
	int			 i, n = 1;

	/* The SELECT spells unknowns as pass_row wants them (see there). */
	k.process_id = sqlite3_column_int64(st, 0);
	k.device = sqlite3_column_int(st, 1);
	k.layer = sqlite3_column_int(st, 3);
	k.stream = (uint64_t)sqlite3_column_int64(st, 2);
	if ((s = series_get(w, &k)) == SIZE_MAX) {
		xasprintf(&w->cause, "the run has more than %d series of "
		    "live bytes", QUERY_EVENTS_MAX_SERIES);
		return (-1);
	}
	bytes = sqlite3_column_int64(st, 6);
	if (bytes < 0 || (uint64_t)bytes > EVENT_BYTES_MASK) {
		xasprintf(&w->cause, "an allocation of %lld bytes",
		    (long long)bytes);
		return (-1);
	}
	t[0] = (uint64_t)sqlite3_column_int64(st, 4);
	if ((t[1] = (uint64_t)sqlite3_column_int64(st, 5)) != UNKNOWN_U64)
		n = 2;
	for (i = 0; i < n; i++) {
		if (w->first_pass && t[i] != 0) {
			if (e->first == UNKNOWN_U64 || t[i] < e->first)
				e->first = t[i];
			if (e->last == UNKNOWN_U64 || t[i] > e->last)
				e->last = t[i];
		}
		if (t[i] < w->start || t[i] >= w->end)
			continue;
		if (w->nev >= e->window) {
			window_cut(w);
			if (t[i] >= w->end)
				continue;
		}
		event_add(w, t[i], s, i == 1, bytes);
	}
	return (0);
}

/* Read every allocation of the run once, through pass_row. */
static int
pass_read(struct query *q, struct qe_work *w, char **cause)
{
	sqlite3_stmt	*st;
	int		 rc;

	if ((st = query_prepare(q, "SELECT coalesce(process_id, 0),"
	    " coalesce(device, -1), coalesce(stream, -1), layer,"
	    " coalesce(alloc_ns, 0), coalesce(free_ns, -1), bytes FROM"
	    " allocations WHERE id BETWEEN ?2 AND ?3 AND +run_id = ?1",
	    cause)) == NULL)
		return (-1);
	sqlite3_bind_int64(st, 1, w->e->run_id);
	sqlite3_bind_int64(st, 2, w->e->first_id);
	sqlite3_bind_int64(st, 3, w->e->last_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (pass_row(w, st) != 0) {
			sqlite3_finalize(st);
			xasprintf(cause, "%s: %s", q->path, w->cause);
			return (-1);
		}
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return (query_fail(q, cause));
	return (0);
}

/*
 * Sort events by time: a least-significant-digit radix sort, a byte at a
 * time, over the bytes in which the times differ; tmp is scratch space of
 * the same size.
 */
static void
events_sort(struct query_event *ev, struct query_event *tmp, size_t n)
{
	struct query_event	*src = ev, *dst = tmp, *swap;
	size_t			 count[256], i, at, c;
	uint64_t		 bits = 0;
	unsigned int		 shift;

	for (i = 0; i < n; i++)
		bits |= ev[i].t;
	for (shift = 0; shift < 64 && (bits >> shift) != 0; shift += 8) {
		memset(count, 0, sizeof count);
		for (i = 0; i < n; i++)
			count[(src[i].t >> shift) & 0xff]++;
		for (at = i = 0; i < 256; i++) {
			c = count[i];
			count[i] = at;
			at += c;
		}
		for (i = 0; i < n; i++)
			dst[count[(src[i].t >> shift) & 0xff]++] = src[i];
		swap = src;
		src = dst;
		dst = swap;
	}
	if (src != ev)
		memcpy(ev, src, n * sizeof *ev);
}

/*
 * Walk the events of a window in time order, from the run's first
 * instant: an instant at a time.
 */
static void
walk(struct qe_work *w)
{
	struct query_events	*e = w->e;
	size_t			 i, j;
	uint64_t		 t0;

	/* UNKNOWN_U64: every allocation is at one unknown time. */
	t0 = e->first != UNKNOWN_U64 ? e->first : 0;

	for (i = 0; i < w->nev; i++)
		w->ev[i].t = w->ev[i].t > t0 ? w->ev[i].t - t0 : 0;
	w->tmp = xreallocarray(w->tmp, w->cap_ev, sizeof *w->tmp);
	events_sort(w->ev, w->tmp, w->nev);
	for (i = 0; i < w->nev; i = j) {
		for (j = i + 1; j < w->nev && w->ev[j].t == w->ev[i].t; j++)
			;
		e->instant(e->arg, w->ev[i].t, &w->ev[i], j - i);
	}
	w->nev = 0;
}

/*
 * Walk the allocations of run e->run_id with ids from e->first_id to
 * e->last_id (the run's rows: a row added later is left out) in windows
 * of at most e->window events (0: QUERY_EVENTS_WINDOW).  The first pass
 * reads every row: it tells e->series() of each new series (process or 0,
 * device or -1, layer, stream or UNKNOWN_U64) with its number, 0 up, at
 * most QUERY_EVENTS_MAX_SERIES of them, and widens e->first and e->last (UNKNOWN_U64 when the caller knows
 * none) to the allocations' times.  Then e->ready(), and e->instant() once
 * per instant in time order with its events: the time in ns after
 * e->first (an allocation of unknown time is at 0, as all are when
 * e->first stays UNKNOWN_U64).  0, or -1 with *cause
 * (a series too many, a size that does not fit, SQLite's error).
 */
int
query_events_walk(struct query *q, struct query_events *e, char **cause)
{
	struct qe_work	 w;
	int		 rc = -1;

	memset(&w, 0, sizeof w);
	w.e = e;
	if (e->window == 0)
		e->window = QUERY_EVENTS_WINDOW;
	w.first_pass = 1;
	w.start = 0;
	w.end = UINT64_MAX;
	if (pass_read(q, &w, cause) != 0)
		goto out;
	w.first_pass = 0;
	e->ready(e->arg);
	walk(&w);
	while (w.end != UINT64_MAX) {
		w.start = w.end;
		w.end = UINT64_MAX;
		if (pass_read(q, &w, cause) != 0)
			goto out;
		walk(&w);
	}
	rc = 0;
out:
	free(w.slots);
	free(w.ev);
	free(w.tmp);
	free(w.cause);
	return (rc);
}
