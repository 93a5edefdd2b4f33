// Module globals and device-side heap: a __constant__ table and __device__ arrays written with
// hipMemcpyToSymbol (with an offset) and read back with hipMemcpyFromSymbol, hipGetSymbolAddress /
// hipGetSymbolSize, a kernel combining them and counting into a __device__ counter; then malloc and
// free inside a kernel (HIP's device heap), each thread's block filled and summed.
#include "common.h"
#include <vector>

__constant__ int ctab[256];
__device__ int dvals[1000];
__device__ unsigned long long dcount;

__global__ void combine(int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[i] = ctab[i & 255] * 3 + dvals[i % 1000];
  atomicAdd(&dcount, (unsigned long long)i);
}

__global__ void heap(long long* sums, int per) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int* p = (int*)malloc(per * sizeof(int));
  if (p == nullptr) {
    sums[t] = -1;
    return;
  }
  for (int k = 0; k < per; k++) p[k] = t * 7 + k;
  long long s = 0;
  for (int k = 0; k < per; k++) s += p[k];
  sums[t] = s;
  free(p);
}

int main() {
  std::vector<int> c(256), v(1000);
  for (int i = 0; i < 256; i++) c[i] = i * i - 300;
  for (int i = 0; i < 1000; i++) v[i] = 5000 - i * 3;
  CHECK(hipMemcpyToSymbol(HIP_SYMBOL(ctab), c.data(), 256 * sizeof(int)));
  CHECK(hipMemcpyToSymbol(HIP_SYMBOL(dvals), v.data(), 500 * sizeof(int)));
  CHECK(hipMemcpyToSymbol(HIP_SYMBOL(dvals), v.data() + 500, 500 * sizeof(int), 500 * sizeof(int)));
  unsigned long long zero = 0;
  CHECK(hipMemcpyToSymbol(HIP_SYMBOL(dcount), &zero, sizeof zero));
  void* addr = nullptr;
  size_t size = 0;
  CHECK(hipGetSymbolAddress(&addr, HIP_SYMBOL(dvals)));
  CHECK(hipGetSymbolSize(&size, HIP_SYMBOL(dvals)));
  EXPECT(addr != nullptr && size == 1000 * sizeof(int), "dvals at %p, %zu bytes", addr, size);
  // the symbol's address is ordinary device memory: hipMemcpy reads it
  std::vector<int> back(1000);
  CHECK(hipMemcpy(back.data(), addr, 1000 * sizeof(int), hipMemcpyDeviceToHost));
  for (int i = 0; i < 1000; i++) EXPECT(back[i] == v[i], "dvals[%d] = %d via its address", i, back[i]);

  const int n = 20000;
  int* out;
  CHECK(hipMalloc(&out, n * sizeof(int)));
  combine<<<(n + 255) / 256, 256>>>(out, n);
  CHECK(hipGetLastError());
  std::vector<int> h(n);
  CHECK(hipMemcpy(h.data(), out, n * sizeof(int), hipMemcpyDeviceToHost));
  for (int i = 0; i < n; i++)
    EXPECT(h[i] == c[i & 255] * 3 + v[i % 1000], "out[%d] = %d, want %d", i, h[i], c[i & 255] * 3 + v[i % 1000]);
  unsigned long long cnt = 0;
  CHECK(hipMemcpyFromSymbol(&cnt, HIP_SYMBOL(dcount), sizeof cnt));
  EXPECT(cnt == (unsigned long long)n * (n - 1) / 2, "dcount %llu", cnt);
  int part[10];
  CHECK(hipMemcpyFromSymbol(part, HIP_SYMBOL(dvals), sizeof part, 990 * sizeof(int)));
  for (int i = 0; i < 10; i++) EXPECT(part[i] == v[990 + i], "dvals[%d] = %d from symbol at an offset", 990 + i, part[i]);

  const int threads = 256, per = 40;
  long long* sums;
  CHECK(hipMalloc(&sums, threads * sizeof(long long)));
  for (int round = 0; round < 2; round++) {  // the second round reuses what the first freed
    heap<<<threads / 64, 64>>>(sums, per);
    CHECK(hipGetLastError());
    std::vector<long long> hs(threads);
    CHECK(hipMemcpy(hs.data(), sums, threads * sizeof(long long), hipMemcpyDeviceToHost));
    for (int t = 0; t < threads; t++) {
      long long want = (long long)t * 7 * per + (long long)per * (per - 1) / 2;
      EXPECT(hs[t] == want, "round %d thread %d: heap sum %lld, want %lld", round, t, hs[t], want);
    }
  }
  printf("symbols: ok\n");
  return 0;
}
