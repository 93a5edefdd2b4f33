// hipcc-flags: -ffp-contract=off
// Floating-point code compiled twice from one __host__ __device__ function, without contraction
// (the hipcc-flags line) so both sides round every operation: float and double add, sub, mul, div,
// sqrt, negations and absolute values in every operand position (VOP3 source modifiers on the
// device), comparisons and selects, floor/ceil/trunc/rint, copysign, conversions between float,
// double and integers, min/max of non-zero values; 8192 inputs of every class (random bit
// patterns, denormals, infinities, NaNs), results equal bit for bit except NaN payloads.
#include "common.h"
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

constexpr int kR = 40;

template <typename T>
__host__ __device__ static void ops(T a, T b, T c, T* r) {
  int k = 0;
  // |a| and |b| as T: on the host fabs(float) may be the C library's double fabs, and a double
  // product would then be added in double (a fused-like result); the device folds these into
  // source modifiers either way
  const T aa = fabs(a), ab = fabs(b), ac = fabs(c);
  r[k++] = a + b;
  r[k++] = -a - b;
  r[k++] = a * -b;
  r[k++] = aa * b + c;
  r[k++] = a / b;
  r[k++] = -aa / c;
  r[k++] = sqrt(aa);
  r[k++] = -sqrt(b);
  r[k++] = (a < b) ? -a : ab;  // a select of modified sources
  r[k++] = (aa >= c) ? b : -c;
  r[k++] = (a != a) ? c : a * a;
  r[k++] = floor(a);
  r[k++] = ceil(-b);
  r[k++] = trunc(c);
  r[k++] = rint(a);
  r[k++] = copysign(b, -a);
  r[k++] = (a > (T)0 && b > (T)0) ? fmax(a, b) : (T)0;
  r[k++] = (a > (T)0 && c > (T)0) ? fmin(-a, -c) : (T)1;
  r[k++] = (T)((aa < (T)2e9) ? (int)a : 7);
  r[k++] = (T)((a >= (T)0 && a < (T)4e9) ? (unsigned)a : 9u);
  r[k++] = (T)((ab < (T)9e18) ? (long long)b : 11);
  r[k++] = (T)(int)(((uint32_t)k * 2654435761u) >> 1) * a;
  r[k++] = (a - b) * (a + b) - c;
  r[k++] = a * b / c;
  r[k++] = (T)((a < b) + 2 * (a <= b) + 4 * (a == b) + 8 * (a >= b) + 16 * (a > b) + 32 * (a != b));
  r[k++] = (T)(!(a < b) + 2 * !(a >= b) + 4 * (ac == (T)INFINITY));  // unordered comparisons
  r[k++] = a - a * (T)0.5 - a * (T)0.5;
  r[k++] = (T)1 / a;
  r[k++] = -(T)1 / ab;
  r[k++] = (T)3 * c - -b;
  while (k < kR) r[k++] = 0;
}

__global__ void kf(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) ops<float>(in[3 * i], in[3 * i + 1], in[3 * i + 2], out + kR * i);
}
__global__ void kd(const double* in, double* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) ops<double>(in[3 * i], in[3 * i + 1], in[3 * i + 2], out + kR * i);
}
__global__ void kfd(const float* in, double* outd, float* outf, int n) {  // conversions between the two
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  outd[i] = (double)in[3 * i] * (double)in[3 * i + 1];
  outf[i] = (float)((double)in[3 * i + 2] / 3.0);
}

