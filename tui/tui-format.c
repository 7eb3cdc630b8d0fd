/*
 * tui-format.c: what only the TUI prints: a layer filter, which may be
 * "all", and the offload check's line as two views draw it.  Numbers,
 * streams and times print through fmt.c, as in the commands.
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

/*
 * Draw the offload check's summary line of check (check-report.c) at row
 * y, column x: bad when saved tensors came back different, good when
 * none did.  Returns the next row: y + 1, or y when the run was not
 * checked (nothing drawn).
 */
int
tui_format_check(struct tui_canvas *c, int y, int x,
    const struct query_check *check)
{
	char	line[512];

	if (!check->checked_run)
		return (y);
	tui_canvas_put(c, y, x, -1, check->diffs > 0 ? TUI_A_BAD :
	    TUI_A_GOOD, check_report_summary(check, line, sizeof line));
	return (y + 1);
}
