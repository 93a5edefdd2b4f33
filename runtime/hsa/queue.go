package hsa

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kfdemu/kfdemu/gpu/aql"
	"github.com/kfdemu/kfdemu/internal/relstore"
	"github.com/kfdemu/kfdemu/internal/spin"
	"github.com/kfdemu/kfdemu/runtime/kmt"
)

// QueueError is what a queue's error callback receives when the packet processor takes the queue
// offline: the code it stored in amd_queue_t.queue_inactive_signal (SQ error bits, as ROCr's
// AqlQueue::ExceptionHandler decodes them).
type QueueError struct {
	Code uint64
}

func (e *QueueError) Error() string {
	names := []struct {
		bit  uint64
		name string
	}{{2, "invalid dimension"}, {4, "invalid group"}, {8, "invalid code object"}, {32, "invalid packet format"},
		{64, "group too large"}, {128, "out of VGPRs"}, {256, "invalid vendor packet"},
		{0x20000000, "memory violation"}, {0x40000000, "illegal instruction"}, {0x80000000, "debug trap"}}
	for _, n := range names {
		if e.Code&n.bit != 0 {
			return fmt.Sprintf("hsa: queue error %#x (%s)", e.Code, n.name)
		}
	}
	return fmt.Sprintf("hsa: queue error %#x", e.Code)
}

func (e *QueueError) Unwrap() error { return ErrQueueInactive }

// Queue is a user-mode AQL queue of a GPU agent (hsa_queue_t with ROCr's amd_queue_t).
type Queue struct {
	Agent *Agent
	Size  uint32 // packets
	ID    uint32

	r          *Runtime
	q          *kmt.Queue
	ring, amdq *kmt.Memory
	ringB      []byte
	wr, rd     *atomic.Uint64 // amd_queue_t write/read dispatch ids
	inactive   *Signal
	destroyed  atomic.Bool
	done       chan struct{}
	errOnce    sync.Once
	err        atomic.Pointer[QueueError]
	submitWait time.Duration
}

// CreateQueue creates an AQL queue of size packets (a power of two in [QueueMinSize,
// QueueMaxSize]) on a GPU agent (hsa_queue_create). onError, if not nil, is called once from
// another goroutine when the packet processor takes the queue offline.
func (a *Agent) CreateQueue(size uint32, onError func(q *Queue, err error)) (*Queue, error) {
	r := a.r
	if err := r.check(); err != nil {
		return nil, err
	}
	if a.Kind != GPU || size < QueueMinSize || size > QueueMaxSize || size&(size-1) != 0 {
		return nil, fmt.Errorf("%w: queue of %d packets on a %s agent", ErrInvalidArgument, size, a.Kind)
	}
	q := &Queue{Agent: a, Size: size, r: r, done: make(chan struct{}), submitWait: 5 * time.Second}
	var err error
	fail := func(err error) (*Queue, error) {
		q.free()
		return nil, wrap(err)
	}
	if q.ring, err = r.d.AllocGTT(a.gpu, uint64(size)*aql.PacketSize, kmt.Coherent); err != nil {
		return fail(err)
	}
	if q.amdq, err = r.d.AllocGTT(a.gpu, 4096, kmt.Coherent); err != nil {
		return fail(err)
	}
	for _, m := range []*kmt.Memory{q.ring, q.amdq} {
		if err := m.Map(); err != nil {
			return fail(err)
		}
	}
	q.ringB = q.ring.Bytes()
	kmt.InvalidateRing(q.ringB)
	ab := q.amdq.Bytes()
	q.wr, q.rd = kmt.Word64(ab, aql.AMDQueueWriteDispatchIDOffset), kmt.Word64(ab, aql.AMDQueueReadDispatchIDOffset)
	if q.inactive, err = r.NewSignal(0, true); err != nil {
		return fail(err)
	}
	kmt.Word64(ab, aql.AMDQueueInactiveSignalOffset).Store(q.inactive.VA)
	if q.q, err = r.d.CreateQueue(kmt.QueueSpec{GPU: a.gpu, Type: kmt.QueueComputeAQL, RingVA: q.ring.VA,
		RingSize: size * aql.PacketSize, ReadPtrVA: q.amdq.VA + aql.AMDQueueReadDispatchIDOffset,
		WritePtrVA: q.amdq.VA + aql.AMDQueueWriteDispatchIDOffset}); err != nil {
		return fail(err)
	}
	q.ID = q.q.ID
	go q.watch(onError)
	return q, nil
}

