/*
 * stack.c: which stack an allocation gets, and the allocations that wait
 * for theirs (see stack.h for the whole picture).
 *
 * stack_alloc() runs on the allocating thread, inside the CUPTI callback:
 *
 *  - a thread that holds the GIL has its Python stack read at once;
 *  - a thread that released the GIL through a hooked call (stack-hook.c)
 *    with Python frames on its stack is "frozen": its allocation waits in
 *    the thread's slot, and when the thread takes the GIL back
 *    (stack_gil_acquired()) its stack, the same as at the allocation, is
 *    read once for all that waited;
 *  - any other allocation (a thread with no Python frame, a process that
 *    is not Python) gets a native stack if native stacks were asked for,
 *    else none.
 *
 * A slot holds STACK_PARK_MAX events; an allocation that finds it full
 * goes without a Python stack.  The client's thread calls stack_sweep()
 * between batches: events that waited STACK_PARK_NS leave without a Python
 * stack (a long operation, a thread that never comes back), well before the
 * store's reordering window (2 s) would apply later events first.  A thread
 * that exits hands its waiting events over first (a thread key's
 * destructor).
 *
 * A slot is claimed for good by the first thread that parks in it and
 * given back when that thread exits; its lock is shared only with the
 * sweeper.  The frozen flag is the thread's own.  Two facts keep an
 * attribution sound: the Python stack is only read with the GIL held, and
 * events still waiting when their thread releases the GIL again, or when
 * it is found holding the GIL, mean a release or acquisition went unseen:
 * they leave without a Python stack rather than with a later one.
 */
#include "config.h"

#include <pthread.h>
#include <string.h>

#include "client.h"
#include "stack.h"

#define STACK_SLOTS	256
#define STACK_PARK_MAX	32
#define STACK_PARK_NS	(500ull * 1000 * 1000)

struct stack_slot {
	pthread_mutex_t	 lock;
	int		 used;		/* claimed by a thread (atomic) */
	unsigned	 n;		/* written under lock, read atomically */
	struct event	 ev[STACK_PARK_MAX];
};

static struct stack_config	 stack_config;
static int			 stack_on;
static int			 stack_python;	/* Python stacks can be had */
static struct stack_slot	 stack_slots[STACK_SLOTS];
static pthread_key_t		 stack_key;
static __thread struct stack_slot *stack_self;
static __thread int		 stack_frozen;

/* Hand the events of slot s over, giving them site if not 0. */
static void
stack_unpark(struct stack_slot *s, uint32_t site, uint64_t before)
{
	struct event	out[STACK_PARK_MAX];
	unsigned	n = 0, i;

	pthread_mutex_lock(&s->lock);
	while (n < s->n && s->ev[n].time_ns < before)
		n++;
	memcpy(out, s->ev, n * sizeof *out);
	memmove(s->ev, s->ev + n, (s->n - n) * sizeof *s->ev);
	__atomic_store_n(&s->n, s->n - n, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&s->lock);
	for (i = 0; i < n; i++) {
		if (site != 0)
			out[i].u.alloc.site = site;
		client_emit(&out[i]);
	}
}

static int
stack_waiting(void)
{
	return (stack_self != NULL &&
	    __atomic_load_n(&stack_self->n, __ATOMIC_RELAXED) != 0);
}

static void
stack_thread_exit(void *arg)
{
	struct stack_slot	*s = arg;

	stack_unpark(s, 0, UINT64_MAX);
	__atomic_store_n(&s->used, 0, __ATOMIC_RELEASE);
}

