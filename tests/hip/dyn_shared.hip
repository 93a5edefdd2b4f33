// Dynamic shared memory (the launch's group segment size): each launch sizes the LDS array.
#include "common.h"
#include <vector>

__global__ void k(int* out, int n) {
  extern __shared__ int s[];
  int t = threadIdx.x;
  for (int i = t; i < n; i += blockDim.x) s[i] = i * 2 + blockIdx.x;
  __syncthreads();
  int acc = 0;
  for (int i = 0; i < n; i++) acc += s[(i + t) % n];
  out[blockIdx.x * blockDim.x + t] = acc;
}

int main() {
  for (int n : {100, 4096, 16000}) {
    const int blocks = 3, threads = 64;
    int* d;
    CHECK(hipMalloc(&d, blocks * threads * 4));
    hipLaunchKernelGGL(k, dim3(blocks), dim3(threads), n * 4, 0, d, n);
    CHECK(hipGetLastError());
    std::vector<int> h(blocks * threads);
    CHECK(hipMemcpy(h.data(), d, h.size() * 4, hipMemcpyDeviceToHost));
    for (int b = 0; b < blocks; b++) {
      long want = 0;
      for (int i = 0; i < n; i++) want += i * 2 + b;
      for (int t = 0; t < threads; t++) EXPECT(h[b * threads + t] == want, "n=%d out[%d][%d] = %d, want %ld", n, b, t, h[b * threads + t], want);
    }
    CHECK(hipFree(d));
  }
  printf("dyn_shared: ok\n");
  return 0;
}
