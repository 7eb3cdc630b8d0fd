/*
 * libFuzzer target for the containers a snapshot may come in (unwrap.c,
 * unwrap-zip.c: gzip, xz, zstd, zip archives): each input is written to a
 * file and opened as `vramtrace import` opens it, and what it unpacks to
 * is read to its end.  A crash, a sanitizer report, a descriptor left
 * open or a file left in the directory (the unpacked pickle must have no
 * name) is a finding (abort).
 */

#include "config.h"

#include <dirent.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

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

/* The directory holds the input only. */
static int
fuzz_only_input(void)
{
	struct dirent	*de;
	DIR		*d;
	int		 ok = 1;

	if ((d = opendir(fuzz_dir)) == NULL)
		return (0);
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0 ||
		    strcmp(de->d_name, "in") == 0)
			continue;
		fprintf(stderr, "left behind: %s\n", de->d_name);
		ok = 0;
	}
	closedir(d);
	return (ok);
}

/* The lowest free descriptor: the same before and after an input. */
static int
fuzz_lowest_fd(void)
{
	int	fd = dup(0);

	close(fd);
	return (fd);
}

/*
 * A file bigger than 64 MiB fails to be written (EFBIG, SIGXFSZ ignored),
 * as on a full disk: a compressed input that unpacks to gigabytes (zstd
 * and xz reach ratios of thousands) is then quick to refuse.
 */
static void
fuzz_limit_files(void)
{
	struct rlimit	rl = { (rlim_t)64 << 20, (rlim_t)64 << 20 };

	signal(SIGXFSZ, SIG_IGN);
	if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	 buf[65536], *name = NULL, *cause = NULL;
	FILE	*f;
	int	 fd, lowest;

	if (fuzz_in[0] == '\0') {
		if (mkdtemp(fuzz_dir) == NULL)
			abort();
		snprintf(fuzz_in, sizeof fuzz_in, "%s/in", fuzz_dir);
		setenv("TMPDIR", fuzz_dir, 1);
		fuzz_limit_files();
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
	if (!fuzz_only_input() || fuzz_lowest_fd() != lowest)
		abort();
	return (0);
}
