/*
 * leak-shape.c: the shape of live bytes over the steps, and the verdict the
 * shape supports.  Pure: it sees one series of numbers (live bytes at each
 * step end, of a run or of one stream) and uses neither SQLite nor curses;
 * tests/t-leak-shape.c checks it on made-up series.
 *
 * The rule.  Let y be the live bytes from the baseline (the end of the
 * last warm-up step) to the last step: m points, m - 1 steps.
 *
 *  1. Fewer than LEAK_SHAPE_MIN_STEPS steps: INCONCLUSIVE.
 *  2. Transients.  Memory that rises at a step and later falls back to
 *     the level before the rise was transient; T is the longest such rise
 *     in steps.  The window W is T + 1 steps (at least m /
 *     LEAK_SHAPE_MAX_WINDOWS), so that any W steps in a row hold a low
 *     point of every rise-and-fall seen.  The series is cut into B windows
 *     of W steps that end at the last step (the first takes the steps left
 *     over); each window's lowest value is its low.  Transients (a logging
 *     step that holds a tensor until the next, a gradient-accumulation
 *     sawtooth, a cache flushed every N steps) do not reach the window
 *     lows; memory kept does.
 *  3. Fewer than LEAK_SHAPE_MIN_WINDOWS windows: CLEAN when the whole range
 *     of y, as a rate over the steps, does not matter (8) or when two
 *     windows have the same low; else INCONCLUSIVE.
 *  4. Growth kept.  The floor F(i), the lowest window low from window i to
 *     the end, is the memory held from then on.  After the last window at
 *     the lowest floor, each window where F rises kept growth (a rise).
 *     Rises more than LEAK_SHAPE_BURST_GAP windows apart start a new
 *     burst.  A first burst followed by a pause more than twice as long as
 *     any later gap was the warm-up (a cache filling, the allocator's
 *     first segments) and the regime is what follows; else the regime is
 *     all the rises.  No rise: 7.
 *  5. Plateau.  When F has been flat for LEAK_SHAPE_PLATEAU windows and
 *     twice the longest gap between two rises, growth stopped: CLEAN,
 *     warm-up, its onset the step that reached the plateau; after a
 *     short burst (one or two rises) that came after memory stayed flat,
 *     flat for longer than it stayed flat before (a leak every N steps,
 *     seen once, is INCONCLUSIVE).  When that holds only for the regime's
 *     gaps (growth came back after a pause and stopped for less than the
 *     pause): INCONCLUSIVE.
 *  6. Leak.  LEAK when the regime rose at LEAK_SHAPE_MIN_RISES windows or
 *     more; its second half rose at least a third as often as its first
 *     (else it is slowing down, as a cache filling with a bounded set of
 *     keys does); a one-sided Mann-Kendall test of the regime's window lows
 *     gives p < LEAK_SHAPE_ALPHA (LEAK_SHAPE_ALPHA_WINDOWS when windows
 *     are longer than a step: fewer, noisier lows), or p <
 *     LEAK_SHAPE_ALPHA_REGULAR for a regular growth (rises of one size,
 *     within LEAK_SHAPE_REGULAR, at equal gaps); and the rate matters (8).  The low point a regime was
 *     started from is left out of the test unless it is the first window.
 *     The rate is the Theil-Sen slope of the regime's window lows, per
 *     step.  The shape comes from the steps at which the floor of y rose
 *     in the regime: steady (median gap 1), periodic (3 gaps in 4 within a
 *     tenth of the median: the period), steady again when the median gap
 *     is no longer than a window (a steady leak under transients: they
 *     hide which steps of a window grew), else irregular; late onset when
 *     the floor was flat for a quarter of the steps, LEAK_SHAPE_PLATEAU
 *     steps and two periods before.  A significant growth whose rate does
 *     not matter is CLEAN, with why.  Growth not significant enough is
 *     CLEAN when what it kept, over the steps it took, does not matter,
 *     else INCONCLUSIVE.
 *  7. No growth kept: CLEAN when the one-sided 99% upper bound of the
 *     Theil-Sen slope of all window lows does not matter (shape flat;
 *     bounded, when 3 in 4 gaps between falls are equal, with that period;
 *     else noise); else INCONCLUSIVE.  A CLEAN (here, in 3 or a plateau)
 *     whose last window rose by more than the series ever fell back is
 *     INCONCLUSIVE: no step after it tells a transient from growth.
 *  8. What matters: a rate that reaches over the horizon (100,000 steps, or
 *     the run when longer) a fraction (1%) of the device's memory, or
 *     LEAK_SHAPE_MIN_GROWTH when the device is unknown; or, given a
 *     threshold, that many bytes per step.
 *
 * Limits: a growth that recurs less often than every third of the run is
 * seen fewer than 3 times and is never a LEAK; an oscillation longer than
 * the run looks like growth; a leak smaller than the run's fluctuations
 * needs more steps to be told from them (INCONCLUSIVE meanwhile).
 *
 * Cost: O(m log m) for the transients and the floors, O(B^2) for the tests
 * with B at most LEAK_SHAPE_MAX_WINDOWS.
 */
