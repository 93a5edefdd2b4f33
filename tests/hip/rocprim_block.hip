// hipcc-flags: -std=c++17
// rocPRIM's block- and warp-level primitives (Debian's librocprim-dev 5.3.3) in kernels of our own,
// 64 work-groups of 256 threads with 4 items each, every result checked exactly against the
// host: block_radix_sort (keys; stable pairs descending over a bit range), block_sort (bitonic
// pairs), block_exchange (blocked <-> striped, scatter by rank), block_load/block_store (transpose,
// warp-transpose, vectorized), block_histogram (LDS atomics and sort-based), block_discontinuity
// and block_adjacent_difference, block_shuffle, block_reduce (raking and warp-based), block_scan
// with a prefix callback carried over tiles, warp_sort (64 and 16 lanes) and warp_exchange; and
// device-level merge, lower_bound/upper_bound, adjacent_difference, inclusive_scan_by_key and
// segmented_inclusive_scan. These are LDS exchanges, DPP and ds_bpermute lane moves, LDS atomics
// and barriers in the order the library's templates put them.
#include "common.h"
#include <rocprim/rocprim.hpp>
#include <rocprim/block/block_shuffle.hpp> // not in rocprim.hpp in 5.3.3
#include <algorithm>
#include <climits>
#include <cstdint>
#include <numeric>
#include <vector>

constexpr unsigned BS = 256, IPT = 4, TILE = BS * IPT, GROUPS = 64, N = TILE * GROUPS;

static uint64_t rng = 0xa4093822299f31d0ull;
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
    EXPECT(got[i] == want[i], "%s: element %zu: %lld, want %lld", what, i, (long long)got[i], (long long)want[i]);
  printf("%s: ok (%zu elements)\n", what, want.size());
}

// ---- block_radix_sort: keys ascending; pairs (key, original index) descending on bits [4, 16).
__global__ __launch_bounds__(BS) void radixKernel(const unsigned* in, unsigned* keysOut, unsigned* pk, unsigned* pv) {
  using sortK = rocprim::block_radix_sort<unsigned, BS, IPT>;
  using sortP = rocprim::block_radix_sort<unsigned, BS, IPT, unsigned>;
  __shared__ union {
    typename sortK::storage_type k;
    typename sortP::storage_type p;
  } st;
  const unsigned base = blockIdx.x * TILE;
  unsigned k[IPT], v[IPT];
  rocprim::block_load_direct_blocked(threadIdx.x, in + base, k);
  sortK().sort(k, st.k);
  rocprim::block_store_direct_blocked(threadIdx.x, keysOut + base, k);
  __syncthreads();
  rocprim::block_load_direct_blocked(threadIdx.x, in + base, k);
  for (unsigned i = 0; i < IPT; i++) v[i] = base + threadIdx.x * IPT + i;
  sortP().sort_desc(k, v, st.p, 4, 16);
  rocprim::block_store_direct_blocked(threadIdx.x, pk + base, k);
  rocprim::block_store_direct_blocked(threadIdx.x, pv + base, v);
}

// ---- block_sort (bitonic), one pair per thread: distinct keys, so the order is unique.
__global__ __launch_bounds__(BS) void bitonicKernel(const unsigned* in, unsigned* ko, unsigned* vo) {
  using sorter = rocprim::block_sort<unsigned, BS, 1, unsigned>;
  __shared__ typename sorter::storage_type st;
  const unsigned i = blockIdx.x * BS + threadIdx.x;
  unsigned k = in[i], v = i;
  sorter().sort(k, v, st);
  ko[i] = k, vo[i] = v;
}

