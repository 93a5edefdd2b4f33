package kfd

import (
	"encoding/binary"
	"os"
	"sync"
	"syscall"

	"github.com/kfdemu/kfdemu/kfd/abi"
	"github.com/kfdemu/kfdemu/topology"
)

// The render node answers what libdrm_amdgpu's amdgpu_device_initialize and amdgpu_query_gpu_info
// ask (amdgpu_kms.c amdgpu_info_ioctl, drm_ioctl.c drm_version/drm_getclient/drm_getcap), from the
// profile. Buffer objects are not created through GEM: kfd allocates them; their memory is the
// process's render-node memfd, which this file's mmap maps.

// DRM driver identity as a 6.x kernel reports it (amdgpu_drv.c KMS_DRIVER_MAJOR/MINOR).
const (
	drmName      = "amdgpu"
	drmDate      = "20150101"
	drmDesc      = "AMD GPU"
	drmMajor     = 3
	drmMinor     = 57
	drmPatch     = 0
	regGBAddrCfg = 0x263e // mmGB_ADDR_CONFIG dword offset (GFX9+)
)

type drmDev struct {
	d    *Driver
	node *topology.Node
}

func newDRM(d *Driver, n *topology.Node) *drmDev { return &drmDev{d: d, node: n} }

// renderFile is one open of dev/dri/renderD<minor>.
type renderFile struct {
	p    *Process
	node *topology.Node
	sp   *space
	drm  *drmDev
	once sync.Once
}

func (f *renderFile) Backing() *os.File { return f.sp.f }
func (f *renderFile) Release()          { f.once.Do(func() { f.p.d.put(f.p) }) }

func (f *renderFile) Ioctl(c Caller, cmd uint32, arg []byte) syscall.Errno {
	if abi.IOCType(cmd) != abi.DRMIOCTLBase {
		return syscall.ENOTTY
	}
	switch abi.IOCNr(cmd) {
	case abi.IOCNr(abi.DRM_IOCTL_VERSION):
		return f.version(c, arg)
	case abi.IOCNr(abi.DRM_IOCTL_GET_CLIENT):
		var a abi.DRMClient
		decode(arg, &a)
		if a.Idx != 0 {
			return syscall.EINVAL // only this client is visible
		}
		a.Auth, a.Pid, a.UID = 1, uint64(c.Tgid()), 0
		encode(arg, a)
		return 0
	case abi.IOCNr(abi.DRM_IOCTL_GET_CAP):
		var a abi.DRMGetCap
		decode(arg, &a)
		switch a.Capability {
		case 0x1: // DRM_CAP_DUMB_BUFFER
			a.Value = 1
		case 0x5: // DRM_CAP_PRIME: import | export
			a.Value = 3
		case 0x6: // DRM_CAP_TIMESTAMP_MONOTONIC
			a.Value = 1
		case 0x13: // DRM_CAP_SYNCOBJ
			a.Value = 1
		default:
			return syscall.EINVAL
		}
		encode(arg, a)
		return 0
	case abi.IOCNr(abi.DRM_IOCTL_GEM_CLOSE):
		return syscall.EINVAL // no GEM handles exist on this emulated node
	case abi.IOCNr(abi.DRM_IOCTL_AMDGPU_INFO):
		return f.info(c, arg)
	}
	return syscall.EINVAL // drm_ioctl: unknown driver ioctls
}

// version is drm_version + drm_copy_field: each string is copied up to the caller's length and the
// full length is reported back.
func (f *renderFile) version(c Caller, arg []byte) syscall.Errno {
	var v abi.DRMVersion
	decode(arg, &v)
	put := func(ptr uint64, ulen *uint64, s string) bool {
		n := min(*ulen, uint64(len(s)))
		*ulen = uint64(len(s))
		if n > 0 && ptr != 0 {
			return c.WriteMemory(ptr, []byte(s[:n])) == nil
		}
		return true
	}
	v.VersionMajor, v.VersionMinor, v.VersionPatchlevel = drmMajor, drmMinor, drmPatch
	if !put(v.Name, &v.NameLen, drmName) || !put(v.Date, &v.DateLen, drmDate) || !put(v.Desc, &v.DescLen, drmDesc) {
		return syscall.EFAULT
	}
	encode(arg, v)
	return 0
}

