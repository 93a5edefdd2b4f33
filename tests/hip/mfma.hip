// gfx90a matrix cores through HIP's MFMA builtins, as rocWMMA-style code uses them: every shape
// family (f16, bf16_1k, f32 with 1, 4 and 16 blocks, i8, f64) and the CBSZ/ABID broadcast. The
// host scatters A, B and C into the lanes and registers of the documented layouts (AMD lab notes
// "AMD matrix cores", the Matrix Instruction Calculator's CDNA2 tables, written out per shape here)
// and gathers D back; small integer values make every product and sum exact, so D = A·B + C is
// checked bit for bit.
#include "common.h"
#include <cstring>
#include <vector>

typedef _Float16 half4 __attribute__((ext_vector_type(4)));
typedef short shortx4 __attribute__((ext_vector_type(4)));
typedef float floatx4 __attribute__((ext_vector_type(4)));
typedef float floatx16 __attribute__((ext_vector_type(16)));
typedef int intx16 __attribute__((ext_vector_type(16)));
typedef double doublex4 __attribute__((ext_vector_type(4)));

// Each kernel is one wave: lane l reads its A and B operands and its C registers from a[l], b[l],
// c[l*R + r] and writes D to d[l*R + r].
__global__ void k_32x32x8f16(const half4* a, const half4* b, const float* c, float* d) {
  int l = threadIdx.x;
  floatx16 acc;
  for (int r = 0; r < 16; r++) acc[r] = c[l * 16 + r];
  acc = __builtin_amdgcn_mfma_f32_32x32x8f16(a[l], b[l], acc, 0, 0, 0);
  for (int r = 0; r < 16; r++) d[l * 16 + r] = acc[r];
}

__global__ void k_16x16x16f16(const half4* a, const half4* b, const float* c, float* d) {
  int l = threadIdx.x;
  floatx4 acc;
  for (int r = 0; r < 4; r++) acc[r] = c[l * 4 + r];
  acc = __builtin_amdgcn_mfma_f32_16x16x16f16(a[l], b[l], acc, 0, 0, 0);
  for (int r = 0; r < 4; r++) d[l * 4 + r] = acc[r];
}

__global__ void k_32x32x8bf16_1k(const shortx4* a, const shortx4* b, const float* c, float* d) {
  int l = threadIdx.x;
  floatx16 acc;
  for (int r = 0; r < 16; r++) acc[r] = c[l * 16 + r];
  acc = __builtin_amdgcn_mfma_f32_32x32x8bf16_1k(a[l], b[l], acc, 0, 0, 0);
  for (int r = 0; r < 16; r++) d[l * 16 + r] = acc[r];
}

__global__ void k_32x32x2f32(const float* a, const float* b, const float* c, float* d) {
  int l = threadIdx.x;
  floatx16 acc;
  for (int r = 0; r < 16; r++) acc[r] = c[l * 16 + r];
  acc = __builtin_amdgcn_mfma_f32_32x32x2f32(a[l], b[l], acc, 0, 0, 0);
  for (int r = 0; r < 16; r++) d[l * 16 + r] = acc[r];
}

__global__ void k_16x16x1f32(const float* a, const float* b, const float* c, float* d) {
  int l = threadIdx.x;
  floatx16 acc;
  for (int r = 0; r < 16; r++) acc[r] = c[l * 16 + r];
  acc = __builtin_amdgcn_mfma_f32_16x16x1f32(a[l], b[l], acc, 0, 0, 0);
  for (int r = 0; r < 16; r++) d[l * 16 + r] = acc[r];
}

// 16 blocks of 4x4x1; with CBSZ=2, ABID=1 every block of a group of four uses the A of the
// group's block 1.
template <int CBSZ, int ABID>
__global__ void k_4x4x1f32(const float* a, const float* b, const float* c, float* d) {
  int l = threadIdx.x;
  floatx4 acc;
  for (int r = 0; r < 4; r++) acc[r] = c[l * 4 + r];
  acc = __builtin_amdgcn_mfma_f32_4x4x1f32(a[l], b[l], acc, CBSZ, ABID, 0);
  for (int r = 0; r < 4; r++) d[l * 4 + r] = acc[r];
}

