/*
 * cmd-attach.c: vramtrace attach PID: sample the device memory of a process
 * that was started without vramtrace, through NVML, into a run of its own.
 *
 * NVML tells how much memory a process holds on each device and nothing
 * else, so such a run has usage_samples and time-cut steps but no
 * allocations, streams or stacks; the leak analysis reads the samples.
 */
#include "config.h"

#include "vramtrace.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"

static int	cmd_attach_exec(const struct cmd_entry *,
		    const struct cmd_args *);

/* The longest interval, step or duration: a day in ms. */
#define ATTACH_MAX	86400000

static const struct cmd_option cmd_attach_options[] = {
	{ .name = "output", .letter = 'o', .kind = CMD_TEXT, .value = "DB",
	  .help = "the database (default attach-PID.db)" },
	{ .name = "append", .letter = 'a', .kind = CMD_FLAG,
	  .help = "add a run to an existing database" },
	{ .name = "interval", .letter = 'i', .kind = CMD_NUMBER, .value = "MS",
	  .min = 1, .max = ATTACH_MAX, .help = "sample every MS ms (100)" },
	{ .name = "step-ms", .letter = 's', .kind = CMD_NUMBER, .value = "MS",
	  .min = 1, .max = ATTACH_MAX, .help = "a step is MS ms (1000)" },
	{ .name = "duration", .letter = 'd', .kind = CMD_NUMBER, .value = "S",
	  .min = 1, .max = ATTACH_MAX, .help = "stop after S seconds (default:"
	  " when the process ends; SIGINT stops it too, and the run is kept)" },
	CMD_OPTION_END
};

const struct cmd_entry cmd_attach_entry = {
	.name = "attach",
	.args = "PID",
	.lower = 1,
	.upper = 1,
	.missing = "missing PID",
	.options = cmd_attach_options,
	.summary = "sample a running process's GPU memory through NVML",
	.exec = cmd_attach_exec
};

struct attach_options {
	const char	*output;
	int		 append;
	uint64_t	 interval_ms;
	uint64_t	 step_ms;
	uint64_t	 duration_s;
};

static volatile sig_atomic_t attach_stop;

static void
attach_signal(int sig)
{
	(void)sig;
	attach_stop = 1;
}

/* The command line of pid from /proc, spaces for NULs, or NULL. */
static char *
attach_command(pid_t pid)
{
	char	 path[64], buf[4096];
	ssize_t	 n, i;
	int	 fd;

	snprintf(path, sizeof path, "/proc/%ld/cmdline", (long)pid);
	if ((fd = open(path, O_RDONLY)) == -1)
		return (NULL);
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return (NULL);
	while (n > 0 && buf[n - 1] == '\0')
		n--;
	for (i = 0; i < n; i++) {
		if (buf[i] == '\0')
			buf[i] = ' ';
	}
	return (xstrndup(buf, (size_t)n));
}

/* The working directory of pid, or NULL. */
static char *
attach_cwd(pid_t pid)
{
	char	 path[64], buf[PATH_MAX];
	ssize_t	 n;

	snprintf(path, sizeof path, "/proc/%ld/cwd", (long)pid);
	if ((n = readlink(path, buf, sizeof buf - 1)) <= 0)
		return (NULL);
	return (xstrndup(buf, (size_t)n));
}

/* Start the run and its process row.  0, or -1 with *cause. */
static int
attach_begin(struct store *s, pid_t pid, uint64_t t0, char **cause)
{
	struct store_run_info	 info;
	struct event_process	 p;
	char			*command, *cwd, *git;
	int64_t			 process_id;
	int			 rc = -1;

	command = attach_command(pid);
	cwd = attach_cwd(pid);
	git = git_head(cwd);
	memset(&info, 0, sizeof info);
	info.source = "attach";
	info.command = command;
	info.cwd = cwd;
	info.git_commit = git;
	info.step_source = "time";
	info.start_ns = t0;
	memset(&p, 0, sizeof p);
	p.pid = (uint32_t)pid;
	p.rank = p.local_rank = -1;
	if (store_run_begin(s, &info, cause) == 0 &&
	    store_rows_process(s, &p, NULL, command, NULL, t0, &process_id,
	    cause) == 0)
		rc = 0;
	free(command);
	free(cwd);
	free(git);
	return (rc);
}

