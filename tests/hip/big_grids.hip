// Sizes past the small cases: work-group ids above 16 bits in y and z, a 6 GiB allocation
// addressed past 4 GiB by kernels (64-bit offsets in global loads and stores) and by hipMemcpy,
// and 20000 back-to-back launches on two streams (the AQL ring wraps many times with the producer
// ahead of the packet processor) with events between them.
//
// On ROCr 5.2.3 the launch loop prints "Warning: ... Use of non-host signal in host signal wait
// API." about every 2000 launches: HIP's kernel-argument pool runs out, HIP puts a barrier in the
// queue and waits on its completion signal from the host, and with active waiting (HIP's default)
// that signal was created HSA_AMD_SIGNAL_AMD_GPU_ONLY, which ROCr 5.2.3's debug_warning names when
// it has to wait for it. The runtime prints it on any GPU still running the last launches at that
// moment; ROCr 6.2.4 does not print it.
#include "common.h"
#include <vector>

// Per group of one wave: count the groups and keep the largest ids seen.
__global__ void ids(unsigned* out) {
  if (threadIdx.x == 0) {
    atomicAdd(&out[0], 1u);
    atomicMax(&out[1], blockIdx.x);
    atomicMax(&out[2], blockIdx.y);
    atomicMax(&out[3], blockIdx.z);
    atomicMax(&out[4], gridDim.y);
  }
}

// Writes marks at byte offsets in a large buffer, 64-bit arithmetic throughout.
__global__ void mark(unsigned* base, const unsigned long long* offs, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    unsigned* p = (unsigned*)((char*)base + offs[i]);
    *p = 0xA5000000u + i;
    p[1] = p[0] + 1; // a load and a store at the same far address
  }
}

__global__ void bump(unsigned* c, int k) { atomicAdd(&c[k], 1u); }

int main() {
  // Group ids beyond 65535.
  unsigned* d;
  CHECK(hipMalloc(&d, 64));
  CHECK(hipMemset(d, 0, 64));
  const unsigned gy = 70001, gz = 3;
  ids<<<dim3(2, gy, gz), 64>>>(d);
  CHECK(hipGetLastError());
  unsigned h[5];
  CHECK(hipMemcpy(h, d, sizeof(h), hipMemcpyDeviceToHost));
  EXPECT(h[0] == 2 * gy * gz, "groups run %u, want %u", h[0], 2 * gy * gz);
  EXPECT(h[1] == 1 && h[2] == gy - 1 && h[3] == gz - 1 && h[4] == gy, "largest ids x %u y %u z %u, gridDim.y %u", h[1],
         h[2], h[3], h[4]);
  ids<<<dim3(1, 1, 70000), 64>>>(d + 8);
  CHECK(hipMemcpy(h, d + 8, 16, hipMemcpyDeviceToHost));
  EXPECT(h[0] == 70000 && h[3] == 69999, "z grid: %u groups, largest z %u", h[0], h[3]);
  printf("%u groups with y up to %u, then z up to %u: ok\n", 2 * gy * gz, gy - 1, h[3]);

  // A 6 GiB buffer touched past 4 GiB.
  const size_t big = 6ull << 30;
  unsigned* b;
  CHECK(hipMalloc(&b, big));
  std::vector<unsigned long long> offs = {0, 4096, (1ull << 32) - 8, 1ull << 32, (1ull << 32) + 8,
                                          (5ull << 30) + 12345 * 4, big - 8};
  const int n = (int)offs.size();
  unsigned long long* doffs;
  CHECK(hipMalloc(&doffs, n * 8));
  CHECK(hipMemcpy(doffs, offs.data(), n * 8, hipMemcpyHostToDevice));
  mark<<<1, 64>>>(b, doffs, n);
  CHECK(hipGetLastError());
  for (int i = 0; i < n; i++) {
    unsigned v[2] = {0, 0};
    CHECK(hipMemcpy(v, (char*)b + offs[i], 8, hipMemcpyDeviceToHost));
    unsigned want0 = 0xA5000000u + i;
    EXPECT(v[0] == want0, "offset %#llx: %#x, want %#x", offs[i], v[0], want0);
    EXPECT(v[1] == want0 + 1, "offset %#llx + 4: %#x, want %#x", offs[i], v[1], want0 + 1);
  }
  // hipMemcpy into the far end, a device-to-device copy (HIP's blit kernel) across the 4 GiB line
  unsigned pat[4] = {1, 2, 3, 4}, back[4] = {};
  CHECK(hipMemcpy((char*)b + big - 4096, pat, 16, hipMemcpyHostToDevice));
  CHECK(hipMemcpy((char*)b + (1ull << 32) + 64, (char*)b + big - 4096, 16, hipMemcpyDeviceToDevice));
  CHECK(hipMemcpy(back, (char*)b + (1ull << 32) + 64, 16, hipMemcpyDeviceToHost));
  for (int i = 0; i < 4; i++) EXPECT(back[i] == pat[i], "copied past 4 GiB: [%d] = %u", i, back[i]);
  CHECK(hipFree(b));
  CHECK(hipFree(doffs));
  printf("6 GiB buffer: stores, loads and copies past 4 GiB: ok\n");

  // 20000 launches on two streams, an event recorded every 250 and waited on by the other stream.
  unsigned* c;
  CHECK(hipMalloc(&c, 8));
  CHECK(hipMemset(c, 0, 8));
  hipStream_t s[2];
  CHECK(hipStreamCreate(&s[0]));
  CHECK(hipStreamCreate(&s[1]));
  std::vector<hipEvent_t> ev;
  const int launches = 20000;
  for (int i = 0; i < launches; i++) {
    int k = i % 2;
    bump<<<1, 1, 0, s[k]>>>(c, k);
    if (i % 250 == 249) {
      hipEvent_t e;
      CHECK(hipEventCreateWithFlags(&e, hipEventDisableTiming));
      CHECK(hipEventRecord(e, s[k]));
      CHECK(hipStreamWaitEvent(s[1 - k], e, 0));
      ev.push_back(e);
    }
  }
  CHECK(hipGetLastError());
  CHECK(hipDeviceSynchronize());
  unsigned hc[2];
  CHECK(hipMemcpy(hc, c, 8, hipMemcpyDeviceToHost));
  EXPECT(hc[0] == launches / 2 && hc[1] == launches / 2, "launches counted %u and %u, want %d each", hc[0], hc[1],
         launches / 2);
  for (auto e : ev) {
    EXPECT(hipEventQuery(e) == hipSuccess, "an event not complete after hipDeviceSynchronize");
    CHECK(hipEventDestroy(e));
  }
  CHECK(hipStreamDestroy(s[0]));
  CHECK(hipStreamDestroy(s[1]));
  CHECK(hipFree(c));
  CHECK(hipFree(d));
  printf("%d launches on two streams with %zu cross-stream events: ok\n", launches, ev.size());
  printf("big_grids: ok\n");
  return 0;
}
