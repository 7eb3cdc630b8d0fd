/*
 * cmd-record.c: vramtrace record, run a command with the injection library
 * and store what its processes send.
 *
 * The command's environment gets CUDA_INJECTION64_PATH (our injection
 * library), NVTX_INJECTION64_PATH (the same library, which hands NVTX to CUPTI)
 * and VRAMTRACE_SOCKET (the collector's socket), plus the knobs the library
 * reads (VRAMTRACE_FLUSH_MS, VRAMTRACE_NVTX, VRAMTRACE_STEP_MARKER,
 * VRAMTRACE_STACKS, VRAMTRACE_STACK_DEPTH) and, depending on the options,
 * PYTORCH_CUDA_ALLOC_CONF and PYTHONPATH with the sitecustomize, told what
 * to do by VRAMTRACE_TORCH_STEPS, VRAMTRACE_TORCH_HISTORY,
 * VRAMTRACE_CHECK_OFFLOAD (--check-offload) and VRAMTRACE_TORCH_ASYNC
 * (record chose cudaMallocAsync: torch.compile's CUDA graphs stay off it,
 * since PyTorch refuses them there).  The
 * libraries and the Python package are looked up next to the vramtrace
 * binary first (the build tree, or the package of a pip install), then
 * where make install puts them.
 *
 * What the allocator modes give: with cudaMallocAsync (async, the
 * default) every tensor is a driver allocation that CUPTI sees, with its
 * stack; with PyTorch's caching allocator (native, or keep when
 * PYTORCH_CUDA_ALLOC_CONF was set) CUPTI sees its segments, and the
 * tensors' blocks with their Python stacks come from PyTorch's allocation
 * history, folded in when the program exits.
 *
 * A command that cannot be run leaves no database behind: it is looked up
 * before the database is made, and an exec() that fails anyway (its errno
 * comes back through a close-on-exec pipe) removes the new database.  At
 * the end record says what it stored and what to run next.
 *
 * Once the command runs, its exit status is record's whatever happens to
 * the database: when a write fails the collector stops writing (and says
 * what was lost), and the run is left unfinished with what was committed;
 * a failure to finish the run leaves it unfinished too (collector.c).
 * Either way the run gets the command's exit status and end time if the
 * database takes them then (record_end), and the closing line says so.  A
 * run that lacks processes the collector turned away (out of descriptors)
 * is written whole but stays unfinished as well, so that no check takes
 * it for the whole run.
 */

#include "config.h"

#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vramtrace.h"
#include "cmd.h"
#include "query.h"
#include "leak.h"

/* Events PyTorch keeps in its allocation history (native allocator). */
#define RECORD_TORCH_HISTORY	"1000000"

static int	cmd_record_exec(const struct cmd_entry *,
		    const struct cmd_args *);

enum { ALLOCATOR_ASYNC, ALLOCATOR_NATIVE, ALLOCATOR_KEEP };
static const char *const allocators[] = { "async", "native", "keep", NULL };
static const char *const stack_modes[] = { "python", "native", "all", "none",
    NULL };

