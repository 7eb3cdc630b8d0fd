/*
 * inject.h: the pieces of libvramtrace-inject.so, the library that CUDA
 * loads into a traced process through CUDA_INJECTION64_PATH.  inject.c owns
 * the life cycle and the configuration read from the environment;
 * inject-cupti.c, the only file that includes CUPTI headers, turns CUPTI
 * records and callbacks into events for the client (client.c).
 */
#ifndef INJECT_H
#define INJECT_H

#include <stdint.h>

/* The configuration, read once from the environment by inject.c. */
struct inject_config {
	unsigned	flush_ms;	/* VRAMTRACE_FLUSH_MS */
	int		nvtx;		/* VRAMTRACE_NVTX: capture markers */
};

/* inject.c */
int	 inject_step_match(const char *);

/* inject-cupti.c */
int	 inject_cupti_start(const struct inject_config *, char **);
void	 inject_cupti_flush(int);
uint64_t inject_cupti_now(void);

#endif
