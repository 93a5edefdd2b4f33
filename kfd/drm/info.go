package drm

import (
	"encoding/binary"
	"syscall"
	"time"

	"github.com/kfdemu/kfdemu/kfd/abi"
)

// amdgpu constants used by amdgpu_info_ioctl (amdgpu_vm.h, amdgpu_gmc.h, amdgpu_gfx.h, amdgpu_ctx.c;
// Linux 6.10).
const (
	vaReservedBottom = 1 << 16               // AMDGPU_VA_RESERVED_BOTTOM
	vaReservedTop    = 2<<12 + 2<<20 + 2<<20 // TRAP + SEQ64 + CSA (AMDGPU_VA_RESERVED_TOP)
	gmcHoleStart     = 0x0000800000000000    // AMDGPU_GMC_HOLE_START
	gmcHoleEnd       = 0xffff800000000000    // AMDGPU_GMC_HOLE_END
	vmSize48         = 1 << 48               // max_pfn * AMDGPU_GPU_PAGE_SIZE, 4-level GFX9+ VM
	vmReservedVRAM   = 8 << 20               // AMDGPU_VM_RESERVED_VRAM
	gfxMaxSE         = 4                     // AMDGPU_GFX_MAX_SE
	gfxMaxSHPerSE    = 2                     // AMDGPU_GFX_MAX_SH_PER_SE
	maxMMRCount      = 128                   // read_mmr_reg.count limit
	regGBAddrConfig  = 0x263e                // mmGB_ADDR_CONFIG dword offset (soc15 and nv)
	xclkKHz          = 100000                // amdgpu_asic_get_xclk()*10: the 100 MHz reference
	fwTypeLast       = 0x1a                  // AMDGPU_INFO_FW_VPE, the last fw type known to 6.10
	taFWTypeLast     = 7                     // TA_FW_TYPE_PSP_SECUREDISPLAY
	entitiesGfx      = 1                     // amdgpu_ctx_num_entities[GFX]
	entitiesCompute  = 4                     // amdgpu_ctx_num_entities[COMPUTE]
	entitiesDMA      = 2                     // amdgpu_ctx_num_entities[DMA]
	gbAddrConfigNone = 0
)

