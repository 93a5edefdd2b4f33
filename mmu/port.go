package mmu

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sync/atomic"
)

// tlbLines is the number of lines of a Port's TLB. It is fully associative: each line holds the
// translations of one aligned line of ptesPerLine PTEs (what a walk loads, fill), so the TLB maps
// up to 128 pages, and no distance between the pages a work-group streams through makes them evict
// each other. Before it was direct-mapped by the low VPN bits (64 pages), and the three arrays of a
// vector add 64 MiB apart shared one slot: every access of every wave walked the page tables, each
// walk an RLock of the VM (2026-12-02, kfdemu bench's vadd: 3 walks per wave; folding the VPN into
// the index only moved the bad distances: a gpu/shader benchmark's arrays 1040 pages apart then
// collided).
const tlbLines = 16

// tlbLine caches the translations of the pages of line (VPN / ptesPerLine), 2 MiB leaves per
// 4 KiB page. It is valid only while gen equals the generation of the current access section.
type tlbLine struct {
	gen  uint64
	line uint64
	e    [ptesPerLine]tlbEntry
}

// tlbEntry is one page's translation; flags 0: not loaded.
type tlbEntry struct {
	flags  PTE
	mem    []byte // the page's bytes in a Mem backing (len 4096), or nil
	remote Remote
	raddr  uint64 // remote address of the page
}

// Port is one engine's window on a VM (its UTCL1/TLB): the AQL packet processor of a queue, an
// SDMA engine, the waves of a dispatch. A Port is used by one goroutine at a time. Accesses may
// span pages; each page is translated separately. A TLB hit takes no lock and does not allocate.
type Port struct {
	_      [64]byte
	active atomic.Uint64 // generation the current access entered at, 0 outside (own cache line)
	_      [56]byte

	vm      *VM
	misses  atomic.Uint64 // page walks (VM.Stats sums the Ports': a shared counter was a contended line)
	cur     uint64        // generation of the current access section
	closed  bool
	scratch [32]byte // remote words: up to 8 bytes, or 8 and AtomicAddTail's tail
	tlb     [tlbLines]tlbLine
	mru     int // the line of the last hit or fill
	victim  int // the line the next fill of a new line replaces (round robin)
	// A vectored access's pending pieces of one RemoteV backing (ReadV, WriteV).
	vr     RemoteV
	vbufs  [][]byte
	vaddrs []uint64
	vfirst int // index of the first pending piece in the caller's slice
	// batchFaults' scratch: the faults found, their pieces, those serviced and the outcomes.
	bf   []Fault
	bi   []int
	bsel []Fault
	bsi  []int
	bok  []bool
}

// NewPort returns a new Port on vm.
func (vm *VM) NewPort() *Port {
	p := &Port{vm: vm}
	vm.portsMu.Lock()
	vm.ports = append(vm.ports, p)
	vm.portsMu.Unlock()
	return p
}

// Close detaches the Port from its VM; later accesses return ErrClosed.
func (p *Port) Close() {
	if p.closed {
		return
	}
	p.closed = true
	p.active.Store(0)
	p.tlb = [tlbLines]tlbLine{}
	vm := p.vm
	vm.portsMu.Lock()
	if i := slices.Index(vm.ports, p); i >= 0 {
		vm.ports = slices.Delete(vm.ports, i, i+1)
	}
	vm.misses.Add(p.misses.Load())
	vm.portsMu.Unlock()
}

// enter publishes the generation the access starts at. The store to active and the load of the
// VM's generation are sequentially consistent against the VM's generation increment and its load
// of active in quiesce, so either the invalidation waits for this access or the access sees the new
// generation (and so never uses a TLB entry from before it).
func (p *Port) enter() error {
	if p.closed {
		return ErrClosed
	}
	for {
		g := p.vm.gen.Load()
		p.active.Store(g)
		if p.vm.gen.Load() == g {
			p.cur = g
			return nil
		}
	}
}

