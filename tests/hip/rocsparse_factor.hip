// hipcc-flags: -std=c++17 -lrocsparse
// Debian's rocSPARSE 2.2 (librocsparse0, its own gfx90a kernels): the factorizations and the
// other storage formats. Matrices are built from factors with small integer entries and
// power-of-two pivots, so every division is exact and every float result an exact integer the
// host knows beforehand:
//   - csrilu0 of A = L U on the pattern of the symbolic product (ILU(0) on a pattern that holds
//     the factors' is the exact LU): rows wait for the rows they depend on by spinning on a
//     done flag in memory, across work-groups;
//   - csric0 of the lower part of A = L L^T (square roots of 1, 4, 16);
//   - csrsm_solve of U X = B for 8 right-hand sides (upper, non-unit, level-scheduled);
//   - csr2bsr and bsrmv (3 x 3 blocks, both block orders), csr2ell and ellmv, csr2hyb and
//     hybmv, coomv, csrgeam (2 A - B), each y = A x + 2 y against the host;
//   - gtsv, a diagonally dominant tridiagonal system (not exact: within 4e-5 of the solution).
#include "common.h"
#include <rocsparse/rocsparse.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <vector>

#define SCHECK(x)                                                                             \
  do {                                                                                        \
    rocsparse_status s_ = (x);                                                                \
    EXPECT(s_ == rocsparse_status_success, "%s: rocsparse status %d", #x, int(s_));           \
  } while (0)

// lap returns the seconds since its last call (the program's start the first time).
static double lap() {
  static auto last = std::chrono::steady_clock::now();
  auto now = std::chrono::steady_clock::now();
  double s = std::chrono::duration<double>(now - last).count();
  last = now;
  return s;
}

static uint64_t rng = 0x13198a2e03707344ull;
static uint32_t next32() {
  rng = rng * 6364136223846793005ull + 1442695040888963407ull;
  return uint32_t(rng >> 32);
}

template <class T>
static T* dev(const std::vector<T>& h) {
  T* d;
  CHECK(hipMalloc(&d, h.size() * sizeof(T) + 1));
  if (!h.empty()) CHECK(hipMemcpy(d, h.data(), h.size() * sizeof(T), hipMemcpyHostToDevice));
  return d;
}

template <class T>
static std::vector<T> host(const T* d, size_t n) {
  std::vector<T> h(n);
  CHECK(hipMemcpy(h.data(), d, n * sizeof(T), hipMemcpyDeviceToHost));
  return h;
}

template <class T>
static void expectEqual(const char* what, const std::vector<T>& got, const std::vector<T>& want) {
  EXPECT(got.size() == want.size(), "%s: %zu elements, want %zu", what, got.size(), want.size());
  for (size_t i = 0; i < want.size(); i++)
    EXPECT(std::memcmp(&got[i], &want[i], sizeof(T)) == 0, "%s: element %zu: %g, want %g", what, i,
           double(got[i]), double(want[i]));
  printf("%s: ok (%zu elements, %.1f s)\n", what, want.size(), lap());
}

// expectSame compares values, not bits: a factorization's entries where the factor has none are
// zeros divided by a pivot, and a solution's zeros too: -0 when the pivot is negative (0 / -2).
static void expectSame(const char* what, const std::vector<float>& got, const std::vector<float>& want) {
  EXPECT(got.size() == want.size(), "%s: %zu elements, want %zu", what, got.size(), want.size());
  for (size_t i = 0; i < want.size(); i++)
    EXPECT(got[i] == want[i], "%s: element %zu: %g, want %g", what, i, double(got[i]), double(want[i]));
  printf("%s: ok (%zu elements, %.1f s)\n", what, want.size(), lap());
}

// Sparse is a host matrix as rows of column -> value (sorted), with explicit zeros kept.
struct Sparse {
  int m;
  std::vector<std::map<int, float>> r;
  explicit Sparse(int m) : m(m), r(m) {}
  void csr(std::vector<int>& ptr, std::vector<int>& col, std::vector<float>& val) const {
    ptr.assign(1, 0), col.clear(), val.clear();
    for (auto& row : r) {
      for (auto& [c, v] : row) col.push_back(c), val.push_back(v);
      ptr.push_back(int(col.size()));
    }
  }
  // times is the product with its symbolic pattern: an entry wherever a term exists, even if the
  // terms cancel.
  Sparse times(const Sparse& b) const {
    Sparse c(m);
    for (int i = 0; i < m; i++)
      for (auto& [k, v] : r[i])
        for (auto& [j, w] : b.r[k]) c.r[i][j] += v * w;
    return c;
  }
  Sparse transpose() const {
    Sparse t(m);
    for (int i = 0; i < m; i++)
      for (auto& [j, v] : r[i]) t.r[j][i] = v;
    return t;
  }
};

static float small(int k) { // a nonzero integer in [-k, k]
  int v = int(next32() % (2 * k)) - k;
  return float(v >= 0 ? v + 1 : v);
}
static float pivot() { // a power of two, either sign
  static const float p[] = {1, 2, 4, -1, -2};
  return p[next32() % 5];
}

// triangle returns a random triangular matrix: up to k entries per row within band columns of the
// diagonal, below it (lower) or above it, and diag(i) on the diagonal.
template <class D>
static Sparse triangle(int m, bool lower, int k, int band, D diag) {
  Sparse t(m);
  for (int i = 0; i < m; i++) {
    t.r[i][i] = diag(i);
    int n = int(next32() % (k + 1));
    for (int e = 0; e < n; e++) {
      int d = 1 + int(next32() % band);
      int j = lower ? i - d : i + d;
      if (j >= 0 && j < m) t.r[i][j] = small(2);
    }
  }
  return t;
}

struct Dev {
  int *ptr, *col;
  float* val;
  int nnz;
  explicit Dev(const Sparse& s) {
    std::vector<int> p, c;
    std::vector<float> v;
    s.csr(p, c, v);
    ptr = dev(p), col = dev(c), val = dev(v), nnz = p.back();
  }
  ~Dev() {
    CHECK(hipFree(ptr));
    CHECK(hipFree(col));
    CHECK(hipFree(val));
  }
};

static void* scratch(size_t bytes) {
  void* p;
  CHECK(hipMalloc(&p, std::max<size_t>(bytes, 1)));
  return p;
}

int main() {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  lap();
  rocsparse_handle h;
  SCHECK(rocsparse_create_handle(&h));
  rocsparse_mat_descr descr;
  SCHECK(rocsparse_create_mat_descr(&descr));
  const float one = 1, two = 2, minus1 = -1;

  // csrilu0: A = L U, L unit lower and U upper with power-of-two pivots; the result in place is
  // L's strict lower part and U's upper part on A's pattern, zero where neither has an entry.
  {
    const int m = 4000;
    Sparse l = triangle(m, true, 3, 150, [](int) { return 1.0f; });
    Sparse u = triangle(m, false, 3, 150, [](int) { return pivot(); });
    Sparse a = l.times(u);
    Sparse want(m);
    for (int i = 0; i < m; i++)
      for (auto& [j, v] : a.r[i]) {
        const auto& f = j < i ? l.r[i] : u.r[i];
        auto it = f.find(j);
        want.r[i][j] = it == f.end() ? 0.0f : it->second;
      }
    Dev d(a);
    rocsparse_mat_info info;
    SCHECK(rocsparse_create_mat_info(&info));
    size_t bytes = 0;
    SCHECK(rocsparse_scsrilu0_buffer_size(h, m, d.nnz, descr, d.val, d.ptr, d.col, info, &bytes));
    void* temp = scratch(bytes);
    SCHECK(rocsparse_scsrilu0_analysis(h, m, d.nnz, descr, d.val, d.ptr, d.col, info, rocsparse_analysis_policy_force,
                                       rocsparse_solve_policy_auto, temp));
    SCHECK(rocsparse_scsrilu0(h, m, d.nnz, descr, d.val, d.ptr, d.col, info, rocsparse_solve_policy_auto, temp));
    CHECK(hipDeviceSynchronize());
    rocsparse_int zp = -2;
    EXPECT(rocsparse_csrilu0_zero_pivot(h, info, &zp) == rocsparse_status_success && zp == -1, "csrilu0: zero pivot %d",
           zp);
    std::vector<int> p, c;
    std::vector<float> v;
    want.csr(p, c, v);
    printf("csrilu0: %d rows, %d entries\n", m, d.nnz);
    expectSame("csrilu0 (L and U in place)", host(d.val, d.nnz), v);
    CHECK(hipFree(temp));
    SCHECK(rocsparse_destroy_mat_info(info));
  }

  // csric0: the lower part of A = L L^T, L lower with a positive power-of-two diagonal.
  {
    const int m = 4000;
    static const float diag[] = {1, 2, 4};
    Sparse l = triangle(m, true, 3, 150, [](int) { return diag[next32() % 3]; });
    Sparse full = l.times(l.transpose());
    Sparse a(m), want(m);
    for (int i = 0; i < m; i++)
      for (auto& [j, v] : full.r[i])
        if (j <= i) {
          a.r[i][j] = v;
          auto it = l.r[i].find(j);
          want.r[i][j] = it == l.r[i].end() ? 0.0f : it->second;
        }
    Dev d(a);
    rocsparse_mat_info info;
    SCHECK(rocsparse_create_mat_info(&info));
    size_t bytes = 0;
    SCHECK(rocsparse_scsric0_buffer_size(h, m, d.nnz, descr, d.val, d.ptr, d.col, info, &bytes));
    void* temp = scratch(bytes);
    SCHECK(rocsparse_scsric0_analysis(h, m, d.nnz, descr, d.val, d.ptr, d.col, info, rocsparse_analysis_policy_force,
                                      rocsparse_solve_policy_auto, temp));
    SCHECK(rocsparse_scsric0(h, m, d.nnz, descr, d.val, d.ptr, d.col, info, rocsparse_solve_policy_auto, temp));
    CHECK(hipDeviceSynchronize());
    rocsparse_int zp = -2;
    EXPECT(rocsparse_csric0_zero_pivot(h, info, &zp) == rocsparse_status_success && zp == -1, "csric0: zero pivot %d",
           zp);
    std::vector<int> p, c;
    std::vector<float> v;
    want.csr(p, c, v);
    printf("csric0: %d rows, %d entries\n", m, d.nnz);
    expectSame("csric0 (L in place)", host(d.val, d.nnz), v);
    CHECK(hipFree(temp));
    SCHECK(rocsparse_destroy_mat_info(info));
  }

  // csrsm_solve: U X = B, 8 right-hand sides (column-major, ld m), X chosen here.
  {
    const int m = 5000, nrhs = 8;
    Sparse u = triangle(m, false, 3, 64, [](int) { return pivot(); });
    std::vector<float> x(size_t(m) * nrhs), b(size_t(m) * nrhs);
    for (auto& e : x) e = float(int(next32() % 7) - 3);
    for (int k = 0; k < nrhs; k++)
      for (int i = 0; i < m; i++) {
        float s = 0;
        for (auto& [j, v] : u.r[i]) s += v * x[size_t(k) * m + j];
        b[size_t(k) * m + i] = s;
      }
    Dev d(u);
    rocsparse_mat_descr ud;
    SCHECK(rocsparse_create_mat_descr(&ud));
    SCHECK(rocsparse_set_mat_fill_mode(ud, rocsparse_fill_mode_upper));
    SCHECK(rocsparse_set_mat_diag_type(ud, rocsparse_diag_type_non_unit));
    rocsparse_mat_info info;
    SCHECK(rocsparse_create_mat_info(&info));
    float* db = dev(b);
    size_t bytes = 0;
    const auto none = rocsparse_operation_none;
    SCHECK(rocsparse_scsrsm_buffer_size(h, none, none, m, nrhs, d.nnz, &one, ud, d.val, d.ptr, d.col, db, m, info,
                                        rocsparse_solve_policy_auto, &bytes));
    void* temp = scratch(bytes);
    SCHECK(rocsparse_scsrsm_analysis(h, none, none, m, nrhs, d.nnz, &one, ud, d.val, d.ptr, d.col, db, m, info,
                                     rocsparse_analysis_policy_force, rocsparse_solve_policy_auto, temp));
    SCHECK(rocsparse_scsrsm_solve(h, none, none, m, nrhs, d.nnz, &one, ud, d.val, d.ptr, d.col, db, m, info,
                                  rocsparse_solve_policy_auto, temp));
    CHECK(hipDeviceSynchronize());
    rocsparse_int zp = -2;
    EXPECT(rocsparse_csrsm_zero_pivot(h, info, &zp) == rocsparse_status_success && zp == -1, "csrsm: zero pivot %d", zp);
    expectSame("csrsm_solve (upper, 8 right-hand sides)", host(db, size_t(m) * nrhs), x);
    CHECK(hipFree(db));
    CHECK(hipFree(temp));
    SCHECK(rocsparse_destroy_mat_info(info));
    SCHECK(rocsparse_destroy_mat_descr(ud));
  }

  // The other formats of one random matrix (a few long rows among short ones), each y = A x + 2 y.
  const int m = 10001; // not a multiple of the block size
  Sparse a(m);
  for (int i = 0; i < m; i++) {
    int k = i % 89 == 0 ? 200 : int(next32() % 12);
    for (int e = 0; e < k; e++) a.r[i][int(next32() % m)] = small(3);
  }
  Dev da(a);
  std::vector<float> x(m), y0(m), want(m);
  for (auto& v : x) v = float(int(next32() % 9) - 4);
  for (auto& v : y0) v = float(int(next32() % 9) - 4);
  for (int i = 0; i < m; i++) {
    float s = 0;
    for (auto& [j, v] : a.r[i]) s += v * x[j];
    want[i] = s + 2 * y0[i];
  }
  float* dx = dev(x);

  // csr2bsr and bsrmv with 3 x 3 blocks, row-major and column-major blocks.
  for (auto dir : {rocsparse_direction_row, rocsparse_direction_column}) {
    const int bd = 3, mb = (m + bd - 1) / bd;
    int* bptr = dev(std::vector<int>(mb + 1));
    int nnzb = -1;
    SCHECK(rocsparse_csr2bsr_nnz(h, dir, m, m, descr, da.ptr, da.col, bd, descr, bptr, &nnzb));
    std::vector<std::map<int, int>> blocks(mb);
    for (int i = 0; i < m; i++)
      for (auto& [j, v] : a.r[i]) blocks[i / bd][j / bd] = 1;
    int wantb = 0;
    for (auto& r : blocks) wantb += int(r.size());
    expectEqual("csr2bsr_nnz (3 x 3 blocks)", std::vector<int>{nnzb}, std::vector<int>{wantb});
    int* bcol = dev(std::vector<int>(nnzb));
    float* bval = dev(std::vector<float>(size_t(nnzb) * bd * bd));
    SCHECK(rocsparse_scsr2bsr(h, dir, m, m, descr, da.val, da.ptr, da.col, bd, descr, bval, bptr, bcol));
    std::vector<float> yb(size_t(mb) * bd, 0.0f); // y padded to whole blocks
    std::copy(y0.begin(), y0.end(), yb.begin());
    float* dyb = dev(yb);
    std::vector<float> xb(size_t(mb) * bd, 0.0f);
    std::copy(x.begin(), x.end(), xb.begin());
    float* dxb = dev(xb);
    SCHECK(rocsparse_sbsrmv(h, dir, rocsparse_operation_none, mb, mb, nnzb, &one, descr, bval, bptr, bcol, bd, dxb, &two,
                            dyb));
    CHECK(hipDeviceSynchronize());
    auto got = host(dyb, size_t(mb) * bd);
    got.resize(m);
    expectEqual(dir == rocsparse_direction_row ? "bsrmv (row-major blocks)" : "bsrmv (column-major blocks)", got, want);
    CHECK(hipFree(bptr)); CHECK(hipFree(bcol)); CHECK(hipFree(bval));
    CHECK(hipFree(dyb)); CHECK(hipFree(dxb));
  }

  // csr2ell and ellmv.
  {
    int width = -1;
    SCHECK(rocsparse_csr2ell_width(h, m, descr, da.ptr, descr, &width));
    int wantw = 0;
    for (auto& r : a.r) wantw = std::max(wantw, int(r.size()));
    expectEqual("csr2ell_width", std::vector<int>{width}, std::vector<int>{wantw});
    int* ecol = dev(std::vector<int>(size_t(m) * width));
    float* eval = dev(std::vector<float>(size_t(m) * width));
    SCHECK(rocsparse_scsr2ell(h, m, descr, da.val, da.ptr, da.col, descr, width, eval, ecol));
    float* dy = dev(y0);
    SCHECK(rocsparse_sellmv(h, rocsparse_operation_none, m, m, &one, descr, eval, ecol, width, dx, &two, dy));
    CHECK(hipDeviceSynchronize());
    expectEqual("ellmv", host(dy, m), want);
    CHECK(hipFree(ecol)); CHECK(hipFree(eval)); CHECK(hipFree(dy));
  }

  // csr2hyb (ELL part of width 4, the rest COO) and hybmv.
  {
    rocsparse_hyb_mat hyb;
    SCHECK(rocsparse_create_hyb_mat(&hyb));
    SCHECK(rocsparse_scsr2hyb(h, m, m, descr, da.val, da.ptr, da.col, hyb, 4, rocsparse_hyb_partition_user));
    float* dy = dev(y0);
    SCHECK(rocsparse_shybmv(h, rocsparse_operation_none, &one, descr, hyb, dx, &two, dy));
    CHECK(hipDeviceSynchronize());
    expectEqual("hybmv (ELL width 4 + COO)", host(dy, m), want);
    CHECK(hipFree(dy));
    SCHECK(rocsparse_destroy_hyb_mat(hyb));
  }

  // csr2coo and coomv.
  {
    int* drow = dev(std::vector<int>(da.nnz));
    SCHECK(rocsparse_csr2coo(h, da.ptr, da.nnz, m, drow, rocsparse_index_base_zero));
    float* dy = dev(y0);
    SCHECK(rocsparse_scoomv(h, rocsparse_operation_none, m, m, da.nnz, &one, descr, da.val, drow, da.col, dx, &two, dy));
    CHECK(hipDeviceSynchronize());
    expectEqual("coomv", host(dy, m), want);
    CHECK(hipFree(drow)); CHECK(hipFree(dy));
  }

  // csrgeam: C = 2 A - B, B another random matrix; the union pattern, cancellations kept as zeros.
  {
    Sparse b(m);
    for (int i = 0; i < m; i++) {
      int k = int(next32() % 8);
      for (int e = 0; e < k; e++) b.r[i][int(next32() % m)] = small(3);
      if (!a.r[i].empty() && next32() % 2) { // an entry where A has one, sometimes cancelling
        auto [j, v] = *a.r[i].begin();
        b.r[i][j] = next32() % 2 ? 2 * v : small(3);
      }
    }
    Sparse c(m);
    for (int i = 0; i < m; i++) {
      for (auto& [j, v] : a.r[i]) c.r[i][j] += 2 * v;
      for (auto& [j, v] : b.r[i]) c.r[i][j] -= v;
    }
    std::vector<int> wp, wc;
    std::vector<float> wv;
    c.csr(wp, wc, wv);
    Dev db(b);
    int* cptr = dev(std::vector<int>(m + 1));
    int cnnz = -1;
    SCHECK(rocsparse_csrgeam_nnz(h, m, m, descr, da.nnz, da.ptr, da.col, descr, db.nnz, db.ptr, db.col, descr, cptr,
                                 &cnnz));
    expectEqual("csrgeam_nnz", std::vector<int>{cnnz}, std::vector<int>{wp.back()});
    int* ccol = dev(std::vector<int>(cnnz));
    float* cval = dev(std::vector<float>(cnnz));
    SCHECK(rocsparse_scsrgeam(h, m, m, &two, descr, da.nnz, da.val, da.ptr, da.col, &minus1, descr, db.nnz, db.val, db.ptr,
                              db.col, descr, cval, cptr, ccol));
    CHECK(hipDeviceSynchronize());
    expectEqual("csrgeam row pointers", host(cptr, m + 1), wp);
    expectEqual("csrgeam column indices", host(ccol, cnnz), wc);
    expectEqual("csrgeam values", host(cval, cnnz), wv);
    CHECK(hipFree(cptr)); CHECK(hipFree(ccol)); CHECK(hipFree(cval));
  }

  // gtsv: T X = B, T tridiagonal with 4 on the diagonal and +-1 beside it, 4 right-hand sides.
  {
    const int n = 5000, nrhs = 4;
    std::vector<float> dl(n), d(n, 4.0f), du(n), xs(size_t(n) * nrhs), b(size_t(n) * nrhs);
    for (int i = 0; i < n; i++) {
      dl[i] = i == 0 ? 0.0f : (next32() % 2 ? 1.0f : -1.0f);
      du[i] = i == n - 1 ? 0.0f : (next32() % 2 ? 1.0f : -1.0f);
    }
    for (auto& v : xs) v = float(int(next32() % 9) - 4);
    for (int k = 0; k < nrhs; k++)
      for (int i = 0; i < n; i++) {
        const float* xk = &xs[size_t(k) * n];
        b[size_t(k) * n + i] = d[i] * xk[i] + (i > 0 ? dl[i] * xk[i - 1] : 0) + (i < n - 1 ? du[i] * xk[i + 1] : 0);
      }
    float *ddl = dev(dl), *dd = dev(d), *ddu = dev(du), *dbx = dev(b);
    size_t bytes = 0;
    SCHECK(rocsparse_sgtsv_buffer_size(h, n, nrhs, ddl, dd, ddu, dbx, n, &bytes));
    void* temp = scratch(bytes);
    SCHECK(rocsparse_sgtsv(h, n, nrhs, ddl, dd, ddu, dbx, n, temp));
    CHECK(hipDeviceSynchronize());
    auto got = host(dbx, size_t(n) * nrhs);
    for (size_t i = 0; i < got.size(); i++)
      EXPECT(std::fabs(got[i] - xs[i]) <= 4e-5f, "gtsv: element %zu: %.9g, want %g", i, double(got[i]), double(xs[i]));
    printf("gtsv: ok (%d rows, %d right-hand sides, within 4e-5, %.1f s)\n", n, nrhs, lap());
    CHECK(hipFree(ddl)); CHECK(hipFree(dd)); CHECK(hipFree(ddu)); CHECK(hipFree(dbx)); CHECK(hipFree(temp));
  }

  CHECK(hipFree(dx));
  SCHECK(rocsparse_destroy_mat_descr(descr));
  SCHECK(rocsparse_destroy_handle(h));
  printf("rocsparse_factor: ok\n");
  return 0;
}
