/*
 * cmd-report.c: vramtrace report DB|PICKLE: one screen about a run: what it
 * was, its devices, steps and peak, the leak verdict, the top streams and
 * the top sites; with --html FILE, the HTML report of the run instead
 * (report.h: aggregated by query_report, written by report_html_write).
 */
#include "config.h"

#include "vramtrace.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "query.h"
#include "report.h"
#include "cmd.h"

static int	cmd_report_exec(const struct cmd_entry *,
		    const struct cmd_args *);

enum { FORMAT_TEXT, FORMAT_JSON };
static const char *const formats[] = { "text", "json", NULL };

static const struct cmd_option cmd_report_options[] = {
	CMD_OPTIONS_LEAK("the run to summarise (default: the newest)"),
	CMD_OPTION_FORMAT(formats, "text (default) or json"),
	{ .name = "html", .letter = 'H', .kind = CMD_TEXT,
	  .value = "OUT.html",
	  .help = "write the run's HTML report here instead" },
	CMD_OPTION_END
};

const struct cmd_entry cmd_report_entry = {
	.name = "report",
	CMD_ARGS_DB,
	.options = cmd_report_options,
	.summary = "summarise a run on one screen: devices, steps, peak,"
	    " verdict, top streams and sites",
	.exec = cmd_report_exec
};

/* How many streams and sites one screen shows. */
#define REPORT_TOP	5

static void
print_text(const struct query_run *run, const struct leak_report *r,
    const struct leak_report *pinned, const struct query_check *c,
    const struct leak_print_peak *peak)
{
	char	b[FMT_LEN];

	printf("run %" PRId64 "      %s of %s%s\n", run->id,
	    fmt_text(run->source), fmt_text(run->input != NULL ?
	    run->input : run->command), run->complete ? "" :
	    " (not finished)");
	printf("host       %s, lasted %s\n", fmt_text(run->host),
	    fmt_duration(run->start_ns, run->end_ns, b, sizeof b));
	printf("devices    %" PRId64 ", %" PRId64 " processes, %" PRId64
	    " allocations, allocator %s\n", run->counts.devices,
	    run->counts.processes, run->counts.allocations,
	    fmt_text(run->allocator));
	printf("steps      %zu (from %s), warm-up %d\n", r->nsteps,
	    fmt_text(run->step_source), r->warmup);
	leak_print_history(stdout, "history    ", r);
	printf("layer      %s\n", event_layer_name((unsigned int)r->layer));
	leak_print_peak(stdout, "peak       ", peak);
	leak_print_verdict(stdout, "verdict    ", r);
	if (pinned != NULL)
		leak_print_verdict(stdout, "pinned     ", pinned);
	check_report_text(stdout, "check      ", c);
	leak_print_ranks(stdout, r);
	printf("\ntop streams, live at the %s:\n", r->nsteps == 0 ? "end" :
	    "last step");
	leak_print_streams(stdout, r, REPORT_TOP);
	if (r->nsuspects == 0)
		return;
	if (r->nsteps == 0)
		printf("\ntop sites, live at the end:\n");
	else
		printf("\ntop sites, live at the last step, allocated after "
		    "the warm-up:\n");
	leak_print_suspects(stdout, r, REPORT_TOP);
}

static void
print_json(const struct query_run *run, const struct leak_report *r,
    const struct leak_report *pinned, const struct query_check *c,
    const struct leak_print_peak *peak)
{
	printf("{\"run_id\": %" PRId64 ", \"source\": ", run->id);
	json_string(stdout, run->source);
	printf(", \"input\": ");
	json_string(stdout, run->input);
	printf(", \"command\": ");
	json_string(stdout, run->command);
	printf(", \"host\": ");
	json_string(stdout, run->host);
	printf(", \"complete\": %s, \"start_ns\": ", run->complete ? "true" :
	    "false");
	json_time(stdout, run->start_ns);
	printf(", \"end_ns\": ");
	json_time(stdout, run->end_ns);
	printf(", \"devices\": %" PRId64 ", \"processes\": %" PRId64
	    ", \"allocations\": %" PRId64 ", \"total_steps\": %zu, "
	    "\"layer\": \"%s\"", run->counts.devices, run->counts.processes,
	    run->counts.allocations, r->nsteps,
	    event_layer_name((unsigned int)r->layer));
	leak_print_peak_json(stdout, peak);
	printf(", \"verdict\": \"%s\", \"reason\": ",
	    leak_verdict_name(r->verdict));
	json_string(stdout, r->reason);
	printf(", \"steps\": %" PRId64 ", \"warmup\": %d, ",
	    r->steps_analysed, r->warmup);
	leak_json_growth(stdout, r);
	printf(",\n ");
	leak_json_shape(stdout, r);
	printf(",\n \"pinned\": ");
	leak_json_pinned(stdout, pinned);
	printf(",\n \"offload_check\": ");
	check_report_json(stdout, c);
	leak_json_streams(stdout, r, 0);
	leak_print_suspects_json(stdout, r, REPORT_TOP);
	printf("}\n");
}