func (p *Port) leave() { p.active.Store(0) }

// translate returns the TLB entry for va's page, walking and servicing faults on a miss. Called
// inside the access section; the fault path leaves and re-enters it.
func (p *Port) translate(va uint64, acc Access) (*tlbEntry, error) {
	if e := p.hit(va>>pageShift, acc); e != nil {
		return e, nil
	}
	return p.miss(va, acc)
}

// hit returns the TLB entry of page vpn if it holds a translation of the current access section
// with the permission acc needs, else nil.
func (p *Port) hit(vpn uint64, acc Access) *tlbEntry {
	l := vpn / ptesPerLine
	t := &p.tlb[p.mru]
	if t.line != l || t.gen != p.cur {
		i := p.find(l)
		if i < 0 {
			return nil
		}
		p.mru, t = i, &p.tlb[i]
	}
	if e := &t.e[vpn%ptesPerLine]; e.flags != 0 && e.flags&accessNeed[acc] == accessNeed[acc] {
		return e
	}
	return nil
}

// find returns the TLB line holding line l in the current generation, or -1.
func (p *Port) find(l uint64) int {
	for i := range p.tlb {
		if t := &p.tlb[i]; t.line == l && t.gen == p.cur {
			return i
		}
	}
	return -1
}

func (p *Port) miss(va uint64, acc Access) (*tlbEntry, error) {
	vm := p.vm
	p.misses.Add(1)
	for retries := 0; ; {
		kind, ok := p.fill(va, acc)
		if ok {
			vpn := va >> pageShift
			return &p.tlb[p.mru].e[vpn%ptesPerLine], nil
		}
		f := vm.newFault(va, acc, kind)
		if !f.Retryable || retries >= vm.maxRetries {
			vm.faults.Add(1)
			vm.record(f, OutcomeFatal, retries)
			return nil, &FaultError{Fault: f}
		}
		p.leave()
		retry, counted := vm.service(&f, retries)
		if err := p.enter(); err != nil {
			return nil, err
		}
		if !retry {
			return nil, &FaultError{Fault: f}
		}
		if counted {
			retries++
		}
	}
}

// fill walks the page tables for va and loads the TLB entry, or says which fault it is. Like the
// UTCL2 walker, which reads page table entries a 64-byte line at a time, it also loads the other
// valid entries of va's line of 8 PTEs (4 KiB pages): a page walk takes the VM's read lock, whose
// reader count two workers streaming through memory fought over on every page (kfdemu bench's
// vadd on 2 workers), and a neighbour's entry is as current as va's (the same walk, the same
// generation).
func (p *Port) fill(va uint64, acc Access) (FaultKind, bool) {
	vm := p.vm
	var line [ptesPerLine]PTE
	vm.mu.RLock()
	pte, size, ok := vm.lookupLine(va, &line)
	vm.mu.RUnlock()
	switch {
	case vm.closed.Load():
		return FaultClosed, false
	case !ok:
		return FaultNotPresent, false
	case pte&accessNeed[acc] != accessNeed[acc]:
		return FaultProtection, false
	}
	pa := pte.Addr() + (va&(size-1))&^pageMask
	seg := vm.ph.lookup(pa)
	if seg == nil {
		return FaultNoBacking, false
	}
	vpn := va >> pageShift
	i := p.find(vpn / ptesPerLine)
	if i < 0 {
		i = p.victim
		p.victim = (i + 1) % tlbLines
		p.tlb[i] = tlbLine{gen: p.cur, line: vpn / ptesPerLine}
	}
	p.mru = i
	t := &p.tlb[i]
	t.load(vpn, pte, seg, pa)
	base := vpn &^ (ptesPerLine - 1)
	for i, e := range line {
		n := base + uint64(i)
		if size != pageSize { // a 2 MiB leaf: the line's pages are in it too
			e = pte
		}
		if n == vpn || e == 0 {
			continue
		}
		npa := e.Addr() + (n<<pageShift)&(size-1)
		s := seg
		if npa < s.pa || npa-s.pa >= s.size {
			if s = vm.ph.lookup(npa); s == nil {
				continue
			}
		}
		t.load(n, e, s, npa)
	}
	return 0, true
}

