// __smid(): HIP's CU and shader engine of the running wave (HW_REG_HW_ID's CU_ID and SE_ID).
// 4096 blocks spread over the GPU's CUs report more than one place, every one within the chip the
// topology describes (the program reads array_count, simd_arrays_per_engine and the CU count of
// the GPU node): CU_ID below the CUs of a shader array, SE_ID below the engines (HIP 5.2 reads two
// of SE_ID's bits, so on 8 engines it sees 4).
#include "common.h"
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

__global__ void where(unsigned* o) {
  if (threadIdx.x == 0) o[blockIdx.x] = __smid();
}

// prop returns a key of the first GPU node's properties (-1 if not found).
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

int main() {
  const int blocks = 4096;
  unsigned* d;
  CHECK(hipMalloc(&d, blocks * 4));
  where<<<blocks, 64>>>(d);
  CHECK(hipGetLastError());
  std::vector<unsigned> h(blocks);
  CHECK(hipMemcpy(h.data(), d, blocks * 4, hipMemcpyDeviceToHost));
  hipDeviceProp_t p;
  CHECK(hipGetDeviceProperties(&p, 0));
  long arrays = prop("array_count"), perEngine = prop("simd_arrays_per_engine");
  EXPECT(arrays > 0 && perEngine > 0, "topology: array_count %ld, simd_arrays_per_engine %ld", arrays, perEngine);
  long engines = arrays / perEngine, cusPerArray = (p.multiProcessorCount + arrays - 1) / arrays;
  long seen = engines < 4 ? engines : 4;  // HIP 5.2's __smid keeps two bits of SE_ID
  std::set<unsigned> places(h.begin(), h.end());
  for (unsigned v : places) {
    unsigned cu = v & 0xf, se = v >> 4;
    EXPECT(cu < cusPerArray && se < seen, "__smid %#x: CU %u of %ld, SE %u of %ld", v, cu, cusPerArray, se, seen);
  }
  EXPECT(places.size() > 1, "all %d blocks report __smid %#x", blocks, *places.begin());
  printf("smid: %zu places over %ld engines of %ld CUs per array: ok\n", places.size(), engines, cusPerArray);
  CHECK(hipFree(d));
  return 0;
}
