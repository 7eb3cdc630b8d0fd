/*
 * Buffered input of the pickle reader.
 *
 * In fd mode the window is our PICKLE_READ_BUF buffer, refilled by read()
 * with the unparsed tail moved to its front, so memory stays constant
 * whatever the file size.  In buffer mode the window is the caller's whole
 * buffer and nothing is ever refilled.  The parser takes bytes straight from
 * [p, end) and calls pickle_read_fill() only when fewer than it needs are
 * there.  Progress is reported from the refill path, so its cost is paid
 * once per buffer, not per opcode.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "pickle-int.h"

#include <sys/stat.h>

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
 * Start reading fd (not closed here).  The size is taken from fstat() when
 * fd is a regular file.  Returns -1 with errno set when out of memory.
 */
int
pickle_read_open(struct pickle_reader *r, int fd,
    const struct pickle_callbacks *cb)
{
	struct stat	st;

	memset(r, 0, sizeof *r);
	r->buf = malloc(PICKLE_READ_BUF);
	if (r->buf == NULL)
		return (-1);
	r->fd = fd;
	r->start = r->p = r->end = r->buf;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		r->total = (uint64_t)st.st_size;
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
	r->start = r->p = buf;
	r->end = r->p + len;
	r->total = len;
	r->cb = cb;
}

/* Release the buffer of r (not its fd). */
void
pickle_read_close(struct pickle_reader *r)
{
	free(r->buf);
	r->buf = NULL;
}

/* File offset of the next unparsed byte. */
uint64_t
pickle_read_offset(const struct pickle_reader *r)
{
	return (r->base + (uint64_t)(r->p - r->start));
}

/*
 * Make at least n (at most PICKLE_READ_BUF) bytes available at r->p.
 * Returns 0, or -1 with errno 0 at the end of the input or errno set by a
 * failed read(); the bytes that were there stay available.
 */
int
pickle_read_fill(struct pickle_reader *r, size_t n)
{
	size_t	have;
	ssize_t	got;

	errno = 0;
	if ((size_t)(r->end - r->p) >= n)
		return (0);
	if (r->fd == -1 || n > PICKLE_READ_BUF)
		return (-1);
	have = (size_t)(r->end - r->p);
	r->base += (uint64_t)(r->p - r->start);
	memmove(r->buf, r->p, have);
	r->start = r->p = r->buf;
	r->end = r->buf + have;
	while (have < n) {
		got = read(r->fd, r->buf + have, PICKLE_READ_BUF - have);
		if (got == -1 && errno == EINTR)
			continue;
		if (got <= 0)
			return (-1);
		have += (size_t)got;
		r->end = r->buf + have;
	}
	if (r->base + have >= r->next_progress) {
		pickle_read_progress(r, r->base + have);
		r->next_progress = r->base + have + PICKLE_PROGRESS_STEP;
	}
	return (0);
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
