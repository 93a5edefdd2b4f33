package cp

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kfdemu/kfdemu/gpu/aql"
	"github.com/kfdemu/kfdemu/gpu/hqd"
)

// Memory is the queue's GPU virtual address space (kfd: an mmu Port of the owning process's
// GPUVM). Errors are faults. Load/Store are single-copy atomic accesses of naturally aligned words
// and Atomic a read-modify-write (it stores f(old) and returns old); the packet processor checks
// alignment before calling them. Memory must be safe for concurrent use (Status reads the write
// index from another goroutine).
type Memory interface {
	Read(va uint64, p []byte) error
	Write(va uint64, p []byte) error
	Load32(va uint64) (uint32, error)
	Load64(va uint64) (uint64, error)
	Store32(va uint64, v uint32) error
	Store64(va uint64, v uint64) error
	Atomic(va uint64, size int, f func(old uint64) uint64) (uint64, error)
}

// atomicAdder is the Memory that adds with one LOCK XADD (mmu.Port.AtomicAdd): a completion
// signal's decrement then takes no closure (no allocation on the packet path) and never retries.
type atomicAdder interface {
	AtomicAdd(va uint64, size int, delta uint64) (uint64, error)
}

// vecMemory is the Memory that moves several pieces, each within one page, in one access, in
// order (mmu.Port.ReadV, WriteV): where the pieces lie in client memory they are one system call,
// not one each.
type vecMemory interface {
	ReadV(vas []uint64, bufs [][]byte) (int, error)
	WriteV(vas []uint64, bufs [][]byte) (int, error)
}

// signalAdder is the Memory whose 64-bit add also reads the bytes after the word in the same
// access (mmu.Port.AtomicAddTail): a completion signal's decrement and its event_mailbox_ptr and
// event_id are then one read and one write where the signal lies in client memory (each access a
// system call there), not three or four.
type signalAdder interface {
	AtomicAddTail(va uint64, delta uint64, tail []byte) (uint64, error)
}

// releaseAdder is the vecMemory that writes pieces and then decrements a signal (as signalAdder)
// in one write where all lie in client memory (mmu.Port.AtomicAddTailAfter): a packet's release
// (slot header, read index), its timestamps and its completion signal's decrement are then one
// read and one write there, not four or five accesses.
type releaseAdder interface {
	AtomicAddTailAfter(vas []uint64, bufs [][]byte, va, delta uint64, tail []byte) (old uint64, n int, err error)
}

// Host is what the packet processor reports to. All methods are called from the queue's goroutine.
type Host interface {
	// RaiseEvent delivers the interrupt of a completion signal whose amd_signal_t has an event
	// mailbox: eventID is amd_signal_t.event_id, already stored in the mailbox.
	RaiseEvent(q *Queue, eventID uint64)
	// Dispatch runs a validated kernel dispatch to completion: it returns only when every work-item
	// has finished and its stores are visible. pkt is a copy owned by the queue, valid only during
	// the call. A non-nil error puts the queue in the error state (the kfd layer decides the event).
	// A long-running dispatch should watch q.Stopping() and return early when it is closed.
	Dispatch(q *Queue, pkt *aql.KernelDispatchPacket) error
	// QueueError reports the queue's first and only error; the queue has stopped launching. If it
	// returns true the CP stores the error's queue-inactive code (aql.QueueInactiveCode) in the
	// inactive signal after it; the host only raises what the driver raises (memory exceptions).
	// It returns false when the error never reaches the CP on a GPU: a GPUVM fault is the
	// memory controller's interrupt, and amdkfd answers it by evicting the process's queues
	// (kfd_set_dbg_ev_from_interrupt: kfd_dqm_evict_pasid, kfd_signal_vm_fault_event), so the
	// runtime learns of it from the memory exception event alone.
	QueueError(q *Queue, err error) (storeCode bool)
}

