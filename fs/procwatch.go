package fs

import (
	"sync"

	"golang.org/x/sys/unix"
)

// procWatch calls exited(tgid) once each watched process has exited, so that a client killed with
// SIGKILL is torn down even while the kernel is still closing its files. One goroutine waits on an
// epoll set of pidfds; an idle daemon blocks in epoll_wait and uses no CPU.
type procWatch struct {
	mu     sync.Mutex
	epfd   int
	wake   int         // eventfd to stop the loop
	pids   map[int]int // tgid -> pidfd
	fds    map[int]int // pidfd -> tgid
	exited func(tgid int)
	done   chan struct{}
}

func newProcWatch(exited func(int)) (*procWatch, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	wake, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		unix.Close(epfd)
		return nil, err
	}
	unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, wake, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(wake)})
	w := &procWatch{epfd: epfd, wake: wake, pids: map[int]int{}, fds: map[int]int{}, exited: exited,
		done: make(chan struct{})}
	go w.loop()
	return w, nil
}

// add starts watching tgid (idempotent).
func (w *procWatch) add(tgid int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.pids[tgid]; ok || w.fds == nil {
		return
	}
	pfd, err := unix.PidfdOpen(tgid, 0)
	if err != nil {
		return // already gone: the release path tears it down
	}
	if err := unix.EpollCtl(w.epfd, unix.EPOLL_CTL_ADD, pfd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(pfd)}); err != nil {
		unix.Close(pfd)
		return
	}
	w.pids[tgid], w.fds[pfd] = pfd, tgid
}

func (w *procWatch) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.pids)
}

func (w *procWatch) loop() {
	defer close(w.done)
	evs := make([]unix.EpollEvent, 16)
	for {
		n, err := unix.EpollWait(w.epfd, evs, -1)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return
		}
		for _, ev := range evs[:n] {
			fd := int(ev.Fd)
			if fd == w.wake {
				return
			}
			w.mu.Lock()
			tgid, ok := w.fds[fd]
			if ok {
				delete(w.fds, fd)
				delete(w.pids, tgid)
				unix.EpollCtl(w.epfd, unix.EPOLL_CTL_DEL, fd, nil)
				unix.Close(fd)
			}
			w.mu.Unlock()
			if ok {
				w.exited(tgid)
			}
		}
	}
}

func (w *procWatch) close() {
	unix.Write(w.wake, []byte{1, 0, 0, 0, 0, 0, 0, 0})
	<-w.done
	w.mu.Lock()
	for fd := range w.fds {
		unix.Close(fd)
	}
	w.fds, w.pids = nil, nil
	w.mu.Unlock()
	unix.Close(w.epfd)
	unix.Close(w.wake)
}
