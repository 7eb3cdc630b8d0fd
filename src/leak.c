/*
 * leak.c: the pure part of the leak analysis: the robust slope, the
 * verdict, which streams are the default ones and which hold garbage.
 *
 * It works on a struct leak_report that the query layer filled with
 * numbers (live bytes per step, in total and per stream, and per stream
 * the counts that the garbage kinds need); it uses neither SQLite nor
 * curses, so tests/t-leak.c checks it with made-up numbers.
 *
 * The verdict, the growth per step, the shape, its period and onset and the
 * projection are the shape model's (leak-shape.c) on the total live bytes
 * per step; each stream gets the same model on its own series, with its own
 * device's memory.  The series analysed start at the end of the warm-up
 * (the last warm-up step's live bytes are the baseline; with no warm-up, at
 * step 1) and end at the last step; a step "grew" when its live bytes are
 * above the step before's (grew_fraction, said, not judged).
 *
 * Garbage, per stream (vramtrace(1), GARBAGE): destroyed, a destroyed stream
 * that still holds blocks never freed; growing, a side stream whose own
 * series is a LEAK; stranded, a side stream that holds cached segments,
 * no live blocks, and allocated nothing for LEAK_STRANDED_STEPS steps.
 * Memory with no stream (a synchronous cudaMalloc outside the
 * stream-ordered pool, as libraries make for their workspaces) is on no
 * stream to strand: it is never garbage, and reports say what it holds.
 */
#include "config.h"

#include "vramtrace.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "leak.h"
#include "site-origin.h"

/* Fill *o with the defaults: the newest run, all of it, layer chosen. */
void
leak_options_init(struct leak_options *o)
{
	memset(o, 0, sizeof *o);
	o->warmup = LEAK_DEFAULT_WARMUP;
	o->threshold = LEAK_DEFAULT_THRESHOLD;
	o->layer = -1;
}

/*
 * The name people know suspect x by (site_origin_name); the caller frees
 * it.
 */
char *
leak_suspect_name(const struct leak_suspect *x)
{
	return (site_origin_name(x->origin, x->caller, x->within, x->site));
}

/* The name of a verdict, as the reports print it. */
const char *
leak_verdict_name(enum leak_verdict v)
{
	switch (v) {
	case LEAK_LEAK:
		return ("LEAK");
	case LEAK_CLEAN:
		return ("CLEAN");
	default:
		return ("INCONCLUSIVE");
	}
}

/* The name of a garbage kind, or NULL for none. */
const char *
leak_garbage_name(enum leak_garbage g)
{
	switch (g) {
	case LEAK_GARBAGE_DESTROYED:
		return ("destroyed");
	case LEAK_GARBAGE_GROWING:
		return ("growing");
	case LEAK_GARBAGE_STRANDED:
		return ("stranded");
	default:
		return (NULL);
	}
}

/*
 * The step number at which the shape of r's total starts (its onset: the
 * first growing step, or the step a warm-up reached its plateau), or
 * UNKNOWN_INT when it has none.
 */
int64_t
leak_report_onset(const struct leak_report *r)
{
	if (r->shape.onset < 0 || (size_t)r->shape.onset >= r->nsteps)
		return (UNKNOWN_INT);
	return (r->steps[r->shape.onset].step);
}

/*
 * The index of r's first whole step: the one history_from names (the
 * steps before it ended before the snapshot's trace began, so their live
 * bytes miss what was made and freed then), else 0.
 */
size_t
leak_report_first_whole(const struct leak_report *r)
{
	size_t	i;

	if (r->history_from <= 0)
		return (0);
	for (i = 0; i < r->nsteps; i++) {
		if (r->steps[i].step >= r->history_from)
			return (i);
	}
	return (r->nsteps);
}

/*
 * Whether r holds garbage that fails a CI run (--fail-on-leak): blocks on a
 * destroyed stream, or a growing side stream.  A stranded cache does not:
 * torch.cuda.empty_cache() gives it back.
 */
