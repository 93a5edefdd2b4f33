// Package mmnotify tells the driver when a client process unmaps part of its address space. It is
// the daemon's stand-in for the mmu_interval_notifier amdkfd registers on every SVM range
// (kfd_svm.c svm_range_cpu_invalidate_pagetables, MMU_NOTIFY_UNMAP -> svm_range_unmap_from_cpu):
// a FUSE server has no hook into a client's mm, so eBPF programs on the syscalls tracepoints of
// munmap, mremap and mmap report, for the processes being watched, every call that can take
// memory away (a munmap, an mremap that moves or shrinks, an mmap with MAP_FIXED over existing
// memory) through a ring buffer, and a goroutine hands each unmapped interval to the process's
// handler.
//
// Ordering. The records are written at the syscall's entry (munmap) or exit (mremap, mmap), before
// it returns to the client, and a per-process counter counts them. Sync reads the counter and waits
// until the handler has seen that many records, so a driver that calls Sync
// before acting on a client's request sees every unmap the client made before the request (as the
// notifier has run before munmap returns on amdkfd). Unmaps by another thread racing with the
// request may or may not be seen, as on amdkfd.
//
// Generation. Synced gives the count of the process's address-space syscalls as of the last Sync
// (mmap, munmap, mremap, and also mprotect, pkey_mprotect and brk, counted at their exit, after
// the change): a driver may keep a parsed copy of /proc/PID/maps while it is unchanged (kfd's
// VMA cache for GPU retry faults).
//
// Not seen: brk shrinking the heap, madvise(MADV_DONTNEED/FREE) (amdkfd evicts, it does not unmap:
// the data stays in the client's pages here anyway), mremap with MREMAP_DONTUNMAP (the old VMA
// stays), process_madvise, exit (the driver tears the process down itself). A record the ring
// buffer has no room for is counted as lost and logged by Sync.
//
// Touch notices (touch.go) are the second service: one call at the next page fault of a process
// in given address ranges, from the exceptions/page_fault_user tracepoint. The doorbell watcher
// sleeps on them instead of polling (kfd/doorbellarm.go).
//
// Counters. A watched tgid maps (hash map) to a slot of an array map created BPF_F_MMAPABLE, which
// the daemon maps: Sync reads the counter with an atomic load instead of a bpf(2) lookup (one
// syscall of 2 to 5 µs on every GPU retry fault, kfdemu bench's fault storm). A slot holds the tgid
// it was given to, and the programs count only when it still matches theirs, so a program that
// looked up a slot just before it was freed and given to another process cannot count for it;
// freed slots are reused last (FIFO).
//
// The reader goroutine sleeps in Go's netpoller on the ring buffer's descriptor (wait.go), not in
// ringbuf.Reader's blocking epoll_wait, which kept a P of the daemon's after every record.
//
// The BPF side is built with cilium/ebpf's assembler (no clang, no generated object), as package
// trace does. Loading needs CAP_BPF, CAP_PERFMON (root) and tracefs; Open reports why it cannot.
//
// Lock order: Notifier.mu is a leaf except while a handler runs: handlers are called by the
// reader goroutine without Notifier.mu held and may take any driver lock; Sync must not be called
// with a lock a handler takes.
package mmnotify

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/ringbuf"
	"github.com/cilium/ebpf/rlimit"
	"github.com/kfdemu/kfdemu/internal/tracefs"
	"golang.org/x/sys/unix"
)

// Record kinds, one per attached tracepoint.
const (
	kindMunmap     = 1 // sys_enter_munmap: addr, len
	kindMremapIn   = 2 // sys_enter_mremap: addr, old_len, new_len, flags, new_addr
	kindMremapOut  = 3 // sys_exit_mremap: ret
	kindMmapIn     = 4 // sys_enter_mmap: addr, len, prot, flags, fd
	kindMmapOut    = 5 // sys_exit_mmap: ret
	kindChanged    = 6 // sys_exit_{munmap,mprotect,pkey_mprotect,brk}: ret (counted only, see Synced)
	maxArgs        = 5
	recSize        = 16 + 8*maxArgs
	ctxArgs        = 16 // first syscall argument (or ret) in the tracepoint context (events/syscalls/*/format)
	watchedEntries = 1 << 14
	// A slot of the counts map: {tgid u32, watch u32 (proc.watch), records u64, lost u64}.
	slotTgid, slotWatch, slotRecords, slotLost, slotSize = 0, 4, 8, 16, 24
)