/*
 * Sample every device until the process ends, the duration passes or a
 * signal comes; cut a step every step_ms.  Sets *samples.  0, or -1 with
 * *cause.
 */
static int
attach_loop(struct store *s, struct nvml *n, pid_t pid,
    const struct attach_options *o, uint64_t t0, int64_t *samples,
    char **cause)
{
	struct timespec	 ts;
	unsigned int	 d, ndev = nvml_devices(n);
	unsigned char	*seen = xcalloc(ndev + 1, 1);
	uint64_t	 now, bytes, step_ns = o->step_ms * 1000000;
	uint64_t	 end = o->duration_s ? t0 + o->duration_s * 1000000000 : 0;
	int64_t		 steps = 0;
	int		 r, rc = 0;

	*samples = 0;
	ts.tv_sec = (time_t)(o->interval_ms / 1000);
	ts.tv_nsec = (long)(o->interval_ms % 1000) * 1000000;
	while (!attach_stop && rc == 0) {
		now = lib_now_ns();
		if (end != 0 && now >= end)
			break;
		if (kill(pid, 0) == -1 && errno == ESRCH)
			break;
		while (rc == 0 && now >= t0 + (uint64_t)(steps + 1) *
		    step_ns) {
			steps++;
			if (store_rows_step(s, 0, steps, 0,
			    t0 + (uint64_t)steps * step_ns, NULL, cause) != 0 ||
			    store_commit(s, cause) != 0)
				rc = -1;
		}
		for (d = 0; d < ndev && rc == 0; d++) {
			if ((r = nvml_process_usage(n, d, (unsigned int)pid,
			    &bytes, cause)) < 0) {
				rc = -1;
				break;
			}
			/* Gone from a device it used: it holds nothing. */
			if (r == 0 && !seen[d])
				continue;
			seen[d] = 1;
			if (store_rows_usage(s, (int32_t)d, now, r ? bytes : 0,
			    cause) != 0)
				rc = -1;
			else
				(*samples)++;
		}
		nanosleep(&ts, NULL);
	}
	free(seen);
	return (rc);
}

static int
cmd_attach_exec(const struct cmd_entry *self, const struct cmd_args *args)
{
	struct attach_options	 o;
	struct sigaction	 sa;
	struct store		*s = NULL;
	struct nvml		*n = NULL;
	char			*cause = NULL, *def = NULL;
	uint64_t		 v, t0;
	int64_t			 samples;
	pid_t			 pid;

	o.output = cmd_args_text(args, 'o', NULL);
	o.append = cmd_args_has(args, 'a');
	o.interval_ms = cmd_args_number(args, 'i', 100);
	o.step_ms = cmd_args_number(args, 's', 1000);
	o.duration_s = cmd_args_number(args, 'd', 0);
	if (lib_parse_uint(args->argv[0], &v) != 0 || v == 0 || v > INT_MAX)
		return (cmd_usage_error(self, "bad PID %s", args->argv[0]));
	pid = (pid_t)v;
	if (kill(pid, 0) == -1 && errno == ESRCH) {
		log_warn("no process %ld", (long)pid);
		return (EXIT_INPUT);
	}
	if ((n = nvml_open(&cause)) == NULL)
		goto fail;
	if (o.output == NULL) {
		xasprintf(&def, "attach-%ld.db", (long)pid);
		o.output = def;
	}
	if ((s = store_open(o.output, o.append ?
	    STORE_APPEND : STORE_CREATE, &cause)) == NULL)
		goto fail;
	t0 = lib_now_ns();
	if (attach_begin(s, pid, t0, &cause) != 0)
		goto fail;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = attach_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (attach_loop(s, n, pid, &o, t0, &samples, &cause) != 0 ||
	    store_run_finish(s, -1, 0, 1, &cause) != 0)
		goto fail;
	if (store_close(s, &cause) != 0) {
		s = NULL;
		goto fail;
	}
	printf("attach: %" PRId64 " samples of pid %ld on %u devices -> %s\n"
	    "attach saw total usage per device only; streams and blocks are "
	    "not visible\n", samples, (long)pid, nvml_devices(n), o.output);
	nvml_close(n);
	free(def);
	return (EXIT_OK);

fail:
	log_warn("%s", cause);
	free(cause);
	if (s != NULL)
		store_abort(s);
	nvml_close(n);
	free(def);
	return (EXIT_ERROR);
}
