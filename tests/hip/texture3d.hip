// 3D and layered textures: hipMalloc3DArray (plain and hipArrayLayered) filled with hipMemcpy3D from
// host memory (the runtime's blit kernels on a 3D / 2D-array image), read back with hipMemcpy3D, and
// sampled with tex3D (point and trilinear, unnormalized) and tex2DLayered (point). Expected values
// are exact in float: texel (x, y, z) = x + 16y + 256z and weights 0.5.
#include "common.h"
#include <vector>

__global__ void f3d(hipTextureObject_t t, const float4* at, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex3D<float>(t, at[i].x, at[i].y, at[i].z);
}

__global__ void flayer(hipTextureObject_t t, const float4* at, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2DLayered<float>(t, at[i].x, at[i].y, (int)at[i].z);
}

static float texel(int x, int y, int z) { return (float)(x + 16 * y + 256 * z); }

static std::vector<float> run(bool layered, hipTextureObject_t t, const std::vector<float4>& at) {
  int n = (int)at.size();
  float4* dat;
  float* dout;
  CHECK(hipMalloc((void**)&dat, n * sizeof(float4)));
  CHECK(hipMalloc((void**)&dout, n * sizeof(float)));
  CHECK(hipMemcpy(dat, at.data(), n * sizeof(float4), hipMemcpyHostToDevice));
  if (layered)
    hipLaunchKernelGGL(flayer, dim3((n + 63) / 64), dim3(64), 0, 0, t, dat, dout, n);
  else
    hipLaunchKernelGGL(f3d, dim3((n + 63) / 64), dim3(64), 0, 0, t, dat, dout, n);
  CHECK(hipGetLastError());
  std::vector<float> out(n);
  CHECK(hipMemcpy(out.data(), dout, n * sizeof(float), hipMemcpyDeviceToHost));
  CHECK(hipFree(dat));
  CHECK(hipFree(dout));
  return out;
}

int main() {
  const int W = 9, H = 5, D = 4;
  std::vector<float> src(W * H * D), back(W * H * D, -1);
  for (int z = 0; z < D; z++)
    for (int y = 0; y < H; y++)
      for (int x = 0; x < W; x++) src[(z * H + y) * W + x] = texel(x, y, z);
  for (int layered = 0; layered < 2; layered++) {
    hipChannelFormatDesc cd = hipCreateChannelDesc<float>();
    hipArray_t a;
    CHECK(hipMalloc3DArray(&a, &cd, make_hipExtent(W, H, D), layered ? hipArrayLayered : 0));
    hipMemcpy3DParms p = {};
    p.srcPtr = make_hipPitchedPtr(src.data(), W * 4, W, H);
    p.dstArray = a;
    p.extent = make_hipExtent(W, H, D);
    p.kind = hipMemcpyHostToDevice;
    CHECK(hipMemcpy3D(&p));
    hipMemcpy3DParms q = {};
    q.srcArray = a;
    q.dstPtr = make_hipPitchedPtr(back.data(), W * 4, W, H);
    q.extent = make_hipExtent(W, H, D);
    q.kind = hipMemcpyDeviceToHost;
    CHECK(hipMemcpy3D(&q));
    for (int i = 0; i < W * H * D; i++)
      EXPECT(back[i] == src[i], "%s round trip [%d] = %g, want %g", layered ? "layered" : "3D", i, back[i], src[i]);

    for (int filt = 0; filt < 2 - layered; filt++) {
      hipResourceDesc rd = {};
      rd.resType = hipResourceTypeArray;
      rd.res.array.array = a;
      hipTextureDesc td = {};
      td.addressMode[0] = td.addressMode[1] = td.addressMode[2] = hipAddressModeClamp;
      td.filterMode = filt ? hipFilterModeLinear : hipFilterModePoint;
      td.readMode = hipReadModeElementType;
      hipTextureObject_t t;
      CHECK(hipCreateTextureObject(&t, &rd, &td, nullptr));
      std::vector<float4> at;
      std::vector<float> want;
      for (int z = 0; z < D - 1; z++)
        for (int y = 0; y < H - 1; y++)
          for (int x = 0; x < W - 1; x++) {
            if (filt) {
              // (x+1, y+1, z+1) is the mean of the 8 texels around it
              at.push_back(make_float4(x + 1.0f, y + 1.0f, z + 1.0f, 0));
              want.push_back(texel(x, y, z) + 0.5f + 8 + 128);
            } else {
              at.push_back(make_float4(x + 0.5f, y + 0.5f, layered ? (float)z : z + 0.5f, 0));
              want.push_back(texel(x, y, z));
            }
          }
      std::vector<float> g = run(layered, t, at);
      for (size_t i = 0; i < g.size(); i++)
        EXPECT(g[i] == want[i], "%s %s at (%g,%g,%g) = %g, want %g", layered ? "layered" : "3D",
               filt ? "linear" : "point", at[i].x, at[i].y, at[i].z, g[i], want[i]);
      CHECK(hipDestroyTextureObject(t));
    }
    CHECK(hipFreeArray(a));
  }
  printf("texture3d: ok\n");
  return 0;
}