static const struct cmd_option cmd_record_options[] = {
	{ .name = "output", .letter = 'o', .kind = CMD_TEXT, .value = "DB",
	  .help = "the database (default run.db)" },
	{ .name = "flush-ms", .letter = 'f', .flags = CMD_LONG_ONLY,
	  .kind = CMD_NUMBER, .value = "N", .min = 1, .max = 3600000,
	  .help = "ship and commit every N ms (default 200)" },
	{ .name = "grace-ms", .letter = 'g', .flags = CMD_LONG_ONLY,
	  .kind = CMD_NUMBER, .value = "N", .min = 0, .max = 3600000,
	  .help = "once the command ended, wait up to N ms for its processes"
	  " still sending (default 2000)" },
	{ .name = "fd-wait-ms", .letter = 'W', .flags = CMD_LONG_ONLY,
	  .kind = CMD_NUMBER, .value = "N", .min = 0, .max = 3600000,
	  .help = "out of file descriptors, let a process wait up to N ms for"
	  " one before it is turned away (default 5000)" },
	{ .name = "nvtx", .letter = 'n', .flags = CMD_LONG_ONLY,
	  .kind = CMD_FLAG, .help = "capture NVTX ranges and marks (the"
	  " default)" },
	{ .name = "no-nvtx", .letter = 'N', .flags = CMD_LONG_ONLY,
	  .kind = CMD_FLAG, .help = "leave NVTX alone" },
	{ .name = "step-marker", .letter = 's', .flags = CMD_LONG_ONLY,
	  .kind = CMD_TEXT, .value = "REGEX",
	  .help = "NVTX names that mark steps (default step)" },
	{ .name = "torch-allocator", .letter = 'a', .flags = CMD_LONG_ONLY,
	  .kind = CMD_CHOICE, .choices = allocators,
	  .help = "async (default), native or keep" },
	{ .name = "torch-steps", .letter = 't', .flags = CMD_LONG_ONLY,
	  .kind = CMD_FLAG, .help = "mark a step at every Optimizer.step" },
	{ .name = "append", .letter = 'A', .flags = CMD_LONG_ONLY,
	  .kind = CMD_FLAG, .help = "add a run to an existing database" },
	{ .name = "stacks", .letter = 'S', .flags = CMD_LONG_ONLY,
	  .kind = CMD_CHOICE, .choices = stack_modes,
	  .help = "the stacks allocations get: python (default), native, all"
	  " or none" },
	{ .name = "stack-depth", .letter = 'D', .flags = CMD_LONG_ONLY,
	  .kind = CMD_NUMBER, .value = "N", .min = 1,
	  .max = LIB_STACK_DEPTH_MAX,
	  .help = "frames kept per stack (default 64)" },
	{ .name = "check-offload", .letter = 'c', .flags = CMD_LONG_ONLY,
	  .kind = CMD_FLAG, .help = "check that every saved-tensor-hooks"
	  " engine gives back what it was given" },
	CMD_OPTION_END
};

const struct cmd_entry cmd_record_entry = {
	.name = "record",
	.args = "-- COMMAND [ARGS...]",
	.lower = 1,
	.upper = -1,
	.missing = "no command to record",
	.flags = CMD_STOP,
	.options = cmd_record_options,
	.summary = "run a command and record its GPU memory into a database",
	.exec = cmd_record_exec
};

/*
 * Where the installed files are (Makefile.am): make install's pkglibdir,
 * libdir and the package directory under Python's pyexecdir.  A pip
 * install has them all next to the program, in the package's directory.
 */
#ifndef VRAMTRACE_PKGLIBDIR
#define VRAMTRACE_PKGLIBDIR "/usr/local/lib/vramtrace"
#endif
#ifndef VRAMTRACE_LIBDIR
#define VRAMTRACE_LIBDIR "/usr/local/lib"
#endif
#ifndef VRAMTRACE_PKGPYDIR
#define VRAMTRACE_PKGPYDIR ""
#endif
#ifndef VRAMTRACE_SRCDIR
#define VRAMTRACE_SRCDIR "."
#endif

struct record_options {
	const char	*output;
	struct collector_times times;
	int		 nvtx;
	const char	*step_marker;
	const char	*allocator;	/* async, native, keep; NULL: default */
	int		 torch_steps;
	int		 append;
	const char	*stacks;	/* NULL: VRAMTRACE_STACKS, or python */
	const char	*stack_depth;	/* NULL: VRAMTRACE_STACK_DEPTH */
	unsigned	 stack_kinds;	/* LIB_STACK_* */
	int		 check_offload;	/* or VRAMTRACE_CHECK_OFFLOAD set */
};

/*
 * Find a file: env (may be NULL) names it, else the first of paths that
 * exists (a relative one is taken from the directory of the running
 * program: the build tree, or the package of a pip install).  Returns a
 * new string, or NULL.
 */
