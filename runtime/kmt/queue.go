package kmt

import (
	"encoding/binary"
	"fmt"
	"sync/atomic"

	"github.com/kfdemu/kfdemu/gpu/aql"
	"github.com/kfdemu/kfdemu/internal/relstore"
	"github.com/kfdemu/kfdemu/kfd/abi"
	"golang.org/x/sys/unix"
)

// QueueType is the kind of hardware queue (KFD_IOC_QUEUE_TYPE_*).
type QueueType uint32

const (
	QueueCompute    QueueType = abi.KFD_IOC_QUEUE_TYPE_COMPUTE // PM4
	QueueSDMA       QueueType = abi.KFD_IOC_QUEUE_TYPE_SDMA
	QueueComputeAQL QueueType = abi.KFD_IOC_QUEUE_TYPE_COMPUTE_AQL
	QueueSDMAXGMI   QueueType = abi.KFD_IOC_QUEUE_TYPE_SDMA_XGMI
)

func (t QueueType) String() string {
	switch t {
	case QueueCompute:
		return "compute(pm4)"
	case QueueSDMA:
		return "sdma"
	case QueueComputeAQL:
		return "compute(aql)"
	case QueueSDMAXGMI:
		return "sdma-xgmi"
	}
	return fmt.Sprintf("queue-type-%d", uint32(t))
}

// QueueSpec describes a queue to create (hsaKmtCreateQueue's arguments).
type QueueSpec struct {
	GPU        *GPU
	Type       QueueType
	Percentage uint32 // 0 means 100
	// Priority is the thunk priority -3..3 (HSA_QUEUE_PRIORITY_*), mapped to KFD 0..15 with
	// queues.c's priority_map.
	Priority int
	RingVA   uint64 // GPU address of the ring; must be GPU-mapped
	RingSize uint32 // bytes, a power of two >= 1024
	// ReadPtrVA / WritePtrVA are the 64-bit read and write indices. AQL queues pass
	// &amd_queue_t.read_dispatch_id / write_dispatch_id; for other types 0 lets the thunk place them
	// in GPU-accessible memory it owns (queues.c: &q->rptr, &q->wptr). amdkfd 6.12+
	// (kfd_queue_acquire_buffers) wants each in the first page of a one-page GPU mapping and the
	// ring to be a mapping of exactly RingSize bytes.
	ReadPtrVA, WritePtrVA uint64
	// ErrorEvent and ErrorReasonVA go into the context save area header (ErrorEventId and
	// ErrorReason of HsaUserContextSaveAreaHeader): the event signalled and the 64-bit word written
	// when the queue fails. Optional.
	ErrorEvent    *Event
	ErrorReasonVA uint64
}

// Queue is a created hardware queue (HsaQueueResource).
type Queue struct {
	d          *Device
	GPU        *GPU
	Type       QueueType
	ID         uint32 // driver queue id
	DoorbellVA uint64 // CPU (and GPU) address of the queue's doorbell
	ReadPtrVA  uint64
	WritePtrVA uint64
	RingVA     uint64
	RingSize   uint32

	EOP, CWSR  *Memory // EOP buffer (VRAM) and context save area, nil when not needed
	CWSRLayout CWSR
	rw         *Memory // rptr/wptr of non-AQL queues
	doorbell   *atomic.Uint64
	destroyed  atomic.Bool
}

// priorityMap is queues.c's priority_map: thunk priority -3..3 to KFD priority 0..15.
var priorityMap = [7]uint32{0, 3, 5, 7, 9, 11, 15}

// doorbellPageSize is DOORBELLS_PAGE_SIZE(DOORBELL_SIZE(gfxv)): 1024 doorbells of 8 bytes on GFX9+.
func doorbellPageSize(n *Node) uint64 {
	if ma, _, _ := n.GfxVersion(); ma >= 9 {
		return 1024 * 8
	}
	return 1024 * 4
}

// eopBufferSize is queues.c's EOP_BUFFER_SIZE: 4 KiB on GFX8 and later.
func eopBufferSize(n *Node) uint32 {
	if ma, _, _ := n.GfxVersion(); ma >= 8 {
		return 4096
	}
	return 0
}

// vgprSizePerCU follows kfd_queue.c / queues.c: 512 KiB of VGPR+AGPR state on gfx908, gfx90a
// and gfx94x, 384 KiB on gfx1100/1101/1200/1201, otherwise 256 KiB.
func vgprSizePerCU(gfxv uint32) uint32 {
	switch {
	case gfxv/100*100 == 90400 || gfxv == 90010 || gfxv == 90008 || gfxv == 90500:
		return 0x80000
	case gfxv == 110000 || gfxv == 110001 || gfxv == 120000 || gfxv == 120001:
		return 0x60000
	}
	return 0x40000
}

