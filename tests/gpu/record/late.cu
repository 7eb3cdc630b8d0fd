/*
 * late.cu: for the record test's late part, built four ways.  As a
 * library (-DLATE_LIBRARY), once with the shared CUDA runtime and once
 * with the static one: late_alloc(bytes) makes one cudaMallocAsync of
 * that size on a stream of its own and frees it.  As the host, with
 * either runtime: it starts CUDA and makes a 1 MiB cudaMallocAsync of its
 * own (with interpose, the shared runtime's host is then an importer
 * redirected when CUDA starts; the static one's runtime made its table of
 * the driver's functions before), then loads each library named on its
 * command line and calls late_alloc with 7 MiB, 9 MiB, ... in turn, and
 * prints "late ok".
 */
#include <cuda_runtime.h>

#include <stdio.h>

#define MiB ((size_t)1024 * 1024)
#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); return 1; } \
	} while (0)

#ifdef LATE_LIBRARY
extern "C" int
late_alloc(size_t bytes)
{
	cudaStream_t	 s;
	void		*p;

	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CHECK(cudaMallocAsync(&p, bytes, s));
	CHECK(cudaFreeAsync(p, s));
	CHECK(cudaStreamSynchronize(s));
	CHECK(cudaStreamDestroy(s));
	return (0);
}
#else
#include <dlfcn.h>

int
main(int argc, char **argv)
{
	int		(*late_alloc)(size_t);
	void		*lib, *p;
	int		 i;

	CHECK(cudaFree(0));
	CHECK(cudaMallocAsync(&p, 1 * MiB, 0));
	CHECK(cudaFreeAsync(p, 0));
	CHECK(cudaDeviceSynchronize());
	for (i = 1; i < argc; i++) {
		if ((lib = dlopen(argv[i], RTLD_NOW)) == NULL) {
			fprintf(stderr, "%s\n", dlerror());
			return (1);
		}
		*(void **)&late_alloc = dlsym(lib, "late_alloc");
		if (late_alloc == NULL || late_alloc((5 + 2 * i) * MiB) != 0)
			return (1);
	}
	printf("late ok\n");
	return (0);
}
#endif
