// Device atomics on global and shared memory: int add/max/min/CAS/exch/or, float add.
#include "common.h"

__global__ void k(int* c, float* f, unsigned* bits, int* mx, int* mn, int* cas) {
  __shared__ int local;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (threadIdx.x == 0) local = 0;
  __syncthreads();
  atomicAdd(&local, 1);
  atomicAdd(c, 1);
  atomicAdd(f, 0.5f);
  atomicOr(bits + (i % 4), 1u << (i % 32));
  atomicMax(mx, i * 3 % 1001);
  atomicMin(mn, 5000 - i);
  int old;
  do { old = *cas; } while (atomicCAS(cas, old, old + 2) != old);
  __syncthreads();
  if (threadIdx.x == 0) atomicAdd(c + 1, local);
}

int main() {
  const int blocks = 8, threads = 128, n = blocks * threads;
  int *c, *mx, *mn, *cas;
  float* f;
  unsigned* bits;
  CHECK(hipMalloc(&c, 8)); CHECK(hipMalloc(&f, 4)); CHECK(hipMalloc(&bits, 16));
  CHECK(hipMalloc(&mx, 4)); CHECK(hipMalloc(&mn, 4)); CHECK(hipMalloc(&cas, 4));
  CHECK(hipMemset(c, 0, 8)); CHECK(hipMemset(f, 0, 4)); CHECK(hipMemset(bits, 0, 16));
  CHECK(hipMemset(mx, 0, 4)); CHECK(hipMemset(cas, 0, 4));
  int big = 1 << 30;
  CHECK(hipMemcpy(mn, &big, 4, hipMemcpyHostToDevice));
  k<<<blocks, threads>>>(c, f, bits, mx, mn, cas);
  CHECK(hipGetLastError());
  int hc[2], hmx, hmn, hcas;
  float hf;
  unsigned hb[4];
  CHECK(hipMemcpy(hc, c, 8, hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(&hf, f, 4, hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(hb, bits, 16, hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(&hmx, mx, 4, hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(&hmn, mn, 4, hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(&hcas, cas, 4, hipMemcpyDeviceToHost));
  EXPECT(hc[0] == n && hc[1] == n, "counts %d %d, want %d", hc[0], hc[1], n);
  EXPECT(hf == 0.5f * n, "float sum %f, want %f", hf, 0.5f * n);
  int wmx = 0;
  for (int i = 0; i < n; i++) wmx = i * 3 % 1001 > wmx ? i * 3 % 1001 : wmx;
  EXPECT(hmx == wmx, "max %d, want %d", hmx, wmx);
  EXPECT(hmn == 5000 - (n - 1), "min %d", hmn);
  EXPECT(hcas == 2 * n, "cas %d, want %d", hcas, 2 * n);
  for (int j = 0; j < 4; j++) {
    unsigned w = 0;
    for (int i = j; i < n; i += 4) w |= 1u << (i % 32);
    EXPECT(hb[j] == w, "bits[%d] = %x, want %x", j, hb[j], w);
  }
  printf("atomics: ok\n");
  return 0;
}
