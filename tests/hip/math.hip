// Arithmetic exactness on the device against the host: correctly rounded float and double
// division, sqrt and fma (including denormals, signed zeros, infinities and NaNs), conversions
// (truncating, round-to-nearest-even, 64-bit), integer bit operations (popc, clz, ffs, brev,
// mulhi, 64-bit multiply-high), 64-bit signed and unsigned division and remainder; the device
// library's transcendentals (exp, log, sin, cos, pow, also sin/cos of huge arguments that need
// Payne-Hanek reduction) within 4 ulp of a long double reference, with the same NaN/inf classes.
#include "common.h"
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

struct In {
  float fa, fb, fc;
  double da, db, dc;
  unsigned long long ua, ub;
  long long sa, sb;
};

struct Out {
  float fdiv, fsqrt, ffma, fexp, flog, fsin, fcos, fpow;
  double ddiv, dsqrt, dfma, dexp, dlog, dsin, dcos, dpow;
  int f2i, f2i_rn;
  long long d2ll;
  double ll2d;
  float ull2f;
  unsigned popc, popcll, clz, clzll, ffs, ffsll, brev, umulhi;
  int mulhi;
  unsigned long long umul64hi, brevll, udiv, urem;
  long long sdiv, srem;
};

__global__ void k(const In* in, Out* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  In x = in[i];
  Out o;
  o.fdiv = x.fa / x.fb;
  o.fsqrt = sqrtf(x.fa);
  o.ffma = fmaf(x.fa, x.fb, x.fc);
  o.fexp = expf(x.fc);
  o.flog = logf(x.fa);
  o.fsin = sinf(x.fa);
  o.fcos = cosf(x.fa);
  o.fpow = powf(fabsf(x.fb), x.fc);
  o.ddiv = x.da / x.db;
  o.dsqrt = sqrt(x.da);
  o.dfma = fma(x.da, x.db, x.dc);
  o.dexp = exp(x.dc);
  o.dlog = log(x.da);
  o.dsin = sin(x.da);
  o.dcos = cos(x.da);
  o.dpow = pow(fabs(x.db), x.dc);
  o.f2i = (fabsf(x.fa) < 2e9f) ? (int)x.fa : 0;
  o.f2i_rn = (fabsf(x.fa) < 2e9f) ? __float2int_rn(x.fa) : 0;
  o.d2ll = (fabs(x.da) < 9e18) ? (long long)x.da : 0;
  o.ll2d = (double)x.sa;
  o.ull2f = (float)x.ua;
  o.popc = __popc((unsigned)x.ua);
  o.popcll = __popcll(x.ua);
  o.clz = __clz((int)(unsigned)x.ub);
  o.clzll = __clzll((long long)x.ub);
  o.ffs = __ffs((int)(unsigned)x.ua);
  o.ffsll = __ffsll((long long)x.ua);
  o.brev = __brev((unsigned)x.ua);
  o.brevll = __brevll(x.ua);
  o.umulhi = __umulhi((unsigned)x.ua, (unsigned)x.ub);
  o.mulhi = __mulhi((int)x.sa, (int)x.sb);
  o.umul64hi = __umul64hi(x.ua, x.ub);
  o.udiv = x.ub ? x.ua / x.ub : 0;
  o.urem = x.ub ? x.ua % x.ub : 0;
  bool okdiv = x.sb != 0 && !(x.sa == INT64_MIN && x.sb == -1);
  o.sdiv = okdiv ? x.sa / x.sb : 0;
  o.srem = okdiv ? x.sa % x.sb : 0;
  out[i] = o;
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next() {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}
static float anyFloat() {
  uint32_t b = (uint32_t)next();
  float f;
  memcpy(&f, &b, 4);
  return f;
}
static double anyDouble() {
  uint64_t b = next();
  double d;
  memcpy(&d, &b, 8);
  return d;
}

static bool same(float a, float b) { return (std::isnan(a) && std::isnan(b)) || memcmp(&a, &b, 4) == 0; }
static bool same(double a, double b) { return (std::isnan(a) && std::isnan(b)) || memcmp(&a, &b, 8) == 0; }

// |got - want| in units of the last place of want (got's type), classes equal
template <typename T>
static bool close(T got, long double want, double ulps) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return std::isinf(got) && (got > 0) == (want > 0);
  T w = (T)want;
  if (std::isinf(w)) return std::isinf(got) || std::fabs((long double)got) >= (long double)std::numeric_limits<T>::max();
  if (std::isnan(got) || std::isinf(got)) return false;
  long double ulp = std::nextafter(std::fabs(w), (T)INFINITY) - std::fabs(w);
  if (ulp == 0 || std::fpclassify(w) == FP_SUBNORMAL || w == 0)
    ulp = std::numeric_limits<T>::denorm_min() * (long double)(1ull << 20);  // near zero: absolute
  return std::fabs((long double)got - want) <= ulps * ulp;
}

