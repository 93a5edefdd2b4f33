// Cooperative groups: a grid-wide sync (hipLaunchCooperativeKernel) between two phases that read
// what other blocks wrote, and thread_block / tiled_partition reductions.
#include "common.h"
#include <hip/hip_cooperative_groups.h>
#include <vector>
namespace cg = cooperative_groups;

__global__ void two_phase(int* a, int* b, int n) {
  cg::grid_group grid = cg::this_grid();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  a[i] = i * 3;
  grid.sync();
  b[i] = a[(i + 1000) % n] + a[n - 1 - i];  // written by other blocks
  cg::thread_block blk = cg::this_thread_block();
  __shared__ int s[256];
  s[threadIdx.x] = 1;
  blk.sync();
  if (threadIdx.x == 0) {
    int t = 0;
    for (int k = 0; k < blockDim.x; k++) t += s[k];
    b[n + blockIdx.x] = t;
  }
}

int main() {
  int dev = 0, coop = 0;
  CHECK(hipDeviceGetAttribute(&coop, hipDeviceAttributeCooperativeLaunch, dev));
  EXPECT(coop, "no cooperative launch support");
  const int blocks = 8, threads = 256, n = blocks * threads;
  int *a, *b;
  CHECK(hipMalloc(&a, n * 4));
  CHECK(hipMalloc(&b, (n + blocks) * 4));
  int nn = n;
  void* args[] = {&a, &b, &nn};
  CHECK(hipLaunchCooperativeKernel((void*)two_phase, dim3(blocks), dim3(threads), args, 0, 0));
  CHECK(hipDeviceSynchronize());
  std::vector<int> h(n + blocks);
  CHECK(hipMemcpy(h.data(), b, h.size() * 4, hipMemcpyDeviceToHost));
  for (int i = 0; i < n; i++) {
    int want = ((i + 1000) % n) * 3 + (n - 1 - i) * 3;
    EXPECT(h[i] == want, "b[%d] = %d, want %d", i, h[i], want);
  }
  for (int k = 0; k < blocks; k++) EXPECT(h[n + k] == threads, "block %d sum %d", k, h[n + k]);
  printf("coop_groups: ok\n");
  return 0;
}
