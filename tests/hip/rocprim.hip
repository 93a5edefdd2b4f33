// hipcc-flags: -std=c++17
// Debian's rocPRIM 5.3.3 (librocprim-dev, header-only, instantiated here by hipcc): device-wide
// radix sort (keys; key-value pairs, stable; float keys with negatives, denormals and both zeros on
// the merge path and, above 1 Mi keys, on the multi-pass radix path; 64-bit keys; a bit range,
// descending), merge sort, reduce, inclusive and exclusive scan (single-pass decoupled look-back: a
// work-group waits on the partial results the earlier work-groups publish, so they must run
// concurrently and see each other's stores in order), segmented reduce, select by flags and by
// predicate, unique, partition, run-length encode, histogram_even, segmented radix sort and
// reduce_by_key, mostly over 200003 elements
// (an odd size: partial tiles), and the warp_reduce, warp_scan and block_scan primitives in a
// kernel of its own, each checked exactly against the same computation on the host.
// The multi-pass radix sort of pairs found that s_movk_i32 cleared SCC (gpu/shader
// TestScalarSCCKept): its scatter wrote 16 GiB past the output.
#include "common.h"
#include <rocprim/rocprim.hpp>
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <vector>

static uint64_t rng = 0x9e3779b97f4a7c15ull;
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

// run calls f(temp, bytes) twice, as every rocPRIM device algorithm is used: once with a null
// buffer for the size of its temporary storage, then with the storage.
template <class F>
static void run(F f) {
  size_t bytes = 0;
  CHECK(f(nullptr, bytes));
  void* temp;
  CHECK(hipMalloc(&temp, std::max<size_t>(bytes, 1)));
  CHECK(f(temp, bytes));
  CHECK(hipDeviceSynchronize());
  CHECK(hipFree(temp));
}

template <class T>
static unsigned long long bits(T v) {
  unsigned long long b = 0;
  std::memcpy(&b, &v, sizeof(T) < 8 ? sizeof(T) : 8);
  return b;
}

template <class T>
static void expectEqual(const char* what, const std::vector<T>& got, const std::vector<T>& want) {
  EXPECT(got.size() == want.size(), "%s: %zu elements, want %zu", what, got.size(), want.size());
  for (size_t i = 0; i < want.size(); i++)
    EXPECT(std::memcmp(&got[i], &want[i], sizeof(T)) == 0, "%s: element %zu differs: %#llx, want %#llx", what, i,
           bits(got[i]), bits(want[i]));
  printf("%s: ok (%zu elements)\n", what, want.size());
}

// Warp- and block-level primitives in a kernel of this program: warp_reduce and warp_scan over 64
// lanes (DPP and swizzles), block_scan (reduce_then_scan) over 256 threads with an initial value.
__global__ void primitives(const int* in, int* red, int* scan, int* bscan) {
  using wr = rocprim::warp_reduce<int, 64>;
  using ws = rocprim::warp_scan<int, 64>;
  using bs = rocprim::block_scan<int, 256, rocprim::block_scan_algorithm::reduce_then_scan>;
  __shared__ typename wr::storage_type s1[4];
  __shared__ typename ws::storage_type s2[4];
  __shared__ typename bs::storage_type s3;
  int t = blockIdx.x * 256 + threadIdx.x, w = threadIdx.x / 64, v = in[t], r, s, b;
  wr().reduce(v, r, s1[w]);
  ws().inclusive_scan(v, s, s2[w]);
  bs().exclusive_scan(v, b, 5, s3);
  if (threadIdx.x % 64 == 0) red[t / 64] = r;
  scan[t] = s;
  bscan[t] = b;
}

