package drm

import (
	"container/heap"
	"context"
	"errors"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// Backend is the memory and GPUVM behind a render-node file: package kfd implements it over the
// process's render-node memfd, the driver's physical memory and accounting, and the process's GPUVM
// of the GPU. It is called without any lock of this package held, except that the File serialises
// its own Map and Unmap calls.
type Backend interface {
	// Alloc places a buffer of size bytes (a page multiple) in the first of domains
	// (AMDGPU_GEM_DOMAIN_*) that has room, in TTM's placement order VRAM, GTT, CPU (no domain: CPU),
	// and accounts it in the device's usage. ErrNoMemory when none has room.
	Alloc(domains uint32, size uint64) (*Buffer, error)
	// Free releases a buffer that no mapping refers to any more.
	Free(b *Buffer)
	// Map maps [va, va+size) to b's bytes from offset (b nil: a PRT range without memory) with
	// AMDGPU_VM_PAGE_* flags. ErrConflict if the range overlaps a mapping of the VM.
	Map(va uint64, b *Buffer, offset, size uint64, flags uint32) error
	// Unmap removes whatever this file mapped in [va, va+size); the range's memory is no longer
	// reachable by any engine when it returns.
	Unmap(va, size uint64) error
	// Engine returns an engine's view of the GPUVM (its own TLB) and the function that releases it.
	Engine() (GPUMemory, func(), error)
	// RunPM4 executes PM4 IBs of the COMPUTE IP in order on a compute ring of the GPU, dispatches
	// included, and returns when the last has ended: nil, ErrStopped once stop is closed, or the
	// engine's error (a fault, a packet it cannot execute).
	RunPM4(ibs []IB, stop <-chan struct{}) error
	// Clock is the GPU's 100 MHz timestamp counter.
	Clock() uint64
	// ExportFD is amdgpu_gem_prime_export with dma_buf_fd: the buffer's dma-buf (made at the first
	// export; from then on it owns the buffer's memory, and Free drops the object's reference to
	// it) installed as a new fd of the caller m. EOPNOTSUPP when m cannot receive fds.
	ExportFD(m Memory, b *Buffer, ex Export) (fd int32, errno syscall.Errno)
	// ImportFD is amdgpu_gem_prime_import of the dma-buf the client's fd names: a buffer of this
	// device sharing its memory, holding a reference to it until Free, and the dma-buf's identity
	// (one dma-buf is one object of a file, imported or exported). EBADF for an fd that is not open,
	// EINVAL for one that is not a dma-buf of this device (dma_buf_get, amdgpu_dmabuf_ops).
	ImportFD(m Memory, fd int32) (b *Buffer, key uint64, errno syscall.Errno)
	// BufferKey is the identity of b's dma-buf, 0 if it was never exported.
	BufferKey(b *Buffer) uint64
}

// Export describes a GEM object to Backend.ExportFD.
type Export struct {
	Preferred uint32        // preferred_domains
	Flags     uint64        // amdgpu_bo.flags (CPU_ACCESS_REQUIRED matters to KFD's import)
	Meta      func() []byte // the object's current metadata (amdgpu_bo_get_metadata)
	CloExec   bool          // DRM_CLOEXEC
}

// GPUMemory is an engine's access to the GPUVM (gpu/sdma's Memory; mmu.Port implements it).
type GPUMemory interface {
	Read(va uint64, p []byte) error
	Write(va uint64, p []byte) error
	Atomic(va uint64, size int, f func(old uint64) uint64) (uint64, error)
}

// IB is an indirect buffer of a submission: its start in the GPUVM and its length.
type IB struct {
	VA     uint64
	Dwords uint32
}

// Buffer is the memory of one GEM object.
type Buffer struct {
	Domain uint32 // the domain it was placed in (one AMDGPU_GEM_DOMAIN_* bit)
	Size   uint64
	Offset uint64 // mmap offset on the render node
	Mem    []byte // the daemon's mapping of its pages
	Priv   any    // the Backend's
	// NoMmap: the pages are not in this node's backing (an import of another process's dma-buf),
	// so GEM_MMAP cannot give an offset for them.
	NoMmap bool
}

// Backend errors.
var (
	ErrNoMemory = errors.New("drm: no room in the requested domains")
	ErrConflict = errors.New("drm: range overlaps a mapping of the VM")
	ErrGone     = errors.New("drm: the process is gone")
	ErrStopped  = errors.New("drm: execution stopped")
)

// File is one open of the render node (drm_file with amdgpu_fpriv): its GEM handles, contexts and
// BO lists, and the jobs its command submissions queued. Several goroutines may call Ioctl at once.
//
// Lock order: vaMu (GEM_VA and the unmapping GEM_CLOSE does, as amdgpu's VM root reservation) before
// mu; mu before an entity's mu. Backend calls are made with neither mu nor an entity's mu held (vaMu
// may be). No lock is held while waiting for a fence or touching client memory.
type File struct {
	dev *Device
	be  Backend
	log *slog.Logger

	vaMu sync.Mutex
	prt  []*mapping // PRT mappings (fpriv->prt_va), under vaMu

	mu           sync.Mutex
	closed       bool
	bos          idr[*gemBO]
	ctxs         idr[*gpuCtx]
	lists        idr[*boList]
	vmidReserved bool
	resets       uint32 // "GPU resets" a guilty job of this file caused (amdgpu's gpu_reset_counter)

	stop chan struct{} // closed by Close: running jobs stop
	jobs sync.WaitGroup
}

// NewFile opens the node d for a client whose memory and GPUVM are be (nil: no GEM objects can be
// created; every GEM ioctl then fails as on a process that is gone).
func NewFile(d *Device, be Backend, log *slog.Logger) *File {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	f := &File{dev: d, be: be, log: log, stop: make(chan struct{})}
	f.bos.init(1, 1<<31)
	f.ctxs.init(1, maxContexts)
	f.lists.init(1, 1<<31)
	return f
}

// Device returns the node the file is open on.
func (f *File) Device() *Device { return f.dev }

// Close is amdgpu_driver_postclose_kms: running and queued jobs are stopped (their fences signal
// ECANCELED), then contexts, BO lists and GEM handles go, which unmaps and frees every buffer. It is
// idempotent; ioctls after it fail with ENODEV.
func (f *File) Close() {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return
	}
	f.closed = true
	close(f.stop)
	f.mu.Unlock()
	f.jobs.Wait()
	f.vaMu.Lock()
	defer f.vaMu.Unlock()
	f.mu.Lock()
	bos, lists := f.bos.all(), f.lists.all()
	f.bos.clear()
	f.lists.clear()
	f.ctxs.clear()
	f.mu.Unlock()
	for _, l := range lists {
		l.release(f)
	}
	for _, bo := range bos {
		f.unmapAll(bo)
		bo.put(f)
	}
	for _, m := range f.prt {
		f.be.Unmap(m.va(), m.size())
	}
	f.prt = nil
}

