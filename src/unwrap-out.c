/*
 * unwrap-out.c: the temporary file a packed snapshot's pickle is unpacked
 * into (unwrap.c says why a file): made at the first write, unlinked at
 * once, at most UNWRAP_MAX bytes, its CRC-32 kept as it is written; what
 * fails there is this machine's fault (out->local), not the input's.
 */
#include "config.h"

#include "vramtrace.h"
#include "unwrap-int.h"

#include <errno.h>
#include <inttypes.h>
#include <unistd.h>
#include <zlib.h>

/*
 * Append len bytes to out (unwrap-int.h).  0, or -1 with *cause, and
 * out->local set when the temporary file failed.
 */
int
unwrap_out_write(struct unwrap_out *out, const void *buf, size_t len,
    char **cause)
{
	size_t	done;
	ssize_t	n;

	if (len > UNWRAP_MAX - out->size) {
		xasprintf(cause, "%s: its %s content is larger than %" PRIu64
		    " GiB, the most vramtrace unpacks", out->path, out->what,
		    UNWRAP_MAX >> 30);
		return (-1);
	}
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
	return (0);
}
