/*
 * t-leak-shape.c: the shape model (leak-shape.c) on made-up series: every
 * leak shape (steady, periodic with each phase, late onset, small, tiny,
 * with spikes or a sawtooth on top, after a pause), every benign one (flat,
 * bounded oscillations ending at any phase, logging spikes, warm-ups, a
 * cache filling up, one-off jumps, falling), the cases with too little to
 * go on, the threshold against the device and the horizon, the
 * projection, long runs; then noise of six kinds (no false LEAK) and leaks
 * under noise (no false CLEAN when the leak stands out).  Each case
 * asserts the verdict, the shape and, where it has one, the period and the
 * onset.  Also the statistics beneath (leak-stats.c).
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vramtrace.h"
#include "leak.h"
#include "tap.h"

#define KiB		1024LL
#define MiB		(1024LL * 1024)
#define GiB		(1024LL * MiB)
#define ANY		(-99)		/* period or onset not checked */
#define MAXN		200000

static int64_t	 v[MAXN];
static int	 ntests;

/* xorshift64: the same numbers on every machine. */
static uint64_t	 rng_state = 88172645463325252ULL;

static double
rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return ((double)(rng_state >> 11) / 9007199254740992.0);
}

static int
cmp_double(const void *a, const void *b)
{
	double	x = *(const double *)a, y = *(const double *)b;

	return ((x > y) - (x < y));
}

static struct leak_shape_result
fit(size_t n, const struct leak_shape_params *p)
{
	struct leak_shape_result	r;

	leak_shape_fit(v, n, p, &r);
	return (r);
}

/*
 * One case: v[0..n) with p (NULL: defaults) has the verdict, the shape
 * and the period and onset (a step number, ANY: not checked) wanted.
 */
static void
check(const char *name, size_t n, const struct leak_shape_params *p,
    enum leak_verdict verdict, enum leak_shape shape, int64_t period,
    int64_t onset)
{
	struct leak_shape_result	r = fit(n, p);
	int				ok;

	ok = r.verdict == verdict && r.shape == shape &&
	    (period == ANY || r.period == period) &&
	    (onset == ANY || (onset < 0 ? r.onset < 0 : r.onset + 1 ==
	    onset));
	ntests++;
	if (!tap_ok(ok, "%s: %s %s%s", name, leak_verdict_name(verdict),
	    leak_shape_name(shape), period > 0 ? " with a period" : ""))
		printf("#   got %s %s period %lld onset step %lld, rate %.0f, "
		    "p %.3g, window %lld x %lld, rises %lld, kept %lld: %s\n",
		    leak_verdict_name(r.verdict),
		    leak_shape_name(r.shape), (long long)r.period,
		    (long long)(r.onset + 1), r.growth_bytes_per_step,
		    r.p_value, (long long)r.window, (long long)r.windows,
		    (long long)r.rises, (long long)r.kept_bytes,
		    r.reason ? r.reason : "-");
}

static void
ok(int cond, const char *name)
{
	ntests++;
	tap_ok(cond, "%s", name);
}

/* Generators: base + what the shape adds at step index i. */
static void
gen_line(size_t n, int64_t base, int64_t rate)
{
	size_t	i;

	for (i = 0; i < n; i++)
		v[i] = base + (int64_t)i * rate;
}

/* A staircase: size at every period-th step, the first at `first`. */
static void
gen_stairs(size_t n, int64_t base, int64_t size, size_t period,
    size_t first)
{
	size_t	i;
	int64_t	level = base;

	for (i = 0; i < n; i++) {
		if (i >= first && (i - first) % period == 0)
			level += size;
		v[i] = level;
	}
}

/* A sawtooth: rises by amp for period - 1 steps, falls back; phase. */
static void
gen_saw(size_t n, int64_t base, int64_t amp, size_t period, size_t phase)
{
	size_t	i;

	for (i = 0; i < n; i++)
		v[i] = base + (int64_t)((i + phase) % period) * amp;
}

static void
add_spikes(size_t n, int64_t size, size_t period, size_t at)
{
	size_t	i;

	for (i = 0; i < n; i++) {
		if (i % period == at)
			v[i] += size;
	}
}

