/*
 * inject-cupti.c: CUPTI records and callbacks in, neutral events out.
 *
 * Three paths feed the client:
 *
 * - Driver API callbacks on the allocation calls (inject-calls.c), by
 *   default, on the calling thread.
 * - Activity buffers.  CUPTI asks for 8 MiB buffers (inject_cupti_request)
 *   and hands them back full on its worker thread (inject_cupti_complete),
 *   which walks the records, turns MEMORY2, MEMORY_POOL, MEMCPY and MARKER
 *   records into events, reports the records CUPTI dropped, and frees the
 *   buffer.  Memory kinds map to layers: pinned host memory is
 *   EVENT_LAYER_HOST, stream-ordered device memory EVENT_LAYER_POOL, other
 *   device memory (cudaMalloc, VMM maps) EVENT_LAYER_SEGMENT.
 * - Resource callbacks, on the application thread, for context and stream
 *   creation and destruction.  They look up the CUPTI stream id of the
 *   handle (cuptiGetStreamIdEx) so that allocations, copies and stream
 *   lifetimes join on the same id, and they name the device once.
 *
 * NVTX ranges whose name matches the step pattern become EVENT_STEP_BEGIN
 * and EVENT_STEP_END; the ids of open step ranges sit in a small array
 * (inject_ranges) under inject_cupti_lock, since an end record has no name.
 * A mark whose name matches ends a step; other marks become EVENT_MARK.
 */

#include "config.h"

#include <dlfcn.h>
#include <pthread.h>
#include <regex.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "inject.h"
#include "inject-api.h"

/*
 * The records, read through the versions CUPTI 12.0 to 12.7 write for
 * these kinds (MEMORY2, MEMCPY, MEMORY_POOL, MARKER).  Later CUPTIs (12.8,
 * 13) write versions that only append fields (CUpti_ActivityMemory4,
 * Memcpy6, MemoryPool3); every field read here sits at the same offset in
 * both, as the assertions below check where the headers declare both
 * versions (CUDA 13's).  Records are walked with
 * cuptiActivityGetNextRecord, so their sizes never matter.
 */
typedef CUpti_ActivityMemory3		inject_memory_record;
typedef CUpti_ActivityMemcpy5		inject_memcpy_record;
typedef CUpti_ActivityMemoryPool2	inject_pool_record;
typedef CUpti_ActivityMarker2		inject_marker_record;

