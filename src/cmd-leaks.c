/*
 * cmd-leaks.c: vramtrace leaks DB|PICKLE: the leak verdict, the growth per
 * step, the garbage streams and the sites that hold the memory.
 */
#include "config.h"

#include "vramtrace.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "query.h"
#include "cmd.h"

static int	cmd_leaks_exec(const struct cmd_entry *,
		    const struct cmd_args *);

enum { FORMAT_TEXT, FORMAT_JSON, FORMAT_CSV };
static const char *const formats[] = { "text", "json", "csv", NULL };

static const struct cmd_option cmd_leaks_options[] = {
	CMD_OPTIONS_LEAK("the run to analyse (default: the newest)"),
	CMD_OPTION_FORMAT(formats, "text (default), json or csv (live bytes"
	    " per step and stream)"),
	{ .name = "fail-on-leak", .letter = 'F', .kind = CMD_FLAG,
	  .help = "exit 1 on a LEAK verdict (the device's, or the pinned host"
	  " memory's) or on garbage (blocks left on a destroyed stream, a"
	  " growing side stream), 6 on any other verdict of a run cut"
	  " short" },
	{ .name = "all-steps", .letter = 'A', .kind = CMD_FLAG,
	  .help = "text: a line for every step, not a summary of a long run" },
	{ .name = "fail-on-inconclusive", .letter = 'I', .kind = CMD_FLAG,
	  .help = "exit 5 on an INCONCLUSIVE verdict, 6 on any other of a"
	  " run cut short but LEAK" },
	CMD_OPTION_END
};

const struct cmd_entry cmd_leaks_entry = {
	.name = "leaks",
	CMD_ARGS_DB,
	.options = cmd_leaks_options,
	.summary = "say LEAK, CLEAN or INCONCLUSIVE, with growth, garbage"
	    " streams, sites",
	.exec = cmd_leaks_exec
};

/*
 * A long run's step table is a summary: its first and last
 * LEAKS_STEPS_ENDS steps and the LEAKS_STEPS_CHANGES largest changes
 * (not zero) between them, each gap one line (--all-steps: every step).
 */
#define LEAKS_STEPS_ENDS	5
#define LEAKS_STEPS_CHANGES	10
#define LEAKS_STEPS_SUMMARY	(2 * LEAKS_STEPS_ENDS + LEAKS_STEPS_CHANGES)

static const struct leak_report *by_change_report;

/* Steps by the size of their change, largest first, then in order. */
static int
by_change(const void *x, const void *y)
{
	const struct leak_step	*s = by_change_report->steps;
	size_t			 a = *(const size_t *)x, b = *(const size_t *)y;
	int64_t			 da = llabs(s[a].delta_bytes);
	int64_t			 db = llabs(s[b].delta_bytes);

	if (da != db)
		return (da > db ? -1 : 1);
	return (a < b ? -1 : a > b);
}

/*
 * Which steps the table shows: all of a short run (or with all); else the
 * first and last ones and the largest changes.  The caller frees it.
 */
static char *
steps_shown(const struct leak_report *r, int all)
{
	char	*shown;
	size_t	*mid, n = r->nsteps, i, k;

	shown = xcalloc(n + 1, 1);
	if (all || n <= LEAKS_STEPS_SUMMARY) {
		memset(shown, 1, n);
		return (shown);
	}
	mid = xreallocarray(NULL, n, sizeof *mid);
	for (i = 0; i < LEAKS_STEPS_ENDS; i++)
		shown[i] = shown[n - 1 - i] = 1;
	for (i = LEAKS_STEPS_ENDS, k = 0; i < n - LEAKS_STEPS_ENDS; i++)
		if (r->steps[i].delta_bytes != 0)
			mid[k++] = i;
	by_change_report = r;
	qsort(mid, k, sizeof *mid, by_change);
	for (i = 0; i < k && i < LEAKS_STEPS_CHANGES; i++)
		shown[mid[i]] = 1;
	for (i = 1; i + 1 < n; i++)	/* a gap of one step: the step */
		if (shown[i - 1] && shown[i + 1])
			shown[i] = 1;
	free(mid);
	return (shown);
}

