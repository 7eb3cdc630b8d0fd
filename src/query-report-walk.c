/*
 * query-report-walk.c: live bytes over time for the HTML report, bucketed
 * so that the page stays small for any run (report.h says what a bucket
 * holds), for query-report.c.
 *
 * Every allocation is two events, +bytes at its alloc time and -bytes at
 * its free.  The events are walked in time order, all those of one instant
 * together, keeping the live bytes of every series (process, device,
 * stream, layer) and of every track (the sum over a lane's layer): each
 * bucket remembers the state at the highest total of each track, and the
 * peaks are exact.
 *
 * Sorting every event in SQLite takes long (11 s for 10 M allocations), so
 * the walk reads the allocations in table order and sorts in C, a window
 * of time at a time.  A pass keeps the events from the window's start on
 * while they fit in the window's buffer; when the buffer is full it keeps
 * the earliest seven eighths and ends the window there, so that after the
 * pass the buffer holds every event of the window.  The first pass also
 * finds the run's extent; the usual run fits in it whole.  Memory stays
 * near twice the buffer (the sort's scratch): REPORT_WINDOW_EVENTS events
 * of 16 bytes by default.
 *
 * An event packs its series, its sign and its bytes in one word: series in
 * the top 16 bits, a free flag in bit 47, the bytes below (128 TiB).
 */
#include "config.h"

#include "query-int.h"
#include "report.h"

#include <stdlib.h>
#include <string.h>

#include "unknown.h"

#define EVENT_FREE_BIT		(UINT64_C(1) << 47)
#define EVENT_BYTES_MASK	(EVENT_FREE_BIT - 1)
#define REPORT_MAX_SERIES	65535

struct rq_event {
	uint64_t	 t;		/* ns from t0 */
	uint64_t	 w;		/* series, free flag, bytes */
};

/* The lookup of a series by its key: open addressing, half full. */
struct rq_slot {
	int64_t		 process_id;
	int32_t		 device;
	int		 layer;
	uint64_t	 stream;
	size_t		 series;	/* + 1; 0: empty */
};

struct rq_work {
	struct report	*r;
	size_t		 window;	/* events sorted at once at most */
	struct rq_slot	*slots;
	size_t		 mask;

	/* Per series and per track: the live bytes now. */
	int64_t		*cur;
	int64_t		*track_cur;
	int64_t		*track_hi;	/* the highest in the bucket */
	size_t		**members;	/* the series of each track */
	size_t		 cap_series, cap_tracks;

	struct rq_event	*ev;
	struct rq_event	*tmp;		/* the sort's scratch */
	size_t		 nev, cap_ev;
	uint64_t	 first, last;	/* the extent of the times read */
	int		 first_pass;
	uint64_t	 start, end;	/* the window being read */
	size_t		 bucket;	/* the walk's; SIZE_MAX: none yet */
	int		 walking;	/* hi[] are allocated */

	/* The tracks and series one instant changed. */
	size_t		*touched;
	size_t		 ntouched;
	uint32_t	*seen;
	uint32_t	 stamp;
	size_t		*touched_series;
	size_t		 ntouched_series;
	uint32_t	*seen_series;

	int64_t		 run_cur;	/* all lanes, in r->layer */
	char		*cause;		/* set by a callback that failed */
};

static uint64_t
slot_hash(int64_t process_id, int32_t device, int layer, uint64_t stream)
{
	uint64_t	h;

	h = stream ^ ((uint64_t)process_id << 20) ^
	    ((uint64_t)(uint32_t)device << 40) ^ ((uint64_t)layer << 60);
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return (h);
}

/*
 * The index of the lane of (process, device) in r->lanes, made when new
 * (for query-report.c too, which adds lanes for copies).
 */
