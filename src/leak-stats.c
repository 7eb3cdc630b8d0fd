/*
 * leak-stats.c: the robust statistics the shape model (leak-shape.c) rests
 * on, pure: the k-th smallest value, the Mann-Kendall test of an upward
 * trend and the Theil-Sen slope with Sen's upper bound.  Both tests take a
 * series of n points at equal spacing and cost O(n^2) time; the callers
 * keep n to a thousand or so.
 */
#include "config.h"

#include "vramtrace.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "leak.h"

#define LEAK_STATS_EXACT	8	/* points tested by enumeration */
#define LEAK_STATS_Z		2.3263478740408408	/* one-sided 99% */

static int
cmp_i64(const void *a, const void *b)
{
	int64_t	x = *(const int64_t *)a, y = *(const int64_t *)b;

	return ((x > y) - (x < y));
}

static int
cmp_double(const void *a, const void *b)
{
	double	x = *(const double *)a, y = *(const double *)b;

	return ((x > y) - (x < y));
}

/*
 * The k-th smallest of v[0..n) (0-based, k < n), by quickselect: v is
 * reordered, nothing is allocated.
 */
double
leak_stats_select(double *v, size_t n, size_t k)
{
	return (*(double *)util_select(v, n, sizeof *v, k, cmp_double));
}

/*
 * The median of v[0..n), n > 0, which it reorders: afterwards its lower
 * half is in v[0..n / 2).
 */
double
leak_stats_median(double *v, size_t n)
{
	double	med = leak_stats_select(v, n, n / 2);

	if (n % 2 == 0)
		med = (med + leak_stats_select(v, n / 2, n / 2 - 1)) / 2;
	return (med);
}

/* Mann-Kendall S of v[0..n): concordant minus discordant pairs. */
static int64_t
mk_s(const int64_t *v, size_t n)
{
	int64_t	s = 0;
	size_t	i, j;

	for (i = 0; i < n; i++) {
		for (j = i + 1; j < n; j++)
			s += (v[j] > v[i]) - (v[j] < v[i]);
	}
	return (s);
}

/* The variance of S under no trend, with the correction for ties. */
static double
mk_variance(const int64_t *v, size_t n)
{
	int64_t	*c;
	double	 var, t;
	size_t	 i, j;

	c = xreallocarray(NULL, n, sizeof *c);
	memcpy(c, v, n * sizeof *c);
	util_sort(c, n, sizeof *c, cmp_i64);
	var = (double)n * (double)(n - 1) * (double)(2 * n + 5);
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && c[j] == c[i]; j++)
			;
		t = (double)(j - i);
		var -= t * (t - 1) * (2 * t + 5);
	}
	free(c);
	return (var / 18);
}

/*
 * The exact one-sided p-value of S for n <= LEAK_STATS_EXACT points: the
 * share of the n! orders of the same values (Heap's algorithm) whose S is
 * at least s.  Ties need no correction: equal values are permuted too.
 */
static double
mk_exact(const int64_t *v, size_t n, int64_t s)
{
	int64_t	a[LEAK_STATS_EXACT], t;
	size_t	c[LEAK_STATS_EXACT], i = 1;
	double	hits, total = 1;

	memcpy(a, v, n * sizeof *a);
	memset(c, 0, sizeof c);
	hits = mk_s(a, n) >= s;
	while (i < n) {
		if (c[i] < i) {
			t = a[i % 2 == 0 ? 0 : c[i]];
			a[i % 2 == 0 ? 0 : c[i]] = a[i];
			a[i] = t;
			total++;
			hits += mk_s(a, n) >= s;
			c[i]++;
			i = 1;
		} else
			c[i++] = 0;
	}
	return (hits / total);
}

/*
 * The one-sided p-value of an upward trend in v[0..n), by the Mann-Kendall
 * test: exact for up to LEAK_STATS_EXACT points, else the normal
 * approximation with the variance corrected for ties and a continuity
 * correction.  1 when S is not above 0 or n < 2.
 */
double
leak_stats_mann_kendall(const int64_t *v, size_t n)
{
	int64_t	s;
	double	var;

	if (n < 2 || (s = mk_s(v, n)) <= 0)
		return (1);
	if (n <= LEAK_STATS_EXACT)
		return (mk_exact(v, n, s));
	var = mk_variance(v, n);
	if (var <= 0)
		return (1);
	return (0.5 * erfc(((double)s - 1) / sqrt(var) / sqrt(2)));
}

/*
 * The Theil-Sen slope of v[0..n) per point (the median of the slopes
 * between every two points, the mean of the middle two for an even count)
 * and, in *upper, its one-sided 99% upper bound: Sen's, the slope of rank
 * (N + z sqrt(Var S)) / 2 among the N pairwise slopes (the largest for
 * very few points).  Both 0 for fewer than two points.
 */
double
leak_stats_theil_sen(const int64_t *v, size_t n, double *upper)
{
	double	*sl, med, c;
	size_t	 i, j, k = 0, hi;

	*upper = 0;
	if (n < 2)
		return (0);
	sl = xreallocarray(NULL, n * (n - 1) / 2, sizeof *sl);
	for (i = 0; i < n; i++) {
		for (j = i + 1; j < n; j++)
			sl[k++] = (double)(v[j] - v[i]) / (double)(j - i);
	}
	med = leak_stats_median(sl, k);
	c = LEAK_STATS_Z * sqrt(mk_variance(v, n));
	hi = (size_t)ceil(((double)k + c) / 2);
	if (hi > k - 1)
		hi = k - 1;
	*upper = leak_stats_select(sl, k, hi);
	free(sl);
	return (med);
}