#include "config.h"

#include "vramtrace.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "leak.h"

#define LEAK_SHAPE_MIN_STEPS	3	/* steps after the baseline */
#define LEAK_SHAPE_MAX_WINDOWS	1000
#define LEAK_SHAPE_MIN_WINDOWS	3
#define LEAK_SHAPE_MIN_RISES	3
#define LEAK_SHAPE_PLATEAU	3	/* flat windows that end a growth */
#define LEAK_SHAPE_BURST_GAP	2	/* windows apart within one burst */
#define LEAK_SHAPE_ALPHA	0.001	/* a trend of any growth */
#define LEAK_SHAPE_ALPHA_WINDOWS 0.0001	/* ... seen through windows */
#define LEAK_SHAPE_ALPHA_REGULAR 0.01	/* ... of a regular growth */
#define LEAK_SHAPE_REGULAR	0.1	/* rises within 10% of their median */

static const char *const leak_shape_names[] = {
	"none", "flat", "noise", "bounded", "warm-up", "steady", "periodic",
	"late-onset", "irregular"
};

/* The name of a shape, as reports print it. */
const char *
leak_shape_name(enum leak_shape s)
{
	if ((unsigned)s >= sizeof leak_shape_names / sizeof *leak_shape_names)
		return ("none");
	return (leak_shape_names[s]);
}

/* Fill p with the defaults: warm-up 1, 100,000 steps, 1% of the device. */
void
leak_shape_defaults(struct leak_shape_params *p)
{
	memset(p, 0, sizeof *p);
	p->warmup = 1;
	p->horizon = LEAK_SHAPE_HORIZON;
	p->device_fraction = LEAK_SHAPE_DEVICE_FRACTION;
	p->min_growth = LEAK_SHAPE_MIN_GROWTH;
}

/* The work of one fit: the series from the baseline and what is derived. */
struct fit {
	const int64_t	*y;
	size_t		 m;
	int64_t		 w;		/* steps per window */
	size_t		 nb;		/* windows */
	int64_t		*b;		/* window lows */
	int64_t		*fb;		/* their floor */
	size_t		*start;		/* first step of each window */
	size_t		*rise;		/* windows where the floor rose */
	size_t		 nrise;
	size_t		 r0;		/* first rise of the regime */
	size_t		 s;		/* the window the regime starts from */
};

/* The long run: the horizon, or the run itself when it is longer. */
static int64_t
fit_horizon(const struct fit *f, const struct leak_shape_params *p)
{
	return ((int64_t)f->m - 1 > p->horizon ? (int64_t)f->m - 1 :
	    p->horizon);
}

/*
 * The longest transient of y[0..m): for each step k whose value rose above
 * y[k - 1], the steps until the first later j with y[j] <= y[k - 1]; rises
 * that never fall back do not count.  The stack holds the strict prefix
 * minima of y[k + 1..m), nearest on top; the first j with y[j] <= v is the
 * nearest of them at or below v.
 */
static int64_t
fit_transient(const int64_t *y, size_t m)
{
	size_t	*st, top = 0, k, lo, hi, mid;
	int64_t	 best = 0, v;

	if (m < 2)
		return (0);
	st = xreallocarray(NULL, m, sizeof *st);
	for (k = m - 1; k >= 1; k--) {
		if (y[k] > y[k - 1] && top > 0 &&
		    y[st[0]] <= (v = y[k - 1])) {
			/* st[0] is the lowest; find the last i <= v. */
			lo = 0;
			hi = top - 1;
			while (lo < hi) {
				mid = (lo + hi + 1) / 2;
				if (y[st[mid]] <= v)
					lo = mid;
				else
					hi = mid - 1;
			}
			if ((int64_t)(st[lo] - k) > best)
				best = (int64_t)(st[lo] - k);
		}
		while (top > 0 && y[st[top - 1]] >= y[k])
			top--;
		st[top++] = k;
	}
	free(st);
	return (best);
}

