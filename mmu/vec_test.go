package mmu

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"testing"
	"time"
)

// fakeRemoteV is a fakeRemote with vectored calls, counted; failAt >= 0 fails the call at that
// piece of the call (the pieces before it moved, as process_vm_writev's byte count says).
type fakeRemoteV struct {
	*fakeRemote
	calls  int
	failAt int
	// single counts the ReadAt and WriteAt calls; wlog has the address of every piece written,
	// in order, by either kind of call.
	single int
	wlog   []uint64
}

func (r *fakeRemoteV) ReadAt(p []byte, addr uint64) error {
	r.single++
	return r.fakeRemote.ReadAt(p, addr)
}

func (r *fakeRemoteV) WriteAt(p []byte, addr uint64) error {
	r.single++
	r.wlog = append(r.wlog, addr)
	return r.fakeRemote.WriteAt(p, addr)
}

func (r *fakeRemoteV) vec(bufs [][]byte, addrs []uint64, write bool) (int, error) {
	r.calls++
	for i, b := range bufs {
		if i == r.failAt {
			return i, errors.New("fake remote: injected failure")
		}
		var err error
		if write {
			r.wlog = append(r.wlog, addrs[i])
			err = r.fakeRemote.WriteAt(b, addrs[i])
		} else {
			err = r.fakeRemote.ReadAt(b, addrs[i])
		}
		if err != nil {
			return i, err
		}
	}
	return len(bufs), nil
}

func (r *fakeRemoteV) ReadV(bufs [][]byte, addrs []uint64) (int, error) {
	return r.vec(bufs, addrs, false)
}

func (r *fakeRemoteV) WriteV(bufs [][]byte, addrs []uint64) (int, error) {
	return r.vec(bufs, addrs, true)
}

// vecSetup maps, from va 0x10000000: pages 0-3 on RemoteV a, 4-5 VRAM, 6-7 on RemoteV b, 8 on a
// plain Remote; page 9 is unmapped. With retry, page 10 and up fault and the handler maps them on
// RemoteV a's second half.
func vecSetup(t *testing.T, retry bool) (*Port, *fakeRemoteV, *fakeRemoteV) {
	t.Helper()
	const va = 0x10000000
	ph := NewPhys()
	a := &fakeRemoteV{fakeRemote: &fakeRemote{base: 0x7f0000000000, mem: make([]byte, 64<<10)}, failAt: -1}
	b := &fakeRemoteV{fakeRemote: &fakeRemote{base: 0x7e0000000000, mem: make([]byte, 8<<10)}, failAt: -1}
	plain := &fakeRemote{base: 0x7d0000000000, mem: make([]byte, 4<<10)}
	paA, err := ph.AllocSystem(64<<10, Backing{Remote: a, RemoteAddr: a.base})
	if err != nil {
		t.Fatal(err)
	}
	paB, _ := ph.AllocSystem(8<<10, Backing{Remote: b, RemoteAddr: b.base})
	paP, _ := ph.AllocSystem(4<<10, Backing{Remote: plain, RemoteAddr: plain.base})
	paV, _ := vram(t, ph, 8<<10)
	var vm *VM
	cfg := Config{PASID: 1}
	if retry {
		cfg.Filter = NewFilter(time.Nanosecond)
		cfg.Fault = func(f *Fault) bool {
			pg := (f.VA - va) >> 12
			return pg >= 10 && pg < 16 && vm.Map(f.VA&^4095, 4096, paA+(pg)<<12, rw|PTESystem) == nil
		}
	}
	vm = NewVM(ph, cfg)
	for _, m := range []struct{ va, size, pa uint64 }{
		{va, 4 << 12, paA}, {va + 4<<12, 2 << 12, paV}, {va + 6<<12, 2 << 12, paB}, {va + 8<<12, 1 << 12, paP},
	} {
		if err := vm.Map(m.va, m.size, m.pa, rw|PTESystem); err != nil {
			t.Fatal(err)
		}
	}
	p := vm.NewPort()
	t.Cleanup(p.Close)
	return p, a, b
}

