package doorbell

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

func TestSliceReservedRanges(t *testing.T) {
	for _, c := range []struct {
		name     string
		l        Layout
		reserved []uint32
		free     []uint32
	}{
		{"vega20", Vega20, []uint32{0x100, 0x18f, 0x300, 0x38f}, []uint32{0, 0xff, 0x190, 0x2ff, 0x390, 0x3ff}},
		{"vega10", Vega10, []uint32{0xf0, 0xff, 0x2f0, 0x2ff}, []uint32{0xef, 0x100, 0x2ef, 0x300}},
	} {
		s := NewSlice(c.l)
		for _, id := range c.reserved {
			if !s.Reserved(id) {
				t.Errorf("%s: %#x not reserved", c.name, id)
			}
		}
		for _, id := range c.free {
			if s.Reserved(id) {
				t.Errorf("%s: %#x reserved", c.name, id)
			}
		}
	}
}

// Compute queues take the lowest free ids and skip the non-CP range: 256 below it on Vega20,
// then 0x190 onwards; 1024 - 2*144 ids in all.
func TestAllocCP(t *testing.T) {
	s := NewSlice(Vega20)
	var ids []uint32
	for {
		id, err := s.AllocCP()
		if errors.Is(err, ErrNoDoorbell) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if want := PerProcess - 2*(0x18f-0x100+1); len(ids) != want {
		t.Fatalf("%d doorbells, want %d", len(ids), want)
	}
	if ids[0] != 0 || ids[255] != 0xff || ids[256] != 0x190 {
		t.Errorf("ids[0,255,256] = %#x %#x %#x", ids[0], ids[255], ids[256])
	}
	s.Free(7)
	if id, _ := s.AllocCP(); id != 7 {
		t.Errorf("after freeing 7 got %d", id)
	}
	if s.InUse() != len(ids) {
		t.Errorf("InUse %d", s.InUse())
	}
}

func TestAllocSDMA(t *testing.T) {
	s := NewSlice(Vega20)
	for _, c := range []struct{ e, q, want uint32 }{{0, 0, 0x100}, {0, 1, 0x300}, {0, 2, 0x101}, {1, 0, 0x10a}, {7, 3, 0x347}} {
		id, err := s.AllocSDMA(c.e, c.q)
		if err != nil || id != c.want {
			t.Errorf("engine %d queue %d: %#x %v, want %#x", c.e, c.q, id, err, c.want)
		}
	}
	if _, err := s.AllocSDMA(0, 0); !errors.Is(err, ErrInUse) {
		t.Errorf("second alloc: %v", err)
	}
	if _, err := s.AllocSDMA(8, 0); !errors.Is(err, ErrBadEngine) {
		t.Errorf("engine 8: %v", err)
	}
}

func waitKicks(t *testing.T, n *atomic.Int32, want int32) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for n.Load() < want {
		if time.Now().After(deadline) {
			t.Fatalf("%d kicks, want %d", n.Load(), want)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

func TestWatcherDetectsStores(t *testing.T) {
	w := NewWatcher(Tuning{MaxPoll: 2 * time.Millisecond})
	defer w.Close()
	var word atomic.Uint64
	var kicks atomic.Int32
	b := w.Watch(&word, func() { kicks.Add(1) })
	word.Store(1)
	waitKicks(t, &kicks, 1)
	// After going idle the store is still seen (within MaxPoll).
	time.Sleep(300 * time.Millisecond)
	word.Store(2)
	waitKicks(t, &kicks, 2)
	b.Close()
	word.Store(3)
	time.Sleep(20 * time.Millisecond)
	if kicks.Load() != 2 {
		t.Errorf("kicked after Close: %d", kicks.Load())
	}
	if w.Len() != 0 {
		t.Errorf("Len %d after Close", w.Len())
	}
}

// After DeepAfter without a store the scanner polls at DeepPoll, and a store is still seen.
func TestWatcherDeepIdle(t *testing.T) {
	w := NewWatcher(Tuning{MaxPoll: 5 * time.Millisecond, IdleAfter: 10 * time.Millisecond,
		DeepAfter: 50 * time.Millisecond, DeepPoll: 40 * time.Millisecond})
	defer w.Close()
	var word atomic.Uint64
	var kicks atomic.Int32
	w.Watch(&word, func() { kicks.Add(1) })
	time.Sleep(150 * time.Millisecond)
	s0, _ := w.Stats()
	time.Sleep(400 * time.Millisecond)
	if n, _ := w.Stats(); n-s0 > 15 { // ~10 at 40 ms; 80 at the 5 ms ceiling
		t.Errorf("%d scans in 400 ms of deep idle", n-s0)
	}
	word.Store(1)
	waitKicks(t, &kicks, 1)
}

// With no doorbell the scanner sleeps: no scans at all.
func TestWatcherIdleWithoutBells(t *testing.T) {
	w := NewWatcher(Tuning{})
	defer w.Close()
	time.Sleep(50 * time.Millisecond)
	s0, _ := w.Stats()
	time.Sleep(100 * time.Millisecond)
	if s1, _ := w.Stats(); s1 != s0 {
		t.Errorf("scanned %d times with nothing registered", s1-s0)
	}
}

// An idle doorbell is scanned at most about 1/MaxPoll times per second.
func TestWatcherBacksOff(t *testing.T) {
	w := NewWatcher(Tuning{MaxPoll: 10 * time.Millisecond, IdleAfter: 20 * time.Millisecond})
	defer w.Close()
	var word atomic.Uint64
	b := w.Watch(&word, func() {})
	defer b.Close()
	time.Sleep(200 * time.Millisecond)
	s0, _ := w.Stats()
	time.Sleep(500 * time.Millisecond)
	s1, _ := w.Stats()
	if n := s1 - s0; n > 80 { // ~50 at 10 ms; generous for a loaded machine
		t.Errorf("%d scans in 500 ms while idle", n)
	}
}

// sleepyBell is a watcher whose backoff sleeps for an hour once past its spin phase, with one
// doorbell whose kicks are counted; both are closed with the test.
func sleepyBell(t *testing.T) (*Watcher, *Bell, *atomic.Uint64, *atomic.Int32) {
	w := NewWatcher(Tuning{MaxPoll: time.Hour, IdleAfter: time.Millisecond, MinPoll: time.Hour})
	word, kicks := new(atomic.Uint64), new(atomic.Int32)
	b := w.Watch(word, func() { kicks.Add(1) })
	t.Cleanup(func() { b.Close(); w.Close() })
	return w, b, word, kicks
}

func TestPokeScansAtOnce(t *testing.T) {
	w, _, word, kicks := sleepyBell(t)
	time.Sleep(5 * time.Millisecond) // past the spin phase: sleeping for an hour
	word.Store(9)
	w.Poke()
	waitKicks(t, kicks, 1)
}

// Hold(false) wakes the scanner: a store made while the queue held its bell, and not polled, is
// kicked for at once, although the scanner's backoff had reached a sleep of an hour meanwhile
// (without the wake it would come after that sleep: the test times out).
func TestReleaseScansAtOnce(t *testing.T) {
	_, b, word, kicks := sleepyBell(t)
	b.Hold(true)
	time.Sleep(5 * time.Millisecond) // past the spin phase: the scanner sleeps for an hour
	word.Store(3)                    // the queue stops looking before it polls this store
	b.Hold(false)
	waitKicks(t, kicks, 1)
}

// Close while the scanner runs never lets it read a word afterwards (checked with -race: the word
// is replaced after Close).
func TestCloseRace(t *testing.T) {
	w := NewWatcher(Tuning{})
	defer w.Close()
	for i := 0; i < 200; i++ {
		word := new(atomic.Uint64)
		b := w.Watch(word, func() {})
		word.Store(uint64(i))
		b.Close()
	}
}

// TestCloseThenUnmap: a doorbell page unmapped right after Bell.Close must never be read by the
// scanner (it would fault: a CI run of the driver's tests died of SIGSEGV in scan when the scanner
// loaded its snapshot before taking scanMu). Many words on one page, closed and unmapped while the
// scanner spins in its fast phase.
func TestCloseThenUnmap(t *testing.T) {
	w := NewWatcher(Tuning{SpinFor: time.Hour})
	defer w.Close()
	for i := 0; i < 3000; i++ {
		page, err := unix.Mmap(-1, 0, 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
		if err != nil {
			t.Fatal(err)
		}
		var bells []*Bell
		for k := 0; k < 8; k++ {
			word := (*atomic.Uint64)(unsafe.Pointer(&page[8*k]))
			bells = append(bells, w.Watch(word, func() {}))
			word.Store(uint64(i))
		}
		for _, b := range bells {
			b.Close()
		}
		if err := unix.Munmap(page); err != nil {
			t.Fatal(err)
		}
	}
}

// BenchmarkDetect measures store -> kick latency in the fast phase.
func BenchmarkDetect(b *testing.B) {
	w := NewWatcher(Tuning{})
	defer w.Close()
	var word atomic.Uint64
	kicked := make(chan struct{}, 1)
	bell := w.Watch(&word, func() {
		select {
		case kicked <- struct{}{}:
		default:
		}
	})
	defer bell.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		word.Add(1)
		<-kicked
	}
}

// TestArm: after ArmAfter without a store the watcher calls its arm function once, then only
// polls every ArmedPoll; Touched kicks every doorbell once (changed or not) and restarts the fast
// phase, after which the watcher arms again. A failed arm leaves the usual polling.
func TestArm(t *testing.T) {
	for _, ok := range []bool{true, false} {
		w := NewWatcher(Tuning{ArmAfter: 20 * time.Millisecond, ArmedPoll: time.Hour, DeepPoll: 5 * time.Millisecond,
			MaxPoll: 5 * time.Millisecond, IdleAfter: 10 * time.Millisecond, DeepAfter: 10 * time.Millisecond})
		var arms atomic.Int32
		w.SetArm(func() bool { arms.Add(1); return ok })
		var a, b atomic.Uint64
		var ka, kb atomic.Int32
		w.Watch(&a, func() { ka.Add(1) })
		w.Watch(&b, func() { kb.Add(1) })
		wait := func(what string, cond func() bool) {
			t.Helper()
			for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("arm %v: %s", ok, what)
				}
			}
		}
		wait("never armed", func() bool { return arms.Load() == 1 })
		s0, _ := w.Stats()
		time.Sleep(100 * time.Millisecond)
		s1, _ := w.Stats()
		switch {
		case ok && s1-s0 > 1:
			t.Errorf("armed: %d scans in 100 ms", s1-s0)
		case !ok && s1-s0 < 5:
			t.Errorf("arm failed: %d scans in 100 ms, want the 5 ms poll", s1-s0)
		}
		if got := arms.Load(); got != 1 {
			t.Errorf("arm %v: called %d times without a store", ok, got)
		}
		if ok {
			w.Touched()
			wait("Touched kicked nothing", func() bool { return ka.Load() == 1 && kb.Load() == 1 })
			a.Store(7) // the store the notice announced
			wait("store after the notice not seen", func() bool { return ka.Load() == 2 })
			wait("not armed again", func() bool { return arms.Load() == 2 })
			if kb.Load() != 1 {
				t.Errorf("unchanged doorbell kicked %d times", kb.Load())
			}
			if _, touches := w.Arms(); touches != 1 {
				t.Errorf("touches %d", touches)
			}
		}
		w.Close()
	}
}

// A store the queue took with Poll is not kicked for by the scanner; a store Poll did not take is.
func TestPollTakesStore(t *testing.T) {
	w := NewWatcher(Tuning{MaxPoll: time.Millisecond})
	defer w.Close()
	var word atomic.Uint64
	var kicks atomic.Int32
	b := w.Watch(&word, func() { kicks.Add(1) })
	defer b.Close()
	if b.Poll() {
		t.Fatal("Poll saw a store before any")
	}
	for i := uint64(1); i <= 1000; i++ {
		word.Store(i)
		if b.Poll() {
			continue // taken by the queue
		}
		waitKicks(t, &kicks, 1) // the scanner took it first: it kicks
		kicks.Store(0)
	}
	taken := kicks.Load()
	time.Sleep(20 * time.Millisecond)
	if kicks.Load() != taken {
		t.Fatalf("%d kicks for stores Poll had taken", kicks.Load()-taken)
	}
	word.Store(1001)
	waitKicks(t, &kicks, taken+1)
	if b.Poll() {
		t.Fatal("Poll took a store the scanner had taken")
	}
}