static void
leaks(void)
{
	struct leak_shape_params	p;
	size_t				k, ph;
	char				name[128];

	gen_line(41, 300 * MiB, 2 * MiB);
	check("steady 2 MiB per step, 40 steps", 41, NULL, LEAK_LEAK,
	    LEAK_SHAPE_STEADY, 1, 2);
	gen_line(61, 300 * MiB, 256 * KiB);
	check("small: 256 KiB per step for 60 steps", 61, NULL, LEAK_LEAK,
	    LEAK_SHAPE_STEADY, 1, 2);
	gen_line(61, 300 * MiB, 300 * KiB);
	add_spikes(61, 100 * MiB, 7, 3);
	check("300 KiB per step under 100 MiB logging spikes", 61, NULL,
	    LEAK_LEAK, LEAK_SHAPE_STEADY, 1, 2);
	for (k = 0; k < 61; k++)
		v[k] = 300 * MiB + (int64_t)k * MiB +
		    (int64_t)(k % 4) * 64 * MiB;
	check("1 MiB per step under a 4-step 192 MiB sawtooth", 61, NULL,
	    LEAK_LEAK, LEAK_SHAPE_PERIODIC, 4, ANY);

	for (k = 2; k <= 10; k++) {
		for (ph = 0; ph < k; ph++) {
			gen_stairs(61, 300 * MiB, 2 * MiB, k, ph + 1);
			snprintf(name, sizeof name, "periodic: 2 MiB every "
			    "%zu steps, first at step %zu", k, ph + 2);
			check(name, 61, NULL, LEAK_LEAK, LEAK_SHAPE_PERIODIC,
			    (int64_t)k, (int64_t)ph + 2);
		}
	}
	gen_stairs(61, 300 * MiB, 2 * MiB, 15, 5);
	check("periodic every 15 steps: 4 times in 60", 61, NULL, LEAK_LEAK,
	    LEAK_SHAPE_PERIODIC, 15, 6);

	for (k = 0; k < 61; k++)
		v[k] = 300 * MiB + (k >= 30 ? (int64_t)(k - 29) * 2 * MiB : 0);
	check("late onset at step 31 of 61", 61, NULL, LEAK_LEAK,
	    LEAK_SHAPE_LATE_ONSET, 1, 31);
	for (k = 0; k < 61; k++)
		v[k] = 300 * MiB + (k >= 45 ? (int64_t)(k - 44) * MiB : 0);
	check("late onset at step 46 of 61", 61, NULL, LEAK_LEAK,
	    LEAK_SHAPE_LATE_ONSET, 1, 46);
	gen_stairs(61, 300 * MiB, 4 * MiB, 3, 30);
	check("late onset of a periodic leak: every 3 steps from 31", 61,
	    NULL, LEAK_LEAK, LEAK_SHAPE_LATE_ONSET, 3, 31);
	for (k = 0; k < 61; k++)
		v[k] = 300 * MiB + (int64_t)(k < 10 ? k : 10) * 4 * MiB +
		    (k > 40 ? (int64_t)(k - 40) * MiB : 0);
	check("a warm-up, a pause, then a leak from step 42", 61, NULL,
	    LEAK_LEAK, LEAK_SHAPE_LATE_ONSET, 1, 42);
	for (k = 0; k < 61; k++)
		v[k] = 300 * MiB + (int64_t)(k < 20 ? k : k < 26 ? 19 : k - 6) *
		    MiB;
	check("a steady leak that pauses for 6 steps", 61, NULL, LEAK_LEAK,
	    LEAK_SHAPE_STEADY, 1, ANY);

	for (k = 0; k < 5; k++)
		v[k] = 422 * MiB + (int64_t)k * 112 * MiB;
	check("5 steps growing 112 MiB each (the shared fixtures)", 5, NULL,
	    LEAK_LEAK, LEAK_SHAPE_STEADY, 1, 2);

	/* What matters scales with the device and the horizon. */
	gen_line(61, 300 * MiB, 8 * KiB);
	leak_shape_defaults(&p);
	p.device_bytes = 80 * GiB;
	check("8 KiB per step on 80 GiB: 781 MiB in 100,000 steps is under "
	    "1%", 61, &p, LEAK_CLEAN, LEAK_SHAPE_STEADY, 1, 2);
	p.device_bytes = 16 * GiB;
	check("8 KiB per step on 16 GiB: over 1%", 61, &p, LEAK_LEAK,
	    LEAK_SHAPE_STEADY, 1, 2);
	p.device_bytes = 80 * GiB;
	p.horizon = 1000000;
	check("8 KiB per step on 80 GiB over a million steps", 61, &p,
	    LEAK_LEAK, LEAK_SHAPE_STEADY, 1, 2);
	gen_line(61, 300 * MiB, 512);
	check("512 B per step: grows, too slowly to matter", 61, NULL,
	    LEAK_CLEAN, LEAK_SHAPE_STEADY, 1, 2);
	leak_shape_defaults(&p);
	p.threshold = 256;
	check("512 B per step over a threshold of 256 B per step", 61, &p,
	    LEAK_LEAK, LEAK_SHAPE_STEADY, 1, 2);
}

