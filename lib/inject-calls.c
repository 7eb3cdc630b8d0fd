/*
 * inject-calls.c: allocations and frees from the driver API calls that make
 * them (CUPTI callbacks), and the events of the wrappers that see the
 * stream-ordered ones instead with interpose (inject-interpose.c,
 * inject-entry.c: on by default).
 *
 * CUPTI's MEMORY2 activity records cost the application thread about a
 * microsecond for each allocation and free: +18% to +28% step time on a
 * loop of 3,200 of them per 20 ms step, against +9% to +10% for callbacks
 * on these calls and +3.5% to +8.5% for merely subscribing
 * (bench/record/cupti-cost on an H200).  The runtime's calls
 * (cudaMalloc, cudaMallocAsync, cudaMallocHost, ...) go through these
 * driver calls, so both are seen.  Each callback runs on the calling
 * thread, at the call's exit, only when the call succeeded, and does
 * little: it reads the arguments, looks up the stream's CUPTI id and the
 * context's device in a small per-thread cache, takes a CUPTI timestamp
 * (the clock of the activity records) and queues one event; an
 * allocation first gets its stack (stack.c), which may make it wait.
 *
 * Layers are those of the MEMORY2 path (inject-cupti.c): stream-ordered
 * allocations are EVENT_LAYER_POOL, other device memory (cuMemAlloc,
 * managed memory, virtual memory maps) EVENT_LAYER_SEGMENT, page-locked
 * host memory EVENT_LAYER_HOST.  A virtual memory map (cuMemMap) is an
 * allocation of its range and cuMemUnmap frees the range that starts at
 * its address.
 *
 * The cache is per thread, so it needs no lock: a stream handle names one
 * stream until the stream is destroyed, and a destroyed stream or context
 * moves the global epoch on, which empties every thread's cache before its
 * next lookup.
 */

#include "config.h"

#include <stdatomic.h>
#include <string.h>

#include "client.h"
#include "inject.h"
#include "inject-api.h"

#define CALLS_CACHE	64			/* entries per thread */

struct calls_entry {
	uint64_t	context;
	uint64_t	handle;
	uint64_t	stream;		/* CUPTI id, or EVENT_NONE */
	int32_t		device;
	uint8_t		per_thread;
	uint8_t		used;
};

static _Atomic uint64_t		calls_epoch = 1;
static __thread uint64_t	calls_cache_epoch;
static __thread struct calls_entry calls_cache[CALLS_CACHE];

static const CUpti_CallbackId calls_ids[] = {
	CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2,
	CUPTI_DRIVER_TRACE_CBID_cuMemAllocPitch_v2,
	CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged,
	CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync,
	CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync,
	CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2,
	CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync,
	CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuMemAllocHost_v2,
	CUPTI_DRIVER_TRACE_CBID_cuMemHostAlloc,
	CUPTI_DRIVER_TRACE_CBID_cuMemFreeHost,
	CUPTI_DRIVER_TRACE_CBID_cuMemMap,
	CUPTI_DRIVER_TRACE_CBID_cuMemUnmap
};

/*
 * Enable the callbacks on the allocation calls for subscriber (a
 * CUpti_SubscriberHandle).  Returns 0, or the CUPTI error; on error the
 * callbacks enabled so far stay enabled (the caller unsubscribes).
 */
int
inject_calls_start(void *subscriber)
{
	size_t		i;
	CUptiResult	rc;

	for (i = 0; i < sizeof calls_ids / sizeof calls_ids[0]; i++) {
		rc = inject_api.cuptiEnableCallback(1, subscriber,
		    CUPTI_CB_DOMAIN_DRIVER_API, calls_ids[i]);
		if (rc != CUPTI_SUCCESS)
			return ((int)rc);
	}
	return (0);
}

/* A stream or context is gone: its handle may name another one next. */
void
inject_calls_forget(void)
{
	atomic_fetch_add(&calls_epoch, 1);
}

/*
 * The CUPTI stream id of handle (INJECT_CALLS_NO_STREAM: none) in ctx, and
 * ctx's device, from this thread's cache or CUPTI.
 */
