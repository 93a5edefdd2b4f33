package cp

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kfdemu/kfdemu/gpu/aql"
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
	// QueueError reports the queue's first and only error; the queue has stopped launching. The CP
	// stores the error's queue-inactive code (aql.QueueInactiveCode) in the inactive signal after
	// QueueError returns; the host only raises what the driver raises (memory exceptions).
	QueueError(q *Queue, err error)
}

// Config describes one hardware queue (kfd CREATE_QUEUE: ring_base_address, ring_size,
// read_pointer_address, write_pointer_address; the doorbell).
type Config struct {
	RingBase     uint64        // VA of the ring, 64-byte aligned (PSA-2.8-Q15)
	RingSize     uint32        // in packets, a power of two (PSA-2.8-Q14)
	ReadIndexVA  uint64        // 8-byte aligned; ROCr: &amd_queue_t.read_dispatch_id; written by the CP
	WriteIndexVA uint64        // 8-byte aligned; ROCr: &amd_queue_t.write_dispatch_id; read by the CP
	Doorbell     func() uint64 // optional: the doorbell's last value, reported by Status only
	Memory       Memory
	Host         Host
	Group        *Group        // optional: queues whose barriers wake on each other's completions
	MaxPoll      time.Duration // optional: barrier re-check ceiling, clamped to [20 µs, 1 h] (default 1 ms)
	// Clock, if not nil, is the GPU timestamp counter (the clock GET_CLOCK_COUNTERS reports as
	// gpu_clock_counter): with profiling on (amd_queue_t.queue_properties ENABLE_PROFILING) the CP
	// writes each completion signal's start_ts and end_ts from it.
	Clock func() uint64
	Tag   any // the owner's data (kfd's queue), returned by Queue.Tag
}

// State is a queue's processing state.
type State int32

// Queue states, as debugfs shows them.
const (
	StateStopped State = iota // not running (before Start, after Stop)
	StateIdle                 // waiting for a doorbell: empty, or an INVALID slot at the read index
	StateActive               // executing a packet (kernel dispatch)
	StateBlocked              // a barrier packet waits for its dependencies
	StateError                // stopped on an error; see Status.Err
)

func (s State) String() string {
	switch s {
	case StateStopped:
		return "stopped"
	case StateIdle:
		return "idle"
	case StateActive:
		return "active"
	case StateBlocked:
		return "blocked"
	case StateError:
		return "error"
	}
	return fmt.Sprintf("State(%d)", int32(s))
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
	ErrQueueError      = errors.New("cp: queue is in the error state")
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
	State        State
	ReadIndex    uint64 // packets released by the CP (its read pointer)
	WriteIndex   uint64 // write index as the packet processor last loaded it from WriteIndexVA
	Doorbell     uint64 // Config.Doorbell(), 0 without one
	RingBase     uint64
	RingSize     uint32
	Packets      uint64 // packets completed
	Scans        uint64 // ring scans finished (a kick starts one; it ends when the ring is empty or blocked by an INVALID slot)
	ScratchWaits uint64 // dispatches that took the queue offline for scratch (insufficient scratch reports)
	Err          error  // the queue error, in StateError
}

const (
	minPoll         = 20 * time.Microsecond
	defaultMaxPoll  = time.Millisecond
	longBlock       = time.Second // after this long blocked, a barrier polls less often
	longBlockFactor = 50          // ... with a ceiling of MaxPoll*50 (50 ms by default)
	maxRingSize     = 1 << 26     // far above any driver limit; keeps size*64 within 32 bits of offset
)

