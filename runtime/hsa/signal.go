package hsa

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/kfdemu/kfdemu/gpu/aql"
	"github.com/kfdemu/kfdemu/internal/hrtimer"
	"github.com/kfdemu/kfdemu/internal/spin"
	"github.com/kfdemu/kfdemu/runtime/kmt"
)

// Condition is a signal wait condition (hsa_signal_condition_t).
type Condition int

// Wait conditions.
const (
	Eq Condition = iota
	Ne
	Lt
	Gte
)

func (c Condition) holds(v, x int64) bool {
	switch c {
	case Eq:
		return v == x
	case Ne:
		return v != x
	case Lt:
		return v < x
	default:
		return v >= x
	}
}

// MemoryOrder is the memory order of a signal operation (hsa's _relaxed/_scacquire/_screlease/
// _scacq_screl variants). Go's atomics are sequentially consistent, which is at least as strong
// as every order, so the order is accepted and documented rather than acted on.
type MemoryOrder int

// Memory orders.
const (
	Relaxed MemoryOrder = iota
	Acquire
	Release
	AcquireRelease
)

// spinFor is how long Wait busy-waits before it sleeps.
const spinFor = 200 * time.Microsecond

// amdSignalKindUser is AMD_SIGNAL_KIND_USER (amd_hsa_signal.h).
const amdSignalKindUser = 1

// Signal is an HSA signal: an amd_signal_t the GPU decrements as a completion signal and waits on
// in barriers. An interrupt signal also names a kfd signal event in its mailbox, so the packet
// processor raises the event when it completes and Wait can sleep in WAIT_EVENTS.
type Signal struct {
	r     *Runtime
	VA    uint64 // the amd_signal_t's address (the hsa_signal_t handle)
	value *atomic.Uint64
	ev    *kmt.Event
	freed atomic.Bool
}

// NewSignal creates a signal with an initial value (hsa_signal_create); interrupt makes it an
// interrupt signal (hsa_amd_signal_create without HSA_AMD_SIGNAL_AMD_GPU_ONLY).
func (r *Runtime) NewSignal(initial int64, interrupt bool) (*Signal, error) {
	if err := r.check(); err != nil {
		return nil, err
	}
	va, b, err := r.signalSlot()
	if err != nil {
		return nil, err
	}
	s := &Signal{r: r, VA: va, value: kmt.Word64(b, aql.SignalValueOffset)}
	kmt.Word64(b, aql.SignalKindOffset).Store(amdSignalKindUser)
	s.value.Store(uint64(initial))
	kmt.Word64(b, aql.SignalMailboxOffset).Store(0)
	if interrupt {
		if s.ev, err = r.d.CreateEvent(kmt.EventSignal, false, false); err != nil {
			r.freeSlot(va)
			return nil, wrap(err)
		}
		kmt.Word64(b, aql.SignalMailboxOffset).Store(s.ev.MailboxVA)
		kmt.Word32(b, aql.SignalEventIDOffset).Store(s.ev.TriggerData)
	}
	return s, nil
}

// signalSlot hands out a 64-byte amd_signal_t slot from fine-grained pages mapped to every GPU.
func (r *Runtime) signalSlot() (uint64, []byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.sigFree) == 0 {
		gpus := r.d.GPUs()
		m, err := r.d.AllocGTT(gpus[0], 4096, kmt.Coherent)
		if err != nil {
			return 0, nil, wrap(err)
		}
		if err := m.Map(gpus...); err != nil {
			m.Free()
			return 0, nil, wrap(err)
		}
		r.sigPage = append(r.sigPage, m)
		b := m.Bytes()
		for off := 4096 - 64; off >= 0; off -= 64 {
			r.sigFree = append(r.sigFree, m.VA+uint64(off))
			r.sigMem[m.VA+uint64(off)] = b[off : off+64 : off+64]
		}
	}
	va := r.sigFree[len(r.sigFree)-1]
	r.sigFree = r.sigFree[:len(r.sigFree)-1]
	return va, r.sigMem[va], nil
}

func (r *Runtime) freeSlot(va uint64) {
	r.mu.Lock()
	r.sigFree = append(r.sigFree, va)
	r.mu.Unlock()
}

// Destroy releases the signal (hsa_signal_destroy). Using it afterwards is ErrInvalidSignal.
func (s *Signal) Destroy() error {
	if s.freed.Swap(true) {
		return ErrInvalidSignal
	}
	if s.ev != nil {
		s.ev.Destroy()
	}
	s.r.freeSlot(s.VA)
	return nil
}

