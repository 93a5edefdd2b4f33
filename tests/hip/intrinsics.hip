// The AMDGPU builtins HIP code reaches for in hand-tuned kernels (rocPRIM, composable_kernel style),
// each checked per lane against a host model of the ISA's definition: readfirstlane, ds_bpermute,
// ds_swizzle (bit-mask mode), DPP row_shr with bound_ctrl and row_bcast:15 under a row mask
// (mov_dpp, update_dpp), the gfx90a dot products (v_dot2c_f32_f16, v_dot2c_i32_i16, v_dot4c_i32_i8,
// v_dot4_u32_u8, v_dot8_u32_u4, v_dot8c_i32_i4), mbcnt, sad_u8, lerp_u8, alignbyte, fract,
// frexp_mant/exp, class, and packed f32 arithmetic (float2 a*b+a as v_pk_fma_f32, v_pk_mul_f32).
#include "common.h"
#include <cmath>
#include <cstring>
#include <vector>

typedef float f2 __attribute__((ext_vector_type(2)));
typedef _Float16 h2 __attribute__((ext_vector_type(2)));
typedef short s2 __attribute__((ext_vector_type(2)));

constexpr int NI = 16, NF = 8;

__global__ void lanes(int* o, float* f, const f2* a, const f2* b, const unsigned* u) {
  int l = threadIdx.x;
  unsigned x = u[l], y = u[64 + l];
  int* oi = o + l * NI;
  float* of = f + l * NF;
  f2 p = a[l], q = b[l];
  f2 fma2 = p * q + p;  // contracted: v_pk_fma_f32
  of[0] = fma2.x;
  of[1] = fma2.y;
  f2 mul2 = p * q;
  f2 add2 = mul2 + q;  // mul2 stored too: v_pk_mul_f32, and this sum contracted into v_pk_fma_f32
  of[2] = mul2.x;
  of[3] = add2.y;
  oi[0] = __builtin_amdgcn_readfirstlane(l + 7);
  oi[1] = __builtin_amdgcn_ds_bpermute(((l * 5) & 63) * 4, l * 3);
  oi[2] = __builtin_amdgcn_ds_swizzle(l * 11, 0x041F);  // and 0x1f, or 0, xor 1: lane ^ 1
  oi[3] = __builtin_amdgcn_mov_dpp(l + 1000, 0x111, 0xf, 0xf, true);         // row_shr:1, bound_ctrl
  oi[4] = __builtin_amdgcn_update_dpp(100, l * 2, 0x142, 0xe, 0xf, false);    // row_bcast:15, rows 1-3
  oi[5] = __builtin_amdgcn_sdot4((int)x, (int)y, l * 5, false);
  oi[6] = (int)__builtin_amdgcn_udot4(x, y, 9u, false);
  oi[7] = __builtin_amdgcn_sdot2((s2){(short)(x & 0xffff), (short)(x >> 16)}, (s2){(short)(y & 0xffff), (short)(y >> 16)}, l, false);
  oi[8] = (int)__builtin_amdgcn_udot8(x, y, 1u, false);
  oi[9] = __builtin_amdgcn_sdot8((int)x, (int)y, -l, false);
  oi[10] = __builtin_amdgcn_mbcnt_hi(0xf0f0f0f0u, __builtin_amdgcn_mbcnt_lo(0x12345678u, 3));
  oi[11] = (int)__builtin_amdgcn_sad_u8(x, y, 3);
  oi[12] = (int)__builtin_amdgcn_lerp(x, y, u[128 + l]);
  oi[13] = (int)__builtin_amdgcn_alignbyte(x, y, l & 3);
  oi[14] = __builtin_amdgcn_frexp_expf(p.x);
  oi[15] = __builtin_amdgcn_class(p.y, 0x100 | 0x008);  // a normal number, positive or negative
  of[4] = __builtin_amdgcn_fdot2((h2){(_Float16)(l % 17), (_Float16)2}, (h2){(_Float16)3, (_Float16)(l - 31)}, 1.5f, false);
  of[5] = __builtin_amdgcn_fractf(p.x);
  of[6] = __builtin_amdgcn_frexp_mantf(p.x);
}

static int sext(unsigned v, int bits) { return (int)(v << (32 - bits)) >> (32 - bits); }

