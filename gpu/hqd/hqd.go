// Package hqd models what every hardware queue of an AMD GPU has, whichever engine processes its
// packets: the HQD (hardware queue descriptor) of the MEC running an AQL or a PM4 ring, or an RLC
// queue of an SDMA engine. A queue is a ring in client memory with a read and a write index, a
// doorbell, an active bit the scheduler sets and clears (map/unmap, kfd_mqd_manager's
// load_mqd/destroy_mqd), and an error state once its engine faults. Runner is that part, written
// once; an engine (gpu/cp for AQL, gpu/cp/pm4, gpu/sdma) supplies only its packet decoder and
// executor as an Engine's Step.
//
// # Processing
//
// A running queue has one goroutine. It sleeps until Kick (the doorbell), then calls Step until
// Step reports no progress (ring empty, a packet not completely written, an INVALID AQL slot), an
// error or a stop, calls Idle, and sleeps again. Wait is how a packet waits on memory (AQL
// barriers and the scratch handshake, PM4 WAIT_REG_MEM, SDMA POLL_REGMEM): the condition is
// re-checked on every kick and on a bounded exponential backoff, from Engine.MinPoll doubling to
// Engine.MaxPoll, and to LongWaitFactor times MaxPoll once it has waited LongWait; nothing spins.
// The sleeps are internal/hrtimer's (pooled): with a time.Timer alone each step under a
// millisecond took a millisecond while the daemon was otherwise idle.
//
// A queue given its doorbell (SetDoorbell) polls it for DoorbellSpin after a scan drains the
// ring, yielding its thread every spinYield, before it sleeps: a client that submits again at once (a wait
// for the completion signal, then the next packet) is served without the doorbell watcher's scan
// and kick, as the MEC polls the doorbell of an active queue. The spin is short and follows
// work only, so an idle queue costs nothing.
//
// Stop closes the run's stop channel and waits for the goroutine: a wait is abandoned and a packet
// in execution should watch Stopping. The first error a Step returns puts the queue in StateError:
// Engine.Fail reports it to the engine's host, and Start refuses to run the queue again.
//
// HasWork is what the hardware scheduler (gpu/hws) asks to time-slice only queues with work: a
// doorbell not yet taken or a scan not finished (a queue unmapped in the middle of its ring, or
// with a dispatch saved by a preemption, still has work).
//
// # Concurrency and lock order
//
// Kick takes no lock and does not allocate (a non-blocking send on the queue's own 1-buffered
// channel): the doorbell path is free of anything shared between queues. Runner.mu guards the run
// channels and the error only; the Engine's functions are called without it, except
// Engine.Starting, which runs under it while no goroutine of the queue exists. A Runner's lock is
// never held together with another queue's.
package hqd

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kfdemu/kfdemu/internal/hrtimer"
)

// State is a queue's processing state, as debugfs shows it.
type State int32

