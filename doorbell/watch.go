package doorbell

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/kfdemu/kfdemu/internal/hrtimer"
	"github.com/kfdemu/kfdemu/internal/spin"
)

// Tuning of the adaptive poll (see the package doc). The zero value of a field means its default.
type Tuning struct {
	SpinFor   time.Duration // yield-spin after a store (default 200 µs)
	MinPoll   time.Duration // first sleep after the spin (default 50 µs)
	MaxPoll   time.Duration // ceiling of the backoff (default 10 ms)
	IdleAfter time.Duration // time without a store before the ceiling may be reached (default 100 ms)
	DeepPoll  time.Duration // poll interval after DeepAfter without a store (default max(50 ms, MaxPoll))
	DeepAfter time.Duration // time without a store before DeepPoll (default 2 s)
	ArmAfter  time.Duration // time without a store before calling the arm function (default IdleAfter)
	ArmedPoll time.Duration // poll interval while armed (default 1 s)
}

func (t Tuning) withDefaults() Tuning {
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&t.SpinFor, 200*time.Microsecond)
	def(&t.MinPoll, 50*time.Microsecond)
	def(&t.MaxPoll, 10*time.Millisecond)
	def(&t.IdleAfter, 100*time.Millisecond)
	t.MaxPoll = max(t.MaxPoll, t.MinPoll)
	def(&t.DeepPoll, max(50*time.Millisecond, t.MaxPoll))
	def(&t.DeepAfter, 2*time.Second)
	def(&t.ArmAfter, t.IdleAfter)
	def(&t.ArmedPoll, time.Second)
	t.ArmedPoll = max(t.ArmedPoll, t.MaxPoll)
	t.DeepPoll = max(t.DeepPoll, t.MaxPoll)
	return t
}

// Watcher detects stores to registered doorbells and kicks their queues.
type Watcher struct {
	t Tuning

	mu     sync.Mutex
	bells  atomic.Pointer[[]*Bell] // copy-on-write snapshot, read by the scanner
	scanMu sync.Mutex              // held by the scanner while it reads doorbell words
	wake   chan struct{}
	stop   chan struct{}
	done   chan struct{}

	arm     atomic.Pointer[func() bool] // SetArm
	touched atomic.Bool                 // Touched: kick every doorbell at the next scan

	scans   atomic.Uint64
	kicks   atomic.Uint64
	arms    atomic.Uint64
	pokes   atomic.Uint64 // Poke calls
	touches atomic.Uint64
}

// Bell is one registered doorbell.
type Bell struct {
	w    *Watcher
	word *atomic.Uint64
	last atomic.Uint64 // the last value taken, by the scanner or by Poll
	held atomic.Bool   // Hold: the queue looks at the word itself
	kick func()
}

