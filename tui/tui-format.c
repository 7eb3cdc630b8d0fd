/*
 * tui-format.c: what only the TUI prints: a layer filter, which may be
 * "all".  Numbers, streams and times print through fmt.c, as in the
 * commands.
 */
#include "config.h"

#include "tui.h"

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