static char *
record_find(const char *env, const char *const *paths)
{
	char		 exe[PATH_MAX], *path, *slash;
	const char	*s;
	ssize_t		 n;

	if (env != NULL && (s = getenv(env)) != NULL && *s != '\0')
		return (access(s, R_OK) == 0 ? xstrdup(s) : NULL);
	n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	exe[n > 0 ? n : 0] = '\0';
	if ((slash = strrchr(exe, '/')) != NULL)
		*slash = '\0';
	for (; *paths != NULL; paths++) {
		if (**paths == '/')
			path = xstrdup(*paths);
		else if (*exe != '\0')
			xasprintf(&path, "%s/%s", exe, *paths);
		else
			continue;
		if (access(path, R_OK) == 0)
			return (path);
		free(path);
	}
	return (NULL);
}

static const char *
record_allocator(struct record_options *o)
{
	const char	*conf = getenv("PYTORCH_CUDA_ALLOC_CONF");
	char		*s;

	if (o->allocator == NULL && conf != NULL &&
	    strstr(conf, "cudaMallocAsync") == NULL)
		log_warn("PYTORCH_CUDA_ALLOC_CONF is set (%s), so PyTorch keeps "
		    "its caching allocator: CUPTI sees its segments, and its "
		    "tensors come from PyTorch's history at exit%s "
		    "(--torch-allocator async sees every tensor as it is made)",
		    conf, o->stack_kinds & LIB_STACK_PYTHON ? "" :
		    " only with Python stacks on");
	if (o->allocator == NULL)
		o->allocator = conf == NULL ? "async" : "keep";
	unsetenv("VRAMTRACE_TORCH_ASYNC");
	if (strcmp(o->allocator, "async") == 0) {
		if (conf == NULL || *conf == '\0')
			setenv("PYTORCH_CUDA_ALLOC_CONF",
			    "backend:cudaMallocAsync", 1);
		else if (strstr(conf, "cudaMallocAsync") == NULL) {
			xasprintf(&s, "%s,backend:cudaMallocAsync", conf);
			setenv("PYTORCH_CUDA_ALLOC_CONF", s, 1);
			free(s);
		}
		/* Ours, not the program's: the sitecustomize keeps it from
		 * torch.compile's CUDA graphs, which it cannot serve. */
		if (conf == NULL || strstr(conf, "cudaMallocAsync") == NULL)
			setenv("VRAMTRACE_TORCH_ASYNC", "1", 1);
		return ("async");
	}
	if (strcmp(o->allocator, "native") == 0) {
		if (conf != NULL && strstr(conf, "cudaMallocAsync") != NULL)
			setenv("PYTORCH_CUDA_ALLOC_CONF", "backend:native", 1);
		return ("native");
	}
	if (conf != NULL && strstr(conf, "cudaMallocAsync") != NULL)
		return ("async");
	return (conf != NULL ? "native" : "unknown");
}

static void
record_prepend(const char *var, const char *dir)
{
	const char	*old = getenv(var);
	char		*s;

	if (old == NULL || *old == '\0') {
		setenv(var, dir, 1);
		return;
	}
	xasprintf(&s, "%s:%s", dir, old);
	setenv(var, s, 1);
	free(s);
}

/*
 * Put the package's sitecustomize (its _site directory) first on
 * PYTHONPATH; it imports the package it belongs to by its path, so no
 * other module of the directory that holds the package (a whole
 * site-packages) comes before the program's own.  0, or -1 with a message
 * given; when the package is not required, 0 without it.
 */
