// Device properties: hipGetDeviceProperties and hipDeviceGetAttribute against the KFD topology the
// program reads itself (/sys/class/kfd/kfd/topology/nodes/N/properties and mem_banks, the tree the
// driver shows): compute units, wavefront size, LDS size, gfx target version -> gcnArchName, VRAM
// size -> totalGlobalMem, clock, PCI location; both APIs agree; hipMemGetInfo is consistent with
// totalGlobalMem and drops by at least an allocation's size while it lives.
#include "common.h"
#include <cstring>
#include <map>
#include <string>

static std::map<std::string, unsigned long long> readProps(const std::string& path) {
  std::map<std::string, unsigned long long> m;
  FILE* f = fopen(path.c_str(), "r");
  if (!f) return m;
  char key[128];
  unsigned long long v;
  while (fscanf(f, "%127s %llu", key, &v) == 2) m[key] = v;
  fclose(f);
  return m;
}

static int attr(hipDeviceAttribute_t a) {
  int v = -1;
  CHECK(hipDeviceGetAttribute(&v, a, 0));
  return v;
}

int main() {
  const std::string topo = "/sys/class/kfd/kfd/topology/nodes/";
  std::map<std::string, unsigned long long> p, bank;
  std::string node;
  for (int n = 0; n < 64; n++) {
    auto m = readProps(topo + std::to_string(n) + "/properties");
    if (m.empty()) break;
    if (m["simd_count"] > 0) {  // the first GPU node is HIP's device 0 (one GPU)
      p = m;
      node = topo + std::to_string(n);
      break;
    }
  }
  EXPECT(!p.empty(), "no GPU node under %s", topo.c_str());
  unsigned long long vram = 0;
  for (int b = 0; b < (int)p["mem_banks_count"]; b++) {
    auto m = readProps(node + "/mem_banks/" + std::to_string(b) + "/properties");
    if (m["heap_type"] == 1 || m["heap_type"] == 2) vram += m["size_in_bytes"];  // public/private FB
  }
  EXPECT(vram > 0, "no VRAM bank under %s", node.c_str());

  int count = 0;
  CHECK(hipGetDeviceCount(&count));
  EXPECT(count == 1, "device count %d", count);
  hipDeviceProp_t prop;
  CHECK(hipGetDeviceProperties(&prop, 0));
  printf("name=%s arch=%s cus=%d warp=%d lds=%zu mem=%zu clock=%d pci=%04x:%02x:%02x maxThreadsPerCU=%d\n",
         prop.name, prop.gcnArchName, prop.multiProcessorCount, prop.warpSize, prop.sharedMemPerBlock,
         prop.totalGlobalMem, prop.clockRate, prop.pciDomainID, prop.pciBusID, prop.pciDeviceID,
         prop.maxThreadsPerMultiProcessor);

  unsigned long long cus = p["simd_count"] / p["simd_per_cu"];
  EXPECT((unsigned long long)prop.multiProcessorCount == cus, "multiProcessorCount %d, topology %llu",
         prop.multiProcessorCount, cus);
  EXPECT((unsigned long long)prop.warpSize == p["wave_front_size"], "warpSize %d, topology %llu", prop.warpSize,
         p["wave_front_size"]);
  EXPECT(prop.sharedMemPerBlock == p["lds_size_in_kb"] * 1024, "sharedMemPerBlock %zu, topology %llu KiB",
         prop.sharedMemPerBlock, p["lds_size_in_kb"]);
  // gfx_target_version is major*10000 + minor*100 + stepping; the name is gfx<major><minor><stepping in hex>
  unsigned long long gtv = p["gfx_target_version"];
  char arch[32];
  snprintf(arch, sizeof arch, "gfx%llu%llu%llx", gtv / 10000, gtv / 100 % 100, gtv % 100);
  EXPECT(strncmp(prop.gcnArchName, arch, strlen(arch)) == 0 &&
             (prop.gcnArchName[strlen(arch)] == 0 || prop.gcnArchName[strlen(arch)] == ':'),
         "gcnArchName %s, topology %s", prop.gcnArchName, arch);
  EXPECT(prop.major == (int)(gtv / 10000) && prop.minor == (int)(gtv / 100 % 100), "compute capability %d.%d",
         prop.major, prop.minor);
  EXPECT(prop.totalGlobalMem == vram, "totalGlobalMem %zu, topology VRAM %llu", prop.totalGlobalMem, vram);
  EXPECT((unsigned long long)prop.clockRate == p["max_engine_clk_fcompute"] * 1000, "clockRate %d kHz, topology %llu MHz",
         prop.clockRate, p["max_engine_clk_fcompute"]);
  unsigned long long loc = p["location_id"];
  EXPECT((unsigned long long)prop.pciBusID == (loc >> 8) && (unsigned long long)prop.pciDeviceID == ((loc >> 3) & 0x1f) &&
             (unsigned long long)prop.pciDomainID == p["domain"],
         "PCI %x:%x:%x, topology location_id %llx domain %llu", prop.pciDomainID, prop.pciBusID, prop.pciDeviceID,
         loc, p["domain"]);
  EXPECT(prop.maxThreadsPerBlock == 1024, "maxThreadsPerBlock %d", prop.maxThreadsPerBlock);

  // hipDeviceGetAttribute says the same
  EXPECT(attr(hipDeviceAttributeMultiprocessorCount) == prop.multiProcessorCount, "attribute CU count");
  EXPECT(attr(hipDeviceAttributeWarpSize) == prop.warpSize, "attribute warp size");
  EXPECT(attr(hipDeviceAttributeMaxSharedMemoryPerBlock) == (int)prop.sharedMemPerBlock, "attribute LDS size");
  EXPECT(attr(hipDeviceAttributeClockRate) == prop.clockRate, "attribute clock rate");
  EXPECT(attr(hipDeviceAttributePciBusId) == prop.pciBusID, "attribute PCI bus");
  EXPECT(attr(hipDeviceAttributePciDeviceId) == prop.pciDeviceID, "attribute PCI device");
  EXPECT(attr(hipDeviceAttributeComputeCapabilityMajor) == prop.major, "attribute major");
  EXPECT(attr(hipDeviceAttributeComputeCapabilityMinor) == prop.minor, "attribute minor");
  EXPECT(attr(hipDeviceAttributeMaxThreadsPerMultiProcessor) == prop.maxThreadsPerMultiProcessor,
         "attribute max threads per CU");
  EXPECT(attr(hipDeviceAttributeMaxThreadsPerBlock) == prop.maxThreadsPerBlock, "attribute max threads per block");
  size_t total2 = 0;
  CHECK(hipDeviceTotalMem(&total2, 0));
  EXPECT(total2 == prop.totalGlobalMem, "hipDeviceTotalMem %zu", total2);
  char pci[64];
  CHECK(hipDeviceGetPCIBusId(pci, sizeof pci, 0));
  char want[64];
  snprintf(want, sizeof want, "%04x:%02x:%02x.0", (unsigned)p["domain"], (unsigned)(loc >> 8),
           (unsigned)((loc >> 3) & 0x1f));
  EXPECT(strcmp(pci, want) == 0, "hipDeviceGetPCIBusId %s, topology %s", pci, want);

  // hipMemGetInfo: total is the device memory; an allocation's size leaves the free figure while it lives
  size_t free0 = 0, total = 0;
  CHECK(hipMemGetInfo(&free0, &total));
  EXPECT(total == prop.totalGlobalMem, "hipMemGetInfo total %zu", total);
  EXPECT(free0 <= total && free0 > total / 2, "hipMemGetInfo free %zu of %zu", free0, total);
  const size_t big = 256 << 20;
  void* d;
  CHECK(hipMalloc(&d, big));
  size_t free1 = 0;
  CHECK(hipMemGetInfo(&free1, &total));
  EXPECT(free1 + big <= free0, "free %zu after a %zu-byte allocation, %zu before", free1, big, free0);
  CHECK(hipFree(d));
  size_t free2 = 0;
  CHECK(hipMemGetInfo(&free2, &total));
  EXPECT(free2 >= free1 + big, "free %zu after hipFree, %zu while allocated", free2, free1);
  printf("device_props: ok\n");
  return 0;
}
