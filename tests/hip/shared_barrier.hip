// Shared memory and __syncthreads: a block-wide tree reduction and a reversal through LDS.
#include "common.h"
#include <vector>

__global__ void reduce(const int* in, int* out) {
  __shared__ int s[256];
  int t = threadIdx.x;
  s[t] = in[blockIdx.x * 256 + t];
  __syncthreads();
  for (int w = 128; w > 0; w >>= 1) {
    if (t < w) s[t] += s[t + w];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = s[0];
}

__global__ void reverse(int* a) {
  __shared__ int s[256];
  int t = threadIdx.x;
  s[t] = a[blockIdx.x * 256 + t];
  __syncthreads();
  a[blockIdx.x * 256 + t] = s[255 - t];
}

int main() {
  const int blocks = 16, n = blocks * 256;
  std::vector<int> in(n), out(blocks);
  for (int i = 0; i < n; i++) in[i] = (i * 7919) % 1000 - 500;
  int *din, *dout;
  CHECK(hipMalloc(&din, n * 4));
  CHECK(hipMalloc(&dout, blocks * 4));
  CHECK(hipMemcpy(din, in.data(), n * 4, hipMemcpyHostToDevice));
  reduce<<<blocks, 256>>>(din, dout);
  CHECK(hipMemcpy(out.data(), dout, blocks * 4, hipMemcpyDeviceToHost));
  for (int b = 0; b < blocks; b++) {
    int s = 0;
    for (int i = 0; i < 256; i++) s += in[b * 256 + i];
    EXPECT(out[b] == s, "block %d sum %d, want %d", b, out[b], s);
  }
  reverse<<<blocks, 256>>>(din);
  std::vector<int> r(n);
  CHECK(hipMemcpy(r.data(), din, n * 4, hipMemcpyDeviceToHost));
  for (int i = 0; i < n; i++) {
    int b = i / 256, t = i % 256;
    EXPECT(r[i] == in[b * 256 + 255 - t], "reverse[%d] = %d", i, r[i]);
  }
  printf("shared_barrier: ok\n");
  return 0;
}
