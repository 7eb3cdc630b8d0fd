/*
 * unwrap-out.c: the temporary file a packed snapshot's pickle is unpacked
 * into (unwrap.c says why a file): made at the first write, unlinked at
 * once, at most out->limit bytes (UNWRAP_MAX, or UNWRAP_RATIO times a
 * compressed file), its CRC-32 kept as it is written; what fails there is
 * this machine's fault (out->local), not the input's.
 */
#include "config.h"

#include "vramtrace.h"
#include "unwrap-int.h"

#include <errno.h>
#include <inttypes.h>
#include <unistd.h>
#include <zlib.h>

/* Contract in unwrap-int.h. */
uint64_t
unwrap_out_limit(uint64_t size)
{
	if (size > UNWRAP_MAX / UNWRAP_RATIO)
		return (UNWRAP_MAX);
	size *= UNWRAP_RATIO;
	return (size < UNWRAP_RATIO_FLOOR ? UNWRAP_RATIO_FLOOR : size);
}

/* Contract in unwrap-int.h. */
int
unwrap_out_over(const struct unwrap_out *out, uint64_t n, char **cause)
{
	if (n <= out->limit - out->size)
		return (0);
	if (out->limit == UNWRAP_MAX)
		xasprintf(cause, "%s: its %s content is larger than %" PRIu64
		    " GiB, the most vramtrace unpacks", out->path, out->what,
		    UNWRAP_MAX >> 30);
	else
		xasprintf(cause, "%s: its %s content goes past %" PRIu64
		    " MiB (vramtrace unpacks up to %d times a file's size, at"
		    " least %" PRIu64 " MiB): more than a snapshot compresses,"
		    " a decompression bomb (if it is a snapshot, decompress it"
		    " first)", out->path, out->what,
		    out->limit >> 20, UNWRAP_RATIO, UNWRAP_RATIO_FLOOR >> 20);
	return (-1);
}

/*
 * Whether a file that begins with byte c may be a pickle (PROTO), a zip
 * archive (torch.save's, opened in turn) or a database (which gets a line
 * of its own).
 */
static int
unwrap_out_may_begin(unsigned char c)
{
	return (c == 0x80 || c == 'P' || c == 'S');
}

/* Contract in unwrap-int.h. */
int
unwrap_out_write(struct unwrap_out *out, const void *buf, size_t len,
    char **cause)
{
	size_t	done;
	ssize_t	n;
	int	cut;

	if (unwrap_out_over(out, len, cause) != 0)
		return (-1);
	cut = out->unpacked && out->size == 0 && len > 0 &&
	    !unwrap_out_may_begin(*(const unsigned char *)buf);
	if (out->fd == -1 &&
	    (out->fd = util_scratch_file("vramtrace-unpacked")) == -1) {
		*cause = xstrerror_cause("%s: cannot make a temporary file for"
		    " its %s content", out->path, out->what);
		out->local = 1;
		return (-1);
	}
	for (done = 0; done < len; done += (size_t)n) {
		if ((n = write(out->fd, (const char *)buf + done,
		    len - done)) <= 0) {
			if (n == 0)
				errno = ENOSPC;
			*cause = xstrerror_cause("%s: cannot write its %s"
			    " content to a temporary file", out->path,
			    out->what);
			out->local = 1;
			return (-1);
		}
	}
	out->crc = (uint32_t)crc32(out->crc, buf, (uInt)len);
	out->size += len;
	out->cut = cut;
	return (cut ? -1 : 0);
}
