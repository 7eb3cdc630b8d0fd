/*
 * leak-print.c: the parts of a leak report that vramtrace leaks and
 * vramtrace report both print as text: the verdict line, the streams (the
 * devices of a run seen through usage samples only), the ranks of a job
 * and the suspect sites; and the peak that leaks, report and history
 * print, in text and JSON.
 */
#include "config.h"

#include "vramtrace.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "leak.h"
#include "query.h"
#include "report.h"
#include "cmd.h"
#include "unknown.h"

/*
 * The shape of r's total in words, into buf of len bytes: what it does,
 * with its period and onset step ("periodic: grows every 5 steps from step
 * 5").  An empty string when it has no shape (too few steps).
 */
const char *
leak_print_shape(const struct leak_report *r, char *buf, size_t len)
{
	const struct leak_shape_result	*sh = &r->shape;
	int64_t				 on = leak_report_onset(r);

	switch (sh->shape) {
	case LEAK_SHAPE_FLAT:
		snprintf(buf, len, "flat: the same live bytes at every step");
		break;
	case LEAK_SHAPE_NOISE:
		snprintf(buf, len, "noise: changes that keep nothing");
		break;
	case LEAK_SHAPE_BOUNDED:
		snprintf(buf, len, "bounded: rises and falls back every %"
		    PRId64 " steps", sh->period);
		break;
	case LEAK_SHAPE_WARMUP:
		snprintf(buf, len, "warm-up: grew, then flat from step %" PRId64,
		    on);
		break;
	case LEAK_SHAPE_STEADY:
		if (sh->window > 1)
			snprintf(buf, len, "steady: grows throughout from step %"
			    PRId64 " (seen in windows of %" PRId64 " steps: "
			    "transients hide which steps grew)", on,
			    sh->window);
		else
			snprintf(buf, len, "steady: grows at every step from "
			    "step %" PRId64, on);
		break;
	case LEAK_SHAPE_PERIODIC:
		snprintf(buf, len, "periodic: grows every %" PRId64 " steps "
		    "from step %" PRId64, sh->period, on);
		break;
	case LEAK_SHAPE_LATE_ONSET:
		snprintf(buf, len, "late onset: flat, then grows every %" PRId64
		    " step%s from step %" PRId64, sh->period, sh->period == 1 ?
		    "" : "s", on);
		break;
	case LEAK_SHAPE_IRREGULAR:
		snprintf(buf, len, "irregular: keeps growing, at uneven steps, "
		    "from step %" PRId64, on);
		break;
	default:
		buf[0] = '\0';
	}
	return (buf);
}

/*
 * Fill *p with the peak of r's run in r's layer: the high-water mark over
 * every instant, with its time and step (query_report_peak, the walk of
 * the HTML report), and the largest live bytes at a step end, with its
 * step.  A run seen through usage samples only has no instants: its peak
 * is its largest step end, at an unknown time.  0, or -1 with *cause.
 */
int
leak_print_peak_read(struct query *q, const struct leak_report *r,
    struct leak_print_peak *p, char **cause)
{
	struct report_peak	hw;
	uint64_t		t0;
	size_t			i;

	p->end_bytes = 0;
	p->end_step = UNKNOWN_INT;
	for (i = 0; i < r->nsteps; i++) {
		if (p->end_step == UNKNOWN_INT ||
		    r->steps[i].live_bytes > p->end_bytes) {
			p->end_bytes = r->steps[i].live_bytes;
			p->end_step = r->steps[i].step;
		}
	}
	p->bytes = p->end_bytes;
	p->ns = p->t0_ns = UNKNOWN_U64;
	p->step = p->end_step;
	if (r->usage_only)
		return (0);
	if (query_report_peak(q, r->run_id, r->layer, &hw, &t0, cause) != 0)
		return (-1);
	p->bytes = hw.bytes;
	p->ns = hw.ns == UNKNOWN_U64 ? UNKNOWN_U64 : t0 + hw.ns;
	p->step = hw.step;
	p->t0_ns = t0;
	return (0);
}

/*
 * Print, after prefix, the line that says a snapshot's trace begins after
 * its first steps (r->history_from), with the fix; nothing for any other
 * run.
 */
