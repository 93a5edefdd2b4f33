package kfd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/kfdemu/kfdemu/kfd/abi"
	"github.com/kfdemu/kfdemu/kfd/svm"
	"github.com/kfdemu/kfdemu/mmnotify"
	"github.com/kfdemu/kfdemu/mmu"
	"github.com/kfdemu/kfdemu/topology"
)

// Shared virtual memory: AMDKFD_IOC_SVM, SET_XNACK_MODE and GPU retry faults, on the range list of
// package svm. SVM memory is the client's own pages at the same address (GPU VA == CPU VA): the
// GPU page tables point into physical segments whose backing is the client's address space,
// reached with process_vm_readv/writev like userptr memory. Segments cover aligned 2 MiB chunks
// of client address space (svmChunk); a chunk gets its segment when a page of it is first mapped
// on a GPU and gives it back when no page of it is mapped there any more.

// svmChunk is the span of client address space one physical segment covers.
const svmChunk = 2 << 20

// newSVM creates the process's range list (svm_range_list_init) over its devices in topology order.
func (p *Process) newSVM() error {
	var gpus []svm.GPU
	var ids []uint32
	for _, pd := range p.sortedPDDs() {
		gpus = append(gpus, svm.GPU{ID: pd.gpuID, NoSVM: !svmSupported(pd.node.GfxTarget()),
			Hive: pd.node.Prop(topology.HiveID), VRAMBytes: pd.node.VRAMSize()})
		ids = append(ids, pd.gpuID)
		p.svmPDDs = append(p.svmPDDs, pd)
	}
	vmas := &vmaCache{tgid: p.tgid, watch: func() *mmnotify.Watch { return p.mm }}
	m, err := svm.New(svm.Config{GPUs: gpus, XNACK: p.xnack, FindVMA: vmas.find, OverlapsBO: p.overlapsMappedBO,
		Mapper: svmMapper{p}, OnEvent: p.d.svmSMI(p.tgid, ids)})
	if err != nil {
		return err
	}
	p.svm = m
	return nil
}

// svmSupported is KFD_IS_SVM_API_SUPPORTED for a dGPU: SOC15 parts (GFX9 and later) have the HMM
// device memory SVM migrates to.
func svmSupported(gfx string) bool {
	return strings.HasPrefix(gfx, "gfx9") || strings.HasPrefix(gfx, "gfx1")
}

// vmaCache is vma_lookup on the client, from /proc/PID/maps (amdkfd's svm_range_restore_pages
// and svm_range_is_valid call vma_lookup/find_vma under mmap_read_lock). A lookup asks the kernel
// for the one VMA covering the address (PROCMAP_QUERY, procmap.go: about 5 µs whatever the number
// of VMAs); reading and parsing the whole file took 31 µs for 28 VMAs and 275 µs for 427
// (BenchmarkVMALookup), more than the rest of a retry fault. The VMAs found are kept while the client's address space is unchanged: the
// munmap notifier's generation (mmnotify Watch.Synced, counting every mmap, munmap, mremap,
// mprotect and brk at its exit) as of the Sync that every fault and SVM ioctl makes first
// (syncMM) tags them, and a lookup after the generation moved asks again. The tag is read before
// the query, so a change racing with it only costs a second one. Without a notifier (not root)
// every lookup asks. A kernel without PROCMAP_QUERY (before 6.11) reads the whole file once per
// generation instead. Used under the svm Manager's lock (FindVMA), which guards it.
type vmaCache struct {
	tgid  int
	watch func() *mmnotify.Watch // the process's notifier watch, or nil
	vmas  []svm.VMA              // sorted by Start, disjoint: the VMAs looked up in this generation
	gen   uint64
	valid bool
	reads uint64 // queries and files read (tests)
	// wholeFile: the kernel has no PROCMAP_QUERY, so a generation reads the whole file into vmas.
	wholeFile bool
	name      []byte // PROCMAP_QUERY's name buffer
}

