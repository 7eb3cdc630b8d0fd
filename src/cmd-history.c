/*
 * cmd-history.c: vramtrace history DB: the leak verdict of every run in a
 * database, oldest first (with its pinned host memory's beside it where it
 * has some, as leaks judges it), and whether the leak rate is rising,
 * falling or flat over the last runs; --fail-if-worse makes it a CI check.
 * The trend and --fail-if-worse follow the device's verdicts.
 */
#include "config.h"

#include "vramtrace.h"

#include <inttypes.h>
#include <stdlib.h>

#include "query.h"
#include "cmd.h"

static int	cmd_history_exec(const struct cmd_entry *,
		    const struct cmd_args *);

enum { FORMAT_TEXT, FORMAT_JSON };
static const char *const formats[] = { "text", "json", NULL };

static const struct cmd_option cmd_history_options[] = {
	CMD_OPTION_WARMUP("steps left out at the start of each run (1)"),
	CMD_OPTION_THRESHOLD("the growth per step that is a leak, and the"
	    " change of it that is a trend (1MiB)"),
	CMD_OPTION_FORMAT(formats, "text (default) or json"),
	{ .name = "fail-if-worse", .letter = 'W', .kind = CMD_FLAG,
	  .help = "exit 1 when the newest run leaks faster than the one"
	  " before by more than the threshold, else 6 when either was cut"
	  " short" },
	CMD_OPTION_END
};

const struct cmd_entry cmd_history_entry = {
	.name = "history",
	CMD_ARGS_DB,
	.options = cmd_history_options,
	.summary = "the leak rate of every run, oldest first, and its trend",
	.exec = cmd_history_exec
};

/*
 * Every run of the database and its report, oldest first, and its pinned
 * host memory's (NULL where the run has none).
 */
struct history {
	struct query_run	 *runs;
	struct leak_report	**reports;
	struct leak_report	**pinned;
	struct leak_print_peak	 *peaks;
	size_t			  n;
	struct leak_trend	  trend;
	int			  worse;
};

static void
history_free(struct history *h)
{
	size_t	i;

	for (i = 0; i < h->n; i++) {
		query_run_free(&h->runs[i]);
		leak_report_free(h->reports[i]);
		leak_report_free(h->pinned[i]);
	}
	free(h->runs);
	free(h->reports);
	free(h->pinned);
	free(h->peaks);
}

static int
history_load(struct query *q, const struct leak_options *opts,
    struct history *h, char **cause)
{
	struct leak_options	one = *opts;
	size_t			i;

	if (query_run_list(q, &h->runs, &h->n, cause) != 0)
		return (-1);
	h->reports = xcalloc(h->n + 1, sizeof *h->reports);
	h->pinned = xcalloc(h->n + 1, sizeof *h->pinned);
	h->peaks = xcalloc(h->n + 1, sizeof *h->peaks);
	for (i = 0; i < h->n; i++) {
		one.run_id = h->runs[i].id;
		if (query_leaks(q, &one, &h->reports[i], cause) != 0 ||
		    query_leaks_host(q, &one, h->reports[i], &h->pinned[i],
		    cause) != 0 ||
		    leak_print_peak_read(q, h->reports[i], &h->peaks[i],
		    cause) != 0)
			return (-1);
	}
	leak_trend(h->reports, h->n, opts->threshold, &h->trend);
	h->worse = h->n >= 2 && leak_worse(h->reports[h->n - 2],
	    h->reports[h->n - 1], opts->threshold);
	return (0);
}

/*
 * After a run's verdict, its pinned host memory's as leaks says it:
 * "; pinned: LEAK, +64.0 MiB per step" (the growth left out of an
 * INCONCLUSIVE); nothing for a run without pinned memory.
 */
static void
print_pinned(const struct leak_report *pinned)
{
	char	b[FMT_LEN];

	if (pinned == NULL)
		return;
	printf("; pinned: %s", leak_verdict_name(pinned->verdict));
	if (pinned->verdict != LEAK_INCONCLUSIVE)
		printf(", %s per step", fmt_delta(
		    pinned->growth_bytes_per_step, b, sizeof b));
}

