package mmu

import (
	"fmt"
	"math/bits"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kfdemu/kfdemu/internal/hrtimer"
	"golang.org/x/sys/cpu"
)

// GFX9 GPUVM geometry as amdgpu sets it for a 48-bit VM (gmc_v9_0_sw_init: amdgpu_vm_adjust_size
// with 3 levels below the root and block_size 9; amdgpu_vm_pt.c: amdgpu_vm_pt_level_shift).
const (
	VABits     = 48
	levels     = 4 // AMDGPU_VM_PDB2, PDB1, PDB0, PTB
	lvlPDB2    = 0
	lvlPDB1    = 1
	lvlPDB0    = 2
	lvlPTB     = 3
	entries    = 512
	tableBytes = entries * 8 // amdgpu_vm_pt_size: 512 entries of 8 bytes
	vpnLimit   = 1 << (VABits - pageShift)
	// maxFrag bounds the fragment the VM writes. amdgpu_vm_pte_fragment allows 31 on VEGA10+ and
	// amdgpu_vm_ptes_update writes fragments >= 18 as 1 GiB PDB1 leaves; kfdemu stops at PDB0 leaves
	// (2 MiB), so a fragment is at most 2^17 pages (512 MiB), the largest a PDB0 entry carries.
	maxFrag = 17
	// maxPTBFrag is the largest fragment a PTB entry carries: a larger aligned run is a PDB0 leaf.
	maxPTBFrag = 8
)

// levelShift is amdgpu_vm_pt_level_shift in pages: 27, 18, 9, 0.
func levelShift(l int) uint { return uint(9 * (lvlPTB - l)) }

// A table is one page-table block. Page tables are most of the daemon's memory under large
// mappings (KFDMemoryTest.MMapLarge maps 400 GiB of userptr BOs in 4 KiB PTEs on each of 8 GPUs:
// 0.8 G PTEs), so a PTB whose 512 PTEs map consecutive pages with one set of flags and one
// fragment (a full PTB of system memory, or a split 2 MiB leaf) is held as its first PTE (run)
// until an entry of it changes; at and own hide the difference. e is then an allocation of its
// own: 4 KiB, a size class of Go's allocator (a table holding the array took a 4864-byte slot).
type table struct {
	e     *[entries]PTE    // nil while the PTB is a run
	run   PTE              // with e nil: entry k is run + k pages
	child *[entries]*table // directories only
	used  int              // non-zero entries
	pa    uint64           // the address a PDE holds
}

// at is entry i.
func (t *table) at(i uint64) PTE {
	if t.e == nil {
		return t.run + PTE(i<<pageShift)
	}
	return t.e[i]
}

// own returns the entries for writing, expanding a run.
func (t *table) own() *[entries]PTE {
	if t.e == nil {
		t.e = new([entries]PTE)
		if t.run != 0 {
			for k := range uint64(entries) {
				t.e[k] = t.run + PTE(k<<pageShift)
			}
			t.run = 0
		}
	}
	return t.e
}

// FaultHandler services a retry fault. It is called with no mmu lock held and outside any access
// section, so it may Map, Unmap and Update this VM. retry=true walks the page tables again.
type FaultHandler func(f *Fault) (retry bool)

// BatchFaultHandler services several retry faults of one access at once (a vectored access whose
// pieces are on distinct unmapped pages: a wave's lanes). It reports in resolved[i] what the
// FaultHandler would have returned for fs[i]; it must behave as the FaultHandler called for each
// fault in order, and may share work between them (one lock, one mapping of adjacent pages).
type BatchFaultHandler func(fs []Fault, resolved []bool)

// Config configures a VM.
type Config struct {
	PASID uint32
	GPU   uint32
	Fault FaultHandler // nil: every fault is fatal (XNACK off, noretry)
	// FaultBatch, if set with Fault, services the faults a vectored access (ReadV, WriteV) finds
	// on its pages before it moves any: one call instead of one per page.
	FaultBatch BatchFaultHandler
	MaxRetries int     // walks after a serviced fault, per access and page; default 3
	Filter     *Filter // shared retry-fault filter (per GPU); nil: the VM makes its own
}

// DefaultMaxRetries is Config.MaxRetries when zero.
const DefaultMaxRetries = 3

