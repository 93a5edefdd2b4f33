// kfdemu-profile: mi210x8
// Two GPUs of an XGMI hive: peer access reported and enabled, hipMemcpyPeer both ways, a kernel on
// GPU 1 reading and writing GPU 0's memory in place, hipMemcpy between the devices' buffers.
#include "common.h"
#include <vector>

__global__ void scale(const int* src, int* dst, int n, int k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = src[i] * k;
}

int main() {
  int n = 0;
  CHECK(hipGetDeviceCount(&n));
  EXPECT(n >= 2, "%d devices, want at least 2", n);
  int can01 = 0, can10 = 0;
  CHECK(hipDeviceCanAccessPeer(&can01, 0, 1));
  CHECK(hipDeviceCanAccessPeer(&can10, 1, 0));
  EXPECT(can01 && can10, "peer access 0->1 %d, 1->0 %d", can01, can10);

  const int count = 1 << 20;
  const size_t bytes = count * sizeof(int);
  std::vector<int> h(count), back(count);
  for (int i = 0; i < count; i++) h[i] = i ^ 0x5a5a;

  int *a0, *b0, *a1;
  CHECK(hipSetDevice(0));
  CHECK(hipMalloc(&a0, bytes));
  CHECK(hipMalloc(&b0, bytes));
  CHECK(hipMemcpy(a0, h.data(), bytes, hipMemcpyHostToDevice));
  CHECK(hipSetDevice(1));
  CHECK(hipMalloc(&a1, bytes));

  // copies between the devices
  CHECK(hipMemcpyPeer(a1, 1, a0, 0, bytes));
  CHECK(hipMemcpy(back.data(), a1, bytes, hipMemcpyDeviceToHost));
  for (int i = 0; i < count; i++) EXPECT(back[i] == h[i], "peer copy 0->1 at %d: %d, want %d", i, back[i], h[i]);

  // a kernel on GPU 1 reads GPU 0's a0 and writes GPU 0's b0, in place
  CHECK(hipDeviceEnablePeerAccess(0, 0));
  hipLaunchKernelGGL(scale, dim3((count + 255) / 256), dim3(256), 0, 0, a0, b0, count, 3);
  CHECK(hipGetLastError());
  CHECK(hipDeviceSynchronize());
  CHECK(hipSetDevice(0));
  CHECK(hipMemcpy(back.data(), b0, bytes, hipMemcpyDeviceToHost));
  for (int i = 0; i < count; i++) EXPECT(back[i] == h[i] * 3, "GPU 1 writing GPU 0 at %d: %d, want %d", i, back[i], h[i] * 3);

  // and back: GPU 1's buffer to GPU 0's, through hipMemcpy with the devices' pointers
  CHECK(hipMemset(b0, 0, bytes));
  CHECK(hipMemcpy(b0, a1, bytes, hipMemcpyDeviceToDevice));
  CHECK(hipMemcpy(back.data(), b0, bytes, hipMemcpyDeviceToHost));
  for (int i = 0; i < count; i++) EXPECT(back[i] == h[i], "copy 1->0 at %d: %d, want %d", i, back[i], h[i]);

  CHECK(hipFree(a0));
  CHECK(hipFree(b0));
  CHECK(hipSetDevice(1));
  CHECK(hipFree(a1));
  printf("peer: %d devices, 4 MiB copied both ways, GPU 1 wrote GPU 0's memory\n", n);
  return 0;
}