static const struct calls_entry *
calls_lookup(CUcontext ctx, uint64_t handle, int per_thread)
{
	struct calls_entry	*c;
	uint64_t		 epoch = atomic_load(&calls_epoch), h;
	uint32_t		 id, dev;

	if (calls_cache_epoch != epoch) {
		memset(calls_cache, 0, sizeof calls_cache);
		calls_cache_epoch = epoch;
	}
	h = ((uint64_t)(uintptr_t)ctx ^ handle) * 0x9e3779b97f4a7c15ull;
	c = &calls_cache[h >> 58];	/* the top 6 bits: CALLS_CACHE */
	if (c->used && c->context == (uint64_t)(uintptr_t)ctx &&
	    c->handle == handle && c->per_thread == per_thread)
		return (c);
	c->used = 1;
	c->context = (uint64_t)(uintptr_t)ctx;
	c->handle = handle;
	c->per_thread = (uint8_t)per_thread;
	c->stream = EVENT_NONE;
	c->device = -1;
	if (ctx == NULL)
		return (c);
	if (inject_api.cuptiGetDeviceId(ctx, &dev) == CUPTI_SUCCESS)
		c->device = (int32_t)dev;
	if (handle != INJECT_CALLS_NO_STREAM &&
	    inject_api.cuptiGetStreamIdEx(ctx, (CUstream)(uintptr_t)handle,
	    (uint8_t)per_thread, &id) == CUPTI_SUCCESS)
		c->stream = id;
	return (c);
}

/*
 * The CUPTI stream id (EVENT_NONE: unknown) of stream handle (or
 * INJECT_CALLS_NO_STREAM) in context ctx (a CUcontext), per_thread when it
 * names the calling thread's default stream, and ctx's device in *device
 * (-1: unknown).  For the driver API callbacks, on their thread.
 */
uint64_t
inject_calls_where(void *ctx, uint64_t handle, int per_thread,
    int32_t *device)
{
	const struct calls_entry *c = calls_lookup(ctx, handle, per_thread);

	*device = c->device;
	return (c->stream);
}

/* The event of an allocation or free made in ctx. */
static void
calls_event(CUcontext ctx, uint64_t correlation, uint8_t type, uint8_t layer,
    uint64_t address, uint64_t bytes, uint64_t handle, int per_thread)
{
	const struct calls_entry *c;
	struct event		 ev;

	if (address == 0)	/* cudaFree(0), a zero-byte allocation */
		return;
	c = calls_lookup(ctx, handle, per_thread);
	memset(&ev, 0, sizeof ev);
	ev.type = type;
	ev.time_ns = inject_now();
	ev.u.alloc.address = address;
	ev.u.alloc.bytes = bytes;
	ev.u.alloc.requested = EVENT_NONE;
	ev.u.alloc.stream = c->stream;
	ev.u.alloc.correlation = correlation;
	ev.u.alloc.device = layer == EVENT_LAYER_HOST ? -1 : c->device;
	ev.u.alloc.layer = layer;
	if (type == EVENT_ALLOC && stack_alloc(&ev))
		return;		/* it waits for its Python stack */
	client_emit(&ev);
}

/* The event of a driver call's allocation or free (cb: its callback). */
static void
calls_emit(const CUpti_CallbackData *cb, uint8_t type, uint8_t layer,
    uint64_t address, uint64_t bytes, uint64_t handle, int per_thread)
{
	calls_event(cb->context, cb->correlationId, type, layer, address,
	    bytes, handle, per_thread);
}

/* A stream-ordered call: hStream, or the thread's own default stream. */
static void
calls_async(const CUpti_CallbackData *cb, uint8_t type, uint64_t address,
    uint64_t bytes, CUstream stream, int ptsz)
{
	uint64_t	handle = (uint64_t)(uintptr_t)stream;

	calls_emit(cb, type, EVENT_LAYER_POOL, address, bytes, handle,
	    ptsz || stream == CU_STREAM_PER_THREAD);
}

/*
 * Set while a thread is in a wrapper's call (inject-interpose.c,
 * inject-entry.c): the callback of the driver call beneath leaves it to
 * the wrapper.
 */
__thread int	inject_calls_inside;

/*
 * The event of a wrapper's allocation or free (type) on stream (a
 * cudaStream_t or CUstream), per_thread when the call was the per-thread
 * default stream form: a stream-ordered allocation in the calling
 * thread's current context.  For the wrappers, on their thread.
 */
void
inject_calls_wrapped(uint8_t type, uint64_t address, uint64_t bytes,
    void *stream, int per_thread)
{
	CUcontext	ctx = NULL;

	if (inject_api.cuCtxGetCurrent(&ctx) != CUDA_SUCCESS)
		ctx = NULL;
	calls_event(ctx, EVENT_NONE, type, EVENT_LAYER_POOL, address, bytes,
	    (uint64_t)(uintptr_t)stream,
	    per_thread || stream == CU_STREAM_PER_THREAD);
}