// watch waits on the queue-inactive signal (AqlQueue::DynamicQueueEventsHandler).
func (q *Queue) watch(onError func(*Queue, error)) {
	defer close(q.done)
	v, _, err := q.inactive.Wait(Ne, 0, -1)
	if err != nil || v < 0 || q.destroyed.Load() {
		return // destroyed (the runtime stores -1), or the device went away
	}
	e := &QueueError{Code: uint64(v)}
	q.err.Store(e)
	if onError != nil {
		onError(q, e)
	}
}

// Err is the error that took the queue offline, or nil.
func (q *Queue) Err() error {
	if e := q.err.Load(); e != nil {
		return e
	}
	return nil
}

func (q *Queue) free() {
	if q.q != nil {
		q.q.Destroy()
	}
	if q.inactive != nil {
		q.inactive.Destroy()
	}
	for _, m := range []*kmt.Memory{q.ring, q.amdq} {
		if m != nil {
			m.Free()
		}
	}
}

// Destroy destroys the queue (hsa_queue_destroy); packets not yet processed are abandoned.
func (q *Queue) Destroy() error {
	if q.destroyed.Swap(true) {
		return fmt.Errorf("%w: queue destroyed twice", ErrInvalidArgument)
	}
	err := q.q.Destroy()
	q.inactive.Store(-1, Release) // ends watch
	<-q.done
	q.inactive.Destroy()
	q.ring.Free()
	q.amdq.Free()
	return wrap(err)
}

// ReadIndex and WriteIndex are the queue's dispatch ids (hsa_queue_load_read/write_index).
func (q *Queue) ReadIndex() uint64  { return q.rd.Load() }
func (q *Queue) WriteIndex() uint64 { return q.wr.Load() }

// reserve takes the next write index (hsa_queue_add_write_index_relaxed: any number of goroutines
// may submit) and waits until its slot is free, i.e. the packet processor has released the packet
// one ring length before it. ErrQueueFull if that does not happen within the submit timeout.
func (q *Queue) reserve() (uint64, error) {
	if q.destroyed.Load() {
		return 0, fmt.Errorf("%w: queue destroyed", ErrInvalidArgument)
	}
	if err := q.Err(); err != nil {
		return 0, err
	}
	idx := q.wr.Add(1) - 1
	start := time.Now()
	for idx-q.rd.Load() >= uint64(q.Size) {
		if err := q.Err(); err != nil {
			return 0, err
		}
		if time.Since(start) > q.submitWait {
			return 0, fmt.Errorf("%w: slot %d still in use after %v (read index %d)", ErrQueueFull, idx, q.submitWait, q.rd.Load())
		}
		spin.Yield()
	}
	return idx, nil
}

// publish writes a packet body into slot idx, then its header and setup with one 32-bit release
// store (the slot becomes valid), then rings the doorbell with the index.
func (q *Queue) publish(idx uint64, pkt *[aql.PacketSize]byte, header uint16) {
	off := int(idx%uint64(q.Size)) * aql.PacketSize
	copy(q.ringB[off+4:off+aql.PacketSize], pkt[4:])
	setup := uint32(pkt[2]) | uint32(pkt[3])<<8
	relstore.Store32(kmt.Word32(q.ringB, off), uint32(header)|setup<<16)
	q.q.RingDoorbell(idx)
}

