// 3D copies with offsets: hipMalloc3D (pitch at least the width), hipMemcpy3D host -> device of a
// whole volume, device -> device and device -> host of sub-boxes at srcPos/dstPos offsets in all
// three dimensions, hipMemcpy3DAsync, hipMemset3D on a sub-box, and a kernel indexing the pitched
// volume through the pitch; every byte checked, including those a copy must leave alone.
#include "common.h"
#include <vector>

__global__ void bump(hipPitchedPtr p, int w, int h, int d) {  // elements are ints
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y, z = blockIdx.z;
  if (x >= w || y >= h || z >= d) return;
  int* row = (int*)((char*)p.ptr + (size_t)(z * p.ysize + y) * p.pitch);
  row[x] += z * 10000 + y * 100 + x;
}

int main() {
  const int W = 37, H = 19, D = 7;  // ints
  hipExtent ext = make_hipExtent(W * sizeof(int), H, D);
  hipPitchedPtr a, b;
  CHECK(hipMalloc3D(&a, ext));
  CHECK(hipMalloc3D(&b, ext));
  EXPECT(a.pitch >= W * sizeof(int) && a.xsize == W * sizeof(int) && a.ysize == (size_t)H,
         "hipMalloc3D pitch %zu xsize %zu ysize %zu", a.pitch, a.xsize, a.ysize);
  std::vector<int> v(W * H * D);
  for (size_t i = 0; i < v.size(); i++) v[i] = (int)(i * 2654435761u);

  // whole volume host -> a
  hipMemcpy3DParms p = {};
  p.srcPtr = make_hipPitchedPtr(v.data(), W * sizeof(int), W, H);
  p.dstPtr = a;
  p.extent = ext;
  p.kind = hipMemcpyHostToDevice;
  CHECK(hipMemcpy3D(&p));
  // b: every byte 0x11, then a kernel adds its index formula over the pitched volume of a
  CHECK(hipMemset3D(b, 0x11, ext));
  bump<<<dim3((W + 63) / 64, H, D), 64>>>(a, W, H, D);
  CHECK(hipGetLastError());
  CHECK(hipDeviceSynchronize());
  std::vector<int> va(v);
  for (int z = 0; z < D; z++)
    for (int y = 0; y < H; y++)
      for (int x = 0; x < W; x++) va[(z * H + y) * W + x] += z * 10000 + y * 100 + x;

  // sub-box of a at (3, 2, 1), 20 x 11 x 4 ints, to b at (10, 5, 2)
  const int bx = 20, by = 11, bz = 4, sx = 3, sy = 2, sz = 1, dx = 10, dy = 5, dz = 2;
  p = {};
  p.srcPtr = a;
  p.srcPos = make_hipPos(sx * sizeof(int), sy, sz);
  p.dstPtr = b;
  p.dstPos = make_hipPos(dx * sizeof(int), dy, dz);
  p.extent = make_hipExtent(bx * sizeof(int), by, bz);
  p.kind = hipMemcpyDeviceToDevice;
  CHECK(hipMemcpy3D(&p));
  // hipMemset3D of a sub-box of b: 0x7f in 4 x 3 x 2 ints at (0, 0, 0) of the pointer moved by one row
  hipPitchedPtr b1 = b;
  b1.ptr = (char*)b.ptr + b.pitch;  // row y = 1 of slice 0
  CHECK(hipMemset3D(b1, 0x7f, make_hipExtent(4 * sizeof(int), 3, 2)));

  std::vector<int> wb(W * H * D, 0x11111111);
  for (int z = 0; z < bz; z++)
    for (int y = 0; y < by; y++)
      for (int x = 0; x < bx; x++)
        wb[((dz + z) * H + dy + y) * W + dx + x] = va[((sz + z) * H + sy + y) * W + sx + x];
  for (int z = 0; z < 2; z++)
    for (int y = 0; y < 3; y++)
      for (int x = 0; x < 4; x++) {
        // rows past the slice's last row continue into the next slice through the pitch
        int row = z * H + 1 + y;
        wb[row * W + x] = 0x7f7f7f7f;
      }

  // b whole -> host (async on a stream), a sub-box -> a host sub-box at an offset
  std::vector<int> gb(W * H * D, -1);
  hipStream_t s;
  CHECK(hipStreamCreate(&s));
  p = {};
  p.srcPtr = b;
  p.dstPtr = make_hipPitchedPtr(gb.data(), W * sizeof(int), W, H);
  p.extent = ext;
  p.kind = hipMemcpyDeviceToHost;
  CHECK(hipMemcpy3DAsync(&p, s));
  CHECK(hipStreamSynchronize(s));
  for (int z = 0; z < D; z++)
    for (int y = 0; y < H; y++)
      for (int x = 0; x < W; x++) {
        int i = (z * H + y) * W + x;
        EXPECT(gb[i] == wb[i], "b(%d,%d,%d) = %#x, want %#x", x, y, z, gb[i], wb[i]);
      }

  const int HW = 50, HH = 25, HD = 9;  // the host volume is larger than the device one
  std::vector<int> gh(HW * HH * HD, -7);
  p = {};
  p.srcPtr = a;
  p.srcPos = make_hipPos(5 * sizeof(int), 4, 2);
  p.dstPtr = make_hipPitchedPtr(gh.data(), HW * sizeof(int), HW, HH);
  p.dstPos = make_hipPos(11 * sizeof(int), 6, 3);
  p.extent = make_hipExtent(30 * sizeof(int), 15, 5);
  p.kind = hipMemcpyDeviceToHost;
  CHECK(hipMemcpy3D(&p));
  for (int z = 0; z < HD; z++)
    for (int y = 0; y < HH; y++)
      for (int x = 0; x < HW; x++) {
        int want = -7;
        if (x >= 11 && x < 41 && y >= 6 && y < 21 && z >= 3 && z < 8)
          want = va[((z - 3 + 2) * H + y - 6 + 4) * W + x - 11 + 5];
        int got = gh[(z * HH + y) * HW + x];
        EXPECT(got == want, "host box (%d,%d,%d) = %#x, want %#x", x, y, z, got, want);
      }
  CHECK(hipStreamDestroy(s));
  CHECK(hipFree(a.ptr));
  CHECK(hipFree(b.ptr));
  printf("memcpy3d: ok\n");
  return 0;
}
