/*
 * leaks.c: how long `vramtrace leaks` takes, and how much memory, on a
 * large run.
 *
 * usage: bench/leaks [MILLIONS-OF-ALLOCATIONS] [DB] [STEPS] [VRAMTRACE]
 *        (defaults 10, a temp file, 100000 and ./vramtrace; an existing DB
 *        is reused as it is)
 *
 * Writes a run through the real writer (a store source, as `vramtrace
 * record` does): the allocations spread evenly over STEPS steps on four
 * streams (stream 7 is the NULL stream), each freed soon after it was
 * made, except four in a thousand on side stream 13 that are never freed
 * (a leak).  Then runs the real command, `VRAMTRACE leaks DB --format
 * json`, in a child process and prints its verdict line, its wall time and
 * its peak resident memory (the child's ru_maxrss).  Prints figures, never
 * passes or fails on them.
 */
#include "config.h"

#include "vramtrace.h"
#include "bench.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>


static void
site_strings(struct store_source *src)
{
	struct event	ev;
	char		text[64];
	uint32_t	i;

	for (i = 1; i <= 16; i++) {
		memset(&ev, 0, sizeof ev);
		snprintf(text, sizeof text, "op%u\tmodel.py\t%u\n", i, 10 * i);
		ev.type = EVENT_STRING;
		ev.u.string.id = i;
		ev.u.string.length = (uint32_t)strlen(text);
		ev.u.string.text = text;
		bench_put(src, &ev);
	}
}

static void
generate(const char *path, uint64_t n, uint64_t steps)
{
	struct store_run_info	 info = { .source = "replay" };
	struct store		*s;
	struct store_source	*src;
	struct event		 ev;
	struct bench_churn	 churn;
	uint64_t		 i, made = 0, t = 1700000000000000000ULL;
	char			*cause = NULL;
	size_t			 k;

	if ((s = store_open(path, STORE_CREATE, &cause)) == NULL)
		fatal("%s", cause);
	if (store_run_begin(s, &info, &cause) != 0)
		fatal("%s", cause);
	src = store_source_create(s, "bench");
	site_strings(src);
	memset(&ev, 0, sizeof ev);
	ev.type = EVENT_STREAM_CREATE;
	ev.u.stream.stream = 7;
	ev.u.stream.flags = 3;
	ev.u.stream.handle = ev.u.stream.context = EVENT_NONE;
	bench_put(src, &ev);
	bench_churn_init(&churn);
	for (i = 0; made < n; i++) {
		t += 1000;
		k = bench_churn_next(&churn, &ev, t, 12);
		ev.u.alloc.stream = 7 + 2 * (k & 3);
		if (ev.type == EVENT_ALLOC) {
			ev.u.alloc.site = 1 + (uint32_t)(k % 16);
			/* A few in a thousand on stream 13 stay. */
			if (ev.u.alloc.stream == 13 && made % 1000 < 4)
				churn.live[k] = 0;
			made++;
		}
		bench_put(src, &ev);
		if (made % (n / steps) == 0 && ev.type == EVENT_ALLOC)
			bench_step(src, t);
		if (i % 500000 == 499999 && store_commit(s, &cause) != 0)
			fatal("%s", cause);
	}
	bench_finish(s, src);
}

/*
 * generate() in a child process, so that the memory it used is not counted
 * in the peak RSS of the leaks process forked later (ru_maxrss survives
 * fork and exec).
 */
static void
generate_apart(const char *path, uint64_t n, uint64_t steps)
{
	pid_t	pid;
	int	status;

	fflush(stdout);
	if ((pid = fork()) < 0)
		fatal("fork: %s", strerror(errno));
	if (pid == 0) {
		generate(path, n, steps);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		fatal("generating %s failed", path);
}

/*
 * Run `vramtrace leaks path --format json` with its output in out; its
 * wall time in seconds and its peak resident memory in bytes.
 */
static void
run_leaks(const char *vramtrace, const char *path, const char *out,
    double *seconds, uint64_t *rss)
{
	struct rusage	ru;
	uint64_t	t0;
	pid_t		pid;
	int		status;

	fflush(stdout);
	t0 = lib_now_ns();
	if ((pid = fork()) < 0)
		fatal("fork: %s", strerror(errno));
	if (pid == 0) {
		if (freopen(out, "w", stdout) == NULL)
			_exit(127);
		execl(vramtrace, vramtrace, "leaks", path, "--format", "json",
		    (char *)NULL);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) != pid)
		fatal("wait: %s", strerror(errno));
	*seconds = (double)(lib_now_ns() - t0) / 1e9;
	*rss = (uint64_t)ru.ru_maxrss * 1024;
	if (!WIFEXITED(status) || WEXITSTATUS(status) == 127)
		fatal("%s leaks %s did not run", vramtrace, path);
}

int
main(int argc, char **argv)
{
	struct stat	 sb;
	uint64_t	 n, steps, t0, rss;
	double		 seconds;
	char		 path[256], out[300], line[160];
	const char	*vramtrace;
	FILE		*f;

	n = (argc > 1 ? strtoull(argv[1], NULL, 10) : 10) * 1000000;
	if (argc > 2)
		snprintf(path, sizeof path, "%s", argv[2]);
	else
		snprintf(path, sizeof path, "/tmp/bench-leaks-%d.db",
		    (int)getpid());
	steps = argc > 3 ? strtoull(argv[3], NULL, 10) : 100000;
	vramtrace = argc > 4 ? argv[4] : "./vramtrace";
	if (steps == 0 || steps > n)
		fatal("steps: between 1 and the allocations");
	if (stat(path, &sb) != 0) {
		t0 = lib_now_ns();
		generate_apart(path, n, steps);
		printf("generated %" PRIu64 " allocations over %" PRIu64
		    " steps in %.1f s\n", n, steps,
		    (double)(lib_now_ns() - t0) / 1e9);
	}
	snprintf(out, sizeof out, "%s.leaks.json", path);
	run_leaks(vramtrace, path, out, &seconds, &rss);
	if ((f = fopen(out, "r")) != NULL && fgets(line, sizeof line, f))
		printf("%.*s...\n", 120, line);
	if (f != NULL)
		fclose(f);
	printf("leaks seconds     %.3f\n", seconds);
	printf("leaks peak RSS    %.1f MB\n", (double)rss / 1e6);
	unlink(out);
	if (argc <= 2)
		unlink(path);
	return (0);
}