#if CUPTI_API_VERSION >= 130000
#define INJECT_SAME(a, b, f)						\
	_Static_assert(offsetof(a, f) == offsetof(b, f) &&		\
	    sizeof(((a *)0)->f) == sizeof(((b *)0)->f), #a "." #f)
INJECT_SAME(CUpti_ActivityMemory3, CUpti_ActivityMemory4, kind);
INJECT_SAME(CUpti_ActivityMemory3, CUpti_ActivityMemory4, memoryOperationType);
INJECT_SAME(CUpti_ActivityMemory3, CUpti_ActivityMemory4, memoryKind);
INJECT_SAME(CUpti_ActivityMemory3, CUpti_ActivityMemory4, correlationId);
INJECT_SAME(CUpti_ActivityMemory3, CUpti_ActivityMemory4, address);
INJECT_SAME(CUpti_ActivityMemory3, CUpti_ActivityMemory4, bytes);
INJECT_SAME(CUpti_ActivityMemory3, CUpti_ActivityMemory4, timestamp);
INJECT_SAME(CUpti_ActivityMemory3, CUpti_ActivityMemory4, deviceId);
INJECT_SAME(CUpti_ActivityMemory3, CUpti_ActivityMemory4, streamId);
INJECT_SAME(CUpti_ActivityMemory3, CUpti_ActivityMemory4, isAsync);
INJECT_SAME(CUpti_ActivityMemcpy5, CUpti_ActivityMemcpy6, copyKind);
INJECT_SAME(CUpti_ActivityMemcpy5, CUpti_ActivityMemcpy6, bytes);
INJECT_SAME(CUpti_ActivityMemcpy5, CUpti_ActivityMemcpy6, start);
INJECT_SAME(CUpti_ActivityMemcpy5, CUpti_ActivityMemcpy6, end);
INJECT_SAME(CUpti_ActivityMemcpy5, CUpti_ActivityMemcpy6, deviceId);
INJECT_SAME(CUpti_ActivityMemcpy5, CUpti_ActivityMemcpy6, streamId);
INJECT_SAME(CUpti_ActivityMemcpy5, CUpti_ActivityMemcpy6, correlationId);
INJECT_SAME(CUpti_ActivityMemoryPool2, CUpti_ActivityMemoryPool3,
    memoryPoolOperationType);
INJECT_SAME(CUpti_ActivityMemoryPool2, CUpti_ActivityMemoryPool3, timestamp);
#endif

#define INJECT_BUFFER_SIZE	(8u * 1024 * 1024)
#define INJECT_RANGES		64	/* open step ranges we remember */
#define INJECT_DEVICES		64
#define INJECT_HANDLES		1024	/* stream handles we remember */

/* A stream handle's CUPTI id, for events made from PyTorch's history. */
struct inject_handle {
	int32_t		device;
	uint64_t	handle;
	uint64_t	stream;
};

static CUpti_SubscriberHandle	inject_subscriber;
static pthread_mutex_t		inject_cupti_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t			inject_ranges[INJECT_RANGES];
static size_t			inject_nranges;
static uint32_t			inject_cupti_name;	/* string id "cupti" */
static unsigned char		inject_device_seen[INJECT_DEVICES];
static struct inject_handle	inject_handles[INJECT_HANDLES];
static size_t			inject_nhandles;
static regex_t			inject_step_re;	/* VRAMTRACE_STEP_MARKER */
static int			inject_have_step_re;

static uint64_t
inject_id(uint32_t id)
{
	return (id == CUPTI_INVALID_STREAM_ID ? EVENT_NONE : id);
}

static void
inject_memory(const inject_memory_record *r)
{
	struct event	ev;

	memset(&ev, 0, sizeof ev);
	if (r->memoryOperationType ==
	    CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION)
		ev.type = EVENT_ALLOC;
	else if (r->memoryOperationType ==
	    CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE)
		ev.type = EVENT_FREE;
	else
		return;
	/*
	 * Static memory is a loaded module's globals, placed when the module
	 * loads and never freed by the program: not an allocation to follow.
	 */
	if (r->memoryKind == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC ||
	    r->memoryKind == CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC)
		return;
	ev.time_ns = r->timestamp;
	ev.u.alloc.address = r->address;
	ev.u.alloc.bytes = r->bytes;
	ev.u.alloc.requested = EVENT_NONE;
	ev.u.alloc.stream = inject_id(r->streamId);
	ev.u.alloc.correlation = r->correlationId;
	ev.u.alloc.device = (int32_t)r->deviceId;
	switch (r->memoryKind) {
	case CUPTI_ACTIVITY_MEMORY_KIND_PINNED:
	case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE:
		ev.u.alloc.layer = EVENT_LAYER_HOST;
		ev.u.alloc.device = -1;
		break;
	default:
		ev.u.alloc.layer = r->isAsync ?
		    EVENT_LAYER_POOL : EVENT_LAYER_SEGMENT;
		break;
	}
	client_emit(&ev);
}

static void
inject_memcpy(const inject_memcpy_record *r)
{
	struct event	ev;
	int32_t		dev = (int32_t)r->deviceId;

	memset(&ev, 0, sizeof ev);
	ev.type = EVENT_MEMCPY;
	ev.time_ns = r->start;
	ev.u.memcpy.bytes = r->bytes;
	ev.u.memcpy.stream = inject_id(r->streamId);
	ev.u.memcpy.end_ns = r->end;
	ev.u.memcpy.correlation = r->correlationId;
	ev.u.memcpy.src_device = dev;
	ev.u.memcpy.dst_device = dev;
	switch (r->copyKind) {
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
		ev.u.memcpy.kind = EVENT_COPY_HTOD;
		ev.u.memcpy.src_device = -1;
		break;
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
		ev.u.memcpy.kind = EVENT_COPY_DTOH;
		ev.u.memcpy.dst_device = -1;
		break;
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
		ev.u.memcpy.kind = EVENT_COPY_DTOD;
		break;
	default:
		ev.u.memcpy.kind = EVENT_COPY_UNKNOWN;
		break;
	}
	client_emit(&ev);
}

static void
inject_mark(uint8_t type, uint64_t t, const char *name)
{
	struct event	ev;

	memset(&ev, 0, sizeof ev);
	ev.type = type;
	ev.time_ns = t;
	ev.u.step.step = -1;
	ev.u.step.name = name != NULL ? client_string(name) : 0;
	client_emit(&ev);
}

static void
inject_pool(const inject_pool_record *r)
{
	const char	*name;

	switch (r->memoryPoolOperationType) {
	case CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED:
		name = "cuda pool created";
		break;
	case CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_DESTROYED:
		name = "cuda pool destroyed";
		break;
	case CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED:
		name = "cuda pool trimmed";
		break;
	default:
		return;
	}
	inject_mark(EVENT_MARK, r->timestamp, name);
}

/* Remember or forget an open step range; returns 1 if end matched one. */
static int
inject_range(uint32_t id, int open)
{
	size_t	i;
	int	found = 0;

	pthread_mutex_lock(&inject_cupti_lock);
	if (open) {
		if (inject_nranges < INJECT_RANGES)
			inject_ranges[inject_nranges++] = id;
	} else {
		for (i = 0; i < inject_nranges; i++) {
			if (inject_ranges[i] != id)
				continue;
			inject_ranges[i] = inject_ranges[--inject_nranges];
			found = 1;
			break;
		}
	}
	pthread_mutex_unlock(&inject_cupti_lock);
	return (found);
}

/* Does an NVTX range or mark name mark a step?  Thread-safe. */
static int
inject_step_match(const char *name)
{
	if (!inject_have_step_re || name == NULL)
		return (0);
	return (regexec(&inject_step_re, name, 0, NULL, 0) == 0);
}

static void
inject_marker(const inject_marker_record *r)
{
	int	step = inject_step_match(r->name);

	if (r->flags & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS)
		inject_mark(step ? EVENT_STEP_END : EVENT_MARK, r->timestamp,
		    r->name);
	else if ((r->flags & CUPTI_ACTIVITY_FLAG_MARKER_START) && step) {
		inject_range(r->id, 1);
		inject_mark(EVENT_STEP_BEGIN, r->timestamp, r->name);
	} else if ((r->flags & CUPTI_ACTIVITY_FLAG_MARKER_END) &&
	    inject_range(r->id, 0))
		inject_mark(EVENT_STEP_END, r->timestamp, NULL);
}

static void
inject_cupti_request(uint8_t **buffer, size_t *size, size_t *max_records)
{
	*buffer = aligned_alloc(8, INJECT_BUFFER_SIZE);
	*size = *buffer != NULL ? INJECT_BUFFER_SIZE : 0;
	*max_records = 0;
}

static void
inject_cupti_complete(CUcontext ctx, uint32_t stream, uint8_t *buffer,
    size_t size, size_t valid)
{
	CUpti_Activity	*r = NULL;
	struct event	 ev;
	size_t		 dropped = 0;

	(void)ctx;
	(void)stream;
	(void)size;
	while (inject_api.cuptiActivityGetNextRecord(buffer, valid, &r) ==
	    CUPTI_SUCCESS) {
		switch (r->kind) {
		case CUPTI_ACTIVITY_KIND_MEMORY2:
			inject_memory((inject_memory_record *)r);
			break;
		case CUPTI_ACTIVITY_KIND_MEMORY_POOL:
			inject_pool((inject_pool_record *)r);
			break;
		case CUPTI_ACTIVITY_KIND_MEMCPY:
			inject_memcpy((inject_memcpy_record *)r);
			break;
		case CUPTI_ACTIVITY_KIND_MARKER:
			inject_marker((inject_marker_record *)r);
			break;
		default:
			break;
		}
	}
	free(buffer);
	if (inject_api.cuptiActivityGetNumDroppedRecords(NULL, 0,
	    &dropped) == CUPTI_SUCCESS && dropped != 0) {
		memset(&ev, 0, sizeof ev);
		ev.type = EVENT_DROPPED;
		ev.time_ns = inject_now();
		ev.u.dropped.count = dropped;
		ev.u.dropped.source = inject_cupti_name;
		client_emit(&ev);
	}
}

/* Name a device the first time one of its contexts appears. */
static void
inject_device(uint32_t id)
{
	struct event	ev;
	CUdevice	dev;
	char		name[256];
	size_t		total = 0;

	if (id >= INJECT_DEVICES || inject_device_seen[id])
		return;
	inject_device_seen[id] = 1;
	if (inject_api.cuDeviceGet(&dev, (int)id) != CUDA_SUCCESS ||
	    inject_api.cuDeviceGetName(name, sizeof name, dev) != CUDA_SUCCESS)
		snprintf(name, sizeof name, "device %u", id);
	if (inject_api.cuDeviceTotalMem(&total, (int)id) != CUDA_SUCCESS)
		total = 0;
	memset(&ev, 0, sizeof ev);
	ev.type = EVENT_DEVICE;
	ev.time_ns = inject_now();
	ev.u.device.total_bytes = total;
	ev.u.device.device = (int32_t)id;
	ev.u.device.name = client_string(name);
	client_emit(&ev);
}

/* Start a stream or context event of ctx: 0, or -1 if CUPTI cannot say. */
static int
inject_stream_event(struct event *ev, uint8_t type, CUcontext ctx)
{
	uint32_t	ctx_id, dev;

	if (inject_api.cuptiGetContextId(ctx, &ctx_id) != CUPTI_SUCCESS ||
	    inject_api.cuptiGetDeviceId(ctx, &dev) != CUPTI_SUCCESS)
		return (-1);
	memset(ev, 0, sizeof *ev);
	ev->type = type;
	ev->time_ns = inject_now();
	ev->u.stream.context = ctx_id;
	ev->u.stream.device = (int32_t)dev;
	return (0);
}

/* Remember that handle names stream on device (the latest one wins). */
static void
inject_handle(int32_t device, uint64_t handle, uint64_t stream)
{
	size_t	i;

	pthread_mutex_lock(&inject_cupti_lock);
	for (i = 0; i < inject_nhandles; i++) {
		if (inject_handles[i].device == device &&
		    inject_handles[i].handle == handle)
			break;
	}
	if (i == inject_nhandles && inject_nhandles < INJECT_HANDLES)
		inject_nhandles++;
	if (i < inject_nhandles) {
		inject_handles[i].device = device;
		inject_handles[i].handle = handle;
		inject_handles[i].stream = stream;
	}
	pthread_mutex_unlock(&inject_cupti_lock);
}

/*
 * The CUPTI id of the stream whose cudaStream_t value (as PyTorch's
 * snapshots write it) is handle on device, or EVENT_NONE.  A handle reused
 * by a later stream names the later one.
 */
uint64_t
inject_cupti_stream(int32_t device, uint64_t handle)
{
	uint64_t	stream = EVENT_NONE;
	size_t		i;

	pthread_mutex_lock(&inject_cupti_lock);
	for (i = 0; i < inject_nhandles; i++) {
		if (inject_handles[i].device == device &&
		    inject_handles[i].handle == handle)
			stream = inject_handles[i].stream;
	}
	pthread_mutex_unlock(&inject_cupti_lock);
	return (stream);
}

static void
inject_stream(uint8_t type, CUcontext ctx, CUstream stream, uint64_t handle,
    int per_thread)
{
	struct event	ev;
	uint32_t	id;
	int		priority = 0;
	unsigned int	flags = 0;

	if (inject_api.cuptiGetStreamIdEx(ctx, stream, (uint8_t)per_thread,
	    &id) != CUPTI_SUCCESS || inject_stream_event(&ev, type, ctx) != 0)
		return;
	ev.u.stream.stream = id;
	ev.u.stream.handle = handle;
	if (stream == NULL)
		flags = 3;	/* CUPTI's flag for a NULL stream */
	else if (type == EVENT_STREAM_CREATE) {
		inject_api.cuStreamGetPriority(stream, &priority);
		inject_api.cuStreamGetFlags(stream, &flags);
		flags = flags & CU_STREAM_NON_BLOCKING ? 2 : 1;
	}
	ev.u.stream.priority = priority;
	ev.u.stream.flags = flags;
	if (type == EVENT_STREAM_CREATE)
		inject_handle(ev.u.stream.device, handle, id);
	client_emit(&ev);
}

static void
inject_context(uint8_t type, CUcontext ctx)
{
	struct event	ev;

	if (inject_stream_event(&ev, type, ctx) != 0)
		return;
	if (type == EVENT_CONTEXT_CREATE)
		inject_device((uint32_t)ev.u.stream.device);
	ev.u.stream.stream = EVENT_NONE;
	ev.u.stream.handle = EVENT_NONE;
	client_emit(&ev);
	if (type != EVENT_CONTEXT_CREATE)
		return;
	/* The default streams exist without a creation callback. */
	inject_stream(EVENT_STREAM_CREATE, ctx, NULL, 0, 0);
	inject_stream(EVENT_STREAM_CREATE, ctx, NULL, 2, 1);
}

static void CUPTIAPI
inject_cupti_callback(void *userdata, CUpti_CallbackDomain domain,
    CUpti_CallbackId cbid, const void *data)
{
	const CUpti_ResourceData	*rd = data;
	const CUpti_StateData		*sd = data;

	(void)userdata;
	if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
		inject_calls_callback(cbid, data);
		inject_entry_callback(cbid, data);
		inject_copies_callback(cbid, data);
		return;
	}
	if (domain == CUPTI_CB_DOMAIN_STATE) {
		if (cbid == CUPTI_CBID_STATE_FATAL_ERROR)
			client_warn("CUPTI reported a fatal error: %s",
			    sd->notification.message != NULL ?
			    sd->notification.message : "unknown");
		return;
	}
	if (domain != CUPTI_CB_DOMAIN_RESOURCE)
		return;
	switch (cbid) {
	case CUPTI_CBID_RESOURCE_CONTEXT_CREATED:
		inject_context(EVENT_CONTEXT_CREATE, rd->context);
		break;
	case CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING:
		inject_calls_forget();
		inject_context(EVENT_CONTEXT_DESTROY, rd->context);
		break;
	case CUPTI_CBID_RESOURCE_STREAM_CREATED:
		inject_stream(EVENT_STREAM_CREATE, rd->context,
		    rd->resourceHandle.stream,
		    (uint64_t)(uintptr_t)rd->resourceHandle.stream, 0);
		break;
	case CUPTI_CBID_RESOURCE_STREAM_DESTROY_STARTING:
		inject_calls_forget();
		inject_stream(EVENT_STREAM_DESTROY, rd->context,
		    rd->resourceHandle.stream,
		    (uint64_t)(uintptr_t)rd->resourceHandle.stream, 0);
		break;
	default:
		break;
	}
}