static void
print_text(const struct history *h)
{
	const struct leak_report	*r;
	char				 a[FMT_LEN], b[FMT_LEN], t[FMT_LEN];
	size_t				 i;

	printf("%5s  %-19s  %-7s  %6s  %12s  %12s  %s\n", "run",
	    "start (UTC)", "source", "steps", "peak", "growth/step",
	    "verdict");
	for (i = 0; i < h->n; i++) {
		r = h->reports[i];
		printf("%5" PRId64 "  %-19s  %-7s  %6zu  %12s  %12s  %s%s",
		    r->run_id, fmt_date(h->runs[i].start_ns, t, sizeof t),
		    fmt_text(h->runs[i].source),
		    r->nsteps, fmt_bytes(h->peaks[i].bytes, a, sizeof a),
		    fmt_delta(r->growth_bytes_per_step, b, sizeof b),
		    leak_verdict_name(r->verdict), h->runs[i].complete ? "" :
		    " (not finished)");
		print_pinned(h->pinned[i]);
		putchar('\n');
	}
	printf("trend: %s", leak_direction_name(h->trend.direction));
	if (h->trend.direction == LEAK_TREND_UNKNOWN)
		printf(" (fewer than 2 runs with a verdict)\n");
	else
		printf(", the leak rate changed by %s per step over the last"
		    " %zu runs with a verdict\n", fmt_delta(
		    h->trend.change_bytes_per_step, b, sizeof b),
		    h->trend.runs);
}

static void
print_json(const struct history *h)
{
	const struct query_run		*run;
	const struct leak_report	*r;
	size_t				 i;

	printf("{\"runs\": [");
	for (i = 0; i < h->n; i++) {
		run = &h->runs[i];
		r = h->reports[i];
		printf("%s\n  {\"run_id\": %" PRId64 ", \"start_ns\": ",
		    i ? "," : "", run->id);
		json_time(stdout, run->start_ns);
		printf(", \"source\": ");
		json_string(stdout, run->source);
		printf(", \"command\": ");
		json_string(stdout, run->command);
		printf(", \"git_commit\": ");
		json_string(stdout, run->git_commit);
		printf(", \"complete\": %s, \"steps\": %zu",
		    run->complete ? "true" : "false", r->nsteps);
		leak_print_peak_json(stdout, &h->peaks[i]);
		printf(", ");
		leak_json_growth(stdout, r);
		printf(", ");
		leak_json_shape(stdout, r);
		printf(", \"verdict\": \"%s\", \"pinned\": ",
		    leak_verdict_name(r->verdict));
		leak_json_pinned(stdout, h->pinned[i]);	/* as leaks says it */
		printf("}");
	}
	printf("],\n \"trend\": {\"direction\": \"%s\", \"runs\": %zu, "
	    "\"change_bytes_per_step\": ",
	    leak_direction_name(h->trend.direction), h->trend.runs);
	json_double(stdout, h->trend.change_bytes_per_step, 1);
	printf("},\n \"worse\": %s}\n", h->worse ? "true" : "false");
}

static int
cmd_history_exec(const struct cmd_entry *self, const struct cmd_args *args)
{
	struct leak_options		 opts;
	struct history			 h = { 0 };
	struct query			*q;
	char				*cause = NULL, b[FMT_LEN];
	int				 rc;

	(void)self;
	cmd_args_leak(args, &opts);
	if ((q = input_open(args->argv[0], &cause)) == NULL ||
	    history_load(q, &opts, &h, &cause) != 0) {
		history_free(&h);
		query_close(q);
		return (cmd_fail(EXIT_INPUT, cause));
	}
	query_close(q);
	if (cmd_args_number(args, 'f', FORMAT_TEXT) == FORMAT_JSON)
		print_json(&h);
	else
		print_text(&h);
	rc = EXIT_OK;
	if (cmd_args_has(args, 'W') && h.worse) {
		log_warn("run %" PRId64 " leaks %s per step faster than run %"
		    PRId64, h.runs[h.n - 1].id, fmt_delta(
		    h.reports[h.n - 1]->growth_bytes_per_step -
		    h.reports[h.n - 2]->growth_bytes_per_step, b, sizeof b),
		    h.runs[h.n - 2].id);
		rc = EXIT_LEAK;
	} else if (cmd_args_has(args, 'W') && h.n >= 2 &&
	    (!h.runs[h.n - 1].complete || !h.runs[h.n - 2].complete))
		rc = EXIT_UNFINISHED;
	history_free(&h);
	return (rc);
}
