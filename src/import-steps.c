/*
 * import-steps.c: a snapshot's external annotations (marks, and the step
 * boundaries they give).
 *
 * Steps: each END annotation whose name matches the step marker closes a
 * step, in time order.  Without such annotations, --step-every cuts fixed
 * windows from the first trace entry, at most IMPORT_WINDOWS_MAX of them
 * (a snapshot whose times span years would otherwise make steps without
 * end); otherwise the run has no steps.
 */
#include "config.h"

#include "import.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static int
compare_u64(const void *a, const void *b)
{
	uint64_t	x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x < y ? -1 : x > y);
}

static int
step_windows(struct import_state *st, uint64_t every, char **cause)
{
	uint64_t	span, n, k, start;

	if (st->first_ns == EVENT_NONE)
		return (0);
	/* Windows [first + (k-1) every, first + k every) until one ends at
	 * or after the last entry; one at least. */
	span = st->last_ns - st->first_ns;
	n = span / every + (span % every != 0);
	if (n == 0)
		n = 1;
	if (n > IMPORT_WINDOWS_MAX) {
		xasprintf(cause, "%s: --step-every %" PRIu64 " ms cuts %" PRIu64
		    " steps from a trace of %.0f s (at most %d): choose a"
		    " larger --step-every", st->file, every / 1000000, n,
		    (double)(st->last_ns - st->first_ns) / 1e9,
		    IMPORT_WINDOWS_MAX);
		return (-1);
	}
	for (k = 1; k <= n; k++) {
		start = st->first_ns + (k - 1) * every;
		if (store_rows_step(st->store, 0, (int64_t)k, start,
		    start + every, "window", cause) != 0)
			return (-1);
	}
	st->summary->steps = (int64_t)n;
	st->summary->step_source = "time";
	return (0);
}

/*
 * Compile the step marker (opt->step_marker, or IMPORT_STEP_MARKER), before
 * the parse.  0, or -1 with *cause.
 */
int
import_steps_begin(struct import_state *st, const struct import_options *opt,
    char **cause)
{
	int	err;
	char	msg[256];

	if ((err = regcomp(&st->step_re, opt->step_marker != NULL ?
	    opt->step_marker : IMPORT_STEP_MARKER, REG_EXTENDED |
	    REG_NOSUB)) != 0) {
		regerror(err, &st->step_re, msg, sizeof msg);
		xasprintf(cause, "bad --step-marker: %s", msg);
		return (-1);
	}
	st->step_re_set = 1;
	return (0);
}

/*
 * Write external annotation `index` (streamed) as a mark, and remember
 * its time if it ends a step.  0, or -1 with *cause.
 */
int
import_steps_annotation(struct import_state *st, const struct pickle_value *a,
    size_t index, char **cause)
{
	const struct pickle_value	*v;
	const char			*name, *stage;
	int64_t				 time_us, device = -1;

	import_check_at(st, IMPORT_AT_ANNOTATION, index, 0);
	if (import_check_value(st, a, NULL, PICKLE_DICT, 0, &v, cause) != 0 ||
	    import_check_str(st, a, "name", 0, &name, cause) != 0 ||
	    import_check_str(st, a, "stage", IMPORT_OPTIONAL, &stage,
	    cause) != 0 ||
	    import_check_int(st, a, "time_us", 0, IMPORT_TIME_US_MAX, 0,
	    &time_us, cause) != 0 ||
	    import_check_int(st, a, "device", -1, IMPORT_DEVICE_MAX - 1,
	    IMPORT_OPTIONAL, &device, cause) != 0)
		return (-1);
	if (store_rows_mark(st->store, 0, (int32_t)device,
	    (uint64_t)time_us * 1000, stage, name, cause) != 0)
		return (-1);
	st->summary->annotations++;
	if (stage == NULL || strcmp(stage, "END") != 0 ||
	    regexec(&st->step_re, name, 0, NULL, 0) != 0)
		return (0);
	if (st->nends == st->ends_alloc) {
		st->ends_alloc = st->ends_alloc == 0 ? 64 : 2 * st->ends_alloc;
		st->ends = xreallocarray(st->ends, st->ends_alloc,
		    sizeof *st->ends);
	}
	st->ends[st->nends++] = (uint64_t)time_us * 1000;
	return (0);
}

/*
 * After the parse: the steps, from the step ends the annotations gave, or
 * from fixed windows (opt->step_every_ns) when they gave none.  0, or -1
 * with *cause.
 */
int
import_steps_finish(struct import_state *st, const struct import_options *opt,
    char **cause)
{
	size_t	i;

	util_sort(st->ends, st->nends, sizeof *st->ends, compare_u64);
	for (i = 0; i < st->nends; i++) {
		if (store_rows_step(st->store, 0, (int64_t)i + 1, i == 0 ?
		    st->first_ns : st->ends[i - 1], st->ends[i], NULL,
		    cause) != 0)
			return (-1);
	}
	st->summary->steps = (int64_t)st->nends;
	st->summary->step_source = st->nends > 0 ? "annotation" : "none";
	if (st->nends == 0 && opt->step_every_ns > 0)
		return (step_windows(st, opt->step_every_ns, cause));
	return (0);
}

/* Free what the steps' state holds. */
void
import_steps_free(struct import_state *st)
{
	free(st->ends);
	if (st->step_re_set)
		regfree(&st->step_re);
	st->step_re_set = 0;
}
