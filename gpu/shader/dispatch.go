package shader

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/kfdemu/kfdemu/gpu/aql"
)

// Apertures are the flat-address apertures of the process (GFX9: 4 GiB each, 4 GiB aligned).
type Apertures struct {
	SharedBase  uint64 // LDS aperture base (SRC_SHARED_BASE)
	PrivateBase uint64 // scratch aperture base (SRC_PRIVATE_BASE)
}

// DefaultApertures are the values amdkfd reports through AMDKFD_IOC_GET_PROCESS_APERTURES(_NEW) for GFX9+
// (kfd_flat_memory.c: MAKE_LDS_APP_BASE_V9 = 1<<48, MAKE_SCRATCH_APP_BASE_V9 = 2<<48; limits are base|0xffffffff).
var DefaultApertures = Apertures{SharedBase: 1 << 48, PrivateBase: 2 << 48}

// DispatchParams describes one kernel dispatch (the fields of an AQL kernel dispatch packet plus what CP
// takes from the queue).
type DispatchParams struct {
	GridSize            [3]uint32
	WorkgroupSize       [3]uint16
	KernelObject        uint64 // VA of the 64-byte kernel descriptor
	KernargAddress      uint64
	PrivateSegmentSize  uint32 // per work-item bytes (packet value; at least the descriptor's fixed size is used)
	GroupSegmentSize    uint32 // LDS bytes per work-group including dynamic LDS (packet value)
	DynamicLDS          uint32 // added to GroupSegmentSize (convenience for callers that keep it apart)
	DispatchPacket      uint64 // VA of the AQL packet (Dispatch Ptr SGPRs)
	Queue               uint64 // VA of amd_queue_t (Queue Ptr SGPRs)
	DispatchID          uint64
	ScratchBase         uint64    // VA of the queue's scratch backing memory (Flat Scratch Init)
	ScratchSize         uint64    // its size in bytes
	ScratchResource     [4]uint32 // Private Segment Buffer V# (amd_queue_t.scratch_resource_descriptor, as CP copies it); zero: one over ScratchBase
	ScratchWaveBytes    uint64    // one wave's scratch slot (COMPUTE_TMPRING_SIZE.WAVESIZE * 1 KiB); 0: the private segment of 64 lanes
	Apertures           Apertures
	StartGroup          uint64 // first work-group (flattened x-fastest) to run: resume point after preemption
	MaxWaveInstructions uint64 // per-wave hang guard; 0 = 1<<32
	// Kill, if not nil, stops waves inside a work-group when it is closed (a queue reset after a
	// preemption timeout, or the queue's destruction). Without it the dispatch context does both:
	// with it, the context ends the dispatch at the next work-group boundary only.
	Kill <-chan struct{}
	// Suspendable makes the context's end a suspension in place (CWSR, suspend.go): admission
	// stops, resident waves stop at an instruction boundary and are kept with their registers,
	// LDS and scratch, and Dispatch returns *SuspendedError, whose Resume continues exactly where
	// the waves stood. Kill still ends them.
	Suspendable bool
	// GroupDone, if not nil, is called after each work-group completes with its flattened index
	// and the CU it ran on (kfd counts work-groups per CU with it).
	GroupDone func(group uint64, cu int)
	// Interrupt, if not nil, receives each host interrupt a wave raises with s_sendmsg(MSG_INTERRUPT)
	// (legacy.go); they are counted in Stats.Interrupts either way.
	Interrupt func(Interrupt)
	Engine
}

