/*
 * sampler.c: where one thread of a program spends its CPU time, for a
 * machine without perf.  A library preloaded into the program
 * (LD_PRELOAD) that, when VRAMTRACE_SAMPLER_OUT names a file, samples the
 * thread that loaded it (a Python program's main thread) every
 * VRAMTRACE_SAMPLER_US microseconds of that thread's CPU time (default
 * 250) with a POSIX CPU-time timer and SIGPROF, keeping the interrupted
 * instruction's address.  At exit it writes to that name followed by
 * ".PID" (every process of the command has its own file) one line per
 * address seen: "COUNT<TAB>OBJECT<TAB>OFFSET" (hex, from the object's
 * load address),
 * which bench/record/profile symbolizes with nm.  With
 * VRAMTRACE_SAMPLER_PROCESS set it samples every thread of the process on
 * the process's CPU clock instead (autograd's backward runs on threads of
 * its own).  vramtrace_sampler_reset(), called from the program (ctypes),
 * forgets the samples taken so far: a benchmark calls it when its timed
 * steps begin.  Used by bench/record/profile; not installed.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#include <sys/syscall.h>

#define SAMPLER_MAX	(1u << 21)

static uintptr_t	sampler_pc[SAMPLER_MAX];
static size_t		sampler_n;	/* samples taken (atomic: any thread) */
static timer_t		sampler_timer;
static char		*sampler_out;

static void
sampler_tick(int sig, siginfo_t *si, void *uc_arg)
{
	const ucontext_t	*uc = uc_arg;
	uintptr_t		 pc;
	size_t			 i;

	(void)sig;
	(void)si;
#if defined(__x86_64__)
	pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
	pc = (uintptr_t)uc->uc_mcontext.pc;
#else
	pc = 0;
#endif
	i = __atomic_fetch_add(&sampler_n, 1, __ATOMIC_RELAXED);
	if (i < SAMPLER_MAX)
		sampler_pc[i] = pc;
}

static int
sampler_cmp(const void *a, const void *b)
{
	uintptr_t	x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;

	return ((x > y) - (x < y));
}

void	vramtrace_sampler_reset(void);

/* Forget the samples taken so far. */
void
vramtrace_sampler_reset(void)
{
	__atomic_store_n(&sampler_n, 0, __ATOMIC_RELAXED);
}

/* Stop sampling and write the histogram of the addresses. */
static void
sampler_write(void)
{
	FILE		*f;
	Dl_info		 info;
	size_t		 n, i, j;

	timer_delete(sampler_timer);
	n = __atomic_load_n(&sampler_n, __ATOMIC_RELAXED);
	if (n > SAMPLER_MAX)
		n = SAMPLER_MAX;
	qsort(sampler_pc, n, sizeof sampler_pc[0], sampler_cmp);
	if ((f = fopen(sampler_out, "w")) == NULL)
		return;
	for (i = 0; i < n; i = j) {
		for (j = i; j < n && sampler_pc[j] == sampler_pc[i]; j++)
			;
		if (dladdr((void *)sampler_pc[i], &info) != 0 &&
		    info.dli_fname != NULL)
			fprintf(f, "%zu\t%s\t%lx\n", j - i, info.dli_fname,
			    (unsigned long)(sampler_pc[i] -
			    (uintptr_t)info.dli_fbase));
		else
			fprintf(f, "%zu\t?\t%lx\n", j - i,
			    (unsigned long)sampler_pc[i]);
	}
	fclose(f);
}

__attribute__((constructor)) static void
sampler_start(void)
{
	struct sigaction	sa;
	struct sigevent		sev;
	struct itimerspec	its;
	clockid_t		clock;
	const char		*us = getenv("VRAMTRACE_SAMPLER_US");
	long			period = us != NULL ? atol(us) : 250;

	if (getenv("VRAMTRACE_SAMPLER_OUT") == NULL ||
	    asprintf(&sampler_out, "%s.%ld", getenv("VRAMTRACE_SAMPLER_OUT"),
	    (long)getpid()) == -1)
		return;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = sampler_tick;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigaction(SIGPROF, &sa, NULL);
	memset(&sev, 0, sizeof sev);
	sev.sigev_signo = SIGPROF;
	if (getenv("VRAMTRACE_SAMPLER_PROCESS") != NULL) {
		sev.sigev_notify = SIGEV_SIGNAL;
		clock = CLOCK_PROCESS_CPUTIME_ID;
	} else {
		sev.sigev_notify = SIGEV_THREAD_ID;
		sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
		if (pthread_getcpuclockid(pthread_self(), &clock) != 0)
			return;
	}
	if (timer_create(clock, &sev, &sampler_timer) != 0)
		return;
	its.it_interval.tv_sec = period / 1000000;
	its.it_interval.tv_nsec = period % 1000000 * 1000;
	its.it_value = its.it_interval;
	timer_settime(sampler_timer, 0, &its, NULL);
	atexit(sampler_write);
}
