// hipMemset, hipMemsetD8/D16/D32 and hipMemsetAsync at odd sizes and offsets.
#include "common.h"
#include <vector>

int main() {
  const size_t n = (1 << 20) + 13;
  unsigned char* d;
  CHECK(hipMalloc(&d, n));
  std::vector<unsigned char> h(n);
  CHECK(hipMemset(d, 0xab, n));
  CHECK(hipMemcpy(h.data(), d, n, hipMemcpyDeviceToHost));
  for (size_t i = 0; i < n; i++) EXPECT(h[i] == 0xab, "byte %zu = %x", i, h[i]);
  CHECK(hipMemset(d + 5, 0x11, 1001));
  CHECK(hipMemcpy(h.data(), d, n, hipMemcpyDeviceToHost));
  for (size_t i = 0; i < 2000; i++) EXPECT(h[i] == (i >= 5 && i < 1006 ? 0x11 : 0xab), "byte %zu = %x", i, h[i]);
  CHECK(hipMemsetD32((hipDeviceptr_t)d, 0xdeadbeef, 1000));
  CHECK(hipMemsetD16((hipDeviceptr_t)(d + 4000), 0x1234, 333));
  CHECK(hipMemsetD8((hipDeviceptr_t)(d + 5000), 0x77, 99));
  hipStream_t s;
  CHECK(hipStreamCreate(&s));
  CHECK(hipMemsetAsync(d + 6000, 0x5a, 70001, s));
  CHECK(hipStreamSynchronize(s));
  CHECK(hipMemcpy(h.data(), d, n, hipMemcpyDeviceToHost));
  const unsigned w[4] = {0xef, 0xbe, 0xad, 0xde};
  for (int i = 0; i < 4000; i++) EXPECT(h[i] == w[i % 4], "d32 byte %d = %x", i, h[i]);
  for (int i = 4000; i < 4666; i++) EXPECT(h[i] == (i % 2 ? 0x12 : 0x34), "d16 byte %d = %x", i, h[i]);
  for (int i = 5000; i < 5099; i++) EXPECT(h[i] == 0x77, "d8 byte %d = %x", i, h[i]);
  for (int i = 5099; i < 6000; i++) EXPECT(h[i] == 0xab, "untouched byte %d = %x", i, h[i]);
  for (int i = 6000; i < 76001; i++) EXPECT(h[i] == 0x5a, "async byte %d = %x", i, h[i]);
  EXPECT(h[76001] == 0xab, "byte after async memset = %x", h[76001]);
  printf("memset: ok\n");
  return 0;
}