/*
 * A driver API callback (data is its CUpti_CallbackData): turn a
 * successful allocation or free into an event.  Other calls are ignored.
 */
void
inject_calls_callback(uint32_t cbid, const void *data)
{
	const CUpti_CallbackData	*cb = data;
	const void			*p = cb->functionParams;
	const cuMemAllocAsync_params	*aa = p;
	const cuMemAllocFromPoolAsync_params *ap = p;
	const cuMemFreeAsync_params	*fa = p;
	const cuMemAlloc_v2_params	*a = p;
	const cuMemAllocPitch_v2_params	*pitch = p;
	const cuMemAllocManaged_params	*m = p;
	const cuMemAllocHost_v2_params	*ah = p;
	const cuMemHostAlloc_params	*ha = p;
	const cuMemMap_params		*map = p;

	if (cb->callbackSite != CUPTI_API_EXIT || inject_calls_inside ||
	    cb->functionReturnValue == NULL ||
	    *(const CUresult *)cb->functionReturnValue != CUDA_SUCCESS)
		return;
	switch (cbid) {
	case CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync:
	case CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync_ptsz:
		calls_async(cb, EVENT_ALLOC, *aa->dptr, aa->bytesize,
		    aa->hStream,
		    cbid == CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync_ptsz);
		break;
	case CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync:
	case CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync_ptsz:
		calls_async(cb, EVENT_ALLOC, *ap->dptr, ap->bytesize,
		    ap->hStream, cbid ==
		    CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync_ptsz);
		break;
	case CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync:
	case CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync_ptsz:
		calls_async(cb, EVENT_FREE, fa->dptr, 0, fa->hStream,
		    cbid == CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync_ptsz);
		break;
	case CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2:
		calls_emit(cb, EVENT_ALLOC, EVENT_LAYER_SEGMENT, *a->dptr,
		    a->bytesize, INJECT_CALLS_NO_STREAM, 0);
		break;
	case CUPTI_DRIVER_TRACE_CBID_cuMemAllocPitch_v2:
		calls_emit(cb, EVENT_ALLOC, EVENT_LAYER_SEGMENT, *pitch->dptr,
		    (uint64_t)*pitch->pPitch * pitch->Height,
		    INJECT_CALLS_NO_STREAM, 0);
		break;
	case CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged:
		calls_emit(cb, EVENT_ALLOC, EVENT_LAYER_SEGMENT, *m->dptr,
		    m->bytesize, INJECT_CALLS_NO_STREAM, 0);
		break;
	case CUPTI_DRIVER_TRACE_CBID_cuMemMap:
		calls_emit(cb, EVENT_ALLOC, EVENT_LAYER_SEGMENT, map->ptr,
		    map->size, INJECT_CALLS_NO_STREAM, 0);
		break;
	case CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2:
		calls_emit(cb, EVENT_FREE, EVENT_LAYER_SEGMENT,
		    ((const cuMemFree_v2_params *)p)->dptr, 0,
		    INJECT_CALLS_NO_STREAM, 0);
		break;
	case CUPTI_DRIVER_TRACE_CBID_cuMemUnmap:
		calls_emit(cb, EVENT_FREE, EVENT_LAYER_SEGMENT,
		    ((const cuMemUnmap_params *)p)->ptr, 0,
		    INJECT_CALLS_NO_STREAM, 0);
		break;
	case CUPTI_DRIVER_TRACE_CBID_cuMemAllocHost_v2:
		calls_emit(cb, EVENT_ALLOC, EVENT_LAYER_HOST,
		    (uint64_t)(uintptr_t)*ah->pp, ah->bytesize,
		    INJECT_CALLS_NO_STREAM, 0);
		break;
	case CUPTI_DRIVER_TRACE_CBID_cuMemHostAlloc:
		calls_emit(cb, EVENT_ALLOC, EVENT_LAYER_HOST,
		    (uint64_t)(uintptr_t)*ha->pp, ha->bytesize,
		    INJECT_CALLS_NO_STREAM, 0);
		break;
	case CUPTI_DRIVER_TRACE_CBID_cuMemFreeHost:
		calls_emit(cb, EVENT_FREE, EVENT_LAYER_HOST,
		    (uint64_t)(uintptr_t)((const cuMemFreeHost_params *)p)->p,
		    0, INJECT_CALLS_NO_STREAM, 0);
		break;
	default:
		break;
	}
}