// amdgpuInfo is amdgpu_info_ioctl. Every query writes min(return_size, sizeof(result)) bytes to
// return_pointer; a failed write is EFAULT.
func (d *Device) amdgpuInfo(m Memory, q *abi.DRMAmdgpuInfo) syscall.Errno {
	if q.ReturnSize == 0 || q.ReturnPointer == 0 {
		return syscall.EINVAL
	}
	out := func(b []byte) syscall.Errno {
		n := min(uint64(q.ReturnSize), uint64(len(b)))
		if m.WriteMemory(q.ReturnPointer, b[:n]) != nil {
			return syscall.EFAULT
		}
		return 0
	}
	u32 := func(v uint32) syscall.Errno { return out(binary.LittleEndian.AppendUint32(nil, v)) }
	u64 := func(v uint64) syscall.Errno { return out(binary.LittleEndian.AppendUint64(nil, v)) }
	un := q.Union[:]
	g := &d.info
	switch q.Query {
	case abi.AMDGPU_INFO_ACCEL_WORKING:
		return u32(1)
	case abi.AMDGPU_INFO_CRTC_FROM_ID:
		return syscall.EINVAL // no CRTC has that id (the model has no CRTCs)
	case abi.AMDGPU_INFO_HW_IP_INFO:
		ip, errno := d.hwIPInfo(le32(un, abi.InfoUnionHWIPType), le32(un, abi.InfoUnionHWIPInstance))
		if errno != 0 {
			return errno
		}
		return out(bytesOf(ip))
	case abi.AMDGPU_INFO_HW_IP_COUNT:
		n, errno := d.hwIPCount(le32(un, abi.InfoUnionHWIPType))
		if errno != 0 {
			return errno
		}
		return u32(n)
	case abi.AMDGPU_INFO_TIMESTAMP:
		return u64(uint64(time.Since(d.start).Nanoseconds()) / 10) // the 100 MHz GPU clock counter
	case abi.AMDGPU_INFO_FW_VERSION:
		if le32(un, abi.InfoUnionFWIPInstance) != 0 {
			return syscall.EINVAL // "We only support one instance of each IP block right now."
		}
		fw, errno := d.firmware(le32(un, abi.InfoUnionFWType), le32(un, abi.InfoUnionFWIndex))
		if errno != 0 {
			return errno
		}
		return out(bytesOf(fw))
	case abi.AMDGPU_INFO_NUM_BYTES_MOVED, abi.AMDGPU_INFO_NUM_EVICTIONS, abi.AMDGPU_INFO_NUM_VRAM_CPU_PAGE_FAULTS:
		return u64(0)
	case abi.AMDGPU_INFO_VRAM_USAGE:
		return u64(d.currentUsage().VRAM)
	case abi.AMDGPU_INFO_VIS_VRAM_USAGE:
		return u64(d.currentUsage().VisibleVRAM)
	case abi.AMDGPU_INFO_GTT_USAGE:
		return u64(d.currentUsage().GTT)
	case abi.AMDGPU_INFO_GDS_CONFIG:
		return out(bytesOf(abi.DRMAmdgpuInfoGDS{ComputePartitionSize: g.GDSSize, GDSTotalSize: g.GDSSize,
			GWSPerComputePartition: g.GWSSize, OAPerComputePartition: g.OASize}))
	case abi.AMDGPU_INFO_VRAM_GTT:
		vram := d.usableVRAM()
		return out(bytesOf(abi.DRMAmdgpuInfoVRAMGTT{VRAMSize: vram,
			VRAMCPUAccessibleSize: min(g.VisibleVRAMSize, vram), GTTSize: g.GTTSize}))
	case abi.AMDGPU_INFO_MEMORY:
		return out(bytesOf(d.memoryInfo()))
	case abi.AMDGPU_INFO_READ_MMR_REG:
		return d.readMMR(un, out)
	case abi.AMDGPU_INFO_DEV_INFO:
		return out(bytesOf(d.DevInfo()))
	case abi.AMDGPU_INFO_VCE_CLOCK_TABLE:
		// amdgpu_dpm_get_vce_clock_state is NULL for every VCE state: no valid entries.
		return out(bytesOf(abi.DRMAmdgpuInfoVCEClockTable{}))
	case abi.AMDGPU_INFO_VBIOS:
		switch le32(un, abi.InfoUnionVBIOSType) {
		case abi.AMDGPU_INFO_VBIOS_SIZE:
			return u32(0) // no VBIOS image is modelled: bios_size 0
		case abi.AMDGPU_INFO_VBIOS_IMAGE:
			return syscall.EINVAL // bios_offset >= bios_size
		case abi.AMDGPU_INFO_VBIOS_INFO:
			return out(bytesOf(abi.DRMAmdgpuInfoVBIOS{})) // no atom_context: zeroed
		}
		return syscall.EINVAL
	case abi.AMDGPU_INFO_NUM_HANDLES:
		if le32(un, abi.InfoUnionHWIPType) == abi.AMDGPU_HW_IP_UVD {
			return syscall.ENODATA // "Starting Polaris, we support unlimited UVD handles"
		}
		return syscall.EINVAL
	case abi.AMDGPU_INFO_SENSOR:
		return syscall.ENOENT // !adev->pm.dpm_enabled: power management is not modelled
	case abi.AMDGPU_INFO_VRAM_LOST_COUNTER:
		return u32(0)
	case abi.AMDGPU_INFO_RAS_ENABLED_FEATURES:
		return syscall.EINVAL // no RAS context
	case abi.AMDGPU_INFO_VIDEO_CAPS:
		// No UVD/VCN IP is modelled: amdgpu_asic_query_video_codecs fails, and an unknown type is
		// EINVAL too.
		return syscall.EINVAL
	}
	return syscall.EINVAL // "Invalid request"
}

// usableVRAM is real_vram_size - vram_pin_size - AMDGPU_VM_RESERVED_VRAM (nothing is pinned).
func (d *Device) usableVRAM() uint64 {
	if d.info.VRAMSize < vmReservedVRAM {
		return 0
	}
	return d.info.VRAMSize - vmReservedVRAM
}

func (d *Device) memoryInfo() abi.DRMAmdgpuMemoryInfo {
	g, u := &d.info, d.currentUsage()
	var mem abi.DRMAmdgpuMemoryInfo
	mem.VRAM = abi.DRMAmdgpuHeapInfo{TotalHeapSize: g.VRAMSize, UsableHeapSize: d.usableVRAM(), HeapUsage: u.VRAM}
	mem.VRAM.MaxAllocation = mem.VRAM.UsableHeapSize * 3 / 4
	vis := min(g.VisibleVRAMSize, mem.VRAM.UsableHeapSize)
	mem.CPUAccessibleVRAM = abi.DRMAmdgpuHeapInfo{TotalHeapSize: g.VisibleVRAMSize, UsableHeapSize: vis,
		HeapUsage: u.VisibleVRAM, MaxAllocation: vis * 3 / 4}
	mem.GTT = abi.DRMAmdgpuHeapInfo{TotalHeapSize: g.GTTSize, UsableHeapSize: g.GTTSize, HeapUsage: u.GTT,
		MaxAllocation: g.GTTSize * 3 / 4}
	return mem
}