// VM is one GPU virtual address space (amdgpu_vm): 48-bit VA, four levels of 512-entry tables with
// 4 KiB pages and 2 MiB PDB0 leaves. See the package doc for locking and quiescence.
type VM struct {
	ph     *Phys
	cfg    Config
	filter *Filter

	// gen, read by every access of every Port, has a cache line of its own: next to mu (whose
	// reader count every page walk writes) its loads missed the cache on every access while
	// two work-groups walked pages (kfdemu bench's vadd on 2 workers).
	_      cpu.CacheLinePad
	gen    atomic.Uint64 // invalidation generation, starts at 1
	closed atomic.Bool
	retry  atomic.Bool // translation faults are retry faults (Config.Fault set and XNACK on)
	_      cpu.CacheLinePad

	mu                      sync.RWMutex // the tables and the counters below
	root                    *table
	nTables, nPTE4K, nPDE2M int
	noRuns                  bool // tests: every PTB holds its entries (no runs)
	portsMu                 sync.Mutex
	ports                   []*Port
	faultMu                 sync.Mutex
	pending                 map[uint64]*pendingFault
	logMu                   sync.Mutex
	log                     [faultLogSize]FaultRecord
	logN                    uint64
	flushes, misses         atomic.Uint64
	faults, retries, fatal  atomic.Uint64
	maxRetries              int
}

// VMStats is a snapshot of a VM's counters.
type VMStats struct {
	Tables     int    // page tables and directories allocated
	TableBytes int64  // their size
	PTEs4K     int    // valid 4 KiB PTEs
	PDEs2M     int    // valid 2 MiB PDB0 leaves (PDE_PTE)
	TLBFlushes uint64 // invalidations (Unmap, Update, Close that changed something)
	TLBMisses  uint64 // page walks by Ports
	Faults     uint64 // retry faults serviced (handler, coalesced, filtered) plus fatal ones
	Retries    uint64 // handler calls that asked for a retry
	Fatal      uint64 // accesses that ended in *FaultError
}

// NewVM creates an empty address space on ph (amdgpu_vm_init for a compute VM).
func NewVM(ph *Phys, cfg Config) *VM {
	vm := &VM{ph: ph, cfg: cfg, filter: cfg.Filter, pending: map[uint64]*pendingFault{}}
	if vm.filter == nil {
		vm.filter = NewFilter(DefaultFilterWindow)
	}
	vm.maxRetries = cfg.MaxRetries
	if vm.maxRetries <= 0 {
		vm.maxRetries = DefaultMaxRetries
	}
	vm.gen.Store(1)
	vm.retry.Store(cfg.Fault != nil)
	return vm
}

// SetRetryFaults turns retry faults on or off (the process's XNACK mode, which amdkfd programs
// into the VM's fault behaviour). Without a Config.Fault handler every fault stays fatal.
func (vm *VM) SetRetryFaults(on bool) { vm.retry.Store(on && vm.cfg.Fault != nil) }

// Mapped reports whether any page of [va, va+size) has a valid translation.
func (vm *VM) Mapped(va, size uint64) bool {
	if checkVA(va, size) != nil {
		return false
	}
	vm.mu.RLock()
	defer vm.mu.RUnlock()
	return vm.root != nil && vm.anyValid(va>>pageShift, (va+size)>>pageShift)
}

// Stats returns a snapshot of the VM's counters.
func (vm *VM) Stats() VMStats {
	vm.mu.RLock()
	st := VMStats{Tables: vm.nTables, TableBytes: int64(vm.nTables) * tableBytes, PTEs4K: vm.nPTE4K, PDEs2M: vm.nPDE2M}
	vm.mu.RUnlock()
	st.TLBFlushes = vm.flushes.Load()
	vm.portsMu.Lock()
	st.TLBMisses = vm.misses.Load()
	for _, p := range vm.ports {
		st.TLBMisses += p.misses.Load()
	}
	vm.portsMu.Unlock()
	st.Faults = vm.faults.Load()
	st.Retries = vm.retries.Load()
	st.Fatal = vm.fatal.Load()
	return st
}

func (vm *VM) newTable(level int) *table {
	t := &table{pa: PageTableBase + (vm.ph.ptNextPA.Add(tableBytes)-tableBytes)%(physLimit-PageTableBase)}
	if level != lvlPTB { // a PTB's entries come with its first write (own) or as a run
		t.e, t.child = new([entries]PTE), new([entries]*table)
	}
	vm.nTables++
	vm.ph.ptBytes.Add(tableBytes)
	return t
}