void
leak_print_history(FILE *f, const char *prefix, const struct leak_report *r)
{
	if (r->history_from > 0)
		fprintf(f, "%sthe snapshot's trace begins in step %d of %zu, so"
		    " the warm-up reaches to it (%s)\n", prefix, r->history_from,
		    r->nsteps, LEAK_HISTORY_NOTE);
}

/*
 * Print the peak in one line after prefix: the high-water mark, its step
 * and time after the run's start, and the largest at a step end (none in
 * a run without steps).
 */
void
leak_print_peak(FILE *f, const char *prefix, const struct leak_print_peak *p)
{
	char	b[FMT_LEN], t[FMT_LEN];

	fprintf(f, "%s%s", prefix, fmt_bytes(p->bytes, b, sizeof b));
	if (p->ns != UNKNOWN_U64) {
		if (p->step != UNKNOWN_INT)
			fprintf(f, " in step %" PRId64, p->step);
		fprintf(f, " at %s", fmt_offset(p->ns, p->t0_ns, t,
		    sizeof t));
	}
	fprintf(f, " (high-water mark)");
	if (p->end_step != UNKNOWN_INT)
		fprintf(f, "; %s at the end of step %" PRId64 " (largest at a"
		    " step end)", fmt_bytes(p->end_bytes, b, sizeof b),
		    p->end_step);
	fputc('\n', f);
}

/*
 * Print the peak's JSON keys, each after ", ": peak_bytes, peak_ns,
 * peak_step, peak_step_end_bytes, peak_step_end_step (null: unknown; the
 * last two without steps).
 */
void
leak_print_peak_json(FILE *f, const struct leak_print_peak *p)
{
	fprintf(f, ", \"peak_bytes\": %" PRId64 ", \"peak_ns\": ", p->bytes);
	json_time(f, p->ns);
	fprintf(f, ", \"peak_step\": ");
	json_int_or_null(f, p->step, p->step != UNKNOWN_INT);
	fprintf(f, ", \"peak_step_end_bytes\": ");
	json_int_or_null(f, p->end_bytes, p->end_step != UNKNOWN_INT);
	fprintf(f, ", \"peak_step_end_step\": ");
	json_int_or_null(f, p->end_step, p->end_step != UNKNOWN_INT);
}

/*
 * Print the verdict in one line after prefix: the verdict, the growth per
 * step, how many steps grew and, for a leak, the stream that grows most;
 * for INCONCLUSIVE, why.  Then, when the series has a shape, a line
 * "shape:" (as wide as prefix) saying it in words and, for a leak, what it
 * reaches over the horizon; a CLEAN that grew says why it is clean.
 */
void
leak_print_verdict(FILE *f, const char *prefix, const struct leak_report *r)
{
	const struct leak_stream	*top;
	char				 b[FMT_LEN], s[FMT_LEN], p[FMT_LEN];
	char				 words[128];

	fprintf(f, "%s%s", prefix, leak_verdict_name(r->verdict));
	if (r->verdict == LEAK_INCONCLUSIVE) {
		fprintf(f, " (%s)\n", fmt_safe(r->reason));
		return;
	}
	fprintf(f, ", %s per step, %s of %" PRId64 " steps grew",
	    fmt_delta(r->growth_bytes_per_step, b, sizeof b),
	    fmt_percent(r->grew_fraction, p, sizeof p), r->steps_analysed);
	if (r->layer == EVENT_LAYER_HOST)
		;	/* pinned host memory: no stream, not the device's */
	else if (r->verdict == LEAK_LEAK && r->top_stream >= 0 &&
	    r->usage_only) {
		top = &r->streams[r->top_stream];
		fprintf(f, ", mostly on device %d (%s)", (int)top->device,
		    fmt_delta(top->growth_bytes_per_step, b,
		    sizeof b));
	} else if (r->verdict == LEAK_LEAK && r->top_stream >= 0) {
		top = &r->streams[r->top_stream];
		fprintf(f, ", mostly on stream %s (device %d, %s)",
		    fmt_stream(top->stream, s, sizeof s),
		    (int)top->device, fmt_delta(
		    top->growth_bytes_per_step, b, sizeof b));
	}
	fprintf(f, ", layer %s\n", event_layer_name((unsigned int)r->layer));
	if (*leak_print_shape(r, words, sizeof words) == '\0')
		return;
	fprintf(f, "%-*s%s", (int)strlen(prefix), "shape:", words);
	if (r->verdict == LEAK_LEAK) {
		fprintf(f, "; %s over %" PRId64 " steps",
		    fmt_delta(r->shape.horizon_bytes, b, sizeof b),
		    r->shape.horizon);
		if (r->shape.steps_to_full >= 0)
			fprintf(f, ", the device full in %" PRId64 " steps",
			    r->shape.steps_to_full);
	} else if (r->reason != NULL)
		fprintf(f, " (%s)", r->reason);
	fputc('\n', f);
}