/* Turn a CUPTI result into a cause; returns -1 for the caller. */
static int
inject_cupti_fail(char **cause, const char *what, CUptiResult rc)
{
	const char	*s = NULL;

	inject_api.cuptiGetResultString(rc, &s);
	if (asprintf(cause, "%s: %s", what, s != NULL ? s : "error") == -1)
		*cause = NULL;
	return (-1);
}

static int
inject_cupti_subscribe(char **cause)
{
	CUpti_SubscriberParams	params;
	char			old[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1];
	CUptiResult		rc;

	memset(&params, 0, sizeof params);
	memset(old, 0, sizeof old);
	params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
	params.subscriberName = "vramtrace";
	params.oldSubscriberName = old;
	params.oldSubscriberSize = sizeof old - 1;
	if (inject_api.cuptiSubscribe_v2 != NULL)
		rc = inject_api.cuptiSubscribe_v2(&inject_subscriber,
		    inject_cupti_callback, NULL, &params);
	else	/* CUPTI 12: it cannot name who holds CUPTI */
		rc = inject_api.cuptiSubscribe(&inject_subscriber,
		    inject_cupti_callback, NULL);
	if (rc == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
		if (asprintf(cause, "another tool holds CUPTI (%s): run the"
		    " program without it (torch.profiler, Nsight, DCGM) to"
		    " record it", *old != '\0' ? old : "unknown") == -1)
			*cause = NULL;
		return (-1);
	}
	if (rc != CUPTI_SUCCESS)
		return (inject_cupti_fail(cause, "cuptiSubscribe", rc));
	return (0);
}