// load puts the translation of page vpn (in the line) to pa (in seg) with flags pte in the line.
func (t *tlbLine) load(vpn uint64, pte PTE, seg *segment, pa uint64) {
	e := &t.e[vpn%ptesPerLine]
	off := pa - seg.pa
	*e = tlbEntry{flags: pte}
	if seg.b.Mem != nil {
		e.mem = seg.b.Mem[off : off+pageSize : off+pageSize]
	} else {
		e.remote, e.raddr = seg.b.Remote, seg.b.RemoteAddr+off
	}
}

func (p *Port) copyAccess(va uint64, b []byte, acc Access) error {
	if err := p.enter(); err != nil {
		return err
	}
	for len(b) > 0 {
		off := va & pageMask
		n := min(uint64(len(b)), pageSize-off)
		e, err := p.translate(va, acc)
		if err != nil {
			p.leave()
			return err
		}
		switch {
		case e.mem != nil && acc == AccessWrite:
			copy(e.mem[off:], b[:n])
		case e.mem != nil:
			copy(b[:n], e.mem[off:])
		case acc == AccessWrite:
			err = e.remote.WriteAt(b[:n], e.raddr+off)
		default:
			err = e.remote.ReadAt(b[:n], e.raddr+off)
		}
		if err != nil {
			p.leave()
			return fmt.Errorf("%w: va %#x: %w", ErrRemote, va, err)
		}
		va += n
		b = b[n:]
	}
	p.leave()
	return nil
}

// ReadV reads the pieces bufs[i] at vas[i], each within one page, as Read would one after the
// other, and returns how many were read before an error (the error is the one Read of piece n
// would return). Pieces that live in one RemoteV backing move in one call: a wave's lanes on
// distinct pages of client memory cost one process_vm_readv, not one each.
func (p *Port) ReadV(vas []uint64, bufs [][]byte) (int, error) {
	return p.vecAccess(vas, bufs, AccessRead)
}

// WriteV writes the pieces bufs[i] to vas[i], as Write would one after the other (see ReadV).
func (p *Port) WriteV(vas []uint64, bufs [][]byte) (int, error) {
	return p.vecAccess(vas, bufs, AccessWrite)
}

