/*
 * pickle-spill.c: the records of values to replay, by memo index, on disk.
 *
 * When a value that a later opcode refers to leaves memory (a streamed
 * element, a streamed or dropped list), the memo keeps only where its bytes
 * are: a record of 24 bytes.  A snapshot in which every trace entry is
 * referenced twice has millions of them, so they live in an unlinked
 * temporary file ($TMPDIR, else /tmp), record i at a fixed place, behind a
 * direct-mapped cache of PICKLE_SPILL_PAGES pages.  Records are written and
 * read in nearly increasing index order, so the cache turns them into a few
 * large reads and writes.  Pages are allocated when first used and the file
 * is made when a page written to must leave the cache, so a small input
 * never makes one.  Holes read as zeros: no record.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "pickle-int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PICKLE_SPILL_PER_PAGE	(PICKLE_SPILL_PAGE / \
				    sizeof (struct pickle_spill_rec))

/* An empty spill: no file, no cache. */
void
pickle_spill_init(struct pickle_spill *s)
{
	s->fd = -1;
	memset(s->pages, 0, sizeof s->pages);
}

static int
pickle_spill_create(struct pickle_spill *s)
{
	const char	*dir = getenv("TMPDIR");
	char		 path[4096];

	if (dir == NULL || *dir == '\0')
		dir = "/tmp";
	if ((size_t)snprintf(path, sizeof path, "%s/vramtrace-memo-XXXXXX",
	    dir) >= sizeof path) {
		errno = ENAMETOOLONG;
		return (-1);
	}
	if ((s->fd = mkstemp(path)) == -1)
		return (-1);
	unlink(path);
	return (0);
}

static int
pickle_spill_io(struct pickle_spill *s, struct pickle_spill_page *pg,
    int write)
{
	unsigned char	*b = pg->data;
	off_t		 at = (off_t)(pg->number * PICKLE_SPILL_PAGE);
	size_t		 left = PICKLE_SPILL_PAGE;
	ssize_t		 n;

	if (s->fd == -1) {
		if (!write) {		/* nothing written yet */
			memset(b, 0, left);
			return (0);
		}
		if (pickle_spill_create(s) != 0)
			return (-1);
	}
	while (left > 0) {
		if (write)
			n = pwrite(s->fd, b, left, at);
		else
			n = pread(s->fd, b, left, at);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			return (-1);
		if (n == 0) {		/* past the end: a hole */
			memset(b, 0, left);
			break;
		}
		b += n;
		at += n;
		left -= (size_t)n;
	}
	return (0);
}

/* The cached page that holds record i, read in if needed; NULL on error. */
static struct pickle_spill_page *
pickle_spill_page(struct pickle_spill *s, uint32_t i)
{
	struct pickle_spill_page	**slot, *pg;
	uint64_t			  number = i / PICKLE_SPILL_PER_PAGE;

	slot = &s->pages[number % PICKLE_SPILL_PAGES];
	if ((pg = *slot) == NULL) {
		if ((pg = *slot = malloc(sizeof *pg)) == NULL)
			return (NULL);
		pg->number = UINT64_MAX;
	}
	if (pg->number == number)
		return (pg);
	if (pg->number != UINT64_MAX && pg->dirty &&
	    pickle_spill_io(s, pg, 1) != 0)
		return (NULL);
	pg->number = number;
	pg->dirty = 0;
	if (pickle_spill_io(s, pg, 0) != 0) {
		pg->number = UINT64_MAX;
		return (NULL);
	}
	return (pg);
}

/*
 * Write the record of memo index i, replacing any.  Returns -1 with errno
 * set when out of memory or when the temporary file cannot be made, read
 * or written.
 */
int
pickle_spill_put(struct pickle_spill *s, uint32_t i,
    const struct pickle_spill_rec *rec)
{
	struct pickle_spill_page	*pg;

	if ((pg = pickle_spill_page(s, i)) == NULL)
		return (-1);
	memcpy(pg->data + (i % PICKLE_SPILL_PER_PAGE) * sizeof *rec, rec,
	    sizeof *rec);
	pg->dirty = 1;
	return (0);
}

/*
 * Read the record of memo index i into *rec; all zeros if there is none.
 * Returns -1 with errno set when out of memory or when the file cannot be
 * read or written.
 */
int
pickle_spill_get(struct pickle_spill *s, uint32_t i,
    struct pickle_spill_rec *rec)
{
	struct pickle_spill_page	*pg;

	if ((pg = pickle_spill_page(s, i)) == NULL)
		return (-1);
	memcpy(rec, pg->data + (i % PICKLE_SPILL_PER_PAGE) * sizeof *rec,
	    sizeof *rec);
	return (0);
}

/* Close the file (it goes, being unlinked) and free the cache. */
void
pickle_spill_close(struct pickle_spill *s)
{
	size_t	i;

	if (s->fd != -1)
		close(s->fd);
	for (i = 0; i < PICKLE_SPILL_PAGES; i++)
		free(s->pages[i]);
	pickle_spill_init(s);
}