static int
record_python_path(int required)
{
	static const char *const sites[] = {
		"python/vramtrace/_site/sitecustomize.py",	/* build tree */
		"_site/sitecustomize.py",			/* pip */
		VRAMTRACE_PKGPYDIR "/_site/sitecustomize.py",	/* make install */
		VRAMTRACE_SRCDIR "/python/vramtrace/_site/sitecustomize.py",
		NULL
	};
	const char	*dir = getenv("VRAMTRACE_PYTHONDIR");
	const char	*named[] = { NULL, NULL };
	char		*site, *given = NULL;

	if (dir != NULL && *dir != '\0') {
		xasprintf(&given, "%s/vramtrace/_site/sitecustomize.py", dir);
		named[0] = given;
	}
	site = record_find(NULL, given != NULL ? named : sites);
	if (site == NULL && !required) {
		free(given);
		return (0);
	}
	if (site == NULL) {
		log_warn("the vramtrace Python package was not found%s%s "
		    "(set VRAMTRACE_PYTHONDIR to the directory that holds it)",
		    given != NULL ? " at " : "", given != NULL ? given : "");
		free(given);
		return (-1);
	}
	free(given);
	*strrchr(site, '/') = '\0';		/* .../vramtrace/_site */
	record_prepend("PYTHONPATH", site);
	free(site);
	return (0);
}

/* Set the child's environment; 0, or -1 with a message given. */
static int
record_environment(struct record_options *o, const char *allocator)
{
	static const char *const injects[] = { "libvramtrace-inject.so",
	    VRAMTRACE_PKGLIBDIR "/libvramtrace-inject.so", NULL };
	static const char *const libs[] = { "libvramtrace.so",
	    VRAMTRACE_LIBDIR "/" VRAMTRACE_LIBRARY_SONAME, NULL };
	char	*inject, *lib, ms[32];
	int	 history;

	inject = record_find("VRAMTRACE_INJECT_LIBRARY", injects);
	if (inject == NULL) {
#ifdef HAVE_CUPTI
		log_warn("libvramtrace-inject.so not found next to the "
		    "vramtrace binary or in %s (set VRAMTRACE_INJECT_LIBRARY)",
		    VRAMTRACE_PKGLIBDIR);
#else
		log_warn("this vramtrace was built without CUDA (configure "
		    "found no CUPTI), so it cannot record GPU memory; rebuild "
		    "it with --with-cuda=DIR");
#endif
		return (-1);
	}
	setenv("CUDA_INJECTION64_PATH", inject, 1);
	/*
	 * NVTX goes to the injection library too, which hands it to the
	 * libcupti it is bound to: naming a libcupti file here could load a
	 * second copy (PyTorch brings its own) that nothing subscribes to.
	 */
	if (o->nvtx)
		setenv("NVTX_INJECTION64_PATH", inject, 1);
	free(inject);
	if ((lib = record_find("VRAMTRACE_LIBRARY", libs)) != NULL) {
		setenv("VRAMTRACE_LIBRARY", lib, 1);
		free(lib);
	}
	setenv("VRAMTRACE_NVTX", o->nvtx ? "1" : "0", 1);
	snprintf(ms, sizeof ms, "%u", o->times.flush_ms);
	setenv("VRAMTRACE_FLUSH_MS", ms, 1);
	setenv("VRAMTRACE_STEP_MARKER", o->step_marker, 1);
	if (o->stacks != NULL)
		setenv("VRAMTRACE_STACKS", o->stacks, 1);
	if (o->stack_depth != NULL)
		setenv("VRAMTRACE_STACK_DEPTH", o->stack_depth, 1);

	/*
	 * The caching allocator's tensors and their stacks come from
	 * PyTorch's history; the sitecustomize turns it on.
	 */
	history = strcmp(allocator, "async") != 0 &&
	    (o->stack_kinds & LIB_STACK_PYTHON);
	if (o->torch_steps)
		setenv("VRAMTRACE_TORCH_STEPS", "1", 1);
	else
		unsetenv("VRAMTRACE_TORCH_STEPS");
	if (!history)
		unsetenv("VRAMTRACE_TORCH_HISTORY");
	else if (getenv("VRAMTRACE_TORCH_HISTORY") == NULL)
		setenv("VRAMTRACE_TORCH_HISTORY", RECORD_TORCH_HISTORY, 1);
	if (o->check_offload)
		setenv("VRAMTRACE_CHECK_OFFLOAD", "1", 1);
	if (!o->torch_steps && !history && !o->check_offload)
		/* Only to keep torch.compile's CUDA graphs off the
		 * cudaMallocAsync record chose, where the package is. */
		return (getenv("VRAMTRACE_TORCH_ASYNC") != NULL ?
		    record_python_path(0) : 0);
	return (record_python_path(1));
}