// vecAccess is ReadV and WriteV. First every page is translated in order, so that retry faults
// are serviced (each leaves the access section) before anything moves; a fatal fault ends the
// batch there. Then one access section moves the pieces, batching consecutive pieces of the same
// RemoteV backing; a piece whose page is no longer in the TLB (invalidated meanwhile) flushes the
// batch before it is translated again, so that no batched piece outlives a section.
func (p *Port) vecAccess(vas []uint64, bufs [][]byte, acc Access) (int, error) {
	if len(vas) != len(bufs) {
		return 0, fmt.Errorf("%w: %d addresses, %d buffers", ErrInvalid, len(vas), len(bufs))
	}
	if err := p.enter(); err != nil {
		return 0, err
	}
	lim, ferr := len(vas), error(nil)
	if p.vm.cfg.FaultBatch != nil && p.vm.retry.Load() {
		var err error
		if lim, ferr, err = p.batchFaults(vas, acc); err != nil {
			return 0, err
		}
	}
	for i, va := range vas[:lim] {
		if va&pageMask+uint64(len(bufs[i])) > pageSize {
			lim, ferr = i, fmt.Errorf("%w: piece at %#x of %d bytes crosses a page", ErrInvalid, va, len(bufs[i]))
			break
		}
		if _, err := p.translate(va, acc); err != nil {
			lim, ferr = i, err
			break
		}
	}
	if ferr != nil && lim == 0 {
		p.leave()
		return 0, ferr
	}
	if err := p.enter(); err != nil { // re-enter: a fault at the end may have left the section
		return 0, err
	}
	for i := 0; i < lim; i++ {
		va, b := vas[i], bufs[i]
		off := va & pageMask
		e := p.hit(va>>pageShift, acc)
		if e == nil {
			if n, err := p.flushV(acc); err != nil {
				p.leave()
				return n, err
			}
			var err error
			if e, err = p.translate(va, acc); err != nil {
				p.leave()
				return i, err
			}
		}
		if r, ok := e.remote.(RemoteV); ok && e.mem == nil {
			if p.vr != nil && p.vr != r {
				if n, err := p.flushV(acc); err != nil {
					p.leave()
					return n, err
				}
			}
			if p.vr == nil {
				p.vr, p.vfirst = r, i
			}
			p.vbufs = append(p.vbufs, b)
			p.vaddrs = append(p.vaddrs, e.raddr+off)
			continue
		}
		if n, err := p.flushV(acc); err != nil { // keep the pieces in order
			p.leave()
			return n, err
		}
		var err error
		switch {
		case e.mem != nil:
			memPiece(e.mem, off, b, acc == AccessWrite)
		case acc == AccessWrite:
			err = e.remote.WriteAt(b, e.raddr+off)
		default:
			err = e.remote.ReadAt(b, e.raddr+off)
		}
		if err != nil {
			p.leave()
			return i, fmt.Errorf("%w: va %#x: %w", ErrRemote, va, err)
		}
	}
	n, err := p.flushV(acc)
	p.leave()
	if err != nil {
		return n, err
	}
	return lim, ferr
}

// memPiece moves one piece of a vectored access on a Mem backing. An aligned word (4 or 8 bytes)
// moves as Load32/Load64 and Store32/Store64 move it (an atomic load, a release store): the CP
// stores a packet slot's header and the read index this way (gpu/cp), as it did with Store32 and
// Store64 before they were one vectored access.
func memPiece(mem []byte, off uint64, b []byte, write bool) {
	switch {
	case len(b) == 4 && off%4 == 0 && write:
		store32(mem, off, binary.LittleEndian.Uint32(b))
	case len(b) == 4 && off%4 == 0:
		binary.LittleEndian.PutUint32(b, load32(mem, off))
	case len(b) == 8 && off%8 == 0 && write:
		store64(mem, off, binary.LittleEndian.Uint64(b))
	case len(b) == 8 && off%8 == 0:
		binary.LittleEndian.PutUint64(b, load64(mem, off))
	case write:
		copy(mem[off:], b)
	default:
		copy(b, mem[off:])
	}
}

// batchFaults walks the pages of a vectored access's pieces that miss the TLB and services the
// retry faults it finds in one Config.FaultBatch call (VM.serviceBatch), so that the access's own
// translations find them mapped: a wave whose lanes store to 64 unmapped pages costs one handler
// call, not 64. The walk stops at a fault that is not a retry fault (the access ends there). One
// fault alone is left to translate. It returns how many pieces the access may move and, when that
// is fewer than all, the error of the first piece whose fault the handler did not resolve (as
// miss returns it); err is the access section's (ErrClosed). Called inside the access section; it
// leaves and re-enters it around the handler.
func (p *Port) batchFaults(vas []uint64, acc Access) (lim int, ferr, err error) {
	vm := p.vm
	p.bf, p.bi = p.bf[:0], p.bi[:0]
	for i, va := range vas {
		vpn := va >> pageShift
		if n := len(p.bf); n > 0 && p.bf[n-1].VA>>pageShift == vpn {
			continue
		}
		if p.hit(vpn, acc) != nil {
			continue
		}
		p.misses.Add(1)
		kind, ok := p.fill(va, acc)
		if ok {
			continue
		}
		f := vm.newFault(va, acc, kind)
		if !f.Retryable {
			break
		}
		p.bf = append(p.bf, f)
		p.bi = append(p.bi, i)
	}
	if len(p.bf) < 2 {
		return len(vas), nil, nil
	}
	p.leave()
	p.bsel, p.bsi, p.bok = vm.serviceBatch(p.bf, p.bsel, p.bsi, p.bok)
	if err := p.enter(); err != nil {
		return 0, nil, err
	}
	for k, ok := range p.bok {
		if !ok {
			return p.bi[p.bsi[k]], &FaultError{Fault: p.bsel[k]}, nil
		}
	}
	return len(vas), nil, nil
}

