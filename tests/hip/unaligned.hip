// Unaligned global memory: a packed struct of 27 bytes (char, int, double, short, long long, float)
// read and written whole per work-item, so clang's dword and dwordx2 loads and stores land on odd
// addresses (gfx9 with the unaligned access mode ROCm sets), and a dword loaded from every
// address 3t+1; then 64 packed 15-byte structs through shared memory (ds_read/write_b32 and _b64 at
// odd LDS addresses), each work-item updating another's; each against the same bytes on the host.
#include "common.h"
#include <vector>
#include <cstring>
struct __attribute__((packed)) P { char c; int i; double d; short s; long long q; float f; };
__global__ void k(const P* in, P* out, int n, const char* raw, unsigned* words) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  P p = in[t];
  p.i += t; p.d *= 2; p.s -= 1; p.q ^= 0x1234; p.f += 1.5f; p.c += 1;
  out[t] = p;
  words[t] = *(const unsigned*)(raw + t * 3 + 1);  // a dword at an odd address
}
struct __attribute__((packed)) L { char c; int i; double d; short s; };
__global__ void lds(const L* in, L* out) {
  __shared__ L sp[64];
  int t = threadIdx.x;
  sp[t] = in[t];
  __syncthreads();
  L p = sp[63 - t];
  p.i += t; p.d += 1; p.s ^= 3;
  sp[63 - t] = p;
  __syncthreads();
  out[t] = sp[t];
}

int main() {
  const int n = 300;
  std::vector<P> h(n);
  for (int t = 0; t < n; t++) h[t] = P{(char)t, t * 7, t * 0.25, (short)(t * 3), (long long)t << 33, t * 0.5f};
  std::vector<char> raw(4 * n);
  for (int i = 0; i < 4 * n; i++) raw[i] = (char)(i * 13 + 5);
  P *di, *dout; char* dr; unsigned* dw;
  CHECK(hipMalloc(&di, n * sizeof(P))); CHECK(hipMalloc(&dout, n * sizeof(P))); CHECK(hipMalloc(&dr, 4 * n)); CHECK(hipMalloc(&dw, 4 * n));
  CHECK(hipMemcpy(di, h.data(), n * sizeof(P), hipMemcpyHostToDevice)); CHECK(hipMemcpy(dr, raw.data(), 4 * n, hipMemcpyHostToDevice));
  k<<<(n + 63) / 64, 64>>>(di, dout, n, dr, dw);
  std::vector<P> o(n); std::vector<unsigned> w(n);
  CHECK(hipMemcpy(o.data(), dout, n * sizeof(P), hipMemcpyDeviceToHost)); CHECK(hipMemcpy(w.data(), dw, 4 * n, hipMemcpyDeviceToHost));
  for (int t = 0; t < n; t++) {
    P e = h[t]; e.i += t; e.d *= 2; e.s -= 1; e.q ^= 0x1234; e.f += 1.5f; e.c += 1;
    EXPECT(memcmp(&o[t], &e, sizeof(P)) == 0, "packed struct %d differs", t);
    unsigned x; memcpy(&x, raw.data() + t * 3 + 1, 4);
    EXPECT(w[t] == x, "unaligned dword %d: %#x want %#x", t, w[t], x);
  }
  std::vector<L> hl(64);
  for (int t = 0; t < 64; t++) hl[t] = L{(char)t, t * 11, t * 1.5, (short)t};
  L *li, *lo;
  CHECK(hipMalloc(&li, sizeof(L) * 64));
  CHECK(hipMalloc(&lo, sizeof(L) * 64));
  CHECK(hipMemcpy(li, hl.data(), sizeof(L) * 64, hipMemcpyHostToDevice));
  lds<<<1, 64>>>(li, lo);
  std::vector<L> ol(64);
  CHECK(hipMemcpy(ol.data(), lo, sizeof(L) * 64, hipMemcpyDeviceToHost));
  for (int t = 0; t < 64; t++) {
    L e = hl[t];
    e.i += 63 - t, e.d += 1, e.s ^= 3;
    EXPECT(memcmp(&ol[t], &e, sizeof(L)) == 0, "packed struct %d through LDS differs", t);
  }
  printf("unaligned: %d packed structs of %zu bytes and %d odd dwords: ok\n", n, sizeof(P), n);
  return 0;
}
