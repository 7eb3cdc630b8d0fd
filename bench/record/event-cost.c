/*
 * event-cost.c: what the injection library's own work costs per
 * allocation event, without CUDA: bench/record/client-cost runs it.
 *
 *	event-cost PROBE MODE STEPS
 *
 * Loads PROBE (tests/libstack-probe.so: the injection library's client,
 * event encoding and stack capture, without CUDA), starts it with stacks
 * MODE (python, native, all, none; "off" does not start it, so each event
 * is dropped at the client's first check) and makes STEPS steps of the
 * small-tensor loop's shape (tests/gpu/record/bench.py small): 3,200
 * events, an allocation and its free in turn, then 20 ms of sleep, the
 * time the GPU would take.  Each event is made exactly as a CUPTI callback
 * on cuMemAllocAsync or cuMemFreeAsync makes it (stack_alloc, then
 * client_emit).  The events go where VRAMTRACE_OUTPUT or VRAMTRACE_SOCKET
 * says.  Prints one line: MODE, events, then in ns per event the CPU time
 * of the calling thread (what the application pays in line), and the CPU
 * time of the other threads (the client's, which encodes and writes the
 * events meanwhile, on another core when there is one), both measured
 * over the steps and the final flush.
 */
#include "config.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define STEP_EVENTS	3200		/* events per step */
#define STEP_SLEEP_NS	20000000L	/* the GPU's share of a step */

static uint64_t
cpu_ns(clockid_t clock)
{
	struct timespec	ts;

	clock_gettime(clock, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
}

/* Keep the caller's frame, as a program's allocating function has one. */
static void __attribute__((noinline))
event_cost_step(void (*alloc)(uint64_t, uint64_t), void (*release)(uint64_t))
{
	unsigned long	i;

	for (i = 0; i < STEP_EVENTS; i += 2) {
		alloc(0x10000000 + i * 512, 512);
		release(0x10000000 + i * 512);
	}
}

int
main(int argc, char **argv)
{
	int		(*start)(const char *, unsigned);
	void		(*alloc)(uint64_t, uint64_t);
	void		(*release)(uint64_t);
	void		(*flush)(void);
	void		*h;
	struct timespec	 gpu = { 0, STEP_SLEEP_NS };
	unsigned long	 steps, i;
	uint64_t	 me0, all0, me, all;
	double		 n;

	if (argc != 4 || (steps = strtoul(argv[3], NULL, 10)) == 0 ||
	    (h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL)) == NULL) {
		fprintf(stderr, "usage: event-cost PROBE MODE STEPS\n");
		return (2);
	}
	*(void **)&start = dlsym(h, "probe_start");
	*(void **)&alloc = dlsym(h, "probe_alloc");
	*(void **)&release = dlsym(h, "probe_free");
	*(void **)&flush = dlsym(h, "probe_flush");
	if (start == NULL || alloc == NULL || release == NULL ||
	    flush == NULL) {
		fprintf(stderr, "event-cost: %s lacks the probe\n", argv[1]);
		return (2);
	}
	if (strcmp(argv[2], "off") != 0 && start(argv[2], 64) != 0) {
		fprintf(stderr, "event-cost: cannot start mode %s (is "
		    "VRAMTRACE_OUTPUT set?)\n", argv[2]);
		return (2);
	}
	me0 = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
	all0 = cpu_ns(CLOCK_PROCESS_CPUTIME_ID);
	for (i = 0; i < steps; i++) {
		event_cost_step(alloc, release);
		nanosleep(&gpu, NULL);
	}
	flush();
	me = cpu_ns(CLOCK_THREAD_CPUTIME_ID) - me0;
	all = cpu_ns(CLOCK_PROCESS_CPUTIME_ID) - all0;
	n = (double)steps * STEP_EVENTS;
	/* The two clocks are read apart: nothing else ran if all < me. */
	printf("%-7s %10.0f %12.1f %12.1f\n", argv[2], n, (double)me / n,
	    all > me ? (double)(all - me) / n : 0.0);
	return (0);
}
