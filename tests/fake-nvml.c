/*
 * fake-nvml.c: a stand-in for libnvidia-ml.so.1 that vramtrace attach
 * loads through VRAMTRACE_NVML_LIB, so that the sampling runs without a
 * GPU through the same dlopen and the same calls.
 *
 * Two devices.  The process FAKE_NVML_PID uses FAKE_NVML_BASE bytes on
 * device 0 (constant) and on device 1 FAKE_NVML_BASE plus FAKE_NVML_GROWTH
 * bytes for every FAKE_NVML_PERIOD_MS ms since nvmlInit_v2; another pid
 * uses 1 GiB on both, to be ignored.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct info {
	unsigned int		pid;
	unsigned long long	usedGpuMemory;
	unsigned int		gpuInstanceId;
	unsigned int		computeInstanceId;
};

int	nvmlInit_v2(void);
int	nvmlShutdown(void);
int	nvmlDeviceGetCount_v2(unsigned int *);
int	nvmlDeviceGetHandleByIndex_v2(unsigned int, void **);
int	nvmlDeviceGetComputeRunningProcesses_v3(void *, unsigned int *,
	    struct info *);
const char *nvmlErrorString(int);

static struct timespec	start;
static int		devices[2];

static unsigned long long
env(const char *name, unsigned long long def)
{
	const char	*v = getenv(name);

	return (v != NULL ? strtoull(v, NULL, 10) : def);
}

int
nvmlInit_v2(void)
{
	clock_gettime(CLOCK_MONOTONIC, &start);
	return (0);
}

int
nvmlShutdown(void)
{
	return (0);
}

int
nvmlDeviceGetCount_v2(unsigned int *n)
{
	*n = 2;
	return (0);
}

int
nvmlDeviceGetHandleByIndex_v2(unsigned int i, void **dev)
{
	if (i >= 2)
		return (2);	/* NVML_ERROR_INVALID_ARGUMENT */
	*dev = &devices[i];
	return (0);
}

int
nvmlDeviceGetComputeRunningProcesses_v3(void *dev, unsigned int *n,
    struct info *out)
{
	struct timespec		now;
	unsigned long long	ms, base = env("FAKE_NVML_BASE", 100 << 20);

	if (*n < 2) {
		*n = 2;
		return (7);	/* NVML_ERROR_INSUFFICIENT_SIZE */
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (unsigned long long)(now.tv_sec - start.tv_sec) * 1000 +
	    (unsigned long long)(now.tv_nsec / 1000000) -
	    (unsigned long long)(start.tv_nsec / 1000000);
	memset(out, 0, 2 * sizeof *out);
	out[0].pid = (unsigned int)env("FAKE_NVML_PID", 0) + 1;
	out[0].usedGpuMemory = 1ULL << 30;
	out[1].pid = (unsigned int)env("FAKE_NVML_PID", 0);
	out[1].usedGpuMemory = base;
	if (dev == &devices[1])
		out[1].usedGpuMemory += env("FAKE_NVML_GROWTH", 4 << 20) *
		    (ms / env("FAKE_NVML_PERIOD_MS", 100));
	*n = 2;
	return (0);
}

const char *
nvmlErrorString(int rc)
{
	return (rc == 0 ? "success" : "fake error");
}
