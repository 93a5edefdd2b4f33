// Built with hipcc --genco into partial_groups_kernel.co for partial_groups.hip (hipModuleLoad).
#include <hip/hip_runtime.h>

// Each work-item records what it sees of the grid: the size of its own work-group (blockDim, the
// remainder in a partial group), its ids and the number of groups, three dimensions packed 10 bits
// apiece. out is indexed by the global id.
extern "C" __global__ void ids(int* out, int gx, int gy) {
  int x = blockIdx.x * 64 + threadIdx.x; // the host launches with local sizes 64 x 4 x 2
  int y = blockIdx.y * 4 + threadIdx.y;
  int z = blockIdx.z * 2 + threadIdx.z;
  int* o = out + 4 * ((z * gy + y) * gx + x);
  o[0] = blockDim.x | blockDim.y << 10 | blockDim.z << 20;
  o[1] = blockIdx.x | blockIdx.y << 10 | blockIdx.z << 20;
  o[2] = threadIdx.x | threadIdx.y << 10 | threadIdx.z << 20;
  o[3] = gridDim.x | gridDim.y << 10 | gridDim.z << 20;
}

// A block-wide sum through LDS and barriers in groups that may be partial: every work-item of a
// group adds its global id; work-item 0 stores the sum and the count.
extern "C" __global__ void sums(int* out, int n) {
  __shared__ int sum, count;
  if (threadIdx.x == 0) sum = 0, count = 0;
  __syncthreads();
  int i = blockIdx.x * 256 + threadIdx.x;
  atomicAdd(&sum, i);
  atomicAdd(&count, 1);
  __syncthreads();
  if (threadIdx.x == 0) out[2 * blockIdx.x] = sum, out[2 * blockIdx.x + 1] = count;
  (void)n;
}
