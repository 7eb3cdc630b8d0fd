/*
 * cmd-tui.c: vramtrace tui DB|PICKLE [--live] [--run ID] [--dump VIEW]:
 * browse a run in the terminal, or print one view as text.
 */
#include "config.h"

#include "vramtrace.h"

#include <getopt.h>
#include <stdlib.h>

#include "cmd.h"
#include "tui.h"

static int	cmd_tui_exec(const struct cmd_entry *, int, char **);

const struct cmd_entry cmd_tui_entry = {
	"tui", "DB|PICKLE [--live] [--run ID] [--dump VIEW]",
	"browse runs, streams, steps, blocks and offload in the terminal",
	"  -l, --live         follow a database that record is still writing\n"
	"  -r, --run ID       show run ID (default: the newest)\n"
	"  -d, --dump VIEW    print VIEW as text and exit: overview, streams,\n"
	"                     steps, blocks, offload, diff, or 1-6\n",
	cmd_tui_exec
};

static int
cmd_tui_exec(const struct cmd_entry *self, int argc, char **argv)
{
	static const struct option	 longopts[] = {
		{ "live", no_argument, NULL, 'l' },
		{ "run", required_argument, NULL, 'r' },
		{ "dump", required_argument, NULL, 'd' },
		{ NULL, 0, NULL, 0 }
	};
	const char			*arg, *dump = NULL;
	char				*cause = NULL;
	uint64_t			 run = 0;
	int				 c, live = 0;

	while ((c = cmd_getopt(self, argc, argv, "lr:d:", longopts, NULL,
	    &arg)) != -1) {
		switch (c) {
		case 'l':
			live = 1;
			break;
		case 'r':
			if (lib_parse_uint(arg, &run) != 0 || run == 0 ||
			    run > INT64_MAX)
				return (cmd_usage_error(self,
				    "--run wants a run id, not %s", arg));
			break;
		case 'd':
			dump = arg;
			break;
		default:
			return (EXIT_USAGE);
		}
	}
	if (optind != argc - 1)
		return (cmd_usage_error(self, optind >= argc ?
		    "missing database" : "too many arguments"));
	if (dump != NULL && live)
		return (cmd_usage_error(self, "--dump and --live do not mix"));
	if (dump != NULL && tui_frame_find_view(dump) < 0)
		return (cmd_usage_error(self, "unknown view %s (overview,"
		    " streams, steps, blocks, offload, diff or 1-6)", dump));
	if (dump != NULL) {
		if (tui_dump(argv[optind], (int64_t)run, dump, stdout,
		    &cause) != 0)
			return (cmd_fail(cause));
		return (EXIT_OK);
	}
	if (!util_isatty_out())
		return (cmd_usage_error(self, "standard output is not a"
		    " terminal (--dump VIEW prints a view as text)"));
	return (tui_main(argv[optind], (int64_t)run, live));
}