const (
	sgprSizePerCU        = 0x4000
	ldsSizePerCU         = 0x10000
	hwregSizePerCU       = 0x1000
	debuggerBytesPerWave = 32
	debuggerBytesAlign   = 64
	ctxSaveHeaderSize    = 40 // sizeof(HsaUserContextSaveAreaHeader)
)

// CWSR is the context save/restore layout of a compute queue on a node.
type CWSR struct {
	CtlStackSize uint32 // control stack, page aligned (with the 40-byte header)
	CtxSize      uint32 // control stack + work-group state: ctx_save_restore_size of CREATE_QUEUE
	DebugSize    uint32 // debugger memory after the save area
	AllocSize    uint64 // bytes allocated: (CtxSize + DebugSize) * XCCs, page aligned
}

// CWSRSizes computes the context save/restore area of a compute queue on node n as libhsakmt's
// update_ctx_save_restore_size (queues.c) and amdkfd's kfd_queue_ctx_save_restore_size
// (kfd_queue.c, which CREATE_QUEUE checks the sizes against) do; ok is false when the node needs
// none.
func CWSRSizes(n *Node) (c CWSR, ok bool) {
	gfxv := uint32(n.Props.Get("gfx_target_version"))
	cores, spc := n.Props.Get("simd_count"), n.Props.Get("simd_per_cu")
	if gfxv < 80001 || cores == 0 || spc == 0 {
		return CWSR{}, false
	}
	xcc := uint32(max(n.Props.Get("num_xcc"), 1))
	cuNum := uint32(cores/spc) / xcc
	var waveNum uint32
	if gfxv < 100100 {
		waveNum = cuNum * 40
		arr := max(n.Props.Get("simd_arrays_per_engine"), 1)
		waveNum = min(waveNum, uint32(n.Props.Get("array_count")/arr*512))
	} else {
		waveNum = cuNum * 32
	}
	bytesPerWave := uint32(8)
	if gfxv >= 100100 {
		bytesPerWave = 12
	}
	lds := uint32(ldsSizePerCU)
	if gfxv == 90500 {
		lds = uint32(n.Props.Get("lds_size_in_kb") << 10)
	}
	wg := uint64(cuNum) * uint64(vgprSizePerCU(gfxv)+sgprSizePerCU+lds+hwregSizePerCU)
	c.CtlStackSize = uint32(roundPage(uint64(ctxSaveHeaderSize + waveNum*bytesPerWave + 8)))
	if gfxv >= 100100 && gfxv < 110000 {
		c.CtlStackSize = min(c.CtlStackSize, 0x7000) // "HW design limits control stack size to 0x7000"
	}
	c.CtxSize = c.CtlStackSize + uint32(roundPage(wg))
	c.DebugSize = (waveNum*debuggerBytesPerWave + debuggerBytesAlign - 1) &^ (debuggerBytesAlign - 1)
	c.AllocSize = roundPage(uint64(c.CtxSize+c.DebugSize) * uint64(xcc))
	return c, true
}