static void
benign(void)
{
	struct leak_shape_params	p;
	size_t				k, ph;
	char				name[128];

	for (k = 0; k < 41; k++)
		v[k] = 311 * MiB;
	check("flat", 41, NULL, LEAK_CLEAN, LEAK_SHAPE_FLAT, ANY, -1);
	for (k = 2; k <= 12; k += (k < 6 ? 1 : 3)) {
		for (ph = 0; ph < k; ph++) {
			gen_saw(41, 300 * MiB, 8 * MiB, k, ph);
			snprintf(name, sizeof name, "sawtooth of %zu steps, "
			    "phase %zu", k, ph);
			check(name, 41, NULL, LEAK_CLEAN, LEAK_SHAPE_BOUNDED,
			    (int64_t)k, -1);
		}
	}
	for (k = 0; k < 61; k++)
		v[k] = 300 * MiB + ((k / 3) % 2) * 50 * MiB;
	check("square wave: 50 MiB on for 3 steps, off for 3", 61, NULL,
	    LEAK_CLEAN, LEAK_SHAPE_BOUNDED, 6, -1);
	for (ph = 0; ph < 10; ph++) {
		gen_line(41, 300 * MiB, 0);
		add_spikes(41, 2 * MiB, 10, ph);
		snprintf(name, sizeof name, "a logging step keeps 2 MiB for one "
		    "step every 10, at %zu", ph);
		check(name, 41, NULL, LEAK_CLEAN, LEAK_SHAPE_BOUNDED, 10, -1);
	}
	for (k = 0; k < 61; k++)
		v[k] = 300 * MiB + (int64_t)(k < 10 ? k : 10) * 4 * MiB;
	check("warm-up: grows 10 steps, then flat", 61, NULL, LEAK_CLEAN,
	    LEAK_SHAPE_WARMUP, ANY, 11);
	for (k = 0; k < 61; k++)
		v[k] = 300 * MiB + (int64_t)(k < 55 ? k : 55) * MiB;
	check("grows 55 steps, then flat for 5", 61, NULL, LEAK_CLEAN,
	    LEAK_SHAPE_WARMUP, ANY, 56);
	for (k = 0; k < 61; k++) {
		v[k] = 300 * MiB;
		for (ph = 1; ph <= 16; ph *= 2)
			v[k] += k >= ph ? MiB : 0;
	}
	check("a cache doubling at steps 2, 3, 5, 9, 17, then flat", 61, NULL,
	    LEAK_CLEAN, LEAK_SHAPE_WARMUP, ANY, 17);
	for (k = 0; k < 61; k++)
		v[k] = 300 * MiB + (k >= 20 ? 20 * MiB : 0);
	check("one new segment at step 21, then flat", 61, NULL, LEAK_CLEAN,
	    LEAK_SHAPE_WARMUP, ANY, 21);
	for (k = 0; k < 61; k++)
		v[k] = 300 * MiB - (int64_t)k * MiB;
	check("falling", 61, NULL, LEAK_CLEAN, LEAK_SHAPE_NOISE, ANY, -1);
	for (k = 0; k < 41; k++)
		v[k] = 300 * MiB + (int64_t)(rnd() * 4) * MiB;
	check("batches of 4 sizes live across the step end", 41, NULL,
	    LEAK_CLEAN, LEAK_SHAPE_NOISE, ANY, -1);
	for (k = 0; k < 41; k++)
		v[k] = 300 * MiB + (int64_t)(rnd() * 4096);
	check("4 KiB of jitter", 41, NULL, LEAK_CLEAN, LEAK_SHAPE_NOISE, ANY,
	    -1);
	for (k = 0; k < 41; k++)
		v[k] = 300 * MiB + (int64_t)(k % 4 == 3) * 64 * MiB;
	leak_shape_defaults(&p);
	p.warmup = 0;
	check("gradient accumulation of 4 micro-steps, no warm-up", 41, &p,
	    LEAK_CLEAN, LEAK_SHAPE_BOUNDED, 4, -1);
}

