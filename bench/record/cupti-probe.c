/*
 * cupti-probe.c: what CUPTI itself costs an application, apart from
 * vramtrace.  An injection library (CUDA_INJECTION64_PATH) that does one
 * thing, picked by VRAMTRACE_PROBE, and counts what it saw:
 *
 *	subscribe	cuptiSubscribe with no callback enabled
 *	memory2		MEMORY2 activity records into 8 MiB buffers, counted
 *	driver		driver-API callbacks on the stream-ordered allocation
 *			calls (cuMemAllocAsync, cuMemFreeAsync, from-pool),
 *			each reading its arguments and a timestamp
 *	runtime		the same on the runtime calls (cudaMallocAsync, ...)
 *
 * At exit it prints "cupti-cost MODE: N allocations, M frees" on stderr,
 * so that a run shows whether a mode sees every allocation.  Used by
 * bench/record/cupti-cost; not installed.
 */
#include <cupti.h>

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROBE_BUFFER	(8u * 1024 * 1024)

static CUpti_SubscriberHandle	probe_subscriber;
static const char		*probe_mode = "";
static _Atomic uint64_t		 probe_allocs;
static _Atomic uint64_t		 probe_frees;
static _Atomic uint64_t		 probe_sink;	/* keeps the reads alive */

static void
probe_request(uint8_t **buffer, size_t *size, size_t *max_records)
{
	*buffer = aligned_alloc(8, PROBE_BUFFER);
	*size = *buffer != NULL ? PROBE_BUFFER : 0;
	*max_records = 0;
}

static void
probe_complete(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
    size_t valid)
{
	CUpti_Activity		*r = NULL;
	CUpti_ActivityMemory4	*m;

	(void)ctx;
	(void)stream;
	(void)size;
	while (cuptiActivityGetNextRecord(buffer, valid, &r) == CUPTI_SUCCESS) {
		if (r->kind != CUPTI_ACTIVITY_KIND_MEMORY2)
			continue;
		m = (CUpti_ActivityMemory4 *)r;
		if (m->memoryOperationType ==
		    CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION)
			probe_allocs++;
		else
			probe_frees++;
	}
	free(buffer);
}

/* Read what a recorder would keep: address, size, stream, time. */
static void
probe_note(int alloc, uint64_t address, uint64_t bytes, const void *stream)
{
	uint64_t	t = 0;

	cuptiGetTimestamp(&t);
	probe_sink += address ^ bytes ^ (uint64_t)(uintptr_t)stream ^ t;
	if (alloc)
		probe_allocs++;
	else
		probe_frees++;
}

static void CUPTIAPI
probe_callback(void *userdata, CUpti_CallbackDomain domain,
    CUpti_CallbackId cbid, const void *data)
{
	const CUpti_CallbackData	*cb = data;
	const cuMemAllocAsync_params	*da;
	const cuMemFreeAsync_params	*df;
	const cudaMallocAsync_v11020_params *ra;
	const cudaFreeAsync_v11020_params *rf;

	(void)userdata;
	if (cb->callbackSite != CUPTI_API_EXIT)
		return;
	if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
		switch (cbid) {
		case CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync:
		case CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync_ptsz:
		case CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync:
		case CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync_ptsz:
			/* From-pool's first members have the same layout. */
			da = cb->functionParams;
			probe_note(1, *da->dptr, da->bytesize, da->hStream);
			break;
		default:
			df = cb->functionParams;
			probe_note(0, df->dptr, 0, df->hStream);
			break;
		}
		return;
	}
	switch (cbid) {
	case CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020:
	case CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_ptsz_v11020:
		ra = cb->functionParams;
		probe_note(1, (uint64_t)(uintptr_t)*ra->devPtr, ra->size,
		    ra->hStream);
		break;
	default:
		rf = cb->functionParams;
		probe_note(0, (uint64_t)(uintptr_t)rf->devPtr, 0, rf->hStream);
		break;
	}
}

static void
probe_report(void)
{
	if (strcmp(probe_mode, "memory2") == 0)
		cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	fprintf(stderr, "cupti-cost %s: %llu allocations, %llu frees\n",
	    probe_mode, (unsigned long long)probe_allocs,
	    (unsigned long long)probe_frees);
}

static int
probe_enable(CUpti_CallbackDomain domain, const CUpti_CallbackId *ids,
    size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++) {
		if (cuptiEnableCallback(1, probe_subscriber, domain, ids[i]) !=
		    CUPTI_SUCCESS)
			return (-1);
	}
	return (0);
}

int	InitializeInjection(void) __attribute__((visibility("default")));

int
InitializeInjection(void)
{
	static const CUpti_CallbackId driver[] = {
		CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync,
		CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync_ptsz,
		CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync,
		CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync_ptsz,
		CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync,
		CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync_ptsz
	};
	static const CUpti_CallbackId runtime[] = {
		CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020,
		CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_ptsz_v11020,
		CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_v11020,
		CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_ptsz_v11020
	};
	const char	*mode = getenv("VRAMTRACE_PROBE");
	int		 rc = 0;

	probe_mode = mode != NULL ? mode : "subscribe";
	if (cuptiSubscribe(&probe_subscriber, probe_callback, NULL) !=
	    CUPTI_SUCCESS) {
		fprintf(stderr, "cupti-cost: cuptiSubscribe failed\n");
		return (1);
	}
	if (strcmp(probe_mode, "memory2") == 0) {
		if (cuptiActivityRegisterCallbacks(probe_request,
		    probe_complete) != CUPTI_SUCCESS ||
		    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMORY2) !=
		    CUPTI_SUCCESS)
			rc = -1;
	} else if (strcmp(probe_mode, "driver") == 0)
		rc = probe_enable(CUPTI_CB_DOMAIN_DRIVER_API, driver,
		    sizeof driver / sizeof driver[0]);
	else if (strcmp(probe_mode, "runtime") == 0)
		rc = probe_enable(CUPTI_CB_DOMAIN_RUNTIME_API, runtime,
		    sizeof runtime / sizeof runtime[0]);
	else if (strcmp(probe_mode, "subscribe") != 0)
		rc = -1;
	if (rc != 0)
		fprintf(stderr, "cupti-cost: mode %s failed\n", probe_mode);
	atexit(probe_report);
	return (1);
}