// ---- block_exchange and block_load/store with the LDS methods.
__global__ __launch_bounds__(BS) void exchangeKernel(const unsigned* in, unsigned* striped, unsigned* scattered,
                                                     unsigned* viaLoad) {
  using ex = rocprim::block_exchange<unsigned, BS, IPT>;
  using ldT = rocprim::block_load<unsigned, BS, IPT, rocprim::block_load_method::block_load_transpose>;
  using stT = rocprim::block_store<unsigned, BS, IPT, rocprim::block_store_method::block_store_transpose>;
  using ldW = rocprim::block_load<unsigned, BS, IPT, rocprim::block_load_method::block_load_warp_transpose>;
  using stW = rocprim::block_store<unsigned, BS, IPT, rocprim::block_store_method::block_store_warp_transpose>;
  using ldV = rocprim::block_load<unsigned, BS, IPT, rocprim::block_load_method::block_load_vectorize>;
  using stV = rocprim::block_store<unsigned, BS, IPT, rocprim::block_store_method::block_store_vectorize>;
  __shared__ union {
    typename ex::storage_type e;
    typename ldT::storage_type lt;
    typename stT::storage_type s;
    typename ldW::storage_type lw;
    typename stW::storage_type sw;
  } st;
  const unsigned base = blockIdx.x * TILE;
  unsigned a[IPT], b[IPT], r[IPT];
  rocprim::block_load_direct_blocked(threadIdx.x, in + base, a);
  ex().blocked_to_striped(a, b, st.e); // thread t item i: element t + i * BS of the tile
  __syncthreads();
  for (unsigned i = 0; i < IPT; i++) striped[base + threadIdx.x * IPT + i] = b[i];
  ex().striped_to_blocked(b, a, st.e); // back
  __syncthreads();
  for (unsigned i = 0; i < IPT; i++) r[i] = TILE - 1 - (threadIdx.x * IPT + i); // reverse the tile
  ex().scatter_to_blocked(a, b, r, st.e);
  __syncthreads();
  rocprim::block_store_direct_blocked(threadIdx.x, scattered + base, b);
  // A round trip through each pair of LDS methods, adding one per pass: in + 3.
  ldT().load(in + base, a, st.lt);
  __syncthreads();
  for (auto& x : a) x += 1;
  stT().store(viaLoad + base, a, st.s);
  __syncthreads();
  __threadfence_block();
  ldW().load(viaLoad + base, a, st.lw);
  __syncthreads();
  for (auto& x : a) x += 1;
  stW().store(viaLoad + base, a, st.sw);
  __syncthreads();
  ldV().load(viaLoad + base, a);
  for (auto& x : a) x += 1;
  __syncthreads();
  stV().store(viaLoad + base, a);
}

// ---- block_histogram of bytes into 256 bins, by LDS atomics and by sorting.
template <rocprim::block_histogram_algorithm A>
__global__ __launch_bounds__(BS) void histKernel(const unsigned char* in, unsigned* out) {
  using hist = rocprim::block_histogram<unsigned char, BS, IPT, 256, A>;
  __shared__ typename hist::storage_type st;
  __shared__ unsigned bins[256];
  unsigned char v[IPT];
  rocprim::block_load_direct_blocked(threadIdx.x, in + blockIdx.x * TILE, v);
  hist().histogram(v, bins, st);
  __syncthreads();
  out[blockIdx.x * 256 + threadIdx.x] = bins[threadIdx.x];
}

// ---- block_discontinuity heads and tails (with the neighbouring tiles' items), adjacent
// difference (subtract_left), and block_shuffle (offset by 3, up).
__global__ __launch_bounds__(BS) void neighbourKernel(const int* in, int* heads, int* tails, int* diff, int* off,
                                                      int* up) {
  using disc = rocprim::block_discontinuity<int, BS>;
  using adj = rocprim::block_adjacent_difference<int, BS>;
  using shuf = rocprim::block_shuffle<int, BS>;
  __shared__ union {
    typename disc::storage_type d;
    typename adj::storage_type a;
    typename shuf::storage_type s;
  } st;
  const unsigned base = blockIdx.x * TILE;
  int v[IPT], h[IPT], t[IPT], d[IPT];
  rocprim::block_load_direct_blocked(threadIdx.x, in + base, v);
  const int before = blockIdx.x ? in[base - 1] : -1000, after = blockIdx.x + 1 < gridDim.x ? in[base + TILE] : -1000;
  disc().flag_heads_and_tails(h, before, t, after, v, rocprim::not_equal_to<int>(), st.d);
  __syncthreads();
  rocprim::block_store_direct_blocked(threadIdx.x, heads + base, h);
  rocprim::block_store_direct_blocked(threadIdx.x, tails + base, t);
  adj().subtract_left(v, d, rocprim::minus<int>(), before, st.a);
  __syncthreads();
  rocprim::block_store_direct_blocked(threadIdx.x, diff + base, d);
  int o = -1;
  shuf().offset(threadIdx.x, v[0], o, 3, st.s);
  __syncthreads();
  off[blockIdx.x * BS + threadIdx.x] = o;
  int p[IPT] = {-7, -7, -7, -7};
  shuf().up(threadIdx.x, v, p, st.s);
  rocprim::block_store_direct_blocked(threadIdx.x, up + base, p);
}