// Engine is where a dispatch's work-groups run: the GPU's compute units, the CUs its queue may use,
// windows on its memory for concurrently running work-groups, and the queue's GWS.
type Engine struct {
	// Device is the GPU (nil: a small default device of 8 CUs).
	Device *Device
	// Doorbell is the queue's doorbell id, what s_sendmsg(MSG_GET_DOORBELL) returns.
	Doorbell uint32
	// Trap, if not nil, is the process's second-level trap handler, entered by s_trap (trap.go).
	Trap *TrapHandler
	// CUs are the CUs the queue's CU mask allows (nil: all).
	CUs []int
	// Ports, if not nil, lends each running work-group its own window on the memory; without it
	// the dispatch's Memory must be safe for concurrent use.
	Ports PortPool
	// GWS is the device's global wave sync if the queue holds it (ALLOC_QUEUE_GWS), else nil: a
	// GWS instruction then stops the wave.
	GWS *GWS
	// Owner is whom the dispatch's resident waves count against (kfd: the process's PASID, as the
	// SQ's wave status names a wave's VMID): Device.ResidentWaves.
	Owner uint32
	// Code, if not nil, keeps the queue's decoded kernels between dispatches (codecache.go);
	// without it each dispatch decodes its code afresh.
	Code *CodeCache
}

// KernelDescriptor is the code object V3+ kernel descriptor (AMDGPUUsage "Kernel Descriptor"), or the
// fields of a code object V2 amd_kernel_code_t that CP uses (V2 is set then).
type KernelDescriptor struct {
	GroupSegmentFixedSize   uint32
	PrivateSegmentFixedSize uint32
	KernargSize             uint32
	KernelCodeEntryOffset   int64
	RSRC3, RSRC1, RSRC2     uint32
	Flags                   uint16 // bits 448..463: ENABLE_SGPR_* (bit 0 private segment buffer .. bit 6 private segment size), bit 10 wave32; V2: bits 7..9 grid work-group count X/Y/Z
	KernargPreload          uint16
	V2                      bool // parsed from an amd_kernel_code_t (code object V2)
}

// ParseKernelDescriptor decodes the 64-byte code object V3+ descriptor.
func ParseKernelDescriptor(b []byte) (KernelDescriptor, error) {
	var k KernelDescriptor
	if len(b) < 64 {
		return k, fmt.Errorf("%w: kernel descriptor is %d bytes, want 64", ErrBadDispatch, len(b))
	}
	le := binary.LittleEndian
	k.GroupSegmentFixedSize = le.Uint32(b[0:])
	k.PrivateSegmentFixedSize = le.Uint32(b[4:])
	k.KernargSize = le.Uint32(b[8:])
	k.KernelCodeEntryOffset = int64(le.Uint64(b[16:]))
	k.RSRC3 = le.Uint32(b[44:])
	k.RSRC1 = le.Uint32(b[48:])
	k.RSRC2 = le.Uint32(b[52:])
	k.Flags = le.Uint16(b[56:])
	k.KernargPreload = le.Uint16(b[58:])
	return k, nil
}

// AmdKernelCodeSize is the size of a code object V2 amd_kernel_code_t (ROCm "AMD Kernel Code", amd_kernel_code.h).
const AmdKernelCodeSize = 256

// IsAmdKernelCode reports whether b starts with an amd_kernel_code_t rather than a V3+ kernel descriptor:
// amd_kernel_code_version_major == 1 (AMD_KERNEL_CODE_VERSION_MAJOR) and amd_machine_kind == 1
// (AMD_MACHINE_KIND_AMDGPU). A V3+ descriptor would need GROUP_SEGMENT_FIXED_SIZE == 1 and a KERNARG_SIZE
// with low half 1 to look the same.
func IsAmdKernelCode(b []byte) bool {
	return len(b) >= 16 && binary.LittleEndian.Uint32(b) == 1 && binary.LittleEndian.Uint16(b[8:]) == 1
}

