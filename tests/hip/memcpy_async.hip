// hipMemcpyAsync from and to pinned host memory (hipHostMalloc) on a stream, with a kernel between.
#include "common.h"

__global__ void scale(float* a, int n, float f) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] *= f;
}

int main() {
  const int n = 1 << 20;
  float *h_in, *h_out, *d;
  CHECK(hipHostMalloc(&h_in, n * 4));
  CHECK(hipHostMalloc(&h_out, n * 4));
  CHECK(hipMalloc(&d, n * 4));
  for (int i = 0; i < n; i++) { h_in[i] = i * 0.25f; h_out[i] = -1; }
  hipStream_t s;
  CHECK(hipStreamCreate(&s));
  CHECK(hipMemcpyAsync(d, h_in, n * 4, hipMemcpyHostToDevice, s));
  scale<<<n / 256, 256, 0, s>>>(d, n, 4.0f);
  CHECK(hipMemcpyAsync(h_out, d, n * 4, hipMemcpyDeviceToHost, s));
  CHECK(hipStreamSynchronize(s));
  for (int i = 0; i < n; i++) EXPECT(h_out[i] == i * 1.0f, "h_out[%d] = %f", i, h_out[i]);
  // Partial copies at odd offsets.
  CHECK(hipMemcpyAsync(h_out + 3, d + 1000, 4 * 777, hipMemcpyDeviceToHost, s));
  CHECK(hipStreamSynchronize(s));
  for (int i = 0; i < 777; i++) EXPECT(h_out[3 + i] == (1000 + i) * 1.0f, "partial %d = %f", i, h_out[3 + i]);
  CHECK(hipHostFree(h_in));
  CHECK(hipHostFree(h_out));
  printf("memcpy_async: ok\n");
  return 0;
}