// hwIPInfo is amdgpu_hw_ip_info. The multimedia IPs (UVD, VCE, VCN, JPEG) are not modelled: their
// block is absent, so the query succeeds with an all-zero result, as the kernel does.
func (d *Device) hwIPInfo(typ, inst uint32) (abi.DRMAmdgpuInfoHWIP, syscall.Errno) {
	var ip abi.DRMAmdgpuInfoHWIP
	if inst >= abi.AMDGPU_HW_IP_INSTANCE_MAX_COUNT {
		return ip, syscall.EINVAL
	}
	g := &d.info
	var rings, start, size uint32
	var blk, disc IPVersion
	switch typ {
	case abi.AMDGPU_HW_IP_GFX:
		rings, start, size, blk, disc = min(g.NumGfxRings, entitiesGfx), 32, 32, g.GfxBlock, g.GC
	case abi.AMDGPU_HW_IP_COMPUTE:
		rings, start, size, blk, disc = min(g.NumComputeRings, entitiesCompute), 32, 32, g.GfxBlock, g.GC
	case abi.AMDGPU_HW_IP_DMA:
		rings, start, size, blk, disc = min(g.NumSDMA, entitiesDMA), 256, 4, g.SDMABlock, g.SDMA
	case abi.AMDGPU_HW_IP_UVD, abi.AMDGPU_HW_IP_VCE, abi.AMDGPU_HW_IP_UVD_ENC, abi.AMDGPU_HW_IP_VCN_DEC,
		abi.AMDGPU_HW_IP_VCN_ENC, abi.AMDGPU_HW_IP_VCN_JPEG:
		return ip, 0
	default:
		return ip, syscall.EINVAL
	}
	ip.HWIPVersionMajor, ip.HWIPVersionMinor = blk.Major, blk.Minor
	ip.IPDiscoveryVersion = disc.discovery() // asic_type >= CHIP_VEGA10
	ip.AvailableRings = 1<<rings - 1
	ip.IBStartAlignment, ip.IBSizeAlignment = start, size
	return ip, 0
}

// hwIPCount is the AMDGPU_INFO_HW_IP_COUNT case: the block of the type must exist; with an XCP
// manager (GC 9.4.3) GFX counts the partition's XCCs.
func (d *Device) hwIPCount(typ uint32) (uint32, syscall.Errno) {
	g := &d.info
	switch typ {
	case abi.AMDGPU_HW_IP_GFX, abi.AMDGPU_HW_IP_COMPUTE:
		if g.GC == (IPVersion{9, 4, 3}) {
			return g.NumXCC, 0
		}
		return 1, 0
	case abi.AMDGPU_HW_IP_DMA:
		return g.NumSDMA, 0
	}
	return 0, syscall.EINVAL // no such block (multimedia not modelled) or unknown type
}

// firmware is amdgpu_firmware_info. Firmware the model does not know reports version 0 as a block
// without that firmware does.
func (d *Device) firmware(typ, index uint32) (abi.DRMAmdgpuInfoFirmware, syscall.Errno) {
	var fw abi.DRMAmdgpuInfoFirmware
	switch {
	case typ == abi.AMDGPU_INFO_FW_GFX_MEC:
		if index > 1 {
			return fw, syscall.EINVAL // mec (0) and mec2 (1)
		}
		fw.Ver = d.info.MECFWVersion
	case typ == abi.AMDGPU_INFO_FW_SDMA:
		if index >= d.info.NumSDMA {
			return fw, syscall.EINVAL
		}
		fw.Ver = d.info.SDMAFWVersion
	case typ == abi.AMDGPU_INFO_FW_TA:
		if index == 0 || index > taFWTypeLast {
			return fw, syscall.EINVAL
		}
	case typ == 0x09 || typ == 0 || typ > fwTypeLast: // 0x09 is unassigned
		return fw, syscall.EINVAL
	}
	return fw, 0
}