// Config describes one hardware queue (kfd CREATE_QUEUE: ring_base_address, ring_size,
// read_pointer_address, write_pointer_address; the doorbell).
type Config struct {
	RingBase     uint64 // VA of the ring, 64-byte aligned (PSA-2.8-Q15)
	RingSize     uint32 // in packets, a power of two (PSA-2.8-Q14)
	ReadIndexVA  uint64 // 8-byte aligned; ROCr: &amd_queue_t.read_dispatch_id; written by the CP
	WriteIndexVA uint64 // 8-byte aligned; ROCr: &amd_queue_t.write_dispatch_id; read by the CP
	// Doorbell, optional, is the doorbell's value: reported by Status, and a value stored after New
	// announces the packets up to it (step).
	Doorbell func() uint64
	Memory   Memory
	Host     Host
	Group    *Group        // optional: queues whose barriers wake on each other's completions
	MaxPoll  time.Duration // optional: barrier re-check ceiling, clamped to [20 µs, 1 h] (default 1 ms)
	// Clock, if not nil, is the GPU timestamp counter (the clock GET_CLOCK_COUNTERS reports as
	// gpu_clock_counter): with profiling on (amd_queue_t.queue_properties ENABLE_PROFILING) the CP
	// writes each completion signal's start_ts and end_ts from it.
	Clock func() uint64
	Tag   any // the owner's data (kfd's queue), returned by Queue.Tag
	// ClientMemory says the ring lies in memory the daemon reaches by system calls (kfd: a
	// userptr BO or SVM memory, where ROCr puts its rings): the CP then groups its accesses of a
	// packet into vectored ones when Memory has them (vecMemory). On memory the daemon maps, two
	// word stores are cheaper than a vectored access of two pieces (a barrier round trip about
	// 20-30 ns longer with them: cmd/kfdemu BenchmarkBarrierRoundTrip, three alternating runs).
	ClientMemory bool
}

// Sentinel errors. Queue errors wrap one of them in a *PacketError (and faults in a *FaultError).
// Each queue error also has a class of gpu/aql (errors.Is), which picks the code the CP stores in
// the queue-inactive signal (aql.QueueInactiveCode): malformed and unsupported packets are
// ErrInvalidFormat (ErrVendorFormat for a vendor-specific packet), invalid dispatches
// ErrInvalidDim or ErrInvalidCode, faults ErrMemoryViolation, and a failed dispatch the class of
// the host's error, else ErrIllegalInstruction.
var (
	ErrConfig          = errors.New("cp: invalid queue configuration")
	ErrMalformed       = aql.NewError("cp: malformed AQL packet", aql.ErrInvalidFormat)
	ErrUnsupported     = aql.NewError("cp: AQL packet not supported by this queue", aql.ErrInvalidFormat)
	ErrInvalidDispatch = errors.New("cp: invalid kernel dispatch packet")
	ErrDispatchFailed  = aql.NewError("cp: kernel dispatch failed", aql.ErrIllegalInstruction)
	ErrFault           = errors.New("cp: memory fault")
)

// PacketError is a queue error attributed to one packet.
type PacketError struct {
	ID     uint64 // packet ID (the read index when it failed)
	Header uint16
	Err    error
}

func (e *PacketError) Error() string {
	return fmt.Sprintf("packet %d (header %#04x): %v", e.ID, e.Header, e.Err)
}

func (e *PacketError) Unwrap() error { return e.Err }

// Is makes a malformed or unsupported vendor-specific packet aql.ErrVendorFormat.
func (e *PacketError) Is(target error) bool {
	return target == aql.ErrVendorFormat && aql.PacketType(e.Header) == aql.PacketTypeVendorSpecific &&
		(errors.Is(e.Err, ErrMalformed) || errors.Is(e.Err, ErrUnsupported))
}

// FaultError is a failed access to queue memory; errors.Is(err, ErrFault) holds.
type FaultError struct {
	VA  uint64
	Op  string // what the CP was accessing: "ring", "read index", "signal", ...
	Err error  // the Memory error, or nil for a misaligned or short view
}

func (e *FaultError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("cp: memory fault at %#x (%s): misaligned or short view", e.VA, e.Op)
	}
	return fmt.Sprintf("cp: memory fault at %#x (%s): %v", e.VA, e.Op, e.Err)
}

func (e *FaultError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrFault) and errors.Is(err, aql.ErrMemoryViolation) true.
func (e *FaultError) Is(target error) bool {
	return target == ErrFault || target == aql.ErrMemoryViolation
}

