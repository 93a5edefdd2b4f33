// Atomics in shared memory (LDS) and the gfx90a floating-point atomics: per block, every thread adds
// to a __shared__ double, float and 64-bit counters, min/max/and/or/xor/exch/CAS on 64 bits,
// atomicInc/atomicDec with wrap limits (also on global memory), and unsafeAtomicAdd (float and
// double: ds_add_f32, global_atomic_add_f32, flat_atomic_add_f64 on both a global and a shared
// address); totals and the multiset of returned values exact.
#include "common.h"
#include <vector>

struct Blk {
  double dsum, dsumFlat;
  float fsum, fsumUnsafe;
  unsigned long long add, mx, mn, an, orr, xr, cas, exch, exchSeen;
  unsigned inc, dec;
  unsigned long long incSeen, decSeen;
};

__global__ void shared_k(Blk* out, int base) {
  __shared__ double sd, sdf;
  __shared__ float sf, sfu;
  __shared__ unsigned long long add, mx, mn, an, orr, xr, cas, exch, exchSeen, incSeen, decSeen;
  __shared__ unsigned inc, dec;
  int t = threadIdx.x;
  if (t == 0) {
    sd = sdf = 0;
    sf = sfu = 0;
    add = 0, mx = 0, mn = ~0ull, an = ~0ull, orr = 0, xr = 0, cas = 0, exch = 0, exchSeen = 0, incSeen = 0, decSeen = 0;
    inc = 0, dec = 5;
  }
  __syncthreads();
  unsigned long long v = ((unsigned long long)(t + base) << 35) ^ (unsigned long long)(t * 2654435761u);
  atomicAdd(&sd, (t % 9) * 0.125);
  unsafeAtomicAdd(&sdf, (t % 5) * 0.5);  // flat_atomic_add_f64 on a shared address
  atomicAdd(&sf, (float)(t % 11) * 0.25f);
  unsafeAtomicAdd(&sfu, (float)(t % 3));
  atomicAdd(&add, v);
  atomicMax(&mx, v);
  atomicMin(&mn, v);
  atomicAnd(&an, ~(1ull << (t % 64)) | (t & 1 ? ~0ull : 0ull));
  atomicOr(&orr, 1ull << ((t * 5) % 64));
  atomicXor(&xr, v);
  unsigned long long o = cas, a;
  do {
    a = o;
    o = atomicCAS(&cas, a, a + (unsigned long long)t + 1);
  } while (o != a);
  atomicAdd(&exchSeen, atomicExch(&exch, (unsigned long long)t + 1));
  atomicAdd(&incSeen, (unsigned long long)atomicInc(&inc, 6));   // 0..6 then back to 0
  atomicAdd(&decSeen, (unsigned long long)atomicDec(&dec, 9));   // from 5 down, 0 -> 9
  __syncthreads();
  if (t == 0) {
    Blk b;
    b.dsum = sd, b.dsumFlat = sdf, b.fsum = sf, b.fsumUnsafe = sfu;
    b.add = add, b.mx = mx, b.mn = mn, b.an = an, b.orr = orr, b.xr = xr, b.cas = cas, b.exch = exch;
    b.exchSeen = exchSeen, b.inc = inc, b.dec = dec, b.incSeen = incSeen, b.decSeen = decSeen;
    out[blockIdx.x] = b;
  }
}

__global__ void global_k(double* d, float* f, unsigned* inc, unsigned* dec, unsigned long long* seen) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  unsafeAtomicAdd(d, (t % 7) * 0.25);          // flat_atomic_add_f64 on a global address
  unsafeAtomicAdd(f, (float)(t % 13) * 0.5f);  // global_atomic_add_f32
  atomicAdd(&seen[0], (unsigned long long)atomicInc(inc, 1000));
  atomicAdd(&seen[1], (unsigned long long)atomicDec(dec, 77));
}