int
leak_garbage_fails(const struct leak_report *r)
{
	size_t	i;

	for (i = 0; i < r->nstreams; i++) {
		if (r->streams[i].garbage == LEAK_GARBAGE_DESTROYED ||
		    r->streams[i].garbage == LEAK_GARBAGE_GROWING)
			return (1);
	}
	return (0);
}

/* Free a report and everything it holds; NULL is fine. */
void
leak_report_free(struct leak_report *r)
{
	size_t	i;

	if (r == NULL)
		return;
	for (i = 0; i < r->nstreams; i++)
		free(r->streams[i].live_per_step);
	for (i = 0; i < r->nsuspects; i++) {
		free(r->suspects[i].site);
		free(r->suspects[i].origin);
		free(r->suspects[i].caller);
		free(r->suspects[i].within);
	}
	for (i = 0; i < r->nranks; i++) {
		free(r->ranks[i].host);
		free(r->ranks[i].devices);
	}
	free(r->ranks);
	free(r->streams);
	slots_free(&r->stream_slots);
	free(r->suspects);
	free(r->steps);
	free(r);
}

/* A stream leak_report_stream() looks for. */
struct leak_stream_want {
	const struct leak_report *r;
	int32_t		 device;
	uint64_t	 stream;
};

static uint64_t
leak_stream_hash_at(size_t pos, const void *arg)
{
	const struct leak_report	*r = arg;

	return (slots_hash_stream(r->streams[pos].stream,
	    r->streams[pos].device, 0));
}

static int
leak_stream_same(size_t pos, const void *arg)
{
	const struct leak_stream_want	*w = arg;
	const struct leak_stream	*s = &w->r->streams[pos];

	return (s->device == w->device && s->stream == w->stream);
}

/*
 * The stream (device, stream) of report r, added with r->nsteps zero live
 * bytes if it is not there yet.  The pointer lasts until the next add.
 * Found through slots.c, so that a run of many streams is not quadratic.
 */
struct leak_stream *
leak_report_stream(struct leak_report *r, int32_t device, uint64_t stream)
{
	struct leak_stream_want	 w = { r, device, stream };
	struct leak_stream	*s;
	uint64_t		 h = slots_hash_stream(stream, device, 0);
	size_t			*slot;

	if (r->streams_indexed != r->nstreams) {
		/* Streams put in without this function (a test's report). */
		slots_free(&r->stream_slots);
		slots_reserve(&r->stream_slots, r->nstreams,
		    leak_stream_hash_at, r);
		r->streams_indexed = r->nstreams;
	}
	slot = slots_find(&r->stream_slots, h, leak_stream_same, &w);
	if (slot != NULL && *slot != 0)
		return (&r->streams[*slot - 1]);
	if (r->nstreams >= r->streams_alloc) {
		r->streams_alloc = r->nstreams < 8 ? 16 : 2 * r->nstreams;
		r->streams = xreallocarray(r->streams, r->streams_alloc,
		    sizeof *r->streams);
	}
	slots_reserve(&r->stream_slots, r->nstreams, leak_stream_hash_at, r);
	*slots_find(&r->stream_slots, h, leak_stream_same, &w) =
	    r->nstreams + 1;
	r->streams_indexed = r->nstreams + 1;
	s = &r->streams[r->nstreams++];
	memset(s, 0, sizeof *s);
	s->device = device;
	s->stream = stream;
	s->created_ns = s->destroyed_ns = s->handle = UNKNOWN_U64;
	s->live_per_step = xcalloc(r->nsteps + 1, sizeof *s->live_per_step);
	return (s);
}

/*
 * The stream (device, stream) of report r, or NULL: through the index that
 * leak_report_stream() keeps, or a scan of the streams when some were put
 * in without it.
 */
const struct leak_stream *
leak_report_find_stream(const struct leak_report *r, int32_t device,
    uint64_t stream)
{
	struct leak_stream_want	 w = { r, device, stream };
	size_t			*slot, i;

	if (r->streams_indexed == r->nstreams) {
		slot = slots_find(&r->stream_slots, slots_hash_stream(stream,
		    device, 0), leak_stream_same, &w);
		return (slot != NULL && *slot != 0 ? &r->streams[*slot - 1] :
		    NULL);
	}
	for (i = 0; i < r->nstreams; i++) {
		if (leak_stream_same(i, &w))
			return (&r->streams[i]);
	}
	return (NULL);
}

