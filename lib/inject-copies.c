/*
 * inject-copies.c: host/device copies from the driver calls that make them
 * (CUPTI callbacks), the default way of seeing them.
 *
 * CUPTI's MEMCPY activity records give each copy's start and end on the
 * GPU, but with that kind enabled CUPTI's activity layer costs the calling
 * thread on every launch: +4% to +18% of the CPU time of a loop of many
 * small tensors that makes almost no copies (H100, bench/record).  The
 * callbacks cost only at the copy calls.  A copy seen here has the time
 * its call was made (the enter callback's clock, handed to the exit
 * callback through CUPTI's correlation slot), no end (the store's end_ns
 * is NULL), its bytes, its stream and its direction: from the call for
 * the directed calls, from the memory types of a 2D or 3D copy, and from
 * the pointers' memory type for the unified ones (cuMemcpy,
 * cuMemcpyAsync: pageable host memory is not known to the driver, so a
 * pointer it cannot place is the host's).  Peer copies are between the
 * devices of their two contexts.  Copies to or from CUDA arrays, batched
 * copies (cuMemcpyBatchAsync) and host-to-host copies are not recorded
 * here; VRAMTRACE_RECORDS=memcpy records them from the activity records
 * instead.
 */

#include "config.h"

#include <string.h>

#include "client.h"
#include "inject.h"
#include "inject-api.h"

/* How a call's parameters read. */
enum copies_form {
	COPIES_UNIFIED,		/* dst, src, ByteCount: pointer types */
	COPIES_HTOD,		/* dstDevice, srcHost, ByteCount */
	COPIES_DTOH,		/* dstHost, srcDevice, ByteCount */
	COPIES_DTOD,		/* dstDevice, srcDevice, ByteCount */
	COPIES_PEER,		/* dstDevice, dstContext, srcDevice, ... */
	COPIES_2D,		/* const CUDA_MEMCPY2D *pCopy */
	COPIES_3D,		/* const CUDA_MEMCPY3D *pCopy */
	COPIES_3D_PEER		/* const CUDA_MEMCPY3D_PEER *pCopy */
};

#define COPIES_ASYNC	0x1	/* a stream follows the parameters above */
#define COPIES_PTDS	0x2	/* the thread's own default stream */