func (vm *VM) freeTable() {
	vm.nTables--
	vm.ph.ptBytes.Add(-tableBytes)
}

func checkVA(va, size uint64) error {
	if va&pageMask != 0 || size&pageMask != 0 || size == 0 {
		return fmt.Errorf("%w: va %#x size %#x", ErrAlign, va, size)
	}
	if va+size < va || va+size > 1<<VABits {
		return fmt.Errorf("%w: va %#x size %#x", ErrRange, va, size)
	}
	return nil
}

// mapFlags are the flags Map accepts; the address, fragment, PDE_PTE and TF fields are the VM's.
const mapFlags = PTEValid | PTESystem | PTESnooped | PTETMZ | PTEExecutable | PTEReadable |
	PTEWriteable | PTEPRT | PTELog | PTEMTypeMask

// updateFlags are the flags Update may change.
const updateFlags = PTESnooped | PTETMZ | PTEExecutable | PTEReadable | PTEWriteable | PTELog | PTEMTypeMask

// fragment is amdgpu_vm_pte_fragment for pages [vpn, end) mapped to ppn..: the largest aligned
// power-of-two block that starts at vpn and fits, limited (unlike the kernel, which trusts the VRAM
// allocator) also by the alignment of the physical page. System pages are not contiguous: 0.
func fragment(vpn, end, ppn uint64, system bool, limit uint) (frag uint, fragEnd uint64) {
	if system {
		return 0, end
	}
	frag = uint(min(bits.TrailingZeros64(vpn), bits.TrailingZeros64(ppn), bits.Len64(end-vpn)-1))
	if frag >= limit {
		return limit, end &^ (1<<limit - 1)
	}
	return frag, vpn + 1<<frag
}

// Map maps [va, va+size) to [pa, pa+size) with flags (PTEValid is implied). Like
// amdgpu_vm_ptes_update it writes a 2 MiB PDB0 leaf (PDE_PTE) wherever the fragment reaches 2 MiB
// (va and pa 2 MiB aligned, range long enough, not system memory) and 4 KiB PTEs with the fragment
// field elsewhere. Overlapping a valid mapping is ErrOverlap and changes nothing. The PA need not
// be allocated; an access through a PTE whose PA has no Phys segment is a fatal FaultNoBacking.
func (vm *VM) Map(va, size, pa uint64, flags PTE) error {
	if err := checkVA(va, size); err != nil {
		return err
	}
	if pa&pageMask != 0 || pa+size < pa || pa+size > physLimit {
		return fmt.Errorf("%w: pa %#x size %#x", ErrRange, pa, size)
	}
	if flags&^mapFlags != 0 {
		return fmt.Errorf("%w: flags %#x outside %#x", ErrInvalid, uint64(flags), uint64(mapFlags))
	}
	vpn, end, ppn := va>>pageShift, (va+size)>>pageShift, pa>>pageShift
	vm.mu.Lock()
	defer vm.mu.Unlock()
	if vm.closed.Load() {
		return ErrClosed
	}
	if vm.anyValid(vpn, end) {
		return fmt.Errorf("%w: [%#x, %#x)", ErrOverlap, va, va+size)
	}
	vm.fill(vpn, end, ppn, flags|PTEValid)
	return nil
}

// anyValid reports whether a valid leaf maps a page of [vpn, end).
func (vm *VM) anyValid(vpn, end uint64) bool {
	for v := vpn; v < end; {
		t, l := vm.root, lvlPDB2
		for t != nil {
			e := t.at((v >> levelShift(l)) & (entries - 1))
			if e == 0 {
				break
			}
			if l == lvlPTB || e&PDEPTE != 0 {
				return true
			}
			t = t.child[(v>>levelShift(l))&(entries-1)]
			l++
		}
		if t == nil && l == lvlPDB2 {
			return false // no root
		}
		v = (v>>levelShift(l) + 1) << levelShift(l) // next entry at the level with the hole
	}
	return false
}

// ensure returns the table at level for vpn, allocating the directories on the way.
func (vm *VM) ensure(vpn uint64, level int) *table {
	if vm.root == nil {
		vm.root = vm.newTable(lvlPDB2)
	}
	t := vm.root
	for l := lvlPDB2; l < level; l++ {
		i := (vpn >> levelShift(l)) & (entries - 1)
		if t.e[i] == 0 {
			c := vm.newTable(l + 1)
			t.child[i] = c
			t.e[i] = PTE(c.pa) | PTEValid
			t.used++
		}
		t = t.child[i]
	}
	return t
}

