/*
 * unwrap-zip.c: the pickle in a zip archive, as torch.save writes it.
 *
 * torch.save's file is a zip archive (PyTorch's writer is miniz): the
 * pickle is ARCHIVE/data.pkl, stored (not compressed) and aligned, with
 * its sizes left out of the local header (a data descriptor follows the
 * data) and a zip64 end record.  So the central directory is what is
 * read: the end record (zip64's where there is one), then the entries,
 * then the chosen entry's local header, for where its data begins.  The
 * entry chosen is torch.save's data.pkl, else the one entry whose name
 * ends in .pickle or .pkl (an archive made by hand); stored and deflated
 * entries are read, and their CRC-32 checked.  Every offset and size is
 * held to the file's size before it is used.
 */
#include "config.h"

#include "vramtrace.h"
#include "unwrap-int.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ZIP_END_LEN		22	/* end of central directory record */
#define ZIP_END64_LEN		56	/* zip64's */
#define ZIP_LOCATOR_LEN		20	/* zip64 end record locator */
#define ZIP_ENTRY_LEN		46	/* central directory entry */
#define ZIP_LOCAL_LEN		30	/* local file header */
#define ZIP_COMMENT_MAX		65535
#define ZIP_SATURATED		0xffffffffU	/* "see the zip64 field" */

/* An entry of the central directory. */
struct zip_entry {
	const unsigned char	*name;
	size_t			 name_len;
	unsigned		 flags;
	unsigned		 method;
	uint32_t		 crc;
	uint64_t		 csize;
	uint64_t		 usize;
	uint64_t		 offset;
};

static unsigned
get16(const unsigned char *p)
{
	return ((unsigned)p[0] | (unsigned)p[1] << 8);
}

static uint32_t
get32(const unsigned char *p)
{
	return ((uint32_t)get16(p) | (uint32_t)get16(p + 2) << 16);
}

