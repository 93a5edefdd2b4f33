package mmnotify

import (
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ringWait is how the reader goroutine sleeps until the ring buffer has records: in Go's
// netpoller, on a non-blocking duplicate of the ring buffer map's descriptor, while
// ringbuf.Reader reads without blocking (a deadline in the past).
//
// Why not ringbuf.Reader's own wait: it blocks in epoll_wait as a plain system call, and a
// goroutine in a system call keeps its P until sysmon takes it back (20 µs to 10 ms later, the
// longer the daemon has been idle). The reader re-enters that wait after every record, so right
// after a client's mmap or munmap the daemon had one P less, and a goroutine readied meanwhile
// waited in a run queue: traced in kfdemu bench's one-packet-at-a-time fault figure (2 Ps, the
// in-process client on one), the doorbell watcher's timer fired and its goroutine then waited
// 90 µs for the P the reader held. A goroutine parked in the netpoller holds neither a P nor a
// thread.
type ringWait struct {
	f  *os.File
	rc syscall.RawConn
}

// newRingWait returns nil when the descriptor cannot be polled through the netpoller: the reader
// then keeps ringbuf.Reader's blocking wait.
func newRingWait(fd int) *ringWait {
	d, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	// O_NONBLOCK is a flag of the open file description the duplicate shares with the map's
	// descriptor: a map has no read(2) for it to change, and ringbuf.Reader polls its own epoll.
	if err := unix.SetNonblock(d, true); err != nil {
		unix.Close(d)
		return nil
	}
	f := os.NewFile(uintptr(d), "mmnotify-ringbuf") // non-blocking: registered with the netpoller
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil
	}
	w := &ringWait{f: f, rc: rc}
	// A descriptor the netpoller refused is not pollable: RawConn.Read then calls its function
	// once and returns. Probe with a deadline in the past: a pollable file returns the deadline's
	// error without calling the function a second time.
	if err := f.SetReadDeadline(time.Unix(0, 1)); err != nil { // os.ErrNoDeadline: not pollable
		f.Close()
		return nil
	}
	f.SetReadDeadline(time.Time{})
	return w
}

// wait returns when ready reports records, waiting in the netpoller for the descriptor to
// become readable while it does not; an error means the file was closed.
func (w *ringWait) wait(ready func() bool) error {
	return w.rc.Read(func(uintptr) bool { return ready() })
}

func (w *ringWait) close() { w.f.Close() }
