// Buffer intrinsics the way composable_kernel uses them: a buffer resource (V#) built in the kernel
// from a pointer and a byte count (word 3 0x00020000: DATA_FORMAT 32, CK's gfx9 value), the
// llvm.amdgcn.raw.buffer.* loads, stores and atomics declared by their LLVM names, and the range
// check CK relies on at tensor edges: loads past NUM_RECORDS read 0, stores and atomics past it are
// dropped. 64 lanes over a buffer of 37 floats.
#include "common.h"
#include <cstring>
#include <vector>
typedef int int32x4_t __attribute__((ext_vector_type(4)));
typedef float float2_t __attribute__((ext_vector_type(2)));
__device__ float raw_load_f32(int32x4_t rsrc, int voffset, int soffset, int aux) __asm("llvm.amdgcn.raw.buffer.load.f32");
__device__ float2_t raw_load_v2f32(int32x4_t rsrc, int voffset, int soffset, int aux) __asm("llvm.amdgcn.raw.buffer.load.v2f32");
__device__ void raw_store_f32(float v, int32x4_t rsrc, int voffset, int soffset, int aux) __asm("llvm.amdgcn.raw.buffer.store.f32");
__device__ int raw_atomic_add_i32(int v, int32x4_t rsrc, int voffset, int soffset, int aux) __asm("llvm.amdgcn.raw.buffer.atomic.add.i32");
__device__ int32x4_t rsrc(const void* p, unsigned bytes) {
  unsigned long long a = (unsigned long long)p;
  int32x4_t r;
  r.x = (int)a;
  r.y = (int)(a >> 32) & 0xffff;  // stride 0: a raw buffer
  r.z = (int)bytes;               // NUM_RECORDS
  r.w = 0x00020000;               // DATA_FORMAT 32 (bits 18:15 = 4), as CK sets for gfx9
  return r;
}
__global__ void k(const float* in, float* out, int* cnt, unsigned n) {
  int t = threadIdx.x;
  int32x4_t ri = rsrc(in, n * 4), ro = rsrc(out, n * 4), rc = rsrc(cnt, 4);
  float v = raw_load_f32(ri, t * 4, 0, 0);            // past n: 0
  float2_t v2 = raw_load_v2f32(ri, t * 8, 0, 0);      // pairs, some past the end (only stored past n)
  raw_store_f32(v + 1.0f, ro, t * 4, 0, 0);           // past n: dropped
  raw_store_f32(v2.x + v2.y, ro, (n + t) * 4, 0, 0);  // all past n: dropped
  raw_atomic_add_i32(1, rc, (t & 1) * 4, 0, 0);       // odd lanes out of range: dropped
}
int main() {
  const unsigned n = 37;
  std::vector<float> h(64); for (int i = 0; i < 64; i++) h[i] = i * 0.5f;
  float *di, *dout; int* dc;
  CHECK(hipMalloc(&di, 256)); CHECK(hipMalloc(&dout, 512)); CHECK(hipMalloc(&dc, 8));
  CHECK(hipMemcpy(di, h.data(), 256, hipMemcpyHostToDevice)); CHECK(hipMemset(dout, 0xff, 512)); CHECK(hipMemset(dc, 0, 8));
  k<<<1, 64>>>(di, dout, dc, n);
  std::vector<unsigned> o(128); int c[2];
  CHECK(hipMemcpy(o.data(), dout, 512, hipMemcpyDeviceToHost)); CHECK(hipMemcpy(c, dc, 8, hipMemcpyDeviceToHost));
  for (unsigned t = 0; t < 128; t++) {
    float w = t < n ? h[t] + 1.0f : 0; unsigned wu; memcpy(&wu, &w, 4);
    if (t >= n) wu = 0xffffffffu;
    EXPECT(o[t] == wu, "out[%u] = %#x want %#x", t, o[t], wu);
  }
  EXPECT(c[0] == 32 && c[1] == 0, "counters %d %d", c[0], c[1]);
  printf("buffer_intrinsics: ok\n");
  return 0;
}
