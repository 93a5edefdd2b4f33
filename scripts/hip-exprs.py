#!/usr/bin/env python3
# hip-exprs.py SEED [N]: writes a HIP program of N (default 120) random __host__ __device__
# functions over u32/i32/u64/i64/f32/f64/_Float16 (integer and IEEE float operators, conversions, bit
# intrinsics, selects, lane-dependent branches and loops; operands per lane and uniform, so clang
# uses both VALU and SALU forms) that evaluates each on 1024 inputs on the GPU and on the host and
# compares the bits (NaNs as NaN); and N/5 wave functions (a random per-lane value through __shfl,
# __shfl_xor/up/down, butterfly reductions, __ballot/__any/__all (also in a divergent branch) or
# readfirstlane, which the host models over the wave's 64 lanes); and N/8 group functions (LDS
# stores and loads across a work-group's barrier, LDS and global atomics into counters,
# order-independent). A differential
# test of the ISA interpreter against the host's CPU through real compiler output:
#
#   python3 scripts/hip-exprs.py 7 150 > /tmp/e7.hip && cp tests/hip/common.h /tmp/ &&
#   hipcc --offload-arch=gfx90a -O2 -std=c++17 -ffp-contract=off -o /tmp/e7 /tmp/e7.hip &&
#   kfdemu exec -- /tmp/e7   # "exprs seed 7: 0 of 150 functions, 0 of 30 wave functions and 0 of 18 group functions differ"
#
# Undefined behaviour is kept out (shifts masked, divisors odd, signed overflow done unsigned,
# float-to-int conversions range-checked). So are the places where host and GPU legitimately
# differ: the sign of a zero from fmin/fmax (+0.0 added), the sign of a NaN an operation creates
# (copysign takes its sign from an operand), and fused multiply-adds (-ffp-contract=off). And,
# where it can, miscompiles of Debian's clang 15 for gfx90a that the interpreter reproduces as
# hardware would (docs/hip.md "Random expressions"): an i64 udiv/urem whose numerator has 33 or
# more known sign bits (-1ull % d) takes a 24-bit float path, and a | ~(uint64_t)x32 keeps a's
# high half (a third, the high half of y * 0xffffffffu for a small y as a signed 24-bit product,
# is rare and not steered around).
import random, sys

seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
nfun = int(sys.argv[2]) if len(sys.argv) > 2 else 120
R = random.Random(seed)

T = ['u32', 'i32', 'u64', 'i64', 'f32', 'f64', 'f16']
CT = {'u32': 'uint32_t', 'i32': 'int32_t', 'u64': 'uint64_t', 'i64': 'int64_t', 'f32': 'float', 'f64': 'double', 'f16': '_Float16'}

def leaf(t):
    r = R.random()
    if r < 0.45:
        return f'v_{t}[{R.randrange(4)}]'  # per-lane
    if r < 0.75:
        return f's_{t}[{R.randrange(4)}]'  # uniform (kernel argument)
    # constants
    if t == 'u32': return R.choice(['0u', '1u', '0xffffffffu', '0x80000000u', '31u', '0x7fffffffu', f'{R.randrange(1<<32)}u'])
    if t == 'i32': return R.choice(['0', '-1', '(-2147483647-1)', '2147483647', f'{R.randrange(-1000, 1000)}'])
    if t == 'u64': return '(uint64_t)' + R.choice(['0ull', '1ull', '0xffffffffffffffffull', '0x8000000000000000ull', f'{R.randrange(1<<64)}ull', '0xffffffffull'])
    if t == 'i64': return '(int64_t)' + R.choice(['0ll', '-1ll', '(-9223372036854775807ll-1)', f'{R.randrange(-10**12, 10**12)}ll'])
    if t == 'f32': return R.choice(['0.0f', '-0.0f', '1.0f', '0.5f', '3.0f', '1e30f', '1e-40f', 'INFINITY', '-2.5f', '1.17549435e-38f'])
    if t == 'f16': return R.choice(['(_Float16)0.0f', '(_Float16)-0.0f', '(_Float16)1.0f', '(_Float16)0.5f', '(_Float16)65504.0f', '(_Float16)6.1035156e-05f', '(_Float16)5.9604645e-08f', '(_Float16)-2.5f', '(_Float16)INFINITY'])
    if t == 'f64': return R.choice(['0.0', '-0.0', '1.0', '0.1', '3.0', '1e300', '4.9e-324', '2.2250738585072014e-308', '-7.25'])

