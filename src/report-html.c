/*
 * report-html.c: the HTML report, one self-contained page.
 *
 * The page is src/report-html.html with its CSS and JavaScript inlined at
 * build time (report-html-page.c, made by src/report-html-embed.sh); this
 * file writes the head of that page, the report's data as one JSON value
 * in <script type="application/json" id="vramtrace-data">, and the tail.
 * The page's script draws everything from the data; nothing is fetched.
 * The data's keys are the page's contract, described in HACKING.md ("The
 * HTML report"); a change to them bumps "version".
 *
 * Long runs stay small: at most REPORT_MARKS step marks (every k-th step
 * and the last) and REPORT_BARS growth bars (consecutive steps grouped).
 */
#include "config.h"

#include "vramtrace.h"
#include "report.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>

#include "query.h"
#include "unknown.h"

/* The page's data contract: bump it with any change of meaning. */
#define REPORT_HTML_VERSION	1
/* Step marks and growth bars at most. */
#define REPORT_MARKS		2000
#define REPORT_BARS		1000

static void
write_run(FILE *f, const struct query_run *run)
{
	static const struct {
		const char	*key;
		size_t		 off;
	} strings[] = {
		{ "source", offsetof(struct query_run, source) },
		{ "input", offsetof(struct query_run, input) },
		{ "command", offsetof(struct query_run, command) },
		{ "host", offsetof(struct query_run, host) },
		{ "git_commit", offsetof(struct query_run, git_commit) },
		{ "allocator", offsetof(struct query_run, allocator) },
		{ "step_source", offsetof(struct query_run, step_source) },
	}, counts[] = {
		{ "processes", offsetof(struct query_run, counts.processes) },
		{ "devices", offsetof(struct query_run, counts.devices) },
		{ "allocations", offsetof(struct query_run,
		    counts.allocations) },
	};
	size_t	i;

	fprintf(f, "\"run\":{\"id\":%" PRId64, run->id);
	for (i = 0; i < sizeof strings / sizeof strings[0]; i++) {
		fprintf(f, ",\"%s\":", strings[i].key);
		json_string_page(f, *(char *const *)(const void *)
		    ((const char *)run + strings[i].off));
	}
	for (i = 0; i < sizeof counts / sizeof counts[0]; i++) {
		fprintf(f, ",\"%s\":", counts[i].key);
		report_html_json_count(f, *(const int64_t *)(const void *)
		    ((const char *)run + counts[i].off));
	}
	fprintf(f, ",\"complete\":%s,\"duration_ns\":", run->complete ?
	    "true" : "false");
	json_u64(f, run->start_ns != UNKNOWN_U64 && run->end_ns !=
	    UNKNOWN_U64 && run->end_ns >= run->start_ns ? run->end_ns -
	    run->start_ns : UNKNOWN_U64);
	fputs("}", f);
}

static void
write_peak(FILE *f, const struct report_peak *p)
{
	fprintf(f, "{\"bytes\":%" PRId64 ",\"t\":", p->bytes);
	json_u64(f, p->ns);
	fputs(",\"step\":", f);
	report_html_json_count(f, p->step);
	fputs("}", f);
}

/* Step marks: [step, start or null, end], every k-th one and the last. */
static void
write_steps(FILE *f, const struct report *r)
{
	const struct report_step	*s;
	size_t				 i, k;

	k = r->nsteps > REPORT_MARKS ? (r->nsteps + REPORT_MARKS - 1) /
	    REPORT_MARKS : 1;
	fprintf(f, "\"step_every\":%zu,\"step_name\":", k);
	json_string_page(f, r->nsteps > 0 ? r->steps[0].name : NULL);
	fputs(",\"steps\":[", f);
	for (i = 0; i < r->nsteps; i++) {
		if (i % k != 0 && i != r->nsteps - 1)
			continue;
		s = &r->steps[i];
		fprintf(f, "%s[%" PRId64 ",", i > 0 ? "," : "", s->step);
		json_u64(f, s->start_ns);
		fprintf(f, ",%" PRIu64 "]", s->end_ns);
	}
	fputs("]", f);
}

static void
write_series(FILE *f, const struct report *r, const struct leak_report *lr,
    const struct report_series *s, int32_t device)
{
	const struct leak_stream	*ls;

	ls = leak_report_find_stream(lr, device, s->stream);

	fputs("{\"stream\":", f);
	json_stream(f, s->stream);
	fputs(",\"handle\":", f);
	json_handle(f, ls != NULL ? ls->handle : UNKNOWN_U64);
	fputs(",\"garbage\":", f);
	json_string_page(f, ls != NULL ?
	    leak_garbage_name(ls->garbage) : NULL);
	fprintf(f, ",\"peak_bytes\":%" PRId64 ",\"end_bytes\":%" PRId64
	    ",\"hi\":", s->peak_bytes, s->end_bytes);
	report_html_json_array(f, s->hi, r->nbuckets);
	fputs("}", f);
}