// family maps a gfx target to the amdgpu family id (amdgpu_drm.h AMDGPU_FAMILY_*).
func family(gfx string) uint32 {
	switch {
	case len(gfx) >= 5 && gfx[:4] == "gfx9":
		return abi.AMDGPU_FAMILY_AI
	case len(gfx) >= 6 && gfx[:5] == "gfx10":
		return abi.AMDGPU_FAMILY_NV
	case len(gfx) >= 6 && gfx[:5] == "gfx11":
		return 145 // AMDGPU_FAMILY_GC_11_0_0
	}
	return abi.AMDGPU_FAMILY_AI
}

// pciRev is the revision that amdgpu.ids pairs with the device id for the marketing name.
var pciRev = map[uint64]uint32{0x740f: 0x02, 0x738c: 0x01, 0x74a1: 0x00, 0x6860: 0x00, 0x73bf: 0xc3}

func (f *renderFile) devInfo() abi.DRMAmdgpuInfoDevice {
	n := f.node
	se := uint32(n.Prop("array_count") / max(n.Prop("simd_arrays_per_engine"), 1))
	sh := uint32(n.Prop("simd_arrays_per_engine"))
	cus := uint32(n.ComputeUnits())
	perSH := uint32(n.Prop("cu_per_simd_array"))
	di := abi.DRMAmdgpuInfoDevice{
		DeviceID: uint32(n.Prop("device_id")), PCIRev: pciRev[n.Prop("device_id")],
		Family: family(n.GfxTarget()), NumShaderEngines: se, NumShaderArraysPerEngine: sh,
		GPUCounterFreq: 100000, // kHz: the 100 MHz reference clock
		MaxEngineClock: n.Prop("max_engine_clk_fcompute") * 1000, MaxMemoryClock: n.MemBanks[0].Props.Get("mem_clk_max") * 1000,
		CUActiveNumber: cus, NumRBPipes: 4 * se, EnabledRBPipesMask: 1<<(4*se) - 1, NumHWGfxContexts: 8,
		VirtualAddressOffset: 0x200000, VirtualAddressMax: 0x800000000000, VirtualAddressAlignment: 4096,
		PTEFragmentSize: 2 << 20, GartPageSize: 4096, VRAMType: 6 /* HBM */, VRAMBitWidth: uint32(n.MemBanks[0].Props.Get("width")),
		WaveFrontSize: uint32(n.Prop("wave_front_size")), NumShaderVisibleVGPRs: 256, NumCUPerSH: perSH,
		NumTCCBlocks: 16, HighVAOffset: 0xffff800000000000, HighVAMax: 0xffffffffffe00000,
	}
	// cu_bitmap[se % 4][sh]: the active CUs of each array, spread as topology does.
	arrays := n.Prop("array_count")
	for a := uint64(0); a < arrays && a < 16; a++ {
		act := uint64(cus) / arrays
		if a < uint64(cus)%arrays {
			act++
		}
		di.CUBitmap[a%4][a/4%4] |= uint32(1<<act - 1)
		di.CUAOBitmap[a%4][a/4%4] = di.CUBitmap[a%4][a/4%4]
	}
	return di
}