static const struct copies_call {
	CUpti_CallbackId	cbid;
	uint8_t			form;	/* enum copies_form */
	uint8_t			flags;	/* COPIES_* */
} copies_calls[] = {
#define C(name, form, flags)	{ CUPTI_DRIVER_TRACE_CBID_##name, form, flags }
/* A call, its _ptds form, its Async form and that one's _ptsz form. */
#define C4(name, async, form)						\
	C(name, form, 0), C(name##_ptds, form, COPIES_PTDS),		\
	C(async, form, COPIES_ASYNC),					\
	C(async##_ptsz, form, COPIES_ASYNC | COPIES_PTDS)
	C4(cuMemcpy, cuMemcpyAsync, COPIES_UNIFIED),
	C4(cuMemcpyHtoD_v2, cuMemcpyHtoDAsync_v2, COPIES_HTOD),
	C4(cuMemcpyDtoH_v2, cuMemcpyDtoHAsync_v2, COPIES_DTOH),
	C4(cuMemcpyDtoD_v2, cuMemcpyDtoDAsync_v2, COPIES_DTOD),
	C4(cuMemcpyPeer, cuMemcpyPeerAsync, COPIES_PEER),
	C4(cuMemcpy2D_v2, cuMemcpy2DAsync_v2, COPIES_2D),
	C(cuMemcpy2DUnaligned_v2, COPIES_2D, 0),
	C(cuMemcpy2DUnaligned_v2_ptds, COPIES_2D, COPIES_PTDS),
	C4(cuMemcpy3D_v2, cuMemcpy3DAsync_v2, COPIES_3D),
	C4(cuMemcpy3DPeer, cuMemcpy3DPeerAsync, COPIES_3D_PEER)
#undef C4
#undef C
};

#define COPIES_NCALLS	(sizeof copies_calls / sizeof copies_calls[0])

/* copies_calls by cbid (the driver's ids stay under 1024). */
#define COPIES_MAX_CBID	1024
static uint8_t		copies_index[COPIES_MAX_CBID];	/* 1 + index, or 0 */

/*
 * Enable the callbacks on the copy calls for subscriber (a
 * CUpti_SubscriberHandle).  Returns 0, or the CUPTI error; on error the
 * callbacks enabled so far stay enabled (the caller unsubscribes).
 */
int
inject_copies_start(void *subscriber)
{
	size_t		i;
	CUptiResult	rc;

	for (i = 0; i < COPIES_NCALLS; i++) {
		if (copies_calls[i].cbid < COPIES_MAX_CBID)
			copies_index[copies_calls[i].cbid] = (uint8_t)(i + 1);
		rc = inject_api.cuptiEnableCallback(1, subscriber,
		    CUPTI_CB_DOMAIN_DRIVER_API, copies_calls[i].cbid);
		if (rc != CUPTI_SUCCESS)
			return ((int)rc);
	}
	return (0);
}

/* Whether ptr is device memory (unified addressing). */
static int
copies_on_device(CUdeviceptr ptr)
{
	unsigned int	type;

	return (inject_api.cuPointerGetAttribute(&type,
	    CU_POINTER_ATTRIBUTE_MEMORY_TYPE, ptr) == CUDA_SUCCESS &&
	    type == CU_MEMORYTYPE_DEVICE);
}

/* Whether a 2D or 3D copy's side of memory type t and pointer is the GPU. */
static int
copies_side(CUmemorytype t, CUdeviceptr ptr)
{
	if (t == CU_MEMORYTYPE_UNIFIED)
		return (copies_on_device(ptr));
	return (t == CU_MEMORYTYPE_DEVICE);
}

/* Which side of a copy is on the GPU, and the bytes it moves. */
struct copies_what {
	int		 src_gpu;
	int		 dst_gpu;
	int		 array;		/* a side is a CUDA array */
	uint64_t	 bytes;
	CUcontext	 src_ctx;	/* peer copies; else NULL */
	CUcontext	 dst_ctx;
	CUstream	 stream;
};

/* The sides of a 2D or 3D copy, from its descriptor's memory types. */
static void
copies_sides(struct copies_what *w, CUmemorytype src_type,
    CUdeviceptr src, CUmemorytype dst_type, CUdeviceptr dst)
{
	w->src_gpu = copies_side(src_type, src);
	w->dst_gpu = copies_side(dst_type, dst);
	w->array = src_type == CU_MEMORYTYPE_ARRAY ||
	    dst_type == CU_MEMORYTYPE_ARRAY;
}

/* Read a call's parameters p of form into *w. */
static void
copies_read(const struct copies_call *c, const void *p,
    struct copies_what *w)
{
	const cuMemcpyAsync_params		*u = p;	/* same layouts */
	const cuMemcpyHtoDAsync_v2_params	*hd = p;
	const cuMemcpyDtoHAsync_v2_params	*dh = p;
	const cuMemcpyDtoDAsync_v2_params	*dd = p;
	const cuMemcpyPeerAsync_params		*pe = p;
	const cuMemcpy2DAsync_v2_params		*m2 = p;
	const cuMemcpy3DAsync_v2_params		*m3 = p;
	const cuMemcpy3DPeerAsync_params	*mp = p;
	int					 async = c->flags &
						     COPIES_ASYNC;

	memset(w, 0, sizeof *w);
	switch (c->form) {
	case COPIES_UNIFIED:
		w->src_gpu = copies_on_device(u->src);
		w->dst_gpu = copies_on_device(u->dst);
		w->bytes = u->ByteCount;
		w->stream = async ? u->hStream : NULL;
		break;
	case COPIES_HTOD:
		w->dst_gpu = 1;
		w->bytes = hd->ByteCount;
		w->stream = async ? hd->hStream : NULL;
		break;
	case COPIES_DTOH:
		w->src_gpu = 1;
		w->bytes = dh->ByteCount;
		w->stream = async ? dh->hStream : NULL;
		break;
	case COPIES_DTOD:
		w->src_gpu = w->dst_gpu = 1;
		w->bytes = dd->ByteCount;
		w->stream = async ? dd->hStream : NULL;
		break;
	case COPIES_PEER:
		w->src_gpu = w->dst_gpu = 1;
		w->src_ctx = pe->srcContext;
		w->dst_ctx = pe->dstContext;
		w->bytes = pe->ByteCount;
		w->stream = async ? pe->hStream : NULL;
		break;
	case COPIES_2D:
		copies_sides(w, m2->pCopy->srcMemoryType, m2->pCopy->srcDevice,
		    m2->pCopy->dstMemoryType, m2->pCopy->dstDevice);
		w->bytes = (uint64_t)m2->pCopy->WidthInBytes *
		    m2->pCopy->Height;
		w->stream = async ? m2->hStream : NULL;
		break;
	case COPIES_3D:
		copies_sides(w, m3->pCopy->srcMemoryType, m3->pCopy->srcDevice,
		    m3->pCopy->dstMemoryType, m3->pCopy->dstDevice);
		w->bytes = (uint64_t)m3->pCopy->WidthInBytes *
		    m3->pCopy->Height * m3->pCopy->Depth;
		w->stream = async ? m3->hStream : NULL;
		break;
	default:	/* COPIES_3D_PEER */
		w->src_gpu = w->dst_gpu = 1;
		w->array = mp->pCopy->srcMemoryType == CU_MEMORYTYPE_ARRAY ||
		    mp->pCopy->dstMemoryType == CU_MEMORYTYPE_ARRAY;
		w->src_ctx = mp->pCopy->srcContext;
		w->dst_ctx = mp->pCopy->dstContext;
		w->bytes = (uint64_t)mp->pCopy->WidthInBytes *
		    mp->pCopy->Height * mp->pCopy->Depth;
		w->stream = async ? mp->hStream : NULL;
		break;
	}
}

/* The event of copy w of call c, made on cb's thread. */
static void
copies_emit(const CUpti_CallbackData *cb, const struct copies_call *c,
    const struct copies_what *w)
{
	struct event	ev;
	uint64_t	stream;
	int32_t		device, src, dst;
	int		ptds = (c->flags & COPIES_PTDS) ||
			    w->stream == CU_STREAM_PER_THREAD;

	stream = inject_calls_where(cb->context,
	    (uint64_t)(uintptr_t)w->stream, ptds, &device);
	src = dst = device;
	if (w->src_ctx != NULL)
		(void)inject_calls_where(w->src_ctx, INJECT_CALLS_NO_STREAM,
		    0, &src);
	if (w->dst_ctx != NULL)
		(void)inject_calls_where(w->dst_ctx, INJECT_CALLS_NO_STREAM,
		    0, &dst);
	memset(&ev, 0, sizeof ev);
	ev.type = EVENT_MEMCPY;
	ev.time_ns = *cb->correlationData;
	ev.u.memcpy.bytes = w->bytes;
	ev.u.memcpy.stream = stream;
	ev.u.memcpy.correlation = cb->correlationId;
	ev.u.memcpy.src_device = w->src_gpu ? src : -1;
	ev.u.memcpy.dst_device = w->dst_gpu ? dst : -1;
	if (w->src_gpu && w->dst_gpu)
		ev.u.memcpy.kind = src != dst ? EVENT_COPY_PEER :
		    EVENT_COPY_DTOD;
	else
		ev.u.memcpy.kind = w->dst_gpu ? EVENT_COPY_HTOD :
		    EVENT_COPY_DTOH;
	client_emit(&ev);
}

/*
 * A driver API callback (data is its CUpti_CallbackData): note when a
 * copy call begins, and turn a successful one into an event when it
 * returns.  Other calls are ignored.
 */
void
inject_copies_callback(uint32_t cbid, const void *data)
{
	const CUpti_CallbackData	*cb = data;
	const struct copies_call	*c;
	struct copies_what		 w;

	if (cbid >= COPIES_MAX_CBID || copies_index[cbid] == 0)
		return;
	c = &copies_calls[copies_index[cbid] - 1];
	if (cb->callbackSite == CUPTI_API_ENTER) {
		*cb->correlationData = inject_now();
		return;
	}
	if (cb->functionReturnValue == NULL ||
	    *(const CUresult *)cb->functionReturnValue != CUDA_SUCCESS)
		return;
	copies_read(c, cb->functionParams, &w);
	if (w.array || (!w.src_gpu && !w.dst_gpu) || w.bytes == 0)
		return;
	copies_emit(cb, c, &w);
}
