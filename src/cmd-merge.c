/*
 * cmd-merge.c: vramtrace merge A.db B.db ... -o ALL.db: the databases of
 * the machines of one job, or of several jobs, into one.
 */
#include "config.h"

#include "vramtrace.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>

#include "cmd.h"

static int	cmd_merge_exec(const struct cmd_entry *, int, char **);

const struct cmd_entry cmd_merge_entry = {
	"merge", "DB... -o OUT.db [--separate]",
	"join databases written on several machines into one",
	"  -o, --output DB    the database to write (must not exist)\n"
	"  -s, --separate     keep every run apart (default: runs of one job,"
	"\n                     same command and overlapping time, become"
	" one)\n",
	cmd_merge_exec
};

static int
cmd_merge_exec(const struct cmd_entry *self, int argc, char **argv)
{
	static const struct option	 longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "separate", no_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 }
	};
	struct query_info		 info;
	struct store			*s;
	struct query			*q;
	const char			*arg, *output = NULL;
	char				*cause = NULL;
	int				 c, i, n, join = 1, joined = 0;

	while ((c = cmd_getopt(self, argc, argv, "o:s", longopts, NULL,
	    &arg)) != -1) {
		switch (c) {
		case 'o':
			output = arg;
			break;
		case 's':
			join = 0;
			break;
		default:
			return (EXIT_USAGE);
		}
	}
	if (optind >= argc)
		return (cmd_usage_error(self, "missing databases"));
	if (output == NULL)
		return (cmd_usage_error(self, "missing -o OUT.db"));
	if ((s = store_open(output, STORE_CREATE | STORE_ATOMIC, &cause)) ==
	    NULL)
		goto fail;
	for (i = optind; i < argc; i++) {
		if ((n = store_merge(s, argv[i], join, &cause)) < 0) {
			store_abort(s);
			goto fail;
		}
		joined += n;
	}
	if (store_exec(s, store_index_sql, &cause) != 0) {
		store_abort(s);
		goto fail;
	}
	if (store_close(s, &cause) != 0)
		goto fail;
	if ((q = query_open(output, &cause)) == NULL)
		goto fail;
	if (query_info(q, 0, &info, &cause) != 0) {
		query_close(q);
		goto fail;
	}
	query_close(q);
	printf("%d files -> %s: %" PRId64 " runs (%d joined to a run of "
	    "another file), %" PRId64 " processes, %" PRId64
	    " allocations\n", argc - optind, output, info.runs, joined,
	    info.processes, info.allocations);
	return (EXIT_OK);

fail:
	return (cmd_fail(cause));
}