// Queue is one hardware queue's packet processor.
type Queue struct {
	cfg     Config
	minPoll time.Duration // first barrier re-check interval (tests raise it to disable polling)
	maxPoll time.Duration
	kick    chan struct{}
	// amdQueue is the VA of the ring's amd_queue_t (0: none): scratch, properties, inactive signal.
	amdQueue uint64

	state   atomic.Int32
	rd      atomic.Uint64 // read index; written only by the queue goroutine
	wrSeen  atomic.Uint64 // write index as the queue goroutine last loaded it (Status)
	packets atomic.Uint64
	scans   atomic.Uint64
	// scratchWaits counts "insufficient scratch" reports (the queue waited for ROCr's handler).
	scratchWaits atomic.Uint64

	mu      sync.Mutex
	err     error
	stop    chan struct{} // non-nil while running
	done    chan struct{}
	stopped chan struct{} // the current run's stop channel, for Stopping

	// Owned by the queue goroutine.
	pkt     [aql.PacketSize]byte
	kd      aql.KernelDispatchPacket
	curID   uint64
	scratch Scratch
	timer   *time.Timer
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
	q := &Queue{cfg: cfg, minPoll: minPoll, maxPoll: cfg.MaxPoll, kick: make(chan struct{}, 1),
		amdQueue: amdQueueOf(cfg.ReadIndexVA, cfg.WriteIndexVA)}
	if q.maxPoll == 0 {
		q.maxPoll = defaultMaxPoll
	}
	q.maxPoll = min(max(q.maxPoll, minPoll), time.Hour)
	rd, err := q.load64(cfg.ReadIndexVA, "read index")
	if err != nil {
		return nil, err
	}
	q.rd.Store(rd)
	q.state.Store(int32(StateStopped))
	return q, nil
}

// Start launches the queue goroutine (again, after Stop: processing resumes at the read index; a
// packet abandoned by Stop is processed again from the ring). It fails in the error state.
func (q *Queue) Start() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.err != nil {
		return ErrQueueError
	}
	if q.stop != nil {
		return nil
	}
	q.stop, q.done = make(chan struct{}), make(chan struct{})
	q.stopped = q.stop
	q.state.Store(int32(StateIdle))
	if q.cfg.Group != nil {
		q.cfg.Group.add(q)
	}
	go q.run(q.stop, q.done)
	q.Kick() // look at the ring once: packets may already be there (PSA-2.8-Q22)
	return nil
}

// Stop stops processing and waits for the queue goroutine: a barrier wait is abandoned (the packet
// stays in the ring), and a running Host.Dispatch is waited for (it should watch Stopping). A
// dispatch that returns an error while stopping is abandoned without a queue error; one that
// returns nil completes normally. Stop is idempotent.
func (q *Queue) Stop() {
	q.mu.Lock()
	stop, done := q.stop, q.done
	q.stop, q.done = nil, nil
	q.mu.Unlock()
	if stop == nil {
		return
	}
	close(stop)
	<-done
	if q.cfg.Group != nil {
		q.cfg.Group.remove(q)
	}
}

// Stopping is closed when Stop is called on the current run (for Host.Dispatch to abort). Before
// the first Start it returns nil.
func (q *Queue) Stopping() <-chan struct{} {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.stopped
}

// Kick is the doorbell: it wakes the queue to re-scan its ring and re-check a pending barrier.
// It never blocks, allocates or takes a lock shared with other queues.
func (q *Queue) Kick() {
	select {
	case q.kick <- struct{}{}:
	default:
	}
}

// State returns the current state.
func (q *Queue) State() State { return State(q.state.Load()) }

// Tag returns Config.Tag.
func (q *Queue) Tag() any { return q.cfg.Tag }

// Config returns the queue's configuration.
func (q *Queue) Config() Config { return q.cfg }

// CurrentPacket returns the packet ID and ring address of the packet being executed; valid during
// Host.Dispatch (the slot is not released before the dispatch completes, so it can serve as the
// kernel's dispatch_ptr).
func (q *Queue) CurrentPacket() (id, va uint64) { return q.curID, q.slotVA(q.curID) }

// Err returns the queue error, or nil.
func (q *Queue) Err() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.err
}

// Status returns a snapshot for debugfs.
func (q *Queue) Status() Status {
	s := Status{State: q.State(), ReadIndex: q.rd.Load(), RingBase: q.cfg.RingBase, RingSize: q.cfg.RingSize,
		Packets: q.packets.Load(), Scans: q.scans.Load(), ScratchWaits: q.scratchWaits.Load(), Err: q.Err()}
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
			if q.State() == StateBlocked {
				q.Kick()
			}
		}
	}
}
