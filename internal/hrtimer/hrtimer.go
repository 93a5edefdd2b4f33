// Package hrtimer is a timer for sub-millisecond sleeps that keeps its precision while the
// process is otherwise idle.
//
// Go's timers are run by the scheduler. A process with no runnable goroutine waits for its next
// timer in the netpoller's epoll_wait, whose timeout is in whole milliseconds (the runtime's
// netpoll_epoll.go rounds a delay under 1 ms up to 1 ms), so a 50 µs time.Timer fires after
// 1.05-1.2 ms when nothing else runs, or when the only running goroutines never enter the
// scheduler (a thread spinning with sched_yield). A Timer here is also a timerfd (the kernel's
// hrtimer) that the netpoller watches: its expiry makes epoll_wait return at once, and a helper
// goroutine reading it sends on C. The timerfd is armed only for delays under Fine (1 ms): from
// there on the netpoller's rounding costs a few percent, and a poll every millisecond (a blocked
// queue's steady state) would pay the timerfd's system calls and wake-ups for nothing
// (BenchmarkBlockedQueueCPU in gpu/cp, 8 queues in their first second: 5.9-7.3 % of a CPU with
// time.Timer alone, 15.4-17.1 % with Fine at 4 ms).
//
// A Timer is both: Reset arms a time.Timer (G) as well, which fires first when a goroutine keeps
// the scheduler running (each schedule runs due timers, and the netpoller is then polled only
// now and then). Wait on both channels.
package hrtimer

import (
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Fine bounds the delays Reset arms the timerfd for (those under it).
const Fine = time.Millisecond

// Timer is a timerfd and a time.Timer armed together. Its methods are for one goroutine.
type Timer struct {
	// C receives after the timerfd expires (nil, never ready, when the timerfd could not be
	// made). A value may be left from an expiry before the last Reset: a spurious early wake-up,
	// harmless for a poll (which is all a Timer is for).
	C <-chan struct{}
	// G is the time.Timer's channel.
	G <-chan time.Time

	tm   *time.Timer
	c    chan struct{}
	fd   int
	f    *os.File
	done chan struct{}
	on   bool // the timerfd is armed
}

// New returns a stopped Timer. Close releases its file and goroutine.
func New() *Timer {
	t := &Timer{tm: time.NewTimer(time.Hour), fd: -1}
	t.tm.Stop()
	t.G = t.tm.C
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return t // time.Timer only
	}
	t.fd, t.f = fd, os.NewFile(uintptr(fd), "hrtimer") // non-blocking: read through the netpoller
	t.c, t.done = make(chan struct{}, 1), make(chan struct{})
	t.C = t.c
	go t.read()
	return t
}

func (t *Timer) read() {
	defer close(t.done)
	var b [8]byte // the expiry count
	for {
		if _, err := t.f.Read(b[:]); err != nil {
			return // closed
		}
		select {
		case t.c <- struct{}{}:
		default:
		}
	}
}

// Reset arms the timer to fire after d (both the timerfd, when d < Fine, and the time.Timer).
func (t *Timer) Reset(d time.Duration) {
	t.tm.Reset(d)
	if t.f == nil || d >= Fine {
		t.stopFD()
		return
	}
	select { // an expiry of an earlier arming
	case <-t.c:
	default:
	}
	// Setting the timerfd replaces an arming still pending: no disarm first.
	unix.TimerfdSettime(t.fd, 0, &unix.ItimerSpec{Value: unix.NsecToTimespec(max(int64(d), 1))}, nil)
	t.on = true
}

// Stop disarms both.
func (t *Timer) Stop() {
	t.tm.Stop()
	t.stopFD()
}

func (t *Timer) stopFD() {
	if t.on {
		unix.TimerfdSettime(t.fd, 0, &unix.ItimerSpec{}, nil)
		t.on = false
	}
}

// Close stops the timer and ends its goroutine.
func (t *Timer) Close() {
	t.tm.Stop()
	if t.f != nil {
		t.f.Close()
		<-t.done
		t.f = nil
	}
}

// The pool of stopped Timers Get and Put share: a Timer costs a descriptor and a goroutine, which
// a user that sleeps only now and then (a queue blocked on a barrier) need not keep.
var pool struct {
	mu   sync.Mutex
	free []*Timer
}

// poolMax is how many stopped Timers the pool keeps.
const poolMax = 8

// Get returns a stopped Timer from the pool, or a new one; Put gives it back.
func Get() *Timer {
	pool.mu.Lock()
	if n := len(pool.free); n > 0 {
		t := pool.free[n-1]
		pool.free = pool.free[:n-1]
		pool.mu.Unlock()
		return t
	}
	pool.mu.Unlock()
	return New()
}

// Put stops t and keeps it for a later Get, or closes it when the pool is full. t must not be
// used afterwards.
func (t *Timer) Put() {
	t.Stop()
	if t.c != nil {
		select { // an expiry before the Stop
		case <-t.c:
		default:
		}
	}
	pool.mu.Lock()
	if len(pool.free) < poolMax {
		pool.free = append(pool.free, t)
		pool.mu.Unlock()
		return
	}
	pool.mu.Unlock()
	t.Close()
}

// Sleep is time.Sleep(d) through a pooled Timer: for short sleeps of a daemon that may be
// otherwise idle.
func Sleep(d time.Duration) {
	if d <= 0 {
		return
	}
	t := Get()
	t.Reset(d)
	select {
	case <-t.C:
	case <-t.G:
	}
	t.Put()
}
