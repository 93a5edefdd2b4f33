// Texture objects over linear memory (hipResourceTypeLinear, the runtime's 1D buffer images) read
// with tex1Dfetch: float, int, uint2 and float4 elements as they are; uchar4 and short2 read as
// normalized floats (UNORM8: b/255, SNORM16: max(s/32767, -1), both correctly rounded, which the
// host computes the same way). The range check: ROCr's buffer image descriptor has STRIDE = the
// element size and NUM_RECORDS = width * element size (image_manager_ai.cpp), and on GFX9 a VMEM
// access with IDXEN and a non-zero stride compares the index with NUM_RECORDS in units of the stride
// (Mesa's si_descriptors.c spells the rule out), so indices from width * element size on read zero
// without touching memory; indices between the width and that bound read what follows the buffer,
// on hardware too, and are not used here.
#include "common.h"
#include <vector>

template <typename T, typename R>
__global__ void fetch(hipTextureObject_t t, const int* at, R* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1Dfetch<R>(t, at[i]);
}

// The element's channel description: hipCreateChannelDesc<T>, except uchar4, which HIP 5.2's
// header describes as signed (amd_channel_descriptor.h: hipChannelFormatKindSigned for uchar4 and
// uchar3; on any GPU such a texture reads SNORM8), so it is spelled out.
template <typename T>
static hipChannelFormatDesc channels() { return hipCreateChannelDesc<T>(); }
template <>
hipChannelFormatDesc channels<uchar4>() { return hipCreateChannelDesc(8, 8, 8, 8, hipChannelFormatKindUnsigned); }

template <typename T>
static hipTextureObject_t linearTex(const T* dev, size_t count, hipTextureReadMode mode) {
  hipResourceDesc rd = {};
  rd.resType = hipResourceTypeLinear;
  rd.res.linear.devPtr = (void*)dev;
  rd.res.linear.desc = channels<T>();
  rd.res.linear.sizeInBytes = count * sizeof(T);
  hipTextureDesc td = {};
  td.readMode = mode;
  hipTextureObject_t t;
  CHECK(hipCreateTextureObject(&t, &rd, &td, nullptr));
  return t;
}

// run fetches the texture of src (as R) at the indices, then at two beyond the descriptor's
// NUM_RECORDS, and returns the results.
template <typename T, typename R>
static std::vector<R> run(const std::vector<T>& src, std::vector<int> at, hipTextureReadMode mode) {
  at.push_back((int)(src.size() * sizeof(T)));  // NUM_RECORDS: out of range
  at.push_back((int)(src.size() * sizeof(T)) + 123);
  T* d;
  CHECK(hipMalloc((void**)&d, src.size() * sizeof(T)));
  CHECK(hipMemcpy(d, src.data(), src.size() * sizeof(T), hipMemcpyHostToDevice));
  hipTextureObject_t t = linearTex(d, src.size(), mode);
  int n = (int)at.size();
  int* dat;
  R* dout;
  CHECK(hipMalloc((void**)&dat, n * sizeof(int)));
  CHECK(hipMalloc((void**)&dout, n * sizeof(R)));
  CHECK(hipMemcpy(dat, at.data(), n * sizeof(int), hipMemcpyHostToDevice));
  hipLaunchKernelGGL((fetch<T, R>), dim3((n + 63) / 64), dim3(64), 0, 0, t, dat, dout, n);
  CHECK(hipGetLastError());
  std::vector<R> out(n);
  CHECK(hipMemcpy(out.data(), dout, n * sizeof(R), hipMemcpyDeviceToHost));
  CHECK(hipDestroyTextureObject(t));
  CHECK(hipFree(d));
  CHECK(hipFree(dat));
  CHECK(hipFree(dout));
  return out;
}

