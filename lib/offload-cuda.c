/*
 * offload-cuda.c: the offload engine's window on the CUDA runtime.
 *
 * The only offload file that includes a CUDA header.  It fills struct
 * offload_ops with thin wrappers (handles travel as uint64_t) and creates
 * engines with it.  Streams are created non-blocking, so that they never
 * synchronize implicitly with the legacy default stream PyTorch computes
 * on; events are created without timing, the cheap kind.  Objects are made
 * on the engine's device and the caller's current device is put back, so a
 * framework that tracks its own current device is not disturbed.  The
 * runtime's last error message is kept per thread for the engine's
 * messages.
 *
 * The runtime is the one the process already has (PyTorch's libcudart.so.12
 * or .so.13; see cuda-find.h), found when the first engine is created and
 * called through offload_cudart, filled by dlsym: the library links with
 * no libcudart, and one build serves a CUDA 12 or a CUDA 13 PyTorch.  The
 * calls used are in both runtimes with the same arguments.
 */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>

#include <cuda_runtime_api.h>

#include "cuda-find.h"
#include "offload.h"

#ifndef VRAMTRACE_CUDA_DIR
#define VRAMTRACE_CUDA_DIR ""
#endif

/* The runtime's functions the engine calls. */
#define OFFLOAD_CUDA_FUNCTIONS(X)					\
	X(cudaEventCreateWithFlags)					\
	X(cudaEventDestroy)						\
	X(cudaEventQuery)						\
	X(cudaEventRecord)						\
	X(cudaFreeHost)							\
	X(cudaGetDevice)						\
	X(cudaGetDeviceCount)						\
	X(cudaGetErrorString)						\
	X(cudaHostAlloc)						\
	X(cudaMemGetInfo)						\
	X(cudaMemcpyAsync)						\
	X(cudaSetDevice)						\
	X(cudaStreamCreateWithFlags)					\
	X(cudaStreamDestroy)						\
	X(cudaStreamSynchronize)					\
	X(cudaStreamWaitEvent)
#define OFFLOAD_CUDA_MEMBER(f)	__typeof__(f) *f;
#define OFFLOAD_CUDA_SYMBOL(f)	CUDA_FIND_SYMBOL(offload_cudart, f)

static struct {
	OFFLOAD_CUDA_FUNCTIONS(OFFLOAD_CUDA_MEMBER)
} offload_cudart;
static const struct cuda_find_symbol offload_cuda_symbols[] = {
	OFFLOAD_CUDA_FUNCTIONS(OFFLOAD_CUDA_SYMBOL)
};
#define OFFLOAD_CUDA_NSYMBOLS \
	(sizeof offload_cuda_symbols / sizeof offload_cuda_symbols[0])
static pthread_mutex_t	offload_cuda_lock = PTHREAD_MUTEX_INITIALIZER;
static int		offload_cuda_state;	/* 0 not yet, 1 found, -1 not */
static char		offload_cuda_cause[640];

static _Thread_local const char	*offload_cuda_last;

/* The ops' argument is the device ordinal. */
#define OFFLOAD_CUDA_DEVICE(arg) ((int)(intptr_t)(arg))

static int
offload_cuda_check(cudaError_t rc)
{
	if (rc == cudaSuccess)
		return (0);
	offload_cuda_last = offload_cudart.cudaGetErrorString(rc);
	return (-1);
}

/* Run on the engine's device, then switch back; returns the old one. */
static int
offload_cuda_enter(void *arg)
{
	int	old = -1;

	if (offload_cudart.cudaGetDevice(&old) == cudaSuccess &&
	    old != OFFLOAD_CUDA_DEVICE(arg))
		offload_cudart.cudaSetDevice(OFFLOAD_CUDA_DEVICE(arg));
	return (old);
}

static void
offload_cuda_leave(void *arg, int old)
{
	if (old >= 0 && old != OFFLOAD_CUDA_DEVICE(arg))
		offload_cudart.cudaSetDevice(old);
}

static int
offload_cuda_stream_create(void *arg, uint64_t *out)
{
	cudaStream_t	s;
	int		old = offload_cuda_enter(arg), rc;

	rc = offload_cuda_check(offload_cudart.cudaStreamCreateWithFlags(&s,
	    cudaStreamNonBlocking));
	offload_cuda_leave(arg, old);
	*out = (uint64_t)(uintptr_t)s;
	return (rc);
}

static void
offload_cuda_stream_destroy(void *arg, uint64_t s)
{
	(void)arg;
	offload_cudart.cudaStreamDestroy((cudaStream_t)(uintptr_t)s);
}

static int
offload_cuda_stream_sync(void *arg, uint64_t s)
{
	(void)arg;
	return (offload_cuda_check(offload_cudart.cudaStreamSynchronize(
	    (cudaStream_t)(uintptr_t)s)));
}

static int
offload_cuda_event_create(void *arg, uint64_t *out)
{
	cudaEvent_t	ev;
	int		old = offload_cuda_enter(arg), rc;

	rc = offload_cuda_check(offload_cudart.cudaEventCreateWithFlags(&ev,
	    cudaEventDisableTiming));
	offload_cuda_leave(arg, old);
	*out = (uint64_t)(uintptr_t)ev;
	return (rc);
}

static void
offload_cuda_event_destroy(void *arg, uint64_t ev)
{
	(void)arg;
	offload_cudart.cudaEventDestroy((cudaEvent_t)(uintptr_t)ev);
}

