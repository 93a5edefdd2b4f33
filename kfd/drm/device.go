package drm

import (
	"time"

	"github.com/kfdemu/kfdemu/kfd/abi"
	"github.com/kfdemu/kfdemu/topology"
)

// Memory is the client whose ioctl is being served: pointers inside arguments (the version strings,
// AMDGPU_INFO's return_pointer) are followed with it. kfd.Caller satisfies it. An implementation may
// also have a `Tgid() int` method; DRM_IOCTL_GET_CLIENT then reports that pid.
type Memory interface {
	ReadMemory(addr uint64, p []byte) error
	WriteMemory(addr uint64, p []byte) error
}

// IPVersion is an IP block version (major.minor.rev).
type IPVersion struct{ Major, Minor, Rev uint32 }

// discovery is IP_VERSION_MAJ_MIN_REV: the ip_discovery_version word of drm_amdgpu_info_hw_ip.
func (v IPVersion) discovery() uint32 { return v.Major<<16 | v.Minor<<8 | v.Rev }

// GPUInfo is everything the render node reports about its GPU. InfoFromNode fills it from a topology
// node; tests build it directly.
type GPUInfo struct {
	DeviceID, PCIRev     uint32 // PCI device id and revision (amdgpu.ids pairs them to a marketing name)
	ChipRev, ExternalRev uint32 // adev->rev_id and adev->external_rev_id
	Family               uint32 // AMDGPU_FAMILY_*
	GfxTargetVersion     uint32 // kfd gfx_target_version, e.g. 90010
	GC, SDMA             IPVersion
	GfxBlock, SDMABlock  IPVersion // amdgpu_ip_block_version major/minor of the GFX and SDMA blocks
	NumSE, SHPerSE       uint32    // gfx.config.max_shader_engines (per XCC), max_sh_per_se
	CUPerSH, ActiveCUs   uint32    // gfx.config.max_cu_per_sh; cu_info.number (of XCC 0)
	NumXCC               uint32
	MaxEngineClockMHz    uint32
	MaxMemoryClockMHz    uint32
	VRAMSize             uint64 // gmc.real_vram_size
	VisibleVRAMSize      uint64 // gmc.visible_vram_size (large BAR: all of VRAM)
	GTTSize              uint64 // the GTT manager's size
	VRAMType             uint32 // AMDGPU_VRAM_TYPE_*
	VRAMBitWidth         uint32
	WaveFrontSize        uint32
	NumGfxRings          uint32
	NumComputeRings      uint32
	NumSDMA              uint32 // sdma.num_instances
	MECFWVersion         uint32
	SDMAFWVersion        uint32
	GBAddrConfig         uint32 // GB_ADDR_CONFIG as gfx.config.gb_addr_config holds it
	GDSSize, GWSSize     uint32
	OASize               uint32
	APU                  bool
	Display              bool // the ASIC has display hardware (amdgpu_dm initialises mode_config)
}

// Usage is the current memory usage the INFO queries report (TTM manager usage).
type Usage struct{ VRAM, VisibleVRAM, GTT uint64 }

// Device is the render node of one GPU.
type Device struct {
	info  GPUInfo
	usage func() Usage
	start time.Time
}

// NewDevice returns the render node of the GPU described by info. usage (may be nil: no usage) is
// called for VRAM_USAGE, VIS_VRAM_USAGE, GTT_USAGE and MEMORY.
func NewDevice(info GPUInfo, usage func() Usage) *Device {
	return &Device{info: info, usage: usage, start: time.Now()}
}

// Info returns the device description.
func (d *Device) Info() GPUInfo { return d.info }

func (d *Device) currentUsage() Usage {
	if d.usage == nil {
		return Usage{}
	}
	return d.usage()
}

