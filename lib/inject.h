/*
 * inject.h: the pieces of libvramtrace-inject.so, the library that CUDA
 * loads into a traced process through CUDA_INJECTION64_PATH.  inject.c owns
 * the life cycle and the configuration read from the environment;
 * inject-cupti.c turns CUPTI records and callbacks into events for the
 * client (client.c), inject-calls.c the driver's allocation calls (and
 * asks stack.c for their stacks), inject-interpose.c and inject-entry.c
 * the wrappers that see the stream-ordered ones instead with interpose,
 * inject-copies.c its copy calls; with
 * inject-api.c, which finds libcupti
 * and the driver at run time and fills the table they call through
 * (inject-api.h), they are the files that include CUPTI headers.
 */
#ifndef INJECT_H
#define INJECT_H

#include <stdint.h>

#include "stack.h"

/* The configuration, read once from the environment by inject.c. */
struct inject_config {
	unsigned	flush_ms;	/* VRAMTRACE_FLUSH_MS */
	int		nvtx;		/* VRAMTRACE_NVTX: capture markers */
	unsigned	records;	/* VRAMTRACE_RECORDS: INJECT_RECORD_* */
	const char	*step_marker;	/* VRAMTRACE_STEP_MARKER: a regex */
	struct stack_config stacks;	/* VRAMTRACE_STACKS, _STACK_DEPTH */
};

/*
 * What to collect (VRAMTRACE_RECORDS).  Allocations and frees come from
 * the driver calls (calls) or from MEMORY2 activity records (memory), which
 * cost more and, when asked for, replace the calls; copies likewise from
 * the copy calls (copies) or from MEMCPY activity records (memcpy), which
 * add each copy's end on the GPU but cost the program at every launch.
 */
#define INJECT_RECORD_MEMORY	0x1	/* allocations and frees (MEMORY2) */
#define INJECT_RECORD_POOL	0x2	/* pool create, trim (MEMORY_POOL) */
#define INJECT_RECORD_MEMCPY	0x4	/* copies (MEMCPY) */
#define INJECT_RECORD_CALLS	0x8	/* allocations and frees (callbacks) */
#define INJECT_RECORD_COPIES	0x10	/* copies (callbacks) */
#define INJECT_RECORD_INTERPOSE	0x20	/* async allocations: wrappers */
#define INJECT_RECORD_DEFAULT	(INJECT_RECORD_CALLS | INJECT_RECORD_POOL | \
				 INJECT_RECORD_COPIES | INJECT_RECORD_INTERPOSE)

/* inject-clock.c */
uint64_t inject_now(void);

/* inject-calls.c */
int	 inject_calls_start(void *);
void	 inject_calls_forget(void);
void	 inject_calls_callback(uint32_t, const void *);
#define INJECT_CALLS_NO_STREAM	UINT64_MAX	/* a call without stream */
uint64_t inject_calls_where(void *, uint64_t, int, int32_t *);
void	 inject_calls_wrapped(uint8_t, uint64_t, uint64_t, void *, int);
extern __thread int inject_calls_inside;	/* in a wrapper's call */

/* inject-entry.c */
int	 inject_entry_start(void *);
int	 inject_entry_scan(void *[4]);
void	 inject_entry_callback(uint32_t, const void *);
void	 inject_entry_cupti(int);
void	 inject_entry_cupti_back(const char *);

/* inject-interpose.c */
void	 inject_interpose_start(void *);
void	 inject_interpose_sweep(void);

/* inject-copies.c */
int	 inject_copies_start(void *);
void	 inject_copies_callback(uint32_t, const void *);

/* inject-cupti.c */
int	 inject_cupti_start(const struct inject_config *, char **);
void	 inject_cupti_flush(int);
uint64_t inject_cupti_stream(int32_t, uint64_t);

#endif