// WriteV and ReadV move the pieces as Write and Read would one after the other, with one call per
// run of pieces on the same RemoteV backing; a fault or a remote failure says how many moved.
func TestVecAccess(t *testing.T) {
	const va = 0x10000000
	pg := func(n, off uint64) uint64 { return va + n<<12 + off }
	p, a, b := vecSetup(t, false)
	vas := []uint64{pg(0, 0), pg(1, 8), pg(3, 4092), pg(4, 16), pg(6, 0), pg(7, 100), pg(2, 0), pg(8, 4), pg(0, 0)}
	bufs := make([][]byte, len(vas))
	for i := range bufs {
		bufs[i] = bytes.Repeat([]byte{byte(i + 1)}, 4)
	}
	n, err := p.WriteV(vas, bufs)
	if n != len(vas) || err != nil {
		t.Fatalf("WriteV: %d, %v", n, err)
	}
	// Calls: a (pieces 0-2), then VRAM, b (4-5), a (6), plain, a (8): a three times, b once.
	if a.calls != 3 || b.calls != 1 {
		t.Errorf("RemoteV calls a %d b %d, want 3 and 1", a.calls, b.calls)
	}
	for i, v := range vas {
		want := bufs[i]
		if v == pg(0, 0) {
			want = bufs[8] // written twice: the later piece wins, as in order
		}
		got := make([]byte, 4)
		if err := p.Read(v, got); err != nil || !bytes.Equal(got, want) {
			t.Errorf("piece %d at %#x: %x, %v; want %x", i, v, got, err, want)
		}
	}
	back := make([][]byte, len(vas))
	for i := range back {
		back[i] = make([]byte, 4)
	}
	if n, err := p.ReadV(vas, back); n != len(vas) || err != nil {
		t.Fatalf("ReadV: %d, %v", n, err)
	}
	for i := range vas {
		want := bufs[i]
		if i == 0 {
			want = bufs[8]
		}
		if !bytes.Equal(back[i], want) {
			t.Errorf("ReadV piece %d: %x, want %x", i, back[i], want)
		}
	}

	// A fatal fault (page 9 is unmapped) ends the batch there: the pieces before it moved.
	fresh := [][]byte{{0xaa, 0xaa, 0xaa, 0xaa}, {0xbb, 0xbb, 0xbb, 0xbb}, {0xcc}, {0xdd, 0xdd, 0xdd, 0xdd}}
	n, err = p.WriteV([]uint64{pg(1, 0), pg(6, 8), pg(9, 0), pg(2, 8)}, fresh)
	if n != 2 || faultKindOf(t, err) != FaultNotPresent {
		t.Fatalf("WriteV over an unmapped page: %d, %v", n, err)
	}
	got := make([]byte, 4)
	p.Read(pg(2, 8), got)
	if bytes.Equal(got, fresh[3]) {
		t.Error("a piece after the fault was written")
	}
	p.Read(pg(6, 8), got)
	if !bytes.Equal(got, fresh[1]) {
		t.Error("a piece before the fault was not written")
	}

	// A remote failure in the middle of a batch: n is the first piece not moved.
	a.failAt = 1
	n, err = p.WriteV([]uint64{pg(4, 0), pg(0, 0), pg(1, 0), pg(2, 0)}, fresh)
	if n != 2 || !errors.Is(err, ErrRemote) {
		t.Fatalf("WriteV with a failing remote: %d, %v; want 2, ErrRemote", n, err)
	}
	a.failAt = -1

	// A piece that crosses a page is refused at its index.
	if n, err := p.WriteV([]uint64{pg(0, 0), pg(0, 4094)}, [][]byte{{1}, {1, 2, 3, 4}}); n != 1 || !errors.Is(err, ErrInvalid) {
		t.Fatalf("piece across a page: %d, %v", n, err)
	}
}

