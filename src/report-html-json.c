/*
 * report-html-json.c: JSON values written inside an HTML page's
 * <script type="application/json"> element, for report-html.c.
 *
 * JSON in a page needs more than json.c gives: "</script>" or "<!--" in a
 * file name would end the element early, so '<', '>' and '&' are written
 * as \u escapes, and the page is UTF-8, so a byte that is not part of
 * valid UTF-8 (file names are bytes) becomes U+FFFD rather than making the
 * text invalid.  U+2028 and U+2029 are escaped for older parsers.
 */
#include "config.h"

#include "vramtrace.h"
#include "report.h"

#include <inttypes.h>

#include "unknown.h"

/* Write v, or null when it is unknown (-1, for values never negative). */
void
report_html_json_count(FILE *f, int64_t v)
{
	if (v < 0)
		fputs("null", f);
	else
		fprintf(f, "%" PRId64, v);
}

/* Write n values as an array; NULL as null. */
void
report_html_json_array(FILE *f, const int64_t *v, size_t n)
{
	size_t	i;

	if (v == NULL) {
		fputs("null", f);
		return;
	}
	fputc('[', f);
	for (i = 0; i < n; i++)
		fprintf(f, "%s%" PRId64, i > 0 ? "," : "", v[i]);
	fputc(']', f);
}