// Linux mman.h values the decoder needs.
const (
	mapFixed          = 0x10
	mapFixedNoReplace = 0x100000
	mremapFixed       = 2
	mremapDontUnmap   = 4
	pageMask          = 4095
)

// Handler receives an interval [start, start+size) the process no longer has mapped as it had.
type Handler func(start, size uint64)

type proc struct {
	slot    uint32 // index in Notifier.counts
	watch   uint32 // this Watch's number, in its slot and in every record the slot's tgid emits
	h       Handler
	touch   func()              // ArmTouch's function
	synced  atomic.Uint64       // Synced's generation + 1 (0: no Sync yet, stopped or records lost); under Notifier.mu
	syncs   uint64              // Syncs that read the counter
	applied uint64              // records of this tgid handled (the reader goroutine's count)
	lost    uint64              // lost records already logged
	pending map[uint32][]uint64 // entry arguments by thread id, until the matching exit record
}

// Notifier watches processes' unmaps. The zero value is not usable; see Open.
type Notifier struct {
	watched, events *ebpf.Map // watched: tgid -> slot of counts
	counts          *ebpf.Map // BPF_F_MMAPABLE array of slot records: {tgid, records emitted, records lost}
	countMem        []byte    // counts mapped into the daemon; nil once closed (under mu)
	free            []uint32  // unused slots, oldest first (under mu)
	watches         uint32    // Watch calls so far (under mu): each numbers its records
	armed           *ebpf.Map // touch notices (touch.go): tgid -> ranges; nil when unavailable
	touchErr        error     // why armed is nil
	progs           []*ebpf.Program
	links           []link.Link
	rd              *ringbuf.Reader
	rw              *ringWait // the reader's wait in the netpoller (wait.go); nil: rd's own

	mu    sync.Mutex
	cond  *sync.Cond
	procs map[uint32]*proc
	done  chan struct{}
	warn  func(msg string, args ...any)
}

// ErrUnavailable wraps every reason the kernel refuses the notifier.
var ErrUnavailable = errors.New("mmnotify: eBPF munmap notices unavailable")

func unavailable(what string, err error) error {
	return fmt.Errorf("%w: %s: %v (needs root: CAP_BPF and CAP_PERFMON, BPF ring buffers (Linux >= 5.8), "+
		"the syscalls tracepoints (CONFIG_FTRACE_SYSCALLS) and tracefs at /sys/kernel/tracing)", ErrUnavailable, what, err)
}

// tracepoints are the attach points, their record kind and how many u64 arguments they copy.
var tracepoints = []struct {
	name       string
	kind, args int
}{
	{"sys_enter_munmap", kindMunmap, 2},
	{"sys_enter_mremap", kindMremapIn, 5},
	{"sys_exit_mremap", kindMremapOut, 1},
	{"sys_enter_mmap", kindMmapIn, 5},
	{"sys_exit_mmap", kindMmapOut, 1},
	// Counted only (Synced): the calls that change a VMA's bounds or permissions, at their exit.
	{"sys_exit_munmap", kindChanged, 1},
	{"sys_exit_mprotect", kindChanged, 1},
	{"sys_exit_pkey_mprotect", kindChanged, 1},
	{"sys_exit_brk", kindChanged, 1},
}