/*
 * Find libcupti (inject-api.c), subscribe to it and enable the callbacks
 * and activity kinds we need.  Called once from InitializeInjection.
 * Returns 0, or -1 with *cause set (the caller frees it); on failure
 * nothing stays enabled.
 */
int
inject_cupti_start(const struct inject_config *config, char **cause)
{
	static const CUpti_CallbackId resources[] = {
		CUPTI_CBID_RESOURCE_CONTEXT_CREATED,
		CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING,
		CUPTI_CBID_RESOURCE_STREAM_CREATED,
		CUPTI_CBID_RESOURCE_STREAM_DESTROY_STARTING
	};
	CUpti_ActivityKind kinds[4];
	size_t		i, nkinds = 0;
	CUptiResult	rc;

	if (inject_api_open(cause) != 0 || inject_cupti_subscribe(cause) != 0)
		return (-1);
	for (i = 0; i < sizeof resources / sizeof resources[0]; i++) {
		rc = inject_api.cuptiEnableCallback(1, inject_subscriber,
		    CUPTI_CB_DOMAIN_RESOURCE, resources[i]);
		if (rc != CUPTI_SUCCESS)
			goto fail_callback;
	}
	rc = inject_api.cuptiEnableCallback(1, inject_subscriber,
	    CUPTI_CB_DOMAIN_STATE, CUPTI_CBID_STATE_FATAL_ERROR);
	if (rc != CUPTI_SUCCESS)
		goto fail_callback;
	rc = inject_api.cuptiActivityRegisterCallbacks(inject_cupti_request,
	    inject_cupti_complete);
	if (rc != CUPTI_SUCCESS)
		goto fail_callback;
	inject_cupti_name = client_string("cupti");
	inject_have_step_re = regcomp(&inject_step_re, config->step_marker,
	    REG_EXTENDED | REG_NOSUB) == 0;
	if (!inject_have_step_re)
		client_note("VRAMTRACE_STEP_MARKER: not an extended regular"
		    " expression: %s; recording goes on, with no steps from"
		    " NVTX ranges", config->step_marker);
	if (config->records & INJECT_RECORD_MEMORY)
		kinds[nkinds++] = CUPTI_ACTIVITY_KIND_MEMORY2;
	else if ((config->records & INJECT_RECORD_CALLS) &&
	    (rc = inject_calls_start(inject_subscriber)) != CUPTI_SUCCESS)
		goto fail_callback;
	else if ((config->records & (INJECT_RECORD_CALLS |
	    INJECT_RECORD_INTERPOSE)) == (INJECT_RECORD_CALLS |
	    INJECT_RECORD_INTERPOSE))
		inject_interpose_start(inject_subscriber);
	if (config->records & INJECT_RECORD_POOL)
		kinds[nkinds++] = CUPTI_ACTIVITY_KIND_MEMORY_POOL;
	if (config->records & INJECT_RECORD_MEMCPY)
		kinds[nkinds++] = CUPTI_ACTIVITY_KIND_MEMCPY;
	else if ((config->records & INJECT_RECORD_COPIES) &&
	    (rc = inject_copies_start(inject_subscriber)) != CUPTI_SUCCESS)
		goto fail_callback;
	if (config->nvtx)
		kinds[nkinds++] = CUPTI_ACTIVITY_KIND_MARKER;
	for (i = 0; i < nkinds; i++) {
		rc = inject_api.cuptiActivityEnable(kinds[i]);
		if (rc != CUPTI_SUCCESS) {
			while (i-- > 0)
				inject_api.cuptiActivityDisable(kinds[i]);
			inject_api.cuptiUnsubscribe(inject_subscriber);
			return (inject_cupti_fail(cause, "cuptiActivityEnable",
			    rc));
		}
	}
	return (0);

fail_callback:
	inject_api.cuptiUnsubscribe(inject_subscriber);
	return (inject_cupti_fail(cause, "cuptiEnableCallback", rc));
}

/* Ask CUPTI for its buffers: completed ones, or all when forced. */
void
inject_cupti_flush(int forced)
{
	inject_api.cuptiActivityFlushAll(forced ?
	    CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
}

/*
 * NVTX's injection entry point (NVTX_INJECTION64_PATH names this library):
 * hand NVTX to the libcupti this library uses (inject-api.c finds it, if
 * NVTX comes first), so that ranges and marks reach the subscriber that
 * records them.  A process may hold two copies of libcupti (PyTorch ships
 * its own); naming a libcupti file in NVTX_INJECTION64_PATH could reach
 * the other one.  Returns 0 (NVTX then stays off) when there is no
 * libcupti or it has no NVTX support.
 */
int	InitializeInjectionNvtx2(const void *)
	    __attribute__((visibility("default")));

int
InitializeInjectionNvtx2(const void *get_export_table)
{
	int	(*init)(const void *);

	if (inject_api_open(NULL) != 0)
		return (0);
	*(void **)&init = dlsym(inject_api.cupti, "InitializeInjectionNvtx2");
	if (init == NULL)
		return (0);
	return (init(get_export_table));
}
