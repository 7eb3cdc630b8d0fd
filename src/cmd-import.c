/*
 * cmd-import.c: vramtrace import SNAPSHOT.pickle [-o OUT.db]: a PyTorch
 * memory snapshot into a database.
 */
#include "config.h"

#include "import.h"
#include "unwrap.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd.h"

static int	cmd_import_exec(const struct cmd_entry *,
		    const struct cmd_args *);

static const struct cmd_option cmd_import_options[] = {
	{ .name = "output", .letter = 'o', .kind = CMD_TEXT, .value = "OUT.db",
	  .help = "the database (default: the input name with .db)" },
	{ .name = "append", .letter = 'a', .kind = CMD_FLAG,
	  .help = "add a run to an existing database" },
	{ .name = "step-marker", .letter = 'm', .kind = CMD_TEXT,
	  .value = "REGEX", .help = "END annotations whose name matches REGEX"
	  " close a step (default ^Optimizer\\.step)" },
	{ .name = "step-every", .letter = 'e', .kind = CMD_NUMBER,
	  .value = "MS", .min = 1, .max = 86400000,
	  .help = "without such annotations, cut steps every MS ms" },
	CMD_OPTION_END
};

const struct cmd_entry cmd_import_entry = {
	.name = "import",
	.args = "SNAPSHOT.pickle",
	.lower = 1,
	.upper = 1,
	.missing = "missing snapshot",
	.options = cmd_import_options,
	.summary = "read a PyTorch memory snapshot into a database",
	.exec = cmd_import_exec
};

/* Snapshots over this size show progress on a terminal. */
#define PROGRESS_BYTES	(100u << 20)

/*
 * The length of path without suffix (one of the NULL-terminated list) when
 * its base name ends in one, else its length.
 */
static size_t
strip_suffix(const char *path, size_t len, const char *const *suffix)
{
	const char	*slash = strrchr(path, '/');
	size_t		 base = slash != NULL ? (size_t)(slash + 1 - path) : 0, n;

	for (; *suffix != NULL; suffix++) {
		n = strlen(*suffix);
		if (len - base > n && strncmp(path + len - n, *suffix, n) == 0)
			return (len - n);
	}
	return (len);
}

/*
 * The default output for a snapshot: its name with the .pickle, .pkl, .pt
 * or .pth suffix (each also followed by .gz, .xz or .zst) replaced by .db,
 * or .db appended.  The caller frees it.
 */
static char *
default_output(const char *path)
{
	static const char *const packed[] = { ".gz", ".xz", ".zst", NULL };
	static const char *const pickle[] = { ".pickle", ".pkl", ".pt",
	    ".pth", NULL };
	size_t	 len = strlen(path), inner, cut;
	char	*out;

	inner = strip_suffix(path, len, packed);
	cut = strip_suffix(path, inner, pickle);
	/* No pickle's suffix: the name stays whole. */
	xasprintf(&out, "%.*s.db", (int)(cut < inner ? cut : len), path);
	return (out);
}

static int
cmd_import_exec(const struct cmd_entry *self, const struct cmd_args *args)
{
	struct import_options	 opt;
	struct import_summary	 sum;
	struct stat		 sb;
	const char		*input = args->argv[0], *output;
	char			*cause = NULL, *def = NULL;
	int			 rc;

	(void)self;
	memset(&opt, 0, sizeof opt);
	opt.append = cmd_args_has(args, 'a');
	opt.step_marker = cmd_args_text(args, 'm', NULL);
	opt.step_every_ns = cmd_args_number(args, 'e', 0) * 1000000;
	if ((output = cmd_args_text(args, 'o', NULL)) == NULL) {
		if (strcmp(input, "-") == 0)
			return (cmd_fail(EXIT_USAGE, xstrdup("import: standard"
			    " input has no name to make the output's from:"
			    " give --output")));
		output = def = default_output(input);
	}
	opt.progress = util_isatty_err() && stat(input, &sb) == 0 &&
	    S_ISREG(sb.st_mode) && sb.st_size > PROGRESS_BYTES;
	rc = import_snapshot(input, output, &opt, &sum, &cause);
	if (rc != 0) {
		free(def);
		return (cmd_fail(rc == IMPORT_FAIL_OUTPUT ? EXIT_ERROR :
		    EXIT_INPUT, cause));
	}
	printf("%s: %" PRId64 " segments, %" PRId64 " blocks, %" PRId64
	    " trace entries, %" PRId64 " steps -> %s\n", unwrap_label(input),
	    sum.segments, sum.blocks, sum.trace_entries, sum.steps, output);
	if (sum.retimed > 0)
		printf("trace entries timed before the entry before them, given"
		    " its time: %" PRId64 "\n", sum.retimed);
	if (strcmp(sum.step_source, "time") == 0)
		printf("no step annotations: steps are fixed windows of "
		    "--step-every\n");
	else if (sum.steps == 0)
		printf("no step annotations: leak verdicts need --step-marker "
		    "or --step-every\n");
	free(def);
	return (EXIT_OK);
}
