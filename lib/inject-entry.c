/*
 * inject-entry.c: the driver's stream-ordered allocation calls wrapped
 * where a CUDA runtime that starts after vramtrace asks for them
 * (VRAMTRACE_RECORDS interpose).
 *
 * A CUDA runtime (libcudart.so, or one linked statically into a program
 * or library) fills a table of the driver's functions when it starts,
 * through cuGetProcAddress, and makes its cuMemAllocAsync and
 * cuMemFreeAsync calls through that table.  With interpose,
 * inject-interpose.c redirects the runtime's cudaMallocAsync and
 * cudaFreeAsync in the objects that import them and turns CUPTI's
 * callbacks on those two driver calls off; a runtime linked into a
 * library loaded later imports nothing, so its calls would go unseen.
 * But its table is made after CUDA loaded vramtrace (only the runtime
 * that started CUDA made its table before), so CUPTI's callback on
 * cuGetProcAddress sees it being made: the entries of the two calls are
 * replaced there by wrappers that call the driver's function and make the
 * event.  A wrapper reached from inside inject-interpose.c's (a runtime
 * whose importers were redirected and whose table was made later: a
 * second libcudart) makes no second event.
 *
 * The runtime that started CUDA made its table before: when interpose
 * starts, the words of the loaded objects' writable memory that hold the
 * driver's functions for the two calls are the tables of such runtimes
 * (the driver's own, CUPTI's and vramtrace's excepted), and they are
 * replaced by the wrappers too (inject_entry_scan, over got_replace).
 *
 * An entry is one driver function handed out for one of the two calls,
 * in its legacy or its per-thread default stream form; ENTRY_SLOTS of
 * them can be wrapped.  One beyond that is handed out as it is, and
 * CUPTI's callbacks on the driver calls come back on for good
 * (inject_entry_cupti_back).
 */
#include "config.h"

#include <pthread.h>
#include <string.h>

#include "client.h"
#include "inject.h"
#include "inject-api.h"
#include "got.h"

#define ENTRY_SLOTS	8

typedef CUresult	(*entry_alloc_fn)(CUdeviceptr *, size_t, CUstream);
typedef CUresult	(*entry_free_fn)(CUdeviceptr, CUstream);

/* A driver function handed out, and its wrapper. */
struct entry_slot {
	void	*real;
	void	*wrapper;
	int	 frees;		/* cuMemFreeAsync, else cuMemAllocAsync */
	int	 per_thread;	/* the per-thread default stream form */
};

static struct entry_slot	entry_slots[ENTRY_SLOTS];
static unsigned			entry_used;
static pthread_mutex_t		entry_lock = PTHREAD_MUTEX_INITIALIZER;
static void			*entry_subscriber;

static int	 entry_cupti_kept;	/* on for good */

/* Set CUPTI's callbacks on cuMemAllocAsync and cuMemFreeAsync on or off. */
static void
entry_cupti_set(int on)
{
	inject_api.cuptiEnableCallback(on, entry_subscriber,
	    CUPTI_CB_DOMAIN_DRIVER_API,
	    CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync);
	inject_api.cuptiEnableCallback(on, entry_subscriber,
	    CUPTI_CB_DOMAIN_DRIVER_API,
	    CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync);
}

/*
 * Turn CUPTI's callbacks on cuMemAllocAsync and cuMemFreeAsync back on for
 * good, saying why (a wrapper could not be put where calls go).
 */
void
inject_entry_cupti_back(const char *why)
{
	if (__atomic_exchange_n(&entry_cupti_kept, 1, __ATOMIC_ACQ_REL))
		return;
	client_note("interpose: %s; their calls are seen through CUPTI's"
	    " callbacks from now on", why);
	entry_cupti_set(1);
}

/*
 * Set CUPTI's callbacks on cuMemAllocAsync and cuMemFreeAsync on or off
 * (inject-interpose.c: off while every call goes through a wrapper),
 * unless inject_entry_cupti_back() turned them on for good.
 */
