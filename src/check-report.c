/*
 * check-report.c: the offload check of a run (query_check) in words and in
 * JSON, the same for vramtrace leaks, vramtrace report and the TUI.  The
 * summary line is the one the checker prints at exit in the traced
 * process (python/vramtrace/_check.py, Ledger.summary).
 */
#include "config.h"

#include "vramtrace.h"

#include <inttypes.h>
#include <stdio.h>

#include "query.h"

/* What each EVENT_CHECK_* bit means, in bit order. */
static const char *const check_bit_names[] = {
	"shape", "dtype", "device", "contents", "not_tensor", "strides"
};
#define CHECK_BITS (sizeof check_bit_names / sizeof check_bit_names[0])
_Static_assert(EVENT_CHECK_ALL == (1u << CHECK_BITS) - 1 &&
    EVENT_CHECK_CONTENTS == 1u << 3 && EVENT_CHECK_STRIDES == 1u << 5,
    "a name for every difference bit, in bit order");

/*
 * The summary line of c into buf: "offload check: N of M saved tensors
 * came back different (first at step S, packed at FILE:LINE by CLASS)",
 * without the part in brackets when none did.  Returns buf.
 */
const char *
check_report_summary(const struct query_check *c, char *buf, size_t len)
{
	const struct query_check_diff	*d = c->nfirst > 0 ? &c->first[0] :
					    NULL;
	int				 n;

	n = snprintf(buf, len, "offload check: %" PRId64 " of %" PRId64
	    " saved tensors came back different", c->diffs, c->checked);
	if (d != NULL && n >= 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, " (first at step %" PRId64
		    ", packed at %s by %s)", d->step, fmt_text(d->where != NULL ?
		    d->where : d->pack_site), fmt_text(d->engine));
	return (buf);
}

/* One line per difference of c (the first ones), each with what differs. */
static void
check_report_diffs(FILE *f, const struct query_check *c)
{
	const struct query_check_diff	*d;
	char				 b[FMT_LEN];
	size_t				 i;

	for (i = 0; i < c->nfirst; i++) {
		d = &c->first[i];
		fprintf(f, "  step %" PRId64 " #%" PRId64 " %s %s %s %s:"
		    " %s\n    packed at %s, unpacked at %s\n", d->step,
		    d->index, fmt_text(d->engine), fmt_text(d->shape),
		    fmt_text(d->dtype), fmt_bytes(d->bytes, b, sizeof b),
		    fmt_text(d->detail), fmt_text(d->where != NULL ?
		    d->where : d->pack_site), fmt_text(d->unpack_site));
	}
	if ((int64_t)c->nfirst < c->diffs)
		fprintf(f, "  ... and %" PRId64 " more (vramtrace sql: SELECT *"
		    " FROM offload_check_diffs)\n", c->diffs -
		    (int64_t)c->nfirst);
}

/*
 * Print the offload check of c to f, prefixed by `prefix`: the summary
 * line, what the engines did, and the first differences.  Nothing when
 * the run was not checked.
 */
void
check_report_text(FILE *f, const char *prefix, const struct query_check *c)
{
	char	line[512], a[FMT_LEN], b[FMT_LEN];

	if (!c->checked_run)
		return;
	fprintf(f, "%s%s\n", prefix, check_report_summary(c, line,
	    sizeof line));
	fprintf(f, "  %" PRId64 " engine%s, %" PRId64 " step%s: %" PRId64
	    " packs (%s), %" PRId64 " unpacks, %s came back in other"
	    " memory\n", c->engines, c->engines == 1 ? "" : "s", c->steps,
	    c->steps == 1 ? "" : "s", c->packs, fmt_bytes(c->packed_bytes, a, sizeof a), c->unpacks,
	    fmt_bytes(c->moved_bytes, b, sizeof b));
	check_report_diffs(f, c);
}

/* The names of the bits of differs as a JSON array. */
static void
check_report_bits(FILE *f, unsigned int differs)
{
	size_t	i;
	int	n = 0;

	fputc('[', f);
	for (i = 0; i < CHECK_BITS; i++) {
		if (differs & (1u << i))
			fprintf(f, "%s\"%s\"", n++ ? ", " : "",
			    check_bit_names[i]);
	}
	fputc(']', f);
}

/*
 * Print the offload check of c to f as the value of a JSON key: null when
 * the run was not checked, else an object with the totals and "first",
 * the first differences.
 */
void
check_report_json(FILE *f, const struct query_check *c)
{
	const struct query_check_diff	*d;
	size_t				 i;

	if (!c->checked_run) {
		fputs("null", f);
		return;
	}
	fprintf(f, "{\"checked\": %" PRId64 ", \"different\": %" PRId64
	    ", \"steps\": %" PRId64 ", \"engines\": %" PRId64 ", \"packs\": %"
	    PRId64 ", \"unpacks\": %" PRId64 ", \"packed_bytes\": %" PRId64
	    ", \"moved_bytes\": %" PRId64 ", \"first\": [", c->checked,
	    c->diffs, c->steps, c->engines, c->packs, c->unpacks,
	    c->packed_bytes, c->moved_bytes);
	for (i = 0; i < c->nfirst; i++) {
		d = &c->first[i];
		fprintf(f, "%s\n  {\"step\": %" PRId64 ", \"index\": %" PRId64
		    ", \"engine\": ", i ? "," : "", d->step, d->index);
		json_string(f, d->engine);
		fputs(", \"shape\": ", f);
		json_string(f, d->shape);
		fputs(", \"dtype\": ", f);
		json_string(f, d->dtype);
		fprintf(f, ", \"bytes\": %" PRId64 ", \"device\": %d,"
		    " \"differs\": ", d->bytes, d->device);
		check_report_bits(f, d->differs);
		fputs(", \"detail\": ", f);
		json_string(f, d->detail);
		fputs(", \"where\": ", f);
		json_string(f, d->where);
		fputs(", \"pack_site\": ", f);
		json_string(f, d->pack_site);
		fputs(", \"unpack_site\": ", f);
		json_string(f, d->unpack_site);
		fputc('}', f);
	}
	fputs("]}", f);
}