static void
write_lane(FILE *f, const struct report *r, const struct leak_report *lr,
    size_t i)
{
	const struct report_lane	*l = &r->lanes[i];
	const struct report_track	*k;
	size_t				 t, s, n = 0;
	char				*label;

	if (l->device < 0)
		xasprintf(&label, "%s%shost memory", l->name != NULL ?
		    l->name : "", l->name != NULL ? ", " : "");
	else
		xasprintf(&label, "%s%sdevice %d", l->name != NULL ? l->name :
		    "", l->name != NULL ? ", " : "", (int)l->device);
	fputs("{\"label\":", f);
	json_string_page(f, label);
	free(label);
	fputs(",\"process\":", f);
	report_html_json_count(f, l->process_id > 0 ? l->process_id :
	    UNKNOWN_INT);
	fputs(",\"rank\":", f);
	report_html_json_count(f, l->rank);
	fprintf(f, ",\"device\":%d,\"tracks\":[", (int)l->device);
	for (t = 0; t < r->ntracks; t++) {
		k = &r->tracks[t];
		if (k->lane != i)
			continue;
		fprintf(f, "%s{\"layer\":\"%s\",\"peak\":", n++ > 0 ? "," :
		    "", event_layer_name((unsigned int)k->layer));
		write_peak(f, &k->peak);
		fprintf(f, ",\"end_bytes\":%" PRId64 ",\"series\":[",
		    k->end_bytes);
		for (s = k->first; s < k->first + k->nseries; s++) {
			if (s > k->first)
				fputs(",", f);
			write_series(f, r, lr, &r->series[s], l->device);
		}
		fputs("]}", f);
	}
	fputs("],\"copies\":", f);
	if (l->copy_out != NULL || l->copy_in != NULL) {
		fputs("{\"out\":", f);
		report_html_json_array(f, l->copy_out, r->nbuckets);
		fputs(",\"in\":", f);
		report_html_json_array(f, l->copy_in, r->nbuckets);
		fputs("}", f);
	} else
		fputs("null", f);
	fputs(",\"offload\":", f);
	if (l->stash != NULL) {
		fputs("{\"offloaded\":", f);
		report_html_json_array(f, l->offloaded, r->nbuckets);
		fputs(",\"prefetched\":", f);
		report_html_json_array(f, l->prefetched, r->nbuckets);
		fputs(",\"stash\":", f);
		report_html_json_array(f, l->stash, r->nbuckets);
		fputs("}", f);
	} else
		fputs("null", f);
	fputs("}", f);
}

/*
 * Growth bars: [first step, last step, change, live at the last], steps
 * grouped g at a time, and each stream's live bytes at each bar's end.
 */
static void
write_bars(FILE *f, const struct leak_report *lr)
{
	const struct leak_stream	*s;
	size_t				 g, i, j, last;
	int64_t				 before;

	g = (lr->nsteps + REPORT_BARS - 1) / REPORT_BARS;
	if (g == 0)
		g = 1;
	fputs(",\"bars\":[", f);
	for (i = 0; i < lr->nsteps; i += g) {
		last = i + g < lr->nsteps ? i + g - 1 : lr->nsteps - 1;
		before = i > 0 ? lr->steps[i - 1].live_bytes :
		    lr->steps[0].live_bytes - lr->steps[0].delta_bytes;
		fprintf(f, "%s[%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64
		    "]", i > 0 ? "," : "", lr->steps[i].step,
		    lr->steps[last].step, lr->steps[last].live_bytes - before,
		    lr->steps[last].live_bytes);
	}
	fputs("],\"streams\":[", f);
	for (j = 0; j < lr->nstreams; j++) {
		s = &lr->streams[j];
		fprintf(f, "%s{\"device\":%d,\"stream\":", j > 0 ? "," : "",
		    (int)s->device);
		json_stream(f, s->stream);
		fputs(",\"handle\":", f);
		json_handle(f, s->handle);
		fputs(",\"garbage\":", f);
		json_string_page(f, leak_garbage_name(s->garbage));
		fprintf(f, ",\"garbage_bytes\":%" PRId64 ",\"is_default\":%s,"
		    "\"live_bytes\":%" PRId64 ",\"growth_bytes_per_step\":",
		    s->garbage_bytes, s->is_default ? "true" : "false",
		    s->live_bytes);
		json_double(f, s->growth_bytes_per_step, 1);
		fputs(",\"live\":[", f);
		for (i = 0; i < lr->nsteps; i += g) {
			last = i + g < lr->nsteps ? i + g - 1 : lr->nsteps - 1;
			fprintf(f, "%s%" PRId64, i > 0 ? "," : "",
			    s->live_per_step[last]);
		}
		fputs("]}", f);
	}
	fputs("]", f);
}