// flushV moves the pending pieces of p.vr; on an error it returns the index of the first piece not
// moved.
func (p *Port) flushV(acc Access) (int, error) {
	if p.vr == nil {
		return 0, nil
	}
	var n int
	var err error
	if acc == AccessWrite {
		n, err = p.vr.WriteV(p.vbufs, p.vaddrs)
	} else {
		n, err = p.vr.ReadV(p.vbufs, p.vaddrs)
	}
	first, addr := p.vfirst, uint64(0)
	if err != nil && n < len(p.vaddrs) {
		addr = p.vaddrs[n]
	}
	clear(p.vbufs) // drop the references to the caller's buffers
	p.vr, p.vbufs, p.vaddrs = nil, p.vbufs[:0], p.vaddrs[:0]
	if err != nil {
		return first + n, fmt.Errorf("%w: remote %#x: %w", ErrRemote, addr, err)
	}
	return 0, nil
}

// Read copies len(b) bytes at va into b (needs PTEReadable).
func (p *Port) Read(va uint64, b []byte) error { return p.copyAccess(va, b, AccessRead) }

// Write copies b to va (needs PTEWriteable).
func (p *Port) Write(va uint64, b []byte) error { return p.copyAccess(va, b, AccessWrite) }

// Fetch reads instructions or packets at va (needs PTEExecutable).
func (p *Port) Fetch(va uint64, b []byte) error { return p.copyAccess(va, b, AccessExec) }

// misaligned records and returns the fatal fault of a word access that is not naturally aligned.
func (p *Port) misaligned(va uint64, acc Access) error {
	vm := p.vm
	f := Fault{VA: va, PASID: vm.cfg.PASID, GPU: vm.cfg.GPU, Access: acc, Kind: FaultMisaligned}
	vm.faults.Add(1)
	vm.record(f, OutcomeFatal, 0)
	return &FaultError{Fault: f}
}

// word translates the naturally aligned size-byte word at va inside the access section.
func (p *Port) word(va uint64, size int, acc Access) (*tlbEntry, error) {
	if va%uint64(size) != 0 {
		return nil, p.misaligned(va, acc)
	}
	if err := p.enter(); err != nil {
		return nil, err
	}
	e, err := p.translate(va, acc)
	if err != nil {
		p.leave()
	}
	return e, err
}

func remoteErr(va uint64, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w: va %#x: %w", ErrRemote, va, err)
}

