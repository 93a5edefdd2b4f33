// 2D and 3D copies: hipMallocPitch + hipMemcpy2D both ways with a sub-rectangle, and hipMemcpy3D
// between two pitched 3D allocations.
#include "common.h"
#include <vector>

int main() {
  const int w = 300, h = 70;  // in floats
  std::vector<float> src(w * h), dst(w * h, -1);
  for (int i = 0; i < w * h; i++) src[i] = i * 0.5f;
  float* d;
  size_t pitch;
  CHECK(hipMallocPitch((void**)&d, &pitch, w * 4, h));
  EXPECT(pitch >= w * 4, "pitch %zu", pitch);
  CHECK(hipMemcpy2D(d, pitch, src.data(), w * 4, w * 4, h, hipMemcpyHostToDevice));
  // Copy back a 100x20 rectangle starting at (7, 11) into the top-left corner.
  CHECK(hipMemcpy2D(dst.data(), w * 4, (char*)d + 11 * pitch + 7 * 4, pitch, 100 * 4, 20, hipMemcpyDeviceToHost));
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      float want = (x < 100 && y < 20) ? src[(y + 11) * w + x + 7] : -1;
      EXPECT(dst[y * w + x] == want, "2D (%d,%d) = %f, want %f", x, y, dst[y * w + x], want);
    }
  // 3D: 40 x 30 x 5 bytes between two pitched volumes on the device, then back.
  hipExtent ext = make_hipExtent(40, 30, 5);
  hipPitchedPtr a, b;
  CHECK(hipMalloc3D(&a, ext));
  CHECK(hipMalloc3D(&b, ext));
  std::vector<unsigned char> v(40 * 30 * 5), out(40 * 30 * 5, 0);
  for (size_t i = 0; i < v.size(); i++) v[i] = (unsigned char)(i * 7 + 3);
  hipMemcpy3DParms p = {};
  p.srcPtr = make_hipPitchedPtr(v.data(), 40, 40, 30);
  p.dstPtr = a;
  p.extent = ext;
  p.kind = hipMemcpyHostToDevice;
  CHECK(hipMemcpy3D(&p));
  p = {};
  p.srcPtr = a;
  p.dstPtr = b;
  p.extent = ext;
  p.kind = hipMemcpyDeviceToDevice;
  CHECK(hipMemcpy3D(&p));
  p = {};
  p.srcPtr = b;
  p.dstPtr = make_hipPitchedPtr(out.data(), 40, 40, 30);
  p.extent = ext;
  p.kind = hipMemcpyDeviceToHost;
  CHECK(hipMemcpy3D(&p));
  for (size_t i = 0; i < v.size(); i++) EXPECT(out[i] == v[i], "3D byte %zu = %d, want %d", i, out[i], v[i]);
  printf("memcpy2d: ok\n");
  return 0;
}
