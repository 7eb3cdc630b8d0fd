/*
 * cmd-import.c: vramtrace import SNAPSHOT.pickle [-o OUT.db]: a PyTorch
 * memory snapshot into a database.
 */
#include "config.h"

#include "import.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd.h"

static int	cmd_import_exec(const struct cmd_entry *, int, char **);

const struct cmd_entry cmd_import_entry = {
	"import", "SNAPSHOT.pickle [-o OUT.db] [--append] [--step-marker RE]"
	" [--step-every MS]",
	"read a PyTorch memory snapshot into a database",
	"  -o, --output DB        the database (default: the input name with"
	" .db)\n"
	"  -a, --append           add a run to an existing database\n"
	"  -m, --step-marker RE   END annotations whose name matches RE close"
	" a step\n"
	"                         (default ^Optimizer\\.step)\n"
	"  -e, --step-every MS    without such annotations, cut steps every MS"
	" ms\n",
	cmd_import_exec
};

/* Snapshots over this size show progress on a terminal. */
#define PROGRESS_BYTES	(100u << 20)

/*
 * The default output for a snapshot: its name with the .pickle (or .pkl)
 * suffix replaced by .db, or .db appended.  The caller frees it.
 */
static char *
default_output(const char *path)
{
	const char	*dot = strrchr(path, '.'), *slash = strrchr(path, '/');
	char		*out;

	if (dot != NULL && (slash == NULL || dot > slash) &&
	    (strcmp(dot, ".pickle") == 0 || strcmp(dot, ".pkl") == 0))
		xasprintf(&out, "%.*s.db", (int)(dot - path), path);
	else
		xasprintf(&out, "%s.db", path);
	return (out);
}

static int
cmd_import_exec(const struct cmd_entry *self, int argc, char **argv)
{
	static const struct option	 longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "append", no_argument, NULL, 'a' },
		{ "step-marker", required_argument, NULL, 'm' },
		{ "step-every", required_argument, NULL, 'e' },
		{ NULL, 0, NULL, 0 }
	};
	struct import_options		 opt;
	struct import_summary		 sum;
	struct stat			 sb;
	const char			*arg, *output = NULL;
	char				*cause = NULL, *def = NULL;
	uint64_t			 ms;
	int				 c, rc;

	memset(&opt, 0, sizeof opt);
	while ((c = cmd_getopt(self, argc, argv, "o:am:e:", longopts, NULL,
	    &arg)) != -1) {
		switch (c) {
		case 'o':
			output = arg;
			break;
		case 'a':
			opt.append = 1;
			break;
		case 'm':
			opt.step_marker = arg;
			break;
		case 'e':
			if (lib_parse_uint(arg, &ms) != 0 || ms == 0)
				return (cmd_usage_error(self, "--step-every "
				    "needs a number of milliseconds, not %s",
				    arg));
			opt.step_every_ns = ms * 1000000;
			break;
		default:
			return (EXIT_USAGE);
		}
	}
	if (optind != argc - 1)
		return (cmd_usage_error(self, optind >= argc ?
		    "missing snapshot" : "too many arguments"));
	if (output == NULL)
		output = def = default_output(argv[optind]);
	opt.progress = util_isatty_err() && stat(argv[optind], &sb) == 0 &&
	    sb.st_size > PROGRESS_BYTES;
	rc = import_snapshot(argv[optind], output, &opt, &sum, &cause);
	if (rc != 0) {
		free(def);
		return (cmd_fail(cause));
	}
	printf("%s: %" PRId64 " segments, %" PRId64 " blocks, %" PRId64
	    " trace entries, %" PRId64 " steps -> %s\n", argv[optind],
	    sum.segments, sum.blocks, sum.trace_entries, sum.steps, output);
	if (strcmp(sum.step_source, "time") == 0)
		printf("no step annotations: steps are fixed windows of "
		    "--step-every\n");
	else if (sum.steps == 0)
		printf("no step annotations: leak verdicts need --step-marker "
		    "or --step-every\n");
	free(def);
	return (EXIT_OK);
}
