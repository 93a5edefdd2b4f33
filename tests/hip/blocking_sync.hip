// Blocking waits: with hipDeviceScheduleBlockingSync and a hipEventBlockingSync event, the host
// thread sleeps in the driver (WAIT_EVENTS on the completion signal's event) instead of spinning
// while a long kernel runs: hipEventSynchronize, hipStreamSynchronize and hipDeviceSynchronize
// return after the kernel's results are complete (a driver that never raised the signal's event
// would leave them asleep), and the thread's CPU time over each wait stays below a tenth of the
// wait (0.000-0.002 s of 0.17-0.2 s measured; with hipDeviceScheduleSpin and a plain event HIP and
// ROCr spin for part of the wait: 0.045-0.051 s of 0.2 s).
#include "common.h"
#include <chrono>
#include <ctime>

__global__ void slow(unsigned* out, int iters, unsigned seed) {
  unsigned x = seed + threadIdx.x;
  for (int i = 0; i < iters; i++) x = x * 1664525u + 1013904223u;
  out[threadIdx.x] = x;
}

static double threadCPU() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int main() {
  CHECK(hipSetDeviceFlags(hipDeviceScheduleBlockingSync));
  unsigned* out;
  CHECK(hipHostMalloc(&out, 64 * 4, hipHostMallocMapped));
  hipStream_t s;
  CHECK(hipStreamCreate(&s));
  hipEvent_t ev;
  CHECK(hipEventCreateWithFlags(&ev, hipEventBlockingSync | hipEventDisableTiming));
  slow<<<1, 64, 0, s>>>(out, 10, 1);  // warm-up: code object loaded, queue created
  CHECK(hipStreamSynchronize(s));
  int iters = 400000;
  for (int round = 0; round < 3; round++) {
    for (int i = 0; i < 64; i++) out[i] = 0;
    unsigned seed = 77 + round;
    slow<<<1, 64, 0, s>>>(out, iters, seed);
    CHECK(hipEventRecord(ev, s));
    double w0 = now(), c0 = threadCPU();
    if (round == 0) CHECK(hipEventSynchronize(ev));
    if (round == 1) CHECK(hipStreamSynchronize(s));
    if (round == 2) CHECK(hipDeviceSynchronize());
    double wall = now() - w0, cpu = threadCPU() - c0;
    for (int t = 0; t < 64; t++) {
      unsigned x = seed + t;
      for (int i = 0; i < iters; i++) x = x * 1664525u + 1013904223u;
      EXPECT(out[t] == x, "round %d: out[%d] = %u, want %u", round, t, out[t], x);
    }
    printf("round %d: waited %.3f s, thread CPU %.3f s\n", round, wall, cpu);
    if (wall < 0.05) {  // too short to tell blocking from spinning: a longer kernel
      iters *= 4;
      round--;
      EXPECT(iters < 100000000, "the kernel stays too fast to measure a wait");
      continue;
    }
    EXPECT(cpu < 0.1 * wall, "round %d: the wait used %.3f s of CPU in %.3f s: not blocking", round, cpu, wall);
  }
  CHECK(hipEventDestroy(ev));
  CHECK(hipStreamDestroy(s));
  printf("blocking_sync: ok\n");
  return 0;
}