// Atomic applies f to the naturally aligned 4- or 8-byte word at va as one atomic read-modify-write
// and returns the old value (needs PTEReadable and PTEWriteable). On Mem backing it is a CAS loop
// (LOCK CMPXCHG) on the backing word: one hardware read-modify-write, atomic against every other
// access to the memory, the client's CPU atomics included (f may run more than once; it must be
// pure). On Remote backing (userptr and SVM pages of the client, reached with process_vm_readv/
// writev) it is a read and a write under the Phys's remote mutex: atomic against the Atomic and
// Store calls of every Port of every VM, not against the client's own CPU accesses: a CPU store or
// atomic to the word between the read and the write is lost (no Linux interface performs an atomic
// operation in another process's private memory or maps it into this one). f == nil is an atomic
// load (Load32/Load64: needs PTEReadable only).
func (p *Port) Atomic(va uint64, size int, f func(old uint64) uint64) (uint64, error) {
	if size != 4 && size != 8 {
		return 0, fmt.Errorf("%w: atomic size %d", ErrInvalid, size)
	}
	if f == nil {
		if size == 4 {
			v, err := p.Load32(va)
			return uint64(v), err
		}
		return p.Load64(va)
	}
	e, err := p.word(va, size, AccessAtomic)
	if err != nil {
		return 0, err
	}
	off := va & pageMask
	var old uint64
	switch {
	case e.mem != nil && size == 4:
		old = rmw32(e.mem, off, f)
	case e.mem != nil:
		old = rmw64(e.mem, off, f)
	default:
		old, err = p.remoteRMW(e, off, size, f)
	}
	p.leave()
	return old, remoteErr(va, err)
}

// AtomicAdd adds delta to the naturally aligned 4- or 8-byte word at va (wrapping; a 4-byte add uses
// the low 32 bits of delta) and returns the old value, as Atomic with f = old + delta but, on Mem
// backing, with one LOCK XADD (sync/atomic Add), which never retries however contended the word is
// (a CPU thread hammering it included). Remote backing: as Atomic.
func (p *Port) AtomicAdd(va uint64, size int, delta uint64) (uint64, error) {
	if size != 4 && size != 8 {
		return 0, fmt.Errorf("%w: atomic size %d", ErrInvalid, size)
	}
	e, err := p.word(va, size, AccessAtomic)
	if err != nil {
		return 0, err
	}
	off := va & pageMask
	var old uint64
	switch {
	case e.mem != nil && size == 4:
		old = uint64(add32(e.mem, off, uint32(delta)))
	case e.mem != nil:
		old = add64(e.mem, off, delta)
	default:
		old, err = p.remoteRMW(e, off, size, func(o uint64) uint64 { return o + delta })
	}
	p.leave()
	return old, remoteErr(va, err)
}

// MaxTail is the longest tail AtomicAddTail reads in the same access as its word.
const MaxTail = 24

// AtomicAddTail is AtomicAdd of the naturally aligned 64-bit word at va that also reads the
// len(tail) bytes that follow it (va+8 on) into tail, in the same access when they lie in the
// word's page and len(tail) <= MaxTail: on Remote backing one read of word and tail and one write
// of the word, where AtomicAdd and a Read after it are two reads and a write (each a
// process_vm_readv or _writev). A packet processor completing an amd_signal_t (decrement value,
// then read event_mailbox_ptr and event_id) is its user. The tail is read at the add (Remote: just
// before the write; Mem: just after the add); a concurrent writer of the tail may be seen either
// side of it, as with a separate Read. Past the page or MaxTail the tail is a second access (Read).
func (p *Port) AtomicAddTail(va uint64, delta uint64, tail []byte) (uint64, error) {
	if len(tail) > MaxTail || va&pageMask+8+uint64(len(tail)) > pageSize {
		old, err := p.AtomicAdd(va, 8, delta)
		if err != nil {
			return old, err
		}
		return old, p.Read(va+8, tail)
	}
	e, err := p.word(va, 8, AccessAtomic)
	if err != nil {
		return 0, err
	}
	off := va & pageMask
	var old uint64
	if e.mem != nil {
		old = add64(e.mem, off, delta)
		copy(tail, e.mem[off+8:])
	} else {
		old, err = p.remoteRMWTail(e, off, 8, tail, func(o uint64) uint64 { return o + delta })
	}
	p.leave()
	return old, remoteErr(va, err)
}