static uint64_t rng = 0xfeedfacecafebeefull;
static uint64_t next() {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

template <typename T>
static bool same(T x, T y) {
  return (x != x && y != y) || memcmp(&x, &y, sizeof x) == 0;
}

template <typename T, typename U>
static T pick(int i) {
  const T sp[] = {0, -(T)0, 1, -1, (T)0.5, (T)3, std::numeric_limits<T>::denorm_min(), -std::numeric_limits<T>::min() / 2,
                  std::numeric_limits<T>::min(), std::numeric_limits<T>::max(), (T)INFINITY, -(T)INFINITY, (T)NAN, (T)1e-3};
  switch (i % 4) {
  case 0: return sp[next() % (sizeof sp / sizeof sp[0])];
  case 1: {
    U u = (U)next();
    T t;
    memcpy(&t, &u, sizeof t);
    return t;
  }
  default: return (T)((int64_t)(next() % 2000001) - 1000000) / (T)(1 + next() % 1000);
  }
}

template <typename T, typename U>
static int run(const char* name) {
  const int n = 8192;
  std::vector<T> in(3 * n);
  for (int i = 0; i < 3 * n; i++) in[i] = pick<T, U>(i + (int)(next() % 3));
  T *din, *dout;
  CHECK(hipMalloc(&din, in.size() * sizeof(T)));
  CHECK(hipMalloc(&dout, (size_t)kR * n * sizeof(T)));
  CHECK(hipMemcpy(din, in.data(), in.size() * sizeof(T), hipMemcpyHostToDevice));
  if (sizeof(T) == 4)
    kf<<<n / 64, 64>>>((const float*)din, (float*)dout, n);
  else
    kd<<<n / 64, 64>>>((const double*)din, (double*)dout, n);
  CHECK(hipGetLastError());
  std::vector<T> out((size_t)kR * n), want(kR);
  CHECK(hipMemcpy(out.data(), dout, out.size() * sizeof(T), hipMemcpyDeviceToHost));
  int bad = 0, shown[kR] = {};
  for (int i = 0; i < n; i++) {
    ops<T>(in[3 * i], in[3 * i + 1], in[3 * i + 2], want.data());
    for (int j = 0; j < kR; j++)
      if (!same(out[(size_t)kR * i + j], want[j])) {
        bad++;
        if (shown[j]++ < 2)
          fprintf(stderr, "%s result %d of (%a, %a, %a): %a, want %a\n", name, j, (double)in[3 * i], (double)in[3 * i + 1],
                  (double)in[3 * i + 2], (double)out[(size_t)kR * i + j], (double)want[j]);
      }
  }
  for (int j = 0; j < kR; j++)
    if (shown[j]) fprintf(stderr, "%s result %d: %d of %d differ\n", name, j, shown[j], n);
  CHECK(hipFree(din));
  CHECK(hipFree(dout));
  if (sizeof(T) == 4) {  // float -> double products and double -> float rounding
    float* fin;
    double* od;
    float* of;
    CHECK(hipMalloc(&fin, 3 * n * sizeof(float)));
    CHECK(hipMalloc(&od, n * sizeof(double)));
    CHECK(hipMalloc(&of, n * sizeof(float)));
    CHECK(hipMemcpy(fin, in.data(), 3 * n * sizeof(float), hipMemcpyHostToDevice));
    kfd<<<n / 64, 64>>>(fin, od, of, n);
    std::vector<double> hd(n);
    std::vector<float> hf(n);
    CHECK(hipMemcpy(hd.data(), od, n * sizeof(double), hipMemcpyDeviceToHost));
    CHECK(hipMemcpy(hf.data(), of, n * sizeof(float), hipMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) {
      double wd = (double)(float)in[3 * i] * (double)(float)in[3 * i + 1];
      float wf = (float)((double)(float)in[3 * i + 2] / 3.0);
      if (!same(hd[i], wd) || !same(hf[i], wf)) {
        if (bad++ < 5) fprintf(stderr, "conversion %d: %a %a, want %a %a\n", i, hd[i], (double)hf[i], wd, (double)wf);
      }
    }
    CHECK(hipFree(fin));
    CHECK(hipFree(od));
    CHECK(hipFree(of));
  }
  return bad;
}

int main() {
  int bad = run<float, uint32_t>("float") + run<double, uint64_t>("double");
  EXPECT(bad == 0, "%d results differ (the first two of each kind above)", bad);
  printf("fp_ops: ok\n");
  return 0;
}
