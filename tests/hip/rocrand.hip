// hipcc-flags: -std=c++17 -ffp-contract=off -lrocrand
// Debian's rocRAND 5.3.3: its device API (rocrand_kernel.h, compiled into this program's kernel)
// and its library (librocrand.so.1's own gfx90a kernels behind the host API), checked exactly.
// - Device API: 4096 threads, each with its own subsequence and offset, draw integers, uniform
//   floats and doubles and normals from XORWOW (skip-ahead by precomputed jump matrices),
//   MRG32k3a and Philox4x32-10; the host runs the same header code (FQUALIFIERS made host and
//   device) for the same states and compares: integers and uniforms bit for bit (-ffp-contract=off:
//   no fused multiply-add on either side), normals within 2e-5 (Box-Muller's __sincosf is the
//   hardware's sine and cosine on the GPU, libm's on the host).
// - Library: Philox's rocrand_generate and rocrand_generate_uniform against the host's Philox
//   stream (the library's output is the sequential stream of subsequence 0), MRG32k3a against
//   itself at an offset (rocrand_set_offset k: the same values from the k-th on), MTGP32
//   repeatable per seed, Sobol32 in 4 dimensions against the direction vectors' Gray-code sequence
//   computed here. The library's XORWOW is not run: its state setup (131072 threads, each jumping
//   to its subsequence by GF(2) matrix products) is 15-35 s of interpreter time per generator on
//   the 2-core VM; the device API part runs the same jump code on 4096 threads.
#define FQUALIFIERS __forceinline__ __host__ __device__
#include "common.h"
#include <rocrand/rocrand.h>
#include <rocrand/rocrand_kernel.h>
#include <rocrand/rocrand_sobol32_precomputed.h>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#define RCHECK(x)                                                                             \
  do {                                                                                        \
    rocrand_status s_ = (x);                                                                  \
    EXPECT(s_ == ROCRAND_STATUS_SUCCESS, "%s: rocrand status %d", #x, int(s_));               \
  } while (0)

constexpr int kThreads = 4096;
constexpr int kInts = 8, kUnif = 4, kDbl = 2, kNorm = 2;
constexpr unsigned long long kSeed = 0x1234abcd5678ull;

struct Draws {
  unsigned u[kInts];
  float f[kUnif];
  double d[kDbl];
  float n[kNorm];
};

// draw is the per-thread work, the same code on the GPU and on the host.
template <class State>
__host__ __device__ void draw(int t, Draws* out) {
  State s;
  rocrand_init(kSeed, t, 3ull * t, &s);
  Draws r;
  for (int i = 0; i < kInts; i++) r.u[i] = rocrand(&s);
  for (int i = 0; i < kUnif; i++) r.f[i] = rocrand_uniform(&s);
  for (int i = 0; i < kDbl; i++) r.d[i] = rocrand_uniform_double(&s);
  for (int i = 0; i < kNorm; i++) r.n[i] = rocrand_normal(&s);
  *out = r;
}

template <class State>
__global__ void drawKernel(Draws* out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  draw<State>(t, &out[t]);
}

// closeNormal compares a normal draw with the host's: rocRAND's float Box-Muller calls __sincosf,
// on the GPU the hardware's v_sin_f32/v_cos_f32 (absolute error about 2^-21 over a period), on
// the host libm's; the radius sqrt(-2 log u) is at most about 6.7 for a float u.
static bool closeNormal(float a, float b) { return std::fabs(a - b) <= 2e-5f; }

template <class State>
static void deviceAPI(const char* name) {
  Draws* d;
  CHECK(hipMalloc(&d, kThreads * sizeof(Draws)));
  hipLaunchKernelGGL(drawKernel<State>, dim3(kThreads / 256), dim3(256), 0, 0, d);
  CHECK(hipGetLastError());
  std::vector<Draws> got(kThreads);
  CHECK(hipMemcpy(got.data(), d, kThreads * sizeof(Draws), hipMemcpyDeviceToHost));
  CHECK(hipFree(d));
  for (int t = 0; t < kThreads; t++) {
    Draws w;
    draw<State>(t, &w);
    const Draws& g = got[t];
    for (int i = 0; i < kInts; i++)
      EXPECT(g.u[i] == w.u[i], "%s thread %d int %d: %08x, host %08x", name, t, i, g.u[i], w.u[i]);
    for (int i = 0; i < kUnif; i++)
      EXPECT(std::memcmp(&g.f[i], &w.f[i], 4) == 0, "%s thread %d uniform %d: %a, host %a", name, t, i, g.f[i], w.f[i]);
    for (int i = 0; i < kDbl; i++)
      EXPECT(std::memcmp(&g.d[i], &w.d[i], 8) == 0, "%s thread %d double %d: %a, host %a", name, t, i, g.d[i], w.d[i]);
    for (int i = 0; i < kNorm; i++)
      EXPECT(closeNormal(g.n[i], w.n[i]), "%s thread %d normal %d: %.9g, host %.9g", name, t, i, g.n[i], w.n[i]);
  }
  printf("device API %s: %d threads agree with the host\n", name, kThreads);
}

static std::vector<unsigned> generate(rocrand_rng_type type, size_t n, unsigned long long seed,
                                      unsigned long long offset, unsigned dims = 0) {
  rocrand_generator g;
  RCHECK(rocrand_create_generator(&g, type));
  if (dims) {
    RCHECK(rocrand_set_quasi_random_generator_dimensions(g, dims));
  } else {
    RCHECK(rocrand_set_seed(g, seed));
  }
  if (offset) RCHECK(rocrand_set_offset(g, offset));
  unsigned* d;
  CHECK(hipMalloc(&d, n * 4));
  RCHECK(rocrand_generate(g, d, n));
  std::vector<unsigned> h(n);
  CHECK(hipMemcpy(h.data(), d, n * 4, hipMemcpyDeviceToHost));
  CHECK(hipFree(d));
  RCHECK(rocrand_destroy_generator(g));
  return h;
}

int main() {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  deviceAPI<rocrand_state_xorwow>("XORWOW");
  deviceAPI<rocrand_state_mrg32k3a>("MRG32k3a");
  deviceAPI<rocrand_state_philox4x32_10>("Philox4x32-10");

  const size_t n = 1 << 20;
  // Philox through the library: the sequential stream of subsequence 0, and at an offset.
  {
    rocrand_state_philox4x32_10 s;
    rocrand_init(kSeed, 0, 0, &s);
    std::vector<unsigned> want(n + 1000);
    for (auto& v : want) v = rocrand(&s);
    std::vector<unsigned> got = generate(ROCRAND_RNG_PSEUDO_PHILOX4_32_10, n, kSeed, 0);
    for (size_t i = 0; i < n; i++) EXPECT(got[i] == want[i], "library Philox %zu: %08x, host %08x", i, got[i], want[i]);
    got = generate(ROCRAND_RNG_PSEUDO_PHILOX4_32_10, n, kSeed, 1000);
    for (size_t i = 0; i < n; i++)
      EXPECT(got[i] == want[i + 1000], "library Philox offset 1000, %zu: %08x, host %08x", i, got[i], want[i + 1000]);

    rocrand_generator g;
    RCHECK(rocrand_create_generator(&g, ROCRAND_RNG_PSEUDO_PHILOX4_32_10));
    RCHECK(rocrand_set_seed(g, kSeed));
    float* d;
    CHECK(hipMalloc(&d, n * 4));
    RCHECK(rocrand_generate_uniform(g, d, n));
    std::vector<float> f(n);
    CHECK(hipMemcpy(f.data(), d, n * 4, hipMemcpyDeviceToHost));
    CHECK(hipFree(d));
    RCHECK(rocrand_destroy_generator(g));
    for (size_t i = 0; i < n; i++) {
      float w = ROCRAND_2POW32_INV + (float(want[i]) * ROCRAND_2POW32_INV);
      EXPECT(std::memcmp(&f[i], &w, 4) == 0, "library Philox uniform %zu: %a, host %a", i, f[i], w);
    }
    printf("library Philox4x32-10: %zu integers (and at offset 1000) and %zu uniforms agree with the host\n", n, n);
  }

  // MRG32k3a through the library: an offset k gives the same values from the k-th on (the
  // library's skip-ahead against its own sequence).
  {
    const auto type = ROCRAND_RNG_PSEUDO_MRG32K3A;
    const char* name = "MRG32k3a";
    const size_t k = 123457;
    std::vector<unsigned> a = generate(type, n, kSeed, 0), b = generate(type, n - k, kSeed, k);
    for (size_t i = 0; i + k < n; i++) EXPECT(b[i] == a[i + k], "library %s offset %zu, %zu: %08x, %08x", name, k, i, b[i], a[i + k]);
    std::vector<unsigned> c = generate(type, n, kSeed, 0), e = generate(type, n, kSeed + 1, 0);
    EXPECT(a == c, "library %s: two runs with one seed differ", name);
    size_t same = 0;
    for (size_t i = 0; i < n; i++) same += a[i] == e[i];
    EXPECT(same < 16, "library %s: seeds %llu and %llu share %zu of %zu values", name, kSeed, kSeed + 1, same, n);
    printf("library %s: offset %zu consistent, repeatable, seeds differ\n", name, k);
  }

  // MTGP32 has no offset: repeatable per seed, different across seeds, and its bits balanced.
  {
    std::vector<unsigned> a = generate(ROCRAND_RNG_PSEUDO_MTGP32, n, kSeed, 0);
    std::vector<unsigned> b = generate(ROCRAND_RNG_PSEUDO_MTGP32, n, kSeed, 0);
    std::vector<unsigned> c = generate(ROCRAND_RNG_PSEUDO_MTGP32, n, kSeed + 1, 0);
    EXPECT(a == b, "library MTGP32: two runs with one seed differ");
    size_t same = 0, ones[32] = {};
    for (size_t i = 0; i < n; i++) {
      same += a[i] == c[i];
      for (int k = 0; k < 32; k++) ones[k] += a[i] >> k & 1;
    }
    EXPECT(same < 16, "library MTGP32: seeds share %zu values", same);
    for (int k = 0; k < 32; k++)
      EXPECT(std::abs(double(ones[k]) - n / 2.0) < 5 * std::sqrt(n / 4.0), "library MTGP32 bit %d set %zu times of %zu", k, ones[k], n);
    printf("library MTGP32: repeatable, seeds differ, every bit balanced\n");
  }

  // Sobol32 in 4 dimensions: dimension j's i-th point is the XOR of its direction vectors over
  // the set bits of the Gray code of i (the library's output is dimension by dimension).
  {
    const unsigned dims = 4;
    const size_t m = n / dims;
    std::vector<unsigned> got = generate(ROCRAND_RNG_QUASI_SOBOL32, m * dims, 0, 0, dims);
    for (unsigned j = 0; j < dims; j++) {
      const unsigned* v = &h_sobol32_direction_vectors[32 * j];
      for (size_t i = 0; i < m; i++) {
        unsigned gray = unsigned(i ^ (i >> 1)), x = 0;
        for (int b = 0; b < 32; b++)
          if (gray >> b & 1) x ^= v[b];
        EXPECT(got[j * m + i] == x, "library Sobol32 dimension %u point %zu: %08x, want %08x", j, i, got[j * m + i], x);
      }
    }
    printf("library Sobol32: %u dimensions x %zu points agree with the direction vectors\n", dims, m);
  }
  printf("rocrand: ok\n");
  return 0;
}