/* Cut y into windows of f->w steps ending at the last step; their lows. */
static void
fit_windows(struct fit *f)
{
	size_t	i, k, end;

	f->nb = f->m / (size_t)f->w;
	f->b = xreallocarray(NULL, f->nb, sizeof *f->b);
	f->fb = xreallocarray(NULL, f->nb, sizeof *f->fb);
	f->start = xreallocarray(NULL, f->nb, sizeof *f->start);
	for (i = 0; i < f->nb; i++) {
		end = f->m - (f->nb - 1 - i) * (size_t)f->w;
		f->start[i] = i == 0 ? 0 : end - (size_t)f->w;
		f->b[i] = f->y[f->start[i]];
		for (k = f->start[i]; k < end; k++) {
			if (f->y[k] < f->b[i])
				f->b[i] = f->y[k];
		}
	}
	for (i = f->nb; i > 0; i--)
		f->fb[i - 1] = i == f->nb || f->b[i - 1] < f->fb[i] ?
		    f->b[i - 1] : f->fb[i];
}

/*
 * The windows where the floor rose after its last lowest window, and the
 * regime: all of them, or what follows a first burst that a long pause
 * ends (the warm-up).
 */
static void
fit_rises(struct fit *f)
{
	size_t	i, p, end1;
	int64_t	gap, later = 0;

	f->rise = xreallocarray(NULL, f->nb, sizeof *f->rise);
	f->nrise = 0;
	for (p = f->nb - 1; p > 0 && f->b[p] != f->fb[0]; p--)
		;
	for (i = p + 1; i < f->nb; i++) {
		if (f->fb[i] > f->fb[i - 1])
			f->rise[f->nrise++] = i;
	}
	f->r0 = 0;
	f->s = p;
	for (end1 = 0; end1 + 1 < f->nrise &&
	    f->rise[end1 + 1] - f->rise[end1] <= LEAK_SHAPE_BURST_GAP; end1++)
		;
	if (end1 + 1 >= f->nrise)
		return;
	for (i = end1 + 2; i < f->nrise; i++) {
		if ((gap = (int64_t)(f->rise[i] - f->rise[i - 1])) > later)
			later = gap;
	}
	gap = (int64_t)(f->rise[end1 + 1] - f->rise[end1]);
	if (gap > 2 * later) {
		f->r0 = end1 + 1;
		f->s = f->rise[f->r0] - 1;
	}
}

static int
cmp_i64(const void *a, const void *b)
{
	int64_t	x = *(const int64_t *)a, y = *(const int64_t *)b;

	return ((x > y) - (x < y));
}

/*
 * The median gap of g[0..n) and whether 3 in 4 of them are within a tenth
 * of it (regular: equal below 10).  Sorts g.
 */
static int64_t
gaps_median(int64_t *g, size_t n, int *regular)
{
	int64_t	med;
	size_t	i, near = 0;

	*regular = 0;
	if (n == 0)
		return (0);
	util_sort(g, n, sizeof *g, cmp_i64);
	med = g[(n - 1) / 2];
	for (i = 0; i < n; i++)
		near += llabs(g[i] - med) <= med / 10;
	*regular = 4 * near >= 3 * n;
	return (med);
}

/*
 * The shape of the growth from step `from` on, from the steps at which the
 * floor of y (the lowest value from a step to the end) rose: steady,
 * periodic or irregular, late onset when the floor was flat long enough
 * before; out->onset is the first of those steps.  Irregular gaps no
 * longer than a window are steady: transients hide which steps of a
 * window grew.
 */
static void
fit_growth_shape(const struct fit *f, size_t from,
    struct leak_shape_result *out)
{
	int64_t	*g, floor_, before = -1, onset = -1, flat, period;
	size_t	 k, n = 0;
	int	 regular;

