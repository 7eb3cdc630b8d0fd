/*
 * libFuzzer target for the containers a snapshot may come in (unwrap.c,
 * unwrap-zip.c: gzip, xz, zstd, zip archives): each input is written to a
 * file and opened as `vramtrace import` opens it, and what it unpacks to
 * is read to its end.  A crash, a sanitizer report, a descriptor left
 * open or a file left in the directory (the unpacked pickle must have no
 * name) is a finding (abort).
 */

#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz-common.h"
#include "unwrap.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char	fuzz_dir[] = "/tmp/vramtrace-fuzz-unwrap-XXXXXX";
static char	fuzz_in[sizeof fuzz_dir + 16];

static void
fuzz_cleanup(void)
{
	unlink(fuzz_in);
	rmdir(fuzz_dir);
}

/* The lowest free descriptor: the same before and after an input. */
static int
fuzz_lowest_fd(void)
{
	int	fd = dup(0);

	close(fd);
	return (fd);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const only[] = { "in", NULL };
	char	 buf[65536], *name = NULL, *cause = NULL;
	FILE	*f;
	int	 fd, lowest;

	if (fuzz_in[0] == '\0') {
		if (mkdtemp(fuzz_dir) == NULL)
			abort();
		snprintf(fuzz_in, sizeof fuzz_in, "%s/in", fuzz_dir);
		setenv("TMPDIR", fuzz_dir, 1);
		fuzz_limit_files(64);
		atexit(fuzz_cleanup);
	}
	if ((f = fopen(fuzz_in, "wb")) == NULL ||
	    fwrite(data, 1, size, f) != size || fclose(f) != 0)
		abort();
	lowest = fuzz_lowest_fd();
	if (unwrap_open(fuzz_in, &fd, &name, &cause) == 0) {
		while (read(fd, buf, sizeof buf) > 0)
			continue;
		close(fd);
		free(name);
	} else
		free(cause);
	if (!fuzz_holds_only(fuzz_dir, only) || fuzz_lowest_fd() != lowest)
		abort();
	return (0);
}