/*
 * The step table: a line per step shown, one per gap between them; none
 * for a run without steps.
 */
static void
print_steps(const struct leak_report *r, int all)
{
	char	 a[FMT_LEN], b[FMT_LEN];
	char	*shown;
	size_t	 i, from;

	if (r->nsteps == 0)
		return;		/* the streams say what is live at the end */
	shown = steps_shown(r, all);
	printf("\n%6s  %12s  %12s\n", "step", "live", "change");
	for (i = 0; i < r->nsteps; i++) {
		if (!shown[i]) {
			for (from = i; i + 1 < r->nsteps && !shown[i + 1]; i++)
				;
			printf("%6s  %12s  %12s  (%zu steps: %" PRId64 " to %"
			    PRId64 ")\n", "...", fmt_bytes(r->steps[i].
			    live_bytes, a, sizeof a), fmt_delta((double)(
			    r->steps[i].live_bytes - r->steps[from - 1].
			    live_bytes), b, sizeof b), i - from + 1,
			    r->steps[from].step, r->steps[i].step);
			continue;
		}
		printf("%6" PRId64 "  %12s  %12s%s\n", r->steps[i].step,
		    fmt_bytes(r->steps[i].live_bytes, a, sizeof a),
		    i == 0 ? "" : fmt_delta(
		    (double)r->steps[i].delta_bytes, b, sizeof b),
		    (int)i < r->warmup ? "  (warm-up)" : "");
	}
	if (!all && r->nsteps > LEAKS_STEPS_SUMMARY)
		printf("(the first and last %d steps and the %d largest changes"
		    " between them of %zu; --all-steps for every one)\n",
		    LEAKS_STEPS_ENDS, LEAKS_STEPS_CHANGES, r->nsteps);
	free(shown);
}

static void
print_text(const struct leak_report *r, const struct leak_report *pinned,
    const struct leak_options *opts, const struct query_check *c,
    const struct leak_print_peak *peak, int complete, int all)
{
	char	a[FMT_LEN];

	printf("run %" PRId64 ": %zu steps, warm-up %d, threshold %s per "
	    "step", r->run_id, r->nsteps, r->warmup,
	    fmt_bytes((int64_t)r->threshold, a, sizeof a));
	if (opts->threshold == 0)
		printf(" (%s over %" PRId64 " steps%s)", r->device_bytes > 0 ?
		    "1% of the device's memory" : "1 GiB",
		    r->shape.horizon > 0 ? r->shape.horizon :
		    (int64_t)LEAK_SHAPE_HORIZON, r->device_bytes > 0 ||
		    r->layer == EVENT_LAYER_HOST ? "" :
		    ", the device's memory unknown");
	printf(", layer %s\n", event_layer_name((unsigned int)r->layer));
	leak_print_history(stdout, "history: ", r);
	if (!complete)
		printf("%s\n", CMD_UNFINISHED_NOTE);
	leak_print_verdict(stdout, "verdict: ", r);
	if (pinned != NULL)
		leak_print_verdict(stdout, "pinned:  ", pinned);
	check_report_text(stdout, "", c);
	leak_print_peak(stdout, "peak: ", peak);
	if (r->nranks > 0) {
		printf("\n");
		leak_print_ranks(stdout, r);
	}
	print_steps(r, all);
	printf("\n");
	leak_print_streams(stdout, r, r->nstreams);
	if (r->nsuspects == 0)
		return;
	if (r->nsteps == 0)
		printf("\nsites holding memory live at the end:\n");
	else
		printf("\nsites holding memory allocated after the warm-up, "
		    "live at the last step:\n");
	leak_print_suspects(stdout, r, r->nsuspects);
}