func (f *renderFile) info(c Caller, arg []byte) syscall.Errno {
	var q abi.DRMAmdgpuInfo
	decode(arg, &q)
	if q.ReturnPointer == 0 || q.ReturnSize == 0 {
		return syscall.EINVAL // amdgpu_info_ioctl: "if (!return_size || !return_pointer) return -EINVAL"
	}
	out := func(v any, size int) syscall.Errno {
		b := make([]byte, size)
		encode(b, v)
		n := min(int(q.ReturnSize), size)
		if c.WriteMemory(q.ReturnPointer, b[:n]) != nil {
			return syscall.EFAULT
		}
		return 0
	}
	u32 := func(v uint32) syscall.Errno { return out(v, 4) }
	u64 := func(v uint64) syscall.Errno { return out(v, 8) }
	n := f.node
	vram := n.VRAMSize()
	f.p.d.mu.Lock()
	used := f.p.d.vramUsed[n.GPUID]
	f.p.d.mu.Unlock()
	gtt := uint64(64) << 30
	switch q.Query {
	case abi.AMDGPU_INFO_ACCEL_WORKING:
		return u32(1)
	case abi.AMDGPU_INFO_DEV_INFO:
		return out(f.devInfo(), 376)
	case abi.AMDGPU_INFO_VRAM_GTT:
		return out(abi.DRMAmdgpuInfoVRAMGTT{VRAMSize: vram, VRAMCPUAccessibleSize: vram, GTTSize: gtt}, 24)
	case abi.AMDGPU_INFO_VRAM_USAGE, abi.AMDGPU_INFO_VIS_VRAM_USAGE:
		return u64(used)
	case abi.AMDGPU_INFO_GTT_USAGE:
		return u64(0)
	case abi.AMDGPU_INFO_MEMORY:
		h := abi.DRMAmdgpuHeapInfo{TotalHeapSize: vram, UsableHeapSize: vram, HeapUsage: used, MaxAllocation: vram}
		g := abi.DRMAmdgpuHeapInfo{TotalHeapSize: gtt, UsableHeapSize: gtt, MaxAllocation: gtt}
		return out(abi.DRMAmdgpuMemoryInfo{VRAM: h, CPUAccessibleVRAM: h, GTT: g}, 96)
	case abi.AMDGPU_INFO_FW_VERSION:
		return out(abi.DRMAmdgpuInfoFirmware{Ver: uint32(n.Prop("fw_version")), Feature: 0}, 8)
	case abi.AMDGPU_INFO_HW_IP_COUNT:
		typ := binary.LittleEndian.Uint32(q.Union[:])
		if typ >= abi.AMDGPU_HW_IP_NUM {
			return syscall.EINVAL
		}
		cnt := uint32(0)
		switch typ {
		case abi.AMDGPU_HW_IP_COMPUTE:
			cnt = 1
		case abi.AMDGPU_HW_IP_DMA:
			cnt = uint32(n.Prop("num_sdma_engines") + n.Prop("num_sdma_xgmi_engines"))
		}
		return u32(cnt)
	case abi.AMDGPU_INFO_HW_IP_INFO:
		typ := binary.LittleEndian.Uint32(q.Union[:])
		if typ >= abi.AMDGPU_HW_IP_NUM {
			return syscall.EINVAL
		}
		ip := abi.DRMAmdgpuInfoHWIP{HWIPVersionMajor: 9, IBStartAlignment: 32, IBSizeAlignment: 32}
		switch typ {
		case abi.AMDGPU_HW_IP_COMPUTE:
			ip.AvailableRings = 0xf
		case abi.AMDGPU_HW_IP_DMA:
			ip.HWIPVersionMajor, ip.AvailableRings = 4, 1<<(n.Prop("num_sdma_engines"))-1
		}
		return out(ip, 32)
	case abi.AMDGPU_INFO_READ_MMR_REG:
		off := binary.LittleEndian.Uint32(q.Union[0:])
		count := binary.LittleEndian.Uint32(q.Union[4:])
		if count == 0 || count > 128 || uint64(count)*4 > uint64(q.ReturnSize) {
			return syscall.EINVAL
		}
		if off != regGBAddrCfg || count != 1 {
			return syscall.EINVAL // amdgpu_read_mm_registers: register not in the allowed list
		}
		return u32(gbAddrConfigGFX9)
	}
	return syscall.EINVAL
}