void
inject_entry_cupti(int on)
{
	if (!__atomic_load_n(&entry_cupti_kept, __ATOMIC_ACQUIRE))
		entry_cupti_set(on);
}

static CUresult
entry_alloc(unsigned i, CUdeviceptr *ptr, size_t size, CUstream stream)
{
	const struct entry_slot	*e = &entry_slots[i];
	entry_alloc_fn		 real;
	CUresult		 rc;

	*(void **)&real = e->real;
	if (inject_calls_inside)
		return (real(ptr, size, stream));
	inject_calls_inside = 1;
	rc = real(ptr, size, stream);
	inject_calls_inside = 0;
	if (rc == CUDA_SUCCESS && ptr != NULL)
		inject_calls_wrapped(EVENT_ALLOC, (uint64_t)*ptr, size, stream,
		    e->per_thread);
	return (rc);
}

static CUresult
entry_free(unsigned i, CUdeviceptr ptr, CUstream stream)
{
	const struct entry_slot	*e = &entry_slots[i];
	entry_free_fn		 real;
	CUresult		 rc;

	*(void **)&real = e->real;
	if (inject_calls_inside)
		return (real(ptr, stream));
	inject_calls_inside = 1;
	rc = real(ptr, stream);
	inject_calls_inside = 0;
	if (rc == CUDA_SUCCESS)
		inject_calls_wrapped(EVENT_FREE, (uint64_t)ptr, 0, stream,
		    e->per_thread);
	return (rc);
}

/* The wrappers of slot i, one per call. */
#define ENTRY_WRAPPERS(i)						\
static CUresult								\
entry_alloc_##i(CUdeviceptr *ptr, size_t size, CUstream stream)	\
{									\
	return (entry_alloc(i, ptr, size, stream));			\
}									\
static CUresult								\
entry_free_##i(CUdeviceptr ptr, CUstream stream)			\
{									\
	return (entry_free(i, ptr, stream));				\
}
ENTRY_WRAPPERS(0) ENTRY_WRAPPERS(1) ENTRY_WRAPPERS(2) ENTRY_WRAPPERS(3)
ENTRY_WRAPPERS(4) ENTRY_WRAPPERS(5) ENTRY_WRAPPERS(6) ENTRY_WRAPPERS(7)

static void *const entry_allocs[ENTRY_SLOTS] = {
	(void *)entry_alloc_0, (void *)entry_alloc_1, (void *)entry_alloc_2,
	(void *)entry_alloc_3, (void *)entry_alloc_4, (void *)entry_alloc_5,
	(void *)entry_alloc_6, (void *)entry_alloc_7
};
static void *const entry_frees[ENTRY_SLOTS] = {
	(void *)entry_free_0, (void *)entry_free_1, (void *)entry_free_2,
	(void *)entry_free_3, (void *)entry_free_4, (void *)entry_free_5,
	(void *)entry_free_6, (void *)entry_free_7
};

/*
 * The wrapper to hand out instead of real, the driver's function for the
 * call (frees: cuMemFreeAsync, else cuMemAllocAsync) in its per_thread
 * form or not: real itself when it is a wrapper already, or when every
 * slot is taken.
 */
static void *
entry_wrap(void *real, int frees, int per_thread)
{
	void		*out = real;
	unsigned	 i;

	pthread_mutex_lock(&entry_lock);
	for (i = 0; i < entry_used; i++) {
		if (entry_slots[i].wrapper == real)
			break;
		if (entry_slots[i].real == real &&
		    entry_slots[i].frees == frees &&
		    entry_slots[i].per_thread == per_thread) {
			out = entry_slots[i].wrapper;
			break;
		}
	}
	if (i == entry_used && entry_used < ENTRY_SLOTS) {
		entry_slots[i].real = real;
		entry_slots[i].frees = frees;
		entry_slots[i].per_thread = per_thread;
		entry_slots[i].wrapper = frees ? entry_frees[i] :
		    entry_allocs[i];
		out = entry_slots[i].wrapper;
		__atomic_store_n(&entry_used, i + 1, __ATOMIC_RELEASE);
	} else if (i == entry_used)
		inject_entry_cupti_back("more than 8 driver functions handed"
		    " out for cuMemAllocAsync and cuMemFreeAsync");
	pthread_mutex_unlock(&entry_lock);
	return (out);
}

