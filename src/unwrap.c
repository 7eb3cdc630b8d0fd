/*
 * unwrap.c: a snapshot pickle kept compressed, or saved with torch.save.
 *
 * People keep snapshots compressed (gzip, xz, zstd: unwrap-stream.c) and
 * some save them with torch.save, whose file is a zip archive with the
 * pickle in it (unwrap-zip.c).  unwrap_open() knows these by their first
 * bytes and unpacks the pickle into an unlinked temporary file
 * (unwrap-out.c), which the pickle reader then reads as it reads any
 * file (twice, at offsets: it needs a file, not a stream).  Memory is two
 * buffers and the decoder's state whatever the size (xz's is capped at
 * 256 MiB, zstd's window at its default 128 MiB); the disk holds the
 * pickle, at most UNWRAP_MAX bytes; the file has no name, so nothing is
 * left behind, whatever ends the program.  A zip archive found inside a
 * compressed file (torch.save's, kept compressed) is opened in turn.
 * Containers it knows but does not read (bzip2, lz4, the codecs a build
 * was made without, torch.save's legacy format) get a line that says how
 * to make a pickle of them.
 * Standard input ("-") and a FIFO are streams: what they give, to their
 * end, goes to such a file first, which is then read as a file would be.
 */
#include "config.h"

#include "vramtrace.h"
#include "unwrap-int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A zip archive (torch.save), or an empty one. */
#define ZIP_MAGIC	"PK\3\4"
#define ZIP_EMPTY_MAGIC	"PK\5\6"
/* torch.save's legacy format: a pickle of its magic number comes first. */
#define TORCH_LEGACY_MAGIC \
	"\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19"
/* What a compressed database unpacks to. */
#define SQLITE_MAGIC	"SQLite format 3"

/*
 * Whether the first n bytes of a file begin a container this file knows:
 * a codec of unwrap-stream.c, a zip archive, torch.save's legacy format.
 */
int
unwrap_sniff(const unsigned char *head, size_t n)
{
	return (unwrap_codec_of(head, n) != NULL ||
	    unwrap_has_magic(head, n, ZIP_MAGIC, 4) ||
	    unwrap_has_magic(head, n, ZIP_EMPTY_MAGIC, 4) ||
	    unwrap_has_magic(head, n, TORCH_LEGACY_MAGIC,
	    sizeof TORCH_LEGACY_MAGIC - 1));
}

/* Unpack the container on in (kind by head) into out.  0, or -1. */
static int
unpack(int in, const struct stat *sb, const unsigned char *head, size_t n,
    struct unwrap_out *out, char **entry, char **cause)
{
	const struct unwrap_codec	*codec;

	if (unwrap_has_magic(head, n, TORCH_LEGACY_MAGIC,
	    sizeof TORCH_LEGACY_MAGIC - 1)) {
		xasprintf(cause, "%s: written by torch.save in its legacy"
		    " format (_use_new_zipfile_serialization=False), which"
		    " vramtrace does not read: save the snapshot with"
		    " torch.cuda.memory._dump_snapshot, pickle.dump or"
		    " torch.save's default format", out->path);
		return (-1);
	}
	if (unwrap_has_magic(head, n, ZIP_MAGIC, 4) ||
	    unwrap_has_magic(head, n, ZIP_EMPTY_MAGIC, 4)) {
		out->what = "zip entry";
		return (unwrap_zip(in, (uint64_t)sb->st_size, out, entry,
		    cause));
	}
	codec = unwrap_codec_of(head, n);
	out->what = unwrap_codec_name(codec);
	if (unwrap_codec_refuse(codec, out->path, cause) != 0)
		return (-1);
	return (unwrap_stream(codec, in, 0, (uint64_t)sb->st_size, out,
	    cause));
}

/*
 * A compressed zip archive (a torch.save file kept compressed): when what
 * out holds is a zip, replace it with the pickle in the archive.  0, or
 * -1 with *cause.
 */
static int
unpack_zip_inside(struct unwrap_out *out, char **entry, char **cause)
{
	struct unwrap_out	inner;
	unsigned char		head[4];
	int			rc;

	if (pread(out->fd, head, sizeof head, 0) != (ssize_t)sizeof head ||
	    !unwrap_has_magic(head, sizeof head, ZIP_MAGIC, 4))
		return (0);
	memset(&inner, 0, sizeof inner);
	inner.path = out->path;
	inner.what = "zip entry";
	inner.fd = -1;
	inner.limit = out->limit;
	inner.unpacked = 1;
	rc = unwrap_zip(out->fd, out->size, &inner, entry, cause);
	close(out->fd);
	*out = inner;
	return (rc);
}

/* Whether the file on fd changed since sb was taken. */
static int
changed(int fd, const struct stat *sb)
{
	struct stat	now;

	return (fstat(fd, &now) != 0 || now.st_size != sb->st_size ||
	    now.st_mtim.tv_sec != sb->st_mtim.tv_sec ||
	    now.st_mtim.tv_nsec != sb->st_mtim.tv_nsec);
}

/*
 * What messages call the input at path: "standard input" for "-", else
 * path.
 */
const char *
unwrap_label(const char *path)
{
	return (strcmp(path, "-") == 0 ? "standard input" : path);
}

/*
 * Copy the stream on fd to its end into out, whose temporary file it
 * makes even when the stream is empty, and close fd.  out's descriptor,
 * or -1 with *cause (and out's file closed).
 */
