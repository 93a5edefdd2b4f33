// Images and textures: hipMallocArray + hipMemcpy2DToArray / hipMemcpy2DFromArray round trips (the
// runtime's blit kernels on image_store/image_load), then texture objects over an array read with
// tex2D: point and linear filtering, unnormalized and normalized coordinates, clamp, wrap, mirror and
// border addressing, a texture over pitched memory, and a uchar texture read as normalized float.
// Texel values and sample positions are chosen so that every expected result is
// exact in float (weights 0.25/0.75 and small integers).
#include "common.h"
#include <vector>

__global__ void fetch(hipTextureObject_t t, const float2* at, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2D<float>(t, at[i].x, at[i].y);
}

static float texel(int x, int y) { return (float)(x + 64 * y); }

static hipTextureObject_t makeTex(hipArray_t a, hipTextureAddressMode am, hipTextureFilterMode fm, int norm) {
  hipResourceDesc rd = {};
  rd.resType = hipResourceTypeArray;
  rd.res.array.array = a;
  hipTextureDesc td = {};
  td.addressMode[0] = td.addressMode[1] = td.addressMode[2] = am;
  td.filterMode = fm;
  td.readMode = hipReadModeElementType;
  td.normalizedCoords = norm;
  hipTextureObject_t t;
  CHECK(hipCreateTextureObject(&t, &rd, &td, nullptr));
  return t;
}

// run samples t at the positions and returns the values.
static std::vector<float> run(hipTextureObject_t t, const std::vector<float2>& at) {
  int n = (int)at.size();
  float2* dat;
  float* dout;
  CHECK(hipMalloc((void**)&dat, n * sizeof(float2)));
  CHECK(hipMalloc((void**)&dout, n * sizeof(float)));
  CHECK(hipMemcpy(dat, at.data(), n * sizeof(float2), hipMemcpyHostToDevice));
  hipLaunchKernelGGL(fetch, dim3((n + 63) / 64), dim3(64), 0, 0, t, dat, dout, n);
  CHECK(hipGetLastError());
  std::vector<float> out(n);
  CHECK(hipMemcpy(out.data(), dout, n * sizeof(float), hipMemcpyDeviceToHost));
  CHECK(hipFree(dat));
  CHECK(hipFree(dout));
  return out;
}

