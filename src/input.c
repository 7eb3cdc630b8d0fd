/*
 * input.c: what a command that reads a database was given.
 *
 * Every reading command accepts a database or a PyTorch snapshot pickle.
 * A pickle is imported first into a cache database next to it, named as
 * `vramtrace import` would name it (trace.pickle -> trace.db), and reused
 * while it is a complete import of that same file, newer than it.  When
 * that name is taken by something else or the directory is not writable,
 * the import goes to a temporary file that is removed at exit.
 */
#include "config.h"

#include "import.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char	*input_tmp;

static void
input_cleanup(void)
{
	if (input_tmp != NULL) {
		unlink(input_tmp);
		free(input_tmp);
		input_tmp = NULL;
	}
}

/* Is cache a complete import of pickle, newer than it? */
static int
cache_fresh(const char *cache, const char *pickle)
{
	struct stat	 cs, ps;
	struct query	*q;
	char		*cause = NULL, *real;
	int		 fresh;

	if (stat(cache, &cs) != 0 || stat(pickle, &ps) != 0 ||
	    cs.st_mtime < ps.st_mtime)
		return (0);
	if ((q = query_open(cache, &cause)) == NULL) {
		free(cause);
		return (0);
	}
	real = realpath(pickle, NULL);
	fresh = real != NULL && query_has_import(q, real);
	free(real);
	query_close(q);
	return (fresh);
}

static char *
import_to_cache(const char *pickle, char **cause)
{
	struct import_options	 opt;
	struct import_summary	 sum;
	char			*cache, *dir, *slash;
	int			 fd;

	memset(&opt, 0, sizeof opt);
	cache = cmd_import_default_output(pickle);
	if (cache_fresh(cache, pickle))
		return (cache);
	dir = xstrdup(cache);
	slash = strrchr(dir, '/');
	if (slash != NULL)
		*slash = '\0';
	if (access(cache, F_OK) != 0 && access(slash != NULL ? dir : ".",
	    W_OK) == 0) {
		free(dir);
		if (import_snapshot(pickle, cache, &opt, &sum, cause) == 0)
			return (cache);
		free(cache);
		return (NULL);
	}
	free(dir);
	free(cache);
	/* The name is taken, or the directory is read-only. */
	xasprintf(&cache, "%s/vramtrace-import-XXXXXX.db",
	    getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
	if ((fd = mkstemps(cache, 3)) == -1) {
		*cause = xstrerror_cause("%s: cannot make a temporary file",
		    cache);
		free(cache);
		return (NULL);
	}
	close(fd);
	unlink(cache);
	if (import_snapshot(pickle, cache, &opt, &sum, cause) != 0) {
		free(cache);
		return (NULL);
	}
	input_cleanup();
	input_tmp = xstrdup(cache);
	atexit(input_cleanup);
	return (cache);
}

/*
 * Open path for reading: a database as it is, a pickle through its
 * imported copy.  Returns the query handle, or NULL with *cause.
 */
struct query *
input_open(const char *path, char **cause)
{
	struct query	*q;
	char		*db;

	if (!util_is_pickle(path))
		return (query_open(path, cause));
	if ((db = import_to_cache(path, cause)) == NULL)
		return (NULL);
	q = query_open(db, cause);
	free(db);
	return (q);
}
