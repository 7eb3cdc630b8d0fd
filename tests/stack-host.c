/*
 * stack-host.c: a traced process that is not Python, for t-stacks.sh.
 *
 *	stack-host PROBE MODE
 *
 * loads the stack capture (PROBE, tests/libstack-probe.so) as CUDA loads
 * the injection library, starts it with MODE, allocates at 0x1000 from
 * host_site_a() and at 0x2000 from host_site_b(), frees the first, and
 * exits.  Linked with -rdynamic so that native stacks can name those two.
 */
#include "config.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>

void	host_site_a(void) __attribute__((noinline));
void	host_site_b(void) __attribute__((noinline));

static void	(*host_alloc)(uint64_t, uint64_t);

void
host_site_a(void)
{
	host_alloc(0x1000, 4096);
	__asm__ volatile("" ::: "memory");	/* not a tail call */
}

void
host_site_b(void)
{
	host_alloc(0x2000, 8192);
	__asm__ volatile("" ::: "memory");
}

int
main(int argc, char **argv)
{
	int	(*start)(const char *, unsigned);
	void	(*release)(uint64_t);
	void	*h;

	if (argc != 3 || (h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL)) ==
	    NULL) {
		fprintf(stderr, "usage: stack-host PROBE MODE (%s)\n",
		    dlerror());
		return (2);
	}
	*(void **)&start = dlsym(h, "probe_start");
	*(void **)&host_alloc = dlsym(h, "probe_alloc");
	*(void **)&release = dlsym(h, "probe_free");
	if (start == NULL || host_alloc == NULL || release == NULL ||
	    start(argv[2], 64) != 0)
		return (2);
	host_site_a();
	host_site_b();
	release(0x1000);
	return (0);
}
