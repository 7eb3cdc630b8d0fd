/*
 * input.c: what a command that reads a database was given.
 *
 * Every reading command accepts a database or a PyTorch snapshot pickle.
 * A pickle is imported first into a cache database, kept in
 * $XDG_CACHE_HOME/vramtrace (default ~/.cache/vramtrace) as
 * NAME-PATH-KEY.db: NAME the pickle's base name, PATH a hash of its full
 * path, KEY a hash of what it is (its size, modification time in ns,
 * device and inode, a hash of all its bytes) and of what imports it
 * (IMPORT_VERSION, the schema version, the program's version).  A cache
 * file answers only for the same bytes imported the same way: a file
 * replaced by another with the same name, size and time (cp -p) has
 * another key.  A new import replaces the other keys of the same path;
 * one whose pickle changed while it was read is used once and not kept.
 * Nothing is ever written next to the pickle.  When the cache directory
 * cannot be made, the import goes to a temporary file that is removed at
 * exit.
 */
#include "config.h"

#include "query.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "import.h"
#include "unwrap.h"

/* How much of the pickle key_of reads at a time. */
#define INPUT_KEY_CHUNK	(1 << 20)

/*
 * The temporary databases to remove at exit, each held open with a shared
 * flock() meanwhile, so that another vramtrace's sweep
 * (store_atomic_sweep_named) leaves them alone.
 */
struct input_tmp {
	char	*path;
	int	 fd;
};
static struct input_tmp	*input_tmp;
static size_t		 input_ntmp;

static void
input_forget(size_t i)
{
	unlink(input_tmp[i].path);
	if (input_tmp[i].fd != -1)
		close(input_tmp[i].fd);
	free(input_tmp[i].path);
	input_tmp[i] = input_tmp[--input_ntmp];
}

static void
input_cleanup(void)
{
	while (input_ntmp > 0)
		input_forget(input_ntmp - 1);
	free(input_tmp);
	input_tmp = NULL;
}

/*
 * Remove the temporary database at path now, if it is one, and forget it:
 * once a connection has it open, its name is no longer needed.
 */
static void
input_remove_now(const char *path)
{
	size_t	i;

	for (i = 0; i < input_ntmp; i++) {
		if (strcmp(input_tmp[i].path, path) == 0) {
			input_forget(i);
			return;
		}
	}
}

/* Remove the database at path at exit, and hold it until then. */
static void
input_remove_at_exit(const char *path)
{
	struct input_tmp	*t;

	if (input_ntmp == 0 && input_tmp == NULL)
		atexit(input_cleanup);
	input_tmp = xreallocarray(input_tmp, input_ntmp + 1,
	    sizeof *input_tmp);
	t = &input_tmp[input_ntmp++];
	t->path = xstrdup(path);
	if ((t->fd = open(path, O_RDONLY | O_CLOEXEC)) != -1)
		flock(t->fd, LOCK_SH);
}

/*
 * A name for a new temporary database, dir/baseXXXXXX, free now, after
 * removing what stopped processes left under such names.  The caller frees
 * it; NULL with *cause when dir refuses a file.
 */
static char *
input_temporary_name(const char *dir, const char *base, char **cause)
{
	char	*path;
	int	 fd;

	store_atomic_sweep_named(dir, base);
	xasprintf(&path, "%s/%sXXXXXX", dir, base);
	if ((fd = util_mkstemp(path)) == -1) {
		*cause = xstrerror_cause("%s: cannot make a temporary file",
		    path);
		free(path);
		return (NULL);
	}
	close(fd);
	unlink(path);
	return (path);
}