/*
 * Wrap the entries of the tables that runtimes made before vramtrace
 * started (see the top of the file).  Returns how many entries were
 * wrapped, and fills wrapper with the wrappers of the driver's
 * cuMemAllocAsync, cuMemAllocAsync_ptsz, cuMemFreeAsync and
 * cuMemFreeAsync_ptsz; -1 when the driver's functions cannot be had
 * (wrapper NULL), 0 also when the process's mappings cannot be read.
 */
int
inject_entry_scan(void *wrapper[4])
{
	static const char *const names[2] = { "cuMemAllocAsync",
	    "cuMemFreeAsync" };
	void		*real[4];
	const void	*skip[3];
	long		 found;
	int		 k;

	for (k = 0; k < 4; k++)
		real[k] = wrapper[k] = NULL;
	for (k = 0; k < 4; k++) {
		if (inject_api.cuGetProcAddress(names[k / 2], &real[k], 12000,
		    k % 2 ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM :
		    CU_GET_PROC_ADDRESS_LEGACY_STREAM, NULL) != CUDA_SUCCESS ||
		    real[k] == NULL ||
		    (wrapper[k] = entry_wrap(real[k], k / 2, k % 2)) ==
		    real[k]) {
			for (k = 0; k < 4; k++)
				real[k] = wrapper[k] = NULL;
			return (-1);
		}
	}
	skip[0] = real[0];		/* the driver */
	skip[1] = (const void *)inject_api.cuptiEnableCallback;
	skip[2] = (const void *)entry_wrap;	/* vramtrace */
	found = got_replace(real, wrapper, 4, skip, 3);
	return (found > 0 ? (int)found : 0);
}

/*
 * Turn on CUPTI's callbacks on cuGetProcAddress for subscriber (a
 * CUpti_SubscriberHandle), so that inject_entry_callback() sees the
 * driver's functions handed out from now on.  Returns 0, or the CUPTI
 * error.
 */
int
inject_entry_start(void *subscriber)
{
	CUptiResult	rc;

	entry_subscriber = subscriber;
	rc = inject_api.cuptiEnableCallback(1, subscriber,
	    CUPTI_CB_DOMAIN_DRIVER_API,
	    CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress);
	if (rc == CUPTI_SUCCESS)
		rc = inject_api.cuptiEnableCallback(1, subscriber,
		    CUPTI_CB_DOMAIN_DRIVER_API,
		    CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress_v2);
	return ((int)rc);
}

/*
 * A driver API callback (data is its CUpti_CallbackData): when a
 * cuGetProcAddress call hands out cuMemAllocAsync or cuMemFreeAsync,
 * hand out a wrapper instead.  Other calls are ignored.
 */
void
inject_entry_callback(uint32_t cbid, const void *data)
{
	const CUpti_CallbackData	*cb = data;
	const char			*symbol;
	void				**pfn;
	cuuint64_t			 flags;
	int				 frees;

	if (cbid == CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress_v2) {
		const cuGetProcAddress_v2_params *p = cb->functionParams;

		symbol = p->symbol;
		pfn = p->pfn;
		flags = p->flags;
	} else if (cbid == CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress) {
		const cuGetProcAddress_params *p = cb->functionParams;

		symbol = p->symbol;
		pfn = p->pfn;
		flags = p->flags;
	} else
		return;
	if (cb->callbackSite != CUPTI_API_EXIT || symbol == NULL ||
	    pfn == NULL || *pfn == NULL || cb->functionReturnValue == NULL ||
	    *(const CUresult *)cb->functionReturnValue != CUDA_SUCCESS)
		return;
	if (strcmp(symbol, "cuMemAllocAsync") == 0)
		frees = 0;
	else if (strcmp(symbol, "cuMemFreeAsync") == 0)
		frees = 1;
	else
		return;
	*pfn = entry_wrap(*pfn, frees,
	    (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0);
}
