package fs

import (
	"bytes"
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"github.com/kfdemu/kfdemu/internal/seccomp"
	"github.com/kfdemu/kfdemu/kfd/abi"
	"golang.org/x/sys/unix"
)

// The seccomp supervisor. A FUSE reply cannot create a file descriptor in the caller, so the
// ioctls that return one (abi.FDIoctls: EXPORT_DMABUF, PRIME_HANDLE_TO_FD) cannot be answered
// through the device file. `kfdemu exec` installs a seccomp filter in the command it starts
// (fs/nsexec) that stops exactly those ioctl commands and hands the filter's listener to this
// daemon by writing its fd number to MNT/sys/kernel/debug/kfdemu/supervise. For every stopped call
// the daemon
//
//  1. takes a copy of the client's fd (pidfd_getfd) and lets the kernel run the call as usual
//     (SECCOMP_USER_NOTIF_FLAG_CONTINUE) unless it is an open of this mount;
//  2. copies the argument in from the client and issues the same ioctl on its copy of the fd, so
//     that it reaches the same open file description's handler through FUSE, with the client as
//     the caller (the handler recognises the daemon's thread: supervisor.call) and the right to
//     install fds (caller.sup: SECCOMP_IOCTL_NOTIF_ADDFD);
//  3. copies the argument back and answers the client's call with the handler's result.
//
// Without kfdemu exec (or where the filter cannot be installed) those ioctls get EOPNOTSUPP from
// the handler, as documented in the README's deviations.

// supervisor is the daemon's side: the calls in flight by daemon thread, and the listeners, which
// stop closes (Unmount). A listener waits in the Go runtime's poller, not on a thread of its own.
type supervisor struct {
	s         *Server
	mu        sync.Mutex
	calls     map[int]*supCall // daemon thread id -> the client call it is making
	listeners map[*os.File]bool
	stopped   bool
}

// supCall is one stopped client call being answered.
type supCall struct {
	listener syscall.RawConn // the listener, reached through the runtime's poller (stop may close it)
	id       uint64          // the notification
	tgid     int             // the client
}

// ctl runs f on the listener's fd; it fails if the listener was closed.
func (c *supCall) ctl(f func(fd int) error) error {
	var err error
	if cerr := c.listener.Control(func(fd uintptr) { err = f(int(fd)) }); cerr != nil {
		return cerr
	}
	return err
}

func newSupervisor(s *Server) *supervisor {
	return &supervisor{s: s, calls: map[int]*supCall{}, listeners: map[*os.File]bool{}}
}

// stop ends every listener loop (Unmount).
func (sv *supervisor) stop() {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	sv.stopped = true
	for f := range sv.listeners {
		f.Close()
	}
}

// count is the number of listeners served (process trees under kfdemu exec).
func (sv *supervisor) count() int {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	return len(sv.listeners)
}

// call returns the client call daemon thread tid is making, or nil.
func (sv *supervisor) call(tid uint32) *supCall {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	return sv.calls[int(tid)]
}

// addFD installs the daemon's fd src in the client of c (kfd.Installer through caller).
func (c *supCall) addFD(src int, cloexec bool) (int, error) {
	var n int
	err := c.ctl(func(fd int) (err error) {
		n, err = seccomp.AddFD(fd, c.id, src, cloexec)
		return err
	})
	return n, err
}

// superviseWrite serves a write of "FD\n" to kfdemu/supervise: FD is the writer's listener.
func (s *Server) superviseWrite(ctx context.Context, data []byte) syscall.Errno {
	n, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || n < 0 {
		s.opts.Log.Warn("supervise: bad listener fd", "data", strings.TrimSpace(string(data)))
		return syscall.EINVAL
	}
	tgid := s.dev.callerTgid(ctx)
	l, err := (&caller{tgid: tgid, d: s.dev}).GetFD(n)
	if err != nil {
		s.opts.Log.Warn("supervise: cannot take the listener", "tgid", tgid, "fd", n, "err", err)
		return syscall.EBADF
	}
	lfd, err := unix.Dup(int(l.Fd()))
	l.Close()
	if err != nil {
		return syscall.EMFILE
	}
	if link, _ := os.Readlink("/proc/self/fd/" + strconv.Itoa(lfd)); link != "anon_inode:seccomp notify" {
		unix.Close(lfd)
		s.opts.Log.Warn("supervise: not a seccomp listener", "tgid", tgid, "fd", n, "file", link)
		return syscall.EINVAL
	}
	s.opts.Log.Debug("supervising a process tree", "tgid", tgid)
	go s.sup.serve(lfd)
	return 0
}

