/*
 * util.c: small helpers the commands share: sorting, refusing an input
 * that is not a regular file, recognising a snapshot pickle by its first
 * bytes, terminals, making and writing an output file, naming a file to
 * SQLite.
 */
#include "config.h"

#include "vramtrace.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * qsort() that accepts an empty array: qsort(NULL, 0, ...) is undefined
 * behaviour, and growing arrays start as NULL.
 */
void
util_sort(void *base, size_t n, size_t size,
    int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

/*
 * The k-th smallest (0-based, k < n) of base[0..n), elements of size bytes
 * (at most UTIL_SELECT_MAX) ordered by cmp, by quickselect: base is
 * reordered so that the element returned is at index k.  Nothing is
 * allocated.
 */
void *
util_select(void *base, size_t n, size_t size, size_t k,
    int (*cmp)(const void *, const void *))
{
	unsigned char	*v = base, pivot[UTIL_SELECT_MAX], t[UTIL_SELECT_MAX];
	size_t		 lo = 0, hi = n - 1, i, j;

	while (lo < hi) {
		memcpy(pivot, v + (lo + (hi - lo) / 2) * size, size);
		i = lo;
		j = hi;
		while (i <= j) {
			while (cmp(v + i * size, pivot) < 0)
				i++;
			while (cmp(v + j * size, pivot) > 0)
				j--;
			if (i <= j) {
				memcpy(t, v + i * size, size);
				memcpy(v + i * size, v + j * size, size);
				memcpy(v + j * size, t, size);
				i++;
				if (j == 0)
					break;
				j--;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			break;
	}
	return (v + k * size);
}

/* What a file of mode m is, for a message: "a directory", "a device"... */
static const char *
util_file_kind(mode_t m)
{
	if (S_ISDIR(m))
		return ("a directory");
	if (S_ISFIFO(m))
		return ("a named pipe (FIFO)");
	if (S_ISCHR(m) || S_ISBLK(m))
		return ("a device");
	if (S_ISSOCK(m))
		return ("a socket");
	return ("not a regular file");
}

/*
 * Open path for reading if it is a regular file.  A directory, a FIFO, a
 * device or a socket is refused with one line that says which ("PATH: a
 * directory, not a file to read"), never waiting for a writer on a FIFO
 * (it is opened non-blocking, and only regular files are read).  Returns
 * the descriptor (blocking, close-on-exec), or -1 with *cause.
 */
int
util_open_input(const char *path, char **cause)
{
	struct stat	sb;
	int		fd;

	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) == -1) {
		*cause = xstrerror_cause("%s", path);
		return (-1);
	}
	if (fstat(fd, &sb) != 0) {
		*cause = xstrerror_cause("%s", path);
		close(fd);
		return (-1);
	}
	if (!S_ISREG(sb.st_mode)) {
		xasprintf(cause, "%s: %s, not a file to read", path,
		    util_file_kind(sb.st_mode));
		close(fd);
		return (-1);
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return (fd);
}

/* util_open_input() without keeping the file open: 0, or -1 with *cause. */
int
util_check_input(const char *path, char **cause)
{
	int	fd;

	if ((fd = util_open_input(path, cause)) == -1)
		return (-1);
	close(fd);
	return (0);
}

/* Is standard output a terminal? */
int
util_isatty_out(void)
{
	return (isatty(STDOUT_FILENO));
}

/* Is standard error a terminal? */
int
util_isatty_err(void)
{
	return (isatty(STDERR_FILENO));
}

/*
 * An unlinked temporary file for scratch data, in $TMPDIR (else /tmp),
 * named from prefix while it has a name: it goes when it is closed.
 * Returns the open descriptor, or -1 with errno set.
 */
int
util_scratch_file(const char *prefix)
{
	const char	*dir = getenv("TMPDIR");
	char		 path[4096];
	int		 fd;

	if ((size_t)snprintf(path, sizeof path, "%s/%s-XXXXXX", dir != NULL &&
	    *dir != '\0' ? dir : "/tmp", prefix) >= sizeof path) {
		errno = ENAMETOOLONG;
		return (-1);
	}
	if ((fd = mkstemp(path)) != -1)
		unlink(path);
	return (fd);
}

/*
 * mkstemp() for files a command leaves behind (a database or an export
 * written under a temporary name, then renamed): the same, except that the
 * file is made 0644 less the umask, as any file a command writes, where
 * mkstemp makes it 0600.  template ends in XXXXXX, which becomes the name
 * made.  Returns the open descriptor, or -1 with errno set.
 */
int
util_mkstemp(char *template)
{
	static const char	 chars[] = "abcdefghijklmnopqrstuvwxyz"
				     "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	static uint64_t		 state;
	size_t			 len = strlen(template), i;
	uint64_t		 r;
	int			 fd, tries;

	if (len < 6 || strcmp(template + len - 6, "XXXXXX") != 0) {
		errno = EINVAL;
		return (-1);
	}
	state ^= lib_now_ns() ^ ((uint64_t)getpid() << 32);
	for (tries = 0; tries < 1000; tries++) {
		/* xorshift64: names need to differ, not to be secret. */
		state = state != 0 ? state : 0x9e3779b97f4a7c15ULL;
		state ^= state << 13;
		state ^= state >> 7;
		state ^= state << 17;
		for (i = 0, r = state; i < 6; i++, r /= sizeof chars - 1)
			template[len - 6 + i] = chars[r % (sizeof chars - 1)];
		fd = open(template, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd != -1 || errno != EEXIST)
			return (fd);
	}
	return (-1);
}

/* Is there a file path+suffix that is not empty (or can we not tell)? */
static int
util_beside(const char *path, const char *suffix)
{
	struct stat	 sb;
	char		*name;
	int		 found;

	xasprintf(&name, "%s%s", path, suffix);
	if (stat(name, &sb) == 0)
		found = sb.st_size > 0;
	else
		found = errno != ENOENT;
	free(name);
	return (found);
}

/*
 * How a reader opens the existing database at path (util_sqlite_uri's
 * params) so that it leaves nothing beside it and changes nothing
 * (query.c says why): "mode=ro" when a -wal or -journal that is not empty
 * lies beside it (read through them, never roll back, leave them as
 * found), else "mode=rw" (never created; the caller writes nothing, so
 * SQLite's own close removes the -wal and -shm it made).
 */
const char *
util_sqlite_read_mode(const char *path)
{
	if (util_beside(path, "-wal") || util_beside(path, "-journal"))
		return ("mode=ro");
	return ("mode=rw");
}

/*
 * Write the file path through write(f, arg, cause): into a temporary file
 * beside it (util_mkstemp), renamed to path only when write returned 0 and
 * every byte reached the disk, so that a failure leaves path as it was and
 * no partial file.  Returns 0, or -1 with *cause (the caller frees it):
 * write's own, or "PATH: cannot create|write|rename: ERROR".
 */
int
util_write_file(const char *path, int (*write)(FILE *, void *, char **),
    void *arg, char **cause)
{
	char	*tmp;
	FILE	*f = NULL;
	int	 fd, rc = -1;

	xasprintf(&tmp, "%s.tmp-XXXXXX", path);
	if ((fd = util_mkstemp(tmp)) == -1 || (f = fdopen(fd, "w")) == NULL) {
		*cause = xstrerror_cause("%s: cannot create", path);
		if (fd != -1)
			close(fd);
		goto out;
	}
	rc = write(f, arg, cause);
	if (fclose(f) != 0 && rc == 0) {
		*cause = xstrerror_cause("%s: cannot write", path);
		rc = -1;
	}
	if (rc == 0 && rename(tmp, path) != 0) {
		*cause = xstrerror_cause("%s: cannot rename %s", path, tmp);
		rc = -1;
	}
	if (rc != 0)
		unlink(tmp);
out:
	free(tmp);
	return (rc);
}

/*
 * The SQLite URI of the file at path, with query parameters params (NULL:
 * none; "mode=ro&immutable=1").  Every database is opened through one,
 * with SQLITE_OPEN_URI, so that a name is always a file name: SQLite
 * built to read URIs would otherwise take "file:x.db?mode=memory" for a
 * database in memory.  Every byte but letters, digits and "/._~-" is
 * %-escaped.  The caller frees the result.
 */
char *
util_sqlite_uri(const char *path, const char *params)
{
	static const char	 hex[] = "0123456789ABCDEF";
	const unsigned char	*p;
	char			*uri, *u;

	/* "file:" "//" path ("%XX" per byte at most) "?" params '\0' */
	u = uri = xreallocarray(NULL, strlen(path) * 3 + 8 + (params != NULL ?
	    strlen(params) + 1 : 0), 1);
	u += sprintf(u, "file:%s", path[0] == '/' ? "//" : "");
	for (p = (const unsigned char *)path; *p != '\0'; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("/._~-", *p) != NULL)
			*u++ = (char)*p;
		else {
			*u++ = '%';
			*u++ = hex[*p >> 4];
			*u++ = hex[*p & 15];
		}
	}
	if (params != NULL)
		u += sprintf(u, "?%s", params);
	*u = '\0';
	return (uri);
}
