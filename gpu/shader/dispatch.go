package shader

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
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
	ScratchBase         uint64 // VA of the queue's scratch backing memory
	ScratchSize         uint64 // its size in bytes
	Apertures           Apertures
	StartGroup          uint64 // first work-group (flattened x-fastest) to run: resume point after preemption
	MaxWaveInstructions uint64 // per-wave hang guard; 0 = 1<<32
}

// KernelDescriptor is the code object V3+ kernel descriptor (AMDGPUUsage "Kernel Descriptor").
type KernelDescriptor struct {
	GroupSegmentFixedSize   uint32
	PrivateSegmentFixedSize uint32
	KernargSize             uint32
	KernelCodeEntryOffset   int64
	RSRC3, RSRC1, RSRC2     uint32
	Flags                   uint16 // bits 448..463: ENABLE_SGPR_* (bit 0 private segment buffer .. bit 6 private segment size), bit 10 wave32
	KernargPreload          uint16
}

// ParseKernelDescriptor decodes the 64-byte descriptor.
func ParseKernelDescriptor(b []byte) (KernelDescriptor, error) {
	var k KernelDescriptor
	if len(b) < 64 {
		return k, fmt.Errorf("shader: kernel descriptor is %d bytes, want 64", len(b))
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

// PreemptedError is returned when the context ends at a work-group boundary; dispatch again with
// StartGroup = NextGroup to resume.
type PreemptedError struct{ NextGroup uint64 }

func (e *PreemptedError) Error() string {
	return fmt.Sprintf("shader: dispatch preempted at work-group %d", e.NextGroup)
}

// ErrBadDispatch is wrapped by errors about invalid dispatch parameters or descriptors.
var ErrBadDispatch = errors.New("shader: invalid dispatch")

type dispatch struct {
	p     DispatchParams
	mem   Memory
	kd    KernelDescriptor
	entry uint64
	mode  uint32
	code  map[uint64]*Inst
	priv  uint32 // per-lane private bytes
	nvgpr int
	stats Stats
}

// Stats counts executed work.
type Stats struct {
	WaveInstructions uint64
	Waves            uint64
	Groups           uint64
}

type group struct {
	lds   []byte
	waves []*wave
}

// Dispatch runs a kernel to completion, one work-group at a time. The context is checked between
// work-groups; when it is done, Dispatch returns *PreemptedError naming the next work-group.
func Dispatch(ctx context.Context, mem Memory, p DispatchParams) (Stats, error) {
	d := &dispatch{p: p, mem: mem, code: map[uint64]*Inst{}}
	var kdb [64]byte
	if err := mem.Read(p.KernelObject, kdb[:]); err != nil {
		return d.stats, &Fault{Addr: p.KernelObject, Err: err}
	}
	kd, _ := ParseKernelDescriptor(kdb[:])
	d.kd = kd
	d.entry = uint64(int64(p.KernelObject) + kd.KernelCodeEntryOffset)
	if d.entry&0xff != 0 {
		return d.stats, fmt.Errorf("%w: entry %#x not 256-byte aligned", ErrBadDispatch, d.entry)
	}
	if kd.Flags>>10&1 != 0 {
		return d.stats, fmt.Errorf("%w: wave32 descriptor on gfx90a", ErrBadDispatch)
	}
	if kd.KernargPreload&0x7f != 0 {
		return d.stats, fmt.Errorf("%w: kernarg preload is not supported", ErrBadDispatch)
	}
	// FLOAT_ROUND_MODE_32 / _16_64 must be round-to-nearest-even: the only mode implemented.
	if kd.RSRC1>>12&0xf != 0 {
		return d.stats, fmt.Errorf("%w: float round mode %#x not implemented", ErrBadDispatch, kd.RSRC1>>12&0xf)
	}
	d.mode = kd.RSRC1 >> 12 & 0xff // MODE.FP_ROUND[3:0], FP_DENORM[7:4]
	for i := 0; i < 3; i++ {
		if p.WorkgroupSize[i] == 0 {
			return d.stats, fmt.Errorf("%w: zero work-group size", ErrBadDispatch)
		}
	}
	wgItems := int(p.WorkgroupSize[0]) * int(p.WorkgroupSize[1]) * int(p.WorkgroupSize[2])
	if wgItems > 1024 {
		return d.stats, fmt.Errorf("%w: work-group of %d work-items", ErrBadDispatch, wgItems)
	}
	lds := uint64(p.GroupSegmentSize) + uint64(p.DynamicLDS)
	if lds < uint64(kd.GroupSegmentFixedSize) {
		lds = uint64(kd.GroupSegmentFixedSize)
	}
	if lds > 64<<10 {
		return d.stats, fmt.Errorf("%w: %d bytes of LDS (gfx90a has 64 KiB)", ErrBadDispatch, lds)
	}
	d.priv = max(p.PrivateSegmentSize, kd.PrivateSegmentFixedSize)
	d.priv = (d.priv + 3) &^ 3
	nw := (wgItems + lanes - 1) / lanes
	if d.priv > 0 && uint64(d.priv)*lanes*uint64(nw) > p.ScratchSize {
		return d.stats, fmt.Errorf("%w: scratch of %d bytes < %d per work-group", ErrBadDispatch, p.ScratchSize, uint64(d.priv)*lanes*uint64(nw))
	}
	// gfx90a: GRANULATED_WORKITEM_VGPR_COUNT counts arch+acc VGPRs in blocks of 8; allocate the full
	// unified file so AGPRs (a0 = index 256) are addressable.
	d.nvgpr = 512
	var ng [3]uint64
	total := uint64(1)
	for i := 0; i < 3; i++ {
		ng[i] = (uint64(p.GridSize[i]) + uint64(p.WorkgroupSize[i]) - 1) / uint64(p.WorkgroupSize[i])
		total *= ng[i]
	}
	g := &group{lds: make([]byte, lds)}
	for i := 0; i < nw; i++ {
		g.waves = append(g.waves, &wave{v: make([][lanes]uint32, d.nvgpr), id: i, d: d, g: g})
	}
	for gi := p.StartGroup; gi < total; gi++ {
		if ctx.Err() != nil {
			return d.stats, &PreemptedError{NextGroup: gi}
		}
		id := [3]uint64{gi % ng[0], gi / ng[0] % ng[1], gi / (ng[0] * ng[1])}
		if err := d.runGroup(g, id); err != nil {
			return d.stats, err
		}
		d.stats.Groups++
	}
	return d.stats, nil
}

func (d *dispatch) runGroup(g *group, id [3]uint64) error {
	clear(g.lds)
	p := d.p
	// partial work-groups at the grid edge
	var sz [3]int
	for i := 0; i < 3; i++ {
		sz[i] = int(p.WorkgroupSize[i])
		if rem := int(uint64(p.GridSize[i]) - id[i]*uint64(p.WorkgroupSize[i])); rem < sz[i] {
			sz[i] = rem
		}
	}
	items := sz[0] * sz[1] * sz[2]
	nw := (items + lanes - 1) / lanes
	for i, w := range g.waves {
		w.done = i >= nw
		if !w.done {
			d.initWave(w, id, sz, items, nw)
			d.stats.Waves++
		}
	}
	for {
		live, atBar := 0, 0
		for _, w := range g.waves {
			if w.done {
				continue
			}
			live++
			if !w.bar {
				if err := d.run(w); err != nil {
					return err
				}
			}
			if w.bar && !w.done {
				atBar++
			}
		}
		if live == 0 {
			return nil
		}
		stillLive := 0
		for _, w := range g.waves {
			if !w.done {
				stillLive++
			}
		}
		if stillLive == 0 {
			return nil
		}
		if atBar == stillLive { // every live wave arrived: release the barrier
			for _, w := range g.waves {
				w.bar = false
			}
		}
	}
}

// initWave sets the documented initial register state (AMDGPUUsage "Initial Kernel Execution State").
func (d *dispatch) initWave(w *wave, id [3]uint64, sz [3]int, items, nw int) {
	p, kd := d.p, d.kd
	w.s = [128]uint32{}
	w.scc, w.bar, w.steps = false, false, 0
	w.pc = d.entry
	n := 0
	put := func(v uint32) {
		if n < 16 {
			w.s[n] = v
		}
		n++
	}
	put64 := func(v uint64) { put(uint32(v)); put(uint32(v >> 32)) }
	waveOff := uint32(w.id) * d.priv * lanes
	if kd.Flags&1 != 0 { // private segment buffer: scratch V# (swizzled, ADD_TID_ENABLE, index stride 64)
		put64(p.ScratchBase&0xffffffffffff | 1<<63) // dword1 bit 31 SWIZZLE_ENABLE
		put(0xffffffff)                             // NUM_RECORDS
		put(1<<23 | 3<<21 | 4<<15 | 4<<12)          // ADD_TID_ENABLE, INDEX_STRIDE=64, DATA_FORMAT 32, NUM_FORMAT
	}
	if kd.Flags&2 != 0 {
		put64(p.DispatchPacket)
	}
	if kd.Flags&4 != 0 {
		put64(p.Queue)
	}
	if kd.Flags&8 != 0 {
		put64(p.KernargAddress)
	}
	if kd.Flags&16 != 0 {
		put64(p.DispatchID)
	}
	if kd.Flags&32 != 0 { // flat scratch init, absolute style (gfx9): 64-bit scratch base
		put64(p.ScratchBase)
	}
	if kd.Flags&64 != 0 {
		put(d.priv)
	}
	n = int(kd.RSRC2 >> 1 & 0x1f) // system SGPRs follow USER_SGPR_COUNT
	sys := func(v uint32) {
		if n < 102 {
			w.s[n] = v
		}
		n++
	}
	for i := 0; i < 3; i++ {
		if kd.RSRC2>>(7+i)&1 != 0 {
			sys(uint32(id[i]))
		}
	}
	if kd.RSRC2>>10&1 != 0 { // work-group info: first_wave[31], size in waves[5:0]
		v := uint32(nw & 0x3f)
		if w.id == 0 {
			v |= 1 << 31
		}
		sys(v)
	}
	if kd.RSRC2&1 != 0 {
		sys(waveOff)
	}
	// FLAT_SCRATCH is written by the kernel prolog on gfx90a (absolute flat scratch); preset it too.
	w.sset64(opFlatScrLo, p.ScratchBase+uint64(waveOff))
	// VGPRs: work-item ids; gfx90a uses the packed layout in v0 (AMDGPUUsage Table "Packed work-item IDs").
	var exec uint64
	for l := 0; l < lanes; l++ {
		t := w.id*lanes + l
		if t >= items {
			w.v[0][l] = 0
			continue
		}
		exec |= 1 << l
		x, y, z := t%sz[0], t/sz[0]%sz[1], t/(sz[0]*sz[1])
		// ids are positions in the full work-group shape
		w.v[0][l] = uint32(x) | uint32(y)<<10 | uint32(z)<<20
	}
	_ = exec
	// re-derive with the full work-group width so ids match hardware (partial groups keep the width)
	exec = 0
	full := [3]int{int(p.WorkgroupSize[0]), int(p.WorkgroupSize[1]), int(p.WorkgroupSize[2])}
	for l := 0; l < lanes; l++ {
		t := w.id*lanes + l
		x, y, z := t%full[0], t/full[0]%full[1], t/(full[0]*full[1])
		if x < sz[0] && y < sz[1] && z < sz[2] && t < full[0]*full[1]*full[2] {
			exec |= 1 << l
		}
		w.v[0][l] = uint32(x) | uint32(y)<<10 | uint32(z)<<20
	}
	w.setExec(exec)
	w.s[opM0] = 0xffffffff
}

func (d *dispatch) fetch(pc uint64) (*Inst, error) {
	if in, ok := d.code[pc]; ok {
		return in, nil
	}
	var buf [12]byte
	var w [3]uint32
	n := 0
	for _, sz := range []int{12, 8, 4} {
		if err := d.mem.Read(pc, buf[:sz]); err == nil {
			n = sz / 4
			break
		} else if sz == 4 {
			return nil, &Fault{Addr: pc, PC: pc, Inst: "<instruction fetch>", Err: err}
		}
	}
	for i := 0; i < n; i++ {
		w[i] = binary.LittleEndian.Uint32(buf[4*i:])
	}
	in, err := Decode(w[:n])
	if err != nil {
		return nil, &WaveError{PC: pc, Inst: fmt.Sprintf(".long %#010x", w[0]), Err: fmt.Errorf("%w: %v", ErrIllegal, err)}
	}
	in.exec = resolve(&in)
	p := &in
	d.code[pc] = p
	return p, nil
}

// resolve finds the interpreter routine of an instruction (nil: unimplemented).
func resolve(in *Inst) execFn {
	name := in.Info.Name
	switch in.Fmt {
	case FmtVOPC:
		return vopcExec(name)
	case FmtVOP3:
		if strings.HasPrefix(name, "v_cmp") {
			return vopcExec(name)
		}
	case FmtDS:
		return dsExec(name)
	case FmtFLAT, FmtGLOBAL, FmtSCRATCH, FmtMUBUF:
		return vmemExec(name)
	}
	return execTab[baseName(name)]
}

// run executes w until it ends, waits at a barrier, or fails.
func (d *dispatch) run(w *wave) error {
	limit := d.p.MaxWaveInstructions
	if limit == 0 {
		limit = 1 << 32
	}
	for !w.done && !w.bar {
		in, err := d.fetch(w.pc)
		if err != nil {
			return err
		}
		if w.steps >= limit {
			return &WaveError{PC: w.pc, Inst: in.String(), Err: ErrStepLimit}
		}
		w.steps++
		d.stats.WaveInstructions++
		if err := d.step(w, in); err != nil {
			return err
		}
	}
	return nil
}

func (d *dispatch) step(w *wave, in *Inst) (err error) {
	if in.exec == nil {
		return &WaveError{PC: w.pc, Inst: in.String(), Err: ErrUnimplemented}
	}
	pc := w.pc
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(waveErr)
			if !ok {
				e = waveErr{fmt.Errorf("%w: %v", ErrIllegal, r)}
			}
			err = &WaveError{PC: pc, Inst: in.String(), Err: e.err}
		}
	}()
	if err := in.exec(w, in); err != nil {
		var f *Fault
		var t *TrapError
		if errors.As(err, &f) || errors.As(err, &t) {
			return err
		}
		return &WaveError{PC: pc, Inst: in.String(), Err: err}
	}
	if !w.done {
		w.pc += uint64(in.Size)
	}
	return nil
}