/* The largest step-end live bytes and the first step that has them. */
static void
write_step_end_peak(FILE *f, const struct leak_report *lr)
{
	size_t	i, at = 0;

	for (i = 1; i < lr->nsteps; i++) {
		if (lr->steps[i].live_bytes > lr->steps[at].live_bytes)
			at = i;
	}
	fprintf(f, ",\"peak_step_end\":{\"bytes\":%" PRId64 ",\"step\":",
	    lr->peak_bytes);
	report_html_json_count(f, lr->nsteps > 0 ? lr->steps[at].step :
	    UNKNOWN_INT);
	fputs("}", f);
}

/*
 * A suspect of the leak report: its name as `leaks` prints it (origin <
 * caller (in within), else its label), the frames that make the name,
 * its label (site), bytes, blocks, device and stream.
 */
static void
write_suspect(FILE *f, const struct leak_suspect *x, int first)
{
	static const char *const keys[] = { "origin", "caller", "within",
	    "site" };
	const char	*values[] = { x->origin, x->caller, x->within, x->site };
	char		*name = leak_suspect_name(x);
	size_t		 i;

	fputs(first ? "{\"name\":" : ",{\"name\":", f);
	json_string_page(f, name);
	free(name);
	for (i = 0; i < sizeof keys / sizeof *keys; i++) {
		fprintf(f, ",\"%s\":", keys[i]);
		json_string_page(f, values[i]);
	}
	fprintf(f, ",\"bytes\":%" PRId64 ",\"blocks\":%" PRId64
	    ",\"device\":%d,\"stream\":", x->bytes, x->blocks,
	    (int)x->device);
	json_stream(f, x->stream);
	fputs("}", f);
}

/*
 * The members of lr's verdict line, the device's and the pinned host
 * memory's alike: the verdict, why, its layer and warm-up, the growth, the
 * stream that grows most, and the leak model's shape, period, onset and
 * projection (leak_json_shape).
 */
static void
write_verdict_line(FILE *f, const struct leak_report *lr)
{
	const struct leak_stream	*top = NULL;

	if (lr->top_stream >= 0)
		top = &lr->streams[lr->top_stream];
	fprintf(f, "\"verdict\":\"%s\",\"reason\":",
	    leak_verdict_name(lr->verdict));
	json_string_page(f, lr->reason);
	fprintf(f, ",\"layer\":\"%s\",\"warmup\":%d,\"history_from\":",
	    event_layer_name((unsigned int)lr->layer), lr->warmup);
	json_int_or_null(f, lr->history_from, lr->history_from > 0);
	fprintf(f, ",\"threshold\":%" PRIu64 ",\"steps_analysed\":%" PRId64
	    ",\"growth_bytes_per_step\":", lr->threshold, lr->steps_analysed);
	json_double(f, lr->growth_bytes_per_step, 1);
	fputs(",\"grew_fraction\":", f);
	json_double(f, lr->grew_fraction, 4);
	fputs(",\"top_stream\":", f);
	if (top != NULL) {
		fprintf(f, "{\"device\":%d,\"stream\":", (int)top->device);
		json_stream(f, top->stream);
		fputs(",\"growth_bytes_per_step\":", f);
		json_double(f, top->growth_bytes_per_step, 1);
		fputs("}", f);
	} else
		fputs("null", f);
	fprintf(f, ",\"usage_only\":%s,", lr->usage_only ? "true" : "false");
	leak_json_shape(f, lr);
}

/*
 * The verdict: its line (write_verdict_line), the step-end peak, the
 * growth bars, the suspects and the ranks.
 */
static void
write_verdict(FILE *f, const struct leak_report *lr)
{
	size_t	i;

	fputs("\"verdict\":{", f);
	write_verdict_line(f, lr);
	write_step_end_peak(f, lr);
	write_bars(f, lr);
	fputs(",\"suspects\":[", f);
	for (i = 0; i < lr->nsuspects; i++)
		write_suspect(f, &lr->suspects[i], i == 0);
	fputs("],\"ranks\":[", f);
	for (i = 0; i < lr->nranks; i++) {
		fprintf(f, "%s{\"rank\":%" PRId64 ",\"verdict\":\"%s\","
		    "\"growth_bytes_per_step\":", i > 0 ? "," : "",
		    lr->ranks[i].rank, leak_verdict_name(lr->ranks[i].verdict));
		json_double(f, lr->ranks[i].growth_bytes_per_step,
		    1);
		fputs("}", f);
	}
	fputs("]}", f);
}

/*
 * The pinned host memory's verdict line (write_verdict_line), or null when
 * it was not judged (pinned NULL).
 */
static void
write_pinned(FILE *f, const struct leak_report *pinned)
{
	fputs("\"pinned\":", f);
	if (pinned == NULL) {
		fputs("null", f);
		return;
	}
	fputs("{", f);
	write_verdict_line(f, pinned);
	fputs("}", f);
}