func (c *vmaCache) find(addr uint64) (svm.VMA, bool) {
	var gen uint64
	ok := false
	if w := c.watch(); w != nil {
		gen, ok = w.Synced()
	}
	if !ok || !c.valid || c.gen != gen {
		// The address space changed (or nothing says it did not): what was learnt is stale.
		c.vmas, c.gen, c.valid = c.vmas[:0], gen, ok
		if c.wholeFile {
			if !c.readAll() {
				return svm.VMA{}, false
			}
		}
	}
	i := sort.Search(len(c.vmas), func(i int) bool { return c.vmas[i].End > addr })
	if i < len(c.vmas) && c.vmas[i].Start <= addr {
		return c.vmas[i], true
	}
	if c.wholeFile {
		return svm.VMA{}, false // the whole file is in c.vmas
	}
	if c.name == nil {
		c.name = make([]byte, procmapNameMax)
	}
	v, found, err := queryVMA(c.tgid, addr, c.name)
	c.reads++
	if errors.Is(err, errNoProcmapQuery) {
		c.wholeFile = true
		if !c.readAll() {
			return svm.VMA{}, false
		}
		i = sort.Search(len(c.vmas), func(i int) bool { return c.vmas[i].End > addr })
		v, found, err = svm.VMA{}, i < len(c.vmas) && c.vmas[i].Start <= addr, nil
		if found {
			return c.vmas[i], true
		}
	}
	if err != nil || !found {
		return svm.VMA{}, false
	}
	// VMAs never overlap: v goes in at its place.
	c.vmas = slices.Insert(c.vmas, i, v)
	return v, true
}

// readAll reads the whole maps file into c.vmas (a kernel without PROCMAP_QUERY); false on error.
func (c *vmaCache) readAll() bool {
	vmas, err := readMaps(c.tgid)
	c.reads++
	c.vmas = vmas
	if err != nil {
		c.valid = false
		return false
	}
	return true
}

// readMaps parses /proc/PID/maps.
func readMaps(tgid int) ([]svm.VMA, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(tgid) + "/maps")
	if err != nil {
		return nil, err
	}
	var out []svm.VMA
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if v, ok := parseMapsLine(string(line)); ok {
			out = append(out, v)
		}
	}
	return out, nil
}

// parseMapsLine reads one line of /proc/PID/maps: "start-end perms offset dev inode [path]". A
// mapping of a device file (VM_IO/VM_PFNMAP in the kernel: the kfd and render files themselves)
// is a device VMA, not valid for SVM.
func parseMapsLine(line string) (svm.VMA, bool) {
	fields := strings.Fields(line)
	if len(fields) < 5 {
		return svm.VMA{}, false
	}
	lo, hi, ok := strings.Cut(fields[0], "-")
	if !ok || len(fields[1]) < 4 {
		return svm.VMA{}, false
	}
	s, err1 := strconv.ParseUint(lo, 16, 64)
	e, err2 := strconv.ParseUint(hi, 16, 64)
	if err1 != nil || err2 != nil || e <= s {
		return svm.VMA{}, false
	}
	v := svm.VMA{Start: s, End: e, Read: fields[1][0] == 'r', Write: fields[1][1] == 'w'}
	if len(fields) >= 6 {
		classifyVMA(&v, fields[5])
	}
	return v, true
}

// overlapsMappedBO is svm_range_check_vm: a BO mapped on some GPU in [start, start+size). Called
// with Process.mu held.
func (p *Process) overlapsMappedBO(start, size uint64) bool {
	if p.boIdx.mappedOverlapping(start, size) {
		return true
	}
	for _, pd := range p.pdds {
		if pd.gemOverlaps(start, size) {
			return true
		}
	}
	return false
}

// svmMapper maps SVM pages into the process's GPUVMs. Its methods run with the svm Manager's lock
// held, which also guards the chunk tables.
type svmMapper struct{ p *Process }

func (m svmMapper) pdd(gi int) (*pdd, error) {
	if gi < 0 || gi >= len(m.p.svmPDDs) {
		return nil, syscall.EINVAL
	}
	pd := m.p.svmPDDs[gi]
	if !pd.acquired || pd.vm == nil {
		return nil, syscall.EINVAL // kfd_bind_process_to_device fails without ACQUIRE_VM
	}
	return pd, nil
}