// ParseAmdKernelCode decodes the fields CP uses from a 256-byte amd_kernel_code_t (ROCm amd_kernel_code.h;
// shared/reference amd-code-object-and-dispatch.md section 3.5). The offsets of kernel_code_entry_byte_offset,
// compute_pgm_rsrc1/2 and the enable_sgpr_* bits are the same as in the V3+ descriptor; there is no RSRC3.
func ParseAmdKernelCode(b []byte) (KernelDescriptor, error) {
	var k KernelDescriptor
	if len(b) < AmdKernelCodeSize {
		return k, fmt.Errorf("%w: amd_kernel_code_t is %d bytes, want %d", ErrBadDispatch, len(b), AmdKernelCodeSize)
	}
	if !IsAmdKernelCode(b) {
		return k, fmt.Errorf("%w: not an amd_kernel_code_t (version %d, machine kind %d)", ErrBadDispatch,
			binary.LittleEndian.Uint32(b), binary.LittleEndian.Uint16(b[8:]))
	}
	le := binary.LittleEndian
	k.V2 = true
	k.KernelCodeEntryOffset = int64(le.Uint64(b[16:]))
	k.RSRC1 = le.Uint32(b[48:])
	k.RSRC2 = le.Uint32(b[52:])
	k.Flags = le.Uint16(b[56:]) & 0x3ff // enable_sgpr_* incl. grid work-group count X/Y/Z (bits 7..9)
	props := le.Uint16(b[58:])          // enable_ordered_append_gds[0], private_element_size[2:1], is_ptr64[3], ...
	k.PrivateSegmentFixedSize = le.Uint32(b[60:])
	k.GroupSegmentFixedSize = le.Uint32(b[64:])
	k.KernargSize = uint32(le.Uint64(b[72:]))
	if props&1 != 0 {
		return k, fmt.Errorf("%w: enable_ordered_append_gds (GDS) not implemented", ErrBadDispatch)
	}
	if es := props >> 1 & 3; es != 1 { // AMD_ELEMENT_BYTE_SIZE_4: the dword swizzle modelled here
		return k, fmt.Errorf("%w: private_element_size %d (only 1 = 4 bytes)", ErrBadDispatch, es)
	}
	if props>>3&1 == 0 {
		return k, fmt.Errorf("%w: amd_kernel_code_t is_ptr64 = 0 (32-bit HSA)", ErrBadDispatch)
	}
	if ws := b[103]; ws != 6 {
		return k, fmt.Errorf("%w: wavefront_size 2^%d on gfx90a", ErrBadDispatch, ws)
	}
	return k, nil
}

// RegParams describes a dispatch by the compute registers, the way a PM4 stream sets it up (SET_SH_REG of
// COMPUTE_PGM_*, COMPUTE_USER_DATA_*, COMPUTE_NUM_THREAD_*, COMPUTE_TMPRING_SIZE, then DISPATCH_DIRECT).
// User SGPRs are taken verbatim from UserData; there is no descriptor.
type RegParams struct {
	PgmAddr             uint64     // COMPUTE_PGM_LO/HI as a byte address (the registers hold bits 47:8): 256-byte aligned
	RSRC1, RSRC2, RSRC3 uint32     // COMPUTE_PGM_RSRC1/2/3
	UserData            [16]uint32 // COMPUTE_USER_DATA_0..15: s0.. up to RSRC2.USER_SGPR
	NumGroups           [3]uint32  // DISPATCH_DIRECT DIM_X/Y/Z: work-groups per dimension
	WorkgroupSize       [3]uint16  // COMPUTE_NUM_THREAD_X/Y/Z
	// TmpringSize is COMPUTE_TMPRING_SIZE: WAVESIZE[24:12] is the scratch per wave in 1 KiB units on GFX9
	// (ROCr amd_aql_queue.cpp), so a lane owns WAVESIZE*16 bytes.
	TmpringSize         uint32
	ScratchBase         uint64 // scratch backing memory of the queue (FLAT_SCRATCH and wave offsets)
	ScratchSize         uint64
	Apertures           Apertures
	StartGroup          uint64          // first work-group (flattened x-fastest): resume point after preemption
	MaxWaveInstructions uint64          // per-wave hang guard; 0 = 1<<32
	Kill                <-chan struct{} // as DispatchParams.Kill
	Suspendable         bool            // as DispatchParams.Suspendable
	GroupDone           func(group uint64, cu int)
	Interrupt           func(Interrupt) // as DispatchParams.Interrupt
	Engine
}

