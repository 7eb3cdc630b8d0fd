/*
 * leak-json.c: a leak report as JSON members (its shape, growth and
 * streams), the same for vramtrace leaks, report and history --format json
 * and the HTML report's verdict.
 */
#include "config.h"

#include "vramtrace.h"

#include <inttypes.h>
#include <stdio.h>

#include "leak.h"

/*
 * Print the keys "shape", "period", "onset" and "projection" of r's total
 * as JSON members (no braces around them, none before or after): the shape
 * name, the period and the onset step (null when none), and the projection
 * over the horizon: "steps", "bytes" (live after them), "growth_bytes" and
 * "steps_to_full" (null when unknown or not growing).  All null when the
 * series has no shape.
 */
void
leak_json_shape(FILE *f, const struct leak_report *r)
{
	const struct leak_shape_result	*sh = &r->shape;
	int64_t				 on = leak_report_onset(r);

	if (sh->shape == LEAK_SHAPE_NONE) {
		fputs("\"shape\": null, \"period\": null, \"onset\": null, "
		    "\"projection\": null", f);
		return;
	}
	fprintf(f, "\"shape\": \"%s\", \"period\": ",
	    leak_shape_name(sh->shape));
	json_int_or_null(f, sh->period, sh->period > 0);
	fputs(", \"onset\": ", f);
	json_int_or_null(f, on, on != UNKNOWN_INT);
	fprintf(f, ", \"projection\": {\"steps\": %" PRId64 ", \"bytes\": ",
	    sh->horizon);
	json_double(f, sh->projected_bytes, 0);
	fputs(", \"growth_bytes\": ", f);
	json_double(f, sh->horizon_bytes, 0);
	fputs(", \"steps_to_full\": ", f);
	json_int_or_null(f, sh->steps_to_full, sh->steps_to_full >= 0);
	fputs("}", f);
}

/*
 * Print the keys "growth_bytes_per_step" and "grew_fraction" of r's total
 * as JSON members (no braces, nothing before or after); null when not
 * finite.
 */
void
leak_json_growth(FILE *f, const struct leak_report *r)
{
	fputs("\"growth_bytes_per_step\": ", f);
	json_double(f, r->growth_bytes_per_step, 1);
	fputs(", \"grew_fraction\": ", f);
	json_double(f, r->grew_fraction, 3);
}

/*
 * Print the member "streams" (with a leading ",\n "): one object per
 * stream of r, its identity, life, live bytes, growth, verdict, garbage
 * and cached segments, and with `series` non-zero its live bytes at the
 * end of each step ("live_per_step").
 */
void
leak_json_streams(FILE *f, const struct leak_report *r, int series)
{
	const struct leak_stream	*s;
	size_t				 i, k;

	fputs(",\n \"streams\": [", f);
	for (i = 0; i < r->nstreams; i++) {
		s = &r->streams[i];
		fprintf(f, "%s\n  {\"device\": %d, \"stream\": ", i ? "," : "",
		    (int)s->device);
		json_stream(f, s->stream);
		fputs(", \"handle\": ", f);
		json_handle(f, s->handle);
		fprintf(f, ", \"default\": %s, \"created_ns\": ",
		    s->is_default ? "true" : "false");
		json_time(f, s->created_ns);
		fputs(", \"destroyed_ns\": ", f);
		json_time(f, s->destroyed_ns);
		fprintf(f, ", \"live_bytes\": %" PRId64 ", \"live_blocks\": %"
		    PRId64 ", \"growth_bytes_per_step\": ", s->live_bytes,
		    s->live_blocks);
		json_double(f, s->growth_bytes_per_step, 1);
		fputs(", \"grew_fraction\": ", f);
		json_double(f, s->grew_fraction, 3);
		fprintf(f, ", \"verdict\": \"%s\", \"garbage\": ",
		    leak_verdict_name(s->verdict));
		json_string(f, leak_garbage_name(s->garbage));
		fprintf(f, ", \"garbage_bytes\": %" PRId64 ", \"garbage_blocks\": %"
		    PRId64 ", \"segment_bytes\": %" PRId64 ", "
		    "\"segment_blocks\": %" PRId64, s->garbage_bytes,
		    s->garbage_blocks, s->segment_bytes, s->segment_blocks);
		if (series) {
			fputs(", \"live_per_step\": [", f);
			for (k = 0; k < r->nsteps; k++)
				fprintf(f, "%s%" PRId64, k ? ", " : "",
				    s->live_per_step[k]);
			fputc(']', f);
		}
		fputc('}', f);
	}
	fputc(']', f);
}

/*
 * Print the value of the member "pinned" (the caller prints its key): the
 * host layer's report (pinned host memory) as an object of its verdict,
 * reason, growth and shape, or null when it was not judged (pinned NULL).
 */
void
leak_json_pinned(FILE *f, const struct leak_report *pinned)
{
	if (pinned == NULL) {
		fputs("null", f);
		return;
	}
	fprintf(f, "{\"verdict\": \"%s\", \"reason\": ",
	    leak_verdict_name(pinned->verdict));
	json_string(f, pinned->reason);
	fputs(", ", f);
	leak_json_growth(f, pinned);
	fputs(", ", f);
	leak_json_shape(f, pinned);
	fputs("}", f);
}