// fill writes leaves for [vpn, end) -> ppn.. (no valid leaf in the range), following the fragment
// walk of amdgpu_vm_ptes_update.
func (vm *VM) fill(vpn, end, ppn uint64, flags PTE) {
	system := flags&PTESystem != 0
	for vpn < end {
		frag, fragEnd := fragment(vpn, end, ppn, system, maxFrag)
		if frag >= levelShift(lvlPDB0) {
			for ; vpn < fragEnd; vpn, ppn = vpn+hugePages, ppn+hugePages {
				t := vm.ensure(vpn, lvlPDB0)
				i := (vpn >> levelShift(lvlPDB0)) & (entries - 1)
				t.e[i] = PTE(ppn<<pageShift) | flags | PDEPTE | PTEFrag(frag)
				t.used++
				vm.nPDE2M++
			}
			continue
		}
		for vpn < fragEnd {
			t := vm.ensure(vpn, lvlPTB)
			if t.used == 0 && vpn&(entries-1) == 0 && fragEnd-vpn >= entries && !vm.noRuns {
				t.run, t.used = PTE(ppn<<pageShift)|flags|PTEFrag(frag), entries
				vpn, ppn = vpn+entries, ppn+entries
				vm.nPTE4K += entries
				continue
			}
			e := t.own()
			for i := vpn & (entries - 1); i < entries && vpn < fragEnd; i, vpn, ppn = i+1, vpn+1, ppn+1 {
				e[i] = PTE(ppn<<pageShift) | flags | PTEFrag(frag)
				t.used++
				vm.nPTE4K++
			}
		}
	}
}

// lookup walks the tables for va (vm.mu held): the leaf and its page size.
func (vm *VM) lookup(va uint64) (PTE, uint64, bool) { return vm.lookupLine(va, nil) }

// ptesPerLine is the number of 8-byte PTEs in a 64-byte line of a PTB (what a Port's walk loads).
const ptesPerLine = 8

// lookupLine is lookup, and for a 4 KiB leaf it also copies the entries of va's aligned line of
// ptesPerLine PTEs into line (zero where invalid) when line is not nil. The caller holds mu for
// reading.
func (vm *VM) lookupLine(va uint64, line *[ptesPerLine]PTE) (PTE, uint64, bool) {
	if va >= 1<<VABits {
		return 0, 0, false
	}
	vpn := va >> pageShift
	t := vm.root
	for l := lvlPDB2; t != nil; l++ {
		i := (vpn >> levelShift(l)) & (entries - 1)
		e := t.at(i)
		switch {
		case e == 0:
			return 0, 0, false
		case l == lvlPTB:
			if line != nil {
				base := i &^ (ptesPerLine - 1)
				for k := range line {
					line[k] = t.at(base + uint64(k))
				}
			}
			return e, pageSize, true
		case l == lvlPDB0 && e&PDEPTE != 0:
			return e, hugeSize, true
		}
		t = t.child[i]
	}
	return 0, 0, false
}

// Walk translates va like the hardware walker: the leaf entry (a PTE, or a PDB0 entry with
// PDEPTE) and the size of the page it maps.
func (vm *VM) Walk(va uint64) (pte PTE, pageSize uint64, ok bool) {
	vm.mu.RLock()
	defer vm.mu.RUnlock()
	return vm.lookup(va)
}

// Unmap clears the leaves of [va, va+size) (holes are allowed), frees tables left empty, and
// invalidates: every Port's TLB is flushed and Unmap returns only when no Port is inside an access
// that began before (so the memory behind the range may be freed). A 2 MiB leaf the range covers
// only in part is split into a PTB first.
func (vm *VM) Unmap(va, size uint64) error {
	if err := checkVA(va, size); err != nil {
		return err
	}
	return vm.modify(va>>pageShift, (va+size)>>pageShift, true, 0, 0)
}

// Update changes the flags of the valid leaves of [va, va+size) to (flags &^ clear) | set, e.g. to
// make a range read-only, and invalidates like Unmap. Only updateFlags may change.
func (vm *VM) Update(va, size uint64, set, clear PTE) error {
	if err := checkVA(va, size); err != nil {
		return err
	}
	if (set|clear)&^updateFlags != 0 {
		return fmt.Errorf("%w: flags %#x outside %#x", ErrInvalid, uint64(set|clear), uint64(updateFlags))
	}
	return vm.modify(va>>pageShift, (va+size)>>pageShift, false, set, clear)
}

