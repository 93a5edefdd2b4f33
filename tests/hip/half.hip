// Half precision against an exact host reference: __hadd, __hsub, __hmul, __hdiv, __hfma, hsqrt,
// __float2half, the packed __hadd2/__hmul2/__hfma2/__h2div/h2sqrt, the _sat forms (HIP clamps with
// two comparisons: NaN and -0 pass through), comparisons
// and __half2float, over every class of input (random 16-bit patterns: NaNs, infinities, zeros,
// denormals). The reference rounds the exact result once to nearest-even: sums, products and
// quotients through double (53 >= 2*11 + 2 bits, so the double rounding is innocuous), fma exactly
// in 128-bit integers; NaN results compare by class.
#include "common.h"
#include <hip/hip_fp16.h>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

enum { ADD, SUB, MUL, DIV, FMA, SQRT, F2H, ADD2, MUL2, FMA2, DIV2, SQRT2, ADDSAT, FMASAT, NOPS };
static const char* names[NOPS] = {"hadd", "hsub", "hmul", "hdiv", "hfma", "hsqrt", "float2half", "hadd2",
                                  "hmul2", "hfma2", "h2div", "h2sqrt", "hadd_sat", "hfma_sat"};

struct Out {
  unsigned short r[NOPS];
  unsigned short r2hi[4];  // the high halves of the packed forms (operands swapped there)
  float f;                 // __half2float(a)
  int cmp;                 // lt | eq << 1 | ge << 2 | isnan << 3
};

__device__ __half H(unsigned short u) { return __ushort_as_half(u); }
__device__ unsigned short U(__half h) { return __half_as_ushort(h); }

__global__ void k(const unsigned short* a, const unsigned short* b, const unsigned short* c, const float* fl, Out* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __half x = H(a[i]), y = H(b[i]), z = H(c[i]);
  Out o;
  o.r[ADD] = U(__hadd(x, y));
  o.r[SUB] = U(__hsub(x, y));
  o.r[MUL] = U(__hmul(x, y));
  o.r[DIV] = U(__hdiv(x, y));
  o.r[FMA] = U(__hfma(x, y, z));
  o.r[SQRT] = U(hsqrt(x));
  o.r[F2H] = U(__float2half(fl[i]));
  __half2 p = __halves2half2(x, y), q = __halves2half2(y, z), s = __halves2half2(z, x);
  __half2 r;
  r = __hadd2(p, q);
  o.r[ADD2] = U(__low2half(r)), o.r2hi[0] = U(__high2half(r));
  r = __hmul2(p, q);
  o.r[MUL2] = U(__low2half(r)), o.r2hi[1] = U(__high2half(r));
  r = __hfma2(p, q, s);
  o.r[FMA2] = U(__low2half(r)), o.r2hi[2] = U(__high2half(r));
  r = __h2div(p, q);
  o.r[DIV2] = U(__low2half(r)), o.r2hi[3] = U(__high2half(r));
  o.r[SQRT2] = U(__low2half(h2sqrt(p)));
  o.r[ADDSAT] = U(__hadd_sat(x, y));
  o.r[FMASAT] = U(__hfma_sat(x, y, z));
  o.f = __half2float(x);
  o.cmp = (__hlt(x, y) ? 1 : 0) | (__heq(x, y) ? 2 : 0) | (__hge(x, y) ? 4 : 0) | (__hisnan(x) ? 8 : 0);
  out[i] = o;
}

