/*
 * fuzz-common.c: what the fuzz targets that write files share: a limit on
 * file sizes, and a check that nothing was left behind.
 */

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "fuzz-common.h"

void
fuzz_limit_files(unsigned mib)
{
	struct rlimit	rl = { (rlim_t)mib << 20, (rlim_t)mib << 20 };

	signal(SIGXFSZ, SIG_IGN);
	if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
		abort();
}

int
fuzz_holds_only(const char *dir, const char *const *names)
{
	const char *const	*n;
	struct dirent		*de;
	DIR			*d;
	int			 ok = 1;

	if ((d = opendir(dir)) == NULL)
		return (0);
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		for (n = names; *n != NULL && strcmp(*n, de->d_name) != 0; n++)
			continue;
		if (*n != NULL)
			continue;
		fprintf(stderr, "left behind: %s\n", de->d_name);
		ok = 0;
	}
	closedir(d);
	return (ok);
}