def e(t, d):
    if d <= 0 or R.random() < 0.15:
        return leaf(t)
    a = lambda: e(t, d - 1)
    if t in ('u32', 'u64'):
        bits = 32 if t == 'u32' else 64
        ops = [
            lambda: f'({a()} + {a()})', lambda: f'({a()} - {a()})', lambda: f'({a()} * {a()})',
            lambda: f'({a()} ^ {a()})', lambda: f'({a()} & {a()})', lambda: f'({a()} | {a()})', lambda: f'bnot({a()})',
            lambda: f'({a()} << ({a()} & {bits-1}))', lambda: f'({a()} >> ({a()} & {bits-1}))',
            # the numerator mixes in a lane's value: clang 15 miscompiles an i64 udiv/urem whose numerator it
            # knows has 33+ sign bits (-1ull % d: the 24-bit float path), hardware and emulator alike
            lambda: f'(({a()} ^ v_{t}[{R.randrange(4)}]) / ({a()} | 1))', lambda: f'(({a()} ^ v_{t}[{R.randrange(4)}]) % ({a()} | 1))',
            lambda: f'mn(({CT[t]}){a()}, ({CT[t]}){a()})', lambda: f'mx(({CT[t]}){a()}, ({CT[t]}){a()})',
            lambda: f'({cmp(d-1)} ? {a()} : {a()})',
            lambda: f'rotl(({CT[t]}){a()}, {e("u32", d-1)})',
        ]
        if t == 'u32':
            ops += [lambda: f'(uint32_t){e("i32", d-1)}', lambda: f'(uint32_t){e("u64", d-1)}',
                    lambda: f'(uint32_t)({e("u64", d-1)} >> 32)', lambda: f'(uint32_t)__popc({a()})',
                    lambda: f'(uint32_t)__clz((int){a()})', lambda: f'(uint32_t)__ffs((int){a()})', lambda: f'__brev({a()})',
                    lambda: f'__umulhi({a()}, {a()})', lambda: f'__byte_perm({a()}, {a()}, {a()} & 0x7777u)',
                    lambda: f'f2u({e("f32", d-1)})', lambda: f'(uint32_t)({a()} * (uint64_t){a()} >> 7)',
                    lambda: f'(uint32_t)(({e("u64", d-1)} ^ v_u64[0]) % ({a()} | 1))']
        else:
            ops += [lambda: f'(uint64_t){e("i64", d-1)}', lambda: f'(uint64_t){e("u32", d-1)}',
                    lambda: f'((uint64_t){e("u32", d-1)} * {e("u32", d-1)})', lambda: f'(uint64_t)__popcll({a()})',
                    lambda: f'(uint64_t)__clzll((long long){a()})', lambda: f'(uint64_t)__brevll({a()})', lambda: f'(uint64_t)__umul64hi({a()}, {a()})',
                    lambda: f'd2u64({e("f64", d-1)})']
        return R.choice(ops)()
    if t in ('i32', 'i64'):
        u = 'uint32_t' if t == 'i32' else 'uint64_t'
        c = CT[t]
        w = 'int64_t' if t == 'i32' else 'int64_t'
        bits = 32 if t == 'i32' else 64
        ops = [
            lambda: f'({c})(({u}){a()} + ({u}){a()})', lambda: f'({c})(({u}){a()} - ({u}){a()})',
            lambda: f'({c})(({u}){a()} * ({u}){a()})', lambda: f'({a()} >> ({e("u32", d-1)} & {bits-1}))',
            lambda: f'sdiv({a()}, {a()})', lambda: f'srem({a()}, {a()})', lambda: f'mn(({CT[t]}){a()}, ({CT[t]}){a()})', lambda: f'mx(({CT[t]}){a()}, ({CT[t]}){a()})',
            lambda: f'({cmp(d-1)} ? {a()} : {a()})', lambda: f'({c}){e("u" + t[1:], d-1)}',
            lambda: f'({a()} ^ {a()})', lambda: f'(({a()} < 0) ? ({c})(0 - ({u}){a()}) : {a()})',
        ]
        if t == 'i32':
            ops += [lambda: f'(int32_t){e("i64", d-1)}', lambda: f'__mulhi({a()}, {a()})', lambda: f'f2i({e("f32", d-1)})',
                    lambda: f'(int32_t)(int8_t){a()}', lambda: f'(int32_t)(int16_t){e("u32", d-1)}']
        else:
            ops += [lambda: f'(int64_t){e("i32", d-1)}', lambda: f'(int64_t)__mul64hi({a()}, {a()})', lambda: f'd2i64({e("f64", d-1)})',
                    lambda: f'((int64_t){e("i32", d-1)} * {e("i32", d-1)})']
        return R.choice(ops)()
    if t == 'f32':
        ops = [lambda: f'({a()} + {a()})', lambda: f'({a()} - {a()})', lambda: f'({a()} * {a()})', lambda: f'({a()} / {a()})',
               lambda: f'sqrtf({a()})', lambda: f'fmaf({a()}, {a()}, {a()})', lambda: f'(fminf({a()}, {a()}) + 0.0f)',
               lambda: f'(fmaxf({a()}, {a()}) + 0.0f)', lambda: f'fabsf({a()})', lambda: f'(-({a()}))', lambda: f'(float){e("i32", d-1)}',
               lambda: f'(float){e("u32", d-1)}', lambda: f'(float){e("f64", d-1)}', lambda: f'copysignf({a()}, {leaf("f32")})',
               lambda: f'floorf({a()})', lambda: f'ceilf({a()})', lambda: f'truncf({a()})', lambda: f'rintf({a()})',
               lambda: f'ldexpf({a()}, (int)({e("i32", d-1)} % 300))', lambda: f'({cmp(d-1)} ? {a()} : {a()})',
               lambda: f'(float){e("i64", d-1)}', lambda: f'(float){e("u64", d-1)}', lambda: f'__int_as_float((int){e("u32", d-1)})',
               lambda: f'frexpm({a()})', lambda: f'(float){e("f16", d-1)}']
        return R.choice(ops)()
    if t == 'f16':
        # binary16 arithmetic: native on the device, through float on the host (one rounding of the
        # float result to binary16 is the correctly rounded result for + - * /: 24 >= 2 * 11 + 2)
        ops = [lambda: f'H_ADD({a()}, {a()})', lambda: f'H_SUB({a()}, {a()})', lambda: f'H_MUL({a()}, {a()})', lambda: f'H_DIV({a()}, {a()})',
               lambda: f'H_MIN({a()}, {a()})', lambda: f'H_MAX({a()}, {a()})', lambda: f'(_Float16)(-({a()}))', lambda: f'h_abs({a()})',
               lambda: f'(_Float16){e("f32", d-1)}', lambda: f'(_Float16)(float)({e("i32", d-1)} % 2048)',
               lambda: f'(_Float16)(float)({e("u32", d-1)} % 2048u)', lambda: f'({cmp(d-1)} ? {a()} : {a()})',
               lambda: f'h_bits((uint16_t){e("u32", d-1)})']
        return R.choice(ops)()
    if t == 'f64':
        ops = [lambda: f'({a()} + {a()})', lambda: f'({a()} - {a()})', lambda: f'({a()} * {a()})', lambda: f'({a()} / {a()})',
               lambda: f'sqrt({a()})', lambda: f'fma({a()}, {a()}, {a()})', lambda: f'(fmin({a()}, {a()}) + 0.0)',
               lambda: f'(fmax({a()}, {a()}) + 0.0)', lambda: f'fabs({a()})', lambda: f'(-({a()}))', lambda: f'(double){e("i32", d-1)}',
               lambda: f'(double){e("u32", d-1)}', lambda: f'(double){e("f32", d-1)}', lambda: f'(double){e("i64", d-1)}',
               lambda: f'(double){e("u64", d-1)}', lambda: f'floor({a()})', lambda: f'ceil({a()})', lambda: f'trunc({a()})',
               lambda: f'rint({a()})', lambda: f'ldexp({a()}, (int)({e("i32", d-1)} % 2100))', lambda: f'({cmp(d-1)} ? {a()} : {a()})',
               lambda: f'copysign({a()}, {leaf("f64")})', lambda: f'__longlong_as_double((long long){e("u64", d-1)})']
        return R.choice(ops)()