static const struct leak_report *sort_report;

static int
cmp_live(const void *x, const void *y)
{
	const struct leak_stream	*a, *b;

	a = &sort_report->streams[*(const size_t *)x];
	b = &sort_report->streams[*(const size_t *)y];
	return ((a->live_bytes < b->live_bytes) -
	    (a->live_bytes > b->live_bytes));
}

/* The devices of a run seen through usage samples: one verdict each. */
static void
print_devices(FILE *f, const struct leak_report *r)
{
	const struct leak_stream	*s;
	char				 a[FMT_LEN], b[FMT_LEN];
	size_t				 i;

	fprintf(f, "%s\n%6s  %12s  %12s  %s\n", LEAK_USAGE_NOTE, "device",
	    "live", "growth/step", "verdict");
	for (i = 0; i < r->nstreams; i++) {
		s = &r->streams[i];
		fprintf(f, "%6d  %12s  %12s  %s\n", (int)s->device,
		    fmt_bytes(s->live_bytes, a, sizeof a),
		    fmt_delta(s->growth_bytes_per_step, b, sizeof b),
		    leak_verdict_name(s->verdict));
	}
}

/*
 * Print a table of at most max streams, most live bytes first: live bytes
 * at the last step, growth per step and the garbage kind; memory with no
 * stream (a synchronous cudaMalloc, outside the stream-ordered pool) says
 * what it holds and that it is not garbage.  A run seen
 * through usage samples only gets its devices, each with its verdict, and
 * a line saying what is not visible.
 */
void
leak_print_streams(FILE *f, const struct leak_report *r, size_t max)
{
	const struct leak_stream	*s;
	const char			*g;
	char				 a[FMT_LEN], b[FMT_LEN], c[FMT_LEN];
	size_t				*order, i;

	if (r->usage_only) {
		print_devices(f, r);
		return;
	}
	order = xreallocarray(NULL, r->nstreams + 1, sizeof *order);
	for (i = 0; i < r->nstreams; i++)
		order[i] = i;
	sort_report = r;
	util_sort(order, r->nstreams, sizeof *order, cmp_live);
	fprintf(f, "%6s  %-20s  %12s  %12s  %s\n", "device", "stream", "live",
	    "growth/step", "garbage");
	for (i = 0; i < r->nstreams && i < max; i++) {
		s = &r->streams[order[i]];
		fprintf(f, "%6d  %-20s  %12s  %12s  ", (int)s->device,
		    fmt_stream_handle(s->stream, s->handle, c, sizeof c),
		    fmt_bytes(s->live_bytes, a, sizeof a),
		    fmt_delta(s->growth_bytes_per_step, b, sizeof b));
		if ((g = leak_garbage_name(s->garbage)) != NULL)
			fprintf(f, "%s: %s in %" PRId64 " blocks", g,
			    fmt_bytes(s->garbage_bytes, a, sizeof a),
			    s->garbage_blocks);
		else if (s->is_default)
			fprintf(f, "(default stream)");
		else if (s->stream == UNKNOWN_U64 && s->segment_bytes > 0)
			fprintf(f, "(no stream: %s in %" PRId64 " segments "
			    "from synchronous cudaMalloc, not garbage)",
			    fmt_bytes(s->segment_bytes, a, sizeof a),
			    s->segment_blocks);
		fputc('\n', f);
	}
	free(order);
}