int main() {
  std::vector<f2> a(64), b(64);
  std::vector<unsigned> u(192);
  for (int l = 0; l < 64; l++) {
    a[l] = (f2){(float)(l * 0.37 - 9.1), (float)(l % 5 == 0 ? 0.0 : l * -1.25 + 3)};
    b[l] = (f2){(float)(1.0 / (l + 3)), (float)(l * 0.5 - 7)};
    u[l] = l * 0x9E3779B9u;
    u[64 + l] = (l + 17) * 0x85EBCA6Bu;
    u[128 + l] = (l * 0x01010101u) ^ 0x00ff00ffu;
  }
  f2 *da, *db;
  unsigned* du;
  int* dout;
  float* dfo;
  CHECK(hipMalloc(&da, 64 * sizeof(f2)));
  CHECK(hipMalloc(&db, 64 * sizeof(f2)));
  CHECK(hipMalloc(&du, u.size() * 4));
  CHECK(hipMalloc(&dout, 64 * NI * 4));
  CHECK(hipMalloc(&dfo, 64 * NF * 4));
  CHECK(hipMemcpy(da, a.data(), 64 * sizeof(f2), hipMemcpyHostToDevice));
  CHECK(hipMemcpy(db, b.data(), 64 * sizeof(f2), hipMemcpyHostToDevice));
  CHECK(hipMemcpy(du, u.data(), u.size() * 4, hipMemcpyHostToDevice));
  lanes<<<1, 64>>>(dout, dfo, da, db, du);
  CHECK(hipGetLastError());
  std::vector<int> o(64 * NI);
  std::vector<float> f(64 * NF);
  CHECK(hipMemcpy(o.data(), dout, o.size() * 4, hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(f.data(), dfo, f.size() * 4, hipMemcpyDeviceToHost));

  static const char* names[NI] = {"readfirstlane", "ds_bpermute", "ds_swizzle", "mov_dpp row_shr:1",
                                  "update_dpp row_bcast:15", "sdot4", "udot4", "sdot2", "udot8", "sdot8",
                                  "mbcnt", "sad_u8", "lerp_u8", "alignbyte", "frexp_exp", "class"};
  int bad = 0;
  for (int l = 0; l < 64; l++) {
    unsigned x = u[l], y = u[64 + l], z = u[128 + l];
    int w[NI];
    w[0] = 7;
    w[1] = ((l * 5) & 63) * 3;
    w[2] = (l ^ 1) * 11;
    w[3] = l % 16 == 0 ? 0 : l - 1 + 1000;
    w[4] = l < 16 ? 100 : (l / 16 * 16 - 1) * 2;
    w[5] = l * 5;
    w[6] = 9;
    w[8] = 1;
    w[9] = -l;
    w[11] = 3;
    unsigned lerp = 0;
    for (int i = 0; i < 4; i++) {
      unsigned xb = (x >> (8 * i)) & 0xff, yb = (y >> (8 * i)) & 0xff;
      w[5] += sext(xb, 8) * sext(yb, 8);
      w[6] += (int)(xb * yb);
      w[11] += xb > yb ? xb - yb : yb - xb;
      lerp |= ((xb + yb + ((z >> (8 * i)) & 1)) >> 1) << (8 * i);
    }
    w[12] = (int)lerp;
    w[7] = (int)(unsigned)(l + (long long)sext(x & 0xffff, 16) * sext(y & 0xffff, 16) +
                           (long long)sext(x >> 16, 16) * sext(y >> 16, 16)); // wraps: no clamp
    for (int i = 0; i < 8; i++) {
      unsigned xn = (x >> (4 * i)) & 0xf, yn = (y >> (4 * i)) & 0xf;
      w[8] += (int)(xn * yn);
      w[9] += sext(xn, 4) * sext(yn, 4);
    }
    unsigned long long below = (1ull << l) - 1;
    w[10] = 3 + __builtin_popcount(0x12345678u & (unsigned)below) + __builtin_popcount(0xf0f0f0f0u & (unsigned)(below >> 32));
    w[13] = (int)(unsigned)((((unsigned long long)x << 32) | y) >> (8 * (l & 3)));
    int e;
    float mant = frexpf(a[l].x, &e);
    w[14] = a[l].x == 0 ? 0 : e;
    w[15] = a[l].y != 0;
    for (int i = 0; i < NI; i++)
      if (o[l * NI + i] != w[i] && bad++ < 10)
        fprintf(stderr, "lane %d %s: %d (%#x), want %d (%#x)\n", l, names[i], o[l * NI + i], o[l * NI + i], w[i], w[i]);
    float wf[7] = {fmaf(a[l].x, b[l].x, a[l].x), fmaf(a[l].y, b[l].y, a[l].y), a[l].x * b[l].x,
                   fmaf(a[l].y, b[l].y, b[l].y), (float)(l % 17) * 3 + 2 * (float)(l - 31) + 1.5f,
                   a[l].x - floorf(a[l].x), mant};
    static const char* fnames[7] = {"pk_fma x", "pk_fma y", "pk_mul x", "pk_add y", "fdot2", "fract", "frexp_mant"};
    for (int i = 0; i < 7; i++) {
      float g = f[l * NF + i];
      if (memcmp(&g, &wf[i], 4) != 0 && bad++ < 10)
        fprintf(stderr, "lane %d %s: %.9g, want %.9g\n", l, fnames[i], g, wf[i]);
    }
  }
  EXPECT(bad == 0, "%d lane results wrong", bad);
  printf("intrinsics: ok\n");
  return 0;
}