// Open loads and attaches the programs and starts the reader goroutine. warn (may be nil) is
// called for lost records.
func Open(warn func(msg string, args ...any)) (*Notifier, error) {
	if err := tracefs.Ensure("sys_enter_munmap"); err != nil {
		return nil, unavailable("tracefs", err)
	}
	if err := rlimit.RemoveMemlock(); err != nil {
		return nil, unavailable("raise RLIMIT_MEMLOCK", err)
	}
	if warn == nil {
		warn = func(string, ...any) {}
	}
	n := &Notifier{procs: map[uint32]*proc{}, done: make(chan struct{}), warn: warn}
	n.cond = sync.NewCond(&n.mu)
	ok := false
	defer func() {
		if !ok {
			n.closeKernel()
		}
	}()
	var err error
	n.watched, err = ebpf.NewMap(&ebpf.MapSpec{Name: "kfdemu_mmw", Type: ebpf.Hash, KeySize: 4, ValueSize: 4, MaxEntries: watchedEntries})
	if err != nil {
		return nil, unavailable("create map", err)
	}
	n.counts, err = ebpf.NewMap(&ebpf.MapSpec{Name: "kfdemu_mmc", Type: ebpf.Array, KeySize: 4, ValueSize: slotSize,
		MaxEntries: watchedEntries, Flags: unix.BPF_F_MMAPABLE})
	if err != nil {
		return nil, unavailable("create mmapable array map (Linux >= 5.5)", err)
	}
	if n.countMem, err = unix.Mmap(n.counts.FD(), 0, slotSize*watchedEntries, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED); err != nil {
		return nil, unavailable("mmap the counter map", err)
	}
	n.free = make([]uint32, watchedEntries)
	for i := range n.free {
		n.free[i] = uint32(i)
	}
	n.events, err = ebpf.NewMap(&ebpf.MapSpec{Name: "kfdemu_mmev", Type: ebpf.RingBuf, MaxEntries: 1 << 20})
	if err != nil {
		return nil, unavailable("create ring buffer", err)
	}
	for _, tp := range tracepoints {
		p, err := ebpf.NewProgram(&ebpf.ProgramSpec{Name: "kfdemu_mm" + fmt.Sprint(tp.kind), Type: ebpf.TracePoint,
			License: "GPL", Instructions: prog(n.watched, n.counts, n.events, tp.kind, tp.args)})
		if err != nil {
			return nil, unavailable("load program for "+tp.name, err)
		}
		n.progs = append(n.progs, p)
		l, err := link.Tracepoint("syscalls", tp.name, p, nil)
		if err != nil {
			return nil, unavailable("attach tracepoint syscalls/"+tp.name, err)
		}
		n.links = append(n.links, l)
	}
	if n.touchErr = n.openTouch(); n.touchErr != nil {
		if n.armed != nil {
			n.armed.Close()
			n.armed = nil
		}
	}
	if n.rd, err = ringbuf.NewReader(n.events); err != nil {
		return nil, unavailable("open ring buffer", err)
	}
	if n.rw = newRingWait(n.events.FD()); n.rw != nil {
		n.rd.SetDeadline(time.Unix(0, 1)) // in the past: ReadInto never blocks
	}
	ok = true
	go n.read()
	return n, nil
}

// lookupTgid is the common prologue: R6 = the context, R7 = pid_tgid, the tgid at fp-4, R0 = m's
// value for the tgid; a tgid not in m jumps to "out".
func lookupTgid(m *ebpf.Map) asm.Instructions {
	return asm.Instructions{
		asm.Mov.Reg(asm.R6, asm.R1),
		asm.FnGetCurrentPidTgid.Call(),
		asm.Mov.Reg(asm.R7, asm.R0),
		asm.RSh.Imm(asm.R0, 32),
		asm.StoreMem(asm.RFP, -4, asm.R0, asm.Word),
		asm.LoadMapPtr(asm.R1, m.FD()),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, -4),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, "out"),
	}
}