def cmp(d):
    t = R.choice(T)
    op = R.choice(['<', '<=', '>', '>=', '==', '!='])
    c = f'({e(t, d)} {op} {e(t, d)})'
    r = R.random()
    if r < 0.2:
        return f'({c} && {cmp(d-1) if d > 0 else "true"})'
    if r < 0.3:
        return f'(!{c})'
    return c

def stmt(t, d, var):
    r = R.random()
    if r < 0.5:
        return f'  {var} = {e(t, d)};\n'
    if r < 0.8:
        return f'  if ({cmp(d-1)}) {{\n  {stmt(t, d-1, var)}  }} else {{\n  {stmt(t, d-1, var)}  }}\n'
    k = R.randrange(4)
    return f'  for (uint32_t i = 0; i < (v_u32[{k}] & 7u); i++) {{\n  {var} = {e(t, d-1).replace("s_u32[0]", "(s_u32[0] + i)")};\n  }}\n'

out = []
out.append(f'''// generated by scripts/hip-exprs.py {seed} {nfun}
#include "common.h"
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>
#define HD __host__ __device__ inline
template <class T> HD T mn(T a, T b) {{ return a < b ? a : b; }}
template <class T> HD T mx(T a, T b) {{ return a > b ? a : b; }}
// bnot is ~x behind a call: clang 15 (Debian's hipcc) lowers a | ~(uint64_t)x32 for gfx90a with the
// high half of a alone (v_not and v_or on the low half only), hardware and emulator alike.
__host__ __device__ __attribute__((noinline)) uint32_t bnot(uint32_t x) {{ return ~x; }}
__host__ __device__ __attribute__((noinline)) uint64_t bnot(uint64_t x) {{ return ~x; }}
HD uint32_t rotl(uint32_t a, uint32_t b) {{ b &= 31; return (a << b) | (a >> ((32 - b) & 31)); }}
HD uint64_t rotl(uint64_t a, uint32_t b) {{ b &= 63; return (a << b) | (a >> ((64 - b) & 63)); }}
HD int32_t sdiv(int32_t a, int32_t b) {{ b |= 1; return (b == -1) ? (int32_t)(0u - (uint32_t)a) : a / b; }}
HD int32_t srem(int32_t a, int32_t b) {{ b |= 1; return (b == -1) ? 0 : a % b; }}
HD int64_t sdiv(int64_t a, int64_t b) {{ b |= 1; return (b == -1) ? (int64_t)(0ull - (uint64_t)a) : a / b; }}
HD int64_t srem(int64_t a, int64_t b) {{ b |= 1; return (b == -1) ? 0 : a % b; }}
HD uint32_t f2u(float f) {{ return (f >= 0.0f && f < 4294967040.0f) ? (uint32_t)f : 7u; }}
HD int32_t f2i(float f) {{ return (f > -2147483520.0f && f < 2147483520.0f) ? (int32_t)f : 9; }}
HD uint64_t d2u64(double f) {{ return (f >= 0.0 && f < 1.8e19) ? (uint64_t)f : 11u; }}
HD int64_t d2i64(double f) {{ return (f > -9.2e18 && f < 9.2e18) ? (int64_t)f : 13; }}
HD float frexpm(float f) {{ int e; return frexpf(f, &e) + (float)e; }}
#ifndef __HIP_DEVICE_COMPILE__
static inline uint32_t __brev(uint32_t x) {{ uint32_t r = 0; for (int i = 0; i < 32; i++) r |= ((x >> i) & 1u) << (31 - i); return r; }}
static inline uint64_t __brevll(uint64_t x) {{ uint64_t r = 0; for (int i = 0; i < 64; i++) r |= ((x >> i) & 1ull) << (63 - i); return r; }}
static inline int __popc(uint32_t x) {{ return __builtin_popcount(x); }}
static inline int __popcll(uint64_t x) {{ return __builtin_popcountll(x); }}
static inline int __clz(int x) {{ return x == 0 ? 32 : __builtin_clz((uint32_t)x); }}
static inline int __clzll(long long x) {{ return x == 0 ? 64 : __builtin_clzll((uint64_t)x); }}
static inline int __ffs(int x) {{ return __builtin_ffs(x); }}
static inline uint32_t __umulhi(uint32_t a, uint32_t b) {{ return (uint32_t)(((uint64_t)a * b) >> 32); }}
static inline int32_t __mulhi(int32_t a, int32_t b) {{ return (int32_t)(((int64_t)a * b) >> 32); }}
static inline uint64_t __umul64hi(uint64_t a, uint64_t b) {{ return (uint64_t)(((unsigned __int128)a * b) >> 64); }}
static inline int64_t __mul64hi(int64_t a, int64_t b) {{ return (int64_t)(((__int128)a * b) >> 64); }}
static inline uint32_t __byte_perm(uint32_t x, uint32_t y, uint32_t s) {{
  uint64_t v = ((uint64_t)y << 32) | x; uint32_t r = 0;
  for (int i = 0; i < 4; i++) r |= (uint32_t)((v >> (8 * ((s >> (4 * i)) & 7))) & 0xff) << (8 * i);
  return r;
}}
static inline float __int_as_float(int x) {{ float f; memcpy(&f, &x, 4); return f; }}
static inline double __longlong_as_double(long long x) {{ double f; memcpy(&f, &x, 8); return f; }}
#endif
#ifdef __HIP_DEVICE_COMPILE__
#define H_ADD(a, b) ((_Float16)(a) + (_Float16)(b))
#define H_SUB(a, b) ((_Float16)(a) - (_Float16)(b))
#define H_MUL(a, b) ((_Float16)(a) * (_Float16)(b))
#define H_DIV(a, b) ((_Float16)(a) / (_Float16)(b))
#else
#define H_ADD(a, b) ((_Float16)((float)(a) + (float)(b)))
#define H_SUB(a, b) ((_Float16)((float)(a) - (float)(b)))
#define H_MUL(a, b) ((_Float16)((float)(a) * (float)(b)))
#define H_DIV(a, b) ((_Float16)((float)(a) / (float)(b)))
#endif
HD _Float16 H_MIN(_Float16 a, _Float16 b) {{ return (_Float16)((a != a ? b : b != b ? a : a < b ? a : b) + (_Float16)0.0f); }}
HD _Float16 H_MAX(_Float16 a, _Float16 b) {{ return (_Float16)((a != a ? b : b != b ? a : a > b ? a : b) + (_Float16)0.0f); }}
HD _Float16 h_abs(_Float16 a) {{ uint16_t b; memcpy(&b, &a, 2); b &= 0x7fff; memcpy(&a, &b, 2); return a; }}
HD _Float16 h_bits(uint16_t b) {{ _Float16 a; memcpy(&a, &b, 2); return a; }}
template <class T> HD uint64_t bitsOf(T v) {{
  if constexpr (sizeof(T) == 4) {{ uint32_t b; memcpy(&b, &v, 4); return b; }} else {{ uint64_t b; memcpy(&b, &v, 8); return b; }}
}}
HD uint64_t canon(float v) {{ return v != v ? 0x7fc00000u : bitsOf(v); }}
HD uint64_t canon(double v) {{ return v != v ? 0x7ff8000000000000ull : bitsOf(v); }}
HD uint64_t canon(_Float16 v) {{ uint16_t b; memcpy(&b, &v, 2); return v != v ? 0x7e00u : b; }}
template <class T> HD uint64_t canon(T v) {{ return (uint64_t)v; }}
struct In {{
  uint32_t u32[4]; int32_t i32[4]; uint64_t u64[4]; int64_t i64[4]; float f32[4]; double f64[4]; _Float16 f16[4];
}};
// INPUTS names a lane's inputs V (v_*) and the uniform ones S (s_*) as the expressions use them.
#define INPUTS(V, S)                                                                                          \\
  const uint32_t* v_u32 = (V).u32; const int32_t* v_i32 = (V).i32; const uint64_t* v_u64 = (V).u64;         \\
  const int64_t* v_i64 = (V).i64; const float* v_f32 = (V).f32; const double* v_f64 = (V).f64;              \\
  const _Float16* v_f16 = (V).f16; const uint32_t* s_u32 = (S).u32; const int32_t* s_i32 = (S).i32;         \\
  const uint64_t* s_u64 = (S).u64; const int64_t* s_i64 = (S).i64; const float* s_f32 = (S).f32;            \\
  const double* s_f64 = (S).f64; const _Float16* s_f16 = (S).f16;                                           \\
  (void)v_u32; (void)v_i32; (void)v_u64; (void)v_i64; (void)v_f32; (void)v_f64; (void)v_f16; (void)s_u32;   \\
  (void)s_i32; (void)s_u64; (void)s_i64; (void)s_f32; (void)s_f64; (void)s_f16;
''')
for k in range(nfun):
    t = R.choice(T)
    body = ''.join(stmt(t, 3, 'r') for _ in range(R.randrange(1, 4)))
    out.append(f'''HD uint64_t f{k}(const In& V, const In& S) {{
  INPUTS(V, S)
  {CT[t]} r = {leaf(t)};
{body}  return canon(r);
}}
''')
# Wave functions: a per-lane value t (a random expression), then a cross-lane operation on it as
# HIP 5.2 defines it (amd_warp_functions.h: __shfl, __shfl_xor/up/down as ds_bpermute of a computed
# lane, with their width rules; __ballot, __any, __all; readfirstlane; butterfly reductions). The
# host runs the same operation over the 64 lanes of the wave (every lane active: blocks of 256).
WT = ['u32', 'i32', 'f32', 'u64', 'f64']
nwave = max(1, nfun // 5)
wave_host = []
for k in range(nwave):
    t = R.choice(WT)
    c = CT[t]
    body = ''.join(stmt(t, 2, 'r') for _ in range(R.randrange(1, 3)))
    out.append(f'''HD {c} wt{k}(const In& V, const In& S) {{
  INPUTS(V, S)
  {c} r = {leaf(t)};
{body}  return r;
}}
''')
    w = R.choice([64, 64, 32, 16, 8, 4, 2])
    kind = R.choice(['shfl', 'shfl', 'xor', 'up', 'down', 'reduce', 'ballot', 'any', 'all', 'first', 'divballot', 'divballot'])
    if kind == 'shfl':
        src = R.choice([str(R.randrange(0, 130)), f'(lane * {R.randrange(1, 9)} + {R.randrange(64)}) & 127', f'(int)(V.u32[{R.randrange(4)}] & 127)'])
        dev = f'  {c} r = __shfl(t, {src}, {w});'
        host = f'  {{ const In& V = W[lane]; int src = {src}; r = t[(src + (lane & ~({w} - 1))) & 63]; }}'
    elif kind == 'xor':
        m = R.randrange(0, 70)
        dev = f'  {c} r = __shfl_xor(t, {m}, {w});'
        host = f'  {{ int idx = lane ^ {m}; idx = idx >= ((lane + {w}) & ~({w} - 1)) ? lane : idx; r = t[idx & 63]; }}'
    elif kind == 'up':
        dlt = R.randrange(0, 70)
        dev = f'  {c} r = __shfl_up(t, {dlt}u, {w});'
        host = f'  {{ int idx = lane - {dlt}; idx = idx < (lane & ~({w} - 1)) ? lane : idx; r = t[idx & 63]; }}'
    elif kind == 'down':
        dlt = R.randrange(0, 70)
        dev = f'  {c} r = __shfl_down(t, {dlt}u, {w});'
        host = f'  {{ int idx = lane + {dlt}; idx = (int)((lane & ({w} - 1)) + {dlt}) >= {w} ? lane : idx; r = t[idx & 63]; }}'
    elif kind == 'reduce':
        op = R.choice(['+', 'mx', 'mn']) if t != 'f32' and t != 'f64' else '+'
        comb = (lambda x, y: f'{x} + {y}') if op == '+' else (lambda x, y: f'{op}(({c}){x}, ({c}){y})')
        dev = f'  {c} r = t;\n  for (int o = {w} / 2; o > 0; o >>= 1) r = {comb("r", "__shfl_xor(r, o, " + str(w) + ")")};'
        host = (f'  {{ {c} cur[64], nxt[64]; for (int j = 0; j < 64; j++) cur[j] = t[j];\n'
                f'    for (int o = {w} / 2; o > 0; o >>= 1) {{ for (int j = 0; j < 64; j++) {{ int idx = j ^ o; idx = idx >= ((j + {w}) & ~({w} - 1)) ? j : idx; nxt[j] = {comb("cur[j]", "cur[idx & 63]")}; }}\n'
                f'      for (int j = 0; j < 64; j++) cur[j] = nxt[j]; }}\n    r = cur[lane]; }}')
    elif kind in ('ballot', 'any', 'all', 'divballot'):
        # divballot: __ballot inside a branch some lanes skip (EXEC narrowed by a lane condition):
        # only the lanes that take it contribute, and the others keep their value
        cmpop = R.choice(['<', '>', '==', '!=', '<=', '>='])
        lit = leaf(t)
        act = 'true'
        if kind == 'divballot':  # the lane condition, an HD function: host code may not call device intrinsics
            out.append(f'''HD bool wa{k}(const In& V, const In& S) {{
  INPUTS(V, S)
  return {cmp(1)};
}}
''')
            act = f'wa{k}(V, S)'
        fn = {'ballot': '__ballot', 'any': '__any', 'all': '__all', 'divballot': '__ballot'}[kind]
        dev = f'  uint64_t r = (uint64_t){fn}((int)(t {cmpop} ({c}){lit}));'
        if kind == 'divballot':
            dev = f'  uint64_t r = 0xdeadull;\n  if ({act}) r = (uint64_t)__ballot((int)(t {cmpop} ({c}){lit}));'
        acc = {'ballot': 'r |= (uint64_t)p << j;', 'any': 'r |= p;', 'all': 'r &= p;', 'divballot': 'if (a) r |= (uint64_t)p << j; if (j == lane) own = a;'}[kind]
        init = '1' if kind == 'all' else '0'
        fin = '    r = own ? acc : 0xdeadull; }' if kind == 'divballot' else '    r = acc; }'
        host = (f'  {{ const In& S0 = S; (void)S0; uint64_t acc = {init}; bool own = false; (void)own; for (int j = 0; j < 64; j++) {{ const In& V = W[j]; const In& S = S0; (void)V; (void)S;\n'
                f'    INPUTS(V, S)\n'
                f'    uint64_t p = (t[j] {cmpop} ({c}){lit}) ? 1 : 0; bool a = {act}; (void)a; uint64_t& r = acc; {acc} }}\n' + fin)
        # the literal may name uniform inputs (s_*) and lane inputs (v_*): the device sees its own lane's
        dev = '  INPUTS(V, S)\n' + dev
    else:  # first
        dev = f'  {c} r = t; {{ union {{ {c} v; int i[sizeof({c}) / 4]; }} u; u.v = t; for (unsigned q = 0; q < sizeof({c}) / 4; q++) u.i[q] = __builtin_amdgcn_readfirstlane(u.i[q]); r = u.v; }}'
        host = '  r = t[0];'
    rtype = 'uint64_t' if kind in ('ballot', 'any', 'all', 'divballot') else c
    out.append(f'''__device__ uint64_t wd{k}(const In& V, const In& S, int lane) {{
  (void)lane;
  {c} t = wt{k}(V, S);
{dev}
  return canon(r);
}}
static uint64_t wh{k}(const In* W, int lane, const In& S) {{
  {c} t[64];
  for (int j = 0; j < 64; j++) t[j] = wt{k}(W[j], S);
  {rtype} r = 0;
{host}
  return canon(r);
}}
''')
# Group functions: every thread of a work-group of 256 stores a random value t to LDS at a
# permuted slot, the group synchronizes, each reads back a slot (permuted again, or chosen by its
# own t), then adds it (or min, max, and, or, xor, inc, dec: order-independent) atomically into one
# of 8 LDS counters and one of 8 global counters per function; the outputs are the value read and
# the group's counter after a second barrier, and the global counters after the kernel. The host
# models the group's 256 lanes and the grid's counters.
AT = {'u32': ['add', 'min', 'max', 'and', 'or', 'xor', 'inc', 'dec', 'sub'], 'i32': ['add', 'min', 'max'],
      'u64': ['add', 'min', 'max', 'and', 'or', 'xor'], 'f32': ['addint']}
ngroup = max(1, nfun // 8)
group_dev, group_host = [], []
for k in range(ngroup):
    t = R.choice(list(AT))
    c = CT[t]
    op = R.choice(AT[t])
    body = ''.join(stmt(t if t != 'f32' else 'i32', 2, 'r') for _ in range(R.randrange(1, 3)))
    rt = 'int32_t' if t == 'f32' else c
    # f32 counters add small integers (exact in any order): t is an integer below 2^12
    conv = f'(float)(r % 4096)' if t == 'f32' else 'r'
    out.append(f'''HD {c} gt{k}(const In& V, const In& S) {{
  INPUTS(V, S)
  {rt} r = {leaf(t if t != 'f32' else 'i32')};
{body}  return {conv};
}}
''')
    a1, b1 = 2 * R.randrange(128) + 1, R.randrange(256)
    if R.random() < 0.5:
        rd = f'({2 * R.randrange(128) + 1} * tid + {R.randrange(256)}) & 255'
    else:
        rd = '(uint32_t)mine & 255' if t != 'f32' else '(uint32_t)(int32_t)mine & 255'
    slot = R.choice(['tid % 8', '(uint32_t)u % 8' if t != 'f32' else '(uint32_t)(int32_t)u % 8', '(tid / 32) % 8'])
    init = {'add': '0', 'sub': '0', 'min': '(' + c + ')~0ull' if t in ('u32', 'u64') else '2147483647', 'max': '0' if t in ('u32', 'u64') else '(-2147483647-1)',
            'and': '(' + c + ')~0ull', 'or': '0', 'xor': '0', 'inc': '0', 'dec': '0', 'addint': '0.0f'}[op]
    lim = R.randrange(1, 400)
    devop = {'add': 'atomicAdd(p, u)', 'sub': 'atomicSub(p, u)', 'min': 'atomicMin(p, u)', 'max': 'atomicMax(p, u)',
             'and': 'atomicAnd(p, u)', 'or': 'atomicOr(p, u)', 'xor': 'atomicXor(p, u)', 'inc': f'atomicInc(p, {lim}u)',
             'dec': f'atomicDec(p, {lim}u)', 'addint': 'atomicAdd(p, u)'}[op]
    hostop = {'add': 'x + u', 'sub': 'x - u', 'min': 'mn(x, u)', 'max': 'mx(x, u)', 'and': 'x & u', 'or': 'x | u', 'xor': 'x ^ u',
              'inc': f'(x >= {lim}u) ? 0u : x + 1', 'dec': f'(x == 0 || x > {lim}u) ? {lim}u : x - 1', 'addint': 'x + u'}[op]
    out.append(f'''__device__ void gd{k}(const In& V, const In& S, int tid, {c}* gc, uint64_t* o, int n) {{
  __shared__ {c} sh[256];
  __shared__ {c} cnt[8];
  {c} mine = gt{k}(V, S);
  if (tid < 8) cnt[tid] = {init};
  sh[({a1} * tid + {b1}) & 255] = mine;
  __syncthreads();
  {c} u = sh[{rd}];
  {{ {c}* p = &cnt[{slot}]; {devop}; }}
  {{ {c}* p = &gc[{slot}]; {devop}; }}
  __syncthreads();
  o[0] = canon(u);
  o[(size_t)n] = canon(cnt[tid % 8]);
  __syncthreads();
}}
static void gh{k}(const In* in, const In& S, int n, uint64_t* o, {c}* gc) {{
  for (int j = 0; j < 8; j++) gc[j] = {init};
  for (int b = 0; b < n; b += 256) {{
    {c} sh[256], mineA[256], cnt[8];
    for (int j = 0; j < 8; j++) cnt[j] = {init};
    for (int tid = 0; tid < 256; tid++) {{ mineA[tid] = gt{k}(in[b + tid], S); sh[({a1} * tid + {b1}) & 255] = mineA[tid]; }}
    {c} us[256];
    for (int tid = 0; tid < 256; tid++) {{
      {c} mine = mineA[tid]; (void)mine;
      {c} u = sh[{rd}]; us[tid] = u;
      {{ {c}& x = cnt[{slot}]; x = {hostop}; }}
      {{ {c}& x = gc[{slot}]; x = {hostop}; }}
    }}
    for (int tid = 0; tid < 256; tid++) {{ o[b + tid] = canon(us[tid]); o[(size_t)n + b + tid] = canon(cnt[tid % 8]); }}
  }}
}}
''')
    group_dev.append((k, c, init))
out.append(f'constexpr int NF = {nfun}, NW = {nwave}, NG = {ngroup};\n')
out.append('__global__ void run(const In* in, In s, uint64_t* out, int n, char* gcs) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  In v = in[i]; // n is a multiple of 256: every thread is live (the group functions have barriers)\n')
for k in range(nfun):
    out.append(f'  out[(size_t){k} * n + i] = f{k}(v, s);\n')
out.append('  int lane = threadIdx.x % 64;\n')
for k in range(nwave):
    out.append(f'  out[(size_t)({nfun} + {k}) * n + i] = wd{k}(v, s, lane);\n')
for k, c, _ in group_dev:
    out.append(f'  gd{k}(v, s, threadIdx.x, ({c}*)(gcs + {k} * 64), out + (size_t)({nfun} + {nwave} + 2 * {k}) * n + i, n);\n')
out.append('}\n')
out.append(f'''
static uint64_t rng = {seed * 2654435761 + 1}ull;
static uint64_t next() {{ rng = rng * 6364136223846793005ull + 1442695040888963407ull; return rng; }}
static uint64_t pick64() {{
  static const uint64_t special[] = {{0, 1, 2, 0xffffffffffffffffull, 0x8000000000000000ull, 0x7fffffffffffffffull, 0xffffffffull,
    0x80000000ull, 0x7fffffffull, 0x100000000ull, 0x3ff0000000000000ull, 0x7ff0000000000000ull, 0x0010000000000000ull, 1ull << 52}};
  uint64_t r = next();
  switch (r % 4) {{
  case 0: return special[(r >> 8) % 14];
  case 1: return (r >> 16) % 200 - 100;
  default: return next();
  }}
}}
static void fill(In& x) {{
  for (int j = 0; j < 4; j++) {{
    {{ uint16_t h = (uint16_t)pick64(); if (next() % 2) h = (uint16_t)(((next() % 2) << 15) | ((10 + next() % 10) << 10) | (next() % 1024)); memcpy(&x.f16[j], &h, 2); }}
    x.u32[j] = (uint32_t)pick64(); x.i32[j] = (int32_t)pick64(); x.u64[j] = pick64(); x.i64[j] = (int64_t)pick64();
    uint64_t b = pick64();
    switch (next() % 4) {{
    case 0: x.f32[j] = (float)(int)(b % 201) - 100.0f; x.f64[j] = (double)(int64_t)(b % 2001) / 8.0 - 100.0; break;
    case 1: {{ uint32_t w = (uint32_t)b; memcpy(&x.f32[j], &w, 4); memcpy(&x.f64[j], &b, 8); break; }}
    default: x.f32[j] = (float)((double)(int64_t)b / 9.2e18 * 1e6); x.f64[j] = (double)(int64_t)b / 3.0e10; break;
    }}
  }}
}}
int main() {{
  const int n = 1024;
  std::vector<In> in(n);
  for (auto& x : in) fill(x);
  In s; fill(s);
  In* din; uint64_t* dout;
  CHECK(hipMalloc(&din, n * sizeof(In)));
  CHECK(hipMalloc(&dout, (size_t)(NF + NW + 2 * NG) * n * 8));
  std::vector<uint64_t> gwant((size_t)2 * NG * n);
  std::vector<char> gcw(NG * 64), gci(NG * 64);
  {{ghosts}}
  char* dgc;
  CHECK(hipMalloc(&dgc, NG * 64));
  CHECK(hipMemcpy(dgc, gci.data(), NG * 64, hipMemcpyHostToDevice));
  CHECK(hipMemcpy(din, in.data(), n * sizeof(In), hipMemcpyHostToDevice));
  run<<<n / 256, 256>>>(din, s, dout, n, dgc);
  CHECK(hipGetLastError());
  std::vector<uint64_t> got((size_t)(NF + NW + 2 * NG) * n);
  std::vector<char> gcg(NG * 64);
  CHECK(hipMemcpy(gcg.data(), dgc, NG * 64, hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(got.data(), dout, got.size() * 8, hipMemcpyDeviceToHost));
  uint64_t (*fs[])(const In&, const In&) = {{{", ".join(f"f{k}" for k in range(nfun))}}};
  int bad = 0;
  for (int k = 0; k < NF; k++)
    for (int i = 0; i < n; i++) {{
      uint64_t want = fs[k](in[i], s);
      if (got[(size_t)k * n + i] != want) {{
        if (bad++ < 20) fprintf(stderr, "f%d lane %d: got %#llx want %#llx\\n", k, i, (unsigned long long)got[(size_t)k * n + i], (unsigned long long)want);
        break;
      }}
    }}
  uint64_t (*ws[])(const In*, int, const In&) = {{{", ".join(f"wh{k}" for k in range(nwave))}}};
  int wbad = 0;
  for (int k = 0; k < NW; k++)
    for (int i = 0; i < n; i++) {{
      uint64_t want = ws[k](&in[i / 64 * 64], i % 64, s);
      if (got[(size_t)(NF + k) * n + i] != want) {{
        if (wbad++ < 20) fprintf(stderr, "wave function %d lane %d: got %#llx want %#llx\\n", k, i, (unsigned long long)got[(size_t)(NF + k) * n + i], (unsigned long long)want);
        break;
      }}
    }}
  int gbad = 0;
  for (int k = 0; k < NG; k++) {{
    bool ok = memcmp(&gcg[k * 64], &gcw[k * 64], 64) == 0;
    for (size_t i = 0; ok && i < (size_t)2 * n; i++)
      if (got[(size_t)(NF + NW) * n + (size_t)2 * k * n + i] != gwant[(size_t)2 * k * n + i]) {{
        fprintf(stderr, "group function %d %s %zu: got %#llx want %#llx\\n", k, i < (size_t)n ? "value" : "LDS counter", i % n,
                (unsigned long long)got[(size_t)(NF + NW) * n + (size_t)2 * k * n + i], (unsigned long long)gwant[(size_t)2 * k * n + i]);
        ok = false;
      }}
    if (!ok && gbad < 20 && memcmp(&gcg[k * 64], &gcw[k * 64], 64) != 0) fprintf(stderr, "group function %d: global counters differ\\n", k);
    gbad += !ok;
  }}
  printf("exprs seed {seed}: %d of %d functions, %d of %d wave functions and %d of %d group functions differ\\n", bad, NF, wbad, NW, gbad, NG);
  bad += wbad + gbad;
  return bad != 0;
}}
''')
ghosts = '\n  '.join(f'{{ {c}* p = ({c}*)&gci[{k} * 64]; for (int j = 0; j < 8; j++) p[j] = {init}; }} gh{k}(in.data(), s, n, &gwant[(size_t)2 * {k} * n], ({c}*)&gcw[{k} * 64]);' for k, c, init in group_dev)
src = ''.join(out).replace('{ghosts}', ghosts)
sys.stdout.write(src)
