/*
 * store-pending.c: the rows of a bulk load (an import) that wait for their
 * steps.
 *
 * An importer learns the steps only after the whole trace (its annotations
 * come last), and a row written before would need an UPDATE of every row
 * once they are known.  So a bulk load's allocation rows, final and
 * written once (no commit comes before the end), wait here in their order:
 * appended to an unlinked temporary file ($TMPDIR, else /tmp) through a
 * buffer, then inserted, with their steps, when the steps are known
 * (store_rows_assign_steps, through store-queue.c's writer thread) or
 * before anything else is (a commit, the end of the run).  They get the ids they would have had.  Memory: the buffer.
 */
#include "config.h"

#include "store-int.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Rows buffered before a write, and read back at once. */
#define PENDING_ROWS	2048

/* What failed when the temporary file cannot be written or read. */
#define PENDING_IO	"keep rows in a temporary file"

/* Write the buffered rows at the end of the file.  0, or -1 with *cause. */
static int
pending_write(struct store *s, char **cause)
{
	struct store_pending	*p = &s->pending;
	size_t			 len = p->nbuf * sizeof *p->buf, i;
	ssize_t			 w;

	if (p->fd == -1 && (p->fd = util_scratch_file("vramtrace-rows")) == -1)
		return (store_io_error(s, cause, PENDING_IO));
	for (i = 0; i < len; i += (size_t)w) {
		if ((w = pwrite(p->fd, (char *)p->buf + i, len - i,
		    p->size + (off_t)i)) <= 0)
			return (store_io_error(s, cause, PENDING_IO));
	}
	p->size += (off_t)len;
	p->nbuf = 0;
	return (0);
}

/*
 * Keep row a until store_pending_insert().  0, or -1 with *cause (the
 * temporary file cannot be written).
 */
int
store_pending_add(struct store *s, const struct store_allocation *a,
    char **cause)
{
	struct store_pending	*p = &s->pending;

	if (p->buf == NULL)
		p->buf = xreallocarray(NULL, PENDING_ROWS, sizeof *p->buf);
	p->buf[p->nbuf++] = *a;
	if (p->nbuf == PENDING_ROWS)
		return (pending_write(s, cause));
	return (0);
}

/* Whether rows are kept. */
int
store_pending_any(const struct store_pending *p)
{
	return (p->nbuf > 0 || p->size > 0);
}

/*
 * Insert the rows kept, in the order they came, with insert (which gives
 * them the steps known now), and forget them.  0, or -1 with *cause.
 */
int
store_pending_insert(struct store *s, int (*insert)(struct store *,
    const struct store_allocation *, char **), char **cause)
{
	struct store_pending	*p = &s->pending;
	off_t			 at;
	size_t			 i, n;
	ssize_t			 got;

	if (p->fd == -1) {
		for (i = 0; i < p->nbuf; i++) {
			if (insert(s, &p->buf[i], cause) != 0)
				return (-1);
		}
		p->nbuf = 0;
		return (0);
	}
	if (p->nbuf > 0 && pending_write(s, cause) != 0)
		return (-1);
	for (at = 0; at < p->size; at += got) {
		got = pread(p->fd, p->buf, PENDING_ROWS * sizeof *p->buf, at);
		if (got <= 0 || (size_t)got % sizeof *p->buf != 0)
			return (store_io_error(s, cause, PENDING_IO));
		n = (size_t)got / sizeof *p->buf;
		for (i = 0; i < n; i++) {
			if (insert(s, &p->buf[i], cause) != 0)
				return (-1);
		}
	}
	close(p->fd);
	p->fd = -1;
	p->size = 0;
	return (0);
}

/* Forget the rows kept and free what keeps them. */
void
store_pending_free(struct store_pending *p)
{
	if (p->fd != -1)
		close(p->fd);
	free(p->buf);
	memset(p, 0, sizeof *p);
	p->fd = -1;
}