// Dispatch describes a kernel dispatch packet.
type Dispatch struct {
	Kernel     *Kernel
	Grid       [3]uint32 // work-items; unused dimensions 0 or 1
	Workgroup  [3]uint16
	Kernarg    uint64 // address of the kernel arguments (a kernarg pool buffer)
	Completion *Signal
	Barrier    bool // the packet waits for the previous packets to complete
}

// SubmitDispatch submits a kernel dispatch packet and returns its packet index.
func (q *Queue) SubmitDispatch(d Dispatch) (uint64, error) {
	if d.Kernel == nil {
		return 0, fmt.Errorf("%w: no kernel", ErrInvalidArgument)
	}
	dims := uint16(1)
	grid, wg := d.Grid, d.Workgroup
	for i := 0; i < 3; i++ {
		if grid[i] == 0 {
			grid[i] = 1
		}
		if wg[i] == 0 {
			wg[i] = 1
		}
		if grid[i] > 1 {
			dims = uint16(i + 1)
		}
	}
	p := aql.KernelDispatchPacket{Setup: dims, WorkgroupSizeX: wg[0], WorkgroupSizeY: wg[1], WorkgroupSizeZ: wg[2],
		GridSizeX: grid[0], GridSizeY: grid[1], GridSizeZ: grid[2], PrivateSegmentSize: d.Kernel.PrivateSegmentSize,
		GroupSegmentSize: d.Kernel.GroupSegmentSize, KernelObject: d.Kernel.Object, KernargAddress: d.Kernarg}
	if d.Completion != nil {
		if !d.Completion.ok() {
			return 0, ErrInvalidSignal
		}
		p.CompletionSignal = d.Completion.VA
	}
	var pkt [aql.PacketSize]byte
	p.Encode(pkt[:])
	idx, err := q.reserve()
	if err != nil {
		return 0, err
	}
	q.publish(idx, &pkt, aql.MakeHeader(aql.PacketTypeKernelDispatch, d.Barrier, aql.FenceScopeSystem, aql.FenceScopeSystem))
	return idx, nil
}

// SubmitBarrierAnd submits a barrier-AND packet: it completes when every dependency is 0 (up to
// five), then decrements completion (may be nil).
func (q *Queue) SubmitBarrierAnd(deps []*Signal, completion *Signal) (uint64, error) {
	return q.barrier(aql.PacketTypeBarrierAnd, deps, completion)
}

// SubmitBarrierOr submits a barrier-OR packet: it completes when any dependency is 0.
func (q *Queue) SubmitBarrierOr(deps []*Signal, completion *Signal) (uint64, error) {
	return q.barrier(aql.PacketTypeBarrierOr, deps, completion)
}

func (q *Queue) barrier(typ uint8, deps []*Signal, completion *Signal) (uint64, error) {
	if len(deps) > 5 {
		return 0, fmt.Errorf("%w: %d dependencies (at most 5)", ErrInvalidArgument, len(deps))
	}
	var b aql.BarrierPacket
	for i, s := range deps {
		if s == nil || !s.ok() {
			return 0, ErrInvalidSignal
		}
		b.DepSignal[i] = s.VA
	}
	if completion != nil {
		if !completion.ok() {
			return 0, ErrInvalidSignal
		}
		b.CompletionSignal = completion.VA
	}
	var pkt [aql.PacketSize]byte
	b.Encode(pkt[:])
	idx, err := q.reserve()
	if err != nil {
		return 0, err
	}
	q.publish(idx, &pkt, aql.MakeHeader(typ, true, aql.FenceScopeSystem, aql.FenceScopeSystem))
	return idx, nil
}

// SubmitRaw publishes a packet as given (the first 4 bytes are its header and setup), for tools
// and tests that need packets the builders do not make.
func (q *Queue) SubmitRaw(pkt [aql.PacketSize]byte) (uint64, error) {
	idx, err := q.reserve()
	if err != nil {
		return 0, err
	}
	q.publish(idx, &pkt, uint16(pkt[0])|uint16(pkt[1])<<8)
	return idx, nil
}
