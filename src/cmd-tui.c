/*
 * cmd-tui.c: vramtrace tui DB|PICKLE [--live] [--run ID] [--dump VIEW]:
 * browse a run in the terminal, or print one view as text.
 */
#include "config.h"

#include "vramtrace.h"

#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "tui.h"

static int	cmd_tui_exec(const struct cmd_entry *,
		    const struct cmd_args *);

static const struct cmd_option cmd_tui_options[] = {
	{ .name = "live", .letter = 'l', .kind = CMD_FLAG,
	  .help = "follow a database that record is still writing" },
	CMD_OPTION_RUN("show run ID (default: the newest)"),
	{ .name = "dump", .letter = 'd', .kind = CMD_TEXT, .value = "VIEW",
	  .help = "print VIEW as text and exit: overview, streams, steps,"
	  " blocks, offload, diff, segments, or 1-7" },
	CMD_OPTION_END
};

const struct cmd_entry cmd_tui_entry = {
	.name = "tui",
	CMD_ARGS_DB,
	.options = cmd_tui_options,
	.summary = "browse runs, streams, steps, blocks, offload and"
	    " segments in the terminal",
	.exec = cmd_tui_exec
};

static int
cmd_tui_exec(const struct cmd_entry *self, const struct cmd_args *args)
{
	const char	*path = args->argv[0];
	const char	*dump = cmd_args_text(args, 'd', NULL);
	char		*cause = NULL;
	int64_t		 run = (int64_t)cmd_args_number(args, 'r', 0);
	int		 live = cmd_args_has(args, 'l');

	if (dump != NULL && live)
		return (cmd_usage_error(self, "--dump and --live do not mix"));
	if (dump != NULL && tui_frame_find_view(dump) < 0)
		return (cmd_usage_error(self, "unknown view %s (overview,"
		    " streams, steps, blocks, offload, diff, segments or 1-7)",
		    dump));
	if (dump != NULL) {
		if (tui_dump(path, run, dump, stdout, &cause) != 0)
			return (cmd_fail(EXIT_INPUT, cause));
		return (EXIT_OK);
	}
	if (!util_isatty_out())
		return (cmd_usage_error(self, "standard output is not a"
		    " terminal (--dump VIEW prints a view as text)"));
	if (strcmp(path, "-") == 0)
		return (cmd_usage_error(self, "the keys come from standard"
		    " input: give the snapshot as a file or a FIFO"));
	return (tui_main(path, run, live));
}