/* Import pickle into the new database db.  0, or -1 with *cause. */
static int
input_import(const char *pickle, const char *db, char **cause)
{
	struct import_options	 opt;
	struct import_summary	 sum;

	memset(&opt, 0, sizeof opt);
	opt.progress = util_isatty_err();
	return (import_snapshot(pickle, db, &opt, &sum, cause) != 0 ? -1 : 0);
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

/* FNV-1a over n bytes, from h. */
static uint64_t
key_fnv(uint64_t h, const void *v, size_t n)
{
	const unsigned char	*p = v;

	while (n-- > 0)
		h = (h ^ *p++) * 0x100000001b3ULL;
	return (h);
}

/*
 * The hash of n bytes, from h, 8 at a time (the content of a pickle of
 * hundreds of MB, read by every command given it): a multiply and a
 * rotation per word, FNV-1a for the tail.
 */
static uint64_t
key_content(uint64_t h, const unsigned char *p, size_t n)
{
	uint64_t	w;

	for (; n >= 8; p += 8, n -= 8) {
		memcpy(&w, p, 8);
		h ^= w * 0x9e3779b97f4a7c15ULL;
		h = ((h << 31) | (h >> 33)) * 0xc2b2ae3d27d4eb4fULL;
	}
	return (key_fnv(h, p, n));
}

/*
 * The key of the pickle at path: what it is (size, modification time in
 * ns, device, inode, a hash of its bytes) and what imports it.  0, or -1
 * with *cause when it cannot be read.
 */
static int
key_of(const char *path, uint64_t *key, char **cause)
{
	static const char	 version[] = PACKAGE_VERSION;
	struct stat		 sb;
	unsigned char		*buf;
	uint64_t		 h = 0xcbf29ce484222325ULL, f[7];
	ssize_t			 got;
	int			 fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1 ||
	    fstat(fd, &sb) != 0) {
		*cause = xstrerror_cause("%s", path);
		if (fd != -1)
			close(fd);
		return (-1);
	}
	buf = xmalloc(INPUT_KEY_CHUNK);
	while ((got = read(fd, buf, INPUT_KEY_CHUNK)) > 0)
		h = key_content(h, buf, (size_t)got);
	free(buf);
	close(fd);
	if (got < 0) {
		*cause = xstrerror_cause("%s", path);
		return (-1);
	}
	f[0] = (uint64_t)sb.st_size;
	f[1] = (uint64_t)sb.st_mtim.tv_sec;
	f[2] = (uint64_t)sb.st_mtim.tv_nsec;
	f[3] = (uint64_t)sb.st_dev;
	f[4] = (uint64_t)sb.st_ino;
	f[5] = IMPORT_VERSION;
	f[6] = STORE_SCHEMA_VERSION;
	h = key_fnv(h, f, sizeof f);
	*key = key_fnv(h, version, sizeof version);
	return (0);
}

/*
 * The cache file for the pickle at real (a full path) of key key, and in
 * *others the pattern of every key's file for that path; NULL if there is
 * no cache directory.  The caller frees both.
 */
static char *
cache_path(const char *real, uint64_t key, char **others)
{
	char	*dir, *copy, *path, *name;

	if ((dir = cache_dir()) == NULL)
		return (NULL);
	copy = xstrdup(real);
	xasprintf(&name, "%s/%s-%016" PRIx64, dir, basename(copy),
	    key_fnv(0xcbf29ce484222325ULL, real, strlen(real)));
	xasprintf(&path, "%s-%016" PRIx64 ".db", name, key);
	xasprintf(others, "%s-????????????????.db", name);
	free(name);
	free(copy);
	free(dir);
	return (path);
}

/* Is cache a complete import of pickle? */
static int
cache_fresh(const char *cache, const char *real)
{
	struct query	*q;
	char		*cause = NULL;
	int		 fresh;

	if (access(cache, R_OK) != 0)
		return (0);
	if ((q = query_open(cache, &cause)) == NULL) {
		free(cause);
		return (0);
	}
	fresh = query_has_import(q, real);
	query_close(q);
	return (fresh);
}

/* Remove the files matching pattern but keep. */
static void
cache_prune(const char *pattern, const char *keep)
{
	glob_t	g;
	size_t	i;

	if (glob(pattern, GLOB_NOSORT, NULL, &g) != 0)
		return;
	for (i = 0; i < g.gl_pathc; i++) {
		if (strcmp(g.gl_pathv[i], keep) != 0)
			unlink(g.gl_pathv[i]);
	}
	globfree(&g);
}

/*
 * Import pickle beside cache and move it there, unless the pickle changed
 * while it was read (its key is no longer key): then the import is used
 * once, as a temporary file.  The database's path, or NULL with *cause.
 */