static uint64_t
get64(const unsigned char *p)
{
	return ((uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32);
}

static int
zip_fail(const struct unwrap_out *out, char **cause, const char *what)
{
	xasprintf(cause, "%s: a damaged or unusual zip archive (%s)",
	    out->path, what);
	return (-1);
}

/* Read len bytes at off, all of them.  0, or -1 with *cause. */
static int
zip_read(int fd, uint64_t off, void *buf, size_t len,
    const struct unwrap_out *out, char **cause)
{
	size_t	done;
	ssize_t	n;

	for (done = 0; done < len; done += (size_t)n) {
		if ((n = pread(fd, (char *)buf + done, len - done,
		    (off_t)(off + done))) < 0) {
			*cause = xstrerror_cause("%s", out->path);
			return (-1);
		}
		if (n == 0)
			return (zip_fail(out, cause, "truncated"));
	}
	return (0);
}

/*
 * Find the central directory: *dir_off and *dir_len, and *count entries,
 * from the end record within the last bytes of the file (its comment
 * after it) and zip64's where its locator precedes it.  0, or -1.
 */
static int
zip_directory(int fd, uint64_t size, const struct unwrap_out *out,
    uint64_t *dir_off, uint64_t *dir_len, uint64_t *count, char **cause)
{
	unsigned char	*tail, rec[ZIP_END64_LEN];
	size_t		 len, i;
	uint64_t	 end, at;
	int		 found = 0;

	if (size < ZIP_END_LEN)
		return (zip_fail(out, cause, "no end of central directory"
		    " record: truncated?"));
	len = size < ZIP_END_LEN + ZIP_COMMENT_MAX ? (size_t)size :
	    ZIP_END_LEN + ZIP_COMMENT_MAX;
	tail = xmalloc(len);
	if (zip_read(fd, size - len, tail, len, out, cause) != 0) {
		free(tail);
		return (-1);
	}
	/* The last record whose comment runs to the end of the file. */
	for (i = len - ZIP_END_LEN + 1; i-- > 0;) {
		if (memcmp(tail + i, "PK\5\6", 4) == 0 &&
		    i + ZIP_END_LEN + get16(tail + i + 20) == len) {
			found = 1;
			break;
		}
	}
	if (!found) {
		free(tail);
		return (zip_fail(out, cause, "no end of central directory"
		    " record: truncated?"));
	}
	end = size - len + i;
	if (get16(tail + i + 4) != 0 || get16(tail + i + 6) != 0) {
		free(tail);
		return (zip_fail(out, cause, "an archive of several parts"));
	}
	*count = get16(tail + i + 10);
	*dir_len = get32(tail + i + 12);
	*dir_off = get32(tail + i + 16);
	free(tail);
	if (end >= ZIP_LOCATOR_LEN) {
		if (zip_read(fd, end - ZIP_LOCATOR_LEN, rec, ZIP_LOCATOR_LEN,
		    out, cause) != 0)
			return (-1);
		if (memcmp(rec, "PK\6\7", 4) == 0) {
			at = get64(rec + 8);
			if (at > end - ZIP_LOCATOR_LEN ||
			    end - ZIP_LOCATOR_LEN - at < ZIP_END64_LEN)
				return (zip_fail(out, cause,
				    "a zip64 end record out of place"));
			if (zip_read(fd, at, rec, ZIP_END64_LEN, out,
			    cause) != 0)
				return (-1);
			if (memcmp(rec, "PK\6\6", 4) != 0)
				return (zip_fail(out, cause,
				    "no zip64 end record where its locator"
				    " says"));
			*count = get64(rec + 32);
			*dir_len = get64(rec + 40);
			*dir_off = get64(rec + 48);
			end = at;
		}
	}
	if (*dir_off > end || *dir_len > end - *dir_off)
		return (zip_fail(out, cause,
		    "a central directory out of place"));
	if (*dir_len > UNWRAP_ZIP_DIR_MAX) {
		xasprintf(cause, "%s: a zip archive whose central directory"
		    " is %" PRIu64 " bytes (at most %" PRIu64 ")", out->path,
		    *dir_len, UNWRAP_ZIP_DIR_MAX);
		return (-1);
	}
	return (0);
}

/*
 * The zip64 extra field of an entry whose sizes or offset are saturated:
 * the 64-bit values, in their order, for those that are.  0, or -1 when
 * it lacks one.
 */
static int
zip_entry64(struct zip_entry *e, const unsigned char *extra, size_t len)
{
	size_t		 i, k, n;
	uint64_t	*want[3];

	n = 0;
	if (e->usize == ZIP_SATURATED)
		want[n++] = &e->usize;
	if (e->csize == ZIP_SATURATED)
		want[n++] = &e->csize;
	if (e->offset == ZIP_SATURATED)
		want[n++] = &e->offset;
	if (n == 0)
		return (0);
	for (i = 0; i + 4 <= len; i += 4 + get16(extra + i + 2)) {
		if (get16(extra + i) != 1)
			continue;
		if (get16(extra + i + 2) < 8 * n || i + 4 + 8 * n > len)
			return (-1);
		for (k = 0; k < n; k++)
			*want[k] = get64(extra + i + 4 + 8 * k);
		return (0);
	}
	return (-1);
}

static int
ends_with(const struct zip_entry *e, const char *suffix)
{
	size_t	n = strlen(suffix);

	return (e->name_len >= n && memcmp(e->name + e->name_len - n, suffix,
	    n) == 0);
}

/* How much an entry looks like the snapshot: 2 torch.save's, 1 a pickle. */
static int
zip_rank(const struct zip_entry *e)
{
	if (ends_with(e, "/data.pkl") || (e->name_len == 8 &&
	    memcmp(e->name, "data.pkl", 8) == 0))
		return (2);
	if (ends_with(e, ".pickle") || ends_with(e, ".pkl"))
		return (1);
	return (0);
}

/*
 * Choose the entry to read from the central directory dir (len bytes,
 * count entries): *best.  0, or -1 with *cause.
 */
static int
zip_choose(const unsigned char *dir, size_t len, uint64_t count,
    const struct unwrap_out *out, struct zip_entry *best, char **cause)
{
	struct zip_entry	 e;
	size_t			 at = 0, extra;
	uint64_t		 i;
	int			 rank, best_rank = 0, ties = 0;

	for (i = 0; i < count; i++) {
		if (len - at < ZIP_ENTRY_LEN ||
		    memcmp(dir + at, "PK\1\2", 4) != 0)
			return (zip_fail(out, cause,
			    "a central directory entry out of place"));
		e.flags = get16(dir + at + 8);
		e.method = get16(dir + at + 10);
		e.crc = get32(dir + at + 16);
		e.csize = get32(dir + at + 20);
		e.usize = get32(dir + at + 24);
		e.name_len = get16(dir + at + 28);
		extra = get16(dir + at + 30);
		e.offset = get32(dir + at + 42);
		e.name = dir + at + ZIP_ENTRY_LEN;
		if (len - at - ZIP_ENTRY_LEN < e.name_len + extra +
		    get16(dir + at + 32))
			return (zip_fail(out, cause,
			    "a central directory entry out of place"));
		if (zip_entry64(&e, e.name + e.name_len, extra) != 0)
			return (zip_fail(out, cause,
			    "an entry without its zip64 sizes"));
		at += ZIP_ENTRY_LEN + e.name_len + extra + get16(dir + at + 32);
		if ((rank = zip_rank(&e)) == 0 || rank < best_rank)
			continue;
		ties = rank == best_rank ? ties + 1 : 1;
		best_rank = rank;
		*best = e;
	}
	if (best_rank == 0) {
		xasprintf(cause, "%s: a zip archive without a pickle (no"
		    " data.pkl, .pickle or .pkl among its %" PRIu64
		    " entries)", out->path, count);
		return (-1);
	}
	if (ties > 1) {
		xasprintf(cause, "%s: a zip archive with %d pickles (%s):"
		    " extract the snapshot and give it", out->path, ties,
		    best_rank == 2 ? "data.pkl" : ".pickle or .pkl");
		return (-1);
	}
	return (0);
}

/* Unpack entry e of the archive on fd (size bytes) into out. */
static int
zip_extract(int fd, uint64_t size, const struct zip_entry *e,
    struct unwrap_out *out, char **cause)
{
	unsigned char	 local[ZIP_LOCAL_LEN], *buf;
	uint64_t	 data, done, n;
	int		 rc = 0;

	if (e->flags & 1)
		return (zip_fail(out, cause, "the pickle is encrypted"));
	if (e->method != 0 && e->method != 8) {
		xasprintf(cause, "%s: a zip archive whose pickle is compressed"
		    " with method %u (vramtrace reads stored and deflated"
		    " entries): extract it and give the pickle", out->path,
		    e->method);
		return (-1);
	}
	if (unwrap_out_over(out, e->usize, cause) != 0)
		return (-1);
	if (e->offset > size || size - e->offset < ZIP_LOCAL_LEN ||
	    zip_read(fd, e->offset, local, ZIP_LOCAL_LEN, out, cause) != 0 ||
	    memcmp(local, "PK\3\4", 4) != 0)
		return (zip_fail(out, cause, "no local header where the"
		    " central directory says"));
	data = e->offset + ZIP_LOCAL_LEN + get16(local + 26) +
	    get16(local + 28);
	if (data > size || size - data < e->csize)
		return (zip_fail(out, cause, "the pickle runs past the end"));
	if (e->method == 8)
		rc = unwrap_inflate_raw(fd, (off_t)data, e->csize, out, cause);
	else {
		buf = xmalloc(UNWRAP_CHUNK);
		for (done = 0; rc == 0 && done < e->csize; done += n) {
			n = e->csize - done < UNWRAP_CHUNK ? e->csize - done :
			    UNWRAP_CHUNK;
			if (zip_read(fd, data + done, buf, (size_t)n, out,
			    cause) != 0 || unwrap_out_write(out, buf,
			    (size_t)n, cause) != 0)
				rc = -1;
		}
		free(buf);
	}
	if (rc != 0)
		return (-1);
	if (out->size != e->usize)
		return (zip_fail(out, cause, "the pickle's size is not the"
		    " one its entry says"));
	if (out->crc != e->crc)
		return (zip_fail(out, cause, "the pickle's CRC-32 is not the"
		    " one its entry says"));
	return (0);
}

/*
 * The one pickle of the zip archive on fd (size bytes) into out, its entry
 * name in *entry (the caller frees it).  0, or -1 with *cause.
 */
int
unwrap_zip(int fd, uint64_t size, struct unwrap_out *out, char **entry,
    char **cause)
{
	struct zip_entry	 e;
	unsigned char		*dir;
	uint64_t		 dir_off, dir_len, count;
	int			 rc;

	if (zip_directory(fd, size, out, &dir_off, &dir_len, &count,
	    cause) != 0)
		return (-1);
	if (count > dir_len / ZIP_ENTRY_LEN)
		return (zip_fail(out, cause, "more entries than its central"
		    " directory holds"));
	dir = xmalloc(dir_len > 0 ? (size_t)dir_len : 1);
	memset(&e, 0, sizeof e);
	rc = zip_read(fd, dir_off, dir, (size_t)dir_len, out, cause);
	if (rc == 0)
		rc = zip_choose(dir, (size_t)dir_len, count, out, &e, cause);
	if (rc == 0) {
		*entry = xstrndup((const char *)e.name, e.name_len);
		rc = zip_extract(fd, size, &e, out, cause);
	}
	free(dir);
	return (rc);
}
