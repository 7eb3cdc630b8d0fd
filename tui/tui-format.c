/*
 * tui-format.c: numbers, times and names as the views show them.  Each
 * function writes into the caller's buffer and returns it; unknown values
 * are "n/a", never 0.
 */
#include "config.h"

#include "tui.h"

#include <inttypes.h>
#include <stdio.h>

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
