package kfd

import (
	"syscall"

	"github.com/kfdemu/kfdemu/gpu/shader"
	"github.com/kfdemu/kfdemu/kfd/abi"
	"golang.org/x/sys/unix"
)

// GET_VERSION minors (kfd_ioctl.h's version history). libhsakmt, ROCr and kfdtest gate on the
// number: SVM (1.5), AVAILABLE_MEMORY (1.9), the SMI profiler events (1.10), the context-save area
// as an SVM range (1.11), EXPORT_DMABUF (1.12), runtime enable and the debugger (1.13), the event
// age of kfd_event_data (1.14), ROCr's virtual memory API over GEM_VA in the compute VM (1.15),
// contiguous VRAM and libhsakmt's PC sampling (1.16). MinorSVM is reported when the driver learns
// of its clients' munmaps (SetMMNotifier), which SVM ranges must follow as amdkfd's MMU notifiers
// make them; without them MinorGPUVM (the 1.2 GPUVM interface) keeps libhsakmt's SVM off.
//
// 1.18 (kfd_ioctl.h: "Rename pad in set_memory_policy_args to misc_process_flag") is reported,
// and every addition up to it is served as amdkfd does: 1.10's SMI profiler events (smi.go),
// 1.11's GPU_ALWAYS_MAPPED SVM flag (package svm), 1.12's EXPORT_DMABUF (dmabuf.go), 1.13's
// debugger (debug.go), 1.14's event age (events.go), 1.15's import of KFD dma-bufs on the render
// node for GEM_VA (package drm, gem.go), 1.16's contiguous VRAM flag (every BO is one physical
// segment), 1.17's SDMA_BY_ENG_ID queues and 1.18's misc_process_flag (SET_MEMORY_POLICY; its one
// flag is gfx950's). SMI_EVENTS, EXPORT_DMABUF and the render node's PRIME export return a new fd,
// which only a client under kfdemu exec receives (its seccomp supervisor installs it,
// fs/supervise.go); through a plain mount they answer EOPNOTSUPP (README, deviations). The CRIU
// ioctl (1.7) answers with amdkfd's errno for the unsupported case (docs/ioctls.md). PC sampling
// (AMDKFD_IOC_PC_SAMPLE, 0x85) is an ioctl of AMD's out-of-tree driver, not upstream's: ENOTTY, as
// upstream answers it.
const (
	MinorGPUVM = 2
	MinorSVM   = 18
)

func getVersion(p *Process, c Caller, a *abi.GetVersionArgs) syscall.Errno {
	a.MajorVersion, a.MinorVersion = abi.KFD_IOCTL_MAJOR_VERSION, p.d.InterfaceMinor()
	return 0
}

// apertures follows kfd_init_apertures_v9 (kfd_flat_memory.c) for GFX9 and later.
func apertures(pd *pdd) abi.ProcessDeviceApertures {
	const lds, scratch = ldsApertureBase, scratchApertureBase
	return abi.ProcessDeviceApertures{
		LDSBase: lds, LDSLimit: lds | 0xffffffff,
		ScratchBase: scratch, ScratchLimit: scratch | 0xffffffff,
		GPUVMBase: svmUserBase, GPUVMLimit: gpuvmSize - 1,
		GPUID: pd.gpuID,
	}
}

const (
	ldsApertureBase     = 1 << 48   // MAKE_LDS_APP_BASE_V9
	scratchApertureBase = 2 << 48   // MAKE_SCRATCH_APP_BASE_V9
	svmUserBase         = 0x1000000 // SVM_USER_BASE: 16 MiB
	gpuvmSize           = 1 << 47   // min(VM size, AMDGPU_GMC_HOLE_START) on 48-bit GFX9
)

// sortedPDDs lists the process's devices in topology order.
func (p *Process) sortedPDDs() []*pdd {
	var out []*pdd
	for _, n := range p.d.sys.GPUs() {
		if pd := p.pdds[n.GPUID]; pd != nil {
			out = append(out, pd)
		}
	}
	return out
}

func getProcessApertures(p *Process, c Caller, a *abi.GetProcessAperturesArgs) syscall.Errno {
	p.mu.Lock()
	for i, pd := range p.sortedPDDs() {
		if i >= abi.NUM_OF_SUPPORTED_GPUS {
			break
		}
		a.ProcessApertures[i] = apertures(pd)
		a.NumOfNodes++
	}
	p.mu.Unlock()
	return 0
}

func getProcessAperturesNew(p *Process, c Caller, a *abi.GetProcessAperturesNewArgs) syscall.Errno {
	p.mu.Lock()
	pdds := p.sortedPDDs()
	p.mu.Unlock()
	if a.NumOfNodes == 0 {
		// "Return number of nodes, so that user space can allocate sufficient memory".
		a.NumOfNodes = uint32(len(pdds))
		return 0
	}
	n := min(int(a.NumOfNodes), len(pdds))
	buf := make([]byte, 0, n*56)
	for _, pd := range pdds[:n] {
		b := make([]byte, 56)
		encode(b, apertures(pd))
		buf = append(buf, b...)
	}
	if err := c.WriteMemory(a.KFDProcessDeviceAperturesPtr, buf); err != nil {
		return syscall.EFAULT
	}
	a.NumOfNodes = uint32(n)
	return 0
}

