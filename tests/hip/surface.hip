// Surfaces: a kernel writes a hipArray through surf2Dwrite (image_store), another reads it back with
// surf2Dread (image_load) and the host copies it out with hipMemcpy2DFromArray; float and float4
// channel formats. Surface x coordinates are in bytes (CUDA semantics). HIP 5.2's surface functions
// pass every channel through static_cast<float> (amd_surface_functions.h __hipMapToNativeFloat4), so on
// integer channel formats they store float bits (as the hardware would): only float surfaces are
// checked.
#include "common.h"
#include <vector>

__global__ void writeF(hipSurfaceObject_t s, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x < W && y < H) surf2Dwrite<float>(x * 1000.0f + y - 77.5f, s, x * 4, y);
}

__global__ void readF(hipSurfaceObject_t s, float* out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x < W && y < H) {
    float v;
    surf2Dread(&v, s, x * 4, y);
    out[y * W + x] = v * 2;
  }
}

__global__ void writeF4(hipSurfaceObject_t s, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x < W && y < H) surf2Dwrite<float4>(make_float4(x, y, x + y, -0.25f), s, x * 16, y);
}

static hipSurfaceObject_t makeSurf(hipArray_t a) {
  hipResourceDesc rd = {};
  rd.resType = hipResourceTypeArray;
  rd.res.array.array = a;
  hipSurfaceObject_t s;
  CHECK(hipCreateSurfaceObject(&s, &rd));
  return s;
}

int main() {
  const int W = 45, H = 7;
  {
    hipChannelFormatDesc cd = hipCreateChannelDesc<float>();
    hipArray_t a;
    CHECK(hipMallocArray(&a, &cd, W, H));
    hipSurfaceObject_t s = makeSurf(a);
    hipLaunchKernelGGL(writeF, dim3((W + 63) / 64, H), dim3(64), 0, 0, s, W, H);
    CHECK(hipGetLastError());
    float* d;
    CHECK(hipMalloc((void**)&d, W * H * 4));
    hipLaunchKernelGGL(readF, dim3((W + 63) / 64, H), dim3(64), 0, 0, s, d, W, H);
    CHECK(hipGetLastError());
    std::vector<float> got(W * H), raw(W * H);
    CHECK(hipMemcpy(got.data(), d, W * H * 4, hipMemcpyDeviceToHost));
    CHECK(hipMemcpy2DFromArray(raw.data(), W * 4, a, 0, 0, W * 4, H, hipMemcpyDeviceToHost));
    for (int y = 0; y < H; y++)
      for (int x = 0; x < W; x++) {
        float want = x * 1000.0f + y - 77.5f;
        EXPECT(raw[y * W + x] == want, "float array (%d,%d) = %g, want %g", x, y, raw[y * W + x], want);
        EXPECT(got[y * W + x] == 2 * want, "surf2Dread (%d,%d) = %g, want %g", x, y, got[y * W + x], 2 * want);
      }
    CHECK(hipDestroySurfaceObject(s));
    CHECK(hipFree(d));
    CHECK(hipFreeArray(a));
  }
  {
    hipChannelFormatDesc cd = hipCreateChannelDesc<float4>();
    hipArray_t a;
    CHECK(hipMallocArray(&a, &cd, W, H));
    hipSurfaceObject_t s = makeSurf(a);
    hipLaunchKernelGGL(writeF4, dim3((W + 63) / 64, H), dim3(64), 0, 0, s, W, H);
    CHECK(hipGetLastError());
    std::vector<float4> raw(W * H);
    CHECK(hipMemcpy2DFromArray(raw.data(), W * 16, a, 0, 0, W * 16, H, hipMemcpyDeviceToHost));
    for (int y = 0; y < H; y++)
      for (int x = 0; x < W; x++) {
        float4 v = raw[y * W + x];
        EXPECT(v.x == x && v.y == y && v.z == x + y && v.w == -0.25f, "float4 (%d,%d) = %g %g %g %g", x, y, v.x,
               v.y, v.z, v.w);
      }
    CHECK(hipDestroySurfaceObject(s));
    CHECK(hipFreeArray(a));
  }
  printf("surface: ok\n");
  return 0;
}