// asic holds what the topology does not carry, per gfx_target_version: amdgpu's per-ASIC constants
// (soc15.c/nv.c early_init external_rev_id, the IP discovery versions, the ip_block versions,
// gfx_v9_0.c/gfx_v10_0.c gpu_early_init: gb_addr_config and ring counts).
type asic struct {
	family        uint32
	extRevBase    uint32 // external_rev_id = rev_id + extRevBase (vega10 sets 0x1 with rev_id 0)
	gc, sdma      IPVersion
	gfxBlk, sdBlk IPVersion
	gfxRings      uint32
	vramType      uint32
	gbAddrConfig  uint32
	oa            uint32
	display       bool
	sdmaPerXCC    uint32 // sdma.num_instances / XCCs (kfd hides the XGMI ones outside a hive; amdgpu does not)
}

var asics = map[uint32]asic{
	// Vega10 (MI25): soc15_common_early_init external_rev_id = 0x1; VEGA10_GB_ADDR_CONFIG_GOLDEN.
	90000: {abi.AMDGPU_FAMILY_AI, 0x1, IPVersion{9, 0, 1}, IPVersion{4, 0, 0}, IPVersion{9, 0, 0}, IPVersion{4, 0, 0}, 1, abi.AMDGPU_VRAM_TYPE_HBM, 0x2a114042, 16, false, 2},
	// Arcturus (MI100): external_rev_id = rev_id + 0x32; no gfx rings; gb_addr_config fixed up to 0x22014042.
	90008: {abi.AMDGPU_FAMILY_AI, 0x32, IPVersion{9, 4, 1}, IPVersion{4, 2, 2}, IPVersion{9, 0, 0}, IPVersion{4, 0, 0}, 0, abi.AMDGPU_VRAM_TYPE_HBM, 0x22014042, 16, false, 8},
	// Aldebaran (MI210/MI250): external_rev_id = rev_id + 0x3c; no gfx rings.
	90010: {abi.AMDGPU_FAMILY_AI, 0x3c, IPVersion{9, 4, 2}, IPVersion{4, 4, 0}, IPVersion{9, 0, 0}, IPVersion{4, 0, 0}, 0, abi.AMDGPU_VRAM_TYPE_HBM, 0x22014042, 16, false, 5},
	// GC 9.4.3 (MI300X): external_rev_id = rev_id + 0x46; gfx_v9_4_3 and sdma_v4_4_2 blocks.
	90402: {abi.AMDGPU_FAMILY_AI, 0x46, IPVersion{9, 4, 3}, IPVersion{4, 4, 2}, IPVersion{9, 4, 3}, IPVersion{4, 4, 2}, 0, abi.AMDGPU_VRAM_TYPE_HBM, 0x22014042, 16, false, 2},
	// Sienna Cichlid (RX 6800): nv_common_early_init external_rev_id = rev_id + 0x28; GDDR6; display.
	100300: {abi.AMDGPU_FAMILY_NV, 0x28, IPVersion{10, 3, 0}, IPVersion{5, 2, 0}, IPVersion{10, 0, 0}, IPVersion{5, 2, 0}, 1, abi.AMDGPU_VRAM_TYPE_GDDR6, 0x00000444, 16, true, 4},
}

// asicFor returns the constants of gfx version v; unknown versions get the family of their major and
// their own digits as IP versions.
func asicFor(v uint32) asic {
	if a, ok := asics[v]; ok {
		return a
	}
	maj, min, step := v/10000, v/100%100, v%100
	a := asic{extRevBase: 0, gc: IPVersion{maj, min, step}, gfxBlk: IPVersion{maj, 0, 0}, gfxRings: 1, oa: 16}
	switch {
	case maj == 9:
		a.family, a.sdma, a.sdBlk, a.vramType = abi.AMDGPU_FAMILY_AI, IPVersion{4, 0, 0}, IPVersion{4, 0, 0}, abi.AMDGPU_VRAM_TYPE_HBM
	case maj == 10:
		a.family, a.sdma, a.sdBlk, a.vramType = abi.AMDGPU_FAMILY_NV, IPVersion{5, 0, 0}, IPVersion{5, 0, 0}, abi.AMDGPU_VRAM_TYPE_GDDR6
	case maj == 11:
		a.family, a.sdma, a.sdBlk, a.vramType = abi.AMDGPU_FAMILY_GC_11_0_0, IPVersion{6, 0, 0}, IPVersion{6, 0, 0}, abi.AMDGPU_VRAM_TYPE_GDDR6
	}
	return a
}

