// hipHostRegister of malloc'd memory (a userptr BO): hipHostGetDevicePointer, a kernel reading and
// writing it, the host seeing the results and the kernel seeing the host's later stores; both a
// page-aligned buffer and a plain malloc (unaligned start and end); hipHostUnregister; hipMemcpy
// between registered memory and the device.
#include "common.h"
#include <cstdint>
#include <cstring>
#include <vector>

__global__ void step(const int* in, int* out, int n, int k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * 3 + k;
}

static void run(int* h, int n, const char* what) {
  int* d = nullptr;
  CHECK(hipHostRegister(h, (size_t)n * 2 * sizeof(int), hipHostRegisterMapped));
  CHECK(hipHostGetDevicePointer((void**)&d, h, 0));
  EXPECT(d != nullptr, "%s: no device pointer", what);
  for (int round = 1; round <= 3; round++) {
    for (int i = 0; i < n; i++) h[i] = i * round - 5;  // the host's stores, seen by the next kernel
    step<<<(n + 255) / 256, 256>>>(d, d + n, n, round);
    CHECK(hipGetLastError());
    CHECK(hipDeviceSynchronize());
    for (int i = 0; i < n; i++)
      EXPECT(h[n + i] == (i * round - 5) * 3 + round, "%s: round %d out[%d] = %d", what, round, i, h[n + i]);
  }
  // hipMemcpy from registered memory to the device and back into it
  int* dev;
  CHECK(hipMalloc(&dev, n * sizeof(int)));
  CHECK(hipMemcpy(dev, h + n, n * sizeof(int), hipMemcpyHostToDevice));
  step<<<(n + 255) / 256, 256>>>(dev, dev, n, 1);
  CHECK(hipMemcpy(h, dev, n * sizeof(int), hipMemcpyDeviceToHost));
  for (int i = 0; i < n; i++)
    EXPECT(h[i] == ((i * 3 - 5) * 3 + 3) * 3 + 1, "%s: copied back a[%d] = %d", what, i, h[i]);
  CHECK(hipFree(dev));
  CHECK(hipHostUnregister(h));
  EXPECT(hipHostGetDevicePointer((void**)&d, h, 0) != hipSuccess, "%s: device pointer after unregister", what);
  (void)hipGetLastError();
}

int main() {
  const int n = 100000;
  void* aligned = nullptr;
  EXPECT(posix_memalign(&aligned, 4096, n * 2 * sizeof(int)) == 0, "posix_memalign");
  run((int*)aligned, n, "aligned");
  free(aligned);
  // plain malloc: neither end on a page boundary
  char* raw = (char*)malloc(n * 2 * sizeof(int) + 64);
  int* h = (int*)(raw + 20);
  EXPECT(((uintptr_t)h & 4095) != 0, "unaligned start");
  memset(raw, 0x5a, 20);
  run(h, n, "malloc");
  for (int i = 0; i < 20; i++) EXPECT(raw[i] == 0x5a, "byte %d before the registered range changed", i);
  free(raw);
  printf("host_register: ok\n");
  return 0;
}
