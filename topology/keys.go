package topology

// NodeKey names one key of nodes/N/properties. The driver and the other packages read node
// properties through these constants (Node.Prop), so a misspelt key does not compile; the renderer
// prints the same table, in node_show's order (kfd_topology.c, Linux 6.10; the captured trees in
// shared/fixtures/topology have that order).
type NodeKey int

const (
	CPUCoresCount NodeKey = iota
	SIMDCount
	MemBanksCount
	CachesCount
	IOLinksCount
	P2PLinksCount
	CPUCoreIDBase
	SIMDIDBase
	MaxWavesPerSIMD
	LDSSizeInKB
	GDSSizeInKB
	NumGWS
	WaveFrontSize
	ArrayCount
	SIMDArraysPerEngine
	CUPerSIMDArray
	SIMDPerCU
	MaxSlotsScratchCU
	GfxTargetVersion
	VendorID
	DeviceID
	LocationID
	Domain
	DRMRenderMinor
	HiveID
	NumSDMAEngines
	NumSDMAXGMIEngines
	NumSDMAQueuesPerEngine
	NumCPQueues
	// GPU nodes only (node_show: "if (dev->gpu)").
	MaxEngineClkFCompute
	LocalMemSize
	FWVersion
	Capability
	DebugProp
	SDMAFWVersion
	UniqueID
	NumXCC
	// Every node, last.
	MaxEngineClkCCompute
	numNodeKeys
)

// firstGPUKey..lastGPUKey are printed for GPU nodes only.
const firstGPUKey, lastGPUKey = MaxEngineClkFCompute, NumXCC

var nodeKeyNames = [numNodeKeys]string{
	"cpu_cores_count", "simd_count", "mem_banks_count", "caches_count", "io_links_count",
	"p2p_links_count", "cpu_core_id_base", "simd_id_base", "max_waves_per_simd", "lds_size_in_kb",
	"gds_size_in_kb", "num_gws", "wave_front_size", "array_count", "simd_arrays_per_engine",
	"cu_per_simd_array", "simd_per_cu", "max_slots_scratch_cu", "gfx_target_version", "vendor_id",
	"device_id", "location_id", "domain", "drm_render_minor", "hive_id", "num_sdma_engines",
	"num_sdma_xgmi_engines", "num_sdma_queues_per_engine", "num_cp_queues",
	"max_engine_clk_fcompute", "local_mem_size", "fw_version", "capability", "debug_prop",
	"sdma_fw_version", "unique_id", "num_xcc",
	"max_engine_clk_ccompute",
}

// String is the key as sysfs prints it.
func (k NodeKey) String() string {
	if k < 0 || k >= numNodeKeys {
		return ""
	}
	return nodeKeyNames[k]
}

// nodeKeys is the print order of a CPU (gpu false) or GPU node.
func nodeKeys(gpu bool) []string {
	var k []string
	for key := NodeKey(0); key < numNodeKeys; key++ {
		if gpu || key < firstGPUKey || key > lastGPUKey {
			k = append(k, nodeKeyNames[key])
		}
	}
	return k
}
