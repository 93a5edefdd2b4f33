// hip-env: AMD_DIRECT_DISPATCH=0
// Blocking waits: with hipDeviceScheduleBlockingSync and a hipEventBlockingSync event, the process
// sleeps in the driver (WAIT_EVENTS on the completion signal's event) instead of spinning while a
// long kernel runs: hipEventSynchronize, hipStreamSynchronize and hipDeviceSynchronize return after
// the kernel's results are complete (a driver that never raised the signal's event would leave
// them asleep), and the CPU time of the whole process over each wait stays below a tenth of the
// wait (0.001-0.005 s of 0.13-0.27 s measured).
//
// The hip-env line turns off ROCclr's direct dispatch. With it on (HIP's default), ROCclr's
// async-handler thread (hsa_amd_signal_async_handler, ROCr's WaitAny) and the application thread
// wait on the same completion signal, and ROCr 5.2.3 lets only the first waiter of a signal sleep
// (InterruptSignal::WaitRelaxed and Signal::WaitAny: "if (prior != 0) wait_hint = ACTIVE"); ROCr
// 6.2.4 does the same on a driver without event age (KFD 1.14). One thread of the process then
// spins for the whole wait, the application's or the handler thread's depending on which reached
// the signal first: process CPU 0.14-0.42 s over 0.14-0.36 s waits in 8 of 8 runs, the
// application thread's own in 2 of them (2026-11-29). With direct dispatch off, a ROCclr worker
// thread is the signal's only waiter and the application thread waits on the command's event.
#include "common.h"
#include <chrono>
#include <ctime>
#include <sys/resource.h>

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

static double processCPU() {
  rusage r;
  getrusage(RUSAGE_SELF, &r);
  return r.ru_utime.tv_sec + r.ru_stime.tv_sec + (r.ru_utime.tv_usec + r.ru_stime.tv_usec) * 1e-6;
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
    double w0 = now(), c0 = threadCPU(), p0 = processCPU();
    if (round == 0) CHECK(hipEventSynchronize(ev));
    if (round == 1) CHECK(hipStreamSynchronize(s));
    if (round == 2) CHECK(hipDeviceSynchronize());
    double wall = now() - w0, cpu = threadCPU() - c0, pcpu = processCPU() - p0;
    for (int t = 0; t < 64; t++) {
      unsigned x = seed + t;
      for (int i = 0; i < iters; i++) x = x * 1664525u + 1013904223u;
      EXPECT(out[t] == x, "round %d: out[%d] = %u, want %u", round, t, out[t], x);
    }
    printf("round %d: waited %.3f s, thread CPU %.3f s, process CPU %.3f s\n", round, wall, cpu, pcpu);
    if (wall < 0.05) {  // too short to tell blocking from spinning: a longer kernel
      iters *= 4;
      round--;
      EXPECT(iters < 100000000, "the kernel stays too fast to measure a wait");
      continue;
    }
    EXPECT(pcpu < 0.1 * wall, "round %d: the process used %.3f s of CPU (this thread %.3f s) in a %.3f s wait: not blocking",
           round, pcpu, cpu, wall);
  }
  CHECK(hipEventDestroy(ev));
  CHECK(hipStreamDestroy(s));
  printf("blocking_sync: ok\n");
  return 0;
}