static void
unsure(void)
{
	struct leak_shape_result	r;
	size_t				k;
	int64_t				t;

	for (k = 0; k < 3; k++)
		v[k] = 100 * MiB + (int64_t)k * 100 * MiB;
	check("2 steps after the warm-up", 3, NULL, LEAK_INCONCLUSIVE,
	    LEAK_SHAPE_NONE, ANY, -1);
	r = fit(0, NULL);
	ok(r.verdict == LEAK_INCONCLUSIVE && r.reason != NULL &&
	    r.steps == 0, "no steps: INCONCLUSIVE, with a reason");
	for (k = 0; k < 4; k++)
		v[k] = 100 * MiB + (int64_t)k * 100 * MiB;
	check("3 steps that grew: too few to call it a leak", 4, NULL,
	    LEAK_INCONCLUSIVE, LEAK_SHAPE_STEADY, 1, 2);
	for (k = 0; k < 4; k++)
		v[k] = 100 * MiB;
	check("3 flat steps", 4, NULL, LEAK_CLEAN, LEAK_SHAPE_FLAT, ANY, -1);
	for (k = 0; k < 61; k++)
		v[k] = 300 * MiB + (k >= 58 ? 20 * MiB : 0);
	check("a jump 2 steps before the end", 61, NULL, LEAK_INCONCLUSIVE,
	    LEAK_SHAPE_NONE, ANY, ANY);
	/*
	 * A leak every 5 steps seen once (the zoo's periodic run cut at 8 or
	 * 9 steps): memory flat for 4 steps from the warm-up's end, 2 MiB,
	 * then flat for 3 or 4, no longer than before it grew.  Flat for 5,
	 * a leak every 5 steps would have shown again: growth stopped.  A
	 * burst of 5 rises after 20 flat steps is growth that stopped too.
	 */
	for (k = 0; k < 10; k++)
		v[k] = 77 * MiB + (k >= 4 ? 2 * MiB : 0);
	check("flat, one rise at step 5, flat for 3: a leak every 5 steps "
	    "seen once", 8, NULL, LEAK_INCONCLUSIVE, LEAK_SHAPE_NONE, ANY,
	    ANY);
	check("flat for 4 steps, one rise at step 5, flat for 4", 9, NULL,
	    LEAK_INCONCLUSIVE, LEAK_SHAPE_NONE, ANY, ANY);
	check("flat for 4 steps, one rise at step 5, flat for 5", 10, NULL,
	    LEAK_CLEAN, LEAK_SHAPE_WARMUP, ANY, 5);
	for (k = 0; k < 36; k++)
		v[k] = 300 * MiB + (int64_t)(k < 20 ? 0 : k < 25 ? k - 19 : 5) *
		    2 * MiB;
	check("flat for 20 steps, 5 rises, flat for 10", 36, NULL, LEAK_CLEAN,
	    LEAK_SHAPE_WARMUP, ANY, ANY);
	for (k = 0; k < 61; k++)
		v[k] = 300 * MiB + (int64_t)(k < 4 ? k : 3) * 20 * MiB +
		    (k >= 37 ? 20 * MiB : 0);
	check("a warm-up, then one more segment at step 38", 61, NULL,
	    LEAK_INCONCLUSIVE, LEAK_SHAPE_NONE, ANY, 38);
	for (k = 0; k < 61; k++)
		v[k] = 300 * MiB + (int64_t)(k < 6 ? k : 5) * MiB +
		    (int64_t)(k < 30 ? 0 : k < 35 ? k - 29 : 5) * MiB;
	check("two bursts of growth 25 steps apart, then 25 flat", 61, NULL,
	    LEAK_INCONCLUSIVE, LEAK_SHAPE_NONE, ANY, ANY);
	for (k = 0; k < 61; k++) {
		v[k] = 300 * MiB;
		for (t = 1; t <= 32; t *= 2)
			v[k] += (int64_t)k >= t ? MiB : 0;
	}
	check("a cache doubling up to step 33: slowing, not yet flat", 61,
	    NULL, LEAK_INCONCLUSIVE, LEAK_SHAPE_IRREGULAR, ANY, ANY);
	for (k = 0; k < 60; k++)
		v[k] = k < 30 ? 800 * MiB + (int64_t)k * MiB : 300 * MiB +
		    (int64_t)(k - 30) * 10 * MiB;
	check("rises 30 steps, falls back, rises again: it fell back once",
	    60, NULL, LEAK_INCONCLUSIVE, LEAK_SHAPE_NOISE, ANY, -1);
	gen_line(41, 300 * MiB, 0);
	add_spikes(41, 2 * MiB, 10, 5);
	v[40] += 500 * MiB;
	check("the last step holds 500 MiB more than any spike before", 41,
	    NULL, LEAK_INCONCLUSIVE, LEAK_SHAPE_NONE, ANY, -1);
}

