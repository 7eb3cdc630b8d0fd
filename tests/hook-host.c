/*
 * hook-host.c: lib/got.c without CUDA.  The host imports
 * hook_probe() from tests/hook/libhook-def.so (x + 1) and loads
 * tests/hook/libhook-use.so (argv[1]), whose hook_probe() is
 * libhook-other.so's (x + 100): the version it asks for is that one's
 * (tests/hook/other.map).  Then got_watch(): tests/hook/libhook-late.so
 * (argv[2]), which imports libhook-def.so's, is redirected as it loads;
 * copies of it (argv[3...]) loaded by as many threads at once are all
 * redirected once the threads are done.  Prints TAP.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "got.h"

int	hook_probe(int);

static int	(*probe_real)(int);

static int
probe_wrapper(int x)
{
	return (probe_real(x) * 10);
}

static int	n, failed;
static struct got_target t[2];
static int	watched;

/* A thread's dlopen of its copy of libhook-late.so (arg); its handle. */
static void *
load(void *arg)
{
	return (dlopen(arg, RTLD_LAZY));
}

/* What got_watch() calls after a dlopen: redirect what it loaded. */
static void
rescan(void)
{
	watched++;
	got_redirect(t, 1);
}

static void
ok(int cond, const char *what)
{
	printf("%s %d - %s\n", cond ? "ok" : "not ok", ++n, what);
	failed |= !cond;
}

int
main(int argc, char **argv)
{
	pthread_t		 threads[16];
	void			*use, *def, *late, *handles[16];
	int			 i, copies = 0, redirected = 0;
	int			(*use_fn)(int), (*by_address)(int), (*late_fn)(int);

	/* Each line as it is made: a crash shows how far it got. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 3 || argc - 3 > 16 || (use = dlopen(argv[1], RTLD_NOW)) ==
	    NULL || (def = dlopen("libhook-def.so", RTLD_NOW | RTLD_NOLOAD)) ==
	    NULL) {
		fprintf(stderr, "usage: hook-host LIBHOOK-USE LIBHOOK-LATE [COPY...]: %s\n",
		    dlerror());
		return (2);
	}
	*(void **)&use_fn = dlsym(use, "hook_use");
	memset(t, 0, sizeof t);
	t[0].name = "hook_probe";
	t[0].wrapper = (void *)probe_wrapper;
	t[1].name = "hook_nobody_imports";
	t[1].wrapper = (void *)probe_wrapper;
	/* Before the first call: the host's slot is still lazy. */
	printf("# redirecting hook_probe and hook_nobody_imports\n");
	got_redirect(t, 2);
	*(void **)&probe_real = t[0].real;
	ok(t[0].real == dlsym(def, "hook_probe"),
	    "the real function is the definition the host binds to");
	ok(t[0].patched >= 1, "the host's slots are redirected");
	ok(hook_probe(1) == 20, "a call reaches the wrapper, which calls the"
	    " real one");
	by_address = hook_probe;
	ok(by_address(2) == 30, "the function's address is the wrapper's");
	ok(t[0].elsewhere >= 1 && use_fn(1) == 101,
	    "an object bound to another definition is left alone");
	ok(t[1].real == NULL && t[1].patched == 0 && t[1].elsewhere == 0,
	    "a symbol nobody imports: nothing redirected");
	t[0].patched = t[0].elsewhere = 0;
	got_redirect(t, 1);
	ok(t[0].patched == 0 && hook_probe(1) == 20,
	    "a second pass redirects nothing again");

	ok(got_watch(rescan) >= 1, "dlopen is watched in the host");
	late = dlopen(argv[2], RTLD_LAZY);
	*(void **)&late_fn = late != NULL ? dlsym(late, "hook_use") : NULL;
	ok(watched == 1 && t[0].patched >= 1 && late_fn != NULL &&
	    late_fn(1) == 20, "an object loaded later is redirected before"
	    " its dlopen returns");
	ok(dlopen(argv[2], RTLD_LAZY) == late && watched == 1 &&
	    dlerror() == NULL, "a dlopen that loads nothing: no pass, no"
	    " error left for dlerror()");
	ok(dlopen("libhook-nosuch.so", RTLD_NOW) == NULL && dlerror() != NULL &&
	    watched == 1, "a dlopen that fails keeps its error for dlerror()");

	for (i = 3; i < argc; i++)
		copies += pthread_create(&threads[i - 3], NULL, load,
		    argv[i]) == 0;
	/* All joined first: a thread may return before its object is
	   redirected by the one that held the watch. */
	for (i = 0; i < copies; i++)
		pthread_join(threads[i], &handles[i]);
	for (i = 0; i < copies; i++) {
		*(void **)&late_fn = handles[i] != NULL ?
		    dlsym(handles[i], "hook_use") : NULL;
		redirected += late_fn != NULL && late_fn(1) == 20;
	}
	printf("# %d of %d copies loaded at once redirected, %d passes\n",
	    redirected, argc - 3, watched);
	ok(argc > 3 && redirected == argc - 3, "copies loaded by threads at"
	    " once: every one redirected once the threads are done");
	printf("1..%d\n", n);
	return (failed);
}