/* The ranks of a job, each alone, and their skew. */
static void
print_json_ranks(const struct leak_report *r)
{
	const struct leak_rank	*k;
	size_t			 i, j;

	printf(",\n \"ranks\": [");
	for (i = 0; i < r->nranks; i++) {
		k = &r->ranks[i];
		printf("%s\n  {\"rank\": %" PRId64 ", \"local_rank\": ",
		    i ? "," : "", k->rank);
		json_int_or_null(stdout, k->local_rank, k->local_rank >= 0);
		printf(", \"pid\": ");
		json_int_or_null(stdout, k->pid, k->pid > 0);
		printf(", \"host\": ");
		json_string(stdout, k->host);
		printf(", \"devices\": [");
		for (j = 0; j < k->ndevices; j++)
			printf("%s%d", j ? ", " : "", (int)k->devices[j]);
		printf("], \"verdict\": \"%s\", \"growth_bytes_per_step\": ",
		    leak_verdict_name(k->verdict));
		json_double(stdout, k->growth_bytes_per_step, 1);
		printf(", \"grew_fraction\": ");
		json_double(stdout, k->grew_fraction, 3);
		printf("}");
	}
	k = &r->ranks[r->skew.worst];
	printf("],\n \"rank_skew\": {\"worst_rank\": %" PRId64
	    ", \"worst_growth_bytes_per_step\": ", k->rank);
	json_double(stdout, k->growth_bytes_per_step, 1);
	printf(", \"median_growth_bytes_per_step\": ");
	json_double(stdout, r->skew.median_growth_bytes_per_step, 1);
	printf(", \"ratio\": ");
	json_double(stdout, r->skew.ratio, 3);
	printf("}");
}

static void
print_json(const struct leak_report *r, const struct leak_report *pinned,
    const struct query_check *c, const struct leak_print_peak *peak,
    int complete)
{
	size_t	i;

	printf("{\"run_id\": %" PRId64 ", \"complete\": %s, \"verdict\": "
	    "\"%s\", \"reason\": ", r->run_id, complete ? "true" : "false",
	    leak_verdict_name(r->verdict));
	json_string(stdout, r->reason);
	printf(", \"layer\": \"%s\", \"steps\": %" PRId64 ", \"total_steps\": "
	    "%zu, \"warmup\": %d, \"history_from\": ",
	    event_layer_name((unsigned int)r->layer), r->steps_analysed,
	    r->nsteps, r->warmup);
	json_int_or_null(stdout, r->history_from, r->history_from > 0);
	printf(", \"threshold\": %" PRIu64 ", ", r->threshold);
	leak_json_growth(stdout, r);
	leak_print_peak_json(stdout, peak);
	printf(", \"device_bytes\": ");
	json_int_or_null(stdout, (int64_t)r->device_bytes, r->device_bytes > 0);
	printf(",\n ");
	leak_json_shape(stdout, r);
	printf(",\n \"usage_only\": %s, \"note\": ", r->usage_only ? "true" :
	    "false");
	json_string(stdout, r->usage_only ? LEAK_USAGE_NOTE : NULL);
	printf(",\n \"pinned\": ");
	leak_json_pinned(stdout, pinned);
	printf(",\n \"offload_check\": ");
	check_report_json(stdout, c);
	printf(",\n \"per_step\": [");
	for (i = 0; i < r->nsteps; i++)
		printf("%s\n  {\"step\": %" PRId64 ", \"end_ns\": %" PRIu64
		    ", \"live_bytes\": %" PRId64 ", \"delta_bytes\": %" PRId64
		    "}", i ? "," : "", r->steps[i].step, r->steps[i].end_ns,
		    r->steps[i].live_bytes, r->steps[i].delta_bytes);
	printf("]");
	if (r->nranks > 0)
		print_json_ranks(r);
	leak_json_streams(stdout, r, 1);
	leak_print_suspects_json(stdout, r, r->nsuspects);
	printf("}\n");
}