int main() {
  const int N = 1000;
  std::vector<int> at;
  // idx(k) is the k-th index fetched: at's, then run's two past NUM_RECORDS (any value >= N).
  auto idx = [&](size_t k) { return k < at.size() ? at[k] : N + 1; };
  for (int i = 0; i < N; i++) at.push_back((i * 37) % N);
  at.push_back(0);
  at.push_back(N - 1);

  {
    std::vector<float> s(N);
    for (int i = 0; i < N; i++) s[i] = i * 0.5f - 100;
    auto g = run<float, float>(s, at, hipReadModeElementType);
    for (size_t k = 0; k < g.size(); k++) {
      float w = idx(k) < N ? s[idx(k)] : 0.0f;
      EXPECT(g[k] == w, "float [%d] = %g, want %g", idx(k), g[k], w);
    }
  }
  {
    std::vector<int> s(N);
    for (int i = 0; i < N; i++) s[i] = i * 2654435761u;
    auto g = run<int, int>(s, at, hipReadModeElementType);
    for (size_t k = 0; k < g.size(); k++) {
      int w = idx(k) < N ? s[idx(k)] : 0;
      EXPECT(g[k] == w, "int [%d] = %d, want %d", idx(k), g[k], w);
    }
  }
  {
    std::vector<uint2> s(N);
    for (int i = 0; i < N; i++) s[i] = make_uint2(i * 3u, ~(unsigned)i);
    auto g = run<uint2, uint2>(s, at, hipReadModeElementType);
    for (size_t k = 0; k < g.size(); k++) {
      uint2 w = idx(k) < N ? s[idx(k)] : make_uint2(0, 0);
      EXPECT(g[k].x == w.x && g[k].y == w.y, "uint2 [%d] = (%u, %u)", idx(k), g[k].x, g[k].y);
    }
  }
  {
    std::vector<float4> s(N);
    for (int i = 0; i < N; i++) s[i] = make_float4(i, -i, i * 0.25f, 1.0f / (i + 1));
    auto g = run<float4, float4>(s, at, hipReadModeElementType);
    for (size_t k = 0; k < g.size(); k++) {
      float4 w = idx(k) < N ? s[idx(k)] : make_float4(0, 0, 0, 0);
      EXPECT(g[k].x == w.x && g[k].y == w.y && g[k].z == w.z && g[k].w == w.w, "float4 [%d]", idx(k));
    }
  }
  {
    std::vector<uchar4> s(N);
    for (int i = 0; i < N; i++) s[i] = make_uchar4(i & 255, (i * 7) & 255, 255 - (i & 255), (i * 13) & 255);
    auto g = run<uchar4, float4>(s, at, hipReadModeNormalizedFloat);
    for (size_t k = 0; k < g.size(); k++) {
      uchar4 u = idx(k) < N ? s[idx(k)] : make_uchar4(0, 0, 0, 0);
      float4 w = make_float4(u.x / 255.0f, u.y / 255.0f, u.z / 255.0f, u.w / 255.0f);
      EXPECT(g[k].x == w.x && g[k].y == w.y && g[k].z == w.z && g[k].w == w.w,
             "unorm8x4 [%d] = (%.9g %.9g %.9g %.9g), want (%.9g %.9g %.9g %.9g)", idx(k), g[k].x, g[k].y, g[k].z, g[k].w,
             w.x, w.y, w.z, w.w);
    }
  }
  {
    std::vector<short2> s(N);
    for (int i = 0; i < N; i++) s[i] = make_short2((short)(i * 97 - 32768), (short)(32767 - i * 61));
    s[1] = make_short2(-32768, -32767);  // both -1.0
    auto g = run<short2, float2>(s, at, hipReadModeNormalizedFloat);
    auto snorm = [](short v) { float f = v / 32767.0f; return f < -1.0f ? -1.0f : f; };
    for (size_t k = 0; k < g.size(); k++) {
      short2 u = idx(k) < N ? s[idx(k)] : make_short2(0, 0);
      float2 w = make_float2(snorm(u.x), snorm(u.y));
      EXPECT(g[k].x == w.x && g[k].y == w.y, "snorm16x2 [%d] = (%.9g %.9g), want (%.9g %.9g)", idx(k), g[k].x, g[k].y,
             w.x, w.y);
    }
  }
  printf("texture_linear: ok\n");
  return 0;
}