// ---- block_reduce (raking, warp-based) and block_scan over 4 tiles per group, carrying the
// running total into each tile through a prefix callback.
struct Prefix {
  long long total;
  __device__ long long operator()(long long tile) {
    long long old = total;
    total += tile;
    return old;
  }
};
__global__ __launch_bounds__(BS) void reduceScanKernel(const int* in, long long* sums, long long* scan) {
  using redR = rocprim::block_reduce<long long, BS, rocprim::block_reduce_algorithm::raking_reduce>;
  using redW = rocprim::block_reduce<long long, BS, rocprim::block_reduce_algorithm::using_warp_reduce>;
  using scanW = rocprim::block_scan<long long, BS, rocprim::block_scan_algorithm::using_warp_scan>;
  __shared__ union {
    typename redR::storage_type r;
    typename redW::storage_type w;
    typename scanW::storage_type s;
  } st;
  const unsigned base = blockIdx.x * 4 * TILE;
  long long x[IPT];
  Prefix pre{0};
  for (unsigned tile = 0; tile < 4; tile++) {
    for (unsigned i = 0; i < IPT; i++) x[i] = in[base + tile * TILE + threadIdx.x * IPT + i];
    long long s1 = 0, s2 = 0;
    redR().reduce(x, s1, st.r, rocprim::plus<long long>());
    __syncthreads();
    redW().reduce(x, s2, st.w, rocprim::maximum<long long>());
    __syncthreads();
    if (threadIdx.x == 0) sums[2 * (blockIdx.x * 4 + tile)] = s1, sums[2 * (blockIdx.x * 4 + tile) + 1] = s2;
    scanW().exclusive_scan(x, x, st.s, pre, rocprim::plus<long long>());
    __syncthreads();
    for (unsigned i = 0; i < IPT; i++) scan[base + tile * TILE + threadIdx.x * IPT + i] = x[i];
  }
}

// ---- warp_sort over 64 lanes and over logical warps of 16; warp_exchange over 64 lanes.
__global__ __launch_bounds__(BS) void warpKernel(const unsigned* in, unsigned* s64, unsigned* s16, unsigned* wx) {
  using ws64 = rocprim::warp_sort<unsigned, 64, unsigned>;
  using ws16 = rocprim::warp_sort<unsigned, 16>;
  using wex = rocprim::warp_exchange<unsigned, IPT, 64>;
  __shared__ typename ws16::storage_type st16[BS / 16];
  __shared__ typename wex::storage_type stx[BS / 64];
  const unsigned i = blockIdx.x * BS + threadIdx.x, w = threadIdx.x / 64;
  unsigned k = in[i], v = i;
  ws64().sort(k, v); // (the overload with storage calls its base with the arguments out of order in 5.3.3)
  s64[2 * i] = k, s64[2 * i + 1] = v;
  unsigned k2 = in[i];
  ws16().sort(k2, st16[threadIdx.x / 16]);
  s16[i] = k2;
  unsigned a[IPT], b[IPT];
  const unsigned lane = threadIdx.x % 64, wbase = blockIdx.x * TILE + w * 64 * IPT;
  for (unsigned j = 0; j < IPT; j++) a[j] = in[wbase + lane * IPT + j];
  wex().blocked_to_striped(a, b, stx[w]);
  for (unsigned j = 0; j < IPT; j++) wx[wbase + lane * IPT + j] = b[j];
}

