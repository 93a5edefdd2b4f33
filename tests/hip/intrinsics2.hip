// hipcc-flags: -ffp-contract=off
// More AMDGPU builtins against host models of the ISA's definitions, per lane: v_cvt_pkrtz_f16_f32
// (two halves rounded toward zero), v_cvt_pknorm_i16_f32 / _u16_f32 (clamped, scaled, rounded to
// nearest even), v_med3_f32, v_bfe_u32 / v_bfe_i32, v_perm_b32 (byte selects 0-7 and 12), v_msad_u8
// (masked SAD: reference bytes of zero skipped), v_alignbit_b32, v_ldexp_f32; and the gfx90a f64
// min/max atomics on global memory (global_atomic_min_f64 / max_f64 with return) and the f32 LDS
// min/max atomics (ds_min_rtn_f32 / ds_max_rtn_f32), from all 64 lanes on one address: the final
// value and every returned value checked. Built with -ffp-contract=off: the operands are computed
// on both sides, so neither may fuse them.
#include "common.h"
#include <cmath>
#include <cstring>
#include <vector>

typedef short s2 __attribute__((ext_vector_type(2)));
typedef unsigned short u2 __attribute__((ext_vector_type(2)));
typedef __fp16 h2 __attribute__((ext_vector_type(2)));

constexpr int NI = 8, NF = 2;

__device__ float fa(int l) { return l * 0.37f - 5.5f; }
__device__ float fb(int l) { return l * -0.11f + 2.25f; }

__global__ void lanes(const unsigned* u, int* o, float* f, double* gd, double* dret, float* fret) {
  int l = threadIdx.x;
  unsigned x = u[l], y = u[64 + l];
  float a = fa(l) + (float)(x & 7) * 1e-3f, b = fb(l);
  int* oi = o + l * NI;
  float* of = f + l * NF;
  h2 pk = __builtin_amdgcn_cvt_pkrtz(a, b);
  memcpy(&oi[0], &pk, 4);
  s2 pn = __builtin_amdgcn_cvt_pknorm_i16(a * 0.19f, b * 0.41f);
  memcpy(&oi[1], &pn, 4);
  u2 pu = __builtin_amdgcn_cvt_pknorm_u16(a * 0.19f, b * 0.41f);
  memcpy(&oi[2], &pu, 4);
  oi[3] = (int)__builtin_amdgcn_ubfe(x, y & 31, (y >> 8) & 31);
  oi[4] = __builtin_amdgcn_sbfe((int)x, y & 31, (y >> 8) & 31);
  oi[5] = (int)__builtin_amdgcn_perm(x, y, 0x0c050702u + (l & 1));
  oi[6] = (int)__builtin_amdgcn_msad_u8(x, y & 0xff00ff0fu, 3);
  oi[7] = (int)__builtin_amdgcn_alignbit(x, y, l & 31);
  of[0] = __builtin_amdgcn_fmed3f(a, b, 1.0f);
  of[1] = __builtin_amdgcn_ldexpf(a, l - 30);
  // one address for the whole wave
  dret[2 * l] = __builtin_amdgcn_global_atomic_fmin_f64(gd, (double)a, 0, 0);
  dret[2 * l + 1] = __builtin_amdgcn_global_atomic_fmax_f64(gd + 1, (double)b, 0, 0);
  __shared__ float sf[2];
  if (l == 0) sf[0] = 100.0f, sf[1] = -100.0f;
  __syncthreads();
  fret[2 * l] = __builtin_amdgcn_ds_fminf((__attribute__((address_space(3))) float*)&sf[0], b, 0, 0, false);
  fret[2 * l + 1] = __builtin_amdgcn_ds_fmaxf((__attribute__((address_space(3))) float*)&sf[1], a, 0, 0, false);
  __syncthreads();
  if (l == 0) fret[128] = sf[0], fret[129] = sf[1];
}

// f32 to binary16, rounded toward zero (the values here are normal halves or zero).
static unsigned short h16rtz(float f) {
  unsigned u;
  memcpy(&u, &f, 4);
  unsigned sign = u >> 16 & 0x8000;
  int e = (int)(u >> 23 & 0xff) - 127 + 15;
  if ((u & 0x7fffffff) == 0) return sign;
  if (e >= 31) return sign | 0x7bff;  // RTZ overflow: the largest finite
  if (e <= 0) {                        // subnormal half
    unsigned m = (u & 0x7fffff) | 0x800000;
    int sh = 14 - e;
    return sign | (sh < 32 ? m >> sh : 0);
  }
  return sign | e << 10 | (u >> 13 & 0x3ff);
}

static int sext(unsigned v, int bits) { return bits == 0 ? 0 : (int)(v << (32 - bits)) >> (32 - bits); }