// acquireVM follows kfd_ioctl_acquire_vm: the fd must be a render node (amdgpu_file_to_fpriv
// checks only that the file is amdgpu's); a second acquire with a different file is EBUSY, with
// the same one a no-op.
//
// Any of the process's render nodes on this mount is accepted for any of its GPUs, and the GPU's
// own VM is acquired whichever node it is (deviation, README): libhsakmt 6.2.4 replaces its fd of
// each render node by the one libdrm keeps (open_drm_render_device: amdgpu_device_get_fd), and
// libdrm's amdgpu_device_initialize takes two fds for one device when it cannot read their
// primary-node names (fd_compare), which it cannot for a regular file, so every GPU gets the fd of
// the first render node the process opened. The process's BOs share one backing (Process.render),
// so their mmap offsets are valid through that fd too.
func acquireVM(p *Process, c Caller, a *abi.AcquireVMArgs) syscall.Errno {
	minor, owner, err := c.RenderNode(int(int32(a.DRMFD)))
	p.mu.Lock()
	defer p.mu.Unlock()
	pd := p.pdds[a.GPUID]
	if err != nil || pd == nil {
		return syscall.EINVAL
	}
	if pd.acquired {
		if pd.drmMinor == minor && owner == p.tgid {
			return 0
		}
		return syscall.EBUSY
	}
	// The emulator requires the file to be this process's own open (its memfd backs the BOs).
	if owner != p.tgid {
		p.d.log.Warn("ACQUIRE_VM: render node opened by another process", "tgid", p.tgid, "owner", owner, "gpu", a.GPUID)
		return syscall.EINVAL
	}
	if minor != pd.node.RenderMinor() {
		p.d.log.Debug("ACQUIRE_VM through another GPU's render node", "tgid", p.tgid, "gpu", a.GPUID, "minor", minor)
	}
	pd.acquired, pd.drmMinor = true, minor
	// amdgpu_vm_make_compute: the render node's VM (created at its open, gem.go) becomes the
	// process's compute VM on this device, with whatever GEM mappings it has.
	p.ensureVM(pd)
	return 0
}

// bind is kfd_bind_process_to_device: the device's VM must have been acquired.
func (p *Process) bind(gpuID uint32) (*pdd, syscall.Errno) {
	pd := p.pdds[gpuID]
	if pd == nil {
		return nil, syscall.EINVAL
	}
	if !pd.acquired {
		return nil, syscall.ENODEV
	}
	return pd, 0
}

// gpuClock is the GPU timestamp counter: gfx9's 100 MHz reference clock (RLC timestamp, 100 MHz as
// AMDGPU_INFO reports), derived from the raw monotonic clock. GET_CLOCK_COUNTERS reports it as
// gpu_clock_counter and the packet processors write it (profiling, RELEASE_MEM, SDMA timestamps).
// It is the clock S_MEMTIME reads in a wave (shader.RefClock).
func gpuClock() uint64 { return shader.RefClock() }

// gpuClockAt is gpuClock at a CLOCK_MONOTONIC_RAW reading (GET_CLOCK_COUNTERS reads all its clocks at once).
func gpuClockAt(raw unix.Timespec) uint64 { return uint64(raw.Nano()) / (1e9 / shader.RefClockHz) }

func getClockCounters(p *Process, c Caller, a *abi.GetClockCountersArgs) syscall.Errno {
	var raw, boot unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC_RAW, &raw)
	unix.ClockGettime(unix.CLOCK_BOOTTIME, &boot)
	p.mu.Lock()
	known := p.pdds[a.GPUID] != nil
	p.mu.Unlock()
	if known {
		a.GPUClockCounter = gpuClockAt(raw)
	} else {
		a.GPUClockCounter = 0
	}
	a.CPUClockCounter = uint64(raw.Nano())
	a.SystemClockCounter = uint64(boot.Nano())
	a.SystemClockFreq = 1000000000
	return 0
}