template <class F>
static size_t tempSize(F f) {
  size_t bytes = 0;
  CHECK(f(nullptr, bytes));
  return bytes;
}

int main() {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  std::vector<unsigned> keys(N), distinct(N);
  for (auto& k : keys) k = next32() % 100000; // duplicates within a tile
  for (unsigned i = 0; i < N; i++) distinct[i] = (i * 2654435761u) ^ 0x5bd1e995u; // a bijection: distinct
  unsigned *dkeys = dev(keys), *ddist = dev(distinct);

  { // block_radix_sort
    unsigned *ko = dev(std::vector<unsigned>(N)), *pk = dev(std::vector<unsigned>(N)), *pv = dev(std::vector<unsigned>(N));
    radixKernel<<<GROUPS, BS>>>(dkeys, ko, pk, pv);
    CHECK(hipGetLastError());
    std::vector<unsigned> wk = keys, wpk(N), wpv(N);
    for (unsigned g = 0; g < GROUPS; g++) {
      std::sort(wk.begin() + g * TILE, wk.begin() + (g + 1) * TILE);
      std::vector<unsigned> idx(TILE);
      std::iota(idx.begin(), idx.end(), g * TILE);
      std::stable_sort(idx.begin(), idx.end(), [&](unsigned a, unsigned b) {
        return (keys[a] >> 4 & 0xfff) > (keys[b] >> 4 & 0xfff);
      });
      for (unsigned j = 0; j < TILE; j++) wpk[g * TILE + j] = keys[idx[j]], wpv[g * TILE + j] = idx[j];
    }
    expectEqual("block_radix_sort keys", host(ko, N), wk);
    expectEqual("block_radix_sort pairs, descending on bits [4, 16): keys", host(pk, N), wpk);
    expectEqual("block_radix_sort pairs, descending on bits [4, 16): values (stable)", host(pv, N), wpv);
    CHECK(hipFree(ko)); CHECK(hipFree(pk)); CHECK(hipFree(pv));
  }

  { // block_sort (bitonic)
    const unsigned n = GROUPS * BS;
    unsigned *ko = dev(std::vector<unsigned>(n)), *vo = dev(std::vector<unsigned>(n));
    bitonicKernel<<<GROUPS, BS>>>(ddist, ko, vo);
    CHECK(hipGetLastError());
    std::vector<unsigned> wk(n), wv(n);
    for (unsigned g = 0; g < GROUPS; g++) {
      std::vector<unsigned> idx(BS);
      std::iota(idx.begin(), idx.end(), g * BS);
      std::sort(idx.begin(), idx.end(), [&](unsigned a, unsigned b) { return distinct[a] < distinct[b]; });
      for (unsigned j = 0; j < BS; j++) wk[g * BS + j] = distinct[idx[j]], wv[g * BS + j] = idx[j];
    }
    expectEqual("block_sort (bitonic) keys", host(ko, n), wk);
    expectEqual("block_sort (bitonic) values", host(vo, n), wv);
    CHECK(hipFree(ko)); CHECK(hipFree(vo));
  }

  { // block_exchange, block_load/block_store
    unsigned *s = dev(std::vector<unsigned>(N)), *sc = dev(std::vector<unsigned>(N)), *vl = dev(std::vector<unsigned>(N));
    exchangeKernel<<<GROUPS, BS>>>(dkeys, s, sc, vl);
    CHECK(hipGetLastError());
    std::vector<unsigned> ws(N), wsc(N), wvl(N);
    for (unsigned g = 0; g < GROUPS; g++)
      for (unsigned t = 0; t < BS; t++)
        for (unsigned i = 0; i < IPT; i++) {
          const unsigned b = g * TILE;
          ws[b + t * IPT + i] = keys[b + t + i * BS];
          wsc[b + TILE - 1 - (t * IPT + i)] = keys[b + t * IPT + i];
        }
    for (unsigned i = 0; i < N; i++) wvl[i] = keys[i] + 3;
    expectEqual("block_exchange blocked_to_striped", host(s, N), ws);
    expectEqual("block_exchange striped_to_blocked, scatter_to_blocked (reversed)", host(sc, N), wsc);
    expectEqual("block_load/block_store transpose, warp_transpose, vectorize", host(vl, N), wvl);
    CHECK(hipFree(s)); CHECK(hipFree(sc)); CHECK(hipFree(vl));
  }

  { // block_histogram
    std::vector<unsigned char> bytes(N);
    for (auto& b : bytes) b = next32() % 7 ? next32() % 32 : next32() % 256; // some bins crowded
    unsigned char* db = dev(bytes);
    std::vector<unsigned> want(GROUPS * 256);
    for (unsigned i = 0; i < N; i++) want[i / TILE * 256 + bytes[i]]++;
    for (int alg = 0; alg < 2; alg++) {
      unsigned* out = dev(std::vector<unsigned>(GROUPS * 256));
      if (alg == 0)
        histKernel<rocprim::block_histogram_algorithm::using_atomic><<<GROUPS, BS>>>(db, out);
      else
        histKernel<rocprim::block_histogram_algorithm::using_sort><<<GROUPS, BS>>>(db, out);
      CHECK(hipGetLastError());
      expectEqual(alg == 0 ? "block_histogram (LDS atomics)" : "block_histogram (sort)", host(out, GROUPS * 256), want);
      CHECK(hipFree(out));
    }
    CHECK(hipFree(db));
  }

  { // block_discontinuity, block_adjacent_difference, block_shuffle
    std::vector<int> v(N);
    int cur = 0;
    for (auto& x : v) x = (cur += next32() % 3 == 0); // runs of equal values
    int* dv = dev(v);
    int *h = dev(std::vector<int>(N)), *t = dev(std::vector<int>(N)), *d = dev(std::vector<int>(N));
    int *o = dev(std::vector<int>(GROUPS * BS)), *u = dev(std::vector<int>(N));
    neighbourKernel<<<GROUPS, BS>>>(dv, h, t, d, o, u);
    CHECK(hipGetLastError());
    std::vector<int> wh(N), wt(N), wd(N), wo(GROUPS * BS), wu(N);
    for (unsigned i = 0; i < N; i++) {
      const int before = i ? v[i - 1] : -1000, after = i + 1 < N ? v[i + 1] : -1000;
      wh[i] = v[i] != before, wt[i] = v[i] != after, wd[i] = v[i] - before;
      wu[i] = i % TILE ? v[i - 1] : -7;
    }
    for (unsigned g = 0; g < GROUPS; g++)
      for (unsigned t = 0; t < BS; t++) wo[g * BS + t] = t + 3 < BS ? v[g * TILE + (t + 3) * IPT] : -1;
    expectEqual("block_discontinuity flag_heads_and_tails: heads", host(h, N), wh);
    expectEqual("block_discontinuity flag_heads_and_tails: tails", host(t, N), wt);
    expectEqual("block_adjacent_difference subtract_left", host(d, N), wd);
    expectEqual("block_shuffle offset 3", host(o, GROUPS * BS), wo);
    expectEqual("block_shuffle up", host(u, N), wu);
    for (int* p : {dv, h, t, d, o, u}) CHECK(hipFree(p));
  }

  { // block_reduce, block_scan with a prefix callback
    std::vector<int> v(4 * N);
    for (auto& x : v) x = int(next32() % 2000001) - 1000000;
    int* dv = dev(v);
    long long *sums = dev(std::vector<long long>(2 * 4 * GROUPS)), *scan = dev(std::vector<long long>(4 * N));
    reduceScanKernel<<<GROUPS, BS>>>(dv, sums, scan);
    CHECK(hipGetLastError());
    std::vector<long long> ws(2 * 4 * GROUPS), wscan(4 * N);
    for (unsigned g = 0; g < GROUPS; g++) {
      long long run = 0;
      for (unsigned tile = 0; tile < 4; tile++) {
        long long s = 0, m = LLONG_MIN;
        for (unsigned j = 0; j < TILE; j++) {
          const unsigned i = g * 4 * TILE + tile * TILE + j;
          wscan[i] = run;
          run += v[i], s += v[i], m = std::max<long long>(m, v[i]);
        }
        ws[2 * (g * 4 + tile)] = s, ws[2 * (g * 4 + tile) + 1] = m;
      }
    }
    expectEqual("block_reduce (raking: sum; warp-based: maximum)", host(sums, 2 * 4 * GROUPS), ws);
    expectEqual("block_scan exclusive, prefix callback over 4 tiles", host(scan, 4 * N), wscan);
    CHECK(hipFree(dv)); CHECK(hipFree(sums)); CHECK(hipFree(scan));
  }

  { // warp_sort, warp_exchange
    const unsigned n = GROUPS * BS;
    unsigned *s64 = dev(std::vector<unsigned>(2 * n)), *s16 = dev(std::vector<unsigned>(n)), *wx = dev(std::vector<unsigned>(N));
    warpKernel<<<GROUPS, BS>>>(ddist, s64, s16, wx);
    CHECK(hipGetLastError());
    std::vector<unsigned> w64(2 * n), w16(distinct.begin(), distinct.begin() + n), wwx(N);
    for (unsigned b = 0; b < n; b += 64) {
      std::vector<unsigned> idx(64);
      std::iota(idx.begin(), idx.end(), b);
      std::sort(idx.begin(), idx.end(), [&](unsigned x, unsigned y) { return distinct[x] < distinct[y]; });
      for (unsigned j = 0; j < 64; j++) w64[2 * (b + j)] = distinct[idx[j]], w64[2 * (b + j) + 1] = idx[j];
    }
    for (unsigned b = 0; b < n; b += 16) std::sort(w16.begin() + b, w16.begin() + b + 16);
    for (unsigned b = 0; b < N; b += 64 * IPT)
      for (unsigned lane = 0; lane < 64; lane++)
        for (unsigned j = 0; j < IPT; j++) wwx[b + lane * IPT + j] = distinct[b + lane + j * 64];
    expectEqual("warp_sort (64 lanes, pairs)", host(s64, 2 * n), w64);
    expectEqual("warp_sort (logical warps of 16)", host(s16, n), w16);
    expectEqual("warp_exchange blocked_to_striped", host(wx, N), wwx);
    CHECK(hipFree(s64)); CHECK(hipFree(s16)); CHECK(hipFree(wx));
  }

  // Device level.
  const size_t big = 300007;
  std::vector<unsigned> a(big), b(big / 3);
  for (auto& x : a) x = next32() % 1000000;
  for (auto& x : b) x = next32() % 1000000;
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  unsigned *da = dev(a), *db = dev(b);
  { // merge
    unsigned* out = dev(std::vector<unsigned>(a.size() + b.size()));
    auto run = [&](void* t, size_t& s) { return rocprim::merge(t, s, da, db, out, a.size(), b.size()); };
    void* temp = nullptr;
    size_t bytes = tempSize(run);
    CHECK(hipMalloc(&temp, std::max<size_t>(bytes, 1)));
    CHECK(run(temp, bytes));
    std::vector<unsigned> want(a.size() + b.size());
    std::merge(a.begin(), a.end(), b.begin(), b.end(), want.begin());
    expectEqual("merge", host(out, want.size()), want);
    CHECK(hipFree(out)); CHECK(hipFree(temp));
  }
  { // lower_bound, upper_bound of b's values in a
    size_t* out = dev(std::vector<size_t>(b.size()));
    for (int upper = 0; upper < 2; upper++) {
      auto run = [&](void* t, size_t& s) {
        return upper ? rocprim::upper_bound(t, s, da, db, out, a.size(), b.size())
                     : rocprim::lower_bound(t, s, da, db, out, a.size(), b.size());
      };
      void* temp = nullptr;
      size_t bytes = tempSize(run);
      CHECK(hipMalloc(&temp, std::max<size_t>(bytes, 1)));
      CHECK(run(temp, bytes));
      std::vector<size_t> want(b.size());
      for (size_t i = 0; i < b.size(); i++)
        want[i] = (upper ? std::upper_bound(a.begin(), a.end(), b[i]) : std::lower_bound(a.begin(), a.end(), b[i])) - a.begin();
      expectEqual(upper ? "upper_bound" : "lower_bound", host(out, b.size()), want);
      CHECK(hipFree(temp));
    }
    CHECK(hipFree(out));
  }
  { // adjacent_difference
    unsigned* out = dev(std::vector<unsigned>(big));
    auto run = [&](void* t, size_t& s) { return rocprim::adjacent_difference(t, s, da, out, big); };
    void* temp = nullptr;
    size_t bytes = tempSize(run);
    CHECK(hipMalloc(&temp, std::max<size_t>(bytes, 1)));
    CHECK(run(temp, bytes));
    std::vector<unsigned> want(big);
    std::adjacent_difference(a.begin(), a.end(), want.begin());
    expectEqual("adjacent_difference", host(out, big), want);
    CHECK(hipFree(out)); CHECK(hipFree(temp));
  }
  { // inclusive_scan_by_key: runs of equal keys (a / 1000), values a % 1000
    std::vector<unsigned> k(big), v(big), want(big);
    for (size_t i = 0; i < big; i++) k[i] = a[i] / 1000, v[i] = a[i] % 1000;
    for (size_t i = 0; i < big; i++) want[i] = v[i] + (i && k[i] == k[i - 1] ? want[i - 1] : 0);
    unsigned *dk = dev(k), *dv = dev(v), *out = dev(std::vector<unsigned>(big));
    auto run = [&](void* t, size_t& s) { return rocprim::inclusive_scan_by_key(t, s, dk, dv, out, big); };
    void* temp = nullptr;
    size_t bytes = tempSize(run);
    CHECK(hipMalloc(&temp, std::max<size_t>(bytes, 1)));
    CHECK(run(temp, bytes));
    expectEqual("inclusive_scan_by_key", host(out, big), want);
    CHECK(hipFree(dk)); CHECK(hipFree(dv)); CHECK(hipFree(out)); CHECK(hipFree(temp));
  }
  { // segmented_inclusive_scan over segments of random lengths (some empty)
    std::vector<unsigned> begins, ends;
    for (size_t s = 0; s < big;) {
      size_t len = next32() % 5 == 0 ? 0 : next32() % 3000;
      begins.push_back(unsigned(s)), ends.push_back(unsigned(std::min(big, s + len)));
      s += len;
    }
    std::vector<unsigned> want(big, 0xdeadbeefu);
    for (size_t j = 0; j < begins.size(); j++)
      for (unsigned i = begins[j]; i < ends[j]; i++) want[i] = a[i] % 1000 + (i > begins[j] ? want[i - 1] : 0);
    std::vector<unsigned> v(big);
    for (size_t i = 0; i < big; i++) v[i] = a[i] % 1000;
    unsigned *dv = dev(v), *out = dev(std::vector<unsigned>(big, 0xdeadbeefu)), *db2 = dev(begins), *de = dev(ends);
    auto run = [&](void* t, size_t& s) {
      return rocprim::segmented_inclusive_scan(t, s, dv, out, unsigned(begins.size()), db2, de);
    };
    void* temp = nullptr;
    size_t bytes = tempSize(run);
    CHECK(hipMalloc(&temp, std::max<size_t>(bytes, 1)));
    CHECK(run(temp, bytes));
    expectEqual("segmented_inclusive_scan", host(out, big), want);
    CHECK(hipFree(dv)); CHECK(hipFree(out)); CHECK(hipFree(db2)); CHECK(hipFree(de)); CHECK(hipFree(temp));
  }
  CHECK(hipFree(da)); CHECK(hipFree(db)); CHECK(hipFree(dkeys)); CHECK(hipFree(ddist));
  printf("rocprim_block: ok\n");
  return 0;
}