// prog is one tracepoint program: for a watched tgid it emits {tgid, tid, kind, watch, args...} and
// counts it in the tgid's slot of counts (records), or counts a loss when the ring is full.
func prog(watched, counts, events *ebpf.Map, kind, nargs int) asm.Instructions {
	in := append(lookupTgid(watched),
		asm.LoadMem(asm.R1, asm.R0, 0, asm.Word),
		asm.StoreMem(asm.RFP, -8, asm.R1, asm.Word),
		asm.LoadMapPtr(asm.R1, counts.FD()),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, -8),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, "out"),
		asm.LoadMem(asm.R1, asm.R0, slotTgid, asm.Word), // the slot is still this tgid's
		asm.LoadMem(asm.R2, asm.RFP, -4, asm.Word),
		asm.JNE.Reg(asm.R1, asm.R2, "out"),
		asm.Mov.Reg(asm.R8, asm.R0),
		asm.LoadMapPtr(asm.R1, events.FD()),
		asm.Mov.Imm(asm.R2, recSize),
		asm.Mov.Imm(asm.R3, 0),
		asm.FnRingbufReserve.Call(),
		asm.JEq.Imm(asm.R0, 0, "lost"),
		asm.Mov.Reg(asm.R9, asm.R0),
		asm.Mov.Reg(asm.R1, asm.R7),
		asm.RSh.Imm(asm.R1, 32),
		asm.StoreMem(asm.R9, 0, asm.R1, asm.Word),
		asm.StoreMem(asm.R9, 4, asm.R7, asm.Word),
		asm.StoreImm(asm.R9, 8, int64(kind), asm.Word),
		asm.LoadMem(asm.R1, asm.R8, slotWatch, asm.Word), // the watch that counts it (proc.watch)
		asm.StoreMem(asm.R9, 12, asm.R1, asm.Word),
	)
	for i := 0; i < maxArgs; i++ {
		if i < nargs {
			in = append(in, asm.LoadMem(asm.R1, asm.R6, int16(ctxArgs+8*i), asm.DWord))
		} else {
			in = append(in, asm.Mov.Imm(asm.R1, 0))
		}
		in = append(in, asm.StoreMem(asm.R9, int16(16+8*i), asm.R1, asm.DWord))
	}
	return append(in,
		asm.Mov.Reg(asm.R1, asm.R9),
		asm.Mov.Imm(asm.R2, 0),
		asm.FnRingbufSubmit.Call(),
		asm.Mov.Imm(asm.R1, 1),
		asm.AddAtomic.Mem(asm.R8, asm.R1, asm.DWord, slotRecords),
		asm.Ja.Label("out"),
		asm.Mov.Imm(asm.R1, 1).WithSymbol("lost"),
		asm.AddAtomic.Mem(asm.R8, asm.R1, asm.DWord, slotLost),
		asm.Mov.Imm(asm.R0, 0).WithSymbol("out"),
		asm.Return(),
	)
}

// Watch is one process being watched.
type Watch struct {
	n    *Notifier
	tgid uint32
	p    *proc
}

// Watch starts reporting tgid's unmaps to h. A later Watch of the same tgid replaces this one
// (a process that closed and reopened the device).
func (n *Notifier) Watch(tgid int, h Handler) (*Watch, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.countMem == nil {
		return nil, fmt.Errorf("mmnotify: watch %d: notifier closed", tgid)
	}
	if len(n.free) == 0 {
		return nil, fmt.Errorf("mmnotify: watch %d: %d processes watched already", tgid, watchedEntries)
	}
	key, slot := uint32(tgid), n.free[0]
	n.watches++
	if n.watches == 0 { // 0 marks no watch (touch records)
		n.watches++
	}
	n.word32(slot, slotWatch).Store(n.watches)
	n.word64(slot, slotRecords).Store(0)
	n.word64(slot, slotLost).Store(0)
	n.word32(slot, slotTgid).Store(key)
	if err := n.watched.Put(key, slot); err != nil {
		n.word32(slot, slotTgid).Store(0)
		return nil, fmt.Errorf("mmnotify: watch %d: %w", tgid, err)
	}
	n.free = n.free[1:]
	if old := n.procs[key]; old != nil {
		n.release(old)
	}
	p := &proc{slot: slot, watch: n.watches, h: h, pending: map[uint32][]uint64{}}
	n.procs[key] = p
	return &Watch{n: n, tgid: key, p: p}, nil
}

// release returns p's slot to the free list; under mu.
func (n *Notifier) release(p *proc) {
	n.word32(p.slot, slotTgid).Store(0)
	n.free = append(n.free, p.slot)
}

// word64 and word32 are the fields of a slot of the mapped counts; under mu, with countMem set.
func (n *Notifier) word64(slot uint32, off int) *atomic.Uint64 {
	return (*atomic.Uint64)(unsafe.Pointer(&n.countMem[int(slot)*slotSize+off]))
}

func (n *Notifier) word32(slot uint32, off int) *atomic.Uint32 {
	return (*atomic.Uint32)(unsafe.Pointer(&n.countMem[int(slot)*slotSize+off]))
}

// Stop ends the watch; records still queued for it are dropped. Stopping a watch that a later
// Watch of the same tgid replaced does nothing.
func (w *Watch) Stop() {
	n := w.n
	w.p.synced.Store(0)
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.procs[w.tgid] != w.p {
		return
	}
	n.watched.Delete(w.tgid)
	if n.armed != nil {
		n.armed.Delete(w.tgid)
	}
	if n.countMem != nil {
		n.release(w.p)
	}
	delete(n.procs, w.tgid)
	n.cond.Broadcast()
}

