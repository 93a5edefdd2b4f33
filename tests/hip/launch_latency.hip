// Back-to-back launches of a one-work-item kernel, each followed by hipDeviceSynchronize: the round
// trip of a small kernel as an application sees it (HIP's AQL packets, the emulated command
// processor, completion signals in ROCr's memory), timed and printed, not asserted (a timing
// assertion on the shared 2-core CI machine would be flaky); every launch's increment is checked.
#include "common.h"
#include <algorithm>
#include <chrono>
#include <vector>

__global__ void bump(int* p) { p[threadIdx.x] += 1; }

int main() {
  const int warm = 50, timed = 1000;
  int* d;
  CHECK(hipMalloc(&d, sizeof(int)));
  CHECK(hipMemset(d, 0, sizeof(int)));
  for (int i = 0; i < warm; i++) {
    hipLaunchKernelGGL(bump, dim3(1), dim3(1), 0, 0, d);
    CHECK(hipGetLastError());
    CHECK(hipDeviceSynchronize());
  }
  std::vector<double> us;
  for (int i = 0; i < timed; i++) {
    auto t0 = std::chrono::steady_clock::now();
    hipLaunchKernelGGL(bump, dim3(1), dim3(1), 0, 0, d);
    CHECK(hipGetLastError());
    CHECK(hipDeviceSynchronize());
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  int h = 0;
  CHECK(hipMemcpy(&h, d, sizeof(int), hipMemcpyDeviceToHost));
  EXPECT(h == warm + timed, "counter %d after %d launches", h, warm + timed);
  std::sort(us.begin(), us.end());
  printf("launch + hipDeviceSynchronize of a one-work-item kernel: p50 %.1f us, p90 %.1f us, p99 %.1f us (%d launches)\n",
         us[us.size() / 2], us[us.size() * 9 / 10], us[us.size() * 99 / 100], timed);
  return 0;
}