func (m svmMapper) MapGPU(gi int, start, npages uint64, writable, executable bool) error {
	pd, err := m.pdd(gi)
	if err != nil {
		return err
	}
	size := npages * pageSize
	// svm_range_get_pte_flags for system memory on GFX 9.4.2: snooped, MTYPE UC for coherent
	// ranges is not distinguished here (every SVM range starts COHERENT), readable always.
	flags := mmu.PTEValid | mmu.PTEReadable | mmu.PTESystem | mmu.PTESnooped | mmu.PTEMType(mmu.MTypeUC)
	if writable {
		flags |= mmu.PTEWriteable
	}
	if executable {
		flags |= mmu.PTEExecutable
	}
	for va := start; va < start+size; {
		chunk := va &^ (svmChunk - 1)
		end := min(start+size, chunk+svmChunk)
		pa, err := m.chunk(pd, chunk)
		if err != nil {
			return err
		}
		// A re-validation (restore after an eviction, new attributes) rewrites the PTEs in
		// place: queues running on the range never meet a hole (amdkfd quiesces them instead).
		if err := pd.vm.Remap(va, end-va, pa+(va-chunk), flags); err != nil {
			return err
		}
		va = end
	}
	return nil
}

// chunk returns the physical segment of the client chunk at base, allocating it.
func (m svmMapper) chunk(pd *pdd, base uint64) (uint64, error) {
	if pa, ok := pd.svmChunks[base]; ok {
		return pa, nil
	}
	pa, err := m.p.d.phys.AllocSystem(svmChunk, mmu.Backing{Remote: clientMemory(m.p.tgid), RemoteAddr: base})
	if err != nil {
		return 0, err
	}
	if pd.svmChunks == nil {
		pd.svmChunks = map[uint64]uint64{}
	}
	pd.svmChunks[base] = pa
	return pa, nil
}

func (m svmMapper) UnmapGPU(gi int, start, npages uint64) error {
	pd, err := m.pdd(gi)
	if err != nil {
		return err
	}
	size := npages * pageSize
	if !pd.vm.Mapped(start, size) {
		return nil
	}
	if err := pd.vm.Unmap(start, size); err != nil {
		return err
	}
	for c := start &^ (svmChunk - 1); c < start+size; c += svmChunk {
		if pa, ok := pd.svmChunks[c]; ok && !pd.vm.Mapped(c, svmChunk) {
			m.p.d.phys.Free(pa)
			delete(pd.svmChunks, c)
		}
	}
	return nil
}

// freeSVMChunks gives back every chunk segment of pd (teardown, after its VM is closed).
func (p *Process) freeSVMChunks(pd *pdd) {
	for c, pa := range pd.svmChunks {
		p.d.phys.Free(pa)
		delete(pd.svmChunks, c)
	}
}

// gpuFaults are the retry-fault handlers of pd's VM (amdgpu_vm_handle_fault ->
// svm_range_restore_pages): the range list maps the faulting granule and the access walks again.
// The first serves one fault (mmu.Config.Fault), the second the faults of one vectored access
// (Config.FaultBatch) with one munmap sync and one lock for all of them. They run on the faulting
// engine's goroutine outside any access section; engines hold no kfd lock while they access memory,
// so they may take Process.mu.
func (p *Process) gpuFaults(gi int) (mmu.FaultHandler, mmu.BatchFaultHandler) {
	var vas []uint64 // under p.mu
	batch := func(fs []mmu.Fault, resolved []bool) {
		p.syncMM()
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.dead || p.svm == nil {
			return
		}
		// One access: every fault has its kind of access.
		write := fs[0].Access == mmu.AccessWrite || fs[0].Access == mmu.AccessAtomic
		vas = vas[:0]
		for _, f := range fs {
			vas = append(vas, f.VA)
		}
		p.svm.FaultBatch(gi, vas, write, resolved)
		if p.d.log.Enabled(context.Background(), slog.LevelDebug) { // a storm: no formatting per fault
			for i, f := range fs {
				p.d.log.Debug("GPU retry fault", "tgid", p.tgid, "gpu", f.GPU, "va", hexVA(f.VA), "access", f.Access.String(), "resolved", resolved[i])
			}
		}
	}
	one := func(f *mmu.Fault) bool {
		fs, resolved := [1]mmu.Fault{*f}, [1]bool{}
		batch(fs[:], resolved[:])
		return resolved[0]
	}
	return one, batch
}