static char *
cache_fill(const char *pickle, char *cache, const char *others,
    uint64_t key, char **cause)
{
	uint64_t	 after;
	char		*tmp, *dir, *base, *slash = strrchr(cache, '/');

	dir = xstrndup(cache, (size_t)(slash - cache));
	xasprintf(&base, "%s.new-", slash + 1);
	tmp = input_temporary_name(dir, base, cause);
	free(dir);
	free(base);
	if (tmp == NULL) {
		free(cache);
		return (NULL);
	}
	if (input_import(pickle, tmp, cause) != 0) {
		free(tmp);
		free(cache);
		return (NULL);
	}
	if (key_of(pickle, &after, cause) != 0) {
		unlink(tmp);
		free(tmp);
		free(cache);
		return (NULL);
	}
	if (after == key && rename(tmp, cache) == 0) {
		free(tmp);
		cache_prune(others, cache);
		return (cache);
	}
	free(cache);
	input_remove_at_exit(tmp);
	return (tmp);
}

/*
 * Import pickle into a temporary database, removed at exit: for a stream,
 * and when the cache directory cannot be made.  Its path, or NULL with
 * *cause.
 */
static char *
import_to_temporary(const char *pickle, char **cause)
{
	const char	*dir = getenv("TMPDIR");
	char		*cache;

	cache = input_temporary_name(dir != NULL && *dir != '\0' ? dir : "/tmp",
	    "vramtrace-import-", cause);
	if (cache == NULL)
		return (NULL);
	if (input_import(pickle, cache, cause) != 0) {
		free(cache);
		return (NULL);
	}
	input_remove_at_exit(cache);
	return (cache);
}

static char *
import_to_cache(const char *pickle, char **cause)
{
	uint64_t	 key;
	char		*real, *cache, *others = NULL;

	if ((real = realpath(pickle, NULL)) == NULL) {
		*cause = xstrerror_cause("%s", pickle);
		return (NULL);
	}
	if (key_of(pickle, &key, cause) != 0) {
		free(real);
		return (NULL);
	}
	cache = cache_path(real, key, &others);
	if (cache != NULL && cache_fresh(cache, real)) {
		free(real);
		free(others);
		return (cache);
	}
	free(real);
	if (cache != NULL) {
		cache = cache_fill(pickle, cache, others, key, cause);
		free(others);
		return (cache);
	}
	return (import_to_temporary(pickle, cause));
}

/*
 * Is path a pickle rather than a database?  Looks at the name first
 * (.pickle, .pkl) and then at the first bytes of a regular file: the
 * PROTO opcode 0x80, or a container unwrap.c knows (a compressed file, a
 * zip archive).  Anything else is left to the reader to refuse.
 */
static int
is_pickle(const char *path)
{
	const char	*dot = strrchr(path, '.');
	unsigned char	 head[UNWRAP_SNIFF_LEN];
	char		*cause = NULL;
	int		 fd;
	ssize_t		 n;

	if (dot != NULL && (strcmp(dot, ".pickle") == 0 ||
	    strcmp(dot, ".pkl") == 0))
		return (1);
	if ((fd = util_open_input(path, &cause)) == -1) {
		free(cause);
		return (0);
	}
	n = read(fd, head, sizeof head);
	close(fd);
	return (n >= 1 && (head[0] == 0x80 ||
	    unwrap_sniff(head, (size_t)n)));
}

/*
 * The database to read for path: path itself when it is not a pickle, else
 * its imported copy (imported now when the cache has none); standard input
 * ("-") and a FIFO, streams, are imported each time, into a temporary
 * database.  The caller frees it; NULL with *cause.  A second connection
 * to the same input opens this path, so that a pickle is neither hashed
 * nor imported twice.
 */
char *
input_database(const char *path, char **cause)
{
	struct stat	sb;

	if (strcmp(path, "-") == 0 || (stat(path, &sb) == 0 &&
	    S_ISFIFO(sb.st_mode)))
		return (import_to_temporary(path, cause));
	if (!is_pickle(path))
		return (xstrdup(path));
	return (import_to_cache(path, cause));
}

/*
 * Open path for reading: a database as it is, a pickle through its
 * imported copy.  A temporary database (a stream's, or one made for want
 * of a cache directory) is removed as soon as it is open, so that nothing
 * is left whatever ends the command.  Returns the query handle, or NULL
 * with *cause.
 */
struct query *
input_open(const char *path, char **cause)
{
	struct query	*q;
	char		*db;

	if ((db = input_database(path, cause)) == NULL)
		return (NULL);
	q = query_open(db, cause);
	if (q != NULL)
		input_remove_now(db);
	free(db);
	return (q);
}
