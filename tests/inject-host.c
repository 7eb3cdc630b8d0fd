/*
 * inject-host.c: a traced program that is not CUDA, for t-cuda-find.sh.
 *
 *	inject-host LIBRARY
 *
 * loads the injection library as the CUDA driver does and calls its entry
 * point, then its step and mark calls, and says that it went on.  Where
 * the library finds no libcupti (or no driver) it must say so on one
 * line, turn itself off and leave this program running.
 */
#include "config.h"

#include <dlfcn.h>
#include <stdio.h>

int
main(int argc, char **argv)
{
	int	(*init)(void);
	void	(*step)(void), (*mark)(const char *);
	void	*h;

	if (argc != 2 || (h = dlopen(argv[1], RTLD_NOW)) == NULL) {
		fprintf(stderr, "inject-host: %s\n", argc != 2 ?
		    "usage: inject-host LIBRARY" : dlerror());
		return (2);
	}
	*(void **)&init = dlsym(h, "InitializeInjection");
	*(void **)&step = dlsym(h, "vramtrace_inject_step");
	*(void **)&mark = dlsym(h, "vramtrace_inject_mark");
	if (init == NULL || step == NULL || mark == NULL)
		return (2);
	printf("InitializeInjection returned %d\n", init());
	step();
	mark("after");
	printf("the program went on\n");
	return (0);
}
