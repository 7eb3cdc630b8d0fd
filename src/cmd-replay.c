/*
 * cmd-replay.c: vramtrace replay FILE.vtr -o DB: a spool file into a
 * database, through the same writer the collector uses.
 */
#include "config.h"

#include "vramtrace.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"

static int	cmd_replay_exec(const struct cmd_entry *,
		    const struct cmd_args *);

static const struct cmd_option cmd_replay_options[] = {
	{ .name = "output", .letter = 'o', .flags = CMD_REQUIRED,
	  .kind = CMD_TEXT, .value = "DB", .help = "the database to write" },
	{ .name = "append", .letter = 'a', .kind = CMD_FLAG,
	  .help = "add a run to an existing database" },
	CMD_OPTION_END
};

const struct cmd_entry cmd_replay_entry = {
	.name = "replay",
	.args = "FILE.vtr",
	.lower = 1,
	.upper = 1,
	.missing = "missing spool file",
	.options = cmd_replay_options,
	.summary = "write a spool file of recorded events into a database",
	.exec = cmd_replay_exec
};

/*
 * Feed the file at path through a reader into src.  0, or -1 with *cause
 * naming the file and the offset of what is wrong.
 */
static int
replay_file(const char *path, struct store_source *src, char **cause)
{
	struct event_reader	 r;
	struct event		 ev;
	unsigned char		 buf[65536];
	ssize_t			 n;
	int			 fd, rc = 0, got;

	if ((fd = util_open_input(path, cause)) == -1)
		return (-1);
	event_reader_init(&r, path);
	while (rc == 0 && (n = read(fd, buf, sizeof buf)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			*cause = xstrerror_cause("%s", path);
			rc = -1;
			break;
		}
		if (event_reader_feed(&r, buf, (size_t)n) != 0)
			fatal("out of memory reading %s", path);
		while ((got = event_reader_next(&r, &ev, cause)) == 1) {
			if (store_source_event(src, &ev, cause) != 0) {
				rc = -1;
				break;
			}
		}
		if (got < 0)
			rc = -1;
	}
	if (rc == 0)
		rc = event_reader_finish(&r, cause);
	event_reader_free(&r);
	close(fd);
	return (rc);
}

static int
cmd_replay_exec(const struct cmd_entry *self, const struct cmd_args *args)
{
	struct store_run_info	 info;
	struct store		*s;
	struct store_source	*src;
	const char		*input = args->argv[0];
	const char		*output = cmd_args_text(args, 'o', NULL);
	char			*cause = NULL;
	int			 append = cmd_args_has(args, 'a'), rc;

	(void)self;
	s = store_open(output, (append ? STORE_APPEND : STORE_CREATE) |
	    STORE_ATOMIC, &cause);
	if (s == NULL)
		return (cmd_fail(EXIT_ERROR, cause));
	memset(&info, 0, sizeof info);
	info.source = "replay";
	info.input = input;
	info.step_source = "api";
	if (store_run_begin(s, &info, &cause) != 0) {
		store_abort(s);
		return (cmd_fail(EXIT_ERROR, cause));
	}
	src = store_source_create(s, input);
	if (replay_file(input, src, &cause) != 0 ||
	    store_source_drain(src, &cause) != 0 ||
	    store_run_finish(s, -1, 0, 1, &cause) != 0) {
		rc = store_failed(s) ? EXIT_ERROR : EXIT_INPUT;
		store_source_free(src);
		store_abort(s);
		return (cmd_fail(rc, cause));
	}
	store_source_free(src);
	if (store_close(s, &cause) != 0)
		return (cmd_fail(EXIT_ERROR, cause));
	return (EXIT_OK);
}