// CreateQueue creates a queue (hsaKmtCreateQueue): for compute queues it allocates the EOP buffer
// in VRAM and the context save area in system memory, sized from the node's properties; then
// CREATE_QUEUE, and the process's doorbell page of the GPU is mapped on first use.
func (d *Device) CreateQueue(spec QueueSpec) (*Queue, error) {
	if err := d.check(); err != nil {
		return nil, err
	}
	g := spec.GPU
	if g == nil || d.byID[g.ID()] != g {
		return nil, fmt.Errorf("%w: GPU not opened by this device", ErrInvalidArgument)
	}
	if spec.Priority < -3 || spec.Priority > 3 {
		return nil, fmt.Errorf("%w: priority %d outside -3..3", ErrInvalidArgument, spec.Priority)
	}
	switch spec.Type {
	case QueueCompute, QueueSDMA, QueueComputeAQL, QueueSDMAXGMI:
	default:
		return nil, fmt.Errorf("%w: queue type %d", ErrInvalidArgument, spec.Type)
	}
	q := &Queue{d: d, GPU: g, Type: spec.Type, RingVA: spec.RingVA, RingSize: spec.RingSize,
		ReadPtrVA: spec.ReadPtrVA, WritePtrVA: spec.WritePtrVA}
	ok := false
	defer func() {
		if !ok {
			q.freeBuffers()
		}
	}()
	if spec.Type != QueueComputeAQL && (q.ReadPtrVA == 0 || q.WritePtrVA == 0) {
		rw, err := d.AllocGTT(g, pageSize, Coherent|Uncached)
		if err != nil {
			return nil, err
		}
		q.rw = rw
		if err := rw.Map(); err != nil {
			return nil, err
		}
		q.ReadPtrVA, q.WritePtrVA = rw.VA, rw.VA+8
	}
	pct := spec.Percentage
	if pct == 0 {
		pct = 100
	}
	a := abi.CreateQueueArgs{GPUID: g.ID(), QueueType: uint32(spec.Type), RingBaseAddress: spec.RingVA,
		RingSize: spec.RingSize, ReadPointerAddress: q.ReadPtrVA, WritePointerAddress: q.WritePtrVA,
		QueuePercentage: pct, QueuePriority: priorityMap[spec.Priority+3]}
	// handle_concrete_asic: SDMA queues need neither EOP buffer nor context save area.
	if spec.Type == QueueCompute || spec.Type == QueueComputeAQL {
		if n := eopBufferSize(g.Node); n > 0 {
			eop, err := d.AllocVRAM(g, uint64(n), Executable)
			if err != nil {
				return nil, err
			}
			q.EOP = eop
			if err := eop.Map(); err != nil {
				return nil, err
			}
			a.EOPBufferAddress, a.EOPBufferSize = eop.VA, uint64(n)
		}
		if c, need := CWSRSizes(g.Node); need {
			cw, err := d.RegisterUserptr(g, c.AllocSize, Executable)
			if err != nil {
				return nil, err
			}
			q.CWSR, q.CWSRLayout = cw, c
			if err := cw.Map(); err != nil {
				return nil, err
			}
			// HsaUserContextSaveAreaHeader at offset 0 (hsakmttypes.h): the debugger area follows
			// the save area; ErrorReason/ErrorEventId report queue errors.
			h := cw.Bytes()
			var evID uint32
			if spec.ErrorEvent != nil {
				evID = spec.ErrorEvent.ID
			}
			binary.LittleEndian.PutUint32(h[16:], c.CtxSize)   // DebugOffset
			binary.LittleEndian.PutUint32(h[20:], c.DebugSize) // DebugSize
			binary.LittleEndian.PutUint64(h[24:], spec.ErrorReasonVA)
			binary.LittleEndian.PutUint32(h[32:], evID)
			a.CtxSaveRestoreAddress, a.CtxSaveRestoreSize, a.CtlStackSize = cw.VA, c.CtxSize, c.CtlStackSize
		}
	}
	if err := ioctl(d.kfd, "CREATE_QUEUE", abi.AMDKFD_IOC_CREATE_QUEUE, &a); err != nil {
		return nil, err
	}
	q.ID = a.QueueID
	// SOC15: the doorbell's byte offset in the process's doorbell page is part of the returned
	// offset; the page is mapped at offset & ~(page-1).
	pg := doorbellPageSize(g.Node)
	var inPage uint64
	if ma, _, _ := g.Node.GfxVersion(); ma >= 9 {
		inPage = a.DoorbellOffset & (pg - 1)
	} else {
		inPage = uint64(a.QueueID) * 4
	}
	bell, err := d.mapDoorbells(g, a.DoorbellOffset&^(pg-1), pg)
	if err != nil {
		da := abi.DestroyQueueArgs{QueueID: q.ID}
		ioctl(d.kfd, "DESTROY_QUEUE", abi.AMDKFD_IOC_DESTROY_QUEUE, &da)
		return nil, err
	}
	q.DoorbellVA = bell.VA + inPage
	q.doorbell = Word64(bell.Bytes(), int(inPage&^7))
	d.mu.Lock()
	d.queues[q] = struct{}{}
	d.mu.Unlock()
	ok = true
	return q, nil
}

