/*
 * leak.c: the pure part of the leak analysis: the robust slope, the
 * verdict, which streams are the default ones and which hold garbage.
 *
 * It works on a struct leak_report that the query layer filled with
 * numbers (live bytes per step, in total and per stream, and per stream
 * the counts that the garbage kinds need); it uses neither SQLite nor
 * curses, so tests/t-leak.c checks it with made-up numbers.
 *
 * The series analysed start at the end of the warm-up (the last warm-up
 * step's live bytes are the baseline; with no warm-up, at step 1) and end
 * at the last step.  The slope is Theil-Sen's: the median of the slopes
 * between every pair of points, the mean of the two middle ones for an even
 * count; a step "grew" when its live bytes are above the step before's.
 */
#include "config.h"

#include "vramtrace.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "leak.h"

/* Fill *o with the defaults: the newest run, all of it, layer chosen. */
void
leak_options_init(struct leak_options *o)
{
	memset(o, 0, sizeof *o);
	o->warmup = LEAK_DEFAULT_WARMUP;
	o->threshold = LEAK_DEFAULT_THRESHOLD;
	o->layer = -1;
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

/* Free a report and everything it holds; NULL is fine. */
void
leak_report_free(struct leak_report *r)
{
	size_t	i;

	if (r == NULL)
		return;
	for (i = 0; i < r->nstreams; i++)
		free(r->streams[i].live_per_step);
	for (i = 0; i < r->nsuspects; i++)
		free(r->suspects[i].site);
	for (i = 0; i < r->nranks; i++) {
		free(r->ranks[i].host);
		free(r->ranks[i].devices);
	}
	free(r->ranks);
	free(r->streams);
	free(r->suspects);
	free(r->steps);
	free(r);
}

/*
 * The stream (device, stream) of report r, added with r->nsteps zero live
 * bytes if it is not there yet.  The pointer lasts until the next add.
 */
struct leak_stream *
leak_report_stream(struct leak_report *r, int32_t device, uint64_t stream)
{
	struct leak_stream	*s;
	size_t			 i;

	for (i = 0; i < r->nstreams; i++) {
		s = &r->streams[i];
		if (s->device == device && s->stream == stream)
			return (s);
	}
	r->streams = xreallocarray(r->streams, r->nstreams + 1,
	    sizeof *r->streams);
	s = &r->streams[r->nstreams++];
	memset(s, 0, sizeof *s);
	s->device = device;
	s->stream = stream;
	s->created_ns = s->destroyed_ns = UNKNOWN_U64;
	s->live_per_step = xcalloc(r->nsteps + 1, sizeof *s->live_per_step);
	return (s);
}

static int
cmp_double(const void *a, const void *b)
{
	double	x = *(const double *)a, y = *(const double *)b;

	return ((x > y) - (x < y));
}

/* The median of v[0..n), n > 0, which it sorts. */
static double
median(double *v, size_t n)
{
	util_sort(v, n, sizeof *v, cmp_double);
	return (n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2);
}

/*
 * The Theil-Sen slope of the points (i, v[i]) for i in [0, n): the median
 * of the pairwise slopes.  0 for fewer than two points.
 */
double
leak_slope(const int64_t *v, size_t n)
{
	double	*s, m;
	size_t	 i, j, k = 0;

	if (n < 2)
		return (0);
	s = xreallocarray(NULL, n * (n - 1) / 2, sizeof *s);
	for (i = 0; i < n; i++) {
		for (j = i + 1; j < n; j++)
			s[k++] = (double)(v[j] - v[i]) / (double)(j - i);
	}
	m = median(s, k);
	free(s);
	return (m);
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
	out->median_growth_bytes_per_step = median(g, n);
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

/* Does a series with this slope and growth fraction leak? */
static int
leak_grows(const struct leak_report *r, double slope, double grew)
{
	return (slope > (double)r->threshold && grew > 0.5);
}

/*
 * Mark each device's default stream where the data did not say: the stream
 * with the most bytes allocated on that device is its main compute stream.
 */
static void
leak_mark_defaults(struct leak_report *r)
{
	struct leak_stream	*s, *t, *best;
	size_t			 i, j;

	for (i = 0; i < r->nstreams; i++) {
		s = &r->streams[i];
		best = NULL;
		for (j = 0; j < r->nstreams; j++) {
			t = &r->streams[j];
			if (t->device != s->device)
				continue;
			if (t->default_known && t->is_default)
				break;
			if (best == NULL || t->alloc_bytes > best->alloc_bytes)
				best = t;
		}
		if (j == r->nstreams && best == s)
			s->is_default = 1;
	}
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
	} else if (s->is_default)
		return;
	else if (r->verdict != LEAK_INCONCLUSIVE &&
	    leak_grows(r, s->growth_bytes_per_step, s->grew_fraction)) {
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
 * Compute the verdict, the slopes and the garbage kinds of a report whose
 * numbers are in: r->steps (live bytes per step), r->streams (live bytes per
 * step and the counts), r->warmup and r->threshold.  Sets steps_analysed,
 * the growth and the fractions, delta_bytes, peak_bytes, the verdict and its
 * reason, top_stream, and each stream's is_default (where the data did not
 * say), growth, verdict (INCONCLUSIVE with the run's), garbage kind, bytes
 * and blocks.
 */
void
leak_analyse(struct leak_report *r)
{
	struct leak_stream	*s;
	int64_t			*live;
	size_t			 i, first, n;
	double			 best = 0;

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
	r->growth_bytes_per_step = leak_slope(live + first, n);
	r->grew_fraction = leak_grew_fraction(live + first, n);
	free(live);
	if (r->nsteps == 0) {
		r->verdict = LEAK_INCONCLUSIVE;
		r->reason = "no step markers";
	} else if (r->steps_analysed < LEAK_MIN_STEPS) {
		r->verdict = LEAK_INCONCLUSIVE;
		r->reason = "fewer than 3 steps after the warm-up";
	} else {
		r->verdict = leak_grows(r, r->growth_bytes_per_step,
		    r->grew_fraction) ? LEAK_LEAK : LEAK_CLEAN;
		r->reason = NULL;
	}

	leak_mark_defaults(r);
	r->top_stream = -1;
	for (i = 0; i < r->nstreams; i++) {
		s = &r->streams[i];
		s->growth_bytes_per_step = leak_slope(s->live_per_step + first,
		    n);
		s->grew_fraction = leak_grew_fraction(s->live_per_step + first,
		    n);
		if (r->verdict == LEAK_INCONCLUSIVE)
			s->verdict = LEAK_INCONCLUSIVE;
		else
			s->verdict = leak_grows(r, s->growth_bytes_per_step,
			    s->grew_fraction) ? LEAK_LEAK : LEAK_CLEAN;
		leak_classify(r, s, first);
		if (s->growth_bytes_per_step > best) {
			best = s->growth_bytes_per_step;
			r->top_stream = (int)i;
		}
	}
}