// Status is a snapshot for debugfs.
type Status struct {
	State        hqd.State
	ReadIndex    uint64 // packets released by the CP (its read pointer)
	WriteIndex   uint64 // write index as the packet processor last loaded it from WriteIndexVA
	Doorbell     uint64 // Config.Doorbell(), 0 without one
	RingBase     uint64
	RingSize     uint32
	Packets      uint64 // packets processed: the read index passed them (counted before their completion signal)
	Scans        uint64 // ring scans finished (a kick starts one; it ends when the ring is empty or blocked by an INVALID slot)
	ScratchWaits uint64 // dispatches that took the queue offline for scratch (insufficient scratch reports)
	Err          error  // the queue error, in StateError
}

// pageSize is the page a vectored access's piece must stay within (vecMemory).
const pageSize = 4096

// maxRingSize is far above any driver limit; it keeps size*64 within 32 bits of offset.
const maxRingSize = 1 << 26

// Queue is one hardware queue's packet processor.
type Queue struct {
	hqd.Runner // doorbell, run state, stop and the error state
	cfg        Config
	adder      atomicAdder  // cfg.Memory, when it is one
	sigAdder   signalAdder  // cfg.Memory, when it is one
	vec        vecMemory    // cfg.Memory, when it is one and the ring is client memory
	relAdder   releaseAdder // cfg.Memory, when it is one and the ring is client memory
	// Pieces of a vectored access (queue goroutine): in the Queue, as locals would escape
	// through the interface call.
	vecVAs     [3]uint64
	vecBufs    [3][]byte
	relBuf     [12]byte                                                                      // release: the slot's header word, then the read index
	sigTail    [aql.SignalEventIDOffset + 4 - aql.SignalMailboxOffset]byte                   // complete's mailbox and event id (queue goroutine)
	tsBuf      [16]byte                                                                      // timestamps' start_ts and end_ts (queue goroutine)
	scratchBuf [aql.AMDQueuePropertiesOffset + 4 - aql.AMDQueueComputeTmpringSizeOffset]byte // loadScratch's fields (queue goroutine)
	// amdQueue is the VA of the ring's amd_queue_t (0: none): scratch, properties, inactive signal.
	amdQueue uint64

	rd      atomic.Uint64 // read index; written only by the queue goroutine
	dbStart uint64        // the doorbell's value when the queue was made: not yet rung (Config.Doorbell)
	lazy    bool          // the last packet was announced: the next look defers the write index (recheck)
	wrSeen  atomic.Uint64 // write index as the queue goroutine last loaded it (Status)
	packets atomic.Uint64
	// scratchWaits counts "insufficient scratch" reports (the queue waited for ROCr's handler).
	scratchWaits atomic.Uint64

	// Owned by the queue goroutine.
	pkt     [aql.PacketSize]byte
	kd      aql.KernelDispatchPacket
	curID   uint64
	scratch Scratch
}