int main() {
  // 1. Round trip through an array of odd width (37 x 11 floats) and of uchar4 (20 x 9).
  {
    const int W = 37, H = 11;
    std::vector<float> src(W * H), dst(W * H, -1);
    for (int y = 0; y < H; y++)
      for (int x = 0; x < W; x++) src[y * W + x] = texel(x, y);
    hipChannelFormatDesc cd = hipCreateChannelDesc<float>();
    hipArray_t a;
    CHECK(hipMallocArray(&a, &cd, W, H));
    CHECK(hipMemcpy2DToArray(a, 0, 0, src.data(), W * 4, W * 4, H, hipMemcpyHostToDevice));
    CHECK(hipMemcpy2DFromArray(dst.data(), W * 4, a, 0, 0, W * 4, H, hipMemcpyDeviceToHost));
    for (int i = 0; i < W * H; i++) EXPECT(dst[i] == src[i], "float array [%d] = %f, want %f", i, dst[i], src[i]);
    CHECK(hipFreeArray(a));
  }
  {
    const int W = 20, H = 9;
    std::vector<uchar4> src(W * H), dst(W * H);
    for (int i = 0; i < W * H; i++) src[i] = make_uchar4(i & 255, (i * 3) & 255, (i * 7) & 255, 255 - (i & 255));
    hipChannelFormatDesc cd = hipCreateChannelDesc<uchar4>();
    hipArray_t a;
    CHECK(hipMallocArray(&a, &cd, W, H));
    CHECK(hipMemcpy2DToArray(a, 0, 0, src.data(), W * 4, W * 4, H, hipMemcpyHostToDevice));
    CHECK(hipMemcpy2DFromArray(dst.data(), W * 4, a, 0, 0, W * 4, H, hipMemcpyDeviceToHost));
    for (int i = 0; i < W * H; i++)
      EXPECT(dst[i].x == src[i].x && dst[i].y == src[i].y && dst[i].z == src[i].z && dst[i].w == src[i].w,
             "uchar4 array [%d]", i);
    CHECK(hipFreeArray(a));
  }

  // 2. Textures over a 32 x 16 float array.
  const int W = 32, H = 16;
  std::vector<float> src(W * H);
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) src[y * W + x] = texel(x, y);
  hipChannelFormatDesc cd = hipCreateChannelDesc<float>();
  hipArray_t a;
  CHECK(hipMallocArray(&a, &cd, W, H));
  CHECK(hipMemcpy2DToArray(a, 0, 0, src.data(), W * 4, W * 4, H, hipMemcpyHostToDevice));
  auto clampi = [](int v, int n) { return v < 0 ? 0 : v >= n ? n - 1 : v; };

  // Point, unnormalized, clamp: texel centres, and positions outside the image.
  {
    hipTextureObject_t t = makeTex(a, hipAddressModeClamp, hipFilterModePoint, 0);
    std::vector<float2> at;
    std::vector<float> want;
    for (int y = -2; y < H + 2; y++)
      for (int x = -3; x < W + 3; x++) {
        at.push_back(make_float2(x + 0.5f, y + 0.25f));
        want.push_back(texel(clampi(x, W), clampi(y, H)));
      }
    std::vector<float> got = run(t, at);
    for (size_t i = 0; i < got.size(); i++)
      EXPECT(got[i] == want[i], "point clamp at (%g,%g) = %g, want %g", at[i].x, at[i].y, got[i], want[i]);
    CHECK(hipDestroyTextureObject(t));
  }
  // Linear, unnormalized, clamp: u = x + 0.75 blends texels x and x+1 with weights 0.75 and 0.25
  // (clamped at the right edge); v = y + 0.5 hits row y.
  {
    hipTextureObject_t t = makeTex(a, hipAddressModeClamp, hipFilterModeLinear, 0);
    std::vector<float2> at;
    std::vector<float> want;
    for (int y = 0; y < H; y++)
      for (int x = 0; x < W; x++) {
        at.push_back(make_float2(x + 0.75f, y + 0.5f));
        want.push_back(0.75f * texel(x, y) + 0.25f * texel(clampi(x + 1, W), y));
      }
    // and both directions: (x + 1.0, y + 1.0) is the mean of four texels
    for (int y = 0; y < H - 1; y++)
      for (int x = 0; x < W - 1; x++) {
        at.push_back(make_float2(x + 1.0f, y + 1.0f));
        want.push_back((texel(x, y) + texel(x + 1, y) + texel(x, y + 1) + texel(x + 1, y + 1)) / 4);
      }
    std::vector<float> got = run(t, at);
    for (size_t i = 0; i < got.size(); i++)
      EXPECT(got[i] == want[i], "linear at (%g,%g) = %g, want %g", at[i].x, at[i].y, got[i], want[i]);
    CHECK(hipDestroyTextureObject(t));
  }
  // Normalized coordinates with wrap, mirror and border (point filtering).
  {
    hipTextureObject_t tw = makeTex(a, hipAddressModeWrap, hipFilterModePoint, 1);
    hipTextureObject_t tm = makeTex(a, hipAddressModeMirror, hipFilterModePoint, 1);
    hipTextureObject_t tb = makeTex(a, hipAddressModeBorder, hipFilterModePoint, 1);
    std::vector<float2> at;
    for (int y = 0; y < H; y++)
      for (int x = 0; x < W; x++) at.push_back(make_float2((x + 0.5f) / W + 1.0f, (y + 0.5f) / H - 1.0f));
    std::vector<float> gw = run(tw, at), gm = run(tm, at), gb = run(tb, at);
    for (int y = 0; y < H; y++)
      for (int x = 0; x < W; x++) {
        int i = y * W + x;
        EXPECT(gw[i] == texel(x, y), "wrap (%d,%d) = %g", x, y, gw[i]);
        // mirror: s in [1,2) reads texel W-1-x, t in [-1,0) reads texel H-1-y
        EXPECT(gm[i] == texel(W - 1 - x, H - 1 - y), "mirror (%d,%d) = %g", x, y, gm[i]);
        EXPECT(gb[i] == 0.0f, "border (%d,%d) = %g", x, y, gb[i]);
      }
    std::vector<float2> in;
    for (int y = 0; y < H; y++)
      for (int x = 0; x < W; x++) in.push_back(make_float2((x + 0.5f) / W, (y + 0.5f) / H));
    std::vector<float> g = run(tb, in);
    for (int i = 0; i < W * H; i++) EXPECT(g[i] == src[i], "normalized border inside [%d] = %g", i, g[i]);
    CHECK(hipDestroyTextureObject(tw));
    CHECK(hipDestroyTextureObject(tm));
    CHECK(hipDestroyTextureObject(tb));
  }
  CHECK(hipFreeArray(a));

  // 3. A texture over pitched linear memory (hipResourceTypePitch2D: an image with the LINEAR layout over
  // the program's own rows, so the layout is the CPU's) and a uchar texture read as normalized float
  // (UNORM8: b/255 correctly rounded, which is what the host's b / 255.0f computes).
  {
    const int PW = 40, PH = 6;
    float* d;
    size_t pitch;
    CHECK(hipMallocPitch((void**)&d, &pitch, PW * 4, PH));
    std::vector<float> h(PW * PH);
    for (int i = 0; i < PW * PH; i++) h[i] = texel(i % PW, i / PW);
    CHECK(hipMemcpy2D(d, pitch, h.data(), PW * 4, PW * 4, PH, hipMemcpyHostToDevice));
    hipResourceDesc rd = {};
    rd.resType = hipResourceTypePitch2D;
    rd.res.pitch2D.devPtr = d;
    rd.res.pitch2D.desc = hipCreateChannelDesc<float>();
    rd.res.pitch2D.width = PW;
    rd.res.pitch2D.height = PH;
    rd.res.pitch2D.pitchInBytes = pitch;
    hipTextureDesc td = {};
    td.addressMode[0] = td.addressMode[1] = hipAddressModeClamp;
    td.filterMode = hipFilterModePoint;
    td.readMode = hipReadModeElementType;
    hipTextureObject_t t;
    CHECK(hipCreateTextureObject(&t, &rd, &td, nullptr));
    std::vector<float2> at;
    for (int y = 0; y < PH; y++)
      for (int x = 0; x < PW; x++) at.push_back(make_float2(x + 0.5f, y + 0.5f));
    std::vector<float> g = run(t, at);
    for (int i = 0; i < PW * PH; i++) EXPECT(g[i] == h[i], "pitched texture [%d] = %g, want %g", i, g[i], h[i]);
    CHECK(hipDestroyTextureObject(t));
    CHECK(hipFree(d));
  }
  {
    const int UW = 16, UH = 16;
    std::vector<unsigned char> u(UW * UH);
    for (int i = 0; i < UW * UH; i++) u[i] = (unsigned char)(i * 37 + 11);
    hipChannelFormatDesc cd8 = hipCreateChannelDesc<unsigned char>();
    hipArray_t ua;
    CHECK(hipMallocArray(&ua, &cd8, UW, UH));
    CHECK(hipMemcpy2DToArray(ua, 0, 0, u.data(), UW, UW, UH, hipMemcpyHostToDevice));
    hipResourceDesc rd = {};
    rd.resType = hipResourceTypeArray;
    rd.res.array.array = ua;
    hipTextureDesc td = {};
    td.addressMode[0] = td.addressMode[1] = hipAddressModeClamp;
    td.filterMode = hipFilterModePoint;
    td.readMode = hipReadModeNormalizedFloat;
    hipTextureObject_t t;
    CHECK(hipCreateTextureObject(&t, &rd, &td, nullptr));
    std::vector<float2> at;
    for (int y = 0; y < UH; y++)
      for (int x = 0; x < UW; x++) at.push_back(make_float2(x + 0.5f, y + 0.5f));
    std::vector<float> g = run(t, at);
    for (int i = 0; i < UW * UH; i++)
      EXPECT(g[i] == u[i] / 255.0f, "unorm8 texture [%d] = %.9g, want %.9g", i, g[i], u[i] / 255.0f);
    CHECK(hipDestroyTextureObject(t));
    CHECK(hipFreeArray(ua));
  }
  printf("texture: ok\n");
  return 0;
}