	g = xreallocarray(NULL, f->m, sizeof *g);
	floor_ = f->y[f->m - 1];
	for (k = f->m - 1; k > 0; k--) {
		if (f->y[k - 1] >= floor_)
			continue;
		floor_ = f->y[k - 1];
		if (k < from) {
			before = (int64_t)k;
			break;
		}
		if (onset >= 0)
			g[n++] = onset - (int64_t)k;
		onset = (int64_t)k;
	}
	period = gaps_median(g, n, &regular);
	free(g);
	out->onset = onset;
	if (period <= 1 || (!regular && period <= f->w)) {
		out->shape = LEAK_SHAPE_STEADY;
		out->period = 1;
	} else if (regular) {
		out->shape = LEAK_SHAPE_PERIODIC;
		out->period = period;
	} else {
		out->shape = LEAK_SHAPE_IRREGULAR;
		out->period = 0;
	}
	flat = onset - (before < 0 ? 0 : before);
	if (onset >= 0 && flat >= LEAK_SHAPE_PLATEAU &&
	    flat >= 2 * out->period && 4 * flat >= (int64_t)f->m - 1)
		out->shape = LEAK_SHAPE_LATE_ONSET;
}

/* The shape of a series that kept nothing: flat, bounded or noise. */
static void
fit_still_shape(const struct fit *f, struct leak_shape_result *out)
{
	int64_t	*g, lo = f->y[0], hi = f->y[0], last = -1;
	size_t	 k, n = 0;
	int	 regular;

	for (k = 0; k < f->m; k++) {
		if (f->y[k] < lo)
			lo = f->y[k];
		if (f->y[k] > hi)
			hi = f->y[k];
	}
	if (lo == hi) {
		out->shape = LEAK_SHAPE_FLAT;
		return;
	}
	g = xreallocarray(NULL, f->m, sizeof *g);
	for (k = 1; k < f->m; k++) {
		if (f->y[k] >= f->y[k - 1])
			continue;
		if (last >= 0)
			g[n++] = (int64_t)k - last;
		last = (int64_t)k;
	}
	out->period = gaps_median(g, n, &regular);
	free(g);
	if (n >= 1 && regular && out->period >= 2)
		out->shape = LEAK_SHAPE_BOUNDED;
	else {
		out->shape = LEAK_SHAPE_NOISE;
		out->period = 0;
	}
}

/* The projection of out->growth_bytes_per_step over the horizon. */
static void
fit_project(const struct fit *f, const struct leak_shape_params *p,
    struct leak_shape_result *out)
{
	double	rate = out->growth_bytes_per_step;
	int64_t	peak = p->peak_bytes;
	size_t	k;

	out->horizon = fit_horizon(f, p);
	out->horizon_bytes = rate * (double)out->horizon;
	out->projected_bytes = (double)f->y[f->m - 1] + out->horizon_bytes;
	out->steps_to_full = -1;
	if (peak == 0) {
		for (k = 0; k < f->m; k++) {
			if (f->y[k] > peak)
				peak = f->y[k];
		}
	}
	if (rate > 0 && p->device_bytes > 0 &&
	    (double)p->device_bytes > (double)peak)
		out->steps_to_full = (int64_t)(((double)p->device_bytes -
		    (double)peak) / rate);
	else if (rate > 0 && p->device_bytes > 0)
		out->steps_to_full = 0;
}

static void
fit_free(struct fit *f)
{
	free(f->b);
	free(f->fb);
	free(f->start);
	free(f->rise);
}

/*
 * Whether the last window hides a rise: its highest value is above its low
 * by more than any memory the series ever gave back (the most by which a
 * value was above the lowest value after it).  Such a rise has no steps
 * after it to tell a transient from growth.
 */
static int
fit_hidden_rise(const struct fit *f)
{
	int64_t	floor_, back = 0, top;
	size_t	k;

	if (f->w < 2)
		return (0);
	floor_ = f->y[f->m - 1];
	for (k = f->m; k > 0; k--) {
		floor_ = f->y[k - 1] < floor_ ? f->y[k - 1] : floor_;
		if (f->y[k - 1] - floor_ > back)
			back = f->y[k - 1] - floor_;
	}
	top = f->y[f->m - (size_t)f->w];
	for (k = f->m - (size_t)f->w; k < f->m; k++)
		top = f->y[k] > top ? f->y[k] : top;
	return (top - f->b[f->nb - 1] > back);
}

