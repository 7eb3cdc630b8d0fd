/*
 * cuda-find-host.c: a process in a given state asks cuda_find_open() for
 * libcupti or the CUDA runtime, for t-cuda-find.sh.
 *
 *	cuda-find-host [-l FILE]... cupti|runtime TOOLKIT
 *
 * loads each FILE first (as PyTorch loads its runtime and CUPTI, global),
 * then prints "found MESSAGE" (the file and how it was found) and
 * "soname S" (what the stand-in says it is), or "none MESSAGE" and exits
 * 1; last "loaded N": how many files of the library's name the process
 * holds after the search (1 when it used the one already there).
 */
#include "config.h"

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cuda-find.h"

static const char	*host_stem;

static int
host_count(struct dl_phdr_info *info, size_t size, void *arg)
{
	const char	*base;

	(void)size;
	if (info->dlpi_name == NULL || *info->dlpi_name == '\0')
		return (0);
	base = strrchr(info->dlpi_name, '/');
	base = base != NULL ? base + 1 : info->dlpi_name;
	if (strncmp(base, host_stem, strlen(host_stem)) == 0 ||
	    strstr(info->dlpi_name, host_stem) != NULL)
		(*(int *)arg)++;
	return (0);
}

int
main(int argc, char **argv)
{
	const char	*(*name)(void);
	char		 msg[1024];
	void		*h;
	int		 c, which, n = 0;

	while ((c = getopt(argc, argv, "l:")) != -1) {
		if (c != 'l' || dlopen(optarg, RTLD_NOW | RTLD_GLOBAL) == NULL) {
			fprintf(stderr, "cuda-find-host: %s\n", c == 'l' ?
			    dlerror() : "usage: [-l FILE]... cupti|runtime "
			    "TOOLKIT");
			return (2);
		}
	}
	if (argc - optind != 2)
		return (2);
	which = strcmp(argv[optind], "cupti") == 0 ? CUDA_FIND_CUPTI :
	    CUDA_FIND_RUNTIME;
	host_stem = which == CUDA_FIND_CUPTI ? "libcupti" : "libcudart";
	h = cuda_find_open(which, argv[optind + 1], msg, sizeof msg);
	printf("%s %s\n", h != NULL ? "found" : "none", msg);
	if (h != NULL) {
		*(void **)&name = dlsym(h, "fake_cudalib");
		printf("soname %s\n", name != NULL ? name() : "?");
	}
	dl_iterate_phdr(host_count, &n);
	printf("loaded %d\n", n);
	return (h != NULL ? 0 : 1);
}
