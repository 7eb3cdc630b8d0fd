/*
 * input.c: what a command that reads a database was given.
 *
 * Every reading command accepts a database or a PyTorch snapshot pickle.
 * A pickle is imported first into a cache database, kept in
 * $XDG_CACHE_HOME/vramtrace (default ~/.cache/vramtrace) under the
 * pickle's base name and a hash of its full path, and reused while it is a
 * complete import of that same file, newer than it.  Nothing is ever
 * written next to the pickle.  When the cache directory cannot be made,
 * the import goes to a temporary file that is removed at exit.
 */
#include "config.h"

#include "query.h"

#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "import.h"

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

/* Make the cache directory; its path, or NULL.  The caller frees it. */
static char *
cache_dir(void)
{
	const char	*base = getenv("XDG_CACHE_HOME"), *home;
	char		*top, *dir;

	if (base != NULL && *base == '/')
		top = xstrdup(base);
	else if ((home = getenv("HOME")) != NULL && *home == '/')
		xasprintf(&top, "%s/.cache", home);
	else
		return (NULL);
	xasprintf(&dir, "%s/vramtrace", top);
	if ((mkdir(top, 0700) != 0 && errno != EEXIST) ||
	    (mkdir(dir, 0700) != 0 && errno != EEXIST)) {
		free(top);
		free(dir);
		return (NULL);
	}
	free(top);
	return (dir);
}

/* The cache file for the pickle at real (a full path); NULL if none. */
static char *
cache_path(const char *real)
{
	const unsigned char	*p;
	uint64_t		 h = 0xcbf29ce484222325ULL;
	char			*dir, *copy, *path;

	if ((dir = cache_dir()) == NULL)
		return (NULL);
	for (p = (const unsigned char *)real; *p != '\0'; p++)
		h = (h ^ *p) * 0x100000001b3ULL;
	copy = xstrdup(real);
	xasprintf(&path, "%s/%s-%016" PRIx64 ".db", dir, basename(copy), h);
	free(copy);
	free(dir);
	return (path);
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
	char			*real, *cache, *tmp;
	int			 fd;

	memset(&opt, 0, sizeof opt);
	opt.progress = util_isatty_err();
	if ((real = realpath(pickle, NULL)) == NULL) {
		*cause = xstrerror_cause("%s", pickle);
		return (NULL);
	}
	cache = cache_path(real);
	free(real);
	if (cache != NULL && cache_fresh(cache, pickle))
		return (cache);
	if (cache != NULL) {
		/* Import beside the cache file, then replace it. */
		xasprintf(&tmp, "%s.new-%d", cache, (int)getpid());
		unlink(tmp);
		if (import_snapshot(pickle, tmp, &opt, &sum, cause) != 0) {
			free(tmp);
			free(cache);
			return (NULL);
		}
		if (rename(tmp, cache) == 0) {
			free(tmp);
			return (cache);
		}
		unlink(tmp);
		free(tmp);
		free(cache);
	}
	xasprintf(&cache, "%s/vramtrace-import-XXXXXX",
	    getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
	if ((fd = mkstemp(cache)) == -1) {
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