/* Blocks: [site, lane, stream, bytes, address, alloc step, alloc t]. */
static void
write_blocks(FILE *f, const struct report_block *b, size_t n)
{
	size_t	i;

	fputs("[", f);
	for (i = 0; i < n; i++) {
		fprintf(f, "%s[%zu,%zu,", i > 0 ? "," : "", b[i].site,
		    b[i].lane);
		json_stream(f, b[i].stream);
		fprintf(f, ",%" PRId64 ",\"0x%" PRIx64 "\",", b[i].bytes,
		    b[i].address);
		report_html_json_count(f, b[i].alloc_step);
		fputs(",", f);
		json_u64(f, b[i].alloc_ns);
		fputs("]", f);
	}
	fputs("]", f);
}

static void
write_holders(FILE *f, const struct report *r)
{
	const struct report_site	*s;
	size_t				 i, j;
	int				 at;

	fputs("\"holders\":{\"frames\":[", f);
	for (i = 0; i < r->nframes; i++) {
		fputs(i > 0 ? ",[" : "[", f);
		json_string_page(f, r->frames[i].name);
		fputs(",", f);
		json_string_page(f, r->frames[i].filename);
		fprintf(f, ",%" PRId64 "]", r->frames[i].line);
	}
	fputs("],\"sites\":[", f);
	for (i = 0; i < r->nsites; i++) {
		s = &r->sites[i];
		fprintf(f, "%s{\"id\":%" PRId64 ",\"label\":", i > 0 ? "," :
		    "", s->site_id);
		json_string_page(f, s->label);
		fputs(",\"frames\":[", f);
		for (j = 0; j < s->nframes; j++)
			fprintf(f, "%s%zu", j > 0 ? "," : "", s->frames[j]);
		fprintf(f, "],\"bytes\":[%" PRId64 ",%" PRId64 "],\"blocks\":"
		    "[%" PRId64 ",%" PRId64 "]}", s->bytes[REPORT_AT_PEAK],
		    s->bytes[REPORT_AT_END], s->blocks[REPORT_AT_PEAK],
		    s->blocks[REPORT_AT_END]);
	}
	fputs("],\"blocks\":[", f);
	for (at = 0; at < REPORT_AT_MAX; at++) {
		if (at > 0)
			fputs(",", f);
		write_blocks(f, r->blocks[at], r->nblocks[at]);
	}
	fprintf(f, "],\"other_sites\":[%" PRId64 ",%" PRId64 "],"
	    "\"other_bytes\":[%" PRId64 ",%" PRId64 "],\"site_blocks\":%d}",
	    r->other_sites[0], r->other_sites[1], r->other_bytes[0],
	    r->other_bytes[1], REPORT_SITE_BLOCKS);
}

/*
 * Write the page of run `run` to f: r with its holders filled
 * (query_report, query_report_sites), lr its leak analysis, in the same
 * layer, and pinned the pinned host memory's beside it (query_leaks_host;
 * NULL when it was not judged).  0, or -1 with *cause when f could not be
 * written.
 */
int
report_html_write(FILE *f, const struct query_run *run,
    const struct report *r, const struct leak_report *lr,
    const struct leak_report *pinned, char **cause)
{
	size_t	i;

	fputs(report_html_head, f);
	fprintf(f, "{\"format\":\"vramtrace-report\",\"version\":%d,"
	    "\"generator\":\"vramtrace %s\",", REPORT_HTML_VERSION,
	    PACKAGE_VERSION);
	write_run(f, run);
	fputs(",\"t0_ns\":", f);
	if (r->t0_ns == UNKNOWN_U64)
		fputs("null", f);
	else
		fprintf(f, "\"%" PRIu64 "\"", r->t0_ns);
	fprintf(f, ",\"span_ns\":%" PRIu64 ",\"bucket_ns\":%" PRIu64
	    ",\"buckets\":%zu,\"layer\":\"%s\",\"peak\":", r->span_ns,
	    r->bucket_ns, r->nbuckets, event_layer_name((unsigned int)
	    r->layer));
	write_peak(f, &r->peak);
	fputs(",", f);
	write_steps(f, r);
	fputs(",\"lanes\":[", f);
	for (i = 0; i < r->nlanes; i++) {
		if (i > 0)
			fputs(",", f);
		write_lane(f, r, lr, i);
	}
	fputs("],\n", f);
	write_verdict(f, lr);
	fputs(",\n", f);
	write_pinned(f, pinned);
	fputs(",\n", f);
	write_holders(f, r);
	fputs("}", f);
	fputs(report_html_tail, f);
	if (ferror(f)) {
		*cause = xstrerror_cause("cannot write the page");
		return (-1);
	}
	return (0);
}
