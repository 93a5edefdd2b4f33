// hipcc-flags: -O0
// An -O0 build keeps every local variable in the private segment (scratch), so even a small
// kernel goes through the queue's dynamic scratch.
#include "common.h"
#include <vector>

__device__ int fib(int n) {
  int a = 0, b = 1;
  for (int i = 0; i < n; i++) {
    int t = a + b;
    a = b;
    b = t;
  }
  return a;
}

__global__ void k(int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = fib(i % 30) + i;
}

int main() {
  const int n = 1000;
  int* d;
  CHECK(hipMalloc(&d, n * 4));
  k<<<(n + 127) / 128, 128>>>(d, n);
  CHECK(hipGetLastError());
  std::vector<int> h(n);
  CHECK(hipMemcpy(h.data(), d, n * 4, hipMemcpyDeviceToHost));
  for (int i = 0; i < n; i++) {
    int a = 0, b = 1;
    for (int j = 0; j < i % 30; j++) { int t = a + b; a = b; b = t; }
    EXPECT(h[i] == a + i, "out[%d] = %d, want %d", i, h[i], a + i);
  }
  printf("o0_scratch: ok\n");
  return 0;
}