size_t
query_report_walk_lane(struct report *r, int64_t process_id, int32_t device)
{
	struct report_lane	*l;
	size_t			 i;

	for (i = 0; i < r->nlanes; i++) {
		if (r->lanes[i].process_id == process_id &&
		    r->lanes[i].device == device)
			return (i);
	}
	r->lanes = xreallocarray(r->lanes, r->nlanes + 1, sizeof *r->lanes);
	l = &r->lanes[r->nlanes];
	memset(l, 0, sizeof *l);
	l->process_id = process_id;
	l->device = device;
	l->rank = UNKNOWN_INT;
	return (r->nlanes++);
}

/* The track of (lane, layer), made when new. */
static size_t
track_get(struct rq_work *w, size_t lane, int layer)
{
	struct report		*r = w->r;
	struct report_track	*k;
	size_t			 i;

	for (i = 0; i < r->ntracks; i++) {
		if (r->tracks[i].lane == lane && r->tracks[i].layer == layer)
			return (i);
	}
	if (r->ntracks == w->cap_tracks) {
		w->cap_tracks = w->cap_tracks == 0 ? 8 : 2 * w->cap_tracks;
		r->tracks = xreallocarray(r->tracks, w->cap_tracks,
		    sizeof *r->tracks);
		w->track_cur = xreallocarray(w->track_cur, w->cap_tracks,
		    sizeof *w->track_cur);
		w->track_hi = xreallocarray(w->track_hi, w->cap_tracks,
		    sizeof *w->track_hi);
		w->members = xreallocarray(w->members, w->cap_tracks,
		    sizeof *w->members);
		w->seen = xreallocarray(w->seen, w->cap_tracks,
		    sizeof *w->seen);
		w->touched = xreallocarray(w->touched, w->cap_tracks,
		    sizeof *w->touched);
	}
	k = &r->tracks[r->ntracks];
	memset(k, 0, sizeof *k);
	k->lane = lane;
	k->layer = layer;
	k->peak.ns = UNKNOWN_U64;
	k->peak.step = UNKNOWN_INT;
	w->track_cur[r->ntracks] = w->track_hi[r->ntracks] = 0;
	w->members[r->ntracks] = NULL;
	w->seen[r->ntracks] = 0;
	return (r->ntracks++);
}

static void
slots_grow(struct rq_work *w)
{
	struct rq_slot	*old = w->slots, *s;
	size_t		 n = w->mask + 1, i, j;

	w->mask = old == NULL ? 63 : 2 * n - 1;
	w->slots = xcalloc(w->mask + 1, sizeof *w->slots);
	for (i = 0; old != NULL && i < n; i++) {
		if (old[i].series == 0)
			continue;
		s = &old[i];
		j = slot_hash(s->process_id, s->device, s->layer, s->stream);
		for (j &= w->mask; w->slots[j].series != 0;
		    j = (j + 1) & w->mask)
			;
		w->slots[j] = *s;
	}
	free(old);
}

/* A new series of track k; NULL cause on success. */
static size_t
series_new(struct rq_work *w, size_t k, uint64_t stream)
{
	struct report		*r = w->r;
	struct report_series	*s;
	struct report_track	*t = &r->tracks[k];

	if (r->nseries == w->cap_series) {
		w->cap_series = w->cap_series == 0 ? 16 : 2 * w->cap_series;
		r->series = xreallocarray(r->series, w->cap_series,
		    sizeof *r->series);
		w->cur = xreallocarray(w->cur, w->cap_series, sizeof *w->cur);
		w->seen_series = xreallocarray(w->seen_series, w->cap_series,
		    sizeof *w->seen_series);
		w->touched_series = xreallocarray(w->touched_series,
		    w->cap_series, sizeof *w->touched_series);
	}
	s = &r->series[r->nseries];
	memset(s, 0, sizeof *s);
	s->track = k;
	s->stream = stream;
	if (w->walking)
		s->hi = xcalloc(r->nbuckets, sizeof *s->hi);
	w->cur[r->nseries] = 0;
	w->seen_series[r->nseries] = 0;
	w->members[k] = xreallocarray(w->members[k], t->nseries + 1,
	    sizeof *w->members[k]);
	w->members[k][t->nseries++] = r->nseries;
	return (r->nseries++);
}