// pciRevs is the PCI revision each profile's device id has in amdgpu.ids (the marketing name).
var pciRevs = map[uint32]uint32{0x6860: 0x00, 0x738c: 0x01, 0x740f: 0x02, 0x74a1: 0x00, 0x73bf: 0xc3}

// defaultGTT is AMDGPU_DEFAULT_GTT_SIZE_MB, used when the system memory is unknown.
const defaultGTT = 3072 << 20

// InfoFromNode describes GPU node n of system s (s may be nil; it supplies the system memory the GTT
// size is derived from: ttm_tt_pages_limit, half of RAM).
func InfoFromNode(s *topology.System, n *topology.Node) GPUInfo {
	gv := uint32(n.Prop(topology.GfxTargetVersion))
	a := asicFor(gv)
	xcc := max(uint32(n.Prop(topology.NumXCC)), 1)
	shPerSE := max(uint32(n.Prop(topology.SIMDArraysPerEngine)), 1)
	arrays := uint32(n.Prop(topology.ArrayCount))
	info := GPUInfo{
		DeviceID: uint32(n.Prop(topology.DeviceID)), Family: a.family, GfxTargetVersion: gv,
		GC: a.gc, SDMA: a.sdma, GfxBlock: a.gfxBlk, SDMABlock: a.sdBlk,
		NumSE: arrays / shPerSE / xcc, SHPerSE: shPerSE, CUPerSH: uint32(n.Prop(topology.CUPerSIMDArray)),
		ActiveCUs: uint32(n.ComputeUnits()) / xcc, NumXCC: xcc,
		MaxEngineClockMHz: uint32(n.Prop(topology.MaxEngineClkFCompute)),
		VRAMSize:          n.VRAMSize(), VisibleVRAMSize: n.VRAMSize(),
		VRAMType: a.vramType, WaveFrontSize: uint32(n.Prop(topology.WaveFrontSize)),
		NumGfxRings: a.gfxRings, NumComputeRings: 8, // amdgpu_num_kcq default
		NumSDMA:      a.sdmaPerXCC * xcc,
		MECFWVersion: uint32(n.Prop(topology.FWVersion)), SDMAFWVersion: uint32(n.Prop(topology.SDMAFWVersion)),
		GBAddrConfig: a.gbAddrConfig, GDSSize: uint32(n.Prop(topology.GDSSizeInKB)) * 1024,
		GWSSize: uint32(n.Prop(topology.NumGWS)), OASize: a.oa, Display: a.display,
		PCIRev: pciRevs[uint32(n.Prop(topology.DeviceID))],
	}
	info.ExternalRev = info.ChipRev + a.extRevBase // rev_id is 0 on every modelled part
	for _, b := range n.MemBanks {
		if t := b.Props.Get("heap_type"); t == topology.HeapFBPublic || t == topology.HeapFBPrivate {
			info.MaxMemoryClockMHz = uint32(b.Props.Get("mem_clk_max"))
			info.VRAMBitWidth = uint32(b.Props.Get("width"))
			break
		}
	}
	info.GTTSize = defaultGTT
	if s != nil {
		var ram uint64
		for _, c := range s.Snapshot() {
			if c.IsGPU() {
				continue
			}
			for _, b := range c.MemBanks {
				ram += b.Props.Get("size_in_bytes")
			}
		}
		if ram > 0 {
			info.GTTSize = ram / 2
		}
	}
	if info.NumSDMA == 0 {
		info.NumSDMA = uint32(n.Prop(topology.NumSDMAEngines) + n.Prop(topology.NumSDMAXGMIEngines))
	}
	return info
}