func (vm *VM) modify(vpn, end uint64, unmap bool, set, clear PTE) error {
	vm.mu.Lock()
	if vm.closed.Load() {
		vm.mu.Unlock()
		return ErrClosed
	}
	changed := vm.modifyLocked(vpn, end, unmap, set, clear)
	var g uint64
	if changed {
		g = vm.gen.Add(1)
		vm.flushes.Add(1)
	}
	vm.mu.Unlock()
	if changed {
		vm.quiesce(g)
	}
	return nil
}

// Remap replaces whatever maps [va, va+size) by [pa, pa+size) with flags in one step under the
// table lock, as amdgpu_vm_update_range rewrites valid PTEs in place: a concurrent walk sees the
// old or the new translation, never a hole. Then it invalidates like Unmap, if a valid leaf was
// replaced.
func (vm *VM) Remap(va, size, pa uint64, flags PTE) error {
	if err := checkVA(va, size); err != nil {
		return err
	}
	if pa&pageMask != 0 || pa+size < pa || pa+size > physLimit {
		return fmt.Errorf("%w: pa %#x size %#x", ErrRange, pa, size)
	}
	if flags&^mapFlags != 0 {
		return fmt.Errorf("%w: flags %#x outside %#x", ErrInvalid, uint64(flags), uint64(mapFlags))
	}
	vpn, end, ppn := va>>pageShift, (va+size)>>pageShift, pa>>pageShift
	vm.mu.Lock()
	if vm.closed.Load() {
		vm.mu.Unlock()
		return ErrClosed
	}
	replaced := vm.modifyLocked(vpn, end, true, 0, 0)
	vm.fill(vpn, end, ppn, flags|PTEValid)
	if !replaced {
		// Nothing was mapped there: no TLB can hold a translation of the range (a miss loads
		// none), so there is nothing to invalidate; this is Map (a GPU retry fault's common case,
		// which must not stall every other port of the VM).
		vm.mu.Unlock()
		return nil
	}
	g := vm.gen.Add(1)
	vm.flushes.Add(1)
	vm.mu.Unlock()
	vm.quiesce(g)
	return nil
}

// modifyLocked clears (unmap) or updates the valid leaves of [vpn, end); vm.mu is held. It
// reports whether a leaf changed.
func (vm *VM) modifyLocked(vpn, end uint64, unmap bool, set, clear PTE) bool {
	changed := false
	apply := func(e PTE) PTE { return e&^clear | set }
	var path [levels]struct {
		t *table
		i uint64
	}
	for v := vpn; v < end; {
		t, l := vm.root, lvlPDB2
		if t == nil {
			break
		}
		hole := false
		for ; ; l++ {
			i := (v >> levelShift(l)) & (entries - 1)
			path[l].t, path[l].i = t, i
			e := t.at(i)
			if e == 0 {
				hole = true
				break
			}
			if l == lvlPTB {
				break
			}
			if l == lvlPDB0 && e&PDEPTE != 0 {
				base := v &^ (hugePages - 1)
				if base >= vpn && base+hugePages <= end {
					changed = true
					if unmap {
						t.e[i] = 0
						t.used--
						vm.nPDE2M--
						vm.prune(&path, l)
					} else {
						t.e[i] = apply(e)
					}
					v = base + hugePages
					goto next
				}
				vm.split(t, i)
			}
			t = t.child[i]
		}
		if hole {
			v = (v>>levelShift(l) + 1) << levelShift(l)
			continue
		}
		// A PTB: the part of [v, end) inside it.
		{
			ptbStart := v &^ (entries - 1)
			hi := min(end, ptbStart+entries)
			if t.e == nil && v == ptbStart && hi == ptbStart+entries { // a whole run
				if unmap {
					t.run, t.used = 0, 0
					vm.nPTE4K -= entries
				} else {
					t.run = apply(t.run) // flags only: entry k is still run + k pages
				}
				changed = true
				v = hi
			}
			for ; v < hi; v++ {
				i := v & (entries - 1)
				if e := t.at(i); e != 0 {
					changed = true
					if unmap {
						t.own()[i] = 0
						t.used--
						vm.nPTE4K--
					} else {
						t.own()[i] = apply(e)
					}
				}
			}
			if t.used == 0 {
				vm.prune(&path, lvlPTB)
			} else if vpn > ptbStart || end < ptbStart+entries {
				refrag(t, ptbStart)
			}
		}
	next:
	}
	return changed
}

