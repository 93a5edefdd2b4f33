// Streams and events: two streams ordered only by hipStreamWaitEvent; hipEventQuery/Synchronize.
#include "common.h"
#include <vector>

__global__ void fill(int* a, int n, int v, int iters) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int x = v;
  for (int k = 0; k < iters; k++) x = (x * 3 + 1) % 1000003;
  a[i] = x - x + v;  // slow, but stores v
}

__global__ void add_from(int* dst, const int* src, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] += src[i] * 2;
}

int main() {
  const int n = 4096;
  int *a, *b;
  CHECK(hipMalloc(&a, n * 4));
  CHECK(hipMalloc(&b, n * 4));
  hipStream_t s1, s2;
  CHECK(hipStreamCreate(&s1));
  CHECK(hipStreamCreate(&s2));
  hipEvent_t done_a;
  CHECK(hipEventCreate(&done_a));
  for (int round = 1; round <= 3; round++) {
    fill<<<n / 256, 256, 0, s1>>>(a, n, round, 2000);  // slow producer on s1
    CHECK(hipEventRecord(done_a, s1));
    fill<<<n / 256, 256, 0, s2>>>(b, n, 100 * round, 0);
    CHECK(hipStreamWaitEvent(s2, done_a, 0));           // s2 waits for a
    add_from<<<n / 256, 256, 0, s2>>>(b, a, n);
    CHECK(hipStreamSynchronize(s2));
    EXPECT(hipEventQuery(done_a) == hipSuccess, "event not complete after the waiting stream finished");
    std::vector<int> h(n);
    CHECK(hipMemcpy(h.data(), b, n * 4, hipMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) EXPECT(h[i] == 100 * round + 2 * round, "round %d b[%d] = %d", round, i, h[i]);
  }
  CHECK(hipStreamDestroy(s1));
  CHECK(hipStreamDestroy(s2));
  printf("streams: ok\n");
  return 0;
}
