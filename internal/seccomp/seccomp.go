// Package seccomp hands chosen ioctl commands of a process tree to a supervisor through a seccomp
// user-notification filter (SECCOMP_RET_USER_NOTIF, Linux 5.0), and gives the supervisor the
// notification ioctls it needs: receive, check, answer and install an fd in the caller
// (SECCOMP_IOCTL_NOTIF_ADDFD, Linux 5.9). Layouts are <linux/seccomp.h>'s.
//
// kfdemu uses it for the ioctls that return a new file descriptor (dma-buf export), which a FUSE
// reply cannot create: `kfdemu exec` installs the filter in the command it starts and hands the
// listener to the daemon, which answers those calls (package fs, supervise.go).
package seccomp

import (
	"errors"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Notif is struct seccomp_notif with its struct seccomp_data.
type Notif struct {
	ID    uint64
	Pid   uint32 // the calling thread, in the supervisor's pid namespace
	Flags uint32
	Nr    int32
	Arch  uint32
	IP    uint64
	Args  [6]uint64
}

// resp is struct seccomp_notif_resp.
type resp struct {
	ID    uint64
	Val   int64
	Error int32
	Flags uint32
}

// addfd is struct seccomp_notif_addfd.
type addfd struct {
	ID         uint64
	Flags      uint32
	SrcFD      uint32
	NewFD      uint32
	NewFDFlags uint32
}

// The layouts the ioctl numbers encode (x/sys's constants carry the sizes).
const (
	sizeofNotif = 80
	sizeofResp  = 24
	sizeofAddfd = 24
)

var _ = [1]struct{}{}[unsafe.Sizeof(Notif{})-sizeofNotif]
var _ = [1]struct{}{}[unsafe.Sizeof(resp{})-sizeofResp]
var _ = [1]struct{}{}[unsafe.Sizeof(addfd{})-sizeofAddfd]

// Offsets in struct seccomp_data.
const (
	offNr    = 0
	offArch  = 4
	offArgs1 = 16 + 8 // args[1], low 32 bits on a little-endian machine: the ioctl command
)

// auditArch is this build's AUDIT_ARCH_*; 0 where the filter is not offered.
var auditArch = map[string]uint32{"amd64": unix.AUDIT_ARCH_X86_64, "arm64": unix.AUDIT_ARCH_AARCH64}[runtime.GOARCH]

// ErrUnsupported: no filter for this architecture.
var ErrUnsupported = errors.New("seccomp: user notification not offered on " + runtime.GOARCH)

// IoctlFilter is the classic-BPF program: an ioctl(2) whose command (low 32 bits of the second
// argument, as the kernel reads it) is one of cmds goes to the supervisor; every other system
// call, and every call of another architecture's ABI, is allowed.
func IoctlFilter(cmds []uint32) []unix.SockFilter {
	stmt := func(code uint16, k uint32) unix.SockFilter { return unix.SockFilter{Code: code, K: k} }
	jump := func(k uint32, jt, jf uint8) unix.SockFilter {
		return unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: k, Jt: jt, Jf: jf}
	}
	n := uint8(len(cmds))
	// Layout: 0 ld arch; 1 jeq arch; 2 ld nr; 3 jeq ioctl; 4 ld cmd; 5..5+n-1 jeq cmd_i;
	// 5+n ret allow; 6+n ret notify.
	p := []unix.SockFilter{
		stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, offArch),
		jump(auditArch, 0, 2+n+1), // to allow
		stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, offNr),
		jump(uint32(unix.SYS_IOCTL), 0, n+1), // to allow
		stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, offArgs1),
	}
	for i, c := range cmds {
		p = append(p, jump(c, n-uint8(i), 0)) // to notify
	}
	return append(p, stmt(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_ALLOW), stmt(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_USER_NOTIF))
}

// InstallIoctlFilter installs IoctlFilter(cmds) on the calling thread (and so on what it execs and
// every process that descends from it) and returns the listener. The caller must have locked its
// OS thread and must hold CAP_SYS_ADMIN (no_new_privs is not set: setuid programs keep working).
func InstallIoctlFilter(cmds []uint32) (int, error) {
	if auditArch == 0 || len(cmds) == 0 || len(cmds) > 200 {
		return -1, ErrUnsupported
	}
	return Install(IoctlFilter(cmds))
}

// Install installs the classic-BPF program prog on the calling thread (which must be locked, and
// hold CAP_SYS_ADMIN or have set no_new_privs) with a user-notification listener, and returns the
// listener (SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER).
func Install(prog []unix.SockFilter) (int, error) {
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	fd, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_NEW_LISTENER,
		uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(prog)
	if e != 0 {
		return -1, e
	}
	return int(fd), nil
}

// Recv waits for the next notification (SECCOMP_IOCTL_NOTIF_RECV). ENOENT means the caller went
// away before it was received: try again.
func Recv(listener int) (*Notif, error) {
	var n Notif // the kernel wants it zeroed
	if err := ioctl(listener, unix.SECCOMP_IOCTL_NOTIF_RECV, unsafe.Pointer(&n)); err != nil {
		return nil, err
	}
	return &n, nil
}

// Valid reports whether notification id is still pending: its caller is alive and still in the
// call (SECCOMP_IOCTL_NOTIF_ID_VALID). Checked after resolving the caller's pid, so that the pid
// cannot have been reused.
func Valid(listener int, id uint64) bool {
	return ioctl(listener, unix.SECCOMP_IOCTL_NOTIF_ID_VALID, unsafe.Pointer(&id)) == nil
}

// Return answers id: the call returns val, or fails with errno when errno is not 0.
func Return(listener int, id uint64, val int64, errno syscall.Errno) error {
	r := resp{ID: id, Val: val, Error: -int32(errno)}
	return ioctl(listener, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&r))
}

// Continue answers id by letting the kernel run the call as if no filter had stopped it.
func Continue(listener int, id uint64) error {
	r := resp{ID: id, Flags: unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE}
	return ioctl(listener, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&r))
}

// AddFD installs a duplicate of the supervisor's fd src in the caller of notification id, at the
// lowest free number (O_CLOEXEC when cloexec), and returns that number.
func AddFD(listener int, id uint64, src int, cloexec bool) (int, error) {
	a := addfd{ID: id, SrcFD: uint32(src)}
	if cloexec {
		a.NewFDFlags = unix.O_CLOEXEC
	}
	r, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(listener), unix.SECCOMP_IOCTL_NOTIF_ADDFD, uintptr(unsafe.Pointer(&a)))
	if e != 0 {
		return -1, e
	}
	return int(r), nil
}

func ioctl(fd int, req uintptr, arg unsafe.Pointer) error {
	for {
		_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), req, uintptr(arg))
		if e == syscall.EINTR {
			continue
		}
		if e != 0 {
			return e
		}
		return nil
	}
}