/* Print a table of at most max suspect sites, largest first. */
void
leak_print_suspects(FILE *f, const struct leak_report *r, size_t max)
{
	const struct leak_suspect	*x;
	char				 a[FMT_LEN], c[FMT_LEN], *name;
	size_t				 i;

	fprintf(f, "%12s  %8s  %-18s  %s\n", "bytes", "blocks", "stream",
	    "site");
	for (i = 0; i < r->nsuspects && i < max; i++) {
		x = &r->suspects[i];
		name = leak_suspect_name(x);
		fprintf(f, "%12s  %8" PRId64 "  %-18s  %s\n",
		    fmt_bytes(x->bytes, a, sizeof a), x->blocks,
		    fmt_stream(x->stream, c, sizeof c), fmt_safe(name));
		free(name);
	}
}

/*
 * Print the table of r's ranks, each analysed alone, and the skew line;
 * nothing for a run without ranks.
 */
void
leak_print_ranks(FILE *f, const struct leak_report *r)
{
	const struct leak_rank	*k;
	char			 a[FMT_LEN], b[FMT_LEN], lr[FMT_LEN];
	char			 pid[FMT_LEN], grew[FMT_LEN], dev[64];
	size_t			 i, j, len;

	if (r->nranks == 0)
		return;
	fprintf(f, "%5s  %5s  %8s  %-16s  %-8s  %-12s  %12s  %5s\n", "rank",
	    "local", "pid", "host", "devices", "verdict", "growth/step",
	    "grew");
	for (i = 0; i < r->nranks; i++) {
		k = &r->ranks[i];
		dev[0] = '\0';
		for (j = len = 0; j < k->ndevices && len < sizeof dev; j++)
			len += (size_t)snprintf(dev + len, sizeof dev - len,
			    "%s%d", j ? "," : "", (int)k->devices[j]);
		fprintf(f, "%5" PRId64 "  %5s  %8s  %-16s  %-8s  %-12s  %12s"
		    "  %5s\n", k->rank, fmt_int(k->local_rank, lr, sizeof lr),
		    fmt_int(k->pid > 0 ? k->pid : UNKNOWN_INT, pid, sizeof pid),
		    fmt_text(k->host), fmt_text(k->ndevices > 0 ? dev : NULL),
		    leak_verdict_name(k->verdict), fmt_delta(
		    k->growth_bytes_per_step, a, sizeof a),
		    fmt_percent(k->grew_fraction, grew, sizeof grew));
	}
	k = &r->ranks[r->skew.worst];
	fprintf(f, "skew: rank %" PRId64 " grows %s per step, the median rank"
	    " %s", k->rank, fmt_delta(k->growth_bytes_per_step, a,
	    sizeof a), fmt_delta(r->skew.median_growth_bytes_per_step,
	    b, sizeof b));
	if (!isnan(r->skew.ratio))
		fprintf(f, " (%.1fx)", r->skew.ratio);
	fputc('\n', f);
}

/*
 * Print ",\n \"suspects\": [...]": the first max suspects of r, each with
 * site (its label; null without a stack), origin, caller and within (the
 * frames that name it, site-origin.c; each null where the stack has none),
 * site_id (null without a stack), bytes, blocks, device and stream, as
 * leaks and report give them.
 */
void
leak_print_suspects_json(FILE *f, const struct leak_report *r, size_t max)
{
	const struct leak_suspect	*x;
	size_t				 i;

	fprintf(f, ",\n \"suspects\": [");
	for (i = 0; i < r->nsuspects && i < max; i++) {
		x = &r->suspects[i];
		fprintf(f, "%s\n  {\"site\": ", i ? "," : "");
		json_string(f, x->site);
		fprintf(f, ", \"origin\": ");
		json_string(f, x->origin);
		fprintf(f, ", \"caller\": ");
		json_string(f, x->caller);
		fprintf(f, ", \"within\": ");
		json_string(f, x->within);
		fprintf(f, ", \"site_id\": ");
		json_int_or_null(f, x->site_id, x->site_id >= 0);
		fprintf(f, ", \"bytes\": %" PRId64 ", \"blocks\": %" PRId64
		    ", \"device\": %d, \"stream\": ", x->bytes, x->blocks,
		    (int)x->device);
		json_stream(f, x->stream);
		fprintf(f, "}");
	}
	fprintf(f, "]");
}