static char *
record_join(int argc, char **argv)
{
	char	*s = xstrdup(""), *t;
	int	 i;

	for (i = 0; i < argc; i++) {
		xasprintf(&t, "%s%s%s", s, i == 0 ? "" : " ", argv[i]);
		free(s);
		s = t;
	}
	return (s);
}

/*
 * Take the options from args into *o: 0, or -1 (a usage error said) when
 * VRAMTRACE_STACKS names no stack mode.
 */
static int
record_options(const struct cmd_entry *self, const struct cmd_args *args,
    struct record_options *o)
{
	const char	*env;

	o->output = cmd_args_text(args, 'o', "run.db");
	o->times.flush_ms = (unsigned)cmd_args_number(args, 'f', 200);
	o->times.grace_ms = (unsigned)cmd_args_number(args, 'g', 2000);
	o->times.fd_wait_ms = (unsigned)cmd_args_number(args, 'W', 5000);
	/* Of --nvtx and --no-nvtx, the last one given counts. */
	o->nvtx = cmd_args_has(args, 'N') <= cmd_args_has(args, 'n');
	o->step_marker = cmd_args_text(args, 's', "step");
	o->allocator = cmd_args_has(args, 'a') ? allocators[cmd_args_number(
	    args, 'a', ALLOCATOR_ASYNC)] : NULL;
	o->torch_steps = cmd_args_has(args, 't');
	o->append = cmd_args_has(args, 'A');
	env = getenv("VRAMTRACE_CHECK_OFFLOAD");
	o->check_offload = cmd_args_has(args, 'c') || (env != NULL &&
	    *env != '\0' && strcmp(env, "0") != 0);
	o->stacks = cmd_args_has(args, 'S') ? stack_modes[cmd_args_number(
	    args, 'S', 0)] : NULL;
	o->stack_depth = cmd_args_text(args, 'D', NULL);
	o->stack_kinds = LIB_STACK_PYTHON;
	if (o->stacks != NULL)
		return (lib_parse_stacks(o->stacks, &o->stack_kinds));
	if ((env = getenv("VRAMTRACE_STACKS")) != NULL &&
	    lib_parse_stacks(env, &o->stack_kinds) != 0) {
		cmd_usage_error(self, "bad VRAMTRACE_STACKS: %s", env);
		return (-1);
	}
	return (0);
}

/* The exit status of a shell for a wait status. */
static int
record_status(int status)
{
	if (WIFEXITED(status))
		return (WEXITSTATUS(status));
	if (WIFSIGNALED(status))
		return (128 + WTERMSIG(status));
	return (EXIT_ERROR);
}

/* Can the command be run: a file, or a name found on PATH, executable? */
static int
record_runnable(const char *name)
{
	const char	*path = getenv("PATH"), *p, *end;
	char		*file;
	int		 found = 0;

	if (strchr(name, '/') != NULL)
		return (access(name, X_OK) == 0);
	if (path == NULL)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path; !found; p = end + 1) {
		end = strchr(p, ':');
		if (end == NULL)
			end = p + strlen(p);
		xasprintf(&file, "%.*s/%s", (int)(end - p),
		    end == p ? "." : p, name);
		found = access(file, X_OK) == 0;
		free(file);
		if (*end == '\0')
			break;
	}
	return (found);
}