/* The series of an allocation, made when new; SIZE_MAX when too many. */
static size_t
series_get(struct rq_work *w, int64_t process_id, int32_t device, int layer,
    uint64_t stream)
{
	struct rq_slot	*s;
	size_t		 i, k;

	if (w->slots == NULL)
		slots_grow(w);
	i = slot_hash(process_id, device, layer, stream) & w->mask;
	for (;; i = (i + 1) & w->mask) {
		s = &w->slots[i];
		if (s->series == 0)
			break;
		if (s->process_id == process_id && s->device == device &&
		    s->layer == layer && s->stream == stream)
			return (s->series - 1);
	}
	if (w->r->nseries >= REPORT_MAX_SERIES)
		return (SIZE_MAX);
	k = track_get(w, query_report_walk_lane(w->r, process_id,
	    device), layer);
	s->process_id = process_id;
	s->device = device;
	s->layer = layer;
	s->stream = stream;
	s->series = series_new(w, k, stream) + 1;
	if (2 * (w->r->nseries + 1) > w->mask + 1)
		slots_grow(w);
	return (w->r->nseries - 1);
}

/*
 * The bucket of instant t (ns from t0) once the buckets are set; an
 * instant past the last bucket is in it (for query-report.c too).
 */
size_t
query_report_walk_bucket(const struct report *r, uint64_t t)
{
	uint64_t	b = t / r->bucket_ns;

	return (b < r->nbuckets ? (size_t)b : r->nbuckets - 1);
}

