// Vector add over 1 Mi floats: hipMalloc, hipMemcpy both ways, one kernel.
#include "common.h"
#include <vector>

__global__ void add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

int main() {
  const int n = 1 << 20;
  std::vector<float> a(n), b(n), c(n);
  for (int i = 0; i < n; i++) { a[i] = i; b[i] = 2 * i + 1; }
  float *da, *db, *dc;
  CHECK(hipMalloc(&da, n * 4)); CHECK(hipMalloc(&db, n * 4)); CHECK(hipMalloc(&dc, n * 4));
  CHECK(hipMemcpy(da, a.data(), n * 4, hipMemcpyHostToDevice));
  CHECK(hipMemcpy(db, b.data(), n * 4, hipMemcpyHostToDevice));
  add<<<(n + 255) / 256, 256>>>(da, db, dc, n);
  CHECK(hipGetLastError());
  CHECK(hipMemcpy(c.data(), dc, n * 4, hipMemcpyDeviceToHost));
  for (int i = 0; i < n; i++) EXPECT(c[i] == 3.0f * i + 1, "c[%d] = %f", i, c[i]);
  printf("vector_add: ok\n");
  return 0;
}
