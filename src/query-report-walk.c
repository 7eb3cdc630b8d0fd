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
 * That state is kept lazily, not by copying every series of a track each
 * time the track reaches a new high (quadratic in the streams of a run
 * that grows at every instant): each high of a track gets a new mark, and
 * a series takes its value into the bucket just before it next changes,
 * when its last mark is not its track's (it has not changed since that
 * high), or when the bucket ends.
 *
 * The events come from query-events.c, which sorts them in C a window of
 * time at a time (QUERY_EVENTS_WINDOW events of 16 bytes by default).
 */
#include "config.h"

#include "query-int.h"
#include "report.h"

#include <stdlib.h>
#include <string.h>

#include "unknown.h"

struct rq_work {
	struct report	*r;
	struct query_events *e;

	/* Per series and per track: the live bytes now. */
	int64_t		*cur;
	int64_t		*track_cur;
	int64_t		*track_hi;	/* the highest in the bucket */
	uint64_t	*track_mark;	/* the mark of that high */
	uint64_t	*series_mark;	/* the high whose value hi[] holds */
	uint64_t	 marks;		/* the last mark given */
	size_t		 cap_series, cap_tracks;

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

	int64_t		 run_cur;	/* the lanes of r's peak, in r->layer */
};

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
		w->track_mark = xreallocarray(w->track_mark, w->cap_tracks,
		    sizeof *w->track_mark);
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
	w->track_mark[r->ntracks] = 0;
	w->seen[r->ntracks] = 0;
	return (r->ntracks++);
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
		w->series_mark = xreallocarray(w->series_mark, w->cap_series,
		    sizeof *w->series_mark);
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
	w->series_mark[r->nseries] = 0;
	w->seen_series[r->nseries] = 0;
	t->nseries++;
	return (r->nseries++);
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

/*
 * Series s is about to change, or bucket b ends: its value in b is its
 * value now if it has not been taken since its track's last high.
 */
static void
series_take(struct rq_work *w, size_t s, size_t b)
{
	struct report	*r = w->r;
	size_t		 k = r->series[s].track;

	if (w->series_mark[s] != w->track_mark[k]) {
		r->series[s].hi[b] = w->cur[s];
		w->series_mark[s] = w->track_mark[k];
	}
}

/* Bucket b ends: every series takes its value at its track's high. */
static void
bucket_close(struct rq_work *w, size_t b)
{
	size_t	s;

	for (s = 0; s < w->r->nseries; s++)
		series_take(w, s, b);
}

/*
 * A bucket starts: its highest moment so far is its first, a high of every
 * track, whose value each series takes when it first changes or when the
 * bucket ends (series_take).
 */
static void
bucket_open(struct rq_work *w)
{
	struct report	*r = w->r;
	size_t		 k;

	w->marks++;
	for (k = 0; k < r->ntracks; k++) {
		w->track_hi[k] = w->track_cur[k];
		w->track_mark[k] = w->marks;
	}
}