// serve answers the notifications of one listener until every process of its filter has exited
// (POLLHUP) or the daemon stops.
func (sv *supervisor) serve(l int) {
	if err := unix.SetNonblock(l, true); err != nil {
		unix.Close(l)
		return
	}
	f := os.NewFile(uintptr(l), "seccomp-listener")
	sv.mu.Lock()
	if sv.stopped {
		sv.mu.Unlock()
		f.Close()
		return
	}
	sv.listeners[f] = true
	sv.mu.Unlock()
	defer func() {
		sv.mu.Lock()
		delete(sv.listeners, f)
		sv.mu.Unlock()
		f.Close()
	}()
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	for {
		var n *seccomp.Notif
		var rerr error
		hup := false
		err := rc.Read(func(fd uintptr) bool {
			p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			k, perr := unix.Poll(p, 0)
			switch {
			case perr == syscall.EINTR || perr == nil && k == 0:
				return false // nothing yet: wait in the poller
			case perr != nil:
				rerr = perr
				return true
			}
			if p[0].Revents&unix.POLLIN != 0 {
				n, rerr = seccomp.Recv(int(fd)) // a notification is pending: RECV does not block
			} else {
				hup = true // POLLHUP: no process uses the filter any more
			}
			return true
		})
		switch {
		case err != nil || hup:
			return // closed by stop, or nothing left to supervise
		case rerr == syscall.ENOENT:
			continue // the caller left before we took it
		case rerr != nil:
			sv.s.opts.Log.Warn("supervise: receive", "err", rerr)
			return
		case n != nil:
			go sv.answer(&supCall{listener: rc, id: n.ID}, n)
		}
	}
}

// answer serves one stopped ioctl (see the top of the file).
func (sv *supervisor) answer(call *supCall, n *seccomp.Notif) {
	s := sv.s
	reply := func(errno syscall.Errno) {
		if err := call.ctl(func(fd int) error { return seccomp.Return(fd, n.ID, 0, errno) }); err != nil && err != syscall.ENOENT {
			s.opts.Log.Warn("supervise: answer", "err", err)
		}
	}
	tgid := s.dev.tgidOf(n.Pid)
	pfd, err := unix.PidfdOpen(tgid, 0)
	if err != nil {
		reply(syscall.ESRCH)
		return
	}
	defer unix.Close(pfd)
	if call.ctl(func(fd int) error {
		if !seccomp.Valid(fd, n.ID) {
			return syscall.ENOENT
		}
		return nil
	}) != nil {
		return // gone, or the pid is no longer the caller's
	}
	nfd, err := unix.PidfdGetfd(pfd, int(int32(n.Args[0])), 0)
	if err != nil {
		reply(syscall.EBADF)
		return
	}
	defer unix.Close(nfd)
	var st unix.Stat_t
	if unix.Fstat(nfd, &st) != nil || st.Dev != s.devNum() {
		if err := call.ctl(func(fd int) error { return seccomp.Continue(fd, n.ID) }); err != nil && err != syscall.ENOENT {
			s.opts.Log.Warn("supervise: continue", "err", err)
		}
		return
	}
	cmd := uint32(n.Args[1])
	c := &caller{tgid: tgid, d: s.dev}
	arg := make([]byte, abi.IOCSize(cmd))
	if len(arg) == 0 || c.ReadMemory(n.Args[2], arg) != nil {
		reply(syscall.EFAULT)
		return
	}
	orig := bytes.Clone(arg)
	call.tgid = tgid
	errno := sv.ioctlAs(call, nfd, cmd, arg)
	if !bytes.Equal(arg, orig) && c.WriteMemory(n.Args[2], arg) != nil && errno == 0 {
		errno = syscall.EFAULT
	}
	reply(errno)
}

// ioctlAs issues cmd on the daemon's copy fd of a client's device file, registered as call so that
// the FUSE handler serves it for the client.
func (sv *supervisor) ioctlAs(call *supCall, fd int, cmd uint32, arg []byte) syscall.Errno {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tid := unix.Gettid()
	sv.mu.Lock()
	sv.calls[tid] = call
	sv.mu.Unlock()
	_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(cmd), uintptr(unsafe.Pointer(&arg[0])))
	sv.mu.Lock()
	delete(sv.calls, tid)
	sv.mu.Unlock()
	return e
}