func setMemoryPolicy(p *Process, c Caller, a *abi.SetMemoryPolicyArgs) syscall.Errno {
	if a.DefaultPolicy > abi.KFD_IOC_CACHE_POLICY_NONCOHERENT || a.AlternatePolicy > abi.KFD_IOC_CACHE_POLICY_NONCOHERENT {
		return syscall.EINVAL
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	pd, errno := p.bind(a.GPUID)
	if errno == syscall.ENODEV {
		return syscall.ESRCH // kfd_ioctl_set_memory_policy maps a bind failure to -ESRCH
	}
	if errno != 0 {
		return errno
	}
	pd.policySet = true
	return 0
}

func setScratchBackingVA(p *Process, c Caller, a *abi.SetScratchBackingVAArgs) syscall.Errno {
	p.mu.Lock()
	defer p.mu.Unlock()
	pd, errno := p.bind(a.GPUID)
	if errno != 0 {
		return errno
	}
	pd.scratchVA = a.VAAddr
	return 0
}

// Tile configuration of GFX9+ parts: the tile mode arrays are all zero (swizzle modes replaced
// them); gb_addr_config is the golden value of gfx_v9_0.c.
const (
	numTileConfigs      = 32
	numMacroTileConfigs = 16
	gbAddrConfigGFX9    = 0x2a114042
)

func getTileConfig(p *Process, c Caller, a *abi.GetTileConfigArgs) syscall.Errno {
	p.mu.Lock()
	pd := p.pdds[a.GPUID]
	p.mu.Unlock()
	if pd == nil {
		return syscall.EINVAL
	}
	r := *a // the reply: an EFAULT leaves the caller's struct as it was
	r.GBAddrConfig, r.NumBanks, r.NumRanks = gbAddrConfigGFX9, 0, 0
	// kfd_ioctl_get_tile_config: "if (args->num_tile_configs > config.num_tile_configs) clamp",
	// then copy_to_user of each array -> -EFAULT.
	r.NumTileConfigs = min(r.NumTileConfigs, numTileConfigs)
	r.NumMacroTileConfigs = min(r.NumMacroTileConfigs, numMacroTileConfigs)
	if r.NumTileConfigs > 0 && c.WriteMemory(r.TileConfigPtr, make([]byte, 4*r.NumTileConfigs)) != nil {
		return syscall.EFAULT
	}
	if r.NumMacroTileConfigs > 0 && c.WriteMemory(r.MacroTileConfigPtr, make([]byte, 4*r.NumMacroTileConfigs)) != nil {
		return syscall.EFAULT
	}
	*a = r
	return 0
}

func setTrapHandler(p *Process, c Caller, a *abi.SetTrapHandlerArgs) syscall.Errno {
	p.mu.Lock()
	defer p.mu.Unlock()
	pd, errno := p.bind(a.GPUID)
	if errno == syscall.ENODEV {
		return syscall.ESRCH
	}
	if errno != 0 {
		return errno
	}
	pd.tba, pd.tma = a.TBAAddr, a.TMAAddr
	pd.updateTrap()
	return 0
}

// xnackSupported is kfd_process_xnack_mode: retry faults exist on GFX 9.4.2 (gfx90a) and 9.4.3
// (gfx942); older GFX9 and GFX10+ parts have no recoverable page faults.
func xnackSupported(gfx string) bool { return gfx == "gfx90a" || gfx == "gfx942" }

func setXnackMode(p *Process, c Caller, a *abi.SetXnackModeArgs) syscall.Errno {
	p.mu.Lock()
	defer p.mu.Unlock()
	if a.XnackEnabled < 0 {
		a.XnackEnabled = 0
		if p.xnack {
			a.XnackEnabled = 1
		}
		return 0
	}
	if len(p.queues) > 0 {
		return syscall.EBUSY // "xnack mode cannot change while queues exist"
	}
	if a.XnackEnabled != 0 {
		for _, pd := range p.pdds {
			if !xnackSupported(pd.node.GfxTarget()) {
				return syscall.EPERM
			}
		}
	}
	on := a.XnackEnabled != 0
	if errno := p.svm.SetXNACK(on); errno != 0 {
		return errno // svm_range_switch_xnack_reserve_mem
	}
	p.xnack = on
	for _, pd := range p.pdds {
		if pd.vm != nil {
			pd.vm.SetRetryFaults(on)
		}
	}
	return 0
}

func availableMemory(p *Process, c Caller, a *abi.GetAvailableMemoryArgs) syscall.Errno {
	p.mu.Lock()
	pd := p.pdds[a.GPUID]
	p.mu.Unlock()
	if pd == nil {
		return syscall.EINVAL
	}
	p.d.mu.Lock()
	used := p.d.vramUsed[a.GPUID]
	p.d.mu.Unlock()
	a.Available = pd.node.VRAMSize() - min(used, pd.node.VRAMSize())
	return 0
}

// deprecated: the pre-1.13 debugger ioctls now return -EPERM (kfd_ioctl_dbg_*_deprecated).
func deprecated[A any](p *Process, c Caller, a *A) syscall.Errno { return syscall.EPERM }

// criuOp: checkpoint/restore of GPU state is not modelled.
func criuOp(p *Process, c Caller, a *abi.CRIUArgs) syscall.Errno {
	if a.Op > 4 { // PROCESS_INFO, CHECKPOINT, UNPAUSE, RESTORE, RESUME
		return syscall.EINVAL
	}
	return syscall.EOPNOTSUPP
}