/*
 * The skew of n ranks: which grows fastest (the first of equals), the
 * median growth and their ratio (NaN when the median is not above 0).  No
 * ranks: worst is -1 and the numbers 0 and NaN.
 */
void
leak_skew(const struct leak_rank *ranks, size_t n, struct leak_skew *out)
{
	double	*g;
	size_t	 i;

	out->worst = -1;
	out->median_growth_bytes_per_step = 0;
	out->ratio = NAN;
	if (n == 0)
		return;
	g = xreallocarray(NULL, n, sizeof *g);
	for (i = 0; i < n; i++) {
		g[i] = ranks[i].growth_bytes_per_step;
		if (out->worst < 0 || g[i] >
		    ranks[out->worst].growth_bytes_per_step)
			out->worst = (int)i;
	}
	out->median_growth_bytes_per_step = leak_stats_median(g, n);
	free(g);
	if (out->median_growth_bytes_per_step > 0)
		out->ratio = ranks[out->worst].growth_bytes_per_step /
		    out->median_growth_bytes_per_step;
}

/* The fraction of the n - 1 steps of v that grew; 0 for n < 2. */
double
leak_grew_fraction(const int64_t *v, size_t n)
{
	size_t	i, grew = 0;

	if (n < 2)
		return (0);
	for (i = 1; i < n; i++) {
		if (v[i] > v[i - 1])
			grew++;
	}
	return ((double)grew / (double)(n - 1));
}

/*
 * Mark each device's default stream where the data did not say: the stream
 * with the most bytes allocated on that device is its main compute stream.
 */
static const struct leak_report *by_device_report; /* for cmp_by_device */

/* Streams by device, then in report order. */
static int
cmp_by_device(const void *a, const void *b)
{
	size_t	x = *(const size_t *)a, y = *(const size_t *)b;
	int32_t	dx = by_device_report->streams[x].device;
	int32_t	dy = by_device_report->streams[y].device;

	if (dx != dy)
		return ((dx > dy) - (dx < dy));
	return ((x > y) - (x < y));
}

static void
leak_mark_defaults(struct leak_report *r)
{
	struct leak_stream	*t, *best;
	size_t			*order, i, j;
	int			 known;

	/* One pass per device over its streams, in report order: the
	 * first with the most bytes, unless one is known to be the default
	 * (sorted, not a scan of every stream per stream: many streams). */
	order = xreallocarray(NULL, r->nstreams + 1, sizeof *order);
	for (i = 0; i < r->nstreams; i++)
		order[i] = i;
	by_device_report = r;
	util_sort(order, r->nstreams, sizeof *order, cmp_by_device);
	for (i = 0; i < r->nstreams; i = j) {
		best = NULL;
		known = 0;
		for (j = i; j < r->nstreams && r->streams[order[j]].device ==
		    r->streams[order[i]].device; j++) {
			t = &r->streams[order[j]];
			if (t->default_known && t->is_default)
				known = 1;
			if (best == NULL || t->alloc_bytes > best->alloc_bytes)
				best = t;
		}
		if (!known)
			best->is_default = 1;
	}
	free(order);
}

static void
leak_classify(const struct leak_report *r, struct leak_stream *s,
    size_t first)
{
	int64_t	last = (int64_t)r->nsteps;

	s->garbage = LEAK_GARBAGE_NONE;
	s->garbage_bytes = s->garbage_blocks = 0;
	if (s->destroyed_ns != UNKNOWN_U64 && s->unfreed_bytes > 0) {
		s->garbage = LEAK_GARBAGE_DESTROYED;
		s->garbage_bytes = s->unfreed_bytes;
		s->garbage_blocks = s->unfreed_blocks;
	} else if (s->is_default || s->stream == UNKNOWN_U64)
		return;
	else if (r->verdict != LEAK_INCONCLUSIVE && s->verdict == LEAK_LEAK) {
		s->garbage = LEAK_GARBAGE_GROWING;
		s->garbage_bytes = s->new_live_bytes;
		s->garbage_blocks = s->new_live_blocks;
	} else if (first < r->nsteps && s->live_bytes == 0 &&
	    s->segment_bytes > 0 &&
	    s->last_alloc_step <= last - LEAK_STRANDED_STEPS) {
		s->garbage = LEAK_GARBAGE_STRANDED;
		s->garbage_bytes = s->segment_bytes;
		s->garbage_blocks = s->segment_blocks;
	}
}