__global__ void k_32x32x8i8(const int* a, const int* b, const int* c, int* d) {
  int l = threadIdx.x;
  intx16 acc;
  for (int r = 0; r < 16; r++) acc[r] = c[l * 16 + r];
  acc = __builtin_amdgcn_mfma_i32_32x32x8i8(a[l], b[l], acc, 0, 0, 0);
  for (int r = 0; r < 16; r++) d[l * 16 + r] = acc[r];
}

__global__ void k_16x16x4f64(const double* a, const double* b, const double* c, double* d) {
  int l = threadIdx.x;
  doublex4 acc;
  for (int r = 0; r < 4; r++) acc[r] = c[l * 4 + r];
  acc = __builtin_amdgcn_mfma_f64_16x16x4f64(a[l], b[l], acc, 0, 0, 0);
  for (int r = 0; r < 4; r++) d[l * 4 + r] = acc[r];
}

// Small integers, signed, different for every element (so a transposed or misplaced element
// changes the result).
static int val(int seed, int i) { return (int)((unsigned)(i * 2654435761u + seed * 40503u) >> 27) - 16; }

static unsigned short bf16(float f) {
  unsigned u;
  memcpy(&u, &f, 4);
  return (unsigned short)(u >> 16); // exact: small integers
}

// Where an element of a matrix lives: lane and slot (a register, or an element within the lane's
// operand).
struct Pos {
  int lane, slot;
};

// A shape's layout: M x N output blocks, K deep, `blocks` of them; aPos(b, i, k), bPos(b, k, j),
// dPos(b, i, j).
struct Shape {
  const char* name;
  int M, N, K, blocks;
  Pos (*aPos)(int b, int i, int k);
  Pos (*bPos)(int b, int k, int j);
  Pos (*dPos)(int b, int i, int j);
  int aSlots, dRegs;
};

// 32x32x8 f16/bf16: a lane holds 4 consecutive k of one row of A (column of B); D in 16 registers,
// row 8*(r/4) + 4*(lane/32) + r%4.
static Pos a32x32x8(int, int i, int k) { return {i + 32 * (k / 4), k % 4}; }
static Pos b32x32x8(int, int k, int j) { return {j + 32 * (k / 4), k % 4}; }
static Pos d32x32(int, int i, int j) { return {32 * ((i / 4) % 2) + j, 4 * (i / 8) + i % 4}; }
// 16x16x16 f16: 4 k per lane, 4 lane groups of 16; D row 4*(lane/16) + r.
static Pos a16x16x16(int, int i, int k) { return {i + 16 * (k / 4), k % 4}; }
static Pos b16x16x16(int, int k, int j) { return {j + 16 * (k / 4), k % 4}; }
static Pos d16x16(int, int i, int j) { return {16 * (i / 4) + j, i % 4}; }
// 32x32x2 f32: one k per lane.
static Pos a32x32x2(int, int i, int k) { return {i + 32 * k, 0}; }
static Pos b32x32x2(int, int k, int j) { return {j + 32 * k, 0}; }
// 16x16x1 f32, 4 blocks: block b in lanes 16b..16b+15 of A and B, registers 4b..4b+3 of D.
static Pos a16x16x1(int b, int i, int) { return {i + 16 * b, 0}; }
static Pos b16x16x1(int b, int, int j) { return {j + 16 * b, 0}; }
static Pos d16x16x1(int b, int i, int j) { return {16 * (i / 4) + j, 4 * b + i % 4}; }
// 4x4x1 f32, 16 blocks: block b in lanes 4b..4b+3; D row i in register i.
static Pos a4x4x1(int b, int i, int) { return {i + 4 * b, 0}; }
static Pos b4x4x1(int b, int, int j) { return {j + 4 * b, 0}; }
static Pos d4x4x1(int b, int i, int j) { return {4 * b + j, i}; }
// 32x32x8 i8: 4 k per lane as the bytes of one dword.
// 16x16x4 f64: one k per lane; D row 4*r + lane/16.
static Pos a16x16x4(int, int i, int k) { return {i + 16 * k, 0}; }
static Pos b16x16x4(int, int k, int j) { return {j + 16 * k, 0}; }
static Pos d16x16f64(int, int i, int j) { return {16 * (i % 4) + j, i / 4}; }

