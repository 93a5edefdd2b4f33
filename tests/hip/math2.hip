// More of the device math library against the host, per float and double: exact for the
// operations IEEE defines exactly (floor, ceil, trunc, rint, nearbyint, llrint, fmod, remainder,
// frexp, ldexp, scalbn, modf, ilogb, logb, nextafter, copysign, fdim, sqrt, the classes); round,
// fmin and fmax by value (the sign of a zero free); within 4 ulp for tan, asin, acos, atan, atan2,
// sinh, cosh, tanh, asinh, acosh, atanh, cbrt, exp2, exp10, expm1, log2, log10, log1p, hypot, pow,
// rsqrt, erf, erfc; tgamma within 64 ulp (float, above -25) or 16 (double), lgamma 4 ulp of 1 near
// its zeros; NaN and infinity classes the same.
#include "common.h"
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <vector>

#define EXACT1(X) X(floor) X(ceil) X(trunc) X(rint) X(nearbyint) X(logb) X(sqrt)
#define EXACT2(X) X(fmod) X(remainder) X(nextafter) X(copysign) X(fdim)
// equal values, the sign of a zero result free: LLVM 15 rounds as trunc(x) + (0 or copysign(1, x)),
// so round(-0.4) is +0 on a GPU too; IEEE's minNum/maxNum may return either zero
#define VALUE1(X) X(round)
#define VALUE2(X) X(fmin) X(fmax)
#define NEAR1(X)                                                                                       \
  X(tan) X(asin) X(acos) X(atan) X(sinh) X(cosh) X(tanh) X(cbrt) X(exp2) X(exp10) X(expm1) X(log2) X(log10) \
  X(log1p) X(erf) X(erfc) X(tgamma) X(lgamma) X(asinh) X(acosh) X(atanh)
#define NEAR2(X) X(atan2) X(hypot) X(pow)

template <typename T>
struct R {
#define F(f) T f;
  EXACT1(F) EXACT2(F) VALUE1(F) VALUE2(F) NEAR1(F) NEAR2(F)
#undef F
  T rsqrt, frexpm, ldexp, modfi, modff, scalbn;
  int frexpe, ilogb, cls;
  long long lrint;
};

template <typename T>
__device__ void eval(T a, T b, int e, R<T>& r) {
#define F1(f) r.f = f(a);
#define F2(f) r.f = f(a, b);
  EXACT1(F1) VALUE1(F1) NEAR1(F1) EXACT2(F2) VALUE2(F2) NEAR2(F2)
#undef F1
#undef F2
  r.rsqrt = rsqrt(a);
  int ex;
  r.frexpm = frexp(a, &ex);
  r.frexpe = ex;
  r.ldexp = ldexp(a, e);
  r.scalbn = scalbn(a, e);
  T ip;
  r.modff = modf(a, &ip);
  r.modfi = ip;
  r.ilogb = (a == 0 || isnan(a) || isinf(a)) ? 0 : ilogb(a);
  r.cls = (isnan(a) ? 1 : 0) | (isinf(a) ? 2 : 0) | (isfinite(a) ? 4 : 0) | (signbit(a) ? 8 : 0);
  r.lrint = (fabs(a) < (T)1e18) ? llrint(a) : 0;
}

__global__ void kf(const float* a, const float* b, const int* e, R<float>* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) eval<float>(a[i], b[i], e[i], out[i]);
}
__global__ void kd(const double* a, const double* b, const int* e, R<double>* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) eval<double>(a[i], b[i], e[i], out[i]);
}