func (s *Signal) ok() bool { return !s.freed.Load() }

// Load returns the value (hsa_signal_load_*).
func (s *Signal) Load(MemoryOrder) int64 { return int64(s.value.Load()) }

// Store sets the value (hsa_signal_store_*); an interrupt signal wakes its waiters.
func (s *Signal) Store(v int64, _ MemoryOrder) {
	s.value.Store(uint64(v))
	s.notify()
}

func (s *Signal) notify() {
	if s.ev != nil {
		s.ev.Set() // InterruptSignal::StoreRelease: hsaKmtSetEvent
	}
}

func (s *Signal) rmw(f func(old uint64) uint64) int64 {
	for {
		o := s.value.Load()
		if s.value.CompareAndSwap(o, f(o)) {
			s.notify()
			return int64(o)
		}
	}
}

// Add adds v and returns the old value (hsa_signal_add_*, which returns nothing; the old value
// is given for convenience).
func (s *Signal) Add(v int64, _ MemoryOrder) int64 {
	return s.rmw(func(o uint64) uint64 { return o + uint64(v) })
}

// Sub subtracts v (hsa_signal_subtract_*).
func (s *Signal) Sub(v int64, _ MemoryOrder) int64 {
	return s.rmw(func(o uint64) uint64 { return o - uint64(v) })
}

// And, Or and Xor combine v into the value (hsa_signal_and/or/xor_*).
func (s *Signal) And(v int64, _ MemoryOrder) int64 {
	return s.rmw(func(o uint64) uint64 { return o & uint64(v) })
}
func (s *Signal) Or(v int64, _ MemoryOrder) int64 {
	return s.rmw(func(o uint64) uint64 { return o | uint64(v) })
}
func (s *Signal) Xor(v int64, _ MemoryOrder) int64 {
	return s.rmw(func(o uint64) uint64 { return o ^ uint64(v) })
}

// Exchange stores v and returns the old value (hsa_signal_exchange_*).
func (s *Signal) Exchange(v int64, _ MemoryOrder) int64 {
	return s.rmw(func(uint64) uint64 { return uint64(v) })
}

// CAS stores v if the value is expected and returns the value it found (hsa_signal_cas_*).
func (s *Signal) CAS(expected, v int64, _ MemoryOrder) int64 {
	if s.value.CompareAndSwap(uint64(expected), uint64(v)) {
		s.notify()
		return expected
	}
	return int64(s.value.Load())
}

// Wait waits until the value satisfies cond against x, or timeout passes (negative: forever), and
// returns the last value seen and whether the condition held (hsa_signal_wait_scacquire). It spins
// briefly, then sleeps: in WAIT_EVENTS for an interrupt signal (woken by the packet processor's
// event or a CPU store), else in short naps.
func (s *Signal) Wait(cond Condition, x int64, timeout time.Duration) (int64, bool, error) {
	if !s.ok() {
		return 0, false, ErrInvalidSignal
	}
	start := time.Now()
	expired := func() bool { return timeout >= 0 && time.Since(start) >= timeout }
	// Busy-wait first, as ROCr does before it blocks (about 200 µs): a packet completes in a few
	// microseconds, and sleeping costs far more than that.
	for i := 0; ; i++ {
		if v := s.Load(Acquire); cond.holds(v, x) {
			return v, true, nil
		}
		if i%64 == 63 {
			if time.Since(start) > spinFor || expired() {
				break
			}
			spin.Yield() // to other threads too: the daemon's may share this CPU (internal/spin)
		}
	}
	nap := 20 * time.Microsecond
	for {
		v := s.Load(Acquire)
		if cond.holds(v, x) {
			return v, true, nil
		}
		if expired() {
			return v, false, nil
		}
		if s.ev != nil {
			d := 100 * time.Millisecond // re-check now and then: a store may skip the event
			if timeout >= 0 {
				d = min(d, timeout-time.Since(start))
			}
			if _, err := s.ev.Wait(max(d, time.Millisecond)); err != nil {
				return v, false, wrap(err)
			}
			continue
		}
		hrtimer.Sleep(nap) // time.Sleep: at least 1 ms in an otherwise idle process
		nap = min(2*nap, time.Millisecond)
	}
}

// String names the signal for messages.
func (s *Signal) String() string { return fmt.Sprintf("signal %#x", s.VA) }