/* Remove the database at path and SQLite's files beside it. */
static void
record_remove(const char *path)
{
	static const char	*suffix[] = { "", "-wal", "-shm", "-journal" };
	char			*p;
	size_t			 i;

	for (i = 0; i < sizeof suffix / sizeof suffix[0]; i++) {
		xasprintf(&p, "%s%s", path, suffix[i]);
		unlink(p);
		free(p);
	}
}

/*
 * Say what run of path holds and what to run next, on stderr; state: NULL
 * for a finished run, else what the line says of an unfinished one.
 */
static void
record_report(const char *path, int64_t run, const char *command,
    const char *state)
{
	struct query		*q;
	struct query_counts	 qi;
	char			*cause = NULL;

	if ((q = query_open(path, &cause)) == NULL ||
	    query_run_counts(q, run, QUERY_COUNT_PROCESSES |
	    QUERY_COUNT_ALLOCATIONS | QUERY_COUNT_STEPS | QUERY_COUNT_SITES,
	    &qi, &cause) != 0) {
		log_warn("%s", cause != NULL ? cause : path);
		free(cause);
		query_close(q);
		return;
	}
	query_close(q);
	if (qi.processes == 0 && state == NULL) {
		log_warn("no CUDA process connected: %s did not initialise "
		    "CUDA, or its CUDA skipped CUDA_INJECTION64_PATH; run %lld "
		    "of %s is empty", command, (long long)run, path);
		return;
	}
	log_warn("run %lld of %s%s%s%s: %lld process%s, %lld allocations, "
	    "%lld steps, %lld stacks", (long long)run, path,
	    state != NULL ? " (" : "", state != NULL ? state : "",
	    state != NULL ? ")" : "",
	    (long long)qi.processes, qi.processes == 1 ? "" : "es",
	    (long long)qi.allocations, (long long)qi.steps,
	    (long long)qi.sites);
	if (qi.steps == 0 && qi.allocations > 0)
		log_warn("%s (leaks is INCONCLUSIVE without steps)",
		    LEAK_NO_STEPS_RECORD);
	log_warn("next: vramtrace leaks %s (or vramtrace tui %s)", path, path);
}

/* Close a store whose run is written; a failure now loses nothing. */
static void
record_close(struct store *store)
{
	char	*cause = NULL;

	if (store_close(store, &cause) != 0) {
		log_warn("%s", cause);
		free(cause);
	}
}

/*
 * End the run of store for a command that exited with rc, and close the
 * store; how: what collector_run() said.  A run whose recording lost
 * nothing (how 0) is finished.  One that lacks processes turned away
 * (COLLECTOR_LACKS) is written whole but stays unfinished.  One that lost
 * events (COLLECTOR_STOPPED: the database failed) or that cannot be
 * finished stays unfinished, with its exit status and end time if the
 * database takes them now.  Returns NULL for a finished run, else what
 * the closing line says of it (the caller frees it).
 */
static char *
record_end(struct store *store, int how, int rc)
{
	uint64_t	 end_ns = lib_now_ns();
	char		*cause = NULL, *state;
	int		 complete = (how & COLLECTOR_LACKS) == 0;

	if ((how & COLLECTOR_STOPPED) == 0) {
		if (store_run_finish(store, rc, end_ns, complete,
		    &cause) == 0) {
			record_close(store);
			return (complete ? NULL : xstrdup("unfinished: it lacks "
			    "the processes turned away; every event received "
			    "is stored"));
		}
		log_warn("%s; run %lld stays marked unfinished, with every "
		    "event recorded", cause, (long long)store_run_id(store));
		free(cause);
		cause = NULL;
	}
	if (store_run_end(store, rc, end_ns, &cause) != 0) {
		xasprintf(&state, "unfinished; its exit status and end time "
		    "are not stored either: %s", cause);
		free(cause);
		store_abort(store);
		return (state);
	}
	record_close(store);
	return (xstrdup("unfinished; its exit status and end time are "
	    "stored"));
}

