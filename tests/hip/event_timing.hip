// hipEvent timing: hipEventElapsedTime over a kernel that runs for a while must be positive and
// plausible (the CP writes the completion signals' start/end timestamps in the GPU clock domain).
#include "common.h"
#include <chrono>

__global__ void spin(float* p, int iters) {
  float x = p[threadIdx.x];
  for (int i = 0; i < iters; i++) x = x * 0.999f + 1.0f;
  p[threadIdx.x] = x;
}

int main() {
  float* d;
  CHECK(hipMalloc(&d, 256 * 4));
  CHECK(hipMemset(d, 0, 256 * 4));
  hipEvent_t start, stop;
  CHECK(hipEventCreate(&start));
  CHECK(hipEventCreate(&stop));
  spin<<<1, 64>>>(d, 10);  // warm-up: code loaded
  CHECK(hipDeviceSynchronize());
  auto t0 = std::chrono::steady_clock::now();
  CHECK(hipEventRecord(start, 0));
  spin<<<4, 64>>>(d, 20000);
  CHECK(hipEventRecord(stop, 0));
  CHECK(hipEventSynchronize(stop));
  double host_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  float ms = -1;
  CHECK(hipEventElapsedTime(&ms, start, stop));
  printf("event_timing: kernel %.3f ms (host %.3f ms)\n", ms, host_ms);
  EXPECT(ms > 0.0f, "elapsed %f ms is not positive", ms);
  EXPECT(ms <= host_ms * 1.05 + 1.0, "elapsed %f ms exceeds the host's %f ms", ms, host_ms);
  EXPECT(ms >= host_ms * 0.05, "elapsed %f ms implausibly small against the host's %f ms", ms, host_ms);
  // The same event pair twice gives the same answer.
  float ms2 = -1;
  CHECK(hipEventElapsedTime(&ms2, start, stop));
  EXPECT(ms2 == ms, "elapsed %f then %f", ms, ms2);
  printf("event_timing: ok\n");
  return 0;
}