int main() {
  setvbuf(stdout, nullptr, _IOLBF, 0); // progress shows even when the program is killed
  const size_t n = 200003;

  // Radix sort of 32-bit keys, and of key-value pairs (stable: equal keys keep their order).
  std::vector<uint32_t> keys(n), vals(n);
  for (size_t i = 0; i < n; i++) {
    keys[i] = next32() % 50000; // many equal keys: stability shows
    vals[i] = uint32_t(i);
  }
  {
    uint32_t *kin = dev(keys), *kout = dev(std::vector<uint32_t>(n));
    run([&](void* t, size_t& b) { return rocprim::radix_sort_keys(t, b, kin, kout, n); });
    std::vector<uint32_t> want = keys;
    std::sort(want.begin(), want.end());
    expectEqual("radix_sort_keys u32", host(kout, n), want);

    uint32_t *vin = dev(vals), *vout = dev(std::vector<uint32_t>(n));
    run([&](void* t, size_t& b) { return rocprim::radix_sort_pairs(t, b, kin, kout, vin, vout, n); });
    std::vector<uint32_t> idx(n);
    std::iota(idx.begin(), idx.end(), 0);
    std::stable_sort(idx.begin(), idx.end(), [&](uint32_t a, uint32_t b) { return keys[a] < keys[b]; });
    std::vector<uint32_t> wantK(n), wantV(n);
    for (size_t i = 0; i < n; i++) wantK[i] = keys[idx[i]], wantV[i] = vals[idx[i]];
    expectEqual("radix_sort_pairs keys", host(kout, n), wantK);
    expectEqual("radix_sort_pairs values (stable)", host(vout, n), wantV);

    // Descending, over bits [4, 20) only: keys equal in those bits keep their order.
    run([&](void* t, size_t& b) {
      return rocprim::radix_sort_pairs_desc(t, b, kin, kout, vin, vout, n, 4, 20);
    });
    auto field = [](uint32_t k) { return (k >> 4) & 0xffff; };
    std::iota(idx.begin(), idx.end(), 0);
    std::stable_sort(idx.begin(), idx.end(), [&](uint32_t a, uint32_t b) { return field(keys[a]) > field(keys[b]); });
    for (size_t i = 0; i < n; i++) wantK[i] = keys[idx[i]], wantV[i] = vals[idx[i]];
    expectEqual("radix_sort_pairs_desc bits [4,20) keys", host(kout, n), wantK);
    expectEqual("radix_sort_pairs_desc bits [4,20) values", host(vout, n), wantV);
    CHECK(hipFree(kin)); CHECK(hipFree(kout)); CHECK(hipFree(vin)); CHECK(hipFree(vout));
  }

  // Float keys with negatives, denormals and both zeros, with their values: ordered by rocPRIM's
  // key codec (radix_key_codec_floating: the IEEE bits with negatives inverted, -0.0 taken as +0.0,
  // detail/radix_sort.hpp) and stable, so the result is exact. 200003 keys take rocPRIM's merge
  // path on gfx90a, above 1 Mi its multi-pass radix path (digit histograms, their scan, a scatter
  // per 7- or 6-bit digit).
  for (size_t m : {n, size_t(1u << 20) + 3}) {
    std::vector<float> f(m);
    std::vector<uint32_t> v(m);
    for (size_t i = 0; i < m; i++) f[i] = (int32_t(next32()) >> 12) / 64.0f, v[i] = uint32_t(i);
    f[1] = -0.0f, f[2] = 0.0f, f[3] = -0.0f, f[4] = 1e-40f, f[5] = -1e-40f, f[m - 1] = -0.0f;
    auto code = [&](uint32_t i) {
      uint32_t b;
      std::memcpy(&b, &f[i], 4);
      if (b == 0x80000000u) b = 0;
      return b ^ ((b & 0x80000000u) == 0 ? 0x80000000u : 0xffffffffu);
    };
    std::vector<uint32_t> idx(m);
    std::iota(idx.begin(), idx.end(), 0);
    std::stable_sort(idx.begin(), idx.end(), [&](uint32_t a, uint32_t b) { return code(a) < code(b); });
    std::vector<float> wantK(m);
    std::vector<uint32_t> wantV(m);
    for (size_t i = 0; i < m; i++) wantK[i] = f[idx[i]], wantV[i] = v[idx[i]];
    float *kin = dev(f), *kout = dev(std::vector<float>(m));
    uint32_t *vin = dev(v), *vout = dev(std::vector<uint32_t>(m));
    run([&](void* t, size_t& b) { return rocprim::radix_sort_pairs(t, b, kin, kout, vin, vout, m); });
    const char* path = m == n ? "merge path" : "multi-pass radix path";
    char what[128];
    snprintf(what, sizeof what, "radix_sort_pairs f32 %zu (%s) keys", m, path);
    expectEqual(what, host(kout, m), wantK);
    snprintf(what, sizeof what, "radix_sort_pairs f32 %zu (%s) values", m, path);
    expectEqual(what, host(vout, m), wantV);
    CHECK(hipFree(kin)); CHECK(hipFree(kout)); CHECK(hipFree(vin)); CHECK(hipFree(vout));
  }

  // 64-bit keys, all bits.
  {
    std::vector<uint64_t> k(n);
    for (auto& v : k) v = uint64_t(next32()) << 32 | next32();
    uint64_t *in = dev(k), *out = dev(std::vector<uint64_t>(n));
    run([&](void* t, size_t& b) { return rocprim::radix_sort_keys(t, b, in, out, n); });
    std::sort(k.begin(), k.end());
    expectEqual("radix_sort_keys u64", host(out, n), k);
    CHECK(hipFree(in)); CHECK(hipFree(out));
  }

  // Merge sort with a comparator of the program's own (descending by low byte, then ascending).
  {
    std::vector<int> v(n);
    for (auto& x : v) x = int(next32() >> 1);
    auto cmp = [] __host__ __device__(int a, int b) {
      return (a & 255) != (b & 255) ? (a & 255) > (b & 255) : a < b;
    };
    int *in = dev(v), *out = dev(std::vector<int>(n));
    run([&](void* t, size_t& b) { return rocprim::merge_sort(t, b, in, out, n, cmp); });
    std::sort(v.begin(), v.end(), cmp);
    expectEqual("merge_sort", host(out, n), v);
    CHECK(hipFree(in)); CHECK(hipFree(out));
  }

  // Reduce and scans over int (mod 2^32 as unsigned: exact on both sides).
  std::vector<uint32_t> x(n);
  for (auto& v : x) v = next32();
  uint32_t *xin = dev(x), *xout = dev(std::vector<uint32_t>(n));
  {
    run([&](void* t, size_t& b) {
      return rocprim::reduce(t, b, xin, xout, 7u, n, rocprim::plus<uint32_t>());
    });
    uint32_t want = std::accumulate(x.begin(), x.end(), 7u);
    expectEqual("reduce", host(xout, 1), std::vector<uint32_t>{want});

    auto maxop = rocprim::maximum<uint32_t>();
    run([&](void* t, size_t& b) { return rocprim::reduce(t, b, xin, xout, n, maxop); });
    expectEqual("reduce max", host(xout, 1), std::vector<uint32_t>{*std::max_element(x.begin(), x.end())});

    run([&](void* t, size_t& b) {
      return rocprim::inclusive_scan(t, b, xin, xout, n, rocprim::plus<uint32_t>());
    });
    std::vector<uint32_t> want2(n);
    std::partial_sum(x.begin(), x.end(), want2.begin());
    expectEqual("inclusive_scan (decoupled look-back)", host(xout, n), want2);

    run([&](void* t, size_t& b) {
      return rocprim::exclusive_scan(t, b, xin, xout, 100u, n, rocprim::plus<uint32_t>());
    });
    uint32_t acc = 100u;
    for (size_t i = 0; i < n; i++) want2[i] = acc, acc += x[i];
    expectEqual("exclusive_scan", host(xout, n), want2);
  }

  // Segmented reduce: 1000 segments of random lengths (some empty).
  {
    const int segs = 1000;
    std::vector<int> off(segs + 1);
    for (int s = 1; s < segs; s++) off[s] = next32() % n;
    off[0] = 0, off[segs] = int(n);
    std::sort(off.begin(), off.end());
    int* doff = dev(off);
    uint32_t* out = dev(std::vector<uint32_t>(segs));
    run([&](void* t, size_t& b) {
      return rocprim::segmented_reduce(t, b, xin, out, segs, doff, doff + 1, rocprim::plus<uint32_t>(), 5u);
    });
    std::vector<uint32_t> want(segs);
    for (int s = 0; s < segs; s++) want[s] = std::accumulate(x.begin() + off[s], x.begin() + off[s + 1], 5u);
    expectEqual("segmented_reduce", host(out, segs), want);
    CHECK(hipFree(doff)); CHECK(hipFree(out));
  }

  // Select by flags and by predicate, unique, partition: their outputs are positioned by a scan.
  {
    std::vector<unsigned char> flags(n);
    for (auto& f : flags) f = next32() % 3 == 0;
    unsigned char* dflags = dev(flags);
    unsigned* count = dev(std::vector<unsigned>(1));
    run([&](void* t, size_t& b) { return rocprim::select(t, b, xin, dflags, xout, count, n); });
    std::vector<uint32_t> want;
    for (size_t i = 0; i < n; i++)
      if (flags[i]) want.push_back(x[i]);
    expectEqual("select flags: count", host(count, 1), std::vector<unsigned>{unsigned(want.size())});
    expectEqual("select flags", host(xout, want.size()), want);

    auto odd = [] __host__ __device__(uint32_t v) { return (v & 1) != 0; };
    run([&](void* t, size_t& b) { return rocprim::select(t, b, xin, xout, count, n, odd); });
    want.clear();
    for (auto v : x)
      if (odd(v)) want.push_back(v);
    expectEqual("select predicate: count", host(count, 1), std::vector<unsigned>{unsigned(want.size())});
    expectEqual("select predicate", host(xout, want.size()), want);

    // partition: selected first in order, the rest after them in reverse order.
    run([&](void* t, size_t& b) { return rocprim::partition(t, b, xin, xout, count, n, odd); });
    std::vector<uint32_t> part = want;
    for (size_t i = n; i-- > 0;)
      if (!odd(x[i])) part.push_back(x[i]);
    expectEqual("partition", host(xout, n), part);

    std::vector<uint32_t> runs(n);
    for (size_t i = 0; i < n; i++) runs[i] = (i / 7 + next32() % 2) % 97; // runs of repeats
    uint32_t* rin = dev(runs);
    run([&](void* t, size_t& b) {
      return rocprim::unique(t, b, rin, xout, count, n, rocprim::equal_to<uint32_t>());
    });
    std::vector<uint32_t> uniq;
    std::vector<unsigned> counts;
    for (size_t i = 0; i < n; i++) {
      if (i == 0 || runs[i] != runs[i - 1]) uniq.push_back(runs[i]), counts.push_back(0);
      counts.back()++;
    }
    expectEqual("unique: count", host(count, 1), std::vector<unsigned>{unsigned(uniq.size())});
    expectEqual("unique", host(xout, uniq.size()), uniq);

    unsigned* dcounts = dev(std::vector<unsigned>(n));
    run([&](void* t, size_t& b) {
      return rocprim::run_length_encode(t, b, rin, n, xout, dcounts, count);
    });
    expectEqual("run_length_encode: runs", host(count, 1), std::vector<unsigned>{unsigned(uniq.size())});
    expectEqual("run_length_encode: values", host(xout, uniq.size()), uniq);
    expectEqual("run_length_encode: lengths", host(dcounts, counts.size()), counts);
    CHECK(hipFree(dflags)); CHECK(hipFree(count)); CHECK(hipFree(rin)); CHECK(hipFree(dcounts));
  }

  // histogram_even: 100 bins over [0, 1000), samples outside the range not counted.
  {
    std::vector<int> s(n);
    for (auto& v : s) v = int(next32() % 1200) - 100;
    int* ds = dev(s);
    unsigned* hist = dev(std::vector<unsigned>(100));
    run([&](void* t, size_t& b) { return rocprim::histogram_even(t, b, ds, unsigned(n), hist, 101u, 0, 1000); });
    std::vector<unsigned> want(100);
    for (int v : s)
      if (v >= 0 && v < 1000) want[v / 10]++;
    expectEqual("histogram_even", host(hist, 100), want);
    CHECK(hipFree(ds)); CHECK(hipFree(hist));
  }
  // Warp and block primitives (the kernel above) over 100 blocks.
  {
    const int m = 256 * 100;
    std::vector<int> v(m);
    for (auto& e : v) e = int(next32() % 1000) - 500;
    int *dv = dev(v), *dr = dev(std::vector<int>(m / 64)), *ds = dev(std::vector<int>(m)), *db = dev(std::vector<int>(m));
    hipLaunchKernelGGL(primitives, dim3(m / 256), dim3(256), 0, 0, dv, dr, ds, db);
    CHECK(hipGetLastError());
    std::vector<int> wr(m / 64), ws(m), bs(m);
    for (int w = 0; w < m / 64; w++) {
      int acc = 0;
      for (int l = 0; l < 64; l++) ws[w * 64 + l] = acc += v[w * 64 + l];
      wr[w] = acc;
    }
    for (int g = 0; g < m / 256; g++) {
      int acc = 5;
      for (int l = 0; l < 256; l++) bs[g * 256 + l] = acc, acc += v[g * 256 + l];
    }
    expectEqual("warp_reduce", host(dr, m / 64), wr);
    expectEqual("warp_scan inclusive", host(ds, m), ws);
    expectEqual("block_scan exclusive (reduce_then_scan)", host(db, m), bs);
    CHECK(hipFree(dv)); CHECK(hipFree(dr)); CHECK(hipFree(ds)); CHECK(hipFree(db));
  }

  // Segmented radix sort (segments of 0 to 4999 keys) and reduce_by_key (runs of repeated keys).
  {
    std::vector<unsigned> off{0};
    while (off.back() < n) off.push_back(unsigned(std::min<size_t>(n, off.back() + next32() % 5000)));
    const unsigned segs = unsigned(off.size() - 1);
    unsigned *doff = dev(off), *kin = dev(x), *kout = dev(std::vector<unsigned>(n));
    run([&](void* t, size_t& b) { return rocprim::segmented_radix_sort_keys(t, b, kin, kout, unsigned(n), segs, doff, doff + 1); });
    std::vector<uint32_t> want = x;
    for (unsigned i = 0; i < segs; i++) std::sort(want.begin() + off[i], want.begin() + off[i + 1]);
    expectEqual("segmented_radix_sort_keys", host(kout, n), want);

    std::vector<int> keys(n), vals(n);
    for (size_t i = 0; i < n; i++) keys[i] = int((i / 7 + next32() % 2) % 50), vals[i] = int(next32() % 100);
    int *dk = dev(keys), *dv = dev(vals), *uk = dev(std::vector<int>(n)), *agg = dev(std::vector<int>(n));
    unsigned* cnt = dev(std::vector<unsigned>(1));
    run([&](void* t, size_t& b) { return rocprim::reduce_by_key(t, b, dk, dv, unsigned(n), uk, agg, cnt, rocprim::plus<int>()); });
    std::vector<int> wk, wv;
    for (size_t i = 0; i < n; i++) {
      if (i == 0 || keys[i] != keys[i - 1]) wk.push_back(keys[i]), wv.push_back(0);
      wv.back() += vals[i];
    }
    expectEqual("reduce_by_key: runs", host(cnt, 1), std::vector<unsigned>{unsigned(wk.size())});
    expectEqual("reduce_by_key: keys", host(uk, wk.size()), wk);
    expectEqual("reduce_by_key: sums", host(agg, wv.size()), wv);
    CHECK(hipFree(doff)); CHECK(hipFree(kin)); CHECK(hipFree(kout)); CHECK(hipFree(dk)); CHECK(hipFree(dv));
    CHECK(hipFree(uk)); CHECK(hipFree(agg)); CHECK(hipFree(cnt));
  }

  CHECK(hipFree(xin)); CHECK(hipFree(xout));
  printf("rocprim: ok\n");
  return 0;
}