// AtomicAddTailAfter writes the pieces bufs[i] to vas[i] in order (as WriteV), then does
// AtomicAddTail(va, delta, tail), and returns the old word and how many pieces were written. Where
// the word and every piece lie in one RemoteV backing (client memory) and the pieces hit the TLB,
// it is one read (word and tail, under the Phys's remote mutex) and one write of the pieces and the
// new word, in that order (process_vm_writev moves its pieces in order), not a write, a read and a
// write: a packet processor releasing a packet slot and its read index and then completing the
// packet's signal (gpu/cp) is its user. The word is read before the pieces are written; they do
// not overlap it (the caller's contract), so only the read's moment differs from a WriteV followed
// by AtomicAddTail. Elsewhere it is exactly that pair of calls.
func (p *Port) AtomicAddTailAfter(vas []uint64, bufs [][]byte, va, delta uint64, tail []byte) (old uint64, n int, err error) {
	if len(vas) != len(bufs) {
		return 0, 0, fmt.Errorf("%w: %d addresses, %d buffers", ErrInvalid, len(vas), len(bufs))
	}
	if len(tail) <= MaxTail && va&pageMask+8+uint64(len(tail)) <= pageSize && va%8 == 0 {
		if old, n, ok, err := p.addTailAfterV(vas, bufs, va, delta, tail); ok {
			return old, n, err
		}
	}
	if n, err = p.WriteV(vas, bufs); err != nil {
		return 0, n, err
	}
	old, err = p.AtomicAddTail(va, delta, tail)
	return old, n, err
}

// addTailAfterV is AtomicAddTailAfter's one-write case; ok is false (nothing moved) where it does
// not apply: the word is not RemoteV-backed, it or a piece misses the TLB, a piece crosses its
// page or lies in another backing, or the word's read fails (the pair of calls then meets the
// error after the pieces, as it would have).
func (p *Port) addTailAfterV(vas []uint64, bufs [][]byte, va, delta uint64, tail []byte) (old uint64, n int, ok bool, err error) {
	if err := p.enter(); err != nil {
		return 0, 0, true, err
	}
	e := p.hit(va>>pageShift, AccessAtomic)
	if e == nil {
		p.leave()
		return 0, 0, false, nil
	}
	r, isV := e.remote.(RemoteV)
	if e.mem != nil || !isV {
		p.leave()
		return 0, 0, false, nil
	}
	addrs := p.vaddrs[:0]
	for i, pva := range vas {
		pe := p.hit(pva>>pageShift, AccessWrite)
		if pe == nil || pe.mem != nil || pe.remote != e.remote || pva&pageMask+uint64(len(bufs[i])) > pageSize {
			p.leave()
			return 0, 0, false, nil
		}
		addrs = append(addrs, pe.raddr+pva&pageMask)
	}
	off := va & pageMask
	rb := p.scratch[:8+len(tail)]
	mu := &p.vm.ph.remoteMu
	mu.Lock()
	if err = e.remote.ReadAt(rb, e.raddr+off); err != nil {
		mu.Unlock()
		p.vaddrs = addrs[:0]
		p.leave()
		return 0, 0, false, nil // the pair of calls meets the error after the pieces
	}
	copy(tail, rb[8:])
	old = binary.LittleEndian.Uint64(rb)
	wbufs := append(p.vbufs[:0], bufs...)
	if nv := old + delta; nv != old { // (as remoteRMWTail: no write-back of an unchanged word)
		binary.LittleEndian.PutUint64(rb, nv)
		wbufs, addrs = append(wbufs, rb[:8]), append(addrs, e.raddr+off)
	}
	n, err = r.WriteV(wbufs, addrs)
	mu.Unlock()
	p.leave()
	clear(wbufs) // drop the references to the caller's buffers
	p.vbufs, p.vaddrs = wbufs[:0], addrs[:0]
	if err != nil {
		at := va
		if n < len(vas) {
			at = vas[n]
		}
		return old, min(n, len(vas)), true, remoteErr(at, err)
	}
	return old, len(vas), true, nil
}

