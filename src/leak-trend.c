/*
 * leak-trend.c: how the leak rate moves from run to run, for vramtrace
 * history; pure, like leak.c.
 *
 * The trend looks at the last LEAK_TREND_RUNS runs that have a verdict
 * (an INCONCLUSIVE run's rate means little) and fits a Theil-Sen line
 * through their growth per step, one point per run.  The fitted change
 * from the first of them to the last decides: above the threshold (the
 * same bytes per step that matter to the leak verdict: given, or else the
 * newest of those runs' own) it is rising, below minus the threshold
 * falling, else flat.  One outlying run does not move it.
 */
#include "config.h"

#include "vramtrace.h"

#include <math.h>
#include <stdlib.h>

#include "leak.h"

/* The name of a trend direction, as history prints it. */
const char *
leak_direction_name(enum leak_direction d)
{
	switch (d) {
	case LEAK_TREND_FLAT:
		return ("flat");
	case LEAK_TREND_RISING:
		return ("rising");
	case LEAK_TREND_FALLING:
		return ("falling");
	default:
		return ("unknown");
	}
}

/*
 * The trend of reports[0..n), oldest first, with threshold bytes per step
 * (0: the newest judged report's) telling a real change from noise.
 * Neither pointer is kept.
 */
void
leak_trend(struct leak_report *const *reports, size_t n, uint64_t threshold,
    struct leak_trend *out)
{
	int64_t	 rate[LEAK_TREND_RUNS];
	size_t	 i, k = 0;
	double	 upper;

	for (i = n; i > 0 && k < LEAK_TREND_RUNS; i--) {
		if (reports[i - 1]->verdict == LEAK_INCONCLUSIVE)
			continue;
		if (k++ == 0 && threshold == 0)
			threshold = reports[i - 1]->threshold;
		rate[LEAK_TREND_RUNS - k] = (int64_t)llround(
		    reports[i - 1]->growth_bytes_per_step);
	}
	out->runs = k;
	out->change_bytes_per_step = leak_stats_theil_sen(rate +
	    LEAK_TREND_RUNS - k, k, &upper) * (double)(k > 0 ? k - 1 : 0);
	if (k < 2)
		out->direction = LEAK_TREND_UNKNOWN;
	else if (out->change_bytes_per_step > (double)threshold)
		out->direction = LEAK_TREND_RISING;
	else if (out->change_bytes_per_step < -(double)threshold)
		out->direction = LEAK_TREND_FALLING;
	else
		out->direction = LEAK_TREND_FLAT;
}

/*
 * Does latest leak faster than prev by more than threshold bytes per step
 * (0: latest's own)?  Never when either has no verdict.
 */
int
leak_worse(const struct leak_report *prev, const struct leak_report *latest,
    uint64_t threshold)
{
	if (prev->verdict == LEAK_INCONCLUSIVE ||
	    latest->verdict == LEAK_INCONCLUSIVE)
		return (0);
	if (threshold == 0)
		threshold = latest->threshold;
	return (latest->growth_bytes_per_step >
	    prev->growth_bytes_per_step + (double)threshold);
}
