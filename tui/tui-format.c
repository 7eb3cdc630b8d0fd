/*
 * tui-format.c: numbers, times and names as the views show them.  Each
 * function writes into the caller's buffer and returns it; unknown values
 * are "n/a", never 0.
 */
#include "config.h"

#include "tui.h"

#include <inttypes.h>
#include <stdio.h>

/* A change of bytes with its sign: "+112.0 MiB", "-4.0 KiB", "0 B". */
const char *
tui_format_delta(int64_t bytes, char *buf, size_t len)
{
	char	tmp[32];

	util_format_bytes(bytes, tmp, sizeof tmp);
	snprintf(buf, len, "%s%s", bytes > 0 ? "+" : "", tmp);
	return (buf);
}

/*
 * A time in ns since the epoch as seconds after start ("+12.345s"); 0 is
 * unknown ("n/a").
 */
const char *
tui_format_time(uint64_t ns, uint64_t start, char *buf, size_t len)
{
	if (ns == 0 || ns == EVENT_NONE)
		snprintf(buf, len, "n/a");
	else if (start == 0 || ns < start)
		snprintf(buf, len, "%.3fs", (double)ns / 1e9);
	else
		snprintf(buf, len, "+%.3fs", (double)(ns - start) / 1e9);
	return (buf);
}

/*
 * A stream as recorded: small ids in decimal, handles (a cudaStream_t in
 * a snapshot) in hex; EVENT_NONE is "n/a".
 */
const char *
tui_format_stream(uint64_t stream, char *buf, size_t len)
{
	if (stream == EVENT_NONE)
		snprintf(buf, len, "n/a");
	else if (stream < 1000000)
		snprintf(buf, len, "%" PRIu64, stream);
	else
		snprintf(buf, len, "0x%" PRIx64, stream);
	return (buf);
}

/* A layer's name, "all" for -1. */
const char *
tui_format_layer(int layer)
{
	const char	*name;

	if (layer < 0)
		return ("all");
	name = event_layer_name((unsigned int)layer);
	return (name != NULL ? name : "?");
}
