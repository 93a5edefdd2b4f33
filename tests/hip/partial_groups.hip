// Partial work-groups: hipExtModuleLaunchKernel takes the grid in work-items, not in groups, so a
// grid that is not a multiple of the work-group size ends in partial groups (AQL grid_size, HSA:
// the last group in each dimension has the remainder). A 3D grid of 1000 x 7 x 3 work-items in
// groups of 64 x 4 x 2: every work-item runs once and sees its own group's size (blockDim: the
// remainder in the last group of each dimension), its ids and the group counts; then a 1D grid of
// 1000 items in groups of 256 with LDS atomics and barriers in the partial last group (232 items,
// 4 waves, the last one partly empty). The kernels come from partial_groups_kernel.co (hipcc --genco).
#include "common.h"
#include <hip/hip_ext.h>
#include <vector>

int main() {
  hipModule_t m;
  CHECK(hipModuleLoad(&m, "partial_groups_kernel.co"));
  hipFunction_t ids, sums;
  CHECK(hipModuleGetFunction(&ids, m, "ids"));
  CHECK(hipModuleGetFunction(&sums, m, "sums"));

  const int gx = 1000, gy = 7, gz = 3, lx = 64, ly = 4, lz = 2;
  const int n = gx * gy * gz;
  int* d;
  CHECK(hipMalloc(&d, n * 16));
  CHECK(hipMemset(d, 0xff, n * 16));
  struct {
    int* out;
    int gx, gy;
  } args = {d, gx, gy};
  size_t size = sizeof(args);
  void* extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, &args, HIP_LAUNCH_PARAM_BUFFER_SIZE, &size, HIP_LAUNCH_PARAM_END};
  CHECK(hipExtModuleLaunchKernel(ids, gx, gy, gz, lx, ly, lz, 0, nullptr, nullptr, extra, nullptr, nullptr, 0));
  std::vector<int> h(n * 4);
  CHECK(hipMemcpy(h.data(), d, n * 16, hipMemcpyDeviceToHost));
  auto pack = [](int a, int b, int c) { return a | b << 10 | c << 20; };
  const int ngx = (gx + lx - 1) / lx, ngy = (gy + ly - 1) / ly, ngz = (gz + lz - 1) / lz;
  int bad = 0;
  for (int z = 0; z < gz; z++)
    for (int y = 0; y < gy; y++)
      for (int x = 0; x < gx; x++) {
        const int* o = &h[4 * ((z * gy + y) * gx + x)];
        int bx = x / lx, by = y / ly, bz = z / lz;
        int w[4] = {pack(bx == ngx - 1 ? gx - bx * lx : lx, by == ngy - 1 ? gy - by * ly : ly, bz == ngz - 1 ? gz - bz * lz : lz),
                    pack(bx, by, bz), pack(x % lx, y % ly, z % lz), pack(ngx, ngy, ngz)};
        static const char* what[4] = {"blockDim", "blockIdx", "threadIdx", "gridDim"};
        for (int i = 0; i < 4; i++)
          if (o[i] != w[i] && bad++ < 10)
            fprintf(stderr, "work-item (%d,%d,%d) %s: %#x, want %#x\n", x, y, z, what[i], o[i], w[i]);
      }
  EXPECT(bad == 0, "%d values wrong", bad);
  printf("3D grid %dx%dx%d in groups of %dx%dx%d (%d x %d x %d groups, the last ones partial): ok\n", gx, gy, gz, lx, ly,
         lz, ngx, ngy, ngz);

  const int n1 = 1000, l1 = 256, g1 = (n1 + l1 - 1) / l1;
  int* s;
  CHECK(hipMalloc(&s, g1 * 8));
  CHECK(hipMemset(s, 0xff, g1 * 8));
  struct {
    int* out;
    int n;
  } a2 = {s, n1};
  size = sizeof(a2);
  void* extra2[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, &a2, HIP_LAUNCH_PARAM_BUFFER_SIZE, &size, HIP_LAUNCH_PARAM_END};
  CHECK(hipExtModuleLaunchKernel(sums, n1, 1, 1, l1, 1, 1, 0, nullptr, nullptr, extra2, nullptr, nullptr, 0));
  std::vector<int> hs(g1 * 2);
  CHECK(hipMemcpy(hs.data(), s, g1 * 8, hipMemcpyDeviceToHost));
  for (int b = 0; b < g1; b++) {
    int lo = b * l1, hi = b == g1 - 1 ? n1 : lo + l1;
    int want = 0;
    for (int i = lo; i < hi; i++) want += i;
    EXPECT(hs[2 * b] == want && hs[2 * b + 1] == hi - lo, "group %d: sum %d count %d, want %d and %d", b, hs[2 * b],
           hs[2 * b + 1], want, hi - lo);
  }
  printf("1D grid of %d in groups of %d, LDS atomics and barriers in the partial last group: ok\n", n1, l1);
  CHECK(hipFree(d));
  CHECK(hipFree(s));
  CHECK(hipModuleUnload(m));
  printf("partial_groups: ok\n");
  return 0;
}
