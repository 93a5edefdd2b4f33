// hipExtStreamCreateWithCUMask: a stream whose queue may use only the CUs of its mask (ROCr's
// hsa_amd_queue_cu_set_mask, amdkfd's SET_CU_MASK). Every wave of a kernel on such a stream
// reads HW_REG_HW_ID and must sit on a CU of the mask, placed as amdkfd places mask bits
// (mqd_symmetrically_map_cu_mask: bit i is shader engine i mod SEs, shader array (i / SEs) mod
// SHs, CU i / (SEs * SHs) of that array), with the engine and array counts read from the
// topology. A one-CU mask puts every wave on that one CU; a mask of several CUs uses more than one
// of them; hipExtStreamGetCUMask gives back the mask set; and the default stream's kernel is not
// confined.
#include "common.h"
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

// HW_REG_HW_ID (gfx9): CU_ID [11:8], SH_ID [12], SE_ID [15:13] (s_getreg_b32 hwreg(4, 0, 32)).
__global__ void where(unsigned* o) {
  if (threadIdx.x % 64 == 0) o[blockIdx.x * (blockDim.x / 64) + threadIdx.x / 64] = __builtin_amdgcn_s_getreg(4 | 31 << 11);
}

static long prop(const std::string& key) {
  for (int n = 0; n < 64; n++) {
    std::ifstream f("/sys/class/kfd/kfd/topology/nodes/" + std::to_string(n) + "/properties");
    if (!f) break;
    std::string line;
    long simd = 0, v = -1;
    while (std::getline(f, line)) {
      std::istringstream ls(line);
      std::string k;
      long x;
      ls >> k >> x;
      if (k == "simd_count") simd = x;
      if (k == key) v = x;
    }
    if (simd > 0) return v;
  }
  return -1;
}

using Place = std::tuple<unsigned, unsigned, unsigned>; // SE, SH, CU

static std::set<Place> run(hipStream_t s, unsigned blocks) {
  const unsigned waves = blocks * 4;
  unsigned* d;
  CHECK(hipMalloc(&d, waves * 4));
  CHECK(hipMemsetAsync(d, 0xff, waves * 4, s));
  where<<<blocks, 256, 0, s>>>(d);
  CHECK(hipGetLastError());
  CHECK(hipStreamSynchronize(s));
  std::vector<unsigned> h(waves);
  CHECK(hipMemcpy(h.data(), d, waves * 4, hipMemcpyDeviceToHost));
  CHECK(hipFree(d));
  std::set<Place> seen;
  for (unsigned v : h) {
    EXPECT(v != 0xffffffffu, "a wave did not run");
    seen.insert({v >> 13 & 7, v >> 12 & 1, v >> 8 & 0xf});
  }
  return seen;
}

int main() {
  long arrays = prop("array_count"), perEngine = prop("simd_arrays_per_engine"), simd = prop("simd_count"),
       simdPerCU = prop("simd_per_cu");
  EXPECT(arrays > 0 && perEngine > 0 && simd > 0 && simdPerCU > 0, "topology: %ld %ld %ld %ld", arrays, perEngine, simd,
         simdPerCU);
  const unsigned ses = unsigned(arrays / perEngine), shs = unsigned(perEngine), cus = unsigned(simd / simdPerCU);
  auto place = [&](unsigned bit) { return Place{bit % ses, bit / ses % shs, bit / (ses * shs)}; };
  const unsigned words = (cus + 31) / 32;

  std::vector<std::vector<unsigned>> masks = {{5}, {0, 9, 18, 27, cus - 1}};
  for (auto& bits : masks) {
    std::vector<uint32_t> mask(words, 0);
    std::set<Place> allowed;
    for (unsigned b : bits) mask[b / 32] |= 1u << (b % 32), allowed.insert(place(b));
    hipStream_t s;
    CHECK(hipExtStreamCreateWithCUMask(&s, words, mask.data()));
    std::vector<uint32_t> back(words, 0);
    CHECK(hipExtStreamGetCUMask(s, words, back.data()));
    for (unsigned i = 0; i < words; i++)
      EXPECT(back[i] == mask[i], "hipExtStreamGetCUMask word %u: %#x, want %#x", i, back[i], mask[i]);
    std::set<Place> seen = run(s, 512);
    for (auto& p : seen)
      EXPECT(allowed.count(p), "a wave on SE %u SH %u CU %u, outside the mask of %zu CUs", std::get<0>(p), std::get<1>(p),
             std::get<2>(p), bits.size());
    if (bits.size() > 1) EXPECT(seen.size() > 1, "512 groups on %zu CUs all ran on one", bits.size());
    printf("cu_mask: %zu CUs allowed, waves on %zu of them: ok\n", allowed.size(), seen.size());
    CHECK(hipStreamDestroy(s));
  }
  std::set<Place> all = run(nullptr, 512);
  EXPECT(all.size() > 5, "the default stream's 512 groups ran on %zu CUs", all.size());
  printf("cu_mask: default stream on %zu CUs: ok\n", all.size());
  return 0;
}