int main() {
  std::vector<In> in;
  const float fs[] = {0.f, -0.f, 1.f, -1.f, 3.f, 1e-40f, -1e-45f, FLT_MIN, FLT_MAX, INFINITY, -INFINITY, NAN, 0.5f, 1e30f, 7e-39f};
  const double ds[] = {0., -0., 1., -1., 3., 1e-310, -5e-324, DBL_MIN, DBL_MAX, INFINITY, -INFINITY, NAN, 0.5, 1e22, 1e300};
  const int ns = sizeof fs / sizeof fs[0];
  for (int a = 0; a < ns; a++)
    for (int b = 0; b < ns; b++) {
      In x = {fs[a], fs[b], fs[(a + b) % ns], ds[a], ds[b], ds[(a * 7 + b) % ns], next(), next() >> (b * 4), (long long)next(), (long long)next() >> (a * 4)};
      in.push_back(x);
    }
  In edge = {1.f, 3.f, 1.f, 1., 3., 1., ~0ull, 1ull, INT64_MIN, -1};
  in.push_back(edge);
  edge.sb = 7;
  edge.ua = 1ull << 63;
  edge.ub = 0;
  in.push_back(edge);
  while (in.size() < 4096) {
    In x;
    int mode = in.size() % 4;
    if (mode == 0) {  // arbitrary bit patterns
      x.fa = anyFloat(), x.fb = anyFloat(), x.fc = anyFloat();
      x.da = anyDouble(), x.db = anyDouble(), x.dc = anyDouble();
    } else {  // moderate ranges where the transcendentals are finite
      x.fa = (float)((int64_t)next() % 2000000) / 997.f;
      x.fb = (float)((int64_t)next() % 20000) / 313.f;
      x.fc = (float)((int64_t)next() % 8000) / 101.f;
      x.da = (double)((int64_t)next() % 2000000000) / 99991.;
      x.db = (double)((int64_t)next() % 200000) / 3137.;
      x.dc = (double)((int64_t)next() % 60000) / 101.;
      if (mode == 2) x.da = std::ldexp(x.da, (int)(next() % 900)), x.fa = std::ldexp(x.fa, (int)(next() % 100));
    }
    x.ua = next() >> (next() % 64);
    x.ub = next() >> (next() % 64);
    x.sa = (long long)next() >> (next() % 64);
    x.sb = (long long)next() >> (next() % 64);
    in.push_back(x);
  }
  const int n = in.size();
  In* din;
  Out* dout;
  CHECK(hipMalloc(&din, n * sizeof(In)));
  CHECK(hipMalloc(&dout, n * sizeof(Out)));
  CHECK(hipMemcpy(din, in.data(), n * sizeof(In), hipMemcpyHostToDevice));
  k<<<(n + 63) / 64, 64>>>(din, dout, n);
  CHECK(hipGetLastError());
  std::vector<Out> out(n);
  CHECK(hipMemcpy(out.data(), dout, n * sizeof(Out), hipMemcpyDeviceToHost));

  int bad = 0;
  std::map<std::string, int> perField;  // the first two differences of each result are printed
#define REPORT(field) (bad++, perField[#field]++ < 2)
#define EXACT(field, want)                                                                    \
  if (!same(o.field, (want)) && REPORT(field))                                                \
    fprintf(stderr, "input %d: " #field " = %a, want %a\n", i, (double)o.field, (double)(want));
#define EQ(field, want)                                                                       \
  if (o.field != (want) && REPORT(field))                                                     \
    fprintf(stderr, "input %d: " #field " = %#llx, want %#llx\n", i, (unsigned long long)o.field, \
            (unsigned long long)(want));
#define NEAR(field, want, u)                                                                  \
  if (!close(o.field, (want), u) && REPORT(field))                                            \
    fprintf(stderr, "input %d: " #field " = %a, want %La (arg %a)\n", i, (double)o.field, (long double)(want), (double)x.fa);
  for (int i = 0; i < n; i++) {
    const In& x = in[i];
    const Out& o = out[i];
    EXACT(fdiv, x.fa / x.fb);
    EXACT(fsqrt, std::sqrt(x.fa));
    EXACT(ffma, std::fma(x.fa, x.fb, x.fc));
    EXACT(ddiv, x.da / x.db);
    EXACT(dsqrt, std::sqrt(x.da));
    EXACT(dfma, std::fma(x.da, x.db, x.dc));
    EQ(f2i, (std::fabs(x.fa) < 2e9f) ? (int)x.fa : 0);
    EQ(f2i_rn, (std::fabs(x.fa) < 2e9f) ? (int)std::nearbyint(x.fa) : 0);
    EQ(d2ll, (std::fabs(x.da) < 9e18) ? (long long)x.da : 0);
    EXACT(ll2d, (double)x.sa);
    EXACT(ull2f, (float)x.ua);
    EQ(popc, (unsigned)__builtin_popcount((unsigned)x.ua));
    EQ(popcll, (unsigned)__builtin_popcountll(x.ua));
    EQ(clz, (unsigned)((unsigned)x.ub ? __builtin_clz((unsigned)x.ub) : 32));
    EQ(clzll, (unsigned)(x.ub ? __builtin_clzll(x.ub) : 64));
    EQ(ffs, (unsigned)__builtin_ffs((int)(unsigned)x.ua));
    EQ(ffsll, (unsigned)__builtin_ffsll((long long)x.ua));
    unsigned r32 = 0;
    for (int b = 0; b < 32; b++) r32 |= (((unsigned)x.ua >> b) & 1u) << (31 - b);
    EQ(brev, r32);
    unsigned long long r64 = 0;
    for (int b = 0; b < 64; b++) r64 |= ((x.ua >> b) & 1ull) << (63 - b);
    EQ(brevll, r64);
    EQ(umulhi, (unsigned)(((unsigned long long)(unsigned)x.ua * (unsigned)x.ub) >> 32));
    EQ(mulhi, (int)(((long long)(int)x.sa * (int)x.sb) >> 32));
    EQ(umul64hi, (unsigned long long)(((unsigned __int128)x.ua * x.ub) >> 64));
    EQ(udiv, x.ub ? x.ua / x.ub : 0);
    EQ(urem, x.ub ? x.ua % x.ub : 0);
    bool okdiv = x.sb != 0 && !(x.sa == INT64_MIN && x.sb == -1);
    EQ(sdiv, okdiv ? x.sa / x.sb : 0);
    EQ(srem, okdiv ? x.sa % x.sb : 0);
    NEAR(fexp, expl((long double)x.fc), 4);
    NEAR(flog, logl((long double)x.fa), 4);
    NEAR(fsin, sinl((long double)x.fa), 4);
    NEAR(fcos, cosl((long double)x.fa), 4);
    NEAR(fpow, powl(fabsl((long double)x.fb), (long double)x.fc), 4);
    NEAR(dexp, expl((long double)x.dc), 4);
    NEAR(dlog, logl((long double)x.da), 4);
    NEAR(dsin, sinl((long double)x.da), 4);
    NEAR(dcos, cosl((long double)x.da), 4);
    NEAR(dpow, powl(fabsl((long double)x.db), (long double)x.dc), 4);
  }
  for (auto& f : perField) fprintf(stderr, "%s: %d differ\n", f.first.c_str(), f.second);
  EXPECT(bad == 0, "%d results differ (the first two of each kind above)", bad);
  printf("math: ok (%d inputs)\n", n);
  return 0;
}