// mapDoorbells maps g's doorbell page once (queues.c map_doorbell): on a dGPU as a DOORBELL BO at a
// GPU VA that is also its CPU address (map_doorbell_dgpu: fmm_allocate_doorbell + GPU map),
// falling back to a plain mmap of /dev/kfd (map_doorbell_apu) when the driver refuses the BO.
func (d *Device) mapDoorbells(g *GPU, off, size uint64) (*Memory, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if g.doorbell != nil {
		return g.doorbell, nil
	}
	vaOff, err := d.va.alloc(size, size)
	if err != nil {
		return nil, err
	}
	m := &Memory{d: d, Kind: KindDoorbell, GPU: g, Size: size, area: d.aperture.sub(vaOff, size), vaOff: vaOff,
		mapped: map[uint32]bool{}, cpu: true, Flags: abi.KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL}
	m.VA = m.area.va()
	a := abi.AllocMemoryOfGPUArgs{VAAddr: m.VA, Size: size, GPUID: g.ID(), MmapOffset: off, Flags: abi.KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL |
		abi.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE | abi.KFD_IOC_ALLOC_MEM_FLAGS_NO_SUBSTITUTE | abi.KFD_IOC_ALLOC_MEM_FLAGS_COHERENT}
	if err := ioctl(d.kfd, "ALLOC_MEMORY_OF_GPU", abi.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &a); err == nil {
		m.Handle = a.Handle
		m.mu.Lock()
		err := m.mapLocked(true, []uint32{g.ID()})
		m.mu.Unlock()
		if err != nil {
			f := abi.FreeMemoryOfGPUArgs{Handle: a.Handle}
			ioctl(d.kfd, "FREE_MEMORY_OF_GPU", abi.AMDKFD_IOC_FREE_MEMORY_OF_GPU, &f)
			m.Handle = 0
		}
	}
	if err := m.area.mapFixed(d.kfd, int64(off), unix.PROT_READ|unix.PROT_WRITE, true); err != nil {
		if m.Handle != 0 {
			m.mu.Lock()
			m.mapLocked(false, m.mappedIDsLocked()) // FREE of a mapped BO is EBUSY
			m.mu.Unlock()
			f := abi.FreeMemoryOfGPUArgs{Handle: m.Handle}
			ioctl(d.kfd, "FREE_MEMORY_OF_GPU", abi.AMDKFD_IOC_FREE_MEMORY_OF_GPU, &f)
		}
		m.area.unmapToReserved()
		d.va.release(vaOff)
		return nil, fmt.Errorf("kmt: mmap of the doorbell page: %w", err)
	}
	g.doorbell = m
	d.mems[m] = struct{}{}
	return m, nil
}

// InvalidateRing gives every 64-byte slot of an AQL ring the packet type INVALID, which the runtime
// that owns the ring must do before the queue is created (PSA-2.8-Q17; ROCr's AqlQueue fills its
// ring so). A zeroed slot reads as a VENDOR_SPECIFIC packet, which the packet processor may take as
// soon as the write index passes it (Q22: the doorbell is no gate), before the header is stored.
func InvalidateRing(ring []byte) {
	for i := 0; i+aql.PacketSize <= len(ring); i += aql.PacketSize {
		Word32(ring, i).Store(uint32(aql.PacketTypeInvalid))
	}
}

// RingDoorbell writes v to the queue's doorbell: a 64-bit release store on GFX9+ (for AQL queues
// the packet index, for SDMA queues the byte write pointer), as ROCr's doorbell signal stores it:
// the packet written before it is visible first, and the store does not wait for the line.
func (q *Queue) RingDoorbell(v uint64) { relstore.Store64(q.doorbell, v) }

// Doorbell is the queue's doorbell word.
func (q *Queue) Doorbell() *atomic.Uint64 { return q.doorbell }

// Indices returns the read and write index words when the thunk owns them (non-AQL queues).
func (q *Queue) Indices() (rptr, wptr *atomic.Uint64, ok bool) {
	if q.rw == nil {
		return nil, nil, false
	}
	b := q.rw.Bytes()
	return Word64(b, 0), Word64(b, 8), true
}

// Destroy destroys the queue (hsaKmtDestroyQueue) and frees the thunk's buffers of it.
func (q *Queue) Destroy() error {
	if q.destroyed.Load() {
		return ErrQueueDestroyed
	}
	if err := q.d.check(); err != nil {
		return err
	}
	return q.destroy()
}

func (q *Queue) destroy() error {
	if q.destroyed.Swap(true) {
		return ErrQueueDestroyed
	}
	a := abi.DestroyQueueArgs{QueueID: q.ID}
	err := ioctl(q.d.kfd, "DESTROY_QUEUE", abi.AMDKFD_IOC_DESTROY_QUEUE, &a)
	q.d.mu.Lock()
	delete(q.d.queues, q)
	q.d.mu.Unlock()
	if err == nil || DeviceGone(err) {
		q.freeBuffers()
	}
	return err
}

func (q *Queue) freeBuffers() {
	for _, m := range []*Memory{q.EOP, q.CWSR, q.rw} {
		if m != nil {
			m.release()
		}
	}
}