/* This thread's slot, claiming one the first time; NULL if none is free. */
static struct stack_slot *
stack_claim(void)
{
	size_t	i;
	int	free_slot;

	if (stack_self != NULL)
		return (stack_self);
	for (i = 0; i < STACK_SLOTS; i++) {
		free_slot = 0;
		if (__atomic_compare_exchange_n(&stack_slots[i].used,
		    &free_slot, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
			stack_self = &stack_slots[i];
			pthread_setspecific(stack_key, stack_self);
			return (stack_self);
		}
	}
	return (NULL);
}

/* Keep ev until its thread takes the GIL back; 0 if it cannot wait. */
static int
stack_park(const struct event *ev)
{
	struct stack_slot	*s;
	int			 parked = 0;

	if ((s = stack_claim()) == NULL)
		return (0);
	pthread_mutex_lock(&s->lock);
	if (s->n < STACK_PARK_MAX) {
		s->ev[s->n] = *ev;
		__atomic_store_n(&s->n, s->n + 1, __ATOMIC_RELAXED);
		parked = 1;
	}
	pthread_mutex_unlock(&s->lock);
	return (parked);
}

static void
stack_fork_child(void)
{
	stack_on = 0;	/* a fork child is not recorded (client.c) */
}

/*
 * This thread is about to release the GIL (it holds it now): if it has
 * Python frames, they stay as they are until it takes the GIL back.
 */
static void
stack_gil_releasing(void)
{
	if (!stack_on || !stack_python)
		return;
	if (stack_waiting())	/* the last acquisition went unseen */
		stack_unpark(stack_self, 0, UINT64_MAX);
	stack_frozen = stack_python_has_frames();
}

/*
 * This thread took the GIL back: the allocations it made meanwhile get the
 * stack it has now, which is the one it had then.
 */
static void
stack_gil_acquired(void)
{
	if (!stack_frozen)
		return;
	stack_frozen = 0;
	if (stack_on && stack_waiting())
		stack_unpark(stack_self, stack_python_site(stack_config.depth),
		    UINT64_MAX);
}

/*
 * Give allocation events the stacks config asks for, from now on: find
 * Python, patch the GIL calls, warm the native unwinder.  Called once, by
 * InitializeInjection, after the client started; the caller has the
 * client's thread call stack_sweep().  Returns 0; the kinds that cannot be
 * had in this process are left out without a word.
 */
int
stack_start(const struct stack_config *config)
{
	size_t	i;

	stack_config = *config;
	if (stack_config.kinds == 0 || stack_config.depth == 0)
		return (0);
	for (i = 0; i < STACK_SLOTS; i++)
		pthread_mutex_init(&stack_slots[i].lock, NULL);
	if ((stack_config.kinds & LIB_STACK_PYTHON) &&
	    stack_python_start() == 0 &&
	    pthread_key_create(&stack_key, stack_thread_exit) == 0) {
		stack_python = 1;
		stack_hook_start(stack_gil_releasing, stack_gil_acquired);
	}
	if (stack_config.kinds & LIB_STACK_NATIVE)
		stack_native_start();
	pthread_atfork(NULL, NULL, stack_fork_child);
	stack_on = 1;
	return (0);
}

/*
 * Give the allocation ev (EVENT_ALLOC, on the allocating thread) its stack.
 * Returns 1 when ev waits for its thread to take the GIL back (the caller
 * must not emit it: it will be), 0 when the caller emits it now.
 */
int
stack_alloc(struct event *ev)
{
	if (!stack_on)
		return (0);
	if (stack_python) {
		if (stack_python_held()) {
			if (stack_waiting())	/* an acquisition went unseen */
				stack_unpark(stack_self, 0, UINT64_MAX);
			stack_frozen = 0;
			ev->u.alloc.site = stack_python_site(stack_config.depth);
		} else if (stack_frozen) {
			if (stack_config.kinds & LIB_STACK_NATIVE)
				ev->u.alloc.site = stack_native_site(
				    stack_config.depth);
			if (stack_park(ev))
				return (1);
		}
	}
	if (ev->u.alloc.site == 0 && (stack_config.kinds & LIB_STACK_NATIVE))
		ev->u.alloc.site = stack_native_site(stack_config.depth);
	return (0);
}

/*
 * Send a caching allocator's block allocation (freed 0) or free (freed 1)
 * that PyTorch's allocation history recorded: at time_ns on device, of
 * bytes at address, on stream (a CUPTI id, or EVENT_NONE), with stack (a
 * site string, "!python" and its frames) or NULL.  The client must be on.
 */
void
stack_block(int freed, uint64_t time_ns, int32_t device, uint64_t address,
    uint64_t bytes, uint64_t stream, const char *stack)
{
	struct event	ev;

	memset(&ev, 0, sizeof ev);
	ev.type = freed ? EVENT_FREE : EVENT_ALLOC;
	ev.time_ns = time_ns;
	ev.u.alloc.address = address;
	ev.u.alloc.bytes = bytes;
	ev.u.alloc.requested = EVENT_NONE;
	ev.u.alloc.stream = stream;
	ev.u.alloc.correlation = EVENT_NONE;
	ev.u.alloc.device = device;
	ev.u.alloc.layer = EVENT_LAYER_BLOCK;
	if (!freed && stack != NULL)
		ev.u.alloc.site = client_string(stack);
	client_emit(&ev);
}

/*
 * Between two batches (the client's thread): let the allocations that
 * waited too long go, all of them when final; define the strings of new
 * native stacks; patch objects loaded since the last time.
 */
void
stack_sweep(int final)
{
	uint64_t	before;
	size_t		i;

	if (!stack_on)
		return;
	before = final ? UINT64_MAX : lib_now_ns() - STACK_PARK_NS;
	for (i = 0; i < STACK_SLOTS; i++) {
		if (__atomic_load_n(&stack_slots[i].used, __ATOMIC_ACQUIRE) &&
		    __atomic_load_n(&stack_slots[i].n, __ATOMIC_RELAXED) != 0)
			stack_unpark(&stack_slots[i], 0, before);
	}
	if (stack_config.kinds & LIB_STACK_NATIVE)
		stack_native_symbolize();
	if (stack_python)
		stack_hook_rescan();
}
