// Device function calls as the AMDGPU calling convention makes them: recursion (the stack in
// scratch, the frame pointer and callee-saved registers spilled per call), calls through function
// pointers chosen per lane (divergent indirect calls: s_swappc in a loop over the distinct
// targets), virtual methods of objects built in the kernel, a non-inlined function of 40
// arguments (the ones past the argument registers passed on the stack), and a large private array
// indexed by data (scratch addressing per lane). Every result checked against the same code on
// the host.
#include "common.h"
#include <vector>

__host__ __device__ __attribute__((noinline)) int ack(int m, int n) {
  if (m == 0) return n + 1;
  if (n == 0) return ack(m - 1, 1);
  return ack(m - 1, ack(m, n - 1));
}

__host__ __device__ __attribute__((noinline)) long long fibm(int n, long long mod) {
  return n < 2 ? n : (fibm(n - 1, mod) + fibm(n - 2, mod)) % mod;
}

typedef int (*op_t)(int, int);
__device__ __attribute__((noinline)) int op_add(int a, int b) { return a + b; }
__device__ __attribute__((noinline)) int op_mul(int a, int b) { return a * b; }
__device__ __attribute__((noinline)) int op_xor(int a, int b) { return (a ^ b) + 3; }
__device__ __attribute__((noinline)) int op_rec(int a, int b) { return a > 0 ? op_rec(a - 1, b + 2) : b; }
static int h_add(int a, int b) { return a + b; }
static int h_mul(int a, int b) { return a * b; }
static int h_xor(int a, int b) { return (a ^ b) + 3; }
static int h_rec(int a, int b) { return a > 0 ? h_rec(a - 1, b + 2) : b; }

struct Shape {
  __host__ __device__ virtual int area() const = 0;
  __host__ __device__ virtual int sides() const { return 0; }
  __host__ __device__ virtual ~Shape() {}
};
struct Rect : Shape {
  int w, h;
  __host__ __device__ Rect(int w_, int h_) : w(w_), h(h_) {}
  __host__ __device__ int area() const override { return w * h; }
  __host__ __device__ int sides() const override { return 4; }
};
struct Tri : Shape {
  int b, h;
  __host__ __device__ Tri(int b_, int h_) : b(b_), h(h_) {}
  __host__ __device__ int area() const override { return b * h / 2; }
  __host__ __device__ int sides() const override { return 3; }
};
struct Dot : Shape {
  __host__ __device__ int area() const override { return 0; }
};

__host__ __device__ __attribute__((noinline)) int shapes(int i) {
  Rect r(i % 7 + 1, i % 5 + 2);
  Tri t(i % 9 + 2, i % 4 + 2);
  Dot d;
  const Shape* s[3] = {&r, &t, &d};
  const Shape* p = s[i % 3];
  return p->area() * 10 + p->sides();
}

#define A8(x) int x##0, int x##1, int x##2, int x##3, int x##4, int x##5, int x##6, int x##7
__host__ __device__ __attribute__((noinline)) long long many(A8(a), A8(b), A8(c), A8(d), A8(e)) {
  long long s = 0, k = 1;
#define T8(x) s += k++ * x##0; s += k++ * x##1; s += k++ * x##2; s += k++ * x##3; \
              s += k++ * x##4; s += k++ * x##5; s += k++ * x##6; s += k++ * x##7;
  T8(a) T8(b) T8(c) T8(d) T8(e)
  return s;
}
#define V8(f) f(0), f(1), f(2), f(3), f(4), f(5), f(6), f(7)

__host__ __device__ __attribute__((noinline)) unsigned priv(int i) {
  unsigned a[1024];  // 4 KiB per work-item in scratch
  for (int k = 0; k < 1024; k++) a[k] = k * 2654435761u + i;
  unsigned s = 0, j = i;
  for (int k = 0; k < 300; k++) {
    j = (j * 1103515245u + 12345u) & 1023;
    a[j] ^= s;
    s += a[(j * 7) & 1023];
  }
  return s;
}

struct Out {
  int ack;
  long long fib;
  int op;
  int shape;
  long long many;
  unsigned priv;
};

__global__ void calls(Out* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  op_t ops[4] = {op_add, op_mul, op_xor, op_rec};
  Out o;
  o.ack = ack(2, i % 6);
  o.fib = fibm(10 + i % 8, 1000003);
  o.op = ops[(i * 7 + i / 3) % 4](i % 11, i % 13);  // divergent targets within a wave
  o.shape = shapes(i);
#define ARG(k) (i + k)
#define ARG2(k) (i * 2 + k)
#define ARG3(k) (i - k)
#define ARG4(k) (k * 3)
#define ARG5(k) (i ^ k)
  o.many = many(V8(ARG), V8(ARG2), V8(ARG3), V8(ARG4), V8(ARG5));
  o.priv = priv(i);
  out[i] = o;
}

int main() {
  const int n = 200;
  Out* d;
  CHECK(hipMalloc(&d, n * sizeof(Out)));
  CHECK(hipMemset(d, 0xff, n * sizeof(Out)));
  calls<<<(n + 63) / 64, 64>>>(d, n);
  CHECK(hipGetLastError());
  std::vector<Out> h(n);
  CHECK(hipMemcpy(h.data(), d, n * sizeof(Out), hipMemcpyDeviceToHost));
  op_t hops[4] = {h_add, h_mul, h_xor, h_rec};
  for (int i = 0; i < n; i++) {
    const Out& o = h[i];
    EXPECT(o.ack == ack(2, i % 6), "item %d: ack %d, want %d", i, o.ack, ack(2, i % 6));
    EXPECT(o.fib == fibm(10 + i % 8, 1000003), "item %d: fib %lld", i, o.fib);
    int wop = hops[(i * 7 + i / 3) % 4](i % 11, i % 13);
    EXPECT(o.op == wop, "item %d: indirect call %d, want %d", i, o.op, wop);
    EXPECT(o.shape == shapes(i), "item %d: virtual call %d, want %d", i, o.shape, shapes(i));
    long long wm = many(V8(ARG), V8(ARG2), V8(ARG3), V8(ARG4), V8(ARG5));
    EXPECT(o.many == wm, "item %d: 40 arguments %lld, want %lld", i, o.many, wm);
    EXPECT(o.priv == priv(i), "item %d: private array %u, want %u", i, o.priv, priv(i));
  }
  CHECK(hipFree(d));
  printf("calls: ok\n");
  return 0;
}