// PreemptedError is returned when the context ends: no further work-group is admitted, the
// resident ones run to their end, and NextGroup is the first one not admitted (every one before it
// has completed: dispatch again with StartGroup = NextGroup to resume). When waves are stopped
// inside their work-groups (Kill closed, or the context without Kill) after at most waveStopCheck
// more instructions of a wave, MidGroup is set and NextGroup is the lowest stopped work-group: their
// waves are abandoned where they stood, as a queue reset leaves them (no wave state is saved).
type PreemptedError struct {
	NextGroup uint64
	MidGroup  bool
}

func (e *PreemptedError) Error() string {
	if e.MidGroup {
		return fmt.Sprintf("shader: dispatch stopped inside work-group %d", e.NextGroup)
	}
	return fmt.Sprintf("shader: dispatch preempted at work-group %d", e.NextGroup)
}

// waveStopCheck is how many instructions a wave runs between looks at the dispatch's context.
const waveStopCheck = 1 << 14

var errStopMidGroup = errors.New("shader: stopped inside a work-group")

// ErrBadDispatch is wrapped by errors about invalid dispatch parameters or descriptors: invalid code
// for the queue (aql.ErrInvalidCode), or aql.ErrGroupTooLarge for a work-group beyond a CU.
var ErrBadDispatch = aql.NewError("shader: invalid dispatch", aql.ErrInvalidCode)

// launch is the common hardware state of a dispatch, whichever way it was described.
type launch struct {
	pgm                 uint64
	rsrc1, rsrc2, rsrc3 uint32
	user                [16]uint32
	grid                [3]uint64 // work-items per dimension
	wg                  [3]uint16
	lds                 uint64 // bytes per work-group
	priv                uint32 // per-lane private bytes
	scratchBase         uint64
	scratchSize         uint64
	waveScratch         uint64 // bytes of one wave's scratch slot
	ap                  Apertures
	start               uint64
	maxSteps            uint64
	kill                <-chan struct{}
	suspendable         bool
	groupDone           func(uint64, int)
	interrupt           func(Interrupt)
	owner               uint32 // Engine.Owner
	doorbell            uint32 // Engine.Doorbell
	trap                *TrapHandler
}

// descBufs are Dispatch's buffers for a kernel descriptor or amd_kernel_code_t.
var descBufs = sync.Pool{New: func() any { return new([AmdKernelCodeSize]byte) }}

// Dispatch runs a kernel to completion, its work-groups concurrently on the Engine's CUs (workgroup.go).
// KernelObject points at a code object V3+ kernel descriptor or a V2 amd_kernel_code_t. The context stops
// the admission of work-groups; Dispatch then returns *PreemptedError naming the first one not admitted.
func Dispatch(ctx context.Context, mem Memory, p DispatchParams) (Stats, error) {
	var st Stats
	kdb := descBufs.Get().(*[AmdKernelCodeSize]byte) // read through an interface: on the stack it would escape
	defer descBufs.Put(kdb)
	if err := mem.Read(p.KernelObject, kdb[:64]); err != nil {
		return st, &Fault{Addr: p.KernelObject, Inst: "<kernel descriptor>", Err: err}
	}
	var kd KernelDescriptor
	var err error
	if IsAmdKernelCode(kdb[:]) {
		if err := mem.Read(p.KernelObject+64, kdb[64:]); err != nil {
			return st, &Fault{Addr: p.KernelObject + 64, Inst: "<amd_kernel_code_t>", Err: err}
		}
		kd, err = ParseAmdKernelCode(kdb[:])
	} else {
		kd, err = ParseKernelDescriptor(kdb[:64])
	}
	if err != nil {
		return st, err
	}
	l, err := p.launch(kd)
	if err != nil {
		return st, err
	}
	return run(ctx, mem, l, p.Device, p.CUs, p.Ports, p.GWS, p.Code)
}

