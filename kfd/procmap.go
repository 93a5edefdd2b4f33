package kfd

import (
	"errors"
	"runtime"
	"strconv"
	"strings"
	"unsafe"

	"github.com/kfdemu/kfdemu/kfd/svm"
	"golang.org/x/sys/unix"
)

// procmapQuery is struct procmap_query (include/uapi/linux/fs.h, Linux 6.11): PROCMAP_QUERY on an
// open /proc/PID/maps returns the VMA that covers an address, its permissions and its name as the
// maps file prints it, in one ioctl instead of the whole file (Debian's linux-libc-dev 6.1 and
// x/sys do not have it yet).
type procmapQuery struct {
	Size        uint64 // in: sizeof(struct procmap_query)
	QueryFlags  uint64 // in: PROCMAP_QUERY_* (0: the VMA covering QueryAddr)
	QueryAddr   uint64 // in
	VMAStart    uint64 // out
	VMAEnd      uint64 // out
	VMAFlags    uint64 // out: PROCMAP_QUERY_VMA_*
	VMAPageSize uint64 // out
	VMAOffset   uint64 // out
	Inode       uint64 // out
	DevMajor    uint32 // out
	DevMinor    uint32 // out
	VMANameSize uint32 // in: buffer size; out: name length with its NUL, 0 without a name
	BuildIDSize uint32 // in/out
	VMANameAddr uint64 // in
	BuildIDAddr uint64 // in
}

const (
	// procmapQueryCmd is PROCMAP_QUERY, _IOWR(PROCFS_IOCTL_MAGIC 'f', 17, struct procmap_query).
	procmapQueryCmd = 3<<30 | uint(unsafe.Sizeof(procmapQuery{}))<<16 | 'f'<<8 | 17

	procmapVMAReadable = 0x01 // PROCMAP_QUERY_VMA_READABLE
	procmapVMAWritable = 0x02 // PROCMAP_QUERY_VMA_WRITABLE

	// procmapNameMax is the name buffer: a path of at most PATH_MAX and its NUL.
	procmapNameMax = unix.PathMax + 1
)

// errNoProcmapQuery: the kernel has no PROCMAP_QUERY (before 6.11): read the whole file.
var errNoProcmapQuery = errors.New("kfd: PROCMAP_QUERY not supported")

// queryVMA asks the kernel for the VMA of process tgid that covers addr (vma_lookup). name is the
// caller's buffer of procmapNameMax bytes for the VMA's name. found is false when no VMA covers
// addr (ENOENT).
func queryVMA(tgid int, addr uint64, name []byte) (v svm.VMA, found bool, err error) {
	fd, err := unix.Open("/proc/"+strconv.Itoa(tgid)+"/maps", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return svm.VMA{}, false, err
	}
	defer unix.Close(fd)
	q := procmapQuery{Size: uint64(unsafe.Sizeof(procmapQuery{})), QueryAddr: addr,
		VMANameSize: uint32(len(name)), VMANameAddr: uint64(uintptr(unsafe.Pointer(&name[0])))}
	_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(procmapQueryCmd), uintptr(unsafe.Pointer(&q)))
	runtime.KeepAlive(name)
	switch e {
	case 0:
	case unix.ENOENT:
		return svm.VMA{}, false, nil
	case unix.ENOTTY, unix.EINVAL:
		return svm.VMA{}, false, errNoProcmapQuery
	default:
		return svm.VMA{}, false, e
	}
	var path string
	if n := int(q.VMANameSize); n > 0 && n <= len(name) {
		path = string(name[:n-1])
	}
	v = svm.VMA{Start: q.VMAStart, End: q.VMAEnd, Read: q.VMAFlags&procmapVMAReadable != 0,
		Write: q.VMAFlags&procmapVMAWritable != 0}
	classifyVMA(&v, path)
	return v, true, nil
}

// classifyVMA sets what a VMA's name in /proc/PID/maps tells: the initial heap and stack, and
// mappings of the kfd and render device files (VM_IO/VM_PFNMAP in the kernel: not valid for SVM).
func classifyVMA(v *svm.VMA, path string) {
	v.HeapStack = path == "[heap]" || path == "[stack]"
	v.Device = strings.HasSuffix(path, "/dev/kfd") || strings.Contains(path, "/dev/dri/")
}