/* One row per step for the total, then per step for each stream. */
static void
print_csv(const struct leak_report *r)
{
	const struct leak_stream	*s;
	const char			*layer;
	char				 b[32];
	size_t				 i, k;
	int64_t				 prev;

	layer = event_layer_name((unsigned int)r->layer);
	printf("step,end_ns,device,stream,layer,live_bytes,delta_bytes\n");
	for (k = 0; k < r->nsteps; k++)
		printf("%" PRId64 ",%" PRIu64 ",,,%s,%" PRId64 ",%" PRId64 "\n",
		    r->steps[k].step, r->steps[k].end_ns, layer,
		    r->steps[k].live_bytes, r->steps[k].delta_bytes);
	for (i = 0; i < r->nstreams; i++) {
		s = &r->streams[i];
		for (k = 0, prev = 0; k < r->nsteps; k++) {
			printf("%" PRId64 ",%" PRIu64 ",%d,%s,%s,%" PRId64 ",%"
			    PRId64 "\n", r->steps[k].step, r->steps[k].end_ns,
			    (int)s->device, s->stream == EVENT_NONE ? "" :
			    fmt_stream(s->stream, b, sizeof b), layer,
			    s->live_per_step[k], k == 0 ? 0 :
			    s->live_per_step[k] - prev);
			prev = s->live_per_step[k];
		}
	}
}

/*
 * The exit status a CI acts on (vramtrace(1), EXIT STATUS): a LEAK (of the
 * device's memory, or of the pinned host memory when it was judged), or
 * garbage that fails (leak_garbage_fails), under --fail-on-leak; then a
 * run cut short, under either --fail-on option, since its CLEAN or
 * INCONCLUSIVE covers only part of it; then an INCONCLUSIVE under
 * --fail-on-inconclusive.
 */
static int
leaks_status(const struct cmd_args *args, const struct leak_report *r,
    const struct leak_report *pinned, int complete)
{
	int	leak = cmd_args_has(args, 'F');
	int	inconclusive = cmd_args_has(args, 'I');

	if (leak && (r->verdict == LEAK_LEAK || leak_garbage_fails(r) ||
	    (pinned != NULL && pinned->verdict == LEAK_LEAK)))
		return (EXIT_LEAK);
	if ((leak || inconclusive) && !complete)
		return (EXIT_UNFINISHED);
	if (inconclusive && r->verdict == LEAK_INCONCLUSIVE)
		return (EXIT_INCONCLUSIVE);
	return (EXIT_OK);
}

static int
cmd_leaks_exec(const struct cmd_entry *self, const struct cmd_args *args)
{
	struct leak_options	 opts;
	struct leak_report	*r = NULL, *pinned = NULL;
	struct query_check	 c;
	struct leak_print_peak	 peak;
	struct query_run	 run;
	struct query		*q;
	char			*cause = NULL, line[512];
	uint64_t		 format;
	int			 rc;

	(void)self;
	memset(&run, 0, sizeof run);
	cmd_args_leak(args, &opts);
	format = cmd_args_number(args, 'f', FORMAT_TEXT);
	memset(&c, 0, sizeof c);
	if ((q = input_open(args->argv[0], &cause)) == NULL ||
	    query_leaks(q, &opts, &r, &cause) != 0 ||
	    query_check(q, r->run_id, CMD_CHECK_FIRST, &c, &cause) != 0 ||
	    query_run(q, r->run_id, 0, &run, &cause) != 0 ||
	    leak_print_peak_read(q, r, &peak, &cause) != 0 ||
	    query_leaks_host(q, &opts, r, &pinned, &cause) != 0) {
		query_check_free(&c);
		leak_report_free(r);
		query_run_free(&run);
		query_close(q);
		return (cmd_fail(EXIT_INPUT, cause));
	}
	query_close(q);
	if (format == FORMAT_JSON)
		print_json(r, pinned, &c, &peak, run.complete);
	else if (format == FORMAT_CSV) {
		print_csv(r);
		if (c.diffs > 0)
			log_warn("%s", check_report_summary(&c, line,
			    sizeof line));
	} else
		print_text(r, pinned, &opts, &c, &peak, run.complete,
		    cmd_args_has(args, 'A'));
	if (c.diffs > 0)
		rc = EXIT_CORRUPT;
	else
		rc = leaks_status(args, r, pinned, run.complete);
	query_check_free(&c);
	leak_report_free(r);
	leak_report_free(pinned);
	query_run_free(&run);
	return (rc);
}