static const Shape kF16_32 = {"v_mfma_f32_32x32x8f16", 32, 32, 8, 1, a32x32x8, b32x32x8, d32x32, 4, 16};
static const Shape kF16_16 = {"v_mfma_f32_16x16x16f16", 16, 16, 16, 1, a16x16x16, b16x16x16, d16x16, 4, 4};
static const Shape kBF16 = {"v_mfma_f32_32x32x8bf16_1k", 32, 32, 8, 1, a32x32x8, b32x32x8, d32x32, 4, 16};
static const Shape kF32_32 = {"v_mfma_f32_32x32x2f32", 32, 32, 2, 1, a32x32x2, b32x32x2, d32x32, 1, 16};
static const Shape kF32_16 = {"v_mfma_f32_16x16x1f32", 16, 16, 1, 4, a16x16x1, b16x16x1, d16x16x1, 1, 16};
static const Shape kF32_4 = {"v_mfma_f32_4x4x1f32", 4, 4, 1, 16, a4x4x1, b4x4x1, d4x4x1, 1, 4};
static const Shape kI8 = {"v_mfma_i32_32x32x8i8", 32, 32, 8, 1, a32x32x8, b32x32x8, d32x32, 4, 16};
static const Shape kF64 = {"v_mfma_f64_16x16x4f64", 16, 16, 4, 1, a16x16x4, b16x16x4, d16x16f64, 1, 4};

// Matrices of one test: A[b][i][k], B[b][k][j], C[b][i][j] as ints; expected D.
struct Mats {
  const Shape& s;
  std::vector<int> A, B, C;
  std::vector<long long> D;
  int aOf(int b, int i, int k) const { return A[(b * s.M + i) * s.K + k]; }
  int bOf(int b, int k, int j) const { return B[(b * s.K + k) * s.N + j]; }
  int cOf(int b, int i, int j) const { return C[(b * s.M + i) * s.N + j]; }
  // aBlock(b): the block whose A feeds block b (CBSZ/ABID broadcast).
  Mats(const Shape& sh, int seed, int cbsz = 0, int abid = 0) : s(sh) {
    A.resize(s.blocks * s.M * s.K);
    B.resize(s.blocks * s.K * s.N);
    C.resize(s.blocks * s.M * s.N);
    D.resize(C.size());
    for (size_t i = 0; i < A.size(); i++) A[i] = val(seed, (int)i);
    for (size_t i = 0; i < B.size(); i++) B[i] = val(seed + 1, (int)i);
    for (size_t i = 0; i < C.size(); i++) C[i] = 64 * val(seed + 2, (int)i);
    for (int b = 0; b < s.blocks; b++) {
      int ab = (b >> cbsz << cbsz) + abid;
      for (int i = 0; i < s.M; i++)
        for (int j = 0; j < s.N; j++) {
          long long sum = cOf(b, i, j);
          for (int k = 0; k < s.K; k++) sum += (long long)aOf(ab, i, k) * bOf(b, k, j);
          D[(b * s.M + i) * s.N + j] = sum;
        }
    }
  }
};

static int failures;