// svmIoctl is kfd_ioctl_svm: the argument is the header followed by nattr attributes (tail), its
// size the command's _IOC_SIZE (libhsakmt encodes the whole size into the command word).
func svmIoctl(p *Process, c Caller, a *abi.SVMArgs, tail []byte) syscall.Errno {
	if errno := svm.ValidateArgs(abi.IOCSize(abi.AMDKFD_IOC_SVM)+uint32(len(tail)), a.NAttr); errno != 0 {
		return errno
	}
	if !svm.ValidOp(a.Op) {
		// svm_ioctl returns the positive EINVAL, which ioctl(2) hands back as its result; a FUSE
		// server can only answer an error (README).
		return syscall.EINVAL
	}
	attrs := make([]abi.SVMAttribute, a.NAttr)
	decode(tail, attrs)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.svm == nil {
		return syscall.EINVAL
	}
	errno := p.svm.Ioctl(a.Op, a.StartAddr, a.Size, attrs)
	if a.Op == abi.KFD_IOCTL_SVM_OP_GET_ATTR {
		encode(tail, attrs)
	}
	return errno
}

// svmOverlaps is the SVM check of kfd_ioctl_alloc_memory_of_gpu: a BO may not take an address
// an SVM range has ("already allocated by SVM" -> EADDRINUSE).
func (p *Process) svmOverlaps(va, size uint64) bool {
	if p.svm == nil {
		return false
	}
	for _, r := range p.svm.Ranges() {
		if va < r.End && r.Start < va+size {
			return true
		}
	}
	return false
}

// debugSVM is debugfs kfd/svm: every process's ranges and its log of faults and migrations.
func (d *Driver) debugSVM() string {
	var b strings.Builder
	for _, p := range d.sortedProcs() {
		p.mu.Lock()
		m := p.svm
		xnack := p.xnack
		p.mu.Unlock()
		if m == nil {
			continue
		}
		fmt.Fprintf(&b, "tgid %d xnack %v\n", p.tgid, xnack)
		for _, r := range m.Ranges() {
			fmt.Fprintf(&b, "  range [%#x, %#x) granularity %d flags %#x preferred %#x prefetch %#x actual %#x vram_pages %d access %v in_place %v mapped %v\n",
				r.Start, r.End, r.Granularity, r.Flags, r.PreferredLoc, r.PrefetchLoc, r.ActualLoc, r.VRAMPages, r.Access, r.AccessInPlace, r.Mapped)
		}
		for _, e := range m.Log() {
			fmt.Fprintf(&b, "  %s\n", svmEventString(e))
		}
	}
	return b.String()
}

func svmEventString(e svm.Event) string {
	switch e.Kind {
	case svm.EventFault:
		return fmt.Sprintf("fault gpu %d addr %#x write %v -> [%#x, +%#x) migrated %v resolved %v", e.GPU, e.Addr, e.Write, e.Start, e.Size, e.Migrated, e.Resolved)
	case svm.EventMigrate:
		return fmt.Sprintf("migrate %s [%#x, +%#x) %#x -> %#x", e.Trigger, e.Start, e.Size, e.From, e.To)
	default:
		return fmt.Sprintf("%s %s gpu %d [%#x, +%#x)", e.Kind, e.Trigger, e.GPU, e.Start, e.Size)
	}
}

// debugFaults is debugfs kfd/faults: the GPU page faults of every process's VMs.
func (d *Driver) debugFaults() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-8s %-10s %-16s %-7s %-12s %-10s %s\n", "tgid", "gpu_id", "va", "access", "kind", "outcome", "retries")
	for _, p := range d.sortedProcs() {
		p.mu.Lock()
		pds := p.sortedPDDs()
		p.mu.Unlock()
		for _, pd := range pds {
			if pd.vm == nil {
				continue
			}
			for _, r := range pd.vm.Faults() {
				fmt.Fprintf(&b, "%-8d %-10d %#-16x %-7s %-12s %-10s %d\n", p.tgid, pd.gpuID, r.Fault.VA, r.Fault.Access, r.Fault.Kind, r.Outcome, r.Retries)
			}
		}
	}
	return b.String()
}
