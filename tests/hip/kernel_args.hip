// Kernel arguments: a 1 KiB struct by value, mixed scalar types at every alignment (char, short,
// double, float4, long long, pointers), a template kernel, the grid's built-ins (blockDim, gridDim
// in 3 dimensions, a partial last block), hipLaunchKernelGGL and hipModuleLaunchKernel-style
// launches through hipLaunchKernel with an argument array; every value checked on the host.
#include "common.h"
#include <vector>

struct Big {
  int v[250];
  double d;
  char tag[8];
};

struct Rec {
  long long sum;
  double dsum;
  int dims[6];
  int c, s;
  float f4[4];
  unsigned long long p;
};

__global__ void mixed(Rec* out, char c, Big big, short s, double d, float4 f, long long ll, const int* p, char c2) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  long long sum = 0;
  for (int i = 0; i < 250; i++) sum += big.v[i];
  for (int i = 0; i < 8; i++) sum += big.tag[i];
  Rec r;
  r.sum = sum + ll + p[3];
  r.dsum = big.d + d;
  r.c = c * 1000 + c2;
  r.s = s;
  r.f4[0] = f.x, r.f4[1] = f.y, r.f4[2] = f.z, r.f4[3] = f.w;
  r.p = (unsigned long long)p;
  for (int i = 0; i < 6; i++) r.dims[i] = 0;
  *out = r;
}

template <typename T, int K>
__global__ void scaleT(T* a, int n, T add) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = a[i] * (T)K + add;
}

__global__ void grid3(int* out, int nx, int ny, int nz) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z * blockDim.z + threadIdx.z;
  if (x >= nx || y >= ny || z >= nz) return;
  int id = (z * ny + y) * nx + x;
  out[id] = (blockDim.x * 1000000 + blockDim.y * 10000 + blockDim.z * 100) +
            (gridDim.x * 10000 + gridDim.y * 100 + gridDim.z) * 0 + threadIdx.x + threadIdx.y * 8 + threadIdx.z * 64;
  if (id == 0) out[nx * ny * nz] = gridDim.x * 10000 + gridDim.y * 100 + gridDim.z;
}

int main() {
  Big big;
  long long want = 0;
  for (int i = 0; i < 250; i++) big.v[i] = i * 37 - 4000, want += big.v[i];
  for (int i = 0; i < 8; i++) big.tag[i] = (char)(i * 11 - 30), want += big.tag[i];
  big.d = 1.25;
  int* p;
  CHECK(hipMalloc(&p, 16 * sizeof(int)));
  int hp[16];
  for (int i = 0; i < 16; i++) hp[i] = 100 + i;
  CHECK(hipMemcpy(p, hp, sizeof hp, hipMemcpyHostToDevice));
  Rec* dr;
  CHECK(hipMalloc(&dr, sizeof(Rec)));
  float4 f = make_float4(1.5f, -2.5f, 3.25f, 1e30f);
  hipLaunchKernelGGL(mixed, dim3(1), dim3(64), 0, 0, dr, (char)-7, big, (short)-12345, 2.5e-300, f, -123456789012345ll,
                     (const int*)p, (char)99);
  CHECK(hipGetLastError());
  Rec r;
  CHECK(hipMemcpy(&r, dr, sizeof r, hipMemcpyDeviceToHost));
  EXPECT(r.sum == want - 123456789012345ll + 103, "sum %lld, want %lld", r.sum, want - 123456789012345ll + 103);
  EXPECT(r.dsum == 1.25 + 2.5e-300, "dsum %a", r.dsum);
  EXPECT(r.c == -7 * 1000 + 99 && r.s == -12345, "char %d short %d", r.c, r.s);
  EXPECT(r.f4[0] == 1.5f && r.f4[1] == -2.5f && r.f4[2] == 3.25f && r.f4[3] == 1e30f, "float4 %g %g %g %g", r.f4[0],
         r.f4[1], r.f4[2], r.f4[3]);
  EXPECT(r.p == (unsigned long long)p, "pointer %llx, want %p", r.p, (void*)p);

  // the same kernel through hipLaunchKernel with an argument array
  char c = 3, c2 = -1;
  short s = 7;
  double d = -0.5;
  long long ll = 1;
  const int* cp = p;
  void* args[] = {&dr, &c, &big, &s, &d, &f, &ll, &cp, &c2};
  CHECK(hipLaunchKernel((const void*)mixed, dim3(1), dim3(32), args, 0, 0));
  CHECK(hipMemcpy(&r, dr, sizeof r, hipMemcpyDeviceToHost));
  EXPECT(r.sum == want + 1 + 103 && r.dsum == 0.75 && r.c == 2999 && r.s == 7, "hipLaunchKernel: sum %lld dsum %g c %d s %d",
         r.sum, r.dsum, r.c, r.s);

  // templates
  const int n = 1000;
  std::vector<double> hd(n);
  std::vector<short> hs(n);
  for (int i = 0; i < n; i++) hd[i] = i * 0.25, hs[i] = (short)(i - 500);
  double* dd;
  short* ds;
  CHECK(hipMalloc(&dd, n * sizeof(double)));
  CHECK(hipMalloc(&ds, n * sizeof(short)));
  CHECK(hipMemcpy(dd, hd.data(), n * sizeof(double), hipMemcpyHostToDevice));
  CHECK(hipMemcpy(ds, hs.data(), n * sizeof(short), hipMemcpyHostToDevice));
  scaleT<double, 3><<<(n + 127) / 128, 128>>>(dd, n, 0.125);
  scaleT<short, -2><<<(n + 95) / 96, 96>>>(ds, n, (short)5);
  CHECK(hipMemcpy(hd.data(), dd, n * sizeof(double), hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(hs.data(), ds, n * sizeof(short), hipMemcpyDeviceToHost));
  for (int i = 0; i < n; i++) {
    EXPECT(hd[i] == i * 0.25 * 3 + 0.125, "double[%d] = %g", i, hd[i]);
    EXPECT(hs[i] == (short)((i - 500) * -2 + 5), "short[%d] = %d", i, hs[i]);
  }

  // 3D grid with partial blocks in every dimension
  const int nx = 37, ny = 11, nz = 5;
  dim3 blk(8, 4, 2), grd((nx + 7) / 8, (ny + 3) / 4, (nz + 1) / 2);
  int* g;
  CHECK(hipMalloc(&g, (nx * ny * nz + 1) * sizeof(int)));
  grid3<<<grd, blk>>>(g, nx, ny, nz);
  std::vector<int> hg(nx * ny * nz + 1);
  CHECK(hipMemcpy(hg.data(), g, hg.size() * sizeof(int), hipMemcpyDeviceToHost));
  for (int z = 0; z < nz; z++)
    for (int y = 0; y < ny; y++)
      for (int x = 0; x < nx; x++) {
        int want3 = 8 * 1000000 + 4 * 10000 + 2 * 100 + x % 8 + (y % 4) * 8 + (z % 2) * 64;
        int got = hg[(z * ny + y) * nx + x];
        EXPECT(got == want3, "grid (%d,%d,%d) = %d, want %d", x, y, z, got, want3);
      }
  EXPECT(hg[nx * ny * nz] == 5 * 10000 + 3 * 100 + 3, "gridDim %d", hg[nx * ny * nz]);
  printf("kernel_args: ok\n");
  return 0;
}
