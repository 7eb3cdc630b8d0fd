/*
 * cmd-replay.c: vramtrace replay FILE.vtr -o DB: a spool file into a
 * database, through the same writer the collector uses.
 */
#include "config.h"

#include "vramtrace.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"

static int	cmd_replay_exec(const struct cmd_entry *, int, char **);

const struct cmd_entry cmd_replay_entry = {
	"replay", "FILE.vtr -o DB [--append]",
	"write a spool file of recorded events into a database",
	"  -o, --output DB    the database to write (required)\n"
	"  -a, --append       add a run to an existing database\n",
	cmd_replay_exec
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

	if ((fd = open(path, O_RDONLY)) == -1) {
		*cause = xstrerror_cause("%s", path);
		return (-1);
	}
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
cmd_replay_exec(const struct cmd_entry *self, int argc, char **argv)
{
	static const struct option	 longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "append", no_argument, NULL, 'a' },
		{ NULL, 0, NULL, 0 }
	};
	struct store_run_info		 info;
	struct store			*s;
	struct store_source		*src;
	const char			*arg, *output = NULL;
	char				*cause = NULL;
	int				 c, append = 0;

	while ((c = cmd_getopt(self, argc, argv, "o:a", longopts, NULL,
	    &arg)) != -1) {
		switch (c) {
		case 'o':
			output = arg;
			break;
		case 'a':
			append = 1;
			break;
		default:
			return (EXIT_USAGE);
		}
	}
	if (optind != argc - 1)
		return (cmd_usage_error(self, optind >= argc ?
		    "missing spool file" : "too many arguments"));
	if (output == NULL)
		return (cmd_usage_error(self, "missing -o DB"));
	s = store_open(output, append ? STORE_APPEND : STORE_CREATE |
	    STORE_ATOMIC, &cause);
	if (s == NULL)
		return (cmd_fail(cause));
	memset(&info, 0, sizeof info);
	info.source = "replay";
	info.input = argv[optind];
	info.step_source = "api";
	if (store_run_begin(s, &info) < 0) {
		log_warn("%s: cannot start a run", output);
		store_abort(s);
		return (EXIT_FOUND);
	}
	src = store_source_create(s, argv[optind]);
	if (replay_file(argv[optind], src, &cause) != 0 ||
	    store_source_drain(src, &cause) != 0 ||
	    store_run_finish(s, -1, 0, &cause) != 0) {
		store_source_free(src);
		store_abort(s);
		return (cmd_fail(cause));
	}
	store_source_free(src);
	if (store_close(s, &cause) != 0)
		return (cmd_fail(cause));
	return (EXIT_OK);
}