/* A CLEAN that a hidden rise at the end turns into INCONCLUSIVE. */
static void
fit_check_end(const struct fit *f, struct leak_shape_result *out)
{
	if (out->verdict != LEAK_CLEAN || !fit_hidden_rise(f))
		return;
	out->verdict = LEAK_INCONCLUSIVE;
	out->shape = LEAK_SHAPE_NONE;
	out->period = 0;
	out->reason = "memory rose in the last steps by more than it ever "
	    "fell back: too few steps after it to tell";
}

/* Set what matters: out->min_rate, in bytes per step. */
static void
fit_min_rate(const struct fit *f, const struct leak_shape_params *p,
    struct leak_shape_result *out)
{
	double	h = (double)fit_horizon(f, p);

	if (p->threshold > 0)
		out->min_rate = (double)p->threshold;
	else if (p->device_bytes > 0)
		out->min_rate = (double)p->device_bytes * p->device_fraction /
		    h;
	else
		out->min_rate = (double)p->min_growth / h;
}

/*
 * Nothing kept (or too few windows to look): CLEAN when the bound on the
 * rate does not matter, else INCONCLUSIVE.
 */
static void
fit_still(const struct fit *f, struct leak_shape_result *out)
{
	fit_still_shape(f, out);
	if (out->growth_upper < out->min_rate) {
		out->verdict = LEAK_CLEAN;
		return;
	}
	out->verdict = LEAK_INCONCLUSIVE;
	out->reason = f->nb < LEAK_SHAPE_MIN_WINDOWS ?
	    "memory falls back only after many steps: too few steps to see "
	    "past it" : "live bytes vary too much to rule out a growth that "
	    "matters: run more steps";
}

/*
 * Too few windows to see a trend: CLEAN when the whole range of y, as a
 * rate, does not matter, or when two windows have the same low and the
 * last hides no rise (memory came back to the same level twice); else
 * INCONCLUSIVE.
 */
static void
fit_few_windows(const struct fit *f, struct leak_shape_result *out)
{
	int64_t	lo = f->y[0], hi = f->y[0];
	size_t	k;

	for (k = 0; k < f->m; k++) {
		lo = f->y[k] < lo ? f->y[k] : lo;
		hi = f->y[k] > hi ? f->y[k] : hi;
	}
	out->growth_upper = (double)(hi - lo) / (double)(f->m - 1);
	if (f->nb == 2 && f->b[0] == f->b[1])
		out->growth_upper = 0;
	fit_still(f, out);
	fit_check_end(f, out);
}

/* The regime grew and its floor has been flat long enough: a plateau. */
static void
fit_plateau(const struct fit *f, struct leak_shape_result *out)
{
	out->verdict = LEAK_CLEAN;
	out->shape = LEAK_SHAPE_WARMUP;
	out->growth_bytes_per_step = out->growth_upper = 0;
	out->period = 0;
	out->onset = (int64_t)f->start[f->rise[f->nrise - 1]];
}

/* The longest gap between the rises from rise `from` on; 0 for one. */
static int64_t
fit_longest_gap(const struct fit *f, size_t from)
{
	int64_t	gmax = 0;
	size_t	i;

	for (i = from + 1; i < f->nrise; i++) {
		if ((int64_t)(f->rise[i] - f->rise[i - 1]) > gmax)
			gmax = (int64_t)(f->rise[i] - f->rise[i - 1]);
	}
	return (gmax);
}

/*
 * The windows memory stayed flat before it first grew, when the regime is
 * all the growth and its first burst is short (fewer than
 * LEAK_SHAPE_MIN_RISES rises): one rise after a flat start may be the
 * first of a leak that recurs as rarely.  0 otherwise: a burst of growth
 * that stopped, or a warm-up before the regime (whose pause counts).
 */
static int64_t
fit_lead(const struct fit *f)
{
	size_t	n;

	if (f->r0 > 0)
		return (0);
	for (n = 1; n < f->nrise && f->rise[n] - f->rise[n - 1] <=
	    LEAK_SHAPE_BURST_GAP; n++)
		;
	return (n < LEAK_SHAPE_MIN_RISES ? (int64_t)f->rise[0] : 0);
}