// Queue states.
const (
	StateStopped State = iota // not running (before Start, after Stop): unmapped
	StateIdle                 // waiting for a doorbell
	StateActive               // executing a packet (a kernel dispatch runs)
	StateBlocked              // a packet waits on memory (barrier, WAIT_REG_MEM, POLL_REGMEM, scratch)
	StateError                // stopped on an error; see Runner.Err
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

var (
	// ErrQueueError is Start's answer for a queue in the error state.
	ErrQueueError = errors.New("hqd: queue is in the error state")
	// ErrStopped ends a run because Stop was called: Wait returns it, and a Step that returns it
	// (wrapped or not) ends the run without a queue error.
	ErrStopped = errors.New("hqd: stopped")
)

// Defaults of the wait backoff (PSA-2.10-04: a blocked queue re-checks on submissions and signal
// changes; the poll only bounds the latency of a store without a doorbell or an interrupt).
const (
	DefaultMinPoll = 20 * time.Microsecond
	DefaultMaxPoll = time.Millisecond
	LongWait       = time.Second           // after this long waiting, the ceiling rises ...
	LongWaitFactor = 50                    // ... to MaxPoll*LongWaitFactor (50 ms by default)
	DoorbellSpin   = 50 * time.Microsecond // a queue's look at its doorbell after its ring drained
	// spinYield is how often the doorbell spin yields its thread (runtime.Gosched). A yield costs
	// about a microsecond of the scheduler's own work even with nothing else to run (a look at the
	// timers, the global run queue's lock); yielding every 64 looks put the spin inside Gosched
	// most of the time, so that a store often waited for the yield to end. A goroutine queued on
	// the spinning queue's P waits up to spinYield: with 10 µs one kfdemu bench run of ten had its
	// in-process client (which yields between looks at the signal) wait that long for every
	// round trip (p50 11.5 µs). It yields to goroutines only, not to other threads (no
	// sched_yield, unlike internal/spin.Yield): that made a faulting barrier round trip 4x slower
	// at p50, the CPU going to a client's spin.
	spinYield = 2 * time.Microsecond
)

// Engine is what an engine supplies to its queues' Runner.
type Engine struct {
	// Step executes, or continues, one packet. It returns false when there is nothing to do until
	// the next kick. An error is the queue's error, except ErrStopped.
	Step func(stop <-chan struct{}) (progressed bool, err error)
	// Idle, if set, runs when a scan ends with the ring drained or blocked (PM4 publishes its read
	// pointer); an error is a queue error.
	Idle func() error
	// Recheck, if set, runs when a scan ended and the doorbell spin saw no store, before the queue
	// waits for a kick: true scans again. An engine whose look after a packet skipped a check
	// (gpu/cp: the write index, when the doorbell had announced the packet) makes it here, so
	// that work published without a doorbell is still found.
	Recheck func() bool
	// Exit, if set, runs when the goroutine ends (stopped or failed).
	Exit func()
	// Fail reports the queue's first and only error to the engine's host; the state becomes
	// StateError after it returns.
	Fail func(err error)
	// Starting, if set, runs in Start before the goroutine is launched, under the runner's lock
	// (no goroutine of this queue runs then); Stopped runs in Stop after it ended.
	Starting, Stopped func()
	// Blocking, if set, is told when a Wait blocks (true) and ends (false).
	Blocking func(blocked bool)
	// MinPoll and MaxPoll bound Wait's backoff (zero: the defaults).
	MinPoll, MaxPoll time.Duration
	// DoorbellSpin is how long the queue polls its doorbell (SetDoorbell) after its ring drained
	// (zero: DoorbellSpin).
	DoorbellSpin time.Duration
}

// Runner is the shared part of one hardware queue. Embed it in the engine's queue type and call
// Init before anything else.
type Runner struct {
	eng              Engine
	minPoll, maxPoll time.Duration
	spinFor          time.Duration
	kick             chan struct{}
	state            atomic.Int32
	scans            atomic.Uint64
	// scanning: a kick was taken and the scan it started has not ended with the ring drained
	// (a packet executes, waits, or the queue was stopped in the middle of its ring).
	scanning atomic.Bool

	mu      sync.Mutex
	err     error
	stop    chan struct{} // non-nil while running
	done    chan struct{}
	stopped chan struct{} // the current run's stop channel, for Stopping

	doorbell atomic.Pointer[Doorbell] // SetDoorbell
	held     Doorbell                 // the doorbell the queue goroutine holds (Doorbell.Hold)
}

// Doorbell is a queue's doorbell as the queue itself looks at it (doorbell.Bell).
type Doorbell interface {
	// Poll reports whether a store came that nobody took yet, and takes it.
	Poll() bool
	// Hold(true) tells the doorbell watcher that the queue looks at the doorbell itself, so it
	// neither kicks for stores nor spins after them; Hold(false) gives the doorbell back.
	Hold(on bool)
}

// SetDoorbell gives the queue its doorbell (nil: none; the queue then runs on kicks only). It may
// be called at any time.
func (r *Runner) SetDoorbell(d Doorbell) {
	if d == nil {
		r.doorbell.Store(nil)
		return
	}
	r.doorbell.Store(&d)
}

func (r *Runner) bell() Doorbell {
	if p := r.doorbell.Load(); p != nil {
		return *p
	}
	return nil
}

// spin polls the doorbell for Engine.DoorbellSpin after a scan drained the ring; it reports whether
// a store (or a kick) came, in which case the queue scans again at once. Otherwise it gives the
// doorbell back to the watcher, with a last look after that for a store made in between.
func (r *Runner) spin(stop <-chan struct{}) bool {
	d := r.held
	if d == nil {
		return false
	}
	var deadline, yield time.Time
	for i := 0; ; i++ {
		if d.Poll() || len(r.kick) > 0 {
			select { // the scan about to run is what the kick asks for
			case <-r.kick:
			default:
			}
			return true
		}
		if i%64 != 0 {
			continue // a look is two loads: check the time every 64
		}
		select {
		case <-stop:
			return false
		default:
		}
		now := time.Now()
		if i == 0 {
			deadline, yield = now.Add(r.spinFor), now.Add(spinYield)
		} else if now.After(deadline) {
			break
		} else if now.After(yield) {
			runtime.Gosched()
			yield = time.Now().Add(spinYield)
		}
	}
	r.release()
	if d.Poll() {
		r.hold()
		return true
	}
	return false
}

// hold takes the queue's doorbell from the watcher while the queue goroutine scans; release
// gives it back. Both are for the queue goroutine only.
func (r *Runner) hold() {
	if r.held = r.bell(); r.held != nil {
		r.held.Hold(true)
	}
}

func (r *Runner) release() {
	if r.held != nil {
		r.held.Hold(false)
		r.held = nil
	}
}

// Init sets the engine. The queue is stopped.
func (r *Runner) Init(e Engine) {
	r.eng = e
	r.minPoll, r.maxPoll = e.MinPoll, e.MaxPoll
	if r.minPoll <= 0 {
		r.minPoll = DefaultMinPoll
	}
	if r.maxPoll <= 0 {
		r.maxPoll = DefaultMaxPoll
	}
	r.maxPoll = min(max(r.maxPoll, r.minPoll), time.Hour)
	r.spinFor = e.DoorbellSpin
	if r.spinFor <= 0 {
		r.spinFor = DoorbellSpin
	}
	r.kick = make(chan struct{}, 1)
	r.state.Store(int32(StateStopped))
}

// SetMinPoll changes the first re-check interval of a stopped queue (tests raise it to see that
// kicks alone wake a wait).
func (r *Runner) SetMinPoll(d time.Duration) {
	r.minPoll = d
	r.maxPoll = max(r.maxPoll, d)
}

// Start launches the queue goroutine (again, after Stop: the engine resumes where it stopped). It
// fails in the error state and does nothing on a running queue.
func (r *Runner) Start() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return ErrQueueError
	}
	if r.stop != nil {
		return nil
	}
	r.stop, r.done = make(chan struct{}), make(chan struct{})
	r.stopped = r.stop
	r.state.Store(int32(StateIdle))
	if r.eng.Starting != nil {
		r.eng.Starting()
	}
	go r.run(r.stop, r.done)
	r.Kick() // look at the ring once: packets may already be there (PSA-2.8-Q22)
	return nil
}