// Sync returns once every record the process's unmapping syscalls emitted before the call has
// been handed to the handler. It must not be called with a lock the handler takes. It makes no
// syscall: the counter is read from the mapped counts.
func (w *Watch) Sync() {
	n := w.n
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.procs[w.tgid] != w.p || n.countMem == nil {
		w.p.synced.Store(0)
		return // stopped, replaced or closed
	}
	lost := n.word64(w.p.slot, slotLost).Load()
	records := n.word64(w.p.slot, slotRecords).Load()
	if lost > w.p.lost {
		n.warn("munmap notices lost (ring buffer full): SVM ranges of the process may be stale", "tgid", w.tgid, "lost", lost)
		w.p.lost = lost
	}
	if lost != 0 {
		w.p.synced.Store(0) // a lost record: the count misses a change
	} else if g := w.p.synced.Load(); g != 0 || w.p.syncs == 0 {
		// Monotonic: a concurrent Sync that read the counter earlier must not store it later.
		w.p.synced.Store(max(g, records+1))
	}
	w.p.syncs++
	for n.procs[w.tgid] == w.p && w.p.applied < records {
		select {
		case <-n.done:
			return
		default:
		}
		n.cond.Wait()
	}
}

// Synced returns the generation of the process's address space as of the last Sync: the count of
// its syscalls that map, unmap, move or change the protection of memory (mmap, munmap, mremap,
// mprotect, pkey_mprotect, brk; each counted at its exit, after its change), so a copy of
// /proc/PID/maps read after a Sync that returned generation g is current for as long as Sync
// keeps returning g. ok is false before the first Sync, after Stop and once records were lost:
// then nothing may be assumed. Not counted: madvise, mlock and the like, which may split a VMA
// without changing what is mapped or its protection. It takes no lock.
func (w *Watch) Synced() (gen uint64, ok bool) {
	g := w.p.synced.Load()
	return g - 1, g != 0
}

// read is the reader goroutine: it decodes records and calls the handlers.
func (n *Notifier) read() {
	defer close(n.done)
	var rec ringbuf.Record
	closed := func() {
		n.mu.Lock()
		n.cond.Broadcast()
		n.mu.Unlock()
	}
	for {
		if err := n.rd.ReadInto(&rec); err != nil {
			if errors.Is(err, ringbuf.ErrClosed) {
				closed()
				return
			}
			if n.rw != nil && errors.Is(err, os.ErrDeadlineExceeded) { // drained
				if n.rw.wait(func() bool { return n.rd.AvailableBytes() > 0 }) != nil {
					closed() // closeKernel closed the file
					return
				}
			}
			continue
		}
		if len(rec.RawSample) < recSize {
			continue
		}
		b := rec.RawSample
		tgid, tid, kind := binary.LittleEndian.Uint32(b), binary.LittleEndian.Uint32(b[4:]), binary.LittleEndian.Uint32(b[8:])
		var args [maxArgs]uint64
		for i := range args {
			args[i] = binary.LittleEndian.Uint64(b[16+8*i:])
		}
		n.mu.Lock()
		p := n.procs[tgid]
		if p != nil && kind != kindTouch && binary.LittleEndian.Uint32(b[12:]) != p.watch {
			// Emitted for an earlier watch of the same tgid (a kfd process closed and opened
			// again) and read after this one began: not this watch's, neither handled (its
			// munmap predates this process's ranges) nor counted (Sync compares the count of
			// this watch's records with the kernel's, and counting it would let a Sync return
			// before one of this watch's own records was handled).
			p = nil
		}
		if kind == kindTouch { // touch.go: not counted by the kernel's per-tgid record count
			var fn func()
			if p != nil {
				fn = p.touch
			}
			n.mu.Unlock()
			if fn != nil {
				fn()
			}
			runtime.Gosched()
			continue
		}
		var unmaps [][2]uint64
		if p != nil {
			unmaps = p.decode(tid, kind, args)
		}
		n.mu.Unlock()
		if p != nil {
			for _, u := range unmaps {
				p.h(u[0], u[1])
			}
		}
		n.mu.Lock()
		if p != nil {
			p.applied++
		}
		n.cond.Broadcast()
		n.mu.Unlock()
		// Without the netpoller's wait (rw nil), the next ReadInto may block in epoll_wait with
		// this P: a goroutine the handler or the broadcast readied would then wait in its run
		// queue until sysmon retakes the P (up to 10 ms on an idle daemon, measured: a touch
		// notice reached the doorbell watcher 10-20 ms late). Let it run first.
		runtime.Gosched()
	}
}

