/*
 * nvml.c: the few NVML calls attach needs, with libnvidia-ml loaded at run
 * time, so that vramtrace builds and runs without the driver and needs no
 * NVML header.  VRAMTRACE_NVML_LIB names another library (the tests load a
 * fake one that replays a growing usage).
 *
 * The types below are NVML's own, as the driver's ABI fixes them:
 * nvmlReturn_t is an int (0 success, 7 buffer too small), a device is an
 * opaque pointer, and nvmlDeviceGetComputeRunningProcesses_v3 fills
 * nvmlProcessInfo_t records of four fields.
 */
#include "config.h"

#include "vramtrace.h"

#include <dlfcn.h>
#include <stdlib.h>

#define NVML_SUCCESS			0
#define NVML_ERROR_INSUFFICIENT_SIZE	7
#define NVML_VALUE_NOT_AVAILABLE	(~0ULL)

struct nvml_process_info {		/* nvmlProcessInfo_t */
	unsigned int		pid;
	unsigned long long	usedGpuMemory;
	unsigned int		gpuInstanceId;
	unsigned int		computeInstanceId;
};

struct nvml {
	void		 *lib;
	int		(*shutdown)(void);
	int		(*handle)(unsigned int, void **);
	int		(*procs)(void *, unsigned int *,
			    struct nvml_process_info *);
	const char	*(*error)(int);
	unsigned int	  ndevices;
	struct nvml_process_info *buf;
	unsigned int	  nbuf;
};

static const char *
nvml_error(struct nvml *n, int rc)
{
	const char	*s = n->error != NULL ? n->error(rc) : NULL;

	return (s != NULL ? s : "unknown error");
}

/*
 * Load NVML and initialise it.  Returns the handle (free with
 * nvml_close()), or NULL with *cause, one line that says NVML is missing
 * (no NVIDIA driver) or what failed.
 */
struct nvml *
nvml_open(char **cause)
{
	struct nvml	*n;
	const char	*name = getenv("VRAMTRACE_NVML_LIB");
	int		(*init)(void), (*count)(unsigned int *), rc;

	if (name == NULL || *name == '\0')
		name = "libnvidia-ml.so.1";
	n = xcalloc(1, sizeof *n);
	if ((n->lib = dlopen(name, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		xasprintf(cause, "cannot load NVML (%s): no NVIDIA driver "
		    "here? (%s)", name, dlerror());
		free(n);
		return (NULL);
	}
	*(void **)&init = dlsym(n->lib, "nvmlInit_v2");
	*(void **)&count = dlsym(n->lib, "nvmlDeviceGetCount_v2");
	*(void **)&n->shutdown = dlsym(n->lib, "nvmlShutdown");
	*(void **)&n->handle = dlsym(n->lib, "nvmlDeviceGetHandleByIndex_v2");
	*(void **)&n->procs = dlsym(n->lib,
	    "nvmlDeviceGetComputeRunningProcesses_v3");
	*(void **)&n->error = dlsym(n->lib, "nvmlErrorString");
	if (init == NULL || count == NULL || n->shutdown == NULL ||
	    n->handle == NULL || n->procs == NULL) {
		xasprintf(cause, "%s: NVML too old (no "
		    "nvmlDeviceGetComputeRunningProcesses_v3)", name);
		dlclose(n->lib);
		free(n);
		return (NULL);
	}
	if ((rc = init()) != NVML_SUCCESS) {
		xasprintf(cause, "NVML: cannot initialise: %s",
		    nvml_error(n, rc));
		dlclose(n->lib);
		free(n);
		return (NULL);
	}
	if ((rc = count(&n->ndevices)) != NVML_SUCCESS) {
		xasprintf(cause, "NVML: cannot count devices: %s",
		    nvml_error(n, rc));
		nvml_close(n);
		return (NULL);
	}
	return (n);
}

/* Shut NVML down and unload it; NULL is fine. */
void
nvml_close(struct nvml *n)
{
	if (n == NULL)
		return;
	n->shutdown();
	dlclose(n->lib);
	free(n->buf);
	free(n);
}

/* The number of devices NVML sees. */
unsigned int
nvml_devices(struct nvml *n)
{
	return (n->ndevices);
}

/*
 * Set *bytes to the device memory process pid uses on device index.
 * Returns 1, 0 when the process is not on that device (or NVML cannot say
 * how much it uses), or -1 with *cause.
 */
int
nvml_process_usage(struct nvml *n, unsigned int index, unsigned int pid,
    uint64_t *bytes, char **cause)
{
	void		*dev;
	unsigned int	 count, i;
	int		 rc;

	if ((rc = n->handle(index, &dev)) != NVML_SUCCESS) {
		xasprintf(cause, "NVML: device %u: %s", index,
		    nvml_error(n, rc));
		return (-1);
	}
	for (;;) {
		count = n->nbuf;
		rc = n->procs(dev, &count, n->buf);
		if (rc != NVML_ERROR_INSUFFICIENT_SIZE)
			break;
		n->nbuf = count + 16;
		n->buf = xreallocarray(n->buf, n->nbuf, sizeof *n->buf);
	}
	if (rc != NVML_SUCCESS) {
		xasprintf(cause, "NVML: device %u: processes: %s", index,
		    nvml_error(n, rc));
		return (-1);
	}
	for (i = 0; i < count && i < n->nbuf; i++) {
		if (n->buf[i].pid != pid ||
		    n->buf[i].usedGpuMemory == NVML_VALUE_NOT_AVAILABLE)
			continue;
		*bytes = n->buf[i].usedGpuMemory;
		return (1);
	}
	return (0);
}