template <typename T>
static bool same(T a, T b) {
  return (std::isnan(a) && std::isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}

template <typename T>
static bool sameValue(T a, T b) {
  return (std::isnan(a) && std::isnan(b)) || a == b;
}

// within ulps units in the last place of max(|want|, floor) (floor > 0: an absolute bound near zeros)
template <typename T>
static bool close(T got, long double want, double ulps, long double floor = 0) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return std::isinf(got) && (got > 0) == (want > 0);
  T w = (T)want;
  if (std::isinf(w)) return std::isinf(got) || std::fabs((long double)got) >= (long double)std::numeric_limits<T>::max();
  if (std::isnan(got) || std::isinf(got)) return false;
  long double ulp = std::nextafter(std::fabs(w), std::numeric_limits<T>::infinity()) - std::fabs(w);
  long double tiny = std::numeric_limits<T>::min() * (long double)std::numeric_limits<T>::epsilon() * 16;
  if (ulp < tiny) ulp = tiny;  // subnormal results: absolute
  if (floor > 0 && std::fabs(want) < floor) ulp = std::nextafter((T)floor, std::numeric_limits<T>::infinity()) - (T)floor;
  return std::fabs((long double)got - want) <= ulps * ulp;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next() {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

template <typename T>
static long double ref(const char* f, long double a, long double b) {
  std::string s = f;
  if (s == "tan") return tanl(a);
  if (s == "asin") return asinl(a);
  if (s == "acos") return acosl(a);
  if (s == "atan") return atanl(a);
  if (s == "sinh") return sinhl(a);
  if (s == "cosh") return coshl(a);
  if (s == "tanh") return tanhl(a);
  if (s == "cbrt") return cbrtl(a);
  if (s == "exp2") return exp2l(a);
  if (s == "exp10") return powl(10.0L, a);
  if (s == "expm1") return expm1l(a);
  if (s == "log2") return log2l(a);
  if (s == "log10") return log10l(a);
  if (s == "log1p") return log1pl(a);
  if (s == "erf") return erfl(a);
  if (s == "erfc") return erfcl(a);
  if (s == "tgamma") return tgammal(a);
  if (s == "lgamma") return lgammal(a);
  if (s == "asinh") return asinhl(a);
  if (s == "acosh") return acoshl(a);
  if (s == "atanh") return atanhl(a);
  if (s == "atan2") return atan2l(a, b);
  if (s == "hypot") return hypotl(a, b);
  if (s == "pow") return powl(a, b);
  abort();
}

// 4 ulp, except the gamma functions: the device library's tgamma (Stirling with powr and exp, and
// three approximate reciprocals, llvm.amdgcn.rcp) is off by tens of ulp at negative float
// arguments and 5 at double ones; lgamma near its zeros is accurate in absolute terms only
template <typename T>
static double tol(const char* f) { return std::string(f) == "tgamma" ? (sizeof(T) == 4 ? 64 : 16) : 4; }
static long double floorOf(const char* f) { return std::string(f) == "lgamma" ? 1.0L : 0; }
// false for float tgamma below -25, where the device library's single-precision reflection loses
// hundreds of ulp and returns 0 from -32 (results near 1e-34)
template <typename T>
static bool checked(const char* f, T x) {
  return !(sizeof(T) == 4 && std::string(f) == "tgamma" && x < -25);
}

template <typename T>
static int run(const char* name) {
  std::vector<T> a, b;
  std::vector<int> e;
  const T sp[] = {0, -0.0, 1, -1, 0.5, -2.5, 3.5, std::numeric_limits<T>::denorm_min(), -std::numeric_limits<T>::min() / 3,
                  std::numeric_limits<T>::max(), std::numeric_limits<T>::infinity(), -std::numeric_limits<T>::infinity(),
                  std::numeric_limits<T>::quiet_NaN(), (T)1e-5, (T)123456.75, (T)-0.999};
  const int ns = sizeof sp / sizeof sp[0];
  for (int i = 0; i < ns; i++)
    for (int j = 0; j < ns; j++) a.push_back(sp[i]), b.push_back(sp[j]), e.push_back((i * 7 + j) % 40 - 20);
  while (a.size() < 2048) {
    int m = a.size() % 3;
    T x = (T)((int64_t)(next() % 2000001) - 1000000) / (T)(m == 0 ? 1000003 : m == 1 ? 10007 : 101);
    T y = (T)((int64_t)(next() % 2000001) - 1000000) / (T)(m == 2 ? 1000003 : 3001);
    a.push_back(x), b.push_back(y), e.push_back((int)(next() % 300) - 150);
  }
  const int n = a.size();
  T *da, *db;
  int* de;
  R<T>* dr;
  CHECK(hipMalloc(&da, n * sizeof(T)));
  CHECK(hipMalloc(&db, n * sizeof(T)));
  CHECK(hipMalloc(&de, n * sizeof(int)));
  CHECK(hipMalloc(&dr, n * sizeof(R<T>)));
  CHECK(hipMemcpy(da, a.data(), n * sizeof(T), hipMemcpyHostToDevice));
  CHECK(hipMemcpy(db, b.data(), n * sizeof(T), hipMemcpyHostToDevice));
  CHECK(hipMemcpy(de, e.data(), n * sizeof(int), hipMemcpyHostToDevice));
  if (sizeof(T) == 4)
    kf<<<(n + 63) / 64, 64>>>((const float*)da, (const float*)db, de, (R<float>*)dr, n);
  else
    kd<<<(n + 63) / 64, 64>>>((const double*)da, (const double*)db, de, (R<double>*)dr, n);
  CHECK(hipGetLastError());
  std::vector<R<T>> r(n);
  CHECK(hipMemcpy(r.data(), dr, n * sizeof(R<T>), hipMemcpyDeviceToHost));
  CHECK(hipFree(da));
  CHECK(hipFree(db));
  CHECK(hipFree(de));
  CHECK(hipFree(dr));

  int bad = 0;
  std::map<std::string, int> per;
  auto report = [&](const char* f, int i, double got, long double want) {
    bad++;
    if (per[f]++ < 2)
      fprintf(stderr, "%s %s(%a, %a): %a, want %La\n", name, f, (double)a[i], (double)b[i], got, want);
  };
  for (int i = 0; i < n; i++) {
    T x = a[i], y = b[i];
    const R<T>& o = r[i];
#define X1(f) \
  if (!same<T>(o.f, std::f(x))) report(#f, i, o.f, std::f(x));
#define X2(f) \
  if (!same<T>(o.f, std::f(x, y))) report(#f, i, o.f, std::f(x, y));
    EXACT1(X1) EXACT2(X2)
#define V1(f) \
  if (!sameValue<T>(o.f, std::f(x))) report(#f, i, o.f, std::f(x));
#define V2(f) \
  if (!sameValue<T>(o.f, std::f(x, y))) report(#f, i, o.f, std::f(x, y));
    VALUE1(V1) VALUE2(V2)
#define N1(f) \
  if (checked<T>(#f, x) && !close<T>(o.f, ref<T>(#f, x, y), tol<T>(#f), floorOf(#f))) report(#f, i, o.f, ref<T>(#f, x, y));
#define N2(f) \
  if (!close<T>(o.f, ref<T>(#f, x, y), tol<T>(#f), floorOf(#f))) report(#f, i, o.f, ref<T>(#f, x, y));
    NEAR1(N1) NEAR2(N2)
    if (!close<T>(o.rsqrt, 1.0L / sqrtl((long double)x), 4)) report("rsqrt", i, o.rsqrt, 1.0L / sqrtl((long double)x));
    int ex = 0;
    T m = std::frexp(x, &ex);
    if (!same<T>(o.frexpm, m) || (std::isfinite(x) && o.frexpe != ex)) report("frexp", i, o.frexpm, m);
    if (!same<T>(o.ldexp, std::ldexp(x, e[i]))) report("ldexp", i, o.ldexp, std::ldexp(x, e[i]));
    if (!same<T>(o.scalbn, std::scalbn(x, e[i]))) report("scalbn", i, o.scalbn, std::scalbn(x, e[i]));
    T ip;
    T fr = std::modf(x, &ip);
    if (!same<T>(o.modff, fr) || !same<T>(o.modfi, ip)) report("modf", i, o.modff, fr);
    int il = (x == 0 || std::isnan(x) || std::isinf(x)) ? 0 : std::ilogb(x);
    if (o.ilogb != il) report("ilogb", i, o.ilogb, il);
    int cls = (std::isnan(x) ? 1 : 0) | (std::isinf(x) ? 2 : 0) | (std::isfinite(x) ? 4 : 0) | (std::signbit(x) ? 8 : 0);
    if (o.cls != cls) report("class", i, o.cls, cls);
    long long lr = (std::fabs(x) < (T)1e18) ? std::llrint(x) : 0;
    if (o.lrint != lr) report("llrint", i, (double)o.lrint, lr);
  }
  for (auto& p : per) fprintf(stderr, "%s %s: %d of %d differ\n", name, p.first.c_str(), p.second, n);
  return bad;
}

int main() {
  int bad = run<float>("float") + run<double>("double");
  EXPECT(bad == 0, "%d results differ (the first two of each function above)", bad);
  printf("math2: ok\n");
  return 0;
}