// prune frees the table path[l].t if it is empty and l is not a leaf entry's level, walking up.
// It is called after an entry of path[l].t was cleared.
func (vm *VM) prune(path *[levels]struct {
	t *table
	i uint64
}, l int) {
	for ; l >= lvlPDB2; l-- {
		if path[l].t.used != 0 {
			return
		}
		vm.freeTable()
		if l == lvlPDB2 {
			vm.root = nil
			return
		}
		p := path[l-1]
		p.t.e[p.i] = 0
		p.t.child[p.i] = nil
		p.t.used--
	}
}

// split replaces the 2 MiB leaf t.e[i] (a PDB0 entry) by a PTB of 512 PTEs with the same flags
// (what amdgpu does by clearing the range and mapping the remainders again).
func (vm *VM) split(t *table, i uint64) {
	e := t.e[i]
	c := vm.newTable(lvlPTB)
	flags := e &^ (PTEAddrMask | PDEPTE | PTEFragMask)
	c.run, c.used = PTE(e.Addr())|flags|PTEFrag(min(e.Frag(), maxPTBFrag)), entries
	if vm.noRuns {
		c.own()
	}
	t.child[i] = c
	t.e[i] = PTE(c.pa) | PTEValid
	vm.nPDE2M--
	vm.nPTE4K += entries
}

// refrag recomputes the fragment fields of a PTB (first page ptbStart) after part of it changed:
// runs of valid, physically contiguous pages with equal flags get the fragments
// amdgpu_vm_pte_fragment gives them, so no fragment spans pages that are no longer alike.
func refrag(t *table, ptbStart uint64) {
	const same = ^(PTEAddrMask | PTEFragMask)
	if t.e == nil {
		return // a run: one fragment field throughout, unchanged
	}
	for i := 0; i < entries; {
		if t.e[i] == 0 {
			i++
			continue
		}
		j := i + 1
		for j < entries && t.e[j] != 0 && t.e[j]&same == t.e[i]&same &&
			t.e[j].Addr() == t.e[j-1].Addr()+pageSize {
			j++
		}
		system := t.e[i]&PTESystem != 0
		vpn, end, ppn := ptbStart+uint64(i), ptbStart+uint64(j), t.e[i].Addr()>>pageShift
		for vpn < end {
			frag, fragEnd := fragment(vpn, end, ppn, system, maxPTBFrag)
			for ; vpn < fragEnd; vpn, ppn = vpn+1, ppn+1 {
				k := vpn - ptbStart
				t.e[k] = t.e[k]&^PTEFragMask | PTEFrag(frag)
			}
		}
		i = j
	}
}

// Close tears the VM down (amdgpu_vm_fini): every later access faults fatally (FaultClosed), all
// tables are freed and Map/Unmap/Update return ErrClosed. It waits like Unmap.
func (vm *VM) Close() {
	vm.mu.Lock()
	if vm.closed.Swap(true) {
		vm.mu.Unlock()
		return
	}
	if vm.root != nil {
		vm.freeTree(vm.root, lvlPDB2)
		vm.root = nil
	}
	vm.nPTE4K, vm.nPDE2M = 0, 0
	g := vm.gen.Add(1)
	vm.flushes.Add(1)
	vm.mu.Unlock()
	vm.quiesce(g)
}

func (vm *VM) freeTree(t *table, l int) {
	if t.child != nil {
		for _, c := range t.child {
			if c != nil {
				vm.freeTree(c, l+1)
			}
		}
	}
	vm.freeTable()
}

// quiesce waits until every Port is outside an access or inside one it entered at generation >= g.
func (vm *VM) quiesce(g uint64) {
	vm.portsMu.Lock()
	ports := slices.Clone(vm.ports)
	vm.portsMu.Unlock()
	for _, p := range ports {
		for spin := 0; ; spin++ {
			if a := p.active.Load(); a == 0 || a >= g {
				break
			}
			if spin < 64 {
				runtime.Gosched()
			} else {
				hrtimer.Sleep(20 * time.Microsecond) // a time.Sleep under 1 ms takes 1 ms on an idle daemon
			}
		}
	}
}