/*
 * The shape model on live[0..nsteps) with r's warm-up and threshold, and
 * device_bytes of memory (0: unknown).
 */
static void
leak_fit(const struct leak_report *r, const int64_t *live,
    uint64_t device_bytes, struct leak_shape_result *out)
{
	struct leak_shape_params	p;

	leak_shape_defaults(&p);
	p.warmup = r->warmup;
	p.threshold = r->threshold;
	p.device_bytes = device_bytes;
	leak_shape_fit(live, r->nsteps, &p, out);
}

/*
 * Compute the verdict, the shapes and the garbage kinds of a report whose
 * numbers are in: r->steps (live bytes per step), r->streams (live bytes per
 * step, the counts and their device's memory), r->warmup, r->threshold (0:
 * what matters over the horizon) and r->device_bytes.  Sets steps_analysed,
 * the shape fit of the total (r->shape) and its growth, the fractions,
 * delta_bytes, peak_bytes, the verdict and its reason, r->threshold to the
 * bytes per step that matter, top_stream, and each stream's is_default
 * (where the data did not say), growth, verdict (INCONCLUSIVE with the
 * run's), garbage kind, bytes and blocks.
 */
void
leak_analyse(struct leak_report *r)
{
	struct leak_stream		*s;
	struct leak_shape_result	 fit;
	int64_t				*live;
	size_t				 i, first, n;
	double				 best = 0;

	first = r->warmup > 0 ? (size_t)r->warmup - 1 : 0;
	r->steps_analysed = (int64_t)r->nsteps - r->warmup;
	if (r->steps_analysed < 0)
		r->steps_analysed = 0;
	n = first < r->nsteps ? r->nsteps - first : 0;
	live = xreallocarray(NULL, r->nsteps + 1, sizeof *live);
	r->peak_bytes = 0;
	for (i = 0; i < r->nsteps; i++) {
		live[i] = r->steps[i].live_bytes;
		r->steps[i].delta_bytes = i == 0 ? 0 :
		    live[i] - live[i - 1];
		if (live[i] > r->peak_bytes)
			r->peak_bytes = live[i];
	}
	r->first_live = n > 0 ? live[first] : 0;
	r->grew_fraction = leak_grew_fraction(live + first, n);
	leak_fit(r, live, r->device_bytes, &r->shape);
	free(live);
	r->growth_bytes_per_step = r->shape.growth_bytes_per_step;
	r->verdict = r->shape.verdict;
	if (r->nsteps > 0)
		r->reason = r->shape.reason;
	else
		r->reason = r->no_history ? LEAK_NO_HISTORY : r->imported ?
		    LEAK_NO_STEPS_IMPORT : LEAK_NO_STEPS_RECORD;

	leak_mark_defaults(r);
	r->top_stream = -1;
	for (i = 0; i < r->nstreams; i++) {
		s = &r->streams[i];
		leak_fit(r, s->live_per_step, s->device_bytes, &fit);
		s->growth_bytes_per_step = fit.growth_bytes_per_step;
		s->grew_fraction = leak_grew_fraction(s->live_per_step + first,
		    n);
		s->verdict = r->verdict == LEAK_INCONCLUSIVE ?
		    LEAK_INCONCLUSIVE : fit.verdict;
		leak_classify(r, s, first);
		if (s->growth_bytes_per_step > best) {
			best = s->growth_bytes_per_step;
			r->top_stream = (int)i;
		}
	}
	if (r->threshold == 0)
		r->threshold = (uint64_t)ceil(r->shape.min_rate);
}
