// Host callbacks in stream order: hipStreamAddCallback's callbacks run after the work queued
// before them (they see its results in mapped host memory) and before the work queued after
// them (a later kernel reads what the callback stored); the callbacks run in the order they were
// queued, with their status and user data. A second stream's kernels wait on a callback's stream
// through an event recorded after it. (HIP 5.2.3 declares hipLaunchHostFunc but its library does
// not define it: not used.)
#include "common.h"
#include <atomic>
#include <vector>

__global__ void produce(int* m, int idx, int v, int spin) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  int x = v;
  for (int k = 0; k < spin; k++) x = (x * 5 + 3) % 1000003;  // keep the GPU busy for a while
  m[idx] = x - x + v;
}

__global__ void consume(const int* m, int* out, int idx) {
  if (threadIdx.x == 0 && blockIdx.x == 0) out[idx] = m[idx] * 10;
}

struct Ctx {
  int* mapped;  // written by kernels, read by callbacks
  int* input;   // written by callbacks, read by kernels
  std::vector<int> log;
  std::atomic<int> bad{0};
};
static Ctx ctx;

struct Arg {
  int step;
};

static void CALLBACK_CB(hipStream_t, hipError_t status, void* user) {
  Arg* a = (Arg*)user;
  if (status != hipSuccess) ctx.bad = 1000 + a->step;
  // the kernel queued before stored step*100 at index step
  if (ctx.mapped[a->step] != a->step * 100) ctx.bad = a->step;
  ctx.input[a->step] = a->step + 7;  // the kernel queued after reads it
  ctx.log.push_back(a->step);
}

int main() {
  const int steps = 8;
  CHECK(hipHostMalloc(&ctx.mapped, 64 * 4, hipHostMallocMapped));
  CHECK(hipHostMalloc(&ctx.input, 64 * 4, hipHostMallocMapped));
  int* out;
  CHECK(hipHostMalloc(&out, 64 * 4, hipHostMallocMapped));
  for (int i = 0; i < 64; i++) ctx.mapped[i] = ctx.input[i] = out[i] = -1;
  hipStream_t s;
  CHECK(hipStreamCreate(&s));
  hipStream_t s2;
  CHECK(hipStreamCreate(&s2));
  hipEvent_t ev;
  CHECK(hipEventCreateWithFlags(&ev, hipEventDisableTiming));
  static Arg args[steps];
  for (int i = 0; i < steps; i++) {
    args[i].step = i;
    produce<<<1, 64, 0, s>>>(ctx.mapped, i, i * 100, 3000 - i * 300);
    CHECK(hipStreamAddCallback(s, CALLBACK_CB, &args[i], 0));
    if (i % 2 == 0) {
      consume<<<1, 64, 0, s>>>(ctx.input, out, i);
    } else {  // the consumer on the other stream, after an event recorded behind the callback
      CHECK(hipEventRecord(ev, s));
      CHECK(hipStreamWaitEvent(s2, ev, 0));
      consume<<<1, 64, 0, s2>>>(ctx.input, out, i);
    }
  }
  CHECK(hipStreamSynchronize(s));
  CHECK(hipStreamSynchronize(s2));
  EXPECT(ctx.bad == 0, "a callback saw wrong state: %d", ctx.bad.load());
  EXPECT((int)ctx.log.size() == steps, "%zu callbacks ran, want %d", ctx.log.size(), steps);
  for (int i = 0; i < steps; i++) EXPECT(ctx.log[i] == i, "callback %d ran as number %d", ctx.log[i], i);
  for (int i = 0; i < steps; i++) EXPECT(out[i] == (i + 7) * 10, "out[%d] = %d, want %d", i, out[i], (i + 7) * 10);
  CHECK(hipStreamDestroy(s));
  CHECK(hipStreamDestroy(s2));
  CHECK(hipEventDestroy(ev));
  printf("callbacks: ok\n");
  return 0;
}
