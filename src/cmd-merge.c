/*
 * cmd-merge.c: vramtrace merge A.db B.db ... -o ALL.db: the databases of
 * the machines of one job, or of several jobs, into one.
 */
#include "config.h"

#include "vramtrace.h"

#include <inttypes.h>
#include <stdlib.h>

#include "cmd.h"
#include "query.h"

static int	cmd_merge_exec(const struct cmd_entry *,
		    const struct cmd_args *);

static const struct cmd_option cmd_merge_options[] = {
	{ .name = "output", .letter = 'o', .flags = CMD_REQUIRED,
	  .kind = CMD_TEXT, .value = "OUT.db",
	  .help = "the database to write (must not exist)" },
	{ .name = "separate", .letter = 's', .kind = CMD_FLAG,
	  .help = "keep every run apart (default: runs of one job, same"
	  " command and overlapping time, become one)" },
	CMD_OPTION_END
};

const struct cmd_entry cmd_merge_entry = {
	.name = "merge",
	.args = "DB...",
	.lower = 1,
	.upper = -1,
	.missing = "missing databases",
	.options = cmd_merge_options,
	.summary = "join databases written on several machines into one",
	.exec = cmd_merge_exec
};

/* Say which run of the file a joined which run, and why. */
static void
cmd_merge_joined(const struct store_merge_join *j, void *arg)
{
	const char	*path = arg;

	if (j->job != NULL)
		printf("%s: run %" PRId64 " joins run %" PRId64 ": both name"
		    " job %s\n", path, j->from, j->into, j->job);
	else
		printf("%s: run %" PRId64 " joins run %" PRId64 ": no job"
		    " named by both, the same command (%s) at overlapping"
		    " times, no rank in both\n", path, j->from, j->into,
		    j->command != NULL ? j->command : FMT_UNKNOWN);
}

static int
cmd_merge_exec(const struct cmd_entry *self, const struct cmd_args *args)
{
	struct query_counts	 info;
	struct store		*s;
	struct query		*q;
	const char		*output = cmd_args_text(args, 'o', NULL);
	char			*cause = NULL;
	int			 i, n, join, joined = 0, rc = EXIT_ERROR;

	(void)self;
	join = !cmd_args_has(args, 's');
	if ((s = store_open(output, STORE_CREATE | STORE_ATOMIC, &cause)) ==
	    NULL)
		goto fail;
	for (i = 0; i < args->argc; i++) {
		if ((n = store_merge(s, args->argv[i], join, cmd_merge_joined,
		    args->argv[i], &cause)) < 0) {
			rc = store_failed(s) ? EXIT_ERROR : EXIT_INPUT;
			store_abort(s);
			goto fail;
		}
		joined += n;
	}
	if (store_merge_finish(s, &cause) != 0) {
		store_abort(s);
		goto fail;
	}
	if (store_close(s, &cause) != 0)
		goto fail;
	if ((q = query_open(output, &cause)) == NULL)
		goto fail;
	if (query_run_counts(q, 0, QUERY_COUNT_RUNS | QUERY_COUNT_PROCESSES |
	    QUERY_COUNT_ALLOCATIONS, &info, &cause) != 0) {
		query_close(q);
		goto fail;
	}
	query_close(q);
	printf("%d files -> %s: %" PRId64 " runs (%d joined to a run of "
	    "another file), %" PRId64 " processes, %" PRId64
	    " allocations\n", args->argc, output, info.runs, joined,
	    info.processes, info.allocations);
	return (EXIT_OK);

fail:
	return (cmd_fail(rc, cause));
}