// check compares D gathered from the lanes with the expected one.
template <typename T>
static void check(const Mats& m, const std::vector<T>& d, const char* what) {
  const Shape& s = m.s;
  int bad = 0;
  for (int b = 0; b < s.blocks; b++)
    for (int i = 0; i < s.M; i++)
      for (int j = 0; j < s.N; j++) {
        Pos p = s.dPos(b, i, j);
        T got = d[p.lane * s.dRegs + p.slot];
        long long want = m.D[(b * s.M + i) * s.N + j];
        if ((double)got != (double)want && bad++ < 5)
          fprintf(stderr, "%s: block %d D[%d][%d] = %g (lane %d, register %d), want %lld\n", what, b, i, j,
                  (double)got, p.lane, p.slot, want);
      }
  if (bad) {
    fprintf(stderr, "%s: %d of %d elements wrong\n", what, bad, s.blocks * s.M * s.N);
    failures++;
  } else {
    printf("%s: %d elements exact\n", what, s.blocks * s.M * s.N);
  }
}

// run scatters A and B (as TI: the operand element type, aSlots per lane) and C (as TC), runs
// the kernel and checks D.
template <typename TI, typename TC, typename K>
static void run(const Mats& m, K kernel, TI (*conv)(int), const char* what) {
  const Shape& s = m.s;
  std::vector<TI> a(64 * s.aSlots), b(64 * s.aSlots);
  std::vector<TC> c(64 * s.dRegs), d(64 * s.dRegs);
  std::vector<bool> seenA(a.size()), seenB(b.size()), seenD(c.size());
  for (int bl = 0; bl < s.blocks; bl++)
    for (int k = 0; k < s.K; k++) {
      for (int i = 0; i < s.M; i++) {
        Pos p = s.aPos(bl, i, k);
        a[p.lane * s.aSlots + p.slot] = conv(m.aOf(bl, i, k));
        seenA[p.lane * s.aSlots + p.slot] = true;
      }
      for (int j = 0; j < s.N; j++) {
        Pos p = s.bPos(bl, k, j);
        b[p.lane * s.aSlots + p.slot] = conv(m.bOf(bl, k, j));
        seenB[p.lane * s.aSlots + p.slot] = true;
      }
    }
  for (int bl = 0; bl < s.blocks; bl++)
    for (int i = 0; i < s.M; i++)
      for (int j = 0; j < s.N; j++) {
        Pos p = s.dPos(bl, i, j);
        c[p.lane * s.dRegs + p.slot] = (TC)m.cOf(bl, i, j);
        seenD[p.lane * s.dRegs + p.slot] = true;
      }
  // The layouts are bijections onto the lanes' operands and registers.
  for (size_t i = 0; i < seenA.size(); i++) EXPECT(seenA[i] && seenB[i], "%s: A/B slot %zu unused", what, i);
  for (size_t i = 0; i < seenD.size(); i++) EXPECT(seenD[i], "%s: D slot %zu unused", what, i);
  TI *da, *db;
  TC *dc, *dd;
  CHECK(hipMalloc(&da, a.size() * sizeof(TI)));
  CHECK(hipMalloc(&db, b.size() * sizeof(TI)));
  CHECK(hipMalloc(&dc, c.size() * sizeof(TC)));
  CHECK(hipMalloc(&dd, d.size() * sizeof(TC)));
  CHECK(hipMemcpy(da, a.data(), a.size() * sizeof(TI), hipMemcpyHostToDevice));
  CHECK(hipMemcpy(db, b.data(), b.size() * sizeof(TI), hipMemcpyHostToDevice));
  CHECK(hipMemcpy(dc, c.data(), c.size() * sizeof(TC), hipMemcpyHostToDevice));
  kernel(da, db, dc, dd);
  CHECK(hipGetLastError());
  CHECK(hipMemcpy(d.data(), dd, d.size() * sizeof(TC), hipMemcpyDeviceToHost));
  CHECK(hipFree(da));
  CHECK(hipFree(db));
  CHECK(hipFree(dc));
  CHECK(hipFree(dd));
  check(m, d, what);
}

static _Float16 toF16(int v) { return (_Float16)v; }
static short toBF16(int v) { return (short)bf16((float)v); }
static float toF32(int v) { return (float)v; }
static double toF64(int v) { return (double)v; }
static int toI32(int v) { return v; }

