// hipcc-flags: -mllvm --amdgpu-atomic-optimizations=true
// atomics64 built with LLVM's atomic optimizer (the hipcc-flags line): an atomic on a uniform
// address becomes one atomic per wave after a DPP scan of the lanes' values (row_shr 1/2/4/8,
// row_bcast 15/31 with row masks and bound_ctrl, v_readlane). The same checks as atomics64:
// 64-bit and remaining 32-bit atomics over many blocks: atomicAdd on double and unsigned long long,
// atomicCAS 64-bit loops, atomicMax/Min/Exch/And/Or/Xor on 32 and 64 bits; every total exact.
#include "common.h"

struct Out {
  unsigned long long add64;
  double addd;
  unsigned long long cas64;
  unsigned long long max64, min64, and64, or64, xor64, exch64;
  int max32, min32;
  unsigned and32, or32, xor32, exch32;
  unsigned long long exchSeen;  // sum of every value an atomicExch returned
};

__global__ void k(Out* o, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned long long big = (unsigned long long)i << 33 | i;
  atomicAdd(&o->add64, big);
  atomicAdd(&o->addd, (double)(i % 7) * 0.5);  // exact in binary: halves, sums far below 2^52
  // CAS loop adding i*3 on 64 bits
  unsigned long long old = o->cas64, assumed;
  do {
    assumed = old;
    old = atomicCAS(&o->cas64, assumed, assumed + (unsigned long long)i * 3 + (1ull << 40));
  } while (old != assumed);
  atomicMax(&o->max64, big ^ 0x5555ull);
  atomicMin(&o->min64, big + 17);
  atomicAnd(&o->and64, ~(1ull << (i % 64)) | (i % 3 ? ~0ull : 0ull) );
  atomicOr(&o->or64, 1ull << ((i * 7) % 61));
  atomicXor(&o->xor64, big);
  unsigned long long prev = atomicExch(&o->exch64, (unsigned long long)i + 1);
  atomicAdd(&o->exchSeen, prev);
  atomicMax(&o->max32, (i * 37) % 1001 - 500);
  atomicMin(&o->min32, (i * 37) % 1001 - 500);
  atomicAnd(&o->and32, ~(1u << (i % 32)) | (i % 5 ? ~0u : 0u));
  atomicOr(&o->or32, 1u << ((i * 11) % 29));
  atomicXor(&o->xor32, (unsigned)i * 2654435761u);
  unsigned p32 = atomicExch(&o->exch32, (unsigned)i + 1);
  atomicAdd(&o->exchSeen, (unsigned long long)p32 << 32);
}

int main() {
  const int n = 64 * 256;
  Out init = {};
  init.min64 = ~0ull;
  init.and64 = ~0ull;
  init.max32 = -1000;
  init.min32 = 1000;
  init.and32 = ~0u;
  Out* d;
  CHECK(hipMalloc(&d, sizeof(Out)));
  CHECK(hipMemcpy(d, &init, sizeof init, hipMemcpyHostToDevice));
  k<<<n / 256, 256>>>(d, n);
  CHECK(hipGetLastError());
  Out o;
  CHECK(hipMemcpy(&o, d, sizeof o, hipMemcpyDeviceToHost));

  Out w = init;
  for (int i = 0; i < n; i++) {
    unsigned long long big = (unsigned long long)i << 33 | i;
    w.add64 += big;
    w.addd += (double)(i % 7) * 0.5;
    w.cas64 += (unsigned long long)i * 3 + (1ull << 40);
    if ((big ^ 0x5555ull) > w.max64) w.max64 = big ^ 0x5555ull;
    if (big + 17 < w.min64) w.min64 = big + 17;
    w.and64 &= ~(1ull << (i % 64)) | (i % 3 ? ~0ull : 0ull);
    w.or64 |= 1ull << ((i * 7) % 61);
    w.xor64 ^= big;
    int v = (i * 37) % 1001 - 500;
    if (v > w.max32) w.max32 = v;
    if (v < w.min32) w.min32 = v;
    w.and32 &= ~(1u << (i % 32)) | (i % 5 ? ~0u : 0u);
    w.or32 |= 1u << ((i * 11) % 29);
    w.xor32 ^= (unsigned)i * 2654435761u;
  }
  EXPECT(o.add64 == w.add64, "add64 %llx want %llx", o.add64, w.add64);
  EXPECT(o.addd == w.addd, "add double %.17g want %.17g", o.addd, w.addd);
  EXPECT(o.cas64 == w.cas64, "cas64 %llx want %llx", o.cas64, w.cas64);
  EXPECT(o.max64 == w.max64, "max64 %llx want %llx", o.max64, w.max64);
  EXPECT(o.min64 == w.min64, "min64 %llx want %llx", o.min64, w.min64);
  EXPECT(o.and64 == w.and64, "and64 %llx want %llx", o.and64, w.and64);
  EXPECT(o.or64 == w.or64, "or64 %llx want %llx", o.or64, w.or64);
  EXPECT(o.xor64 == w.xor64, "xor64 %llx want %llx", o.xor64, w.xor64);
  EXPECT(o.max32 == w.max32, "max32 %d want %d", o.max32, w.max32);
  EXPECT(o.min32 == w.min32, "min32 %d want %d", o.min32, w.min32);
  EXPECT(o.and32 == w.and32, "and32 %x want %x", o.and32, w.and32);
  EXPECT(o.or32 == w.or32, "or32 %x want %x", o.or32, w.or32);
  EXPECT(o.xor32 == w.xor32, "xor32 %x want %x", o.xor32, w.xor32);
  // Every exchange returns the value one other exchange stored (or the initial 0): the returned values
  // and the final one are 0, 1, ..., n, each once, so they sum to n(n+1)/2 on each half.
  unsigned long long tri = (unsigned long long)n * (n + 1) / 2;
  EXPECT(o.exch64 >= 1 && o.exch64 <= (unsigned long long)n, "exch64 final %llu", o.exch64);
  EXPECT((o.exchSeen & 0xffffffffull) + o.exch64 == tri, "exch64 returned values sum %llu + final %llu, want %llu",
         o.exchSeen & 0xffffffffull, o.exch64, tri);
  EXPECT((o.exchSeen >> 32) + o.exch32 == tri, "exch32 returned values sum %llu + final %u, want %llu",
         o.exchSeen >> 32, o.exch32, tri);
  printf("atomics_dpp: ok\n");
  return 0;
}
