/*
 * stack-hook.c: see the process's extension modules release and take back
 * the GIL.
 *
 * PyTorch (through pybind11) releases the GIL around every operation, so
 * the thread that allocates rarely holds it and may not read its own
 * Python frames.  Those frames cannot change before the thread takes the
 * GIL back, though, and then it may read them: what stack.c needs is to
 * run when a thread releases the GIL and right after it takes it back.
 * Extension modules call PyEval_SaveThread() and friends through their
 * global offset table, and so do the pybind11 helpers compiled into
 * libtorch_python.so; we point those table entries at wrappers that call
 * the real function and tell stack.c (through the two functions it gave).
 * Python's own calls (inside libpython or a statically linked interpreter)
 * are direct and stay unseen: a thread that released the GIL there has no
 * parked allocation.
 *
 * The patch (got.c): in every loaded object, the relocation slots that
 * import one of the functions below get the wrapper's address.  An object
 * that defines the functions (libpython, a python binary) has nothing
 * imported to patch.  Objects loaded later are patched by
 * stack_hook_rescan(), which the client's thread calls between batches
 * when the loader's count of loaded objects changed.  The patches
 * are never undone: this library is never unloaded, and with recording
 * off a wrapper only forwards.  A slot that the lazy binder resolves at
 * the very moment we write it may keep the real function: that object
 * then goes unseen, which costs stacks, never a wrong one (stack.c checks
 * who holds the GIL before it trusts a release it saw).
 *
 * Wrappers keep errno as the real functions do.
 */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>

#include "got.h"
#include "stack.h"

#if defined(__x86_64__) || defined(__aarch64__)
static void	 (*hook_releasing)(void);	/* stack.c's, given at start */
static void	 (*hook_acquired)(void);
static void	*(*real_save_thread)(void);
static void	 (*real_restore_thread)(void *);
static void	 (*real_acquire_thread)(void *);
static void	 (*real_release_thread)(void *);
static int	 (*real_ensure)(void);
static void	 (*real_release)(int);

static void *
hook_save_thread(void)
{
	int	saved = errno;

	hook_releasing();
	errno = saved;
	return (real_save_thread());
}

static void
hook_restore_thread(void *tstate)
{
	int	saved;

	real_restore_thread(tstate);
	saved = errno;
	hook_acquired();
	errno = saved;
}

static void
hook_acquire_thread(void *tstate)
{
	int	saved;

	real_acquire_thread(tstate);
	saved = errno;
	hook_acquired();
	errno = saved;
}

static void
hook_release_thread(void *tstate)
{
	int	saved = errno;

	hook_releasing();
	errno = saved;
	real_release_thread(tstate);
}

static int
hook_ensure(void)
{
	int	state, saved;

	state = real_ensure();
	saved = errno;
	hook_acquired();
	errno = saved;
	return (state);
}

static void
hook_release(int state)
{
	int	saved = errno;

	hook_releasing();
	errno = saved;
	real_release(state);
}

static const struct hook {
	const char	*name;
	void		*wrapper;
	void		**real;
} hooks[] = {
	{ "PyEval_SaveThread", (void *)hook_save_thread,
	    (void **)&real_save_thread },
	{ "PyEval_RestoreThread", (void *)hook_restore_thread,
	    (void **)&real_restore_thread },
	{ "PyEval_AcquireThread", (void *)hook_acquire_thread,
	    (void **)&real_acquire_thread },
	{ "PyEval_ReleaseThread", (void *)hook_release_thread,
	    (void **)&real_release_thread },
	{ "PyGILState_Ensure", (void *)hook_ensure, (void **)&real_ensure },
	{ "PyGILState_Release", (void *)hook_release,
	    (void **)&real_release },
};
#define NHOOKS	(sizeof hooks / sizeof hooks[0])

static struct got_target	hook_targets[NHOOKS];
static unsigned long long	hook_adds;	/* objects loaded at the scan */
static int			hook_on;

/*
 * Find the real functions and patch every loaded object, so that releasing
 * runs before each release of the GIL (with the GIL still held) and
 * acquired after each acquisition.  Returns 0, or -1 when the process has
 * not all of them or the platform is not one we patch (then only threads
 * that hold the GIL get Python stacks).
 */
int
stack_hook_start(void (*releasing)(void), void (*acquired)(void))
{
	size_t	k;

	hook_releasing = releasing;
	hook_acquired = acquired;
	for (k = 0; k < NHOOKS; k++) {
		if ((*hooks[k].real = dlsym(RTLD_DEFAULT, hooks[k].name)) ==
		    NULL)
			return (-1);
		hook_targets[k].name = hooks[k].name;
		hook_targets[k].wrapper = hooks[k].wrapper;
		hook_targets[k].real = *hooks[k].real;
	}
	(void)got_loaded_since(&hook_adds);
	got_redirect(hook_targets, NHOOKS);
	hook_on = 1;
	return (0);
}

/* Patch the objects loaded since the last scan, if any.  Any thread. */
void
stack_hook_rescan(void)
{
	if (hook_on && got_loaded_since(&hook_adds))
		got_redirect(hook_targets, NHOOKS);
}
#else
int
stack_hook_start(void (*releasing)(void), void (*acquired)(void))
{
	(void)releasing;
	(void)acquired;
	return (-1);
}

void
stack_hook_rescan(void)
{
}
#endif
