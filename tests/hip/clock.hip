// clock64() (s_memtime, the shader clock) and wall_clock64() (s_memrealtime, gfx90a's constant
// 100 MHz reference clock; HIP 5.2.3 has no attribute for its rate): both advance across a busy
// loop, and wall_clock64 advances at 100 MHz against the host clock.
#include "common.h"
#include <chrono>
#include <thread>

// HIP 5.2.3 defines wall_clock64 for the device pass only and declares it nowhere else: kernels
// that call it need this declaration for the host pass.
__device__ long long int wall_clock64();

__global__ void k(unsigned long long* t, int iters) {
  unsigned long long c0 = clock64(), w0 = wall_clock64();
  float x = t[9];
  for (int i = 0; i < iters; i++) x = x * 0.5f + 1.0f;
  unsigned long long c1 = clock64(), w1 = wall_clock64();
  t[0] = c0; t[1] = c1; t[2] = w0; t[3] = w1; t[8] = (unsigned long long)x;
}

__global__ void wall(unsigned long long* t) { *t = wall_clock64(); }

int main() {
  unsigned long long* d;
  CHECK(hipMalloc(&d, 10 * 8));
  CHECK(hipMemset(d, 0, 10 * 8));
  k<<<1, 1>>>(d, 100000);
  unsigned long long h[4];
  CHECK(hipMemcpy(h, d, 4 * 8, hipMemcpyDeviceToHost));
  EXPECT(h[1] > h[0], "clock64 did not advance: %llu -> %llu", h[0], h[1]);
  EXPECT(h[3] > h[2], "wall_clock64 did not advance: %llu -> %llu", h[2], h[3]);
  const int rate_khz = 100000;
  // Two kernels 200 ms apart on the host: wall_clock64 advances by 200 ms at the reported rate.
  unsigned long long a, b;
  wall<<<1, 1>>>(d);
  CHECK(hipMemcpy(&a, d, 8, hipMemcpyDeviceToHost));
  auto t0 = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  wall<<<1, 1>>>(d);
  CHECK(hipMemcpy(&b, d, 8, hipMemcpyDeviceToHost));
  double host_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  double dev_ms = double(b - a) / rate_khz;
  printf("clock: wall_clock64 %.1f ms for host %.1f ms at %d kHz\n", dev_ms, host_ms, rate_khz);
  EXPECT(dev_ms > host_ms * 0.9 && dev_ms < host_ms * 1.1 + 50, "wall_clock64 measured %.1f ms across %.1f ms", dev_ms, host_ms);
  printf("clock: ok\n");
  return 0;
}
