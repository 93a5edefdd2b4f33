// hipcc-flags: -munsafe-fp-atomics
// Floating-point atomics as gfx90a's own instructions (the hipcc-flags line lets clang emit them
// instead of compare-and-swap loops): global_atomic_add_f32 (whose returned old values must all
// differ), flat_atomic_add_f64, global_atomic_min_f64 and flat_atomic_max_f64 (clang builtins:
// HIP 5.2 has no unsafeAtomicMin/Max), global_atomic_pk_add_f16 (a __half2 add rounded per half),
// ds_add_f32 and flat f64 adds on shared memory; every sum of exactly representable values checked
// exactly.
#include "common.h"
#include <hip/hip_fp16.h>
#include <vector>
#include <algorithm>

__global__ void k(float* f, double* d, double* mn, double* mx, __half2* h, float* olds, double* lsum) {
  __shared__ double ld;
  __shared__ float lf;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (threadIdx.x == 0) { ld = 0; lf = 0; }
  __syncthreads();
  olds[i] = unsafeAtomicAdd(f, 1.0f);             // returns the old value: all distinct
  unsafeAtomicAdd(d, (double)(i % 7) * 0.25);
  __builtin_amdgcn_global_atomic_fmin_f64((__attribute__((address_space(1))) double*)mn, (double)((i * 37) % 1000) - 500.0);
  __builtin_amdgcn_flat_atomic_fmax_f64(mx, (double)((i * 53) % 999) + 0.5);
  typedef _Float16 half2v __attribute__((ext_vector_type(2)));
  half2v one = {(_Float16)1.0f, (_Float16)0.5f};
  __builtin_amdgcn_global_atomic_fadd_v2f16((__attribute__((address_space(1))) half2v*)h, one);
  atomicAdd(&ld, 2.0);
  atomicAdd(&lf, 0.25f);
  __syncthreads();
  if (threadIdx.x == 0) { atomicAdd(lsum, ld); atomicAdd(lsum + 1, (double)lf); }
}

int main() {
  const int blocks = 16, threads = 256, n = blocks * threads;
  float *f, *olds; double *d, *mn, *mx, *lsum; __half2* h;
  CHECK(hipMalloc(&f, 4)); CHECK(hipMalloc(&d, 8)); CHECK(hipMalloc(&mn, 8)); CHECK(hipMalloc(&mx, 8));
  CHECK(hipMalloc(&h, 4)); CHECK(hipMalloc(&olds, 4 * n)); CHECK(hipMalloc(&lsum, 16));
  float zf = 0; double zd = 0, big = 1e300, small = -1e300; __half2 zh = __halves2half2(__float2half(0.f), __float2half(0.f));
  CHECK(hipMemcpy(f, &zf, 4, hipMemcpyHostToDevice)); CHECK(hipMemcpy(d, &zd, 8, hipMemcpyHostToDevice));
  CHECK(hipMemcpy(mn, &big, 8, hipMemcpyHostToDevice)); CHECK(hipMemcpy(mx, &small, 8, hipMemcpyHostToDevice));
  CHECK(hipMemcpy(h, &zh, 4, hipMemcpyHostToDevice)); CHECK(hipMemset(lsum, 0, 16));
  k<<<blocks, threads>>>(f, d, mn, mx, h, olds, lsum);
  CHECK(hipGetLastError());
  CHECK(hipDeviceSynchronize());
  float hf; double hd, hmn, hmx, hl[2]; __half2 hh; std::vector<float> ho(n);
  CHECK(hipMemcpy(&hf, f, 4, hipMemcpyDeviceToHost)); CHECK(hipMemcpy(&hd, d, 8, hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(&hmn, mn, 8, hipMemcpyDeviceToHost)); CHECK(hipMemcpy(&hmx, mx, 8, hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(&hh, h, 4, hipMemcpyDeviceToHost)); CHECK(hipMemcpy(hl, lsum, 16, hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(ho.data(), olds, 4 * n, hipMemcpyDeviceToHost));
  double wd = 0, wmn = 1e300, wmx = -1e300;
  for (int i = 0; i < n; i++) {
    wd += (double)(i % 7) * 0.25;
    wmn = std::min(wmn, (double)((i * 37) % 1000) - 500.0);
    wmx = std::max(wmx, (double)((i * 53) % 999) + 0.5);
  }
  EXPECT(hf == (float)n, "f32 add: %g, want %d", hf, n);
  EXPECT(hd == wd, "f64 add: %.17g, want %.17g", hd, wd);
  EXPECT(hmn == wmn && hmx == wmx, "f64 min/max: %g %g, want %g %g", hmn, hmx, wmn, wmx);
  float lo = __half2float(__low2half(hh)), hi = __half2float(__high2half(hh));
  EXPECT(lo == 2048.0f && hi == 1024.0f, "pk_add_f16: %g %g, want 2048 (1 + 2048 rounds to 2048 in f16) and 1024", lo, hi);
  std::sort(ho.begin(), ho.end());
  for (int i = 0; i < n; i++) EXPECT(ho[i] == (float)i, "returned old values: sorted[%d] = %g", i, ho[i]);
  EXPECT(hl[0] == 2.0 * n && hl[1] == 0.25 * n, "shared f64/f32 sums: %g %g", hl[0], hl[1]);
  printf("fp_atomics: ok\n");
  return 0;
}
