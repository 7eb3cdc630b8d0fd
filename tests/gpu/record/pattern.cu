/*
 * pattern.cu: a known pattern of CUDA memory calls for the record test.
 *
 * Three NVTX "step" ranges.  Step 1: cudaMalloc 1 MiB and 3 MiB, free the
 * 1 MiB.  Step 2: two created streams s1, s2; cudaMallocAsync 2 MiB on s1
 * and 4 MiB + 5 MiB on s2; free the 2 MiB and the 4 MiB; 6 MiB of pinned
 * host memory; a 1 MiB copy host to device on s1, a 2 MiB copy device
 * to host on s2, a 3 MiB one from the pinned memory to the 5 MiB block
 * on s2 with cudaMemcpyDefault (the direction from the pointers), a 3 MiB
 * device to device cudaMemcpy and a 4 MiB cudaMemcpyDefault from the
 * device into pageable memory.  Step 3: destroy s2 while its 5 MiB block is live.  Then
 * free the pinned memory and the 3 MiB.  Prints the stream handles.
 */
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <stdint.h>
#include <stdio.h>

#define MiB (1024u * 1024u)
#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); return 1; } \
	} while (0)

int
main(void)
{
	cudaStream_t	 s1, s2;
	void		*a, *b, *p1, *p2, *p3, *h;
	static char	 pageable[4 * MiB];

	CHECK(cudaFree(0));
	nvtxRangePushA("step");
	CHECK(cudaMalloc(&a, 1 * MiB));
	CHECK(cudaMalloc(&b, 3 * MiB));
	CHECK(cudaFree(a));
	nvtxRangePop();

	nvtxRangePushA("step");
	CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
	CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
	CHECK(cudaMallocAsync(&p1, 2 * MiB, s1));
	CHECK(cudaMallocAsync(&p2, 4 * MiB, s2));
	CHECK(cudaMallocAsync(&p3, 5 * MiB, s2));
	CHECK(cudaFreeAsync(p1, s1));
	CHECK(cudaFreeAsync(p2, s2));
	CHECK(cudaMallocHost(&h, 6 * MiB));
	CHECK(cudaMemcpyAsync(b, h, 1 * MiB, cudaMemcpyHostToDevice, s1));
	CHECK(cudaMemcpyAsync(h, b, 2 * MiB, cudaMemcpyDeviceToHost, s2));
	CHECK(cudaMemcpyAsync(p3, h, 3 * MiB, cudaMemcpyDefault, s2));
	CHECK(cudaMemcpy(p3, b, 3 * MiB, cudaMemcpyDeviceToDevice));
	CHECK(cudaMemcpy(pageable, p3, 4 * MiB, cudaMemcpyDefault));
	CHECK(cudaDeviceSynchronize());
	nvtxRangePop();

	nvtxRangePushA("step");
	CHECK(cudaStreamDestroy(s2));
	nvtxRangePop();

	CHECK(cudaFreeHost(h));
	CHECK(cudaFree(b));
	CHECK(cudaStreamDestroy(s1));
	printf("s1=%llu s2=%llu\n", (unsigned long long)(uintptr_t)s1,
	    (unsigned long long)(uintptr_t)s2);
	return 0;
}
