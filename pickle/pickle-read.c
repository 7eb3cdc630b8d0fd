/*
 * Buffered input of the pickle reader.
 *
 * In fd mode the window is a buffer of ours, refilled by pread() at the
 * file offset that follows it with the unparsed tail moved to its front, so
 * memory stays constant whatever the file size; pread() leaves the file
 * offset alone, so the two passes and the replays of shared values read
 * the same descriptor independently.  In buffer mode the window is the
 * caller's buffer and nothing is ever refilled.  A reader stops at its
 * limit: the end of the input, or the end of the range being replayed.
 * The parser takes bytes straight from [p, end) and calls
 * pickle_read_fill() only when fewer than it needs are there.  Progress
 * is reported from the refill path, so its cost is paid once per buffer.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "pickle-int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void
pickle_read_progress(struct pickle_reader *r, uint64_t done)
{
	if (r->cb == NULL || r->cb->progress == NULL)
		return;
	r->cb->progress(r->cb->arg, done, r->total);
}

/*
 * Start reading the total bytes of the regular file fd from offset 0 (fd
 * is not closed here, and its offset is not used).  Returns -1 with errno
 * set when out of memory.
 */
int
pickle_read_open(struct pickle_reader *r, int fd, uint64_t total,
    const struct pickle_callbacks *cb)
{
	memset(r, 0, sizeof *r);
	r->buf = malloc(PICKLE_READ_BUF);
	if (r->buf == NULL)
		return (-1);
	r->size = PICKLE_READ_BUF;
	r->fd = fd;
	r->start = r->p = r->end = r->buf;
	r->limit = r->total = total;
	r->next_progress = PICKLE_PROGRESS_STEP;
	r->cb = cb;
	return (0);
}

/* Start reading len bytes at buf, which must outlive the reader. */
void
pickle_read_buffer(struct pickle_reader *r, const void *buf, size_t len,
    const struct pickle_callbacks *cb)
{
	memset(r, 0, sizeof *r);
	r->fd = -1;
	r->data = r->start = r->p = buf;
	r->end = r->p + len;
	r->limit = r->total = len;
	r->cb = cb;
}

/*
 * Make r read bytes start to end of the input that from reads, through buf
 * (size bytes, fd mode), which holds wlen bytes of the input from offset
 * wbase, left there by an earlier range: when start lies in them, they are
 * used without a read (replays of neighbouring values, the common case,
 * share one read).  No progress is reported.
 */
void
pickle_read_range(struct pickle_reader *r, const struct pickle_reader *from,
    unsigned char *buf, size_t size, uint64_t wbase, size_t wlen,
    uint64_t start, uint64_t end)
{
	memset(r, 0, sizeof *r);
	r->fd = from->fd;
	r->total = from->total;
	r->limit = end;
	if (r->fd == -1) {
		r->data = r->start = from->data;
		r->p = r->data + start;
		r->end = r->data + end;
		return;
	}
	r->buf = buf;
	r->size = size;
	if (start >= wbase && start - wbase <= wlen) {
		r->base = wbase;
		r->start = buf;
		r->p = buf + (start - wbase);
		r->end = buf + wlen;
	} else {
		r->base = start;
		r->start = r->p = r->end = buf;
	}
}

/* Release the buffer of r (not its fd). */
void
pickle_read_close(struct pickle_reader *r)
{
	free(r->buf);
	r->buf = NULL;
}

/*
 * Make at least n (at most the buffer's size) bytes available at r->p,
 * none of them past the limit; the window is filled beyond the limit, up to
 * the end of the input, for the ranges that may follow.  Returns 0, or -1
 * with errno 0 at the limit or errno set by a failed read; the bytes that
 * were there stay available.
 */
int
pickle_read_fill(struct pickle_reader *r, size_t n)
{
	uint64_t	at;
	size_t		have, want;
	ssize_t		got;

	errno = 0;
	if ((size_t)(r->end - r->p) >= n)
		return (0);
	if (r->fd == -1 || n > r->size ||
	    pickle_read_offset(r) + n > r->limit)
		return (-1);
	have = (size_t)(r->end - r->p);
	r->base += (uint64_t)(r->p - r->start);
	memmove(r->buf, r->p, have);
	r->start = r->p = r->buf;
	r->end = r->buf + have;
	while (have < n) {
		at = r->base + have;
		want = r->size - have;
		if (r->total - at < want)
			want = (size_t)(r->total - at);
		got = pread(r->fd, r->buf + have, want, (off_t)at);
		if (got == -1 && errno == EINTR)
			continue;
		if (got <= 0)
			return (-1);
		have += (size_t)got;
		r->end = r->buf + have;
	}
	if (r->cb != NULL && r->base + have >= r->next_progress) {
		pickle_read_progress(r, r->base + have);
		r->next_progress = r->base + have + PICKLE_PROGRESS_STEP;
	}
	return (0);
}

/*
 * The byte at offset at of the input r reads, leaving r as it is; -1 with
 * errno set (0: past the end) when it cannot be read.
 */
int
pickle_read_byte(const struct pickle_reader *r, uint64_t at)
{
	unsigned char	b;
	ssize_t		n;

	errno = 0;
	if (at >= r->total)
		return (-1);
	if (r->fd == -1)
		return (r->data[at]);
	do
		n = pread(r->fd, &b, 1, (off_t)at);
	while (n == -1 && errno == EINTR);
	return (n == 1 ? b : -1);
}

/* Copy the next n bytes to dst.  Returns -1 as pickle_read_fill() does. */
int
pickle_read_copy(struct pickle_reader *r, void *dst, size_t n)
{
	unsigned char	*d = dst;
	size_t		 chunk;

	while (n > 0) {
		if (r->p == r->end && pickle_read_fill(r, 1) != 0)
			return (-1);
		chunk = (size_t)(r->end - r->p);
		if (chunk > n)
			chunk = n;
		memcpy(d, r->p, chunk);
		r->p += chunk;
		d += chunk;
		n -= chunk;
	}
	return (0);
}

/* Report the final progress: everything parsed so far. */
void
pickle_read_done(struct pickle_reader *r)
{
	pickle_read_progress(r, pickle_read_offset(r));
}
