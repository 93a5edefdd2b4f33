// Cross-lane operations of a 64-wide wave: __shfl, __shfl_up/down/xor, __ballot, __any, __all.
#include "common.h"
#include <vector>

__global__ void k(int* out) {
  int l = threadIdx.x;  // one wave of 64
  int v = l * 10;
  out[0 * 64 + l] = __shfl(v, (l + 5) % 64);
  out[1 * 64 + l] = __shfl_up(v, 3);
  out[2 * 64 + l] = __shfl_down(v, 7);
  out[3 * 64 + l] = __shfl_xor(v, 9);
  unsigned long long b = __ballot(l % 3 == 0);
  out[4 * 64 + l] = (int)(b >> (l % 2 ? 32 : 0));
  out[5 * 64 + l] = __any(l == 63) + 2 * __all(l < 64) + 4 * __all(l < 63);
  int s = v;
  for (int o = 32; o > 0; o >>= 1) s += __shfl_xor(s, o);
  out[6 * 64 + l] = s;
}

int main() {
  int* d;
  CHECK(hipMalloc(&d, 7 * 64 * 4));
  k<<<1, 64>>>(d);
  std::vector<int> h(7 * 64);
  CHECK(hipMemcpy(h.data(), d, h.size() * 4, hipMemcpyDeviceToHost));
  unsigned long long ballot = 0;
  for (int l = 0; l < 64; l += 3) ballot |= 1ull << l;
  for (int l = 0; l < 64; l++) {
    EXPECT(h[l] == (l + 5) % 64 * 10, "shfl lane %d = %d", l, h[l]);
    EXPECT(h[64 + l] == (l >= 3 ? l - 3 : l) * 10, "shfl_up lane %d = %d", l, h[64 + l]);
    EXPECT(h[128 + l] == (l + 7 < 64 ? l + 7 : l) * 10, "shfl_down lane %d = %d", l, h[128 + l]);
    EXPECT(h[192 + l] == (l ^ 9) * 10, "shfl_xor lane %d = %d", l, h[192 + l]);
    EXPECT(h[256 + l] == (int)(ballot >> (l % 2 ? 32 : 0)), "ballot lane %d = %x", l, h[256 + l]);
    EXPECT(h[320 + l] == 3, "any/all lane %d = %d", l, h[320 + l]);
    EXPECT(h[384 + l] == 20160, "butterfly sum lane %d = %d", l, h[384 + l]);
  }
  printf("warp: ok\n");
  return 0;
}
