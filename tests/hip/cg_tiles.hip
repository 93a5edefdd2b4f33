// Cooperative groups below the block: static tiles of 4, 16 and 64 (tiled_partition<N>) with
// their shfl / shfl_down / shfl_xor reductions and sync, a dynamic tile of 8 (tiled_partition(g, 8)),
// and coalesced groups (coalesced_threads() inside a divergent branch: size, thread_rank, shfl
// among the active lanes only); a block of 256 over 4 waves, every value against the host.
#include "common.h"
#include <hip/hip_cooperative_groups.h>
#include <vector>

namespace cg = cooperative_groups;

struct Out {
  int r4, r16, r64, x16, rank8, size8, cz, crank, cshfl;
};

template <typename Tile>
__device__ int tileSum(Tile t, int v) {
  for (unsigned o = t.size() / 2; o > 0; o >>= 1) v += t.shfl_down(v, o);
  return t.shfl(v, 0);  // lane 0 has the sum
}

__global__ void tiles(Out* out) {
  cg::thread_block b = cg::this_thread_block();
  int t = b.thread_rank();
  int v = t * 3 + 1;
  Out o;
  o.r4 = tileSum(cg::tiled_partition<4>(b), v);
  o.r16 = tileSum(cg::tiled_partition<16>(b), v);
  o.r64 = tileSum(cg::tiled_partition<64>(b), v);
  auto t16 = cg::tiled_partition<16>(b);
  int x = v;
  for (unsigned m = 1; m < 16; m <<= 1) x = max(x, t16.shfl_xor(x, m));
  t16.sync();
  o.x16 = x;
  cg::thread_group t8 = cg::tiled_partition(b, 8);
  o.rank8 = t8.thread_rank();
  o.size8 = t8.size();
  o.cz = o.crank = o.cshfl = -1;
  if (t % 3 == 0) {  // every third lane of each wave
    cg::coalesced_group c = cg::coalesced_threads();
    o.cz = c.size();
    o.crank = c.thread_rank();
    o.cshfl = c.shfl(t, (c.thread_rank() + 1) % c.size());  // the next active lane's t
  }
  out[t] = o;
}

int main() {
  Out* d;
  CHECK(hipMalloc(&d, 256 * sizeof(Out)));
  tiles<<<1, 256>>>(d);
  CHECK(hipGetLastError());
  std::vector<Out> h(256);
  CHECK(hipMemcpy(h.data(), d, h.size() * sizeof(Out), hipMemcpyDeviceToHost));
  for (int t = 0; t < 256; t++) {
    auto sum = [&](int n) {
      int s = 0;
      for (int k = t / n * n; k < t / n * n + n; k++) s += k * 3 + 1;
      return s;
    };
    const Out& o = h[t];
    EXPECT(o.r4 == sum(4) && o.r16 == sum(16) && o.r64 == sum(64), "thread %d: tile sums %d %d %d, want %d %d %d", t,
           o.r4, o.r16, o.r64, sum(4), sum(16), sum(64));
    EXPECT(o.x16 == (t / 16 * 16 + 15) * 3 + 1, "thread %d: tile-16 max %d", t, o.x16);
    EXPECT(o.rank8 == t % 8 && o.size8 == 8, "thread %d: dynamic tile rank %d size %d", t, o.rank8, o.size8);
    if (t % 3 == 0) {
      int base = t / 64 * 64, first = (base + 2) / 3 * 3, n = 0, rank = 0;
      for (int k = first; k < base + 64; k += 3) {
        if (k < t) rank++;
        n++;
      }
      int next = t + 3 < base + 64 ? t + 3 : first;
      EXPECT(o.cz == n && o.crank == rank && o.cshfl == next, "thread %d: coalesced size %d rank %d shfl %d, want %d %d %d",
             t, o.cz, o.crank, o.cshfl, n, rank, next);
    } else {
      EXPECT(o.cz == -1, "thread %d outside the branch", t);
    }
  }
  CHECK(hipFree(d));
  printf("cg_tiles: ok\n");
  return 0;
}