/* After an instant: new highs of the tracks and series it changed. */
static void
instant_close(struct rq_work *w, uint64_t t)
{
	struct report		*r = w->r;
	struct report_track	*k;
	size_t			 i, ki, s;

	for (i = 0; i < w->ntouched; i++) {
		ki = w->touched[i];
		k = &r->tracks[ki];
		if (w->track_cur[ki] > w->track_hi[ki]) {
			w->track_hi[ki] = w->track_cur[ki];
			w->track_mark[ki] = ++w->marks;
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
event_apply(struct rq_work *w, const struct query_event *e)
{
	struct report	*r = w->r;
	size_t		 s = query_event_series(e), k = r->series[s].track;
	int64_t		 d = query_event_bytes(e);

	series_take(w, s, w->bucket);
	w->cur[s] += d;
	w->track_cur[k] += d;
	if (r->tracks[k].layer == r->layer && query_peak_counts(r->layer,
	    r->lanes[r->tracks[k].lane].device))
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

/*
 * Open the buckets up to b, closing the one open (the walk's buckets stay
 * open across windows).
 */
static void
buckets_open(struct rq_work *w, size_t b)
{
	while (w->bucket == SIZE_MAX || w->bucket < b) {
		if (w->bucket != SIZE_MAX)
			bucket_close(w, w->bucket);
		w->bucket++;	/* from SIZE_MAX: bucket 0 */
		bucket_open(w);
	}
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

/* A new series (numbered as r->series), for query_events_walk. */
static void
live_series(void *arg, size_t series, const struct query_series *k)
{
	struct rq_work	*w = arg;

	(void)series;
	series_new(w, track_get(w, query_report_walk_lane(w->r,
	    k->process_id, k->device), k->layer), k->stream);
}

/* Every series and the run's extent are known: the buckets. */
static void
live_ready(void *arg)
{
	struct rq_work	*w = arg;
	struct report	*r = w->r;
	size_t		 i;

	r->t0_ns = w->e->first;
	r->span_ns = w->e->first == UNKNOWN_U64 ? 0 : w->e->last -
	    w->e->first;
	if (r->t0_ns == UNKNOWN_U64)
		r->t0_ns = 0;	/* every allocation is at one unknown time */
	buckets_set(w);
	for (i = 0; i < r->nseries; i++)
		r->series[i].hi = xcalloc(r->nbuckets, sizeof *r->series[i].hi);
	w->walking = 1;
	w->stamp = 1;
	w->bucket = SIZE_MAX;
}

/* The events of one instant, t ns from t0. */
static void
live_instant(void *arg, uint64_t t, const struct query_event *ev, size_t n)
{
	struct rq_work	*w = arg;
	size_t		 b, i;

	b = query_report_walk_bucket(w->r, t);
	buckets_open(w, b);
	for (i = 0; i < n; i++)
		event_apply(w, &ev[i]);
	instant_close(w, t);
}

/*
 * The walk over every allocation: the series, their buckets and peaks.
 * The run's extent over its other tables is in r; the walk adds the
 * allocations'.
 */
static int
report_live(struct query *q, struct rq_work *w, size_t window, char **cause)
{
	struct report	*r = w->r;

	w->e->run_id = r->run_id;
	w->e->first_id = r->first_id;
	w->e->last_id = r->last_id;
	w->e->window = window;
	w->e->series = live_series;
	w->e->ready = live_ready;
	w->e->instant = live_instant;
	w->e->arg = w;
	w->e->first = r->t0_ns;
	w->e->last = r->t0_ns == UNKNOWN_U64 ? UNKNOWN_U64 : r->t0_ns +
	    r->span_ns;
	if (query_events_walk(q, w->e, cause) != 0)
		return (-1);
	buckets_open(w, r->nbuckets - 1);
	bucket_close(w, r->nbuckets - 1);
	return (0);
}

static void
work_free(struct rq_work *w)
{
	free(w->track_mark);
	free(w->series_mark);
	free(w->cur);
	free(w->track_cur);
	free(w->track_hi);
	free(w->touched);
	free(w->seen);
	free(w->touched_series);
	free(w->seen_series);
}

/*
 * Walk every allocation of r's run (r->run_id, its id range, and its
 * extent over the other tables in t0_ns and span_ns: report_bounds in
 * query-report.c) in windows of at most `window` events: fill r's extent,
 * buckets, lanes, tracks and series with their bucket values, peaks (steps
 * not set) and bytes at the end, and r's peak in r->layer over the lanes
 * query_peak_counts names (the devices'; every lane for the host layer).
 * 0, or -1 with *cause.
 */
int
query_report_walk(struct query *q, struct report *r, size_t window,
    char **cause)
{
	struct rq_work		 w;
	struct query_events	 e;
	size_t			 i;
	int			 rc;

	memset(&w, 0, sizeof w);
	memset(&e, 0, sizeof e);
	w.r = r;
	w.e = &e;
	if ((rc = report_live(q, &w, window, cause)) == 0) {
		for (i = 0; i < r->nseries; i++)
			r->series[i].end_bytes = w.cur[i];
		for (i = 0; i < r->ntracks; i++)
			r->tracks[i].end_bytes = w.track_cur[i];
	}
	if (e.first == UNKNOWN_U64)
		r->t0_ns = UNKNOWN_U64;
	work_free(&w);
	return (rc);
}
