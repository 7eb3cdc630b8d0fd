/*
 * fmt.c: how numbers print for people, in the commands' text and in the
 * TUI alike: bytes, signed changes of bytes, streams, times, durations,
 * dates and percentages.
 *
 * Every function writes into the caller's buffer (FMT_LEN bytes are
 * always enough) and returns it, so that calls nest in one printf.  A
 * value that is not known (unknown.h) prints as FMT_UNKNOWN, "n/a", never
 * as 0; JSON prints it as null (json.c).
 *
 * Text that came from an input file (a frame name, a command line, a
 * host) passes through fmt_safe() before it reaches a terminal, so that a
 * file cannot move the cursor, set the title, clear the screen or forge a
 * line: control characters, escape sequences, line breaks, bidirectional
 * overrides and bytes that are not UTF-8 print as visible escapes.  Its
 * results, which have no bound on length, live in a small ring instead of
 * the caller's buffer.
 */
#include "config.h"

#include "vramtrace.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "escape.h"
#include "unknown.h"

/*
 * A byte count with a binary unit: "311.0 MiB", "-4.0 KiB", "512 B".
 * Negative counts keep their sign.
 */
const char *
fmt_bytes(int64_t bytes, char *buf, size_t len)
{
	static const char	*units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double			 v = fabs((double)bytes);
	unsigned int		 u = 0;

	while (v >= 1024.0 && u < 4) {
		v /= 1024.0;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%" PRId64 " B", bytes);
	else
		snprintf(buf, len, "%s%.1f %s", bytes < 0 ? "-" : "", v,
		    units[u]);
	return (buf);
}

/* A size that may be unknown (-1): fmt_bytes, or "n/a". */
const char *
fmt_size(int64_t bytes, char *buf, size_t len)
{
	if (bytes < 0) {
		snprintf(buf, len, FMT_UNKNOWN);
		return (buf);
	}
	return (fmt_bytes(bytes, buf, len));
}

/*
 * A change of bytes with its sign, always shown: "+10.0 MiB", "-4 B",
 * "+0 B".  A fractional rate (bytes per step) is cut towards zero.
 */
const char *
fmt_delta(double bytes, char *buf, size_t len)
{
	int64_t	v = (int64_t)bytes;

	if (v < 0)
		return (fmt_bytes(v, buf, len));
	buf[0] = '+';
	fmt_bytes(v, buf + 1, len - 1);
	return (buf);
}

/*
 * A stream as the data holds it, in decimal: CUPTI's stream id in a
 * recording, the cudaStream_t handle in an imported snapshot (see
 * vramtrace(1), STREAMS).  UNKNOWN_U64 is "n/a".
 */
const char *
fmt_stream(uint64_t stream, char *buf, size_t len)
{
	if (stream == UNKNOWN_U64)
		snprintf(buf, len, FMT_UNKNOWN);
	else
		snprintf(buf, len, "%" PRIu64, stream);
	return (buf);
}

/*
 * A stream with its cudaStream_t handle when known (a recording's), in hex
 * as PyTorch prints it: "13 (0x55d0c0a1b2c0)"; else as fmt_stream.
 */
const char *
fmt_stream_handle(uint64_t stream, uint64_t handle, char *buf, size_t len)
{
	if (stream == UNKNOWN_U64 || handle == UNKNOWN_U64)
		return (fmt_stream(stream, buf, len));
	snprintf(buf, len, "%" PRIu64 " (0x%" PRIx64 ")", stream, handle);
	return (buf);
}

/*
 * Is a time in ns unknown?  UNKNOWN_U64 is; so is 0, which no clock this
 * program reads gives, and which some structs still use for unknown.
 */
static int
fmt_time_unknown(uint64_t ns)
{
	return (ns == UNKNOWN_U64 || ns == 0);
}

/*
 * A time in ns since the epoch as seconds after start: "+12.345s"; the
 * time itself ("1.500s") when start is unknown or later.  "n/a" when ns
 * is unknown.
 */
const char *
fmt_offset(uint64_t ns, uint64_t start, char *buf, size_t len)
{
	if (fmt_time_unknown(ns))
		snprintf(buf, len, FMT_UNKNOWN);
	else if (fmt_time_unknown(start) || ns < start)
		snprintf(buf, len, "%.3fs", (double)ns / 1e9);
	else
		snprintf(buf, len, "+%.3fs", (double)(ns - start) / 1e9);
	return (buf);
}

/*
 * The time from start to end in seconds: "12.345s"; "n/a" when either is
 * unknown or end is not after start.
 */
const char *
fmt_duration(uint64_t start, uint64_t end, char *buf, size_t len)
{
	if (fmt_time_unknown(start) || fmt_time_unknown(end) || end <= start)
		snprintf(buf, len, FMT_UNKNOWN);
	else
		snprintf(buf, len, "%.3fs", (double)(end - start) / 1e9);
	return (buf);
}

/* A time in ns since the epoch as a UTC date: "2026-11-21 09:30:00". */
const char *
fmt_date(uint64_t ns, char *buf, size_t len)
{
	time_t		t = (time_t)(ns / 1000000000);
	struct tm	tm;

	if (fmt_time_unknown(ns) || gmtime_r(&t, &tm) == NULL ||
	    strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm) == 0)
		snprintf(buf, len, FMT_UNKNOWN);
	return (buf);
}

/* A fraction as a whole percentage, halves up: 0.125 is "13%"; NaN "n/a". */
const char *
fmt_percent(double fraction, char *buf, size_t len)
{
	if (isnan(fraction))
		snprintf(buf, len, FMT_UNKNOWN);
	else
		snprintf(buf, len, "%.0f%%", floor(fraction * 100 + 0.5));
	return (buf);
}

/* A count, pid or rank that is never negative when known; -1 is "n/a". */
const char *
fmt_int(int64_t v, char *buf, size_t len)
{
	if (v < 0)
		snprintf(buf, len, FMT_UNKNOWN);
	else
		snprintf(buf, len, "%" PRId64, v);
	return (buf);
}

/* Escaped strings kept for the callers of fmt_safe(); see there. */
#define FMT_SAFE_RING	16
static char	*fmt_safe_ring[FMT_SAFE_RING];
static size_t	 fmt_safe_next;

/*
 * s as it may reach a terminal: s itself when all of it prints as itself,
 * else a copy (escape.c) where a tab, a line feed and a carriage return are "\t",
 * "\n" and "\r", another control character or a byte that is not UTF-8
 * is "\xNN", and a C1 control, a line or paragraph separator or a
 * bidirectional control is "\uNNNN".  NULL stays NULL.  A copy lives
 * until FMT_SAFE_RING later calls have made theirs, so that one printf may
 * hold that many.  For text, CSV and the TUI; JSON escapes by its own
 * rules (json.c).
 */
const char *
fmt_safe(const char *s)
{
	char	*out;

	if (s == NULL || escape_needed(s) == 0)
		return (s);
	/* A byte grows to 4 at most ("\xNN"; "\uNNNN" takes 2 or 3). */
	out = xreallocarray(NULL, strlen(s) + 1, 4);
	escape_copy(out, s);
	free(fmt_safe_ring[fmt_safe_next]);
	fmt_safe_ring[fmt_safe_next] = out;
	fmt_safe_next = (fmt_safe_next + 1) % FMT_SAFE_RING;
	return (out);
}

/*
 * A string as fmt_safe() makes it, or "n/a" for NULL (and for "", which
 * some structs still use).
 */
const char *
fmt_text(const char *s)
{
	return (s != NULL && *s != '\0' ? fmt_safe(s) : FMT_UNKNOWN);
}