/*
 * Growth after the warm-up that stopped, but not for long enough after
 * the pause before it: a one-off, or a growth that recurs that rarely.
 */
static void
fit_bursts(const struct fit *f, struct leak_shape_result *out)
{
	out->verdict = LEAK_INCONCLUSIVE;
	out->shape = LEAK_SHAPE_NONE;
	out->onset = (int64_t)f->start[f->rise[f->r0]];
	out->reason = "memory grew again after a pause, then stayed flat for "
	    "less than that pause: too few steps to tell a one-off from a "
	    "growth that recurs";
}

/* The last step of window s at its low: where the regime starts from. */
static size_t
fit_low_point(const struct fit *f)
{
	size_t	k, end = f->s + 1 < f->nb ? f->start[f->s + 1] : f->m;

	for (k = end; k > f->start[f->s]; k--) {
		if (f->y[k - 1] == f->b[f->s])
			return (k - 1);
	}
	return (f->start[f->s]);
}

/*
 * Whether the regime's growth is regular: it rose by the same amount
 * (within LEAK_SHAPE_REGULAR of the median rise) at equal gaps, as a
 * program that keeps the same tensor on a schedule does.  Random
 * fluctuations almost never do.
 */
static int
fit_regular(const struct fit *f)
{
	int64_t	*d, med;
	size_t	 i, n = f->nrise - f->r0;
	int	 ok = 1;

	d = xreallocarray(NULL, n, sizeof *d);
	for (i = 0; i < n; i++) {
		d[i] = f->fb[f->rise[f->r0 + i]] - f->fb[f->rise[f->r0 + i] - 1];
		if (i >= 2 && f->rise[f->r0 + i] - f->rise[f->r0 + i - 1] !=
		    f->rise[f->r0 + 1] - f->rise[f->r0])
			ok = 0;
	}
	util_sort(d, n, sizeof *d, cmp_i64);
	med = d[(n - 1) / 2];
	for (i = 0; i < n && ok; i++) {
		if (fabs((double)(d[i] - med)) > LEAK_SHAPE_REGULAR *
		    (double)med)
			ok = 0;
	}
	free(d);
	return (ok);
}

/*
 * Whether the regime's growth is slowing down: its second half (in
 * windows) rose at fewer than a third as many windows as its first, as a
 * cache filling up with a bounded set of keys does.
 */
static int
fit_slowing(const struct fit *f)
{
	size_t	mid = f->s + (f->nb - f->s) / 2, i, early = 0, late = 0;

	for (i = f->r0; i < f->nrise; i++) {
		if (f->rise[i] < mid)
			early++;
		else
			late++;
	}
	return (3 * late < early);
}

/*
 * Kept growth that is no plateau: LEAK when it rose often enough, with a
 * significant trend, at a rate that matters; else CLEAN when it cannot
 * matter, or INCONCLUSIVE.
 */
static void
fit_growth(const struct fit *f, struct leak_shape_result *out)
{
	size_t	skip = f->s > 0;	/* a chosen low point: not tested */
	double	span;

	fit_growth_shape(f, fit_low_point(f) + 1, out);
	if (out->rises >= LEAK_SHAPE_MIN_RISES)
		out->p_value = leak_stats_mann_kendall(f->b + f->s + skip,
		    f->nb - f->s - skip);
	if (out->rises >= LEAK_SHAPE_MIN_RISES && !fit_slowing(f) &&
	    (out->p_value < (f->w == 1 ? LEAK_SHAPE_ALPHA :
	    LEAK_SHAPE_ALPHA_WINDOWS) ||
	    (out->p_value < LEAK_SHAPE_ALPHA_REGULAR && fit_regular(f)))) {
		if (out->growth_bytes_per_step >= out->min_rate)
			out->verdict = LEAK_LEAK;
		else {
			out->verdict = LEAK_CLEAN;
			out->reason = "it grows, but too slowly to matter over "
			    "the horizon";
		}
		return;
	}
	span = (double)(f->m - f->start[f->s]);
	if ((double)out->kept_bytes / span < out->min_rate) {
		out->verdict = LEAK_CLEAN;
		if (out->rises < LEAK_SHAPE_MIN_RISES) {
			out->shape = LEAK_SHAPE_NOISE;
			out->period = 0;
			out->onset = -1;
		}
		out->reason = "it grew, but too little to matter over the "
		    "horizon";
		return;
	}
	out->verdict = LEAK_INCONCLUSIVE;
	if (out->rises < LEAK_SHAPE_MIN_RISES) {
		out->shape = LEAK_SHAPE_NONE;
		out->period = 0;
	}
	if (out->rises < LEAK_SHAPE_MIN_RISES)
		out->reason = "memory grew at too few steps to tell a one-off "
		    "from the start of a leak: run more steps";
	else if (fit_slowing(f))
		out->reason = "memory grows less and less often, as a cache "
		    "filling up does: run more steps to see it settle";
	else
		out->reason = "memory grew, but too few times or too unevenly "
		    "to call it a leak: run more steps";
}

