/*
 * inject-api.c: find libcupti and the driver at run time and fill
 * inject_api (inject-api.h) with their functions.
 *
 * libcupti is the one cuda_find_open() gives (the process's own first:
 * the one PyTorch loaded); the driver is the libcuda.so.1 that is loading
 * us.  The first call does the work under inject_api_lock, whether it
 * comes from InitializeInjection or from NVTX's entry point (which may run
 * first, on another thread); later calls return its result.  On failure
 * every caller gets the same cause and nothing is recorded.
 */
#include "config.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda-find.h"
#include "inject-api.h"

#ifndef VRAMTRACE_CUDA_DIR
#define VRAMTRACE_CUDA_DIR ""
#endif

#define INJECT_API_SYMBOL(f)	CUDA_FIND_SYMBOL(inject_api, f)

struct inject_api		 inject_api;
static pthread_mutex_t		 inject_api_lock = PTHREAD_MUTEX_INITIALIZER;
static int			 inject_api_done;
static char			 inject_api_cause[640];

static const struct cuda_find_symbol inject_api_cupti[] = {
	INJECT_API_CUPTI(INJECT_API_SYMBOL)
};
static const struct cuda_find_symbol inject_api_driver[] = {
	INJECT_API_DRIVER(INJECT_API_SYMBOL)
};

static int
inject_api_fill(void)
{
	const char	*missing;
	char		 found[512];
	void		*cupti, *cuda;

	cupti = cuda_find_open(CUDA_FIND_CUPTI, VRAMTRACE_CUDA_DIR, found,
	    sizeof found);
	if (cupti == NULL) {
		snprintf(inject_api_cause, sizeof inject_api_cause,
		    "libcupti not found: %s", found);
		return (-1);
	}
	if (cuda_find_bind(cupti, inject_api_cupti,
	    sizeof inject_api_cupti / sizeof inject_api_cupti[0],
	    &missing) != 0) {
		snprintf(inject_api_cause, sizeof inject_api_cause,
		    "%s has no %s", found, missing);
		return (-1);
	}
	*(void **)&inject_api.cuptiSubscribe_v2 = dlsym(cupti,
	    "cuptiSubscribe_v2");
	inject_api.cupti = cupti;
	if ((cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD)) == NULL &&
	    (cuda = dlopen("libcuda.so.1", RTLD_NOW)) == NULL) {
		snprintf(inject_api_cause, sizeof inject_api_cause,
		    "libcuda.so.1 is not loaded");
		return (-1);
	}
	if (cuda_find_bind(cuda, inject_api_driver,
	    sizeof inject_api_driver / sizeof inject_api_driver[0],
	    &missing) != 0) {
		snprintf(inject_api_cause, sizeof inject_api_cause,
		    "libcuda.so.1 has no %s", missing);
		return (-1);
	}
	return (0);
}

/*
 * Fill inject_api once.  Returns 0, or -1 with *cause (the caller frees
 * it; NULL when even that could not be allocated).  Thread-safe.
 */
int
inject_api_open(char **cause)
{
	int	rc;

	pthread_mutex_lock(&inject_api_lock);
	if (!inject_api_done) {
		inject_api_done = 1;
		if (inject_api_fill() != 0)
			inject_api.cupti = NULL;
	}
	rc = inject_api.cupti != NULL ? 0 : -1;
	pthread_mutex_unlock(&inject_api_lock);
	if (rc != 0 && cause != NULL)
		*cause = strdup(inject_api_cause);
	return (rc);
}
