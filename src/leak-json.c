/*
 * leak-json.c: the leak model's part of a leak report as JSON members, the
 * same for vramtrace leaks --format json and the HTML report's verdict.
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
	fprintf(f, ", \"projection\": {\"steps\": %" PRId64 ", \"bytes\": "
	    "%.0f, \"growth_bytes\": %.0f, \"steps_to_full\": ", sh->horizon,
	    sh->projected_bytes, sh->horizon_bytes);
	json_int_or_null(f, sh->steps_to_full, sh->steps_to_full >= 0);
	fputs("}", f);
}
