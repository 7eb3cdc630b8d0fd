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

/* Write s as a JSON string that is safe in a page; NULL as null. */
void
report_html_json_string(FILE *f, const char *s)
{
	const unsigned char	*p;
	size_t			 n;

	if (s == NULL) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	for (p = (const unsigned char *)s; *p != '\0'; p += n) {
		if ((n = json_utf8_length(p)) == 0) {
			fputs("\\ufffd", f);
			n = 1;
		} else if (n == 3 && p[0] == 0xe2 && p[1] == 0x80 &&
		    (p[2] == 0xa8 || p[2] == 0xa9))
			fprintf(f, "\\u%04x", 0x2000 | (p[2] - 0x80));
		else if (n > 1)
			fwrite(p, 1, n, f);
		else if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20 || *p == '<' || *p == '>' || *p == '&')
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

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