static int
offload_cuda_event_record(void *arg, uint64_t ev, uint64_t s)
{
	(void)arg;
	return (offload_cuda_check(offload_cudart.cudaEventRecord(
	    (cudaEvent_t)(uintptr_t)ev, (cudaStream_t)(uintptr_t)s)));
}

static int
offload_cuda_event_done(void *arg, uint64_t ev)
{
	cudaError_t	rc;

	(void)arg;
	rc = offload_cudart.cudaEventQuery((cudaEvent_t)(uintptr_t)ev);
	if (rc == cudaErrorNotReady)
		return (0);
	return (offload_cuda_check(rc) == 0 ? 1 : -1);
}

static int
offload_cuda_stream_wait(void *arg, uint64_t s, uint64_t ev)
{
	(void)arg;
	return (offload_cuda_check(offload_cudart.cudaStreamWaitEvent(
	    (cudaStream_t)(uintptr_t)s, (cudaEvent_t)(uintptr_t)ev, 0)));
}

static int
offload_cuda_copy(void *arg, uint64_t dst, uint64_t src, uint64_t bytes,
    uint64_t s)
{
	(void)arg;
	return (offload_cuda_check(offload_cudart.cudaMemcpyAsync(
	    (void *)(uintptr_t)dst, (const void *)(uintptr_t)src, bytes,
	    cudaMemcpyDefault, (cudaStream_t)(uintptr_t)s)));
}

static int
offload_cuda_host_alloc(void *arg, uint64_t bytes, int pinned, uint64_t *out)
{
	void	*p = NULL;
	int	 old, rc;

	if (!pinned) {
		if ((p = malloc(bytes)) == NULL) {
			offload_cuda_last = "out of memory";
			return (-1);
		}
		*out = (uint64_t)(uintptr_t)p;
		return (0);
	}
	old = offload_cuda_enter(arg);
	rc = offload_cuda_check(offload_cudart.cudaHostAlloc(&p, bytes,
	    cudaHostAllocPortable));
	offload_cuda_leave(arg, old);
	*out = (uint64_t)(uintptr_t)p;
	return (rc);
}

static void
offload_cuda_host_free(void *arg, uint64_t p, int pinned)
{
	(void)arg;
	if (pinned)
		offload_cudart.cudaFreeHost((void *)(uintptr_t)p);
	else
		free((void *)(uintptr_t)p);
}

static int
offload_cuda_mem_total(void *arg, uint64_t *out)
{
	size_t	free_bytes = 0, total = 0;
	int	old = offload_cuda_enter(arg), rc;

	rc = offload_cuda_check(offload_cudart.cudaMemGetInfo(&free_bytes,
	    &total));
	offload_cuda_leave(arg, old);
	*out = total;
	return (rc);
}

static const char *
offload_cuda_error(void *arg)
{
	(void)arg;
	return (offload_cuda_last);
}

static const struct offload_ops offload_cuda_template = {
	offload_cuda_stream_create,
	offload_cuda_stream_destroy,
	offload_cuda_stream_sync,
	offload_cuda_event_create,
	offload_cuda_event_destroy,
	offload_cuda_event_record,
	offload_cuda_event_done,
	offload_cuda_stream_wait,
	offload_cuda_copy,
	offload_cuda_host_alloc,
	offload_cuda_host_free,
	offload_cuda_mem_total,
	offload_cuda_error,
	NULL
};

/*
 * Find the runtime and fill offload_cudart, once.  Returns 0, or -1 with
 * the reason in err.
 */
static int
offload_cuda_open(char *err, size_t errlen)
{
	const char	*missing;
	char		 found[512];
	void		*h;
	int		 rc;

	pthread_mutex_lock(&offload_cuda_lock);
	if (offload_cuda_state == 0) {
		offload_cuda_state = -1;
		h = cuda_find_open(CUDA_FIND_RUNTIME, VRAMTRACE_CUDA_DIR, found,
		    sizeof found);
		if (h == NULL)
			snprintf(offload_cuda_cause, sizeof offload_cuda_cause,
			    "no CUDA runtime: %s", found);
		else if (cuda_find_bind(h, offload_cuda_symbols,
		    OFFLOAD_CUDA_NSYMBOLS, &missing) != 0)
			snprintf(offload_cuda_cause, sizeof offload_cuda_cause,
			    "%s has no %s", found, missing);
		else
			offload_cuda_state = 1;
	}
	rc = offload_cuda_state == 1 ? 0 : -1;
	if (rc != 0 && err != NULL)
		snprintf(err, errlen, "%s", offload_cuda_cause);
	pthread_mutex_unlock(&offload_cuda_lock);
	return (rc);
}

struct vramtrace_offload *
vramtrace_offload_create(const struct vramtrace_offload_config *cfg,
    char *err, size_t errlen)
{
	struct offload_ops	ops = offload_cuda_template;
	int			count = 0;

	if (offload_cuda_open(err, errlen) != 0)
		return (NULL);
	if (offload_cudart.cudaGetDeviceCount(&count) != cudaSuccess ||
	    cfg->device < 0 || cfg->device >= count) {
		if (err != NULL)
			snprintf(err, errlen, "no CUDA device %d", cfg->device);
		return (NULL);
	}
	ops.arg = (void *)(intptr_t)cfg->device;
	return (offload_engine_create(&ops, cfg, err, errlen));
}
