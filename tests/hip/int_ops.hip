// Integer code compiled twice from one __host__ __device__ function: 8- and 16-bit element
// arithmetic on char4/short2/uchar4 (SDWA and packed 16-bit instructions on gfx90a), byte
// permutes and funnel shifts, bit-field extract/insert, rotates, byte swaps, 24-bit multiplies,
// min/max/abs/select chains, 64-bit shifts and mixes, unsigned and signed division by constants
// and by variables; the device's results must equal the host's for 65536 inputs, bit for bit.
// (No signed overflow and no over-wide shift: the same C is defined on both.)
#include "common.h"
#include <cstdint>
#include <vector>

struct V {
  uint32_t a, b, c;
};

__host__ __device__ static inline uint32_t rotl(uint32_t x, int r) { return (x << (r & 31)) | (x >> ((32 - r) & 31)); }

__host__ __device__ static uint64_t mix(V v) {
  uint32_t a = v.a, b = v.b, c = v.c;
  uint64_t h = 0x9e3779b97f4a7c15ull;
  // bytes and halves
  int8_t ca[4], cb[4];
  uint8_t ua[4], ub[4];
  int16_t sa[2], sb[2];
  uint16_t wa[2], wb[2];
  for (int i = 0; i < 4; i++) ca[i] = (int8_t)(a >> (8 * i)), cb[i] = (int8_t)(b >> (8 * i));
  for (int i = 0; i < 4; i++) ua[i] = (uint8_t)(a >> (8 * i)), ub[i] = (uint8_t)(c >> (8 * i));
  for (int i = 0; i < 2; i++) sa[i] = (int16_t)(b >> (16 * i)), sb[i] = (int16_t)(c >> (16 * i));
  for (int i = 0; i < 2; i++) wa[i] = (uint16_t)(a >> (16 * i)), wb[i] = (uint16_t)(b >> (16 * i));
  uint32_t r8 = 0, r8u = 0, r16 = 0, r16u = 0;
  for (int i = 0; i < 4; i++) {
    int x = ca[i] * cb[i] + (ca[i] >> 2) - (cb[i] & 0x3c);
    r8 |= (uint32_t)(uint8_t)(int8_t)x << (8 * i);
    int m = ua[i] > ub[i] ? ua[i] - ub[i] : ub[i] - ua[i];  // absolute difference
    r8u |= (uint32_t)(uint8_t)(m + (ua[i] >> 3) + (uint8_t)(ua[i] * 7)) << (8 * i);
  }
  for (int i = 0; i < 2; i++) {
    int x = sa[i] * 3 - (sb[i] >> 1);
    int y = sa[i] > sb[i] ? sa[i] : sb[i];
    r16 |= (uint32_t)(uint16_t)(int16_t)(x ^ y) << (16 * i);
    uint32_t u = (uint32_t)wa[i] * wb[i];
    r16u |= (uint32_t)(uint16_t)((u >> 3) + wa[i] - wb[i]) << (16 * i);
  }
  h ^= r8 + ((uint64_t)r8u << 32);
  h = h * 0x100000001b3ull ^ (r16 + ((uint64_t)r16u << 29));
  // byte permute (as __byte_perm's selector bytes 0..7), funnel shifts, bit fields
  uint32_t sel = c & 0x7777;
  uint64_t xy = ((uint64_t)b << 32) | a;
  uint32_t perm = 0;
  for (int i = 0; i < 4; i++) perm |= (uint32_t)(uint8_t)(xy >> (8 * ((sel >> (4 * i)) & 7))) << (8 * i);
  int s = c % 32;
  uint32_t fl = s ? (b << s) | (a >> (32 - s)) : b;  // funnel left of (b:a)
  uint32_t fr = (uint32_t)(xy >> s);                 // funnel right
  int off = a % 32, wid = b % 32;
  uint32_t ext = wid == 0 ? 0 : (c << (32 - off - wid > 0 ? 32 - off - wid : 0)) >> (32 - wid);
  if (off + wid > 32) ext = (c >> off) & ((1u << wid) - 1);
  uint32_t msk = wid == 0 ? 0 : ((wid == 32 ? 0 : (1u << wid)) - 1) << off;
  uint32_t ins = (a & ~msk) | ((c << off) & msk);
  h = h * 0x100000001b3ull ^ perm ^ ((uint64_t)fl << 32);
  h = h * 0x100000001b3ull ^ fr ^ ((uint64_t)ext << 21) ^ ((uint64_t)ins << 32);
  // rotates, byte swap, 24-bit multiplies, leading/trailing zeros of nonzero values
  uint32_t rot = rotl(a, (int)(c & 31)) ^ rotl(b, 32 - (int)(a & 31));
  uint32_t bs = ((a & 0xff) << 24) | ((a & 0xff00) << 8) | ((a >> 8) & 0xff00) | (a >> 24);
  uint32_t m24 = (uint32_t)((int64_t)((int32_t)(a << 8) >> 8) * ((int32_t)(b << 8) >> 8));  // 24-bit signed, low 32 bits
  uint32_t mu24 = (a & 0xffffff) * (b & 0xffffff);
  int lz = __builtin_clz(a | 1), tz = __builtin_ctz(b | 0x80000000u), pc = __builtin_popcount(c);
  h = h * 0x100000001b3ull ^ rot ^ ((uint64_t)bs << 32);
  h = h * 0x100000001b3ull ^ m24 ^ ((uint64_t)mu24 << 32) ^ ((uint64_t)(lz | tz << 8 | pc << 16) << 7);
  // selects, min/max/abs chains on signed 32-bit
  int32_t sa32 = (int32_t)a, sb32 = (int32_t)b, sc32 = (int32_t)c;
  int32_t mn = sa32 < sb32 ? sa32 : sb32, mx = sa32 > sb32 ? sa32 : sb32;
  int32_t med = sc32 < mn ? mn : (sc32 > mx ? mx : sc32);
  uint32_t ab = sa32 < 0 ? 0u - (uint32_t)sa32 : (uint32_t)sa32;
  h = h * 0x100000001b3ull ^ (uint32_t)med ^ ((uint64_t)ab << 32) ^ (uint64_t)(uint32_t)(mx >> 7);
  // 64-bit shifts, multiplies, divisions
  uint64_t w = xy ^ ((uint64_t)c << (c % 64 > 31 ? 31 : c % 64));
  uint64_t q = w / 1000003u + w % 97u + (w >> (a % 64)) + (w << (b % 64));
  int64_t sw = (int64_t)w;
  int64_t sq = sw / -7 + sw % 13 + (sw >> (c % 64));
  uint32_t dv = (c | 1) == 0 ? 1 : (c | 1);
  uint32_t ud = a / dv + b % dv + (a / 10) + (b % 1000);
  int32_t sdv = (sc32 >> 3) == 0 ? 3 : (sc32 >> 3);
  int32_t sd = (sa32 == INT32_MIN ? 0 : sa32) / (sdv == -1 ? 3 : sdv) + sb32 % 77;
  h = h * 0x100000001b3ull ^ q ^ (uint64_t)sq;
  h = h * 0x100000001b3ull ^ ud ^ ((uint64_t)(uint32_t)sd << 32);
  return h;
}

