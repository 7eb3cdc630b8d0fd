/*
 * hook-host.c: lib/got.c without CUDA.  The host imports
 * hook_probe() from tests/hook/libhook-def.so (x + 1) and loads
 * tests/hook/libhook-use.so (argv[1]), whose hook_probe() is
 * libhook-other.so's (x + 100): the version it asks for is that one's
 * (tests/hook/other.map).  dlopen is never redirected.  Then
 * got_loaded_since(): tests/hook/libhook-late.so (argv[2]), which imports
 * libhook-def.so's, is seen loaded and is redirected by the next pass;
 * copies of it (argv[3...]) loaded by as many threads at once while this
 * one makes passes (as the injection library's client thread does) are all
 * redirected by the pass after they are loaded, with no deadlock.
 * got_replace(): the real hook_probe kept in the host's writable data is
 * replaced, not where the loader made it read-only, not on the heap, not
 * in an object left out (libhook-def.so's hook_table).  Prints TAP.
 */
#include "config.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "got.h"

int	hook_probe(int);

static int	(*probe_real)(int);

static int
probe_wrapper(int x)
{
	return (probe_real(x) * 10);
}

/* Written at run time, and read-only after relocation. */
static int	(*table[2])(int);
static int	(*const fixed)(int) = hook_probe;

static int	n, failed;
static struct got_target t[2], loader;

/* A thread's dlopen of its copy of libhook-late.so (arg); its handle. */
static void *
load(void *arg)
{
	return (dlopen(arg, RTLD_LAZY));
}

static void
ok(int cond, const char *what)
{
	printf("%s %d - %s\n", cond ? "ok" : "not ok", ++n, what);
	failed |= !cond;
}

/* The real hook_probe, kept on the heap, which got_replace() leaves. */
static int	(**replace_real)(int);

static int
replace_wrapper(int x)
{
	return ((*replace_real)(x) * 10);
}

/* got_replace() of the real hook_probe by replace_wrapper. */
static void
replaced(void)
{
	void		*from = (void *)probe_real;
	void		*to = (void *)replace_wrapper;
	void		**heap, *def, **kept;
	const void	*skip;
	long		 r;

	def = dlopen("libhook-def.so", RTLD_NOW | RTLD_NOLOAD);
	kept = def != NULL ? dlsym(def, "hook_table") : NULL;
	if ((heap = malloc(sizeof *heap)) == NULL || kept == NULL ||
	    *kept != from || (replace_real = malloc(sizeof *replace_real)) ==
	    NULL) {
		ok(0, "got_replace: set up");
		return;
	}
	*heap = from;
	*replace_real = probe_real;
	table[0] = probe_real;
	skip = kept;
	r = got_replace(&from, &to, 1, &skip, 1);
	printf("# got_replace: %ld words\n", r);
	ok(r >= 1 && table[0] == replace_wrapper && table[0](1) == 20 &&
	    table[1] == NULL, "got_replace: a pointer the program keeps in"
	    " writable data is replaced");
	ok(*(int (*volatile const *)(int))&fixed == from,
	    "got_replace: one the loader made read-only is left alone");
	ok(*heap == from, "got_replace: the heap is not looked at");
	ok(*kept == from, "got_replace: an object left out keeps its own");
	free(heap);
	dlclose(def);
}

int
main(int argc, char **argv)
{
	pthread_t		 threads[16];
	void			*use, *def, *late, *handles[16];
	int			 i, copies = 0, redirected = 0, passes = 0;
	unsigned long long	 adds = 0;
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
	loader.name = "dlopen";
	loader.wrapper = (void *)probe_wrapper;
	got_redirect(&loader, 1);
	ok(loader.real == NULL && loader.patched == 0 && dlopen(NULL,
	    RTLD_NOW) != NULL, "dlopen, which acts for its caller, is never"
	    " redirected");

	ok(got_loaded_since(&adds) && !got_loaded_since(&adds),
	    "the loader's count is read, and stays while nothing loads");
	late = dlopen(argv[2], RTLD_LAZY);
	*(void **)&late_fn = late != NULL ? dlsym(late, "hook_use") : NULL;
	ok(got_loaded_since(&adds) && late_fn != NULL && late_fn(1) == 2,
	    "an object loaded later is seen, and calls the real function");
	t[0].patched = 0;
	got_redirect(t, 1);
	ok(t[0].patched >= 1 && late_fn(1) == 20 &&
	    dlopen(argv[2], RTLD_LAZY) == late && !got_loaded_since(&adds),
	    "the next pass redirects it; a dlopen that loads nothing is not"
	    " seen");

	for (i = 3; i < argc; i++)
		copies += pthread_create(&threads[i - 3], NULL, load,
		    argv[i]) == 0;
	for (i = 0; i < copies; i++) {
		while (pthread_tryjoin_np(threads[i], &handles[i]) != 0) {
			if (got_loaded_since(&adds)) {
				passes++;
				got_redirect(t, 1);
			}
		}
	}
	if (got_loaded_since(&adds)) {
		passes++;
		got_redirect(t, 1);
	}
	for (i = 0; i < copies; i++) {
		*(void **)&late_fn = handles[i] != NULL ?
		    dlsym(handles[i], "hook_use") : NULL;
		redirected += late_fn != NULL && late_fn(1) == 20;
	}
	printf("# %d of %d copies loaded at once redirected, %d passes\n",
	    redirected, argc - 3, passes);
	ok(argc > 3 && redirected == argc - 3, "copies loaded by threads"
	    " while passes run: every one redirected by the pass after");
	replaced();
	printf("1..%d\n", n);
	return (failed);
}