/*
 * What html_write needs: the reader, the run, its leak report and the
 * pinned host memory's (NULL: not judged).
 */
struct report_job {
	struct query			*q;
	const struct query_run		*run;
	const struct leak_report	*lr;
	const struct leak_report	*pinned;
};

/*
 * The events the walk sorts at once: VRAMTRACE_REPORT_WINDOW (for tests:
 * small windows must give the data of one), else 0, the default.
 */
static size_t
html_window(void)
{
	const char	*e = getenv("VRAMTRACE_REPORT_WINDOW");

	return (e != NULL ? (size_t)strtoull(e, NULL, 10) : 0);
}

/* Aggregate the run and write its page to f.  0, or -1 with *cause. */
static int
html_write(FILE *f, void *arg, char **cause)
{
	struct report_job	*job = arg;
	struct report		*r = NULL;
	int			 rc = -1;

	if (query_report(job->q, job->run->id, job->lr->layer, html_window(),
	    &r, cause) == 0 && query_report_sites(job->q, r, cause) == 0)
		rc = report_html_write(f, job->run, r, job->lr, job->pinned,
		    cause);
	query_report_free(r);
	return (rc);
}

static int
cmd_report_exec(const struct cmd_entry *self, const struct cmd_args *args)
{
	struct leak_options	 opts;
	struct leak_report	*r = NULL, *pinned = NULL;
	struct leak_print_peak	 peak;
	struct query_run	 run = { 0 };
	struct query_check	 c;
	struct report_job	 job;
	struct query		*q;
	const char		*html;
	char			*cause = NULL;
	int			 rc = 0;

	if (cmd_args_has(args, 'H') && cmd_args_has(args, 'f'))
		return (cmd_usage_error(self,
		    "--html and --format do not mix"));
	cmd_args_leak(args, &opts);
	memset(&c, 0, sizeof c);
	if ((q = input_open(args->argv[0], &cause)) == NULL ||
	    query_run(q, opts.run_id, QUERY_COUNT_PROCESSES |
	    QUERY_COUNT_DEVICES | QUERY_COUNT_ALLOCATIONS, &run,
	    &cause) != 0 ||
	    query_leaks(q, &opts, &r, &cause) != 0 ||
	    query_leaks_host(q, &opts, r, &pinned, &cause) != 0 ||
	    query_check(q, r->run_id, CMD_CHECK_FIRST, &c, &cause) != 0 ||
	    leak_print_peak_read(q, r, &peak, &cause) != 0) {
		query_check_free(&c);
		leak_report_free(pinned);
		leak_report_free(r);
		query_run_free(&run);
		query_close(q);
		return (cmd_fail(EXIT_INPUT, cause));
	}
	if ((html = cmd_args_text(args, 'H', NULL)) != NULL) {
		job.q = q;
		job.run = &run;
		job.lr = r;
		job.pinned = pinned;
		rc = util_write_file(html, html_write, &job, &cause);
	} else if (cmd_args_number(args, 'f', FORMAT_TEXT) == FORMAT_JSON)
		print_json(&run, r, pinned, &c, &peak);
	else
		print_text(&run, r, pinned, &c, &peak);
	query_close(q);
	if (rc != 0)	/* the page could not be made or written */
		rc = cmd_fail(EXIT_ERROR, cause);
	else
		rc = c.diffs > 0 ? EXIT_CORRUPT : EXIT_OK;
	query_check_free(&c);
	query_run_free(&run);
	leak_report_free(pinned);
	leak_report_free(r);
	return (rc);
}