// With retry faults every page is faulted in first, then the pieces move in one call.
func TestVecAccessRetryFaults(t *testing.T) {
	const va = 0x10000000
	p, a, _ := vecSetup(t, true)
	var vas []uint64
	var bufs [][]byte
	for pg := uint64(10); pg < 16; pg++ {
		vas = append(vas, va+pg<<12+4*pg)
		bufs = append(bufs, []byte{byte(pg), 1, 2, 3})
	}
	calls := a.calls
	if n, err := p.WriteV(vas, bufs); n != len(vas) || err != nil {
		t.Fatalf("WriteV: %d, %v", n, err)
	}
	if a.calls-calls != 1 {
		t.Errorf("%d RemoteV calls for pages faulted in, want 1", a.calls-calls)
	}
	for i, v := range vas {
		got := make([]byte, 4)
		if err := p.Read(v, got); err != nil || !bytes.Equal(got, bufs[i]) {
			t.Errorf("page %d: %x, %v", 10+i, got, err)
		}
	}
	// Page 16 is beyond what the handler maps: the pages before it still move.
	n, err := p.WriteV([]uint64{vas[0], va + 16<<12}, [][]byte{{9, 9, 9, 9}, {9}})
	if n != 1 || faultKindOf(t, err) != FaultNotPresent {
		t.Fatalf("WriteV onto a page the handler refuses: %d, %v", n, err)
	}
}

// With Config.FaultBatch, a vectored access services the retry faults of its pages in one call,
// in order, before it moves any piece; what the handler refuses ends the access at that piece
// (the pieces before it move, the page is not serviced again), as the per-page service would.
func TestVecAccessFaultBatch(t *testing.T) {
	const va = 0x10000000
	p, a, _ := vecSetup(t, true)
	vm := p.vm
	var paA uint64 // RemoteV a's first page
	for s := range vm.ph.segs.Load().all() {
		if s.b.Remote == Remote(a) {
			paA = s.pa
		}
	}
	refuse := uint64(13)
	var single, batches int
	var seen []uint64
	one := func(f *Fault) bool {
		pg := (f.VA - va) >> 12
		seen = append(seen, pg)
		return pg >= 10 && pg < 16 && pg != refuse && vm.Map(f.VA&^4095, 4096, paA+pg<<12, rw|PTESystem) == nil
	}
	vm.cfg.Fault = func(f *Fault) bool { single++; return one(f) }
	vm.cfg.FaultBatch = func(fs []Fault, ok []bool) {
		batches++
		for i := range fs {
			ok[i] = one(&fs[i])
		}
	}
	pg := func(n uint64) uint64 { return va + n<<12 + 4*n }
	piece := func(n uint64) []byte { return []byte{byte(n), 7, 7, 7} }

	// Pages 10, 11, 12 (two pieces on 11, a third piece on 10 later) fault: one batch of three.
	vas := []uint64{pg(10), pg(11), pg(11) + 8, pg(12), pg(10) + 16}
	bufs := [][]byte{piece(10), piece(11), piece(11), piece(12), piece(10)}
	calls := a.calls
	if n, err := p.WriteV(vas, bufs); n != len(vas) || err != nil {
		t.Fatalf("WriteV: %d, %v", n, err)
	}
	if batches != 1 || single != 0 || !slices.Equal(seen, []uint64{10, 11, 12}) {
		t.Fatalf("%d batches, %d single calls, faults on pages %v; want 1, 0, [10 11 12]", batches, single, seen)
	}
	if a.calls-calls != 1 {
		t.Errorf("%d RemoteV calls, want 1", a.calls-calls)
	}
	for i, v := range vas {
		got := make([]byte, 4)
		if err := p.Read(v, got); err != nil || !bytes.Equal(got, bufs[i]) {
			t.Errorf("piece %d: %x, %v; want %x", i, got, err, bufs[i])
		}
	}
	log := vm.Faults()
	if len(log) != 3 || log[0].Outcome != OutcomeRetry || log[2].Fault.VA != pg(12) {
		t.Errorf("fault log %+v, want three retries, the last at %#x", log, pg(12))
	}

	// Page 13 is refused: pages 14 and 15 are serviced in the same batch, the piece on 14 before
	// it moves, the piece on 15 after it does not, and 13 is not serviced a second time.
	seen = seen[:0]
	vas = []uint64{pg(14), pg(13), pg(15)}
	bufs = [][]byte{piece(14), piece(13), piece(15)}
	n, err := p.WriteV(vas, bufs)
	if n != 1 || faultKindOf(t, err) != FaultNotPresent {
		t.Fatalf("WriteV onto a refused page: %d, %v", n, err)
	}
	var fe *FaultError
	if errors.As(err, &fe); fe.Fault.VA != pg(13) {
		t.Errorf("fault at %#x, want %#x", fe.Fault.VA, pg(13))
	}
	if batches != 2 || single != 0 || !slices.Equal(seen, []uint64{14, 13, 15}) {
		t.Fatalf("%d batches, %d single calls, faults on pages %v; want 2, 0, [14 13 15]", batches, single, seen)
	}
	got := make([]byte, 4)
	if p.Read(pg(14), got); !bytes.Equal(got, piece(14)) {
		t.Errorf("page 14 (before the refused page): %x", got)
	}
	if p.Read(pg(15), got); bytes.Equal(got, piece(15)) {
		t.Error("page 15 (after the refused page) was written")
	}
	log = vm.Faults()
	if last := log[len(log)-3:]; last[1].Outcome != OutcomeFatal || last[0].Outcome != OutcomeRetry || last[2].Outcome != OutcomeRetry {
		t.Errorf("fault log %+v, want retry, fatal, retry", last)
	}

	// One faulting page alone takes the per-page service.
	refuse = 99
	if n, err := p.WriteV([]uint64{pg(13)}, [][]byte{piece(13)}); n != 1 || err != nil {
		t.Fatalf("WriteV of one page: %d, %v", n, err)
	}
	if batches != 2 || single != 1 {
		t.Errorf("%d batches, %d single calls; want 2 and 1", batches, single)
	}
}