// remoteRMW is a read-modify-write of a Remote word under the Phys's remote mutex.
func (p *Port) remoteRMW(e *tlbEntry, off uint64, size int, f func(uint64) uint64) (old uint64, err error) {
	return p.remoteRMWTail(e, off, size, nil, f)
}

// remoteRMWTail is remoteRMW that reads the len(tail) bytes after the word (same page, at most
// MaxTail) in the word's read.
func (p *Port) remoteRMWTail(e *tlbEntry, off uint64, size int, tail []byte, f func(uint64) uint64) (old uint64, err error) {
	rb := p.scratch[:size+len(tail)]
	b := rb[:size]
	mu := &p.vm.ph.remoteMu
	mu.Lock()
	defer mu.Unlock()
	if err = e.remote.ReadAt(rb, e.raddr+off); err != nil {
		return 0, err
	}
	copy(tail, rb[size:])
	var nv uint64
	if size == 4 {
		old = uint64(binary.LittleEndian.Uint32(b))
		nv = uint64(uint32(f(old)))
		binary.LittleEndian.PutUint32(b, uint32(nv))
	} else {
		old = binary.LittleEndian.Uint64(b)
		nv = f(old)
		binary.LittleEndian.PutUint64(b, nv)
	}
	if nv == old {
		// Nothing to write (a failed compare-and-swap, an operation that leaves the value): a
		// write-back of the old value would undo a store the client made since the read.
		return old, nil
	}
	return old, e.remote.WriteAt(b, e.raddr+off)
}

// Load32 atomically loads the aligned 32-bit word at va.
func (p *Port) Load32(va uint64) (uint32, error) {
	e, err := p.word(va, 4, AccessRead)
	if err != nil {
		return 0, err
	}
	var v uint32
	off := va & pageMask
	if e.mem != nil {
		v = load32(e.mem, off)
	} else if err = e.remote.ReadAt(p.scratch[:4], e.raddr+off); err == nil {
		v = binary.LittleEndian.Uint32(p.scratch[:4])
	}
	p.leave()
	return v, remoteErr(va, err)
}

// Load64 atomically loads the aligned 64-bit word at va.
func (p *Port) Load64(va uint64) (uint64, error) {
	e, err := p.word(va, 8, AccessRead)
	if err != nil {
		return 0, err
	}
	var v uint64
	off := va & pageMask
	if e.mem != nil {
		v = load64(e.mem, off)
	} else if err = e.remote.ReadAt(p.scratch[:8], e.raddr+off); err == nil {
		v = binary.LittleEndian.Uint64(p.scratch[:8])
	}
	p.leave()
	return v, remoteErr(va, err)
}

// Store32 atomically stores the aligned 32-bit word at va (a release store: ordered after the
// Port's earlier accesses, no fence).
func (p *Port) Store32(va uint64, v uint32) error {
	e, err := p.word(va, 4, AccessWrite)
	if err != nil {
		return err
	}
	off := va & pageMask
	if e.mem != nil {
		store32(e.mem, off, v)
	} else {
		binary.LittleEndian.PutUint32(p.scratch[:4], v)
		p.vm.ph.remoteMu.Lock()
		err = e.remote.WriteAt(p.scratch[:4], e.raddr+off)
		p.vm.ph.remoteMu.Unlock()
	}
	p.leave()
	return remoteErr(va, err)
}

// Store64 atomically stores the aligned 64-bit word at va (a release store, as Store32).
func (p *Port) Store64(va uint64, v uint64) error {
	e, err := p.word(va, 8, AccessWrite)
	if err != nil {
		return err
	}
	off := va & pageMask
	if e.mem != nil {
		store64(e.mem, off, v)
	} else {
		binary.LittleEndian.PutUint64(p.scratch[:8], v)
		p.vm.ph.remoteMu.Lock()
		err = e.remote.WriteAt(p.scratch[:8], e.raddr+off)
		p.vm.ph.remoteMu.Unlock()
	}
	p.leave()
	return remoteErr(va, err)
}