/* The statistics beneath (leak-stats.c). */
static void
stats(void)
{
	static const int64_t	 line[] = { 10, 20, 30, 40, 50 };
	static const int64_t	 spike[] = { 10, 20, 1000, 40, 50 };
	static const int64_t	 even[] = { 0, 1, 3, 6 };
	static const int64_t	 down[] = { 5, 4, 3, 2, 1 };
	static const int64_t	 ties[] = { 0, 0, 1, 1 };
	static const int64_t	 ten[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
	double			 a[64], b[64], up;
	size_t			 n, k, i, bad = 0;
	int			 t;

	for (t = 0; t < 2000; t++) {
		n = 1 + (size_t)(rnd() * 63);
		for (i = 0; i < n; i++)
			a[i] = b[i] = (double)(int)(rnd() * 10);
		util_sort(b, n, sizeof *b, cmp_double);
		k = (size_t)(rnd() * (double)n);
		bad += leak_stats_select(a, n, k) != b[k];
	}
	ok(bad == 0, "select: the k-th smallest of 2000 arrays with ties");
	ok(leak_stats_mann_kendall(line, 5) == 1.0 / 120, "Mann-Kendall, 5 "
	    "rising points: exactly 1/120");
	ok(leak_stats_mann_kendall(down, 5) == 1 &&
	    leak_stats_mann_kendall(line, 1) == 1, "falling, or one point: 1");
	/* Orders of 0 0 1 1 with S >= 4 (of 24): 0011 only, 4 times. */
	ok(fabs(leak_stats_mann_kendall(ties, 4) - 4.0 / 24) < 1e-12,
	    "exact with ties: 4 of the 24 orders");
	ok(fabs(leak_stats_mann_kendall(ten, 10) - 0.5 * erfc(44 /
	    sqrt(125.0) / sqrt(2))) < 1e-15, "10 points: normal, variance "
	    "125, continuity correction");
	ok(leak_stats_theil_sen(line, 5, &up) == 10 && up == 10,
	    "Theil-Sen of a line, and its bound");
	ok(leak_stats_theil_sen(spike, 5, &up) == 10 && up > 10,
	    "one outlier does not move it; the bound does");
	/* Pairwise slopes 1, 1.5, 2, 2, 2.5, 3: the middle two average. */
	ok(leak_stats_theil_sen(even, 4, &up) == 2, "even count: the mean of "
	    "the middle two");
	ok(leak_stats_theil_sen(line, 1, &up) == 0 && up == 0,
	    "one point: 0");
}

/* The numbers beside the verdict: rate, bound, projection. */
static void
numbers(void)
{
	struct leak_shape_params	p;
	struct leak_shape_result	r;

	gen_line(41, 300 * MiB, 2 * MiB);
	leak_shape_defaults(&p);
	p.device_bytes = 80 * GiB;
	r = fit(41, &p);
	ok(r.growth_bytes_per_step == 2 * MiB && r.growth_upper == 2 * MiB,
	    "steady: the rate and its bound are 2 MiB per step");
	ok(r.horizon_bytes == 100000.0 * 2 * MiB && r.projected_bytes ==
	    380.0 * MiB + 100000.0 * 2 * MiB, "projected over 100,000 steps");
	ok(r.steps_to_full == (int64_t)((80.0 * GiB - 380.0 * MiB) / (2 *
	    MiB)), "steps until the device is full, from the peak");
	ok(fabs(r.min_rate - 80.0 * GiB / 100 / 100000) < 1e-6,
	    "what matters: 1% of the device over the horizon");
	ok(r.kept_bytes == 80 * MiB && r.rises == 40 && r.windows == 41 &&
	    r.window == 1, "kept 80 MiB over 40 rises in 41 windows of 1");
	r = fit(41, NULL);
	ok(r.steps_to_full == -1 && fabs(r.min_rate - GiB / 100000.0) < 1e-6,
	    "device unknown: no steps until full; 1 GiB over the horizon");
	gen_stairs(61, 300 * MiB, 2 * MiB, 5, 4);
	r = fit(61, NULL);
	ok(fabs(r.growth_bytes_per_step - 2.0 * MiB / 5) < 0.05 * 2 * MiB / 5,
	    "periodic: the rate is the size over the period, within 5%");
	gen_line(41, 300 * MiB, 0);
	r = fit(41, NULL);
	ok(r.growth_bytes_per_step == 0 && r.horizon_bytes == 0 &&
	    r.steps_to_full == -1, "flat: no growth, nothing projected");
	gen_line(41, 300 * MiB, 2 * MiB);
	leak_shape_defaults(&p);
	p.warmup = 11;
	r = fit(41, &p);
	ok(r.steps == 30 && r.onset == 11, "a warm-up of 11: 30 steps, the "
	    "onset indexes the series");
	ok(strcmp(leak_shape_name(LEAK_SHAPE_LATE_ONSET), "late-onset") == 0 &&
	    strcmp(leak_shape_name(LEAK_SHAPE_WARMUP), "warm-up") == 0 &&
	    strcmp(leak_shape_name((enum leak_shape)99), "none") == 0,
	    "shape names");
}

/* Long runs: windows of at least n / 1000 steps. */
static void
long_runs(void)
{
	struct leak_shape_result	r;
	size_t				k;

	gen_line(100001, GiB, 64 * KiB);
	check("100,000 steps of 64 KiB", 100001, NULL, LEAK_LEAK,
	    LEAK_SHAPE_STEADY, 1, 2);
	r = fit(100001, NULL);
	ok(r.windows <= 1000 && r.growth_bytes_per_step == 64 * KiB,
	    "...in at most 1000 windows, at the exact rate");
	gen_stairs(100001, GiB, 2 * MiB, 7, 3);
	check("100,000 steps, 2 MiB every 7", 100001, NULL, LEAK_LEAK,
	    LEAK_SHAPE_PERIODIC, 7, 4);
	gen_saw(100001, GiB, 8 * MiB, 5, 0);
	add_spikes(100001, 100 * MiB, 1000, 500);
	check("100,000 steps of a sawtooth with rare big spikes", 100001,
	    NULL, LEAK_CLEAN, LEAK_SHAPE_BOUNDED, 5, -1);
	for (k = 0; k < 100001; k++)
		v[k] = GiB + (int64_t)(rnd() * 64 * MiB);
	r = fit(100001, NULL);
	ok(r.verdict != LEAK_LEAK, "100,000 steps of noise: no LEAK");
}

/* A family of made-up noise; returns a value for step i. */
static int64_t
noise(int kind, double *x)
{
	double	a = 0;
	int	j;

	switch (kind) {
	case 0:					/* uniform */
		return ((int64_t)(rnd() * 64 * MiB));
	case 1:					/* 4 batch sizes */
		return ((int64_t)(rnd() * 4) * 16 * MiB);
	case 2:					/* AR(1), 0.8 */
		*x = 0.8 * *x + (rnd() - 0.5) * 16 * MiB;
		return ((int64_t)*x);
	case 3:					/* rare upward spikes */
		return ((int64_t)(pow(rnd(), 8) * 64 * MiB));
	case 4:					/* rare dips */
		return (-(int64_t)(pow(rnd(), 8) * 64 * MiB));
	default:				/* about normal */
		for (j = 0; j < 12; j++)
			a += rnd();
		return ((int64_t)((a - 6) * 8 * MiB));
	}
}

/*
 * Noise of six kinds, 5 to 1000 steps, 100 series each: the count of false
 * LEAKs.  Short autocorrelated noise can look like growth; over every kind
 * and length it stays at 0.1% or less, and above 40 steps there is none.
 */
static void
noise_false_alarms(void)
{
	static const size_t	 lens[] = { 5, 8, 10, 20, 40, 100, 1000 };
	struct leak_shape_result r;
	size_t			 li, i, total = 0, longer = 0, leak = 0;
	int			 kind, s;
	double			 x;

	rng_state = 88172645463325252ULL;
	for (kind = 0; kind < 6; kind++) {
		for (li = 0; li < sizeof lens / sizeof *lens; li++) {
			for (s = 0; s < 100; s++) {
				x = 0;
				for (i = 0; i < lens[li]; i++)
					v[i] = 300 * MiB + noise(kind, &x);
				r = fit(lens[li], NULL);
				total++;
				leak += r.verdict == LEAK_LEAK;
				longer += r.verdict == LEAK_LEAK &&
				    lens[li] > 40;
			}
		}
	}
	printf("# noise: %zu false LEAK in %zu series, %zu above 40 steps\n",
	    leak, total, longer);
	ok(leak * 1000 <= total, "noise: at most 0.1% false LEAK");
	ok(longer == 0, "noise over more than 40 steps: no false LEAK");
}

/*
 * A leak (steady, or periodic with period 2 to 8) under uniform noise of
 * 16 MiB, 40 to 1000 steps.  When the growth over the run is at least
 * twice the noise no verdict is CLEAN; at 8 times, 9 in 10 are LEAK, and
 * 9 in 10 steady leaks are named steady (the noise hides which steps grew:
 * before, none of 100 and 1000 steps were).
 */
static void
leak_recall(void)
{
	static const size_t	 lens[] = { 40, 100, 1000 };
	static const double	 snr[] = { 2, 8 };
	struct leak_shape_result r;
	size_t			 li, si, i, n, clean = 0, found, runs;
	size_t			 steady;
	int			 kind, s;
	double			 a, amp = 16 * MiB;
	char			 name[128];

	rng_state = 88172645463325252ULL;
	for (kind = 0; kind < 2; kind++) {
		for (li = 0; li < sizeof lens / sizeof *lens; li++) {
			for (si = 0; si < 2; si++) {
				n = lens[li];
				a = snr[si] * amp / (double)(n - 1);
				found = runs = steady = 0;
				for (s = 0; s < 100; s++) {
					size_t	N = 2 + (size_t)s % 7;
					size_t	ph = (size_t)s % N;

					for (i = 0; i < n; i++)
						v[i] = 300 * MiB + (int64_t)(
						    (kind == 0 ? a * (double)i :
						    (double)((i + ph) / N) * a *
						    (double)N) + rnd() * amp);
					r = fit(n, NULL);
					runs++;
					found += r.verdict == LEAK_LEAK;
					clean += r.verdict == LEAK_CLEAN;
					steady += r.verdict == LEAK_LEAK &&
					    r.shape == LEAK_SHAPE_STEADY;
				}
				printf("# %s leak, %zu steps, growth %.0fx the "
				    "noise: %zu of %zu LEAK, %zu named steady\n",
				    kind == 0 ? "steady" : "periodic", n,
				    snr[si], found, runs, steady);
				if (snr[si] < 8)
					continue;
				snprintf(name, sizeof name, "%s leak, %zu "
				    "steps, 8x the noise: 9 in 10 LEAK",
				    kind == 0 ? "steady" : "periodic", n);
				ok(found * 10 >= runs * 9, name);
				if (kind != 0)
					continue;
				snprintf(name, sizeof name, "steady leak, %zu "
				    "steps, 8x the noise: 9 in 10 named steady",
				    n);
				ok(steady * 10 >= runs * 9, name);
			}
		}
	}
	ok(clean == 0, "leaks under noise: never CLEAN");
}

int
main(void)
{
	leaks();
	benign();
	unsure();
	stats();
	numbers();
	long_runs();
	noise_false_alarms();
	leak_recall();
	tap_plan(ntests);
	return (tap_done());
}