// Aligned words of a vectored access on a Mem backing (moved as Load/Store move them) and other
// pieces keep their bytes, in both directions.
func TestVecAccessWords(t *testing.T) {
	const va = 0x10000000
	p, _, _ := vecSetup(t, false)
	vram := func(off uint64) uint64 { return va + 4<<12 + off } // pages 4-5: a Mem backing
	vas := []uint64{vram(64), vram(72), vram(81), vram(96)}
	bufs := [][]byte{{1, 2, 3, 4, 5, 6, 7, 8}, {9, 10, 11, 12}, {13, 14, 15, 16}, {17, 18, 19, 20, 21, 22}}
	if n, err := p.WriteV(vas, bufs); n != len(vas) || err != nil {
		t.Fatalf("WriteV: %d, %v", n, err)
	}
	back := make([][]byte, len(vas))
	for i, b := range bufs {
		got := make([]byte, len(b))
		if err := p.Read(vas[i], got); err != nil || !bytes.Equal(got, b) {
			t.Errorf("piece %d read back %x, %v; want %x", i, got, err, b)
		}
		back[i] = make([]byte, len(b))
	}
	if n, err := p.ReadV(vas, back); n != len(vas) || err != nil {
		t.Fatalf("ReadV: %d, %v", n, err)
	}
	for i, b := range bufs {
		if !bytes.Equal(back[i], b) {
			t.Errorf("ReadV piece %d: %x, want %x", i, back[i], b)
		}
	}
}

