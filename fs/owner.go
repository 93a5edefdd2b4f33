package fs

import (
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ownerThread reports whether thread tid belongs to process owner, in two system calls and
// without allocating: the ioctl path's replacement for reading /proc/TID/status (tgidOf), which
// cost about 9 KiB of garbage per ioctl, enough to keep the garbage collector running every few
// hundred requests and to put its mark phases into the latency tail of every ioctl.
//
// /proc/OWNER/task/TID exists exactly when TID is in the thread group of the task whose pid is
// OWNER (proc_task_lookup: same_thread_group); and pid OWNER is still the owner's (its leader's
// pid is not reused while the group has not been reaped) when the pidfd taken at open (-1: none)
// accepts signal 0 after that lookup. False means "not known": the caller falls back to tgidOf.
func ownerThread(pidfd, owner int, tid uint32) bool {
	if pidfd < 0 || owner <= 0 || tid == 0 {
		return false
	}
	fdcwd := unix.AT_FDCWD // a variable: the constant is negative
	var a [48]byte
	p := append(a[:0], "/proc/"...)
	p = strconv.AppendInt(p, int64(owner), 10)
	p = append(p, "/task/"...)
	p = strconv.AppendUint(p, uint64(tid), 10)
	p = append(p, 0)
	if _, _, e := unix.Syscall6(unix.SYS_FACCESSAT, uintptr(fdcwd), uintptr(unsafe.Pointer(&p[0])), unix.F_OK, 0, 0, 0); e != 0 {
		return false
	}
	return unix.PidfdSendSignal(pidfd, 0, nil, 0) == nil
}

// ownerPidfd opens a pidfd of process tgid for ownerThread, or returns -1 (no pidfd_open: Linux
// before 5.3, or the process is gone).
func ownerPidfd(tgid int) int {
	fd, err := unix.PidfdOpen(tgid, 0)
	if err != nil {
		return -1
	}
	return fd
}
