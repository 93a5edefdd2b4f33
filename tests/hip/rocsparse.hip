// hipcc-flags: -std=c++17 -lrocsparse
// Debian's rocSPARSE 2.2 (librocsparse0, its own gfx90a kernels) on a random 20000 x 20000 CSR
// matrix with small integer values, so every float result is an exact integer and is compared
// exactly with the host's: csrmv y = A x + 2 y (the plain kernel, then after csrmv_analysis, which
// switches to the adaptive row-block kernel), csr2coo, csr2csc (the transpose, rows in order
// within each column), doti over a sparse vector, csrmm (times a dense matrix), csrgemm (A A, sparse
// times sparse), and csrsv_solve of a unit lower-triangular
// system (level-scheduled: a wavefront spins until the rows its row depends on are done, so
// rows of other work-groups must finish while it waits) for a solution the host chose.
#include "common.h"
#include <rocsparse/rocsparse.h>
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#define SCHECK(x)                                                                             \
  do {                                                                                        \
    rocsparse_status s_ = (x);                                                                \
    EXPECT(s_ == rocsparse_status_success, "%s: rocsparse status %d", #x, int(s_));           \
  } while (0)

static uint64_t rng = 0x243f6a8885a308d3ull;
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
  printf("%s: ok (%zu elements)\n", what, want.size());
}

// Csr is a host CSR matrix with sorted column indices and no explicit zeros.
struct Csr {
  int m = 0, n = 0;
  std::vector<int> ptr{0}, col;
  std::vector<float> val;
  void row(std::vector<std::pair<int, float>> r) {
    std::sort(r.begin(), r.end());
    for (size_t i = 0; i < r.size(); i++)
      if (i == 0 || r[i].first != r[i - 1].first) col.push_back(r[i].first), val.push_back(r[i].second);
    ptr.push_back(int(col.size()));
    m++;
  }
};

static float smallNonzero(int k) {
  int v = int(next32() % (2 * k)) - k;
  return float(v >= 0 ? v + 1 : v);
}