// readMMR is the AMDGPU_INFO_READ_MMR_REG case: se/sh selectors (0xff = broadcast) are bounded by
// AMDGPU_GFX_MAX_SE/SH_PER_SE, at most 128 registers, each must be in the ASIC's allowed list
// (soc15/nv_allowed_read_registers) or the whole read is EFAULT.
func (d *Device) readMMR(un []byte, out func([]byte) syscall.Errno) syscall.Errno {
	off, count, inst := le32(un, abi.InfoUnionMMRDwordOffset), le32(un, abi.InfoUnionMMRCount), le32(un, abi.InfoUnionMMRInstance)
	se := inst >> abi.AMDGPU_INFO_MMR_SE_INDEX_SHIFT & abi.AMDGPU_INFO_MMR_SE_INDEX_MASK
	sh := inst >> abi.AMDGPU_INFO_MMR_SH_INDEX_SHIFT & abi.AMDGPU_INFO_MMR_SH_INDEX_MASK
	if se != abi.AMDGPU_INFO_MMR_SE_INDEX_MASK && se >= gfxMaxSE {
		return syscall.EINVAL
	}
	if sh != abi.AMDGPU_INFO_MMR_SH_INDEX_MASK && sh >= gfxMaxSHPerSE {
		return syscall.EINVAL
	}
	if count > maxMMRCount {
		return syscall.EINVAL
	}
	regs := make([]byte, 0, count*4)
	for i := uint32(0); i < count; i++ {
		v, ok := d.register(off + i)
		if !ok {
			return syscall.EFAULT // "unallowed offset"
		}
		regs = binary.LittleEndian.AppendUint32(regs, v)
	}
	return out(regs)
}

// register returns an allowed register's value. Only GB_ADDR_CONFIG, the register libdrm reads on
// GFX9+, is modelled.
func (d *Device) register(off uint32) (uint32, bool) {
	if off == regGBAddrConfig && d.info.GBAddrConfig != gbAddrConfigNone {
		return d.info.GBAddrConfig, true
	}
	return 0, false
}

// DevInfo is the AMDGPU_INFO_DEV_INFO result (amdgpu_info_ioctl, with dpm disabled: the clocks are
// the default sclk/mclk).
func (d *Device) DevInfo() abi.DRMAmdgpuInfoDevice {
	g := &d.info
	vm := uint64(vmSize48 - vaReservedTop)
	di := abi.DRMAmdgpuInfoDevice{
		DeviceID: g.DeviceID, ChipRev: g.ChipRev, ExternalRev: g.ExternalRev, PCIRev: g.PCIRev, Family: g.Family,
		NumShaderEngines: g.NumSE, NumShaderArraysPerEngine: g.SHPerSE, GPUCounterFreq: xclkKHz,
		MaxEngineClock: uint64(g.MaxEngineClockMHz) * 1000, MaxMemoryClock: uint64(g.MaxMemoryClockMHz) * 1000,
		CUActiveNumber: g.ActiveCUs,
		// gfx.config.max_backends_per_se is 4 on the modelled GFX9/GFX10 parts.
		NumRBPipes: 4 * g.NumSE, EnabledRBPipesMask: uint32(1)<<(4*min(g.NumSE, 8)) - 1, NumHWGfxContexts: 8,
		VirtualAddressOffset: vaReservedBottom, VirtualAddressMax: min(vm, gmcHoleStart),
		VirtualAddressAlignment: 4096, PTEFragmentSize: (1 << 9) * 4096, GartPageSize: 4096,
		CERAMSize: 0x8000, VRAMType: g.VRAMType, VRAMBitWidth: g.VRAMBitWidth, GCDoubleOffchipLDSBuf: 1,
		WaveFrontSize: g.WaveFrontSize, NumShaderVisibleVGPRs: 256, NumCUPerSH: g.CUPerSH, NumTCCBlocks: 16,
		GSVGTTableDepth: 32, GSPrimBufferDepth: 1792, MaxGSWavesPerVGT: 32,
	}
	if vm > gmcHoleStart {
		di.HighVAOffset, di.HighVAMax = gmcHoleEnd, gmcHoleEnd|vm
	}
	if g.APU {
		di.IDsFlags |= abi.AMDGPU_IDS_FLAGS_FUSION
	}
	if g.NumSE >= 8 {
		di.EnabledRBPipesMask = 0xffffffff
	}
	// gfx_v9_0_get_cu_info / gfx_v10_0_get_cu_info: the active CUs of SE i, SH j go to
	// bitmap[i % 4][j + i / 4 * 2]; the CUs are spread evenly over the SHs, lowest bits first. On a dGPU
	// every active CU is always-on (ao_cu_num = max_cu_per_sh); cu_ao_mask packs SE0-1/SH0-1 at
	// i*16 + j*8.
	arrays := g.NumSE * g.SHPerSE
	for a := uint32(0); a < arrays && a < 16; a++ {
		se, sh := a/max(g.SHPerSE, 1), a%max(g.SHPerSE, 1)
		if se >= 8 || sh >= 2 {
			continue
		}
		n := g.ActiveCUs / arrays
		if a < g.ActiveCUs%arrays {
			n++
		}
		bm := uint32(1)<<min(n, 31) - 1
		di.CUBitmap[se%4][sh+se/4*2] = bm
		di.CUAOBitmap[se%4][sh+se/4*2] = bm
		if se < 2 && sh < 2 {
			di.CUAOMask |= bm << (se*16 + sh*8)
		}
	}
	return di
}
