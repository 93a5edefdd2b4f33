// Blocks whose size is not a multiple of 64 end in a partly filled wave (EXEC without the missing
// lanes): __ballot (of 1: the active mask), __any/__all and __popcll count only the lanes that
// exist, __shfl/__shfl_xor among existing lanes, and __syncthreads and shared memory across the full and
// the partial waves; for block sizes 1, 37, 65, 100 and 200, in several blocks.
#include "common.h"
#include <vector>

struct Out {
  unsigned long long active, ballot;
  int any, all, popc, shfl, xr, sum;
};

__global__ void waves(Out* out, int* total) {
  __shared__ int part[256];
  int t = threadIdx.x, n = blockDim.x;
  int lane = t % 64, base = t - lane;  // this wave's first thread
  int inWave = min(64, n - base);       // threads that exist in this wave
  Out o;
  o.active = __ballot(1);  // HIP 5.2 has no __activemask
  o.ballot = __ballot(t % 3 == 0);
  o.any = __any(t == n - 1);
  o.all = __all(t < n);
  o.popc = __popcll(__ballot(1));
  o.shfl = __shfl(t * 10, (lane + 1) % inWave);  // the next existing lane, wrapping in the wave
  int x = t;
  // butterfly over the largest power of two of existing lanes
  int p2 = 1;
  while (p2 * 2 <= inWave) p2 *= 2;
  if (lane < p2)
    for (int m = p2 / 2; m > 0; m >>= 1) x += __shfl_xor(x, m, p2);
  o.xr = lane < p2 ? x : -1;
  part[t] = t + blockIdx.x;
  __syncthreads();
  int s = 0;
  for (int i = 0; i < n; i++) s += part[i];
  o.sum = s;
  out[blockIdx.x * 256 + t] = o;
  atomicAdd(total, 1);
}

int main() {
  const int sizes[] = {1, 37, 65, 100, 200};
  const int blocks = 3;
  Out* d;
  int* dt;
  CHECK(hipMalloc(&d, blocks * 256 * sizeof(Out)));
  CHECK(hipMalloc(&dt, 4));
  for (int n : sizes) {
    CHECK(hipMemset(d, 0xff, blocks * 256 * sizeof(Out)));
    CHECK(hipMemset(dt, 0, 4));
    waves<<<blocks, n>>>(d, dt);
    CHECK(hipGetLastError());
    std::vector<Out> h(blocks * 256);
    int total = 0;
    CHECK(hipMemcpy(h.data(), d, h.size() * sizeof(Out), hipMemcpyDeviceToHost));
    CHECK(hipMemcpy(&total, dt, 4, hipMemcpyDeviceToHost));
    EXPECT(total == blocks * n, "block size %d: %d threads ran, want %d", n, total, blocks * n);
    for (int b = 0; b < blocks; b++)
      for (int t = 0; t < n; t++) {
        const Out& o = h[b * 256 + t];
        int lane = t % 64, base = t - lane, inWave = n - base < 64 ? n - base : 64;
        unsigned long long mask = inWave == 64 ? ~0ull : (1ull << inWave) - 1, ballot = 0;
        for (int l = 0; l < inWave; l++)
          if ((base + l) % 3 == 0) ballot |= 1ull << l;
        int p2 = 1;
        while (p2 * 2 <= inWave) p2 *= 2;
        int xr = -1;
        if (lane < p2) {
          xr = 0;
          for (int l = 0; l < p2; l++) xr += base + l;
        }
        int sum = 0;
        for (int i = 0; i < n; i++) sum += i + b;
        const char* what = nullptr;
        if (o.active != mask) what = "__ballot(1)";
        else if (o.ballot != ballot) what = "__ballot";
        else if (o.any != (base + inWave == n)) what = "__any";  // the last thread is in this wave
        else if (o.all != 1) what = "__all";
        else if (o.popc != inWave) what = "__popcll(__ballot(1))";
        else if (o.shfl != (base + (lane + 1) % inWave) * 10) what = "__shfl";
        else if (o.xr != xr) what = "__shfl_xor butterfly";
        else if (o.sum != sum) what = "shared memory sum";
        EXPECT(what == nullptr, "block size %d, block %d, thread %d: %s (active %llx ballot %llx any %d all %d popc %d shfl %d xr %d sum %d)",
               n, b, t, what, o.active, o.ballot, o.any, o.all, o.popc, o.shfl, o.xr, o.sum);
      }
    printf("blocks of %d: ok\n", n);
  }
  CHECK(hipFree(d));
  CHECK(hipFree(dt));
  printf("partial_waves: ok\n");
  return 0;
}
