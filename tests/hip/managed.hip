// hipMallocManaged: memory the host and the kernel both use through the same pointer.
#include "common.h"

__global__ void inc(int* a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = a[i] * 2 + 1;
}

int main() {
  const int n = 100000;
  int* a;
  CHECK(hipMallocManaged(&a, n * 4));
  for (int i = 0; i < n; i++) a[i] = i;
  inc<<<(n + 255) / 256, 256>>>(a, n);
  CHECK(hipDeviceSynchronize());
  for (int i = 0; i < n; i++) EXPECT(a[i] == 2 * i + 1, "a[%d] = %d", i, a[i]);
  inc<<<(n + 255) / 256, 256>>>(a, n);
  CHECK(hipDeviceSynchronize());
  for (int i = 0; i < n; i++) EXPECT(a[i] == 4 * i + 3, "a[%d] = %d after the second kernel", i, a[i]);
  CHECK(hipFree(a));
  printf("managed: ok\n");
  return 0;
}