// launch does CP's part of an AQL dispatch: registers from the descriptor, user data from the packet.
func (p *DispatchParams) launch(kd KernelDescriptor) (launch, error) {
	l := launch{pgm: uint64(int64(p.KernelObject) + kd.KernelCodeEntryOffset), rsrc1: kd.RSRC1, rsrc2: kd.RSRC2,
		rsrc3: kd.RSRC3, wg: p.WorkgroupSize, scratchBase: p.ScratchBase, scratchSize: p.ScratchSize, waveScratch: p.ScratchWaveBytes,
		ap: p.Apertures, start: p.StartGroup, maxSteps: p.MaxWaveInstructions, kill: p.Kill, suspendable: p.Suspendable,
		groupDone: p.GroupDone, interrupt: p.Interrupt, owner: p.Owner, doorbell: p.Doorbell, trap: p.Trap}
	if kd.Flags>>10&1 != 0 && !kd.V2 {
		return l, fmt.Errorf("%w: wave32 descriptor on gfx90a", ErrBadDispatch)
	}
	if kd.KernargPreload&0x7f != 0 {
		return l, fmt.Errorf("%w: kernarg preload is not supported", ErrBadDispatch)
	}
	for i := 0; i < 3; i++ {
		l.grid[i] = uint64(p.GridSize[i])
	}
	l.lds = uint64(p.GroupSegmentSize) + uint64(p.DynamicLDS)
	if l.lds < uint64(kd.GroupSegmentFixedSize) {
		l.lds = uint64(kd.GroupSegmentFixedSize)
	}
	l.priv = max(p.PrivateSegmentSize, kd.PrivateSegmentFixedSize)
	l.priv = (l.priv + 3) &^ 3 // CP rounds to a dword
	if l.waveScratch == 0 {
		l.waveScratch = uint64(l.priv) * lanes
	}
	// User SGPRs in the documented order (AMDGPUUsage "Initial Kernel Execution State"; V2: amd_kernel_code_t
	// enable_sgpr_*). Only the first 16 exist.
	n := 0
	put := func(v uint32) {
		if n < 16 {
			l.user[n] = v
		}
		n++
	}
	put64 := func(v uint64) { put(uint32(v)); put(uint32(v >> 32)) }
	f := kd.Flags
	if f&1 != 0 { // private segment buffer: the queue's scratch V# (swizzled, ADD_TID_ENABLE, index stride 64)
		if p.ScratchResource != [4]uint32{} {
			for _, v := range p.ScratchResource {
				put(v)
			}
		} else {
			put64(p.ScratchBase&0xffffffffffff | 1<<63) // dword1 bit 31 SWIZZLE_ENABLE
			put(0xffffffff)                             // NUM_RECORDS
			put(1<<23 | 3<<21 | 4<<15 | 4<<12)          // ADD_TID_ENABLE, INDEX_STRIDE=64, DATA_FORMAT 32, NUM_FORMAT
		}
	}
	if f&2 != 0 {
		put64(p.DispatchPacket)
	}
	if f&4 != 0 {
		put64(p.Queue)
	}
	if f&8 != 0 {
		put64(p.KernargAddress)
	}
	if f&16 != 0 {
		put64(p.DispatchID)
	}
	if f&32 != 0 { // flat scratch init, absolute style (gfx9): 64-bit scratch base
		put64(p.ScratchBase)
	}
	if f&64 != 0 {
		put(l.priv)
	}
	if kd.V2 { // grid work-group counts (V2 only; Y and Z only if fewer than 16 SGPRs precede them)
		for i := 0; i < 3; i++ {
			if f>>(7+i)&1 != 0 && p.WorkgroupSize[i] != 0 {
				put(uint32((l.grid[i] + uint64(p.WorkgroupSize[i]) - 1) / uint64(p.WorkgroupSize[i])))
			}
		}
	}
	return l, nil
}