static void
event_add(struct rq_work *w, uint64_t t, size_t series, int is_free,
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

/* The k-th smallest time of ev[0..n), which it reorders. */
static uint64_t
nth_time(struct rq_event *ev, size_t n, size_t k)
{
	struct rq_event	 swap;
	size_t		 lo = 0, hi = n - 1, i, j;
	uint64_t	 pivot;

	while (lo < hi) {
		pivot = ev[lo + (hi - lo) / 2].t;
		i = lo;
		j = hi;
		while (i <= j) {
			while (ev[i].t < pivot)
				i++;
			while (ev[j].t > pivot)
				j--;
			if (i <= j) {
				swap = ev[i];
				ev[i++] = ev[j];
				ev[j] = swap;
				if (j == 0)
					break;
				j--;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			break;
	}
	return (ev[k].t);
}

/*
 * The buffer is full (w->window events): keep its earliest seven eighths
 * and end the window before the rest.  The window's first instant stays
 * whole, however many events it has.
 */
static void
window_cut(struct rq_work *w)
{
	uint64_t	 end;
	size_t		 i, k;

	end = nth_time(w->ev, w->nev, w->nev / 8 * 7);
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
pass_row(struct rq_work *w, sqlite3_stmt *st)
{
	uint64_t	 t[2];
	int64_t		 bytes;
	size_t		 s;
	int		 i, n = 1;

	/* The SELECT spells unknowns as pass_row wants them (see there). */
	s = series_get(w, sqlite3_column_int64(st, 0),
	    sqlite3_column_int(st, 1), sqlite3_column_int(st, 3),
	    (uint64_t)sqlite3_column_int64(st, 2));
	if (s == SIZE_MAX) {
		xasprintf(&w->cause, "the run has more than %d series of "
		    "live bytes", REPORT_MAX_SERIES);
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
			if (t[i] < w->first)
				w->first = t[i];
			if (w->last == UNKNOWN_U64 || t[i] > w->last)
				w->last = t[i];
		}
		if (t[i] < w->start || t[i] >= w->end)
			continue;
		if (w->nev >= w->window) {
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
pass_read(struct query *q, struct rq_work *w, char **cause)
{
	sqlite3_stmt	*st;
	int		 rc;

	if ((st = query_prepare(q, "SELECT coalesce(process_id, 0),"
	    " coalesce(device, -1), coalesce(stream, -1), layer,"
	    " coalesce(alloc_ns, 0), coalesce(free_ns, -1), bytes FROM"
	    " allocations WHERE id BETWEEN ?2 AND ?3 AND +run_id = ?1",
	    cause)) == NULL)
		return (-1);
	sqlite3_bind_int64(st, 1, w->r->run_id);
	sqlite3_bind_int64(st, 2, w->r->first_id);
	sqlite3_bind_int64(st, 3, w->r->last_id);
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
events_sort(struct rq_event *ev, struct rq_event *tmp, size_t n)
{
	struct rq_event	*src = ev, *dst = tmp, *swap;
	size_t		 count[256], i, at, c;
	uint64_t	 bits = 0;
	unsigned int	 shift;

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

/* A bucket starts: its highest moment so far is its first. */
static void
bucket_open(struct rq_work *w, size_t b)
{
	struct report	*r = w->r;
	size_t		 s;

	for (s = 0; s < r->nseries; s++)
		r->series[s].hi[b] = w->cur[s];
	for (s = 0; s < r->ntracks; s++)
		w->track_hi[s] = w->track_cur[s];
}

/* After an instant: new highs of the tracks and series it changed. */
static void
instant_close(struct rq_work *w, size_t b, uint64_t t)
{
	struct report		*r = w->r;
	struct report_track	*k;
	size_t			 i, j, ki, s;

	for (i = 0; i < w->ntouched; i++) {
		ki = w->touched[i];
		k = &r->tracks[ki];
		if (w->track_cur[ki] > w->track_hi[ki]) {
			w->track_hi[ki] = w->track_cur[ki];
			for (j = 0; j < k->nseries; j++) {
				s = w->members[ki][j];
				r->series[s].hi[b] = w->cur[s];
			}
		}
		if (w->track_cur[ki] > k->peak.bytes) {
			k->peak.bytes = w->track_cur[ki];
			k->peak.ns = t;
		}
	}
	for (i = 0; i < w->ntouched_series; i++) {
		s = w->touched_series[i];
		if (w->cur[s] > r->series[s].peak_bytes)
			r->series[s].peak_bytes = w->cur[s];
	}
	if (w->run_cur > r->peak.bytes) {
		r->peak.bytes = w->run_cur;
		r->peak.ns = t;
	}
	w->ntouched = w->ntouched_series = 0;
	w->stamp++;
}

static void
event_apply(struct rq_work *w, const struct rq_event *e)
{
	struct report	*r = w->r;
	size_t		 s = (size_t)(e->w >> 48), k = r->series[s].track;
	int64_t		 d = (int64_t)(e->w & EVENT_BYTES_MASK);

	if (e->w & EVENT_FREE_BIT)
		d = -d;
	w->cur[s] += d;
	w->track_cur[k] += d;
	if (r->tracks[k].layer == r->layer && r->lanes[r->tracks[k].lane].
	    device >= 0)
		w->run_cur += d;
	if (w->seen[k] != w->stamp) {
		w->seen[k] = w->stamp;
		w->touched[w->ntouched++] = k;
	}
	if (w->seen_series[s] != w->stamp) {
		w->seen_series[s] = w->stamp;
		w->touched_series[w->ntouched_series++] = s;
	}
}

/* Open the buckets up to b (the walk's buckets stay open across windows). */
static void
buckets_open(struct rq_work *w, size_t b)
{
	while (w->bucket == SIZE_MAX || w->bucket < b)
		bucket_open(w, ++w->bucket);
}

/* Walk the events of a window, in time order from t0. */
static void
walk(struct rq_work *w)
{
	struct report	*r = w->r;
	size_t		 i = 0, b;
	uint64_t	 t;

	for (i = 0; i < w->nev; i++)
		w->ev[i].t = w->ev[i].t > r->t0_ns ? w->ev[i].t - r->t0_ns : 0;
	w->tmp = xreallocarray(w->tmp, w->cap_ev, sizeof *w->tmp);
	events_sort(w->ev, w->tmp, w->nev);
	for (i = 0; i < w->nev;) {
		t = w->ev[i].t;
		b = query_report_walk_bucket(r, t);
		buckets_open(w, b);
		while (i < w->nev && w->ev[i].t == t)
			event_apply(w, &w->ev[i++]);
		instant_close(w, b, t);
	}
	w->nev = 0;
}

/*
 * The buckets, once the run's extent is known: fewer when there are many
 * series.
 */
static void
buckets_set(struct rq_work *w)
{
	struct report	*r = w->r;
	size_t		 n = REPORT_BUCKETS;

	if (r->nseries > 0 && r->nseries * n > REPORT_POINTS)
		n = REPORT_POINTS / r->nseries;
	if (n < 1)
		n = 1;
	r->nbuckets = r->span_ns < n ? (size_t)r->span_ns + 1 : n;
	r->bucket_ns = r->span_ns / r->nbuckets + 1;
}

/*
 * The walk over every allocation: the series, their buckets and peaks.
 * The run's extent over its other tables is in r; the first pass adds the
 * allocations'.
 */
static int
report_live(struct query *q, struct rq_work *w, char **cause)
{
	struct report	*r = w->r;
	size_t		 i;

	w->first = r->t0_ns;
	w->last = r->t0_ns == UNKNOWN_U64 ? UNKNOWN_U64 : r->t0_ns +
	    r->span_ns;
	w->first_pass = 1;
	w->start = 0;
	w->end = UINT64_MAX;
	if (pass_read(q, w, cause) != 0)
		return (-1);
	w->first_pass = 0;
	r->t0_ns = w->first;
	r->span_ns = w->first == UNKNOWN_U64 ? 0 : w->last - w->first;
	if (r->t0_ns == UNKNOWN_U64)
		r->t0_ns = 0;	/* every allocation is at one unknown time */
	buckets_set(w);
	for (i = 0; i < r->nseries; i++)
		r->series[i].hi = xcalloc(r->nbuckets, sizeof *r->series[i].hi);
	w->walking = 1;
	w->stamp = 1;
	w->bucket = SIZE_MAX;
	walk(w);
	while (w->end != UINT64_MAX) {
		w->start = w->end;
		w->end = UINT64_MAX;
		if (pass_read(q, w, cause) != 0)
			return (-1);
		walk(w);
	}
	buckets_open(w, r->nbuckets - 1);
	return (0);
}

static void
work_free(struct rq_work *w)
{
	size_t	i;

	for (i = 0; i < w->r->ntracks; i++)
		free(w->members[i]);
	free(w->members);
	free(w->slots);
	free(w->cur);
	free(w->track_cur);
	free(w->track_hi);
	free(w->ev);
	free(w->tmp);
	free(w->touched);
	free(w->seen);
	free(w->touched_series);
	free(w->seen_series);
	free(w->cause);
}

/*
 * Walk every allocation of r's run (r->run_id, its id range, and its
 * extent over the other tables in t0_ns and span_ns: report_bounds in
 * query-report.c) in windows of at most `window` events: fill r's extent,
 * buckets, lanes, tracks and series with their bucket values, peaks (steps
 * not set) and bytes at the end, and r's peak over the device lanes in
 * r->layer.  0, or -1 with *cause.
 */
int
query_report_walk(struct query *q, struct report *r, size_t window,
    char **cause)
{
	struct rq_work	 w;
	size_t		 i;
	int		 rc;

	memset(&w, 0, sizeof w);
	w.r = r;
	w.window = window > 0 ? window : REPORT_WINDOW_EVENTS;
	if ((rc = report_live(q, &w, cause)) == 0) {
		for (i = 0; i < r->nseries; i++)
			r->series[i].end_bytes = w.cur[i];
		for (i = 0; i < r->ntracks; i++)
			r->tracks[i].end_bytes = w.track_cur[i];
	}
	if (w.first == UNKNOWN_U64)
		r->t0_ns = UNKNOWN_U64;
	work_free(&w);
	return (rc);
}