// host: half bits <-> double, and round to nearest even
static double toD(uint16_t h) {
  int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
  double v;
  if (e == 31) v = m ? NAN : INFINITY;
  else if (e == 0) v = std::ldexp((double)m, -24);
  else v = std::ldexp((double)(m | 1024), e - 25);
  return s ? -v : v;
}
static uint16_t fromD(double x) {
  uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  if (std::isnan(x)) return 0x7e00;
  double a = std::fabs(x);
  if (a >= 65520.0) return sign | 0x7c00;
  if (a < std::ldexp(1.0, -14)) return sign | (uint16_t)std::nearbyint(a * std::ldexp(1.0, 24));
  int e;
  std::frexp(a, &e);  // a = f * 2^e, f in [0.5, 1): half exponent e - 1
  double q = std::nearbyint(std::ldexp(a, 11 - e));  // 1024 ... 2048
  int E = e - 1;
  if (q == 2048) q = 1024, E++;
  if (E + 15 >= 31) return sign | 0x7c00;
  return sign | (uint16_t)((E + 15) << 10 | ((int)q - 1024));
}
static bool isNaNH(uint16_t h) { return (h & 0x7c00) == 0x7c00 && (h & 1023); }
// exact fma of finite halves: values are integers times 2^-24
static uint16_t fmaH(uint16_t a, uint16_t b, uint16_t c) {
  double x = toD(a), y = toD(b), z = toD(c);
  if (std::isnan(x) || std::isnan(y) || std::isnan(z) || std::isinf(x) || std::isinf(y) || std::isinf(z))
    return fromD(std::fma(x, y, z));  // special cases: the double fma has the right class
  __int128 A = (__int128)std::ldexp(x, 24), B = (__int128)std::ldexp(y, 24), C = (__int128)std::ldexp(z, 24);
  __int128 P = A * B + (C << 24);  // scale 2^-48
  if (P == 0) return fromD(x * y + z);  // the sign of an exact zero as IEEE says (double gets it right)
  bool neg = P < 0;
  unsigned __int128 M = neg ? -P : P;
  // normalise to 2^11..2^12 - 1 significant bits with a sticky bit, then round
  int shift = 0;
  while ((M >> shift) >= ((unsigned __int128)1 << 40)) shift++;  // keep 40 bits: exact in double
  unsigned __int128 kept = M >> shift;
  bool sticky = (M & ((((unsigned __int128)1) << shift) - 1)) != 0;
  double v = std::ldexp((double)(uint64_t)kept + (sticky ? 0.5 : 0), shift - 48);
  // 40 kept bits leave the sticky half far below the half's rounding position: one rounding
  return fromD(neg ? -v : v);
}
// HIP 5.2's __clamp_01 is two comparisons: NaN and -0 pass through, below 0 is +0, above 1 is 1
static uint16_t satH(uint16_t h) {
  if (isNaNH(h)) return h;
  double v = toD(h);
  if (v < 0) return 0;
  if (v > 1) return 0x3c00;
  return h;
}

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static uint64_t next() {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

int main() {
  const int n = 8192;
  std::vector<uint16_t> a(n), b(n), c(n);
  std::vector<float> fl(n);
  for (int i = 0; i < n; i++) {
    uint64_t r = next();
    a[i] = r, b[i] = r >> 16, c[i] = r >> 32;
    if (i % 4 == 1) b[i] = (a[i] & 0x8000) | (((r >> 48) % 8 + (a[i] >> 10 & 31)) % 31) << 10 | (b[i] & 1023);  // near exponents
    uint32_t fb = (uint32_t)(next());
    if (i % 2) fb = (fb & 0x807fffff) | ((uint32_t)(100 + next() % 50) << 23);  // around the half range
    memcpy(&fl[i], &fb, 4);
  }
  unsigned short *da, *db, *dc;
  float* df;
  Out* dout;
  CHECK(hipMalloc(&da, n * 2));
  CHECK(hipMalloc(&db, n * 2));
  CHECK(hipMalloc(&dc, n * 2));
  CHECK(hipMalloc(&df, n * 4));
  CHECK(hipMalloc(&dout, n * sizeof(Out)));
  CHECK(hipMemcpy(da, a.data(), n * 2, hipMemcpyHostToDevice));
  CHECK(hipMemcpy(db, b.data(), n * 2, hipMemcpyHostToDevice));
  CHECK(hipMemcpy(dc, c.data(), n * 2, hipMemcpyHostToDevice));
  CHECK(hipMemcpy(df, fl.data(), n * 4, hipMemcpyHostToDevice));
  k<<<n / 64, 64>>>(da, db, dc, df, dout, n);
  CHECK(hipGetLastError());
  std::vector<Out> out(n);
  CHECK(hipMemcpy(out.data(), dout, n * sizeof(Out), hipMemcpyDeviceToHost));

  int bad = 0;
  std::map<std::string, int> per;
  auto check = [&](const char* what, int i, uint16_t got, uint16_t want) {
    if (got == want || (isNaNH(got) && isNaNH(want))) return;
    bad++;
    if (per[what]++ < 3)
      fprintf(stderr, "%s(%#06x, %#06x, %#06x): %#06x, want %#06x\n", what, a[i], b[i], c[i], got, want);
  };
  for (int i = 0; i < n; i++) {
    const Out& o = out[i];
    double x = toD(a[i]), y = toD(b[i]), z = toD(c[i]);
    check("hadd", i, o.r[ADD], fromD(x + y));
    check("hsub", i, o.r[SUB], fromD(x - y));
    check("hmul", i, o.r[MUL], fromD(x * y));
    check("hdiv", i, o.r[DIV], fromD(x / y));
    check("hfma", i, o.r[FMA], fmaH(a[i], b[i], c[i]));
    check("hsqrt", i, o.r[SQRT], fromD(std::sqrt(x)));
    check("float2half", i, o.r[F2H], fromD((double)fl[i]));
    check("hadd2 lo", i, o.r[ADD2], fromD(x + y));
    check("hadd2 hi", i, o.r2hi[0], fromD(y + z));
    check("hmul2 lo", i, o.r[MUL2], fromD(x * y));
    check("hmul2 hi", i, o.r2hi[1], fromD(y * z));
    check("hfma2 lo", i, o.r[FMA2], fmaH(a[i], b[i], c[i]));
    check("hfma2 hi", i, o.r2hi[2], fmaH(b[i], c[i], a[i]));
    check("h2div lo", i, o.r[DIV2], fromD(x / y));
    check("h2div hi", i, o.r2hi[3], fromD(y / z));
    check("h2sqrt", i, o.r[SQRT2], fromD(std::sqrt(x)));
    check("hadd_sat", i, o.r[ADDSAT], satH(fromD(x + y)));
    check("hfma_sat", i, o.r[FMASAT], satH(fmaH(a[i], b[i], c[i])));
    float fx = (float)x;
    if (!(memcmp(&o.f, &fx, 4) == 0 || (std::isnan(o.f) && std::isnan(fx)))) {
      bad++;
      if (per["half2float"]++ < 3) fprintf(stderr, "half2float(%#06x): %a, want %a\n", a[i], o.f, fx);
    }
    int cmp = (x < y ? 1 : 0) | (x == y ? 2 : 0) | (x >= y ? 4 : 0) | (std::isnan(x) ? 8 : 0);
    if (o.cmp != cmp) {
      bad++;
      if (per["compare"]++ < 3) fprintf(stderr, "compare(%#06x, %#06x): %d, want %d\n", a[i], b[i], o.cmp, cmp);
    }
  }
  for (auto& p : per) fprintf(stderr, "%s: %d of %d differ\n", p.first.c_str(), p.second, n);
  EXPECT(bad == 0, "%d results differ", bad);
  printf("half: ok (%d inputs)\n", n);
  return 0;
}
