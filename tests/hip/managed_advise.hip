// Managed memory with advice: hipMemAdvise (read-mostly, preferred location on the GPU and on the
// CPU, accessed-by, and their unsets) read back with hipMemRangeGetAttribute (the SVM range's
// attributes in the driver); hipMemPrefetchAsync to the GPU and back to the CPU with the last
// prefetch location reported; kernels and the host using the data between the steps; exact.
#include "common.h"

__global__ void inc(int* a, int n, int k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = a[i] * 2 + k;
}

static int attr(hipMemRangeAttribute at, const void* p, size_t n) {
  int v = -100;
  CHECK(hipMemRangeGetAttribute(&v, sizeof v, at, p, n));
  return v;
}

int main() {
  const int n = 1 << 20;  // 4 MiB
  const size_t bytes = n * sizeof(int);
  int* m;
  CHECK(hipMallocManaged(&m, bytes));
  for (int i = 0; i < n; i++) m[i] = i;
  hipStream_t s;
  CHECK(hipStreamCreate(&s));

  CHECK(hipMemAdvise(m, bytes, hipMemAdviseSetReadMostly, 0));
  EXPECT(attr(hipMemRangeAttributeReadMostly, m, bytes) == 1, "read-mostly %d after SetReadMostly",
         attr(hipMemRangeAttributeReadMostly, m, bytes));
  CHECK(hipMemAdvise(m, bytes, hipMemAdviseUnsetReadMostly, 0));
  EXPECT(attr(hipMemRangeAttributeReadMostly, m, bytes) == 0, "read-mostly %d after UnsetReadMostly",
         attr(hipMemRangeAttributeReadMostly, m, bytes));

  CHECK(hipMemAdvise(m, bytes, hipMemAdviseSetPreferredLocation, 0));
  EXPECT(attr(hipMemRangeAttributePreferredLocation, m, bytes) == 0, "preferred location %d, want GPU 0",
         attr(hipMemRangeAttributePreferredLocation, m, bytes));
  // half of the range to the CPU: the whole range then has no single preferred location
  CHECK(hipMemAdvise(m, bytes / 2, hipMemAdviseSetPreferredLocation, hipCpuDeviceId));
  EXPECT(attr(hipMemRangeAttributePreferredLocation, m, bytes / 2) == hipCpuDeviceId, "first half: %d, want the CPU",
         attr(hipMemRangeAttributePreferredLocation, m, bytes / 2));
  EXPECT(attr(hipMemRangeAttributePreferredLocation, (char*)m + bytes / 2, bytes / 2) == 0, "second half: %d, want GPU 0",
         attr(hipMemRangeAttributePreferredLocation, (char*)m + bytes / 2, bytes / 2));
  EXPECT(attr(hipMemRangeAttributePreferredLocation, m, bytes) == hipInvalidDeviceId, "whole range: %d, want none (%d)",
         attr(hipMemRangeAttributePreferredLocation, m, bytes), hipInvalidDeviceId);
  CHECK(hipMemAdvise(m, bytes, hipMemAdviseUnsetPreferredLocation, 0));
  EXPECT(attr(hipMemRangeAttributePreferredLocation, m, bytes) == hipInvalidDeviceId, "after unset: %d",
         attr(hipMemRangeAttributePreferredLocation, m, bytes));

  CHECK(hipMemAdvise(m, bytes, hipMemAdviseSetAccessedBy, 0));
  int acc[4] = {-100, -100, -100, -100};
  CHECK(hipMemRangeGetAttribute(acc, sizeof acc, hipMemRangeAttributeAccessedBy, m, bytes));
  EXPECT(acc[0] == 0 && acc[1] == hipInvalidDeviceId, "accessed-by %d %d, want GPU 0 only", acc[0], acc[1]);
  CHECK(hipMemAdvise(m, bytes, hipMemAdviseUnsetAccessedBy, 0));
  CHECK(hipMemRangeGetAttribute(acc, sizeof acc, hipMemRangeAttributeAccessedBy, m, bytes));
  EXPECT(acc[0] == hipInvalidDeviceId, "accessed-by %d after unset", acc[0]);

  CHECK(hipMemPrefetchAsync(m, bytes, 0, s));
  inc<<<n / 256, 256, 0, s>>>(m, n, 3);
  CHECK(hipStreamSynchronize(s));
  EXPECT(attr(hipMemRangeAttributeLastPrefetchLocation, m, bytes) == 0, "last prefetch %d, want GPU 0",
         attr(hipMemRangeAttributeLastPrefetchLocation, m, bytes));
  CHECK(hipMemPrefetchAsync(m, bytes, hipCpuDeviceId, s));
  CHECK(hipStreamSynchronize(s));
  EXPECT(attr(hipMemRangeAttributeLastPrefetchLocation, m, bytes) == hipCpuDeviceId, "last prefetch %d, want the CPU",
         attr(hipMemRangeAttributeLastPrefetchLocation, m, bytes));
  for (int i = 0; i < n; i++) EXPECT(m[i] == i * 2 + 3, "m[%d] = %d after the prefetches", i, m[i]);
  for (int i = 0; i < n; i += 2) m[i] = -i;  // host writes, then the GPU again
  inc<<<n / 256, 256, 0, s>>>(m, n, 1);
  CHECK(hipStreamSynchronize(s));
  for (int i = 0; i < n; i++) {
    int want = (i % 2 ? i * 2 + 3 : -i) * 2 + 1;
    EXPECT(m[i] == want, "m[%d] = %d, want %d", i, m[i], want);
  }
  CHECK(hipStreamDestroy(s));
  CHECK(hipFree(m));
  printf("managed_advise: ok\n");
  return 0;
}