int main() {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  rocsparse_handle h;
  SCHECK(rocsparse_create_handle(&h));
  rocsparse_mat_descr descr;
  SCHECK(rocsparse_create_mat_descr(&descr));

  const int m = 20000;
  Csr a;
  a.n = m;
  for (int i = 0; i < m; i++) {
    std::vector<std::pair<int, float>> r;
    int k = i % 97 == 0 ? 300 : int(next32() % 20); // a few long rows among short ones
    for (int j = 0; j < k; j++) r.push_back({int(next32() % m), smallNonzero(3)});
    a.row(r);
  }
  const int nnz = a.ptr[m];
  std::vector<float> x(m), y0(m);
  for (auto& v : x) v = float(int(next32() % 9) - 4);
  for (auto& v : y0) v = float(int(next32() % 9) - 4);
  int *dptr = dev(a.ptr), *dcol = dev(a.col);
  float *dval = dev(a.val), *dx = dev(x);

  // csrmv: y = 1 * A x + 2 * y.
  std::vector<float> want(m);
  for (int i = 0; i < m; i++) {
    float s = 0;
    for (int p = a.ptr[i]; p < a.ptr[i + 1]; p++) s += a.val[p] * x[a.col[p]];
    want[i] = s + 2 * y0[i];
  }
  const float one = 1, two = 2;
  rocsparse_mat_info info;
  SCHECK(rocsparse_create_mat_info(&info));
  for (int adaptive = 0; adaptive < 2; adaptive++) {
    if (adaptive)
      SCHECK(rocsparse_scsrmv_analysis(h, rocsparse_operation_none, m, m, nnz, descr, dval, dptr, dcol, info));
    float* dy = dev(y0);
    SCHECK(rocsparse_scsrmv(h, rocsparse_operation_none, m, m, nnz, &one, descr, dval, dptr, dcol,
                            adaptive ? info : nullptr, dx, &two, dy));
    CHECK(hipDeviceSynchronize());
    expectEqual(adaptive ? "csrmv (adaptive, after csrmv_analysis)" : "csrmv", host(dy, m), want);
    CHECK(hipFree(dy));
  }

  // csr2coo: the row index of every stored entry.
  {
    int* drow = dev(std::vector<int>(nnz));
    SCHECK(rocsparse_csr2coo(h, dptr, nnz, m, drow, rocsparse_index_base_zero));
    std::vector<int> rows(nnz);
    for (int i = 0; i < m; i++)
      for (int p = a.ptr[i]; p < a.ptr[i + 1]; p++) rows[p] = i;
    expectEqual("csr2coo", host(drow, nnz), rows);
    CHECK(hipFree(drow));
  }

  // csr2csc: the transpose; within a column the rows are in increasing order.
  {
    size_t bytes = 0;
    SCHECK(rocsparse_csr2csc_buffer_size(h, m, m, nnz, dptr, dcol, rocsparse_action_numeric, &bytes));
    void* temp;
    CHECK(hipMalloc(&temp, std::max<size_t>(bytes, 1)));
    float* cval = dev(std::vector<float>(nnz));
    int *crow = dev(std::vector<int>(nnz)), *cptr = dev(std::vector<int>(m + 1));
    SCHECK(rocsparse_scsr2csc(h, m, m, nnz, dval, dptr, dcol, cval, crow, cptr, rocsparse_action_numeric,
                              rocsparse_index_base_zero, temp));
    CHECK(hipDeviceSynchronize());
    std::vector<int> wptr(m + 1), wrow(nnz), fill(m);
    std::vector<float> wval(nnz);
    for (int p = 0; p < nnz; p++) wptr[a.col[p] + 1]++;
    for (int j = 0; j < m; j++) wptr[j + 1] += wptr[j];
    for (int i = 0; i < m; i++)
      for (int p = a.ptr[i]; p < a.ptr[i + 1]; p++) {
        int q = wptr[a.col[p]] + fill[a.col[p]]++;
        wrow[q] = i, wval[q] = a.val[p];
      }
    expectEqual("csr2csc column pointers", host(cptr, m + 1), wptr);
    expectEqual("csr2csc row indices", host(crow, nnz), wrow);
    expectEqual("csr2csc values", host(cval, nnz), wval);
    CHECK(hipFree(temp)); CHECK(hipFree(cval)); CHECK(hipFree(crow)); CHECK(hipFree(cptr));
  }

  // doti: a sparse vector (every third index) dotted with x.
  {
    std::vector<int> ind;
    std::vector<float> v;
    for (int i = 0; i < m; i += 3) ind.push_back(i), v.push_back(smallNonzero(4));
    int* dind = dev(ind);
    float* dv = dev(v);
    float got = 0, w = 0;
    for (size_t k = 0; k < ind.size(); k++) w += v[k] * x[ind[k]];
    SCHECK(rocsparse_sdoti(h, int(ind.size()), dv, dind, dx, &got, rocsparse_index_base_zero));
    expectEqual("doti", std::vector<float>{got}, std::vector<float>{w});
    CHECK(hipFree(dind)); CHECK(hipFree(dv));
  }

  // csrmm: C = A B with B dense (20000 x 16, column-major).
  {
    const int nc = 16;
    std::vector<float> bd(size_t(m) * nc), wc(size_t(m) * nc);
    for (auto& v : bd) v = float(int(next32() % 7) - 3);
    for (int j = 0; j < nc; j++)
      for (int i = 0; i < m; i++) {
        float s = 0;
        for (int p = a.ptr[i]; p < a.ptr[i + 1]; p++) s += a.val[p] * bd[size_t(j) * m + a.col[p]];
        wc[size_t(j) * m + i] = s;
      }
    const float zero = 0;
    float *db = dev(bd), *dc = dev(std::vector<float>(size_t(m) * nc));
    SCHECK(rocsparse_scsrmm(h, rocsparse_operation_none, rocsparse_operation_none, m, nc, m, nnz, &one, descr, dval,
                            dptr, dcol, db, m, &zero, dc, m));
    CHECK(hipDeviceSynchronize());
    expectEqual("csrmm (times a dense 20000 x 16)", host(dc, size_t(m) * nc), wc);
    CHECK(hipFree(db)); CHECK(hipFree(dc));
  }

  // csrgemm: C = A A, sparse times sparse: the row pointers, column indices (sorted) and values,
  // explicit zeros from cancellation included, as the host's row-by-row product has them.
  {
    rocsparse_mat_info gi;
    SCHECK(rocsparse_create_mat_info(&gi));
    size_t bytes = 0;
    SCHECK(rocsparse_scsrgemm_buffer_size(h, rocsparse_operation_none, rocsparse_operation_none, m, m, m, &one, descr, nnz,
                                          dptr, dcol, descr, nnz, dptr, dcol, nullptr, nullptr, 0, nullptr, nullptr, gi,
                                          &bytes));
    void* temp;
    CHECK(hipMalloc(&temp, std::max<size_t>(bytes, 1)));
    int* cptr = dev(std::vector<int>(m + 1));
    int cnnz = -1;
    SCHECK(rocsparse_csrgemm_nnz(h, rocsparse_operation_none, rocsparse_operation_none, m, m, m, descr, nnz, dptr, dcol,
                                 descr, nnz, dptr, dcol, nullptr, 0, nullptr, nullptr, descr, cptr, &cnnz, gi, temp));
    std::vector<int> wptr{0}, wcol;
    std::vector<float> wval;
    for (int i = 0; i < m; i++) {
      std::vector<std::pair<int, float>> row;
      for (int p = a.ptr[i]; p < a.ptr[i + 1]; p++)
        for (int q = a.ptr[a.col[p]]; q < a.ptr[a.col[p] + 1]; q++) row.push_back({a.col[q], a.val[p] * a.val[q]});
      std::stable_sort(row.begin(), row.end(), [](auto& x, auto& y) { return x.first < y.first; });
      for (size_t k = 0; k < row.size(); k++) {
        if (k == 0 || row[k].first != row[k - 1].first) wcol.push_back(row[k].first), wval.push_back(0);
        wval.back() += row[k].second;
      }
      wptr.push_back(int(wcol.size()));
    }
    expectEqual("csrgemm_nnz", std::vector<int>{cnnz}, std::vector<int>{int(wcol.size())});
    int* ccol = dev(std::vector<int>(cnnz));
    float* cval = dev(std::vector<float>(cnnz));
    SCHECK(rocsparse_scsrgemm(h, rocsparse_operation_none, rocsparse_operation_none, m, m, m, &one, descr, nnz, dval, dptr,
                              dcol, descr, nnz, dval, dptr, dcol, nullptr, descr, 0, nullptr, nullptr, nullptr, descr,
                              cval, cptr, ccol, gi, temp));
    CHECK(hipDeviceSynchronize());
    expectEqual("csrgemm row pointers", host(cptr, m + 1), wptr);
    expectEqual("csrgemm column indices", host(ccol, cnnz), wcol);
    expectEqual("csrgemm values", host(cval, cnnz), wval);
    CHECK(hipFree(temp)); CHECK(hipFree(cptr)); CHECK(hipFree(ccol)); CHECK(hipFree(cval));
    SCHECK(rocsparse_destroy_mat_info(gi));
  }

  // csrsv_solve: L z = b with L unit lower-triangular (explicit 1 on the diagonal, -1/0/+1 below
  // it within a band of 64 rows, so rows depend on rows of other work-groups), z chosen here.
  {
    Csr l;
    l.n = m;
    for (int i = 0; i < m; i++) {
      std::vector<std::pair<int, float>> r{{i, 1.0f}};
      int k = i == 0 ? 0 : int(next32() % 4);
      for (int j = 0; j < k; j++) r.push_back({std::max(0, i - 1 - int(next32() % 64)), next32() % 2 ? 1.0f : -1.0f});
      for (auto& e : r) // keep one value per column: the first one drawn
        for (auto& f : r)
          if (&f > &e && f.first == e.first) f.first = -1;
      r.erase(std::remove_if(r.begin(), r.end(), [](auto& e) { return e.first < 0; }), r.end());
      l.row(r);
    }
    const int lnnz = l.ptr[m];
    std::vector<float> z(m), b(m);
    for (auto& v : z) v = float(int(next32() % 5) - 2);
    for (int i = 0; i < m; i++) {
      float s = 0;
      for (int p = l.ptr[i]; p < l.ptr[i + 1]; p++) s += l.val[p] * z[l.col[p]];
      b[i] = s;
    }
    rocsparse_mat_descr ld;
    SCHECK(rocsparse_create_mat_descr(&ld));
    SCHECK(rocsparse_set_mat_fill_mode(ld, rocsparse_fill_mode_lower));
    SCHECK(rocsparse_set_mat_diag_type(ld, rocsparse_diag_type_non_unit));
    rocsparse_mat_info li;
    SCHECK(rocsparse_create_mat_info(&li));
    int *lptr = dev(l.ptr), *lcol = dev(l.col);
    float *lval = dev(l.val), *db = dev(b), *dz = dev(std::vector<float>(m));
    size_t bytes = 0;
    SCHECK(rocsparse_scsrsv_buffer_size(h, rocsparse_operation_none, m, lnnz, ld, lval, lptr, lcol, li, &bytes));
    void* temp;
    CHECK(hipMalloc(&temp, std::max<size_t>(bytes, 1)));
    SCHECK(rocsparse_scsrsv_analysis(h, rocsparse_operation_none, m, lnnz, ld, lval, lptr, lcol, li,
                                     rocsparse_analysis_policy_force, rocsparse_solve_policy_auto, temp));
    SCHECK(rocsparse_scsrsv_solve(h, rocsparse_operation_none, m, lnnz, &one, ld, lval, lptr, lcol, li, db, dz,
                                  rocsparse_solve_policy_auto, temp));
    CHECK(hipDeviceSynchronize());
    rocsparse_int pivot = -2;
    EXPECT(rocsparse_csrsv_zero_pivot(h, descr, li, &pivot) == rocsparse_status_success && pivot == -1,
           "csrsv: zero pivot %d", pivot);
    expectEqual("csrsv_solve (lower, level-scheduled)", host(dz, m), z);
    CHECK(hipFree(temp)); CHECK(hipFree(lptr)); CHECK(hipFree(lcol)); CHECK(hipFree(lval));
    CHECK(hipFree(db)); CHECK(hipFree(dz));
    SCHECK(rocsparse_destroy_mat_info(li));
    SCHECK(rocsparse_destroy_mat_descr(ld));
  }

  SCHECK(rocsparse_destroy_mat_info(info));
  SCHECK(rocsparse_destroy_mat_descr(descr));
  SCHECK(rocsparse_destroy_handle(h));
  CHECK(hipFree(dptr)); CHECK(hipFree(dcol)); CHECK(hipFree(dval)); CHECK(hipFree(dx));
  printf("rocsparse: ok\n");
  return 0;
}
