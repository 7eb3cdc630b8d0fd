/*
 * tui-format.c: numbers, times and names as the views show them.  Each
 * function writes into the caller's buffer and returns it; unknown values
 * are "n/a", never 0.
 */
#include "config.h"

#include "tui.h"

#include <inttypes.h>
#include <stdio.h>

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
