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
 * Write the external annotations as marks and derive the steps.  root is
 * the top-level dict.  0, or -1 with *cause.
 */
int
import_steps(struct import_state *st, const struct pickle_value *root,
    const struct import_options *opt, char **cause)
{
	const struct pickle_value	*list, *a;
	const char			*name, *stage;
	regex_t				 re;
	uint64_t			*ends = NULL;
	size_t				 n, i, nends = 0;
	int64_t				 time_us, device;
	int				 rc = -1, err;
	char				 msg[256];

	if ((err = regcomp(&re, opt->step_marker != NULL ? opt->step_marker :
	    IMPORT_STEP_MARKER, REG_EXTENDED | REG_NOSUB)) != 0) {
		regerror(err, &re, msg, sizeof msg);
		xasprintf(cause, "bad --step-marker: %s", msg);
		return (-1);
	}
	list = pickle_dict_get(root, "external_annotations");
	n = list != NULL ? pickle_list_len(list) : 0;
	for (i = 0; i < n; i++) {
		a = pickle_list_at(list, i);
		name = pickle_str(pickle_dict_get(a, "name"), NULL);
		stage = pickle_str(pickle_dict_get(a, "stage"), NULL);
		if (name == NULL || pickle_int(pickle_dict_get(a, "time_us"),
		    &time_us) != 0)
			continue;
		if (pickle_int(pickle_dict_get(a, "device"), &device) != 0)
			device = -1;
		if (store_rows_mark(st->store, 0, (int32_t)device,
		    (uint64_t)time_us * 1000, stage, name, cause) != 0)
			goto out;
		st->summary->annotations++;
		if (stage == NULL || strcmp(stage, "END") != 0 ||
		    regexec(&re, name, 0, NULL, 0) != 0)
			continue;
		ends = xreallocarray(ends, nends + 1, sizeof *ends);
		ends[nends++] = (uint64_t)time_us * 1000;
	}
	util_sort(ends, nends, sizeof *ends, compare_u64);
	for (i = 0; i < nends; i++) {
		if (store_rows_step(st->store, 0, (int64_t)i + 1, i == 0 ?
		    st->first_ns : ends[i - 1], ends[i], NULL, cause) != 0)
			goto out;
	}
	st->summary->steps = (int64_t)nends;
	st->summary->step_source = nends > 0 ? "annotation" : "none";
	if (nends == 0 && opt->step_every_ns > 0 &&
	    step_windows(st, opt->step_every_ns, cause) != 0)
		goto out;
	rc = 0;
out:
	free(ends);
	regfree(&re);
	return (rc);
}
