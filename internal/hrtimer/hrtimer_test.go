package hrtimer

import (
	"runtime"
	"testing"
	"time"
)

// waitFire waits for either channel of t, or fails after limit.
func waitFire(tb testing.TB, t *Timer, limit time.Duration) (fd bool) {
	tb.Helper()
	select {
	case <-t.C:
		return true
	case <-t.G:
		return false
	case <-time.After(limit):
		tb.Fatalf("no expiry within %v", limit)
	}
	return false
}

// The timerfd side fires, Stop keeps both sides from firing, Reset re-arms, Close ends the
// reading goroutine.
func TestTimer(t *testing.T) {
	before := runtime.NumGoroutine()
	tm := New()
	if tm.C == nil {
		t.Skip("no timerfd on this system: time.Timer only")
	}
	// A delay under Fine arms the timerfd: its channel receives (the time.Timer's may too).
	tm.Reset(200 * time.Microsecond)
	deadline := time.After(5 * time.Second)
	for fd := false; !fd; {
		select {
		case <-tm.C:
			fd = true
		case <-tm.G: // the time.Timer was first: keep waiting for the timerfd
		case <-deadline:
			t.Fatal("the timerfd never fired")
		}
	}
	// Stopped: neither side fires.
	tm.Reset(time.Millisecond)
	tm.Stop()
	select {
	case <-tm.C:
		t.Fatal("the timerfd fired after Stop")
	case <-tm.G:
		t.Fatal("the time.Timer fired after Stop")
	case <-time.After(20 * time.Millisecond):
	}
	// Beyond Fine only the time.Timer is armed.
	tm.Reset(Fine)
	if fd := waitFire(t, tm, 5*time.Second); fd {
		t.Fatal("the timerfd was armed for a delay of Fine")
	}
	tm.Close()
	tm.Close() // idempotent
	for i := 0; runtime.NumGoroutine() > before; i++ {
		if i > 1000 {
			t.Fatalf("%d goroutines after Close, %d before", runtime.NumGoroutine(), before)
		}
		time.Sleep(time.Millisecond)
	}
}

// BenchmarkSleep50us reports how late a 50 µs sleep wakes, through a time.Timer alone and
// through a Timer, in an otherwise idle process: the netpoller's millisecond timeout makes the
// first about 1 ms late; the timerfd's expiry ends that wait at once.
func BenchmarkSleep50us(b *testing.B) {
	const d = 50 * time.Microsecond
	b.Run("time.Timer", func(b *testing.B) {
		tm := time.NewTimer(time.Hour)
		var late time.Duration
		for range b.N {
			t0 := time.Now()
			tm.Reset(d)
			<-tm.C
			late += time.Since(t0) - d
		}
		b.ReportMetric(float64(late.Nanoseconds())/float64(b.N), "ns-late/op")
	})
	b.Run("hrtimer", func(b *testing.B) {
		tm := New()
		defer tm.Close()
		var late time.Duration
		for range b.N {
			t0 := time.Now()
			tm.Reset(d)
			select {
			case <-tm.C:
			case <-tm.G:
			}
			late += time.Since(t0) - d
		}
		b.ReportMetric(float64(late.Nanoseconds())/float64(b.N), "ns-late/op")
	})
}

// Put keeps up to poolMax stopped Timers for Get and closes the rest; a Timer from the pool works
// and has no expiry left from before its Put.
func TestPool(t *testing.T) {
	before := runtime.NumGoroutine()
	var ts []*Timer
	for range poolMax + 3 {
		ts = append(ts, Get())
	}
	ts[0].Reset(time.Microsecond)
	time.Sleep(10 * time.Millisecond) // expired, never received
	for _, tm := range ts {
		tm.Put()
	}
	pool.mu.Lock()
	kept := len(pool.free)
	pool.mu.Unlock()
	if kept != poolMax {
		t.Fatalf("the pool keeps %d timers, want %d", kept, poolMax)
	}
	for range poolMax {
		tm := Get()
		select {
		case <-tm.C:
			t.Fatal("a pooled timer's channel held an expiry from before its Put")
		case <-tm.G:
			t.Fatal("a pooled timer's time.Timer fired after its Put")
		default:
		}
		tm.Reset(100 * time.Microsecond)
		waitFire(t, tm, 5*time.Second)
		tm.Close()
	}
	for i := 0; runtime.NumGoroutine() > before; i++ {
		if i > 1000 {
			t.Fatalf("%d goroutines after the pool's timers were closed, %d before", runtime.NumGoroutine(), before)
		}
		time.Sleep(time.Millisecond)
	}
}