// Stats counts what the file holds (leak checks).
func (f *File) Stats() (objects, contexts, lists int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.bos.len(), f.ctxs.len(), f.lists.len()
}

// open reports whether the file can still be used; with f.mu held.
func (f *File) usable() bool { return !f.closed && f.be != nil }

// reject logs a refused request at debug level and returns its errno.
func (f *File) reject(m Memory, errno syscall.Errno, msg string, args ...any) syscall.Errno {
	if f.log.Enabled(context.Background(), slog.LevelDebug) {
		if t, ok := m.(interface{ Tgid() int }); ok {
			args = append(args, "tgid", t.Tgid())
		}
		f.log.Debug("render node: "+msg, append(args, "errno", errno.Error())...)
	}
	return errno
}

// interrupted is the client's interrupt channel (nil: never).
func interrupted(m Memory) <-chan struct{} {
	if c, ok := m.(interface{ Interrupted() <-chan struct{} }); ok {
		return c.Interrupted()
	}
	return nil
}

// capable reports whether the client has capability cap in its effective set (capable(), read from
// /proc for the calling process).
func capable(m Memory, bit uint) bool {
	t, ok := m.(interface{ Tgid() int })
	if !ok {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(t.Tgid()) + "/status")
	if err != nil {
		return false
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "CapEff:"); ok {
			c, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return err == nil && c&(1<<bit) != 0
		}
	}
	return false
}

const capSysNice = 23 // CAP_SYS_NICE

// monotonicNow is ktime_get(): CLOCK_MONOTONIC in ns, the clock of amdgpu's absolute timeouts.
func monotonicNow() uint64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return uint64(ts.Nano())
}

// idr is the kernel's idr as the DRM uses it: ids from lo up to hi (exclusive), the lowest free
// one first (idr_alloc).
type idr[T any] struct {
	m      map[uint32]T
	freed  idHeap
	next   uint32
	lo, hi uint32
}

func (r *idr[T]) init(lo, hi uint32) { r.m, r.next, r.lo, r.hi = map[uint32]T{}, lo, lo, hi }

// alloc stores v under the lowest free id; false when the range is full (-ENOSPC).
func (r *idr[T]) alloc(v T) (uint32, bool) {
	var id uint32
	switch {
	case r.freed.Len() > 0:
		id = heap.Pop(&r.freed).(uint32)
	case r.next < r.hi:
		id = r.next
		r.next++
	default:
		return 0, false
	}
	r.m[id] = v
	return id, true
}

func (r *idr[T]) get(id uint32) (T, bool) { v, ok := r.m[id]; return v, ok }

func (r *idr[T]) replace(id uint32, v T) (T, bool) {
	old, ok := r.m[id]
	if ok {
		r.m[id] = v
	}
	return old, ok
}

func (r *idr[T]) remove(id uint32) (T, bool) {
	v, ok := r.m[id]
	if ok {
		delete(r.m, id)
		heap.Push(&r.freed, id)
	}
	return v, ok
}

func (r *idr[T]) len() int { return len(r.m) }

func (r *idr[T]) all() []T {
	out := make([]T, 0, len(r.m))
	for _, v := range r.m {
		out = append(out, v)
	}
	return out
}

func (r *idr[T]) clear() { r.init(r.lo, r.hi); r.freed = nil }

type idHeap []uint32

func (h idHeap) Len() int           { return len(h) }
func (h idHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h idHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *idHeap) Push(x any)        { *h = append(*h, x.(uint32)) }
func (h *idHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
