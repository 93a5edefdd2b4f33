// hipcc-flags: -fgpu-flush-denormals-to-zero
// Single-precision denormals flushed (the kernel descriptor's FLOAT_MODE asks the hardware to flush
// f32 inputs and results, the MODE register the wave starts with), double precision untouched:
// f32 add, sub, mul, fma, min, max, compare, f32 -> f64 and f64 -> f32 conversions and f64 add/mul
// over inputs mixing denormals, normals near the denormal range and signed zeros; each lane against
// a host model that flushes f32 operands and results to a zero of the same sign.
#include "common.h"
#include <cmath>
#include <cstring>
#include <vector>

struct In {
  float a, b, c;
  double x, y;
};
struct Res {
  float add, sub, mul, fma, mn, mx;
  int lt;
  float pad;
  double cvt, add64, mul64;
  float narrow;
  float pad2;
};

__global__ void ops(const In* in, Res* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  In v = in[i];
  Res r;
  r.add = v.a + v.b;
  r.sub = v.a - v.b;
  r.mul = v.a * v.b;
  r.fma = fmaf(v.a, v.b, v.c);
  r.mn = fminf(v.a, v.b);
  r.mx = fmaxf(v.a, v.b);
  r.lt = v.a < v.b;
  r.pad = 0;
  r.cvt = (double)v.a;
  r.add64 = v.x + v.y;
  r.mul64 = v.x * v.y;
  r.narrow = (float)v.x;
  r.pad2 = 0;
  out[i] = r;
}

static float ftz(float f) { return std::fpclassify(f) == FP_SUBNORMAL ? std::copysign(0.0f, f) : f; }

static unsigned bitsOf(float f) {
  unsigned u;
  memcpy(&u, &f, 4);
  return u;
}
static unsigned long long bitsOf(double f) {
  unsigned long long u;
  memcpy(&u, &f, 8);
  return u;
}

int main() {
  const int n = 4096;
  std::vector<In> in(n);
  unsigned seed = 12345;
  auto rnd = [&]() { return seed = seed * 1664525u + 1013904223u; };
  auto pick = [&]() -> float {
    unsigned r = rnd();
    unsigned sign = (r & 1) << 31;
    unsigned u;
    switch ((r >> 1) % 6) {
    case 0: u = (rnd() & 0x7fffff) | 1; break;                   // denormal
    case 1: u = 0x00800000u + (rnd() & 0x00ffffff); break;         // just above the smallest normal
    case 2: u = 0; break;                                          // zero
    case 3: u = ((127u + (rnd() % 40) - 20) << 23) | (rnd() & 0x7fffff); break;  // ordinary
    case 4: u = ((1u + rnd() % 24) << 23) | (rnd() & 0x7fffff); break;           // small normal
    default: u = ((100u + rnd() % 60) << 23) | (rnd() & 0x7fffff); break;        // mid range
    }
    u |= sign;
    float f;
    memcpy(&f, &u, 4);
    return f;
  };
  for (int i = 0; i < n; i++) {
    in[i] = {pick(), pick(), pick(), 0, 0};
    // doubles: f64 denormals and values whose float conversion is an f32 denormal
    unsigned long long dx = (rnd() % 3 == 0) ? ((unsigned long long)rnd() << 20 | rnd()) & 0x000fffffffffffffull
                                             : (unsigned long long)(870 + rnd() % 40) << 52 | ((unsigned long long)rnd() << 20);
    double x;
    memcpy(&x, &dx, 8);
    in[i].x = (rnd() & 1) ? -x : x;
    in[i].y = (double)pick();
  }
  In* din;
  Res* dout;
  CHECK(hipMalloc(&din, n * sizeof(In)));
  CHECK(hipMalloc(&dout, n * sizeof(Res)));
  CHECK(hipMemcpy(din, in.data(), n * sizeof(In), hipMemcpyHostToDevice));
  ops<<<n / 256, 256>>>(din, dout, n);
  CHECK(hipGetLastError());
  std::vector<Res> out(n);
  CHECK(hipMemcpy(out.data(), dout, n * sizeof(Res), hipMemcpyDeviceToHost));
  int bad = 0, flushedIn = 0, flushedOut = 0;
  for (int i = 0; i < n; i++) {
    float a = ftz(in[i].a), b = ftz(in[i].b), c = ftz(in[i].c);
    flushedIn += a != in[i].a || (a == 0 && bitsOf(a) != bitsOf(in[i].a));
    struct {
      const char* what;
      float got, want;
    } f[] = {
        {"add", out[i].add, ftz(a + b)},
        {"sub", out[i].sub, ftz(a - b)},
        {"mul", out[i].mul, ftz(a * b)},
        {"fma", out[i].fma, ftz(std::fma(a, b, c))},
        {"min", out[i].mn, std::fmin(a, b)},
        {"max", out[i].mx, std::fmax(a, b)},
        {"narrow", out[i].narrow, ftz((float)in[i].x)},
    };
    flushedOut += std::fpclassify(a * b) == FP_SUBNORMAL;
    for (auto& e : f) {
      // min/max of two zeros of different signs: either zero
      bool zeros = e.got == 0 && e.want == 0 && (e.what[0] == 'm' && e.what[1] != 'u');
      if (bitsOf(e.got) != bitsOf(e.want) && !zeros && bad++ < 10)
        fprintf(stderr, "lane %d %s(%a, %a, %a): %a, want %a\n", i, e.what, in[i].a, in[i].b, in[i].c, e.got, e.want);
    }
    if (out[i].lt != (a < b) && bad++ < 10) fprintf(stderr, "lane %d %a < %a: %d\n", i, in[i].a, in[i].b, out[i].lt);
    struct {
      const char* what;
      double got, want;
    } d[] = {
        {"cvt", out[i].cvt, (double)a},
        {"add64", out[i].add64, in[i].x + in[i].y},
        {"mul64", out[i].mul64, in[i].x * in[i].y},
    };
    for (auto& e : d)
      if (bitsOf(e.got) != bitsOf(e.want) && bad++ < 10)
        fprintf(stderr, "lane %d %s(%a, %a): %a, want %a\n", i, e.what, in[i].x, in[i].y, e.got, e.want);
  }
  EXPECT(bad == 0, "%d results wrong", bad);
  printf("denorm_ftz: %d lanes, %d with a flushed f32 input, %d products flushed: ok\n", n, flushedIn, flushedOut);
  CHECK(hipFree(din));
  CHECK(hipFree(dout));
  return 0;
}