// AtomicAddTailAfter writes its pieces, then adds to the word and reads its tail. Where the word and
// every piece lie in one RemoteV backing and hit the TLB it is one read and one vectored write,
// the pieces first and the word last (gpu/cp: a packet's release, timestamps and completion
// signal); elsewhere it falls back to WriteV and AtomicAddTail with the same results, and a fault
// or a failed piece says how many pieces were written.
func TestAtomicAddTailAfter(t *testing.T) {
	const va = 0x10000000
	pg := func(n, off uint64) uint64 { return va + n<<12 + off }
	p, a, _ := vecSetup(t, false)
	word := pg(1, 8) // an amd_signal_t at page 1 + 0: value at +8, mailbox at +16, event id at +24
	put := func(v uint64) {
		b := make([]byte, 24)
		binary.LittleEndian.PutUint64(b, v)
		binary.LittleEndian.PutUint64(b[8:], 0x1122334455667788)
		binary.LittleEndian.PutUint32(b[16:], 42)
		if err := p.Write(word, b); err != nil {
			t.Fatal(err)
		}
	}
	get := func(at uint64, n int) []byte {
		b := make([]byte, n)
		if err := p.Read(at, b); err != nil {
			t.Fatal(err)
		}
		return b
	}
	port := p.vm.NewPort() // no translation yet: the first call falls back
	defer port.Close()
	var calls, single int // a's calls made by the last AtomicAddTailAfter
	var wlog []uint64
	run := func(name string, vas []uint64, delta, wantOld uint64, wantN int) error {
		t.Helper()
		a.calls, a.single, a.wlog = 0, 0, nil
		bufs := make([][]byte, len(vas))
		for i := range bufs {
			bufs[i] = bytes.Repeat([]byte{byte(0x10 + i)}, 4)
		}
		tail := make([]byte, 12)
		old, n, err := port.AtomicAddTailAfter(vas, bufs, word, delta, tail)
		calls, single, wlog = a.calls, a.single, a.wlog
		if n != wantN {
			t.Fatalf("%s: %d pieces written, want %d (err %v)", name, n, wantN, err)
		}
		if err != nil {
			return err
		}
		if old != wantOld || binary.LittleEndian.Uint64(tail) != 0x1122334455667788 || binary.LittleEndian.Uint32(tail[8:]) != 42 {
			t.Fatalf("%s: old %d, tail %x; want %d, mailbox and event id", name, old, tail, wantOld)
		}
		for i, v := range vas {
			if got := get(v, 4); !bytes.Equal(got, bufs[i]) {
				t.Fatalf("%s: piece %d at %#x holds %x", name, i, v, got)
			}
		}
		return nil
	}
	raddr := func(v uint64) uint64 { return a.base + v - va }

	// Pieces on RemoteV a (pages 0, 2 and the word's own page), first touched by the fallback.
	put(5)
	vas := []uint64{pg(0, 64), pg(2, 4), pg(1, 32)}
	if err := run("cold TLB", vas, ^uint64(0), 5, 3); err != nil {
		t.Fatal(err)
	}
	if v := binary.LittleEndian.Uint64(get(word, 8)); v != 4 {
		t.Fatalf("cold TLB: word %d, want 4", v)
	}
	if calls != 1 || single != 2 {
		t.Errorf("cold TLB: %d vectored and %d single calls, want 1 and 2 (WriteV, then a read and a write)", calls, single)
	}
	if err := run("warm TLB", vas, ^uint64(0), 4, 3); err != nil {
		t.Fatal(err)
	}
	if calls != 1 || single != 1 {
		t.Errorf("warm TLB: %d vectored and %d single calls, want 1 and 1 (one read, one write)", calls, single)
	}
	if want := []uint64{raddr(vas[0]), raddr(vas[1]), raddr(vas[2]), raddr(word)}; !slices.Equal(wlog, want) {
		t.Errorf("warm TLB: writes at %#x, want %#x (the pieces, then the word)", wlog, want)
	}
	if v := binary.LittleEndian.Uint64(get(word, 8)); v != 3 {
		t.Fatalf("warm TLB: word %d, want 3", v)
	}
	// An add of 0 leaves the word unwritten (a client store since the read survives).
	if err := run("add 0", vas, 0, 3, 3); err != nil {
		t.Fatal(err)
	}
	if calls != 1 || single != 1 || slices.Contains(wlog, raddr(word)) {
		t.Errorf("add 0: the word was written back")
	}
	// A piece in VRAM, or on another backing: the pair of calls, same results.
	if err := run("VRAM piece", []uint64{pg(0, 64), pg(4, 0)}, ^uint64(0), 3, 2); err != nil {
		t.Fatal(err)
	}
	if err := run("other backing", []uint64{pg(6, 0), pg(0, 64)}, ^uint64(0), 2, 2); err != nil {
		t.Fatal(err)
	}
	// A fault at the second piece: one piece written, the word untouched.
	if err := run("fault", []uint64{pg(0, 64), pg(9, 0)}, ^uint64(0), 0, 1); err == nil {
		t.Fatal("fault: no error")
	}
	// A failed write at the second piece of the one-write path: one piece written, the word
	// (the last piece) untouched.
	a.failAt = 1
	if err := run("failed write", vas, ^uint64(0), 0, 1); err == nil {
		t.Fatal("failed write: no error")
	}
	a.failAt = -1
	if v := binary.LittleEndian.Uint64(get(word, 8)); v != 1 {
		t.Fatalf("after the failures: word %d, want 1", v)
	}
}
