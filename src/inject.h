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
	unsigned	records;	/* VRAMTRACE_RECORDS: INJECT_RECORD_* */
};

/* The CUPTI activity records to enable (VRAMTRACE_RECORDS). */
#define INJECT_RECORD_MEMORY	0x1	/* allocations and frees (MEMORY2) */
#define INJECT_RECORD_POOL	0x2	/* pool create, trim (MEMORY_POOL) */
#define INJECT_RECORD_MEMCPY	0x4	/* copies (MEMCPY) */
#define INJECT_RECORD_ALL	0x7

/* inject.c */
int	 inject_step_match(const char *);

/* inject-cupti.c */
int	 inject_cupti_start(const struct inject_config *, char **);
void	 inject_cupti_flush(int);
uint64_t inject_cupti_now(void);

#endif