// New validates cfg and returns a stopped queue whose read index is the value at cfg.ReadIndexVA
// (0 for a fresh ROCr queue). Call Start to begin processing.
func New(cfg Config) (*Queue, error) {
	switch {
	case cfg.Memory == nil || cfg.Host == nil:
		return nil, fmt.Errorf("%w: Memory and Host are required", ErrConfig)
	case cfg.RingSize == 0 || cfg.RingSize&(cfg.RingSize-1) != 0 || cfg.RingSize > maxRingSize:
		return nil, fmt.Errorf("%w: ring size %d is not a power of two in [1, %d]", ErrConfig, cfg.RingSize, maxRingSize)
	case cfg.RingBase%aql.PacketSize != 0:
		return nil, fmt.Errorf("%w: ring base %#x not 64-byte aligned", ErrConfig, cfg.RingBase)
	case cfg.RingBase+uint64(cfg.RingSize)*aql.PacketSize < cfg.RingBase:
		return nil, fmt.Errorf("%w: ring wraps the address space", ErrConfig)
	case cfg.ReadIndexVA%8 != 0 || cfg.WriteIndexVA%8 != 0:
		return nil, fmt.Errorf("%w: read/write index addresses must be 8-byte aligned", ErrConfig)
	case cfg.MaxPoll < 0:
		return nil, fmt.Errorf("%w: negative MaxPoll", ErrConfig)
	}
	q := &Queue{cfg: cfg, amdQueue: amdQueueOf(cfg.ReadIndexVA, cfg.WriteIndexVA)}
	q.adder, _ = cfg.Memory.(atomicAdder)
	q.sigAdder, _ = cfg.Memory.(signalAdder)
	if cfg.ClientMemory {
		q.vec, _ = cfg.Memory.(vecMemory)
		q.relAdder, _ = cfg.Memory.(releaseAdder)
	}
	eng := hqd.Engine{Step: q.step, Recheck: q.recheck, Fail: q.report, MaxPoll: cfg.MaxPoll}
	if g := cfg.Group; g != nil {
		eng.Starting = func() { g.add(q) }
		eng.Stopped = func() { g.remove(q) }
		eng.Blocking = func(b bool) {
			if b {
				g.blocked.Add(1)
			} else {
				g.blocked.Add(-1)
			}
		}
	}
	q.Init(eng)
	rd, err := q.load64(cfg.ReadIndexVA, "read index")
	if err != nil {
		return nil, err
	}
	q.rd.Store(rd)
	if cfg.Doorbell != nil {
		q.dbStart = cfg.Doorbell()
	}
	return q, nil
}

// Tag returns Config.Tag.
func (q *Queue) Tag() any { return q.cfg.Tag }

// Config returns the queue's configuration.
func (q *Queue) Config() Config { return q.cfg }

// CurrentPacket returns the packet ID and ring address of the packet being executed; valid during
// Host.Dispatch (the slot is not released before the dispatch completes, so it can serve as the
// kernel's dispatch_ptr).
func (q *Queue) CurrentPacket() (id, va uint64) { return q.curID, q.slotVA(q.curID) }

// Status returns a snapshot for debugfs.
func (q *Queue) Status() Status {
	s := Status{State: q.State(), ReadIndex: q.rd.Load(), RingBase: q.cfg.RingBase, RingSize: q.cfg.RingSize,
		Packets: q.packets.Load(), Scans: q.Scans(), ScratchWaits: q.scratchWaits.Load(), Err: q.Err()}
	// Memory is the queue goroutine's alone (an engine's TLB port): Status reports what the
	// processor last saw instead of loading the write index itself.
	s.WriteIndex = q.wrSeen.Load()
	if q.cfg.Doorbell != nil {
		s.Doorbell = q.cfg.Doorbell()
	}
	return s
}

func (q *Queue) slotVA(id uint64) uint64 {
	return q.cfg.RingBase + id&uint64(q.cfg.RingSize-1)*aql.PacketSize
}

// Group lets the queues of one device (or process) wake each other: after a queue decrements a
// completion signal it calls Wake, which kicks every member blocked on a barrier. The zero value is
// ready to use.
type Group struct {
	mu      sync.Mutex
	members atomic.Pointer[[]*Queue] // copy-on-write
	blocked atomic.Int32             // members currently in a barrier wait
}

func (g *Group) add(q *Queue) {
	g.mu.Lock()
	defer g.mu.Unlock()
	var next []*Queue
	if cur := g.members.Load(); cur != nil {
		next = append(next, *cur...)
	}
	next = append(next, q)
	g.members.Store(&next)
}

func (g *Group) remove(q *Queue) {
	g.mu.Lock()
	defer g.mu.Unlock()
	cur := g.members.Load()
	if cur == nil {
		return
	}
	next := make([]*Queue, 0, len(*cur))
	for _, m := range *cur {
		if m != q {
			next = append(next, m)
		}
	}
	g.members.Store(&next)
}

// Wake kicks every member blocked on a barrier (cheap when none is). kfd may also call it when it
// knows a signal changed (for example on SET_EVENT).
func (g *Group) Wake() {
	if g.blocked.Load() == 0 {
		return
	}
	if cur := g.members.Load(); cur != nil {
		for _, q := range *cur {
			if q.State() == hqd.StateBlocked {
				q.Kick()
			}
		}
	}
}