// decode turns one record into the intervals it unmapped (do_vmi_munmap, mremap_to/move_vma,
// mmap_region over existing mappings), pairing entry and exit records by thread. The arguments are
// the client's: intervals that are unaligned, empty or wrap (a call the kernel refused) are dropped.
func (p *proc) decode(tid, kind uint32, a [maxArgs]uint64) [][2]uint64 {
	out := p.intervals(tid, kind, a)
	n := 0
	for _, iv := range out {
		if iv[0]&pageMask == 0 && iv[1] != 0 && iv[1]&pageMask == 0 && iv[0]+iv[1] > iv[0] {
			out[n] = iv
			n++
		}
	}
	return out[:n]
}

func (p *proc) intervals(tid, kind uint32, a [maxArgs]uint64) [][2]uint64 {
	failed := func(ret uint64) bool { return ret > ^uint64(4095) } // -4095..-1: an errno
	switch kind {
	case kindMunmap:
		addr, size := a[0], (a[1]+pageMask)&^uint64(pageMask)
		if addr&pageMask != 0 || size == 0 || addr+size < addr {
			return nil // munmap fails with EINVAL
		}
		return [][2]uint64{{addr, size}}
	case kindMremapIn, kindMmapIn:
		p.pending[tid] = append([]uint64{uint64(kind)}, a[:]...)
	case kindMremapOut:
		in := p.pending[tid]
		delete(p.pending, tid)
		if len(in) == 0 || in[0] != kindMremapIn || failed(a[0]) {
			return nil
		}
		addr, oldLen, newLen, flags := in[1], (in[2]+pageMask)&^uint64(pageMask), (in[3]+pageMask)&^uint64(pageMask), in[4]
		ret := a[0]
		var out [][2]uint64
		if flags&mremapFixed != 0 && ret != addr {
			out = append(out, [2]uint64{ret, newLen}) // whatever was mapped at the target went first
		}
		switch {
		case ret != addr && flags&mremapDontUnmap == 0 && oldLen != 0:
			out = append(out, [2]uint64{addr, oldLen})
		case ret == addr && newLen < oldLen:
			out = append(out, [2]uint64{addr + newLen, oldLen - newLen})
		}
		return out
	case kindMmapOut:
		in := p.pending[tid]
		delete(p.pending, tid)
		if len(in) == 0 || in[0] != kindMmapIn || failed(a[0]) {
			return nil
		}
		flags := in[4]
		if flags&mapFixed == 0 || flags&mapFixedNoReplace != 0 {
			return nil // a new area: nothing was there
		}
		return [][2]uint64{{a[0], (in[2] + pageMask) &^ uint64(pageMask)}}
	}
	return nil
}

// Close detaches the programs and stops the reader; Sync returns at once afterwards.
func (n *Notifier) Close() {
	n.closeKernel()
	if n.rd != nil {
		<-n.done
	}
}

func (n *Notifier) closeKernel() {
	for _, l := range n.links {
		l.Close()
	}
	n.links = nil
	if n.rw != nil { // set only once Open cannot fail: the reader runs
		// The reader calls rd.AvailableBytes, which Reader.Close races with: end the reader
		// first (its wait in the netpoller fails once the file is closed), then close rd.
		n.rw.close()
		<-n.done
	}
	if n.rd != nil {
		n.rd.Close()
	}
	for _, p := range n.progs {
		p.Close()
	}
	n.progs = nil
	if n.events != nil {
		n.events.Close()
	}
	if n.watched != nil {
		n.watched.Close()
	}
	n.mu.Lock()
	if n.countMem != nil {
		unix.Munmap(n.countMem)
		n.countMem = nil
	}
	n.mu.Unlock()
	if n.counts != nil {
		n.counts.Close()
	}
	if n.armed != nil {
		n.armed.Close()
	}
}