// DispatchRegs runs a dispatch described by compute registers (the PM4 DISPATCH_DIRECT path). It shares
// the execution path of Dispatch.
func DispatchRegs(ctx context.Context, mem Memory, r RegParams) (Stats, error) {
	l := launch{pgm: r.PgmAddr, rsrc1: r.RSRC1, rsrc2: r.RSRC2, rsrc3: r.RSRC3, user: r.UserData, wg: r.WorkgroupSize,
		scratchBase: r.ScratchBase, scratchSize: r.ScratchSize, ap: r.Apertures, start: r.StartGroup,
		maxSteps: r.MaxWaveInstructions, kill: r.Kill, suspendable: r.Suspendable, groupDone: r.GroupDone, interrupt: r.Interrupt,
		owner: r.Owner, doorbell: r.Doorbell, trap: r.Trap}
	for i := 0; i < 3; i++ {
		l.grid[i] = uint64(r.NumGroups[i]) * uint64(r.WorkgroupSize[i])
	}
	l.lds = uint64(r.RSRC2>>15&0x1ff) * 512 // LDS_SIZE, 128-dword granularity (GFX7+)
	l.priv = (r.TmpringSize >> 12 & 0x1fff) * 1024 / lanes
	l.waveScratch = uint64(l.priv) * lanes
	return run(ctx, mem, l, r.Device, r.CUs, r.Ports, r.GWS, r.Code)
}

// initWave sets the documented initial register state (AMDGPUUsage "Initial Kernel Execution State").
func (d *dispatch) initWave(w *wave, g *group, sz [3]int, nw int) {
	l := &d.l
	id := g.id
	w.s = [128]uint32{}
	w.scc, w.bar, w.steps = false, false, 0
	w.pollKey, w.polled = 0, false
	w.pc = l.pgm
	// MODE from RSRC1: FLOAT_MODE[19:12] -> FP_ROUND[3:0]/FP_DENORM[7:4], DX10_CLAMP[21] -> 8, IEEE_MODE[23]
	// -> 9, FP16_OVFL[26] -> 23; RSRC2 EXCP_EN[30:24] -> MODE.EXCP_EN[18:12].
	w.mode = l.rsrc1>>12&0xff | l.rsrc1>>21&1<<8 | l.rsrc1>>23&1<<9 | l.rsrc1>>26&1<<23 | l.rsrc2>>24&0x7f<<12
	nu := int(l.rsrc2 >> 1 & 0x1f) // USER_SGPR_COUNT
	copy(w.s[:min(nu, 16)], l.user[:])
	n := nu // system SGPRs follow the user SGPRs
	sys := func(v uint32) {
		if n < 102 {
			w.s[n] = v
		}
		n++
	}
	for i := 0; i < 3; i++ {
		if l.rsrc2>>(7+i)&1 != 0 {
			sys(uint32(id[i]))
		}
	}
	if l.rsrc2>>10&1 != 0 { // work-group info: first_wave[31], size in waves[5:0]
		v := uint32(nw & 0x3f)
		if w.id == 0 {
			v |= 1 << 31
		}
		sys(v)
	}
	// Each wave with a private segment owns one of the queue's scratch wave slots (SPI's
	// scratch wave id): its scratch is at slot*priv*64 from the queue's base.
	var waveOff uint32
	if len(g.slots) > w.id {
		waveOff = uint32(uint64(g.slots[w.id]) * l.waveScratch) // Scratch Wave Offset: the slot's byte offset
	}
	if l.rsrc2&1 != 0 {
		sys(waveOff)
	}
	// FLAT_SCRATCH is written by the kernel prolog on gfx90a (absolute flat scratch); preset it too.
	w.sset64(opFlatScrLo, l.scratchBase+uint64(waveOff))
	// VGPRs: work-item ids packed into v0 on gfx90a (AMDGPUUsage Table "Packed work-item IDs"); Y and Z only
	// as ENABLE_VGPR_WORKITEM_ID (RSRC2[12:11]) asks, else 0. A partial work-group at the grid's edge is
	// a smaller group of its own shape sz (the SPI takes COMPUTE_NUM_THREAD_*.NUM_THREAD_PARTIAL as its
	// size; HSA PRM workitemflatid counts in the current work-group size): its work-items are packed
	// densely by that shape, x fastest, into ceil(items/64) waves (initGroup's nw), and only the
	// last wave has inactive lanes. (Laid out by the full shape instead, a group partial in x and
	// spanning y or z needs more waves than nw: such work-items never ran.)
	tid := l.rsrc2 >> 11 & 3
	var exec uint64
	t0 := w.id * lanes
	items := sz[0] * sz[1] * sz[2]
	if n := items - t0; n >= lanes {
		exec = ^uint64(0)
	} else if n > 0 {
		exec = 1<<n - 1
	}
	if sz[1] == 1 && sz[2] == 1 {
		// One dimension: lane ln is x = t0+ln (y = z = 0).
		v0, x := w.v[0][:], uint32(t0) // a slice: no nil check per lane
		for ln := 0; ln < lanes; ln += 4 {
			v0[ln], v0[ln+1], v0[ln+2], v0[ln+3] = x, x+1, x+2, x+3
			x += 4
		}
		w.setExec(exec)
		w.s[opM0] = 0xffffffff
		return
	}
	x, y, z := t0%sz[0], t0/sz[0]%sz[1], t0/(sz[0]*sz[1]) // then counted, not divided
	for ln := 0; ln < lanes; ln++ {
		if ln > 0 {
			if x++; x == sz[0] {
				if x, y = 0, y+1; y == sz[1] {
					y, z = 0, z+1
				}
			}
		}
		v := uint32(x)
		if tid >= 1 {
			v |= uint32(y) << 10
		}
		if tid >= 2 {
			v |= uint32(z) << 20
		}
		w.v[0][ln] = v
	}
	w.setExec(exec)
	w.s[opM0] = 0xffffffff
}