int main() {
  const int blocks = 8, threads = 256;
  Blk* d;
  CHECK(hipMalloc(&d, blocks * sizeof(Blk)));
  shared_k<<<blocks, threads>>>(d, 3);
  CHECK(hipGetLastError());
  std::vector<Blk> h(blocks);
  CHECK(hipMemcpy(h.data(), d, blocks * sizeof(Blk), hipMemcpyDeviceToHost));
  for (int b = 0; b < blocks; b++) {
    Blk w = {};
    w.mn = ~0ull, w.an = ~0ull, w.dec = 5;
    unsigned long long incAt = 0, decAt = 5;
    for (int t = 0; t < threads; t++) {
      unsigned long long v = ((unsigned long long)(t + 3) << 35) ^ (unsigned long long)(t * 2654435761u);
      w.dsum += (t % 9) * 0.125, w.dsumFlat += (t % 5) * 0.5, w.fsum += (float)(t % 11) * 0.25f, w.fsumUnsafe += (float)(t % 3);
      w.add += v, w.mx = v > w.mx ? v : w.mx, w.mn = v < w.mn ? v : w.mn;
      w.an &= ~(1ull << (t % 64)) | (t & 1 ? ~0ull : 0ull);
      w.orr |= 1ull << ((t * 5) % 64);
      w.xr ^= v;
      w.cas += (unsigned long long)t + 1;
      w.incSeen += incAt, incAt = incAt >= 6 ? 0 : incAt + 1;
      w.decSeen += decAt, decAt = (decAt == 0 || decAt > 9) ? 9 : decAt - 1;
    }
    w.inc = (unsigned)incAt, w.dec = (unsigned)decAt;
    const Blk& g = h[b];
    EXPECT(g.dsum == w.dsum && g.dsumFlat == w.dsumFlat, "block %d: double sums %g %g, want %g %g", b, g.dsum, g.dsumFlat,
           w.dsum, w.dsumFlat);
    EXPECT(g.fsum == w.fsum && g.fsumUnsafe == w.fsumUnsafe, "block %d: float sums %g %g, want %g %g", b, g.fsum,
           g.fsumUnsafe, w.fsum, w.fsumUnsafe);
    EXPECT(g.add == w.add && g.mx == w.mx && g.mn == w.mn, "block %d: add/max/min %llx %llx %llx", b, g.add, g.mx, g.mn);
    EXPECT(g.an == w.an && g.orr == w.orr && g.xr == w.xr, "block %d: and/or/xor %llx %llx %llx, want %llx %llx %llx", b,
           g.an, g.orr, g.xr, w.an, w.orr, w.xr);
    EXPECT(g.cas == w.cas, "block %d: cas %llu, want %llu", b, g.cas, w.cas);
    unsigned long long tri = (unsigned long long)threads * (threads + 1) / 2;
    EXPECT(g.exchSeen + g.exch == tri, "block %d: exch returned %llu + final %llu, want %llu", b, g.exchSeen, g.exch, tri);
    EXPECT(g.inc == w.inc && g.incSeen == w.incSeen, "block %d: atomicInc final %u (want %u), returned sum %llu (want %llu)",
           b, g.inc, w.inc, g.incSeen, w.incSeen);
    EXPECT(g.dec == w.dec && g.decSeen == w.decSeen, "block %d: atomicDec final %u (want %u), returned sum %llu (want %llu)",
           b, g.dec, w.dec, g.decSeen, w.decSeen);
  }

  double* gd;
  float* gf;
  unsigned *ginc, *gdec;
  unsigned long long* seen;
  CHECK(hipMalloc(&gd, 8));
  CHECK(hipMalloc(&gf, 4));
  CHECK(hipMalloc(&ginc, 4));
  CHECK(hipMalloc(&gdec, 4));
  CHECK(hipMalloc(&seen, 16));
  CHECK(hipMemset(gd, 0, 8));
  CHECK(hipMemset(gf, 0, 4));
  CHECK(hipMemset(ginc, 0, 4));
  unsigned dec0 = 40;
  CHECK(hipMemcpy(gdec, &dec0, 4, hipMemcpyHostToDevice));
  CHECK(hipMemset(seen, 0, 16));
  const int gb = 16, gt = 256, n = gb * gt;
  global_k<<<gb, gt>>>(gd, gf, ginc, gdec, seen);
  double rd;
  float rf;
  unsigned ri, rdec;
  unsigned long long rs[2];
  CHECK(hipMemcpy(&rd, gd, 8, hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(&rf, gf, 4, hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(&ri, ginc, 4, hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(&rdec, gdec, 4, hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(rs, seen, 16, hipMemcpyDeviceToHost));
  double wd = 0;
  float wf = 0;
  unsigned long long wi = 0, wdec = dec0, si = 0, sdec = 0;
  for (int t = 0; t < n; t++) {
    wd += (t % 7) * 0.25, wf += (float)(t % 13) * 0.5f;
    si += wi, wi = wi >= 1000 ? 0 : wi + 1;
    sdec += wdec, wdec = (wdec == 0 || wdec > 77) ? 77 : wdec - 1;
  }
  EXPECT(rd == wd, "global unsafeAtomicAdd double %g, want %g", rd, wd);
  EXPECT(rf == wf, "global unsafeAtomicAdd float %g, want %g", rf, wf);
  EXPECT(ri == wi && rs[0] == si, "global atomicInc final %u (want %llu), returned sum %llu (want %llu)", ri, wi, rs[0], si);
  EXPECT(rdec == wdec && rs[1] == sdec, "global atomicDec final %u (want %llu), returned sum %llu (want %llu)", rdec, wdec,
         rs[1], sdec);
  printf("lds_atomics: ok\n");
  return 0;
}