/*
 * Judge live[0..n), the live bytes at each step end, with parameters p
 * (NULL: the defaults).  Fills *out; never fails.  The series is read only
 * and not kept.
 */
void
leak_shape_fit(const int64_t *live, size_t n,
    const struct leak_shape_params *p, struct leak_shape_result *out)
{
	struct leak_shape_params	 defaults;
	struct fit			 f;
	size_t				 first, least;
	int64_t				 tail;
	double				 slope, upper;

	if (p == NULL) {
		leak_shape_defaults(&defaults);
		p = &defaults;
	}
	memset(out, 0, sizeof *out);
	memset(&f, 0, sizeof f);
	out->p_value = 1;
	out->onset = -1;
	out->steps_to_full = -1;

	/* 1. Enough steps. */
	first = p->warmup > 0 ? (size_t)p->warmup - 1 : 0;
	f.m = n > first ? n - first : 0;
	fit_min_rate(&f, p, out);
	if (n <= first || n - first - 1 < LEAK_SHAPE_MIN_STEPS) {
		out->steps = n > first ? (int64_t)(n - first - 1) : 0;
		out->verdict = LEAK_INCONCLUSIVE;
		out->shape = LEAK_SHAPE_NONE;
		out->reason = "fewer than 3 steps after the warm-up";
		return;
	}
	f.y = live + first;
	out->steps = (int64_t)f.m - 1;

	/* 2. Transients and windows; 3. too few of them. */
	least = (f.m + LEAK_SHAPE_MAX_WINDOWS - 1) / LEAK_SHAPE_MAX_WINDOWS;
	f.w = fit_transient(f.y, f.m) + 1;
	if (f.w < (int64_t)least)
		f.w = (int64_t)least;
	out->window = f.w;
	out->windows = (int64_t)(f.m / (size_t)f.w);
	fit_windows(&f);
	if (f.nb < LEAK_SHAPE_MIN_WINDOWS) {
		fit_few_windows(&f, out);
		goto done;
	}

	/* 4. Growth kept: the regime and its rate. */
	fit_rises(&f);
	out->rises = (int64_t)(f.nrise - f.r0);
	if (out->rises > 0) {
		slope = leak_stats_theil_sen(f.b + f.s, f.nb - f.s, &upper);
		out->growth_bytes_per_step = slope / (double)f.w;
		out->growth_upper = upper / (double)f.w;
		out->kept_bytes = f.fb[f.nb - 1] - f.fb[f.s];
	}
	if (out->rises == 0) {
		out->growth_bytes_per_step = leak_stats_theil_sen(f.b, f.nb, &upper) /
		    (double)f.w;
		out->growth_upper = upper / (double)f.w;
		fit_still(&f, out);
		fit_check_end(&f, out);
		goto done;
	}

	/* 5. A plateau of all growth; a regime that stopped; 6. a leak. */
	tail = (int64_t)(f.nb - 1 - f.rise[f.nrise - 1]);
	if (tail >= LEAK_SHAPE_PLATEAU && tail >= 2 * fit_longest_gap(&f, 0) &&
	    tail > fit_lead(&f)) {
		fit_plateau(&f, out);
		fit_check_end(&f, out);
	} else if (tail >= LEAK_SHAPE_PLATEAU && f.r0 > 0 &&
	    tail >= 2 * fit_longest_gap(&f, f.r0))
		fit_bursts(&f, out);
	else
		fit_growth(&f, out);
done:
	if (out->onset >= 0)
		out->onset += (int64_t)first;
	fit_project(&f, p, out);
	fit_free(&f);
}