static int
cmd_record_exec(const struct cmd_entry *self, const struct cmd_args *args)
{
	struct record_options	 o;
	struct store_run_info	 info;
	struct collector	*c = NULL;
	struct store		*store = NULL;
	struct stat		 sb;
	char			*cause = NULL, *command, *git, cwd[PATH_MAX];
	char			*state;
	int			 status = 0, rc, created, pfd[2], how;
	int			 exec_errno;
	int64_t			 run;
	pid_t			 pid;
	struct sigaction	 sa, old_pipe;

	/*
	 * A write to a pipe that closed (record ... 2>&1 | head) fails with
	 * EPIPE instead of ending record, which goes on without its
	 * messages; the command gets SIGPIPE as we found it.
	 */
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_IGN;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGPIPE, &sa, &old_pipe);
	if (record_options(self, args, &o) != 0)
		return (EXIT_USAGE);
	created = stat(o.output, &sb) != 0;
	if (!o.append && !created) {
		log_warn("%s exists; use --append to add a run to it",
		    o.output);
		return (EXIT_ERROR);
	}
	if (!record_runnable(args->argv[0])) {
		log_warn("%s: command not found; nothing recorded",
		    args->argv[0]);
		return (127);
	}
	memset(&info, 0, sizeof info);
	info.source = "record";
	info.allocator = record_allocator(&o);
	info.step_source = o.nvtx ? "nvtx" : "api";
	if (record_environment(&o, info.allocator) != 0)
		return (EXIT_ERROR);
	info.command = command = record_join(args->argc, args->argv);
	info.cwd = getcwd(cwd, sizeof cwd);

	store = store_open(o.output, o.append ? STORE_APPEND : STORE_CREATE,
	    &cause);
	if (store == NULL)
		goto fail;
	info.git_commit = git = git_head(info.cwd);
	rc = store_run_begin(store, &info, &cause);
	free(git);
	if (rc != 0 || store_commit(store, &cause) != 0)
		goto fail;
	run = store_run_id(store);
	if ((c = collector_create(store, &o.times, &cause)) == NULL)
		goto fail;
	setenv("VRAMTRACE_SOCKET", collector_path(c), 1);
	unsetenv("VRAMTRACE_OUTPUT");

	if (pipe2(pfd, O_CLOEXEC) != 0 || (pid = fork()) == -1) {
		cause = xstrerror_cause("fork");
		goto fail;
	}
	if (pid == 0) {
		close(pfd[0]);
		collector_child(c);
		sigaction(SIGPIPE, &old_pipe, NULL);
		execvp(args->argv[0], args->argv);
		exec_errno = errno;
		if (write(pfd[1], &exec_errno, sizeof exec_errno) < 0)
			_exit(127);		/* the exit status says it */
		_exit(127);
	}
	close(pfd[1]);
	how = collector_run(c, pid, &status);
	if (read(pfd[0], &exec_errno, sizeof exec_errno) != sizeof exec_errno)
		exec_errno = 0;
	else
		log_warn("%s: %s", args->argv[0], strerror(exec_errno));
	close(pfd[0]);
	collector_free(c);
	rc = record_status(status);
	if (exec_errno != 0 && created) {
		/* Nothing ran: leave no database that looks like a run. */
		store_abort(store);
		record_remove(o.output);
		free(command);
		return (rc);
	}
	/*
	 * From here on the command's status is ours: a database that failed
	 * keeps what was committed, as a run that stays unfinished.
	 */
	state = record_end(store, how, rc);
	if (exec_errno == 0)
		record_report(o.output, run, args->argv[0], state);
	free(state);
	free(command);
	return (rc);

fail:
	if (cause != NULL)
		log_warn("%s", cause);
	free(cause);
	collector_free(c);
	if (store != NULL)
		store_abort(store);
	free(command);
	return (EXIT_ERROR);
}