// NewWatcher starts the scanner goroutine; Close stops it.
func NewWatcher(t Tuning) *Watcher {
	w := &Watcher{t: t.withDefaults(), wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go w.run()
	return w
}

// Watch registers a doorbell word; kick is called (from the scanner goroutine) whenever the value
// changes, and must not block. The current value is the baseline.
func (w *Watcher) Watch(word *atomic.Uint64, kick func()) *Bell {
	b := &Bell{w: w, word: word, kick: kick}
	b.last.Store(word.Load())
	w.mu.Lock()
	var next []*Bell
	if cur := w.bells.Load(); cur != nil {
		next = append(next, *cur...)
	}
	next = append(next, b)
	w.bells.Store(&next)
	w.mu.Unlock()
	w.Poke()
	return b
}

// Close unregisters the doorbell. When it returns the scanner no longer reads its word.
func (b *Bell) Close() {
	w := b.w
	w.mu.Lock()
	if cur := w.bells.Load(); cur != nil {
		next := make([]*Bell, 0, len(*cur))
		for _, x := range *cur {
			if x != b {
				next = append(next, x)
			}
		}
		w.bells.Store(&next)
	}
	w.scanMu.Lock() // wait for a scan that may still hold the old snapshot
	w.scanMu.Unlock()
	w.mu.Unlock()
}

// Poll is the queue's own look at its doorbell, as the command processor of an active queue
// polls it: it reports whether the word changed since the last value the scanner or Poll took,
// and takes the new value, so that the scanner neither kicks for it nor spins after it. It takes
// no lock and does not allocate. A store the scanner takes first is the scanner's kick.
func (b *Bell) Poll() bool {
	old := b.last.Load()
	v := b.word.Load()
	return v != old && b.last.CompareAndSwap(old, v)
}

// Hold(true) says the queue looks at the doorbell itself (Poll): the scanner leaves the bell
// alone (no kick, no spin after a store; the watcher counts it as busy, so it does not arm) until
// Hold(false). A store made before Hold(false) and not polled is the scanner's to kick for.
//
// Hold(false) pokes the scanner: while a queue held its bell the scanner's backoff climbed to its
// ceiling (a held bell is busy, not stored to: 1 ms by default), and a store made just after the
// queue stopped looking waited for that sleep to end (a client submitting 60 µs after its last
// completion, past the queue's 50 µs doorbell spin, saw 1.0-1.3 ms round trips). The poke scans
// at once and restarts the backoff from MinPoll, so a store after the release is seen within
// about the time since the release, as after any other activity.
func (b *Bell) Hold(on bool) {
	b.held.Store(on)
	if !on {
		b.w.Poke()
	}
}

// SetArm gives the watcher a way to sleep without polling: after ArmAfter without a store it calls
// arm (on its own goroutine, with none of its locks held), which arranges for Touched to be called
// at the next store to any registered doorbell and reports whether it could for all of them. While
// armed the watcher polls only every ArmedPoll, as a safety net.
func (w *Watcher) SetArm(arm func() bool) { w.arm.Store(&arm) }

// Touched reports that a client touched a doorbell page (the notice an arm function arranged for).
// It arrives before the store lands: the scanner kicks every doorbell once (a queue re-reads its
// own write pointer, so a kick with nothing new is harmless) and restarts its fast phase, in which
// it sees the store. It never blocks.
func (w *Watcher) Touched() {
	w.touches.Add(1)
	w.touched.Store(true)
	w.Poke()
}

// Poke makes the scanner look at every doorbell now and restart its fast phase. It never blocks.
func (w *Watcher) Poke() {
	w.pokes.Add(1)
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Close stops the scanner.
func (w *Watcher) Close() {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	<-w.done
}

// Stats returns the number of scans and kicks so far.
func (w *Watcher) Stats() (scans, kicks uint64) { return w.scans.Load(), w.kicks.Load() }

// Arms returns how many times the arm function reported every doorbell armed, and Touched was
// called.
func (w *Watcher) Arms() (arms, touches uint64) { return w.arms.Load(), w.touches.Load() }

// Pokes counts the Poke calls.
func (w *Watcher) Pokes() uint64 { return w.pokes.Load() }

// Len returns the number of registered doorbells.
func (w *Watcher) Len() int {
	if cur := w.bells.Load(); cur != nil {
		return len(*cur)
	}
	return 0
}

// scan reads every doorbell not held by its queue once and kicks those that changed; held
// reports whether a queue held its doorbell.
func (w *Watcher) scan() (changed, held bool) {
	if cur := w.bells.Load(); cur == nil || len(*cur) == 0 {
		return false, false
	}
	all := w.touched.Swap(false)
	// The snapshot is loaded under scanMu: Bell.Close stores the new snapshot and then takes scanMu,
	// so once Close returns no scan can read the closed word (its page may be unmapped next). A
	// snapshot loaded before taking scanMu could still hold it: a CI run died of SIGSEGV that way.
	w.scanMu.Lock()
	cur := w.bells.Load()
	for _, b := range *cur {
		if b.held.Load() {
			held = true
			continue
		}
		// The value is taken with a compare-and-swap, as Poll takes it: a Load and a Store let a
		// store the queue's Poll took between them be kicked for too (a CI run of the race
		// detector saw that kick).
		old := b.last.Load()
		v := b.word.Load()
		if took := v != old && b.last.CompareAndSwap(old, v); took || all {
			b.kick()
			w.kicks.Add(1)
			changed = true
		}
	}
	w.scanMu.Unlock()
	w.scans.Add(1)
	return changed, held
}

func (w *Watcher) run() {
	defer close(w.done)
	// The backoff's sleeps are tens of microseconds to a millisecond: a time.Timer alone would
	// take at least 1 ms for each while the daemon is idle (internal/hrtimer).
	timer := hrtimer.New()
	defer timer.Close()
	last := time.Now() // last store seen
	delay := w.t.MinPoll
	tried, armed := false, false // the arm function was called since last / and succeeded
	woke := func() { last, delay, tried, armed = time.Now(), w.t.MinPoll, false, false }
	// poked restarts the backoff at MinPoll without the spin: a Poke (every ioctl of a process with
	// doorbells) is not a store, and yield-spinning after each one kept a CPU busy while a client
	// made ioctls back to back. A store the next scans see, and Touched (its scan kicks every
	// doorbell), re-enter the spin.
	poked := func() {
		if time.Since(last) > w.t.SpinFor {
			last = time.Now().Add(-w.t.SpinFor)
		}
		delay, tried, armed = w.t.MinPoll, false, false
	}
	expired := func(now time.Time) { // the backoff's next step
		ceiling := w.t.MaxPoll
		switch {
		case armed:
			ceiling = w.t.ArmedPoll // a store faults and Touched wakes the scanner
		case now.Sub(last) >= w.t.DeepAfter:
			ceiling = w.t.DeepPoll // long idle: the queues' owners are not submitting
		}
		if now.Sub(last) < w.t.IdleAfter {
			ceiling = min(ceiling, max(w.t.MinPoll, w.t.IdleAfter/100))
		}
		delay = min(delay*2, ceiling)
	}
	for {
		changed, held := w.scan()
		if changed {
			woke()
		}
		now := time.Now()
		if held && !changed {
			// A queue takes its own stores: it is busy, but the scanner need not spin for it,
			// and must not arm (the next store would fault for nothing).
			tried, armed = false, false
			if now.Sub(last) >= w.t.SpinFor {
				last = now.Add(-w.t.SpinFor)
			}
		}
		if now.Sub(last) < w.t.SpinFor {
			// Fast phase: a client that just rang is likely to ring again soon.
			spin.Yield()
			select {
			case <-w.stop:
				return
			default:
			}
			continue
		}
		if w.Len() == 0 {
			select { // nothing to watch: sleep until a doorbell is registered or poked
			case <-w.stop:
				return
			case <-w.wake:
				poked()
			}
			continue
		}
		if !tried && now.Sub(last) >= w.t.ArmAfter {
			if arm := w.arm.Load(); arm != nil {
				tried, armed = true, (*arm)()
				if armed {
					w.arms.Add(1)
					delay = w.t.ArmedPoll
				}
			}
		}
		timer.Reset(delay)
		select {
		case <-w.stop:
			timer.Stop()
			return
		case <-w.wake:
			timer.Stop()
			poked()
		case <-timer.C:
			expired(now)
		case <-timer.G:
			expired(now)
		}
	}
}