__global__ void k(const V* in, uint64_t* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = mix(in[i]);
}

int main() {
  const int n = 65536;
  std::vector<V> in(n);
  uint64_t r = 0x123456789abcdefull;
  auto next = [&]() {
    r ^= r << 13;
    r ^= r >> 7;
    r ^= r << 17;
    return (uint32_t)(r >> 11);
  };
  for (int i = 0; i < n; i++) {
    in[i] = {next(), next(), next()};
    if (i % 16 == 0) in[i].a = 0x80000000u;  // edges
    if (i % 16 == 1) in[i].b = 0xffffffffu;
    if (i % 16 == 2) in[i].c = 0;
    if (i % 16 == 3) in[i].a = in[i].b;
  }
  V* din;
  uint64_t* dout;
  CHECK(hipMalloc(&din, n * sizeof(V)));
  CHECK(hipMalloc(&dout, n * 8));
  CHECK(hipMemcpy(din, in.data(), n * sizeof(V), hipMemcpyHostToDevice));
  k<<<n / 256, 256>>>(din, dout, n);
  CHECK(hipGetLastError());
  std::vector<uint64_t> out(n);
  CHECK(hipMemcpy(out.data(), dout, n * 8, hipMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < n; i++) {
    uint64_t want = mix(in[i]);
    if (out[i] != want && bad++ < 5)
      fprintf(stderr, "input %d (%#x, %#x, %#x): %#llx, want %#llx\n", i, in[i].a, in[i].b, in[i].c,
              (unsigned long long)out[i], (unsigned long long)want);
  }
  EXPECT(bad == 0, "%d of %d results differ", bad, n);
  printf("int_ops: ok\n");
  return 0;
}