int main() {
  run<_Float16, float>(Mats(kF16_32, 1), [](_Float16* a, _Float16* b, float* c, float* d) {
    k_32x32x8f16<<<1, 64>>>((const half4*)a, (const half4*)b, c, d);
  }, toF16, kF16_32.name);
  run<_Float16, float>(Mats(kF16_16, 2), [](_Float16* a, _Float16* b, float* c, float* d) {
    k_16x16x16f16<<<1, 64>>>((const half4*)a, (const half4*)b, c, d);
  }, toF16, kF16_16.name);
  run<short, float>(Mats(kBF16, 3), [](short* a, short* b, float* c, float* d) {
    k_32x32x8bf16_1k<<<1, 64>>>((const shortx4*)a, (const shortx4*)b, c, d);
  }, toBF16, kBF16.name);
  run<float, float>(Mats(kF32_32, 4), [](float* a, float* b, float* c, float* d) {
    k_32x32x2f32<<<1, 64>>>(a, b, c, d);
  }, toF32, kF32_32.name);
  run<float, float>(Mats(kF32_16, 5), [](float* a, float* b, float* c, float* d) {
    k_16x16x1f32<<<1, 64>>>(a, b, c, d);
  }, toF32, kF32_16.name);
  run<float, float>(Mats(kF32_4, 6), [](float* a, float* b, float* c, float* d) {
    k_4x4x1f32<0, 0><<<1, 64>>>(a, b, c, d);
  }, toF32, kF32_4.name);
  run<float, float>(Mats(kF32_4, 7, 2, 1), [](float* a, float* b, float* c, float* d) {
    k_4x4x1f32<2, 1><<<1, 64>>>(a, b, c, d);
  }, toF32, "v_mfma_f32_4x4x1f32 cbsz:2 abid:1");
  // i8: the four k of a lane are the bytes of one dword (A and B scattered as bytes).
  {
    Mats m(kI8, 8);
    const Shape& s = m.s;
    std::vector<signed char> a(64 * 4), b(64 * 4);
    std::vector<int> c(64 * 16), d(64 * 16);
    for (int k = 0; k < s.K; k++) {
      for (int i = 0; i < s.M; i++) {
        Pos p = s.aPos(0, i, k);
        a[p.lane * 4 + p.slot] = (signed char)m.aOf(0, i, k);
      }
      for (int j = 0; j < s.N; j++) {
        Pos p = s.bPos(0, k, j);
        b[p.lane * 4 + p.slot] = (signed char)m.bOf(0, k, j);
      }
    }
    for (int i = 0; i < s.M; i++)
      for (int j = 0; j < s.N; j++) {
        Pos p = s.dPos(0, i, j);
        c[p.lane * 16 + p.slot] = m.cOf(0, i, j);
      }
    int *da, *db, *dc, *dd;
    CHECK(hipMalloc(&da, 256));
    CHECK(hipMalloc(&db, 256));
    CHECK(hipMalloc(&dc, c.size() * 4));
    CHECK(hipMalloc(&dd, d.size() * 4));
    CHECK(hipMemcpy(da, a.data(), 256, hipMemcpyHostToDevice));
    CHECK(hipMemcpy(db, b.data(), 256, hipMemcpyHostToDevice));
    CHECK(hipMemcpy(dc, c.data(), c.size() * 4, hipMemcpyHostToDevice));
    k_32x32x8i8<<<1, 64>>>(da, db, dc, dd);
    CHECK(hipGetLastError());
    CHECK(hipMemcpy(d.data(), dd, d.size() * 4, hipMemcpyDeviceToHost));
    check(m, d, kI8.name);
    CHECK(hipFree(da));
    CHECK(hipFree(db));
    CHECK(hipFree(dc));
    CHECK(hipFree(dd));
  }
  run<double, double>(Mats(kF64, 9), [](double* a, double* b, double* c, double* d) {
    k_16x16x4f64<<<1, 64>>>(a, b, c, d);
  }, toF64, kF64.name);
  (void)toI32;
  if (failures) return 1;
  printf("mfma: ok\n");
  return 0;
}