int main() {
  std::vector<unsigned> u(128);
  for (int l = 0; l < 64; l++) {
    u[l] = l * 0x9E3779B9u;
    u[64 + l] = (l + 5) * 0x85EBCA6Bu;
  }
  unsigned* du;
  int* dout;
  float *dfo, *fret;
  double *gd, *dret;
  CHECK(hipMalloc(&du, 128 * 4));
  CHECK(hipMalloc(&dout, 64 * NI * 4));
  CHECK(hipMalloc(&dfo, 64 * NF * 4));
  CHECK(hipMalloc(&gd, 16));
  CHECK(hipMalloc(&dret, 128 * 8));
  CHECK(hipMalloc(&fret, 130 * 4));
  double init[2] = {1e9, -1e9};
  CHECK(hipMemcpy(gd, init, 16, hipMemcpyHostToDevice));
  CHECK(hipMemcpy(du, u.data(), 128 * 4, hipMemcpyHostToDevice));
  lanes<<<1, 64>>>(du, dout, dfo, gd, dret, fret);
  CHECK(hipGetLastError());
  std::vector<int> o(64 * NI);
  std::vector<float> f(64 * NF), fr(130);
  std::vector<double> dr(128);
  double gfin[2];
  CHECK(hipMemcpy(o.data(), dout, o.size() * 4, hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(f.data(), dfo, f.size() * 4, hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(fr.data(), fret, fr.size() * 4, hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(dr.data(), dret, dr.size() * 8, hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(gfin, gd, 16, hipMemcpyDeviceToHost));

  static const char* names[NI] = {"cvt_pkrtz", "cvt_pknorm_i16", "cvt_pknorm_u16", "bfe_u32", "bfe_i32", "perm", "msad_u8", "alignbit"};
  int bad = 0;
  double amin = 1e9, bmax = -1e9;
  for (int l = 0; l < 64; l++) {
    unsigned x = u[l], y = u[64 + l];
    float a = (l * 0.37f - 5.5f) + (float)(x & 7) * 1e-3f, b = l * -0.11f + 2.25f;
    amin = std::fmin(amin, (double)a);
    bmax = std::fmax(bmax, (double)b);
    auto snorm = [](float v) { return (int)std::nearbyint(std::fmin(std::fmax(v, -1.0f), 1.0f) * 32767.0f) & 0xffff; };
    auto unorm = [](float v) { return (int)std::nearbyint(std::fmin(std::fmax(v, 0.0f), 1.0f) * 65535.0f) & 0xffff; };
    int w[NI];
    w[0] = h16rtz(a) | h16rtz(b) << 16;
    w[1] = snorm(a * 0.19f) | snorm(b * 0.41f) << 16;
    w[2] = unorm(a * 0.19f) | unorm(b * 0.41f) << 16;
    unsigned off = y & 31, width = (y >> 8) & 31;
    w[3] = (int)(width == 0 ? 0 : (x >> off) & ((1u << width) - 1));
    // signed: the field's sign extended; a field reaching bit 31 is the arithmetic shift of S0
    // (the ISA's S0.i >> offset; LLVM's constant folding of sbfe says the same)
    w[4] = width == 0 ? 0 : off + width < 32 ? sext(x >> off, width) : (int)x >> off;
    unsigned long long xy = (unsigned long long)x << 32 | y;  // bytes 0-3: y (S1), 4-7: x (S0)
    unsigned sel = 0x0c050702u + (l & 1), perm = 0;
    for (int i = 0; i < 4; i++) {
      unsigned s = sel >> (8 * i) & 0xff;
      unsigned byte = s < 8 ? (unsigned)(xy >> (8 * s)) & 0xff : s == 12 ? 0 : 0xff;
      perm |= byte << (8 * i);
    }
    w[5] = (int)perm;
    unsigned ref = y & 0xff00ff0fu, msad = 3;
    for (int i = 0; i < 4; i++) {
      unsigned xb = x >> (8 * i) & 0xff, rb = ref >> (8 * i) & 0xff;
      if (rb != 0) msad += xb > rb ? xb - rb : rb - xb;
    }
    w[6] = (int)msad;
    w[7] = (int)(unsigned)(xy >> (l & 31));
    for (int i = 0; i < NI; i++)
      if (o[l * NI + i] != w[i] && bad++ < 10)
        fprintf(stderr, "lane %d %s: %#x, want %#x\n", l, names[i], o[l * NI + i], w[i]);
    float med = std::fmax(std::fmin(a, b), std::fmin(std::fmax(a, b), 1.0f));
    float wf[NF] = {med, std::ldexp(a, l - 30)};
    static const char* fnames[NF] = {"med3", "ldexp"};
    for (int i = 0; i < NF; i++)
      if (memcmp(&f[l * NF + i], &wf[i], 4) != 0 && bad++ < 10)
        fprintf(stderr, "lane %d %s: %a, want %a\n", l, fnames[i], f[l * NF + i], wf[i]);
  }
  // Atomics: final values, and every returned value is the initial one or another lane's operand,
  // no smaller (min) / larger (max) than the final.
  EXPECT(gfin[0] == amin && gfin[1] == bmax, "global f64 min/max: %a %a, want %a %a", gfin[0], gfin[1], amin, bmax);
  float lmin = 100.0f, lmax = -100.0f;
  for (int l = 0; l < 64; l++) {
    float a = (l * 0.37f - 5.5f) + (float)(u[l] & 7) * 1e-3f, b = l * -0.11f + 2.25f;
    lmin = std::fmin(lmin, b);
    lmax = std::fmax(lmax, a);
  }
  EXPECT(fr[128] == lmin && fr[129] == lmax, "LDS f32 min/max: %a %a, want %a %a", fr[128], fr[129], lmin, lmax);
  for (int l = 0; l < 64; l++) {
    EXPECT(dr[2 * l] >= amin && dr[2 * l + 1] <= bmax, "lane %d: returned %a %a beyond the final", l, dr[2 * l], dr[2 * l + 1]);
    EXPECT(fr[2 * l] >= lmin && fr[2 * l + 1] <= lmax, "lane %d: LDS returned %a %a beyond the final", l, fr[2 * l], fr[2 * l + 1]);
  }
  EXPECT(bad == 0, "%d lane results wrong", bad);
  printf("intrinsics2: ok\n");
  return 0;
}