// step executes in, the instruction at w.pc, and advances w.pc past it unless the wave ended or
// the routine moved it (a branch). turn runs the common case itself (stepFast); step is the whole
// path, for VSKIP and VGPR index mode, an unimplemented instruction and an error.
func (d *dispatch) step(w *wave, in *Inst) (err error) {
	pc := w.pc
	if w.mode&(modeGPRIdxEn|modeVSkip) != 0 { // VSKIP and VGPR index mode (legacy.go); free when both are off
		if w.mode&modeVSkip != 0 && isVector(in.Fmt) {
			w.pc += uint64(in.Size)
			return nil
		}
		if w.mode&modeGPRIdxEn != 0 {
			in2, err := w.gprIndexed(in)
			if err != nil {
				return &WaveError{PC: pc, Inst: in.String(), Err: err}
			}
			in = in2
		}
	}
	fn := in.near // the routine without its rounding wrapper under round to nearest even (bind)
	if w.mode&in.rmask != 0 {
		fn = in.exec
	}
	if fn == nil {
		return &WaveError{PC: w.pc, Inst: in.String(), Err: ErrUnimplemented}
	}
	return d.finish(w, in, pc, fn(w, in))
}

// finish ends step after in's routine returned err: an operand error a value helper recorded
// (wave.fail) or err becomes the wave's error; else w.pc advances past in unless the wave ended.
func (d *dispatch) finish(w *wave, in *Inst, pc uint64, err error) error {
	if w.err != nil { // an operand error a value helper recorded (wave.fail)
		err, w.err = w.err, nil
	}
	if err != nil {
		return stepErr(in, pc, err)
	}
	if !w.done {
		w.pc += uint64(in.Size)
	}
	return nil
}

// stepErr is the error a wave stops with when in, at pc, failed with err: a Fault or TrapError as
// it is, anything else as a WaveError.
//
//go:noinline
func stepErr(in *Inst, pc uint64, err error) error {
	var f *Fault
	var t *TrapError
	if errors.As(err, &f) || errors.As(err, &t) {
		return err
	}
	return &WaveError{PC: pc, Inst: in.String(), Err: err}
}