// Stop stops processing and waits for the queue goroutine. It is idempotent.
func (r *Runner) Stop() {
	r.mu.Lock()
	stop, done := r.stop, r.done
	r.stop, r.done = nil, nil
	r.mu.Unlock()
	if stop == nil {
		return
	}
	close(stop)
	<-done
	if r.eng.Stopped != nil {
		r.eng.Stopped()
	}
}

// Stopping is closed when Stop is called on the current run (for a long packet to abort). Before
// the first Start it returns nil.
func (r *Runner) Stopping() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stopped
}

// Kick is the doorbell: it wakes the queue to re-scan its ring and re-check a pending wait. It
// never blocks, allocates or takes a lock.
func (r *Runner) Kick() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// HasWork reports whether the queue has work for the hardware scheduler (gpu/hws): a doorbell not
// yet taken, or a scan in progress, which includes a packet executing, a packet waiting
// (barrier, WAIT_REG_MEM, POLL_REGMEM, scratch) and a run stopped (unmapped) before the ring was
// drained. A queue whose last scan found its ring drained, or stopped at a slot not yet written
// (it is taken up again by the next doorbell, PSA-2.8-Q19), has none. It takes no lock: an
// atomic load and the kick channel's length. Exact once the queue is stopped (Stop returned);
// while it runs the answer can lag a kick being taken by a few instructions.
func (r *Runner) HasWork() bool {
	return r.scanning.Load() || len(r.kick) > 0
}

