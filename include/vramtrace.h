/*
 * vramtrace.h: the public interface of libvramtrace.so, the library that a
 * training process loads (directly or through the Python package) to mark
 * steps and to offload activations.  Plain C, usable from ctypes: every
 * handle is an opaque pointer or a 64-bit integer, every struct has fixed
 * width fields.
 */
#ifndef VRAMTRACE_PUBLIC_H
#define VRAMTRACE_PUBLIC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * Step markers (src/lib-steps.c): mark steps and instants in a recording.
 *
 * Both calls reach the process's one connection to the collector through
 * the injection library (CUDA_INJECTION64_PATH).  They are cheap no-ops
 * when the process is not being recorded, and safe from any thread.
 */

/* End the current training step (a step begins where the last one ended). */
void	vramtrace_step(void);

/* Record a named instant; name is copied, NULL is ignored. */
void	vramtrace_mark(const char *name);

#ifdef __cplusplus
}
#endif

#endif