static int
spool(int fd, struct unwrap_out *out, char **cause)
{
	static char	buf[UNWRAP_CHUNK];
	ssize_t		n;
	int		rc = 0;

	while (rc == 0 && (n = read(fd, buf, sizeof buf)) != 0) {
		if (n == -1 && errno != EINTR) {
			*cause = xstrerror_cause("%s", out->path);
			rc = -1;
		} else if (n > 0)
			rc = unwrap_out_write(out, buf, (size_t)n, cause);
	}
	close(fd);
	if (rc == 0 && out->fd == -1)
		rc = unwrap_out_write(out, "", 0, cause);
	if (rc != 0 && out->fd != -1) {
		close(out->fd);
		out->fd = -1;
	}
	return (out->fd);
}

/*
 * Open the FIFO at path and spool what it gives into out.  A FIFO that
 * has no writer yet reads as empty when opened without waiting: then it
 * is opened again, waiting for one, and standard error says so.  out's
 * descriptor, or -1 with *cause.
 */
static int
open_fifo(const char *path, struct unwrap_out *out, char **cause)
{
	ssize_t	n = 0;
	char	first;
	int	fd;

	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) != -1 &&
	    (n = read(fd, &first, 1)) == 0) {
		log_warn("%s: a named pipe (FIFO) without a writer: waiting"
		    " for one", path);
		close(fd);
		fd = open(path, O_RDONLY | O_CLOEXEC);
	} else if (fd != -1 && n == -1 && errno != EAGAIN) {
		close(fd);
		fd = -1;
	}
	if (fd == -1 || fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) &
	    ~O_NONBLOCK) == -1) {
		*cause = xstrerror_cause("%s", path);
		if (fd != -1)
			close(fd);
		return (-1);
	}
	if (n == 1 && unwrap_out_write(out, &first, 1, cause) != 0) {
		close(fd);
		if (out->fd != -1)
			close(out->fd);
		out->fd = -1;
		return (-1);
	}
	return (spool(fd, out, cause));
}

/*
 * Open path ("-": standard input) for reading: a regular file as it is;
 * a stream (standard input as a pipe or a socket, a FIFO) spooled into out
 * first, whose descriptor then comes back; anything else is refused as
 * util_open_input() refuses it.  The descriptor, or -1 with *cause
 * (out->local set when the temporary file failed).
 */
static int
open_input(const char *path, struct unwrap_out *out, char **cause)
{
	struct stat	sb;
	int		fd;

	out->what = "piped";
	if (strcmp(path, "-") != 0)
		return (stat(path, &sb) == 0 && S_ISFIFO(sb.st_mode) ?
		    open_fifo(path, out, cause) : util_open_input(path, cause));
	if ((fd = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 0)) == -1 ||
	    fstat(fd, &sb) != 0) {
		*cause = xstrerror_cause("%s", out->path);
		if (fd != -1)
			close(fd);
		return (-1);
	}
	if (S_ISREG(sb.st_mode))
		return (fd);
	if (S_ISFIFO(sb.st_mode) || S_ISSOCK(sb.st_mode))
		return (spool(fd, out, cause));
	xasprintf(cause, "%s: a terminal or a device, not a snapshot: give"
	    " a file, or pipe one in", out->path);
	close(fd);
	return (-1);
}

/*
 * The snapshot pickle at input ("-": standard input), open for reading:
 * the file, or its content unpacked into an unlinked file (unwrap.h).  0, or with *cause -1 (the
 * file is at fault) or UNWRAP_FAIL_LOCAL (the temporary file failed).
 */
int
unwrap_open(const char *input, int *fd, char **name, char **cause)
{
	struct unwrap_out	 out;
	struct stat		 sb;
	unsigned char		 head[UNWRAP_SNIFF_LEN];
	const char		*path;
	char			*entry = NULL;
	ssize_t			 n;
	int			 in;

	*fd = -1;
	*name = NULL;
	path = unwrap_label(input);
	memset(&out, 0, sizeof out);
	out.path = path;
	out.fd = -1;
	out.limit = UNWRAP_MAX;
	if ((in = open_input(input, &out, cause)) == -1)
		return (out.local ? UNWRAP_FAIL_LOCAL : -1);
	out.fd = -1;
	out.size = 0;
	out.crc = 0;
	out.unpacked = 1;
	if (fstat(in, &sb) != 0 || (n = pread(in, head, sizeof head, 0)) < 0) {
		*cause = xstrerror_cause("%s", path);
		close(in);
		return (-1);
	}
	if (!unwrap_sniff(head, (size_t)n)) {
		*fd = in;
		*name = xstrdup(path);
		return (0);
	}
	out.limit = unwrap_out_limit((uint64_t)sb.st_size);
	if (unpack(in, &sb, head, (size_t)n, &out, &entry, cause) != 0 &&
	    !out.cut)
		goto fail;
	if (changed(in, &sb)) {
		xasprintf(cause, "%s: changed while it was read", path);
		goto fail;
	}
	/* Nothing unpacked still makes the (empty) file. */
	if (out.fd == -1 && unwrap_out_write(&out, "", 0, cause) != 0)
		goto fail;
	if (entry == NULL && unpack_zip_inside(&out, &entry, cause) != 0 &&
	    !out.cut)
		goto fail;
	if (pread(out.fd, head, sizeof SQLITE_MAGIC, 0) ==
	    (ssize_t)sizeof SQLITE_MAGIC && memcmp(head, SQLITE_MAGIC,
	    sizeof SQLITE_MAGIC) == 0) {
		xasprintf(cause, "%s: its %s content is a database, not a"
		    " snapshot: unpack it and give the database", path,
		    out.what);
		goto fail;
	}
	close(in);
	*fd = out.fd;
	if (entry != NULL)
		xasprintf(name, "%s (%s)", path, entry);
	else
		xasprintf(name, "%s (%s content)", path, out.what);
	free(entry);
	return (0);

fail:
	if (out.fd != -1)
		close(out.fd);
	close(in);
	free(entry);
	return (out.local ? UNWRAP_FAIL_LOCAL : -1);
}