// State returns the current state.
func (r *Runner) State() State { return State(r.state.Load()) }

// SetState is for the engine's goroutine (StateActive around a dispatch).
func (r *Runner) SetState(s State) { r.state.Store(int32(s)) }

// Scans counts the scans finished (a kick starts one; it ends when the ring is drained or blocked).
func (r *Runner) Scans() uint64 { return r.scans.Load() }

// Err returns the queue error, or nil.
func (r *Runner) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// Fail records the queue's first error, has the engine report it and enters StateError (after the
// report: a State of StateError implies the host knows). Later errors are dropped.
func (r *Runner) Fail(err error) {
	r.mu.Lock()
	first := r.err == nil
	if first {
		r.err = err
	}
	r.mu.Unlock()
	if first && r.eng.Fail != nil {
		r.eng.Fail(err)
	}
	r.SetState(StateError)
}

func (r *Runner) run(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	if r.eng.Exit != nil {
		defer r.eng.Exit()
	}
	defer r.release()
	for {
		select {
		case <-stop:
			r.SetState(StateStopped)
			return
		case <-r.kick:
		}
		r.hold()
		r.scanning.Store(true)
		for {
			if r.held != nil {
				r.held.Poll() // a store this look at the ring covers is not the watcher's to kick for
			}
			progressed, err := r.eng.Step(stop)
			if errors.Is(err, ErrStopped) {
				r.SetState(StateStopped)
				return
			}
			if err == nil && !progressed && r.eng.Idle != nil {
				err = r.eng.Idle()
			}
			if err != nil {
				r.scanning.Store(false) // an errored queue never runs again
				r.Fail(err)
				return
			}
			if !progressed {
				r.scanning.Store(false)
				r.SetState(StateIdle)
				if r.spin(stop) {
					r.scanning.Store(true)
					continue
				}
				if r.eng.Recheck != nil && r.eng.Recheck() {
					r.hold()
					r.scanning.Store(true)
					continue
				}
				break
			}
			select {
			case <-stop:
				r.SetState(StateStopped)
				return
			default:
			}
		}
		r.SetState(StateIdle)
		r.scans.Add(1)
	}
}

// Wait blocks the queue goroutine until cond holds, cond fails, or the queue is stopped
// (ErrStopped). cond is checked at once, then on every kick and on the backoff; cond == nil never
// holds (an AQL barrier-OR on NULL signals only) and costs no polling. The state is StateBlocked
// while waiting and what it was before once the condition holds.
func (r *Runner) Wait(stop <-chan struct{}, cond func() (bool, error)) error {
	if cond != nil {
		if ok, err := cond(); ok || err != nil {
			return err
		}
	}
	prev := r.State()
	r.SetState(StateBlocked)
	if r.held != nil { // submissions re-check the wait: the watcher kicks for them meanwhile
		r.release()
		defer r.hold()
	}
	if r.eng.Blocking != nil {
		r.eng.Blocking(true)
		defer r.eng.Blocking(false)
	}
	if cond == nil {
		<-stop
		return ErrStopped
	}
	// The backoff's first steps are tens of microseconds: a time.Timer alone sleeps at least a
	// millisecond while the daemon is otherwise idle (internal/hrtimer).
	timer := hrtimer.Get()
	defer timer.Put()
	delay, ceiling, since := r.minPoll, r.maxPoll, time.Now()
	expired := func() {
		if ceiling == r.maxPoll && time.Since(since) > LongWait {
			ceiling = r.maxPoll * LongWaitFactor
		}
		delay = min(delay*2, ceiling)
	}
	for {
		timer.Reset(delay)
		select {
		case <-stop:
			timer.Stop()
			return ErrStopped
		case <-r.kick:
			timer.Stop()
			delay = r.minPoll
		case <-timer.C:
			expired()
		case <-timer.G:
			expired()
		}
		if ok, err := cond(); ok || err != nil {
			if err == nil {
				r.SetState(prev)
			}
			return err
		}
	}
}
