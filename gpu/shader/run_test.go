package shader

import (
	"context"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"
)

func ptr32(b []byte, off uint64) unsafe.Pointer { return unsafe.Pointer(&b[off]) }

// flatMem is a sparse in-memory Memory of 4 KiB pages; unmapped pages fault.
type flatMem struct {
	mu    sync.Mutex
	pages map[uint64]*[4096]byte
}

var errUnmapped = errors.New("unmapped")

func newMem() *flatMem { return &flatMem{pages: map[uint64]*[4096]byte{}} }

func (m *flatMem) mapRange(va, n uint64) {
	for p := va &^ 4095; p < va+n; p += 4096 {
		if m.pages[p] == nil {
			m.pages[p] = new([4096]byte)
		}
	}
}

func (m *flatMem) do(va uint64, p []byte, write bool) error {
	for len(p) > 0 {
		pg := m.pages[va&^4095]
		if pg == nil {
			return fmt.Errorf("%w: %#x", errUnmapped, va)
		}
		o := va & 4095
		n := min(len(p), int(4096-o))
		if o%4 == 0 && n%4 == 0 {
			// Each dword atomic (concurrent work-groups, CPU threads, Atomic's compare-and-swap):
			// two at a time as one atomic 64-bit access where 8-byte aligned (the page is), a dword
			// at an odd dword address or at the end alone.
			dword := func(i int) {
				w := (*uint32)(ptr32(pg[:], o+uint64(i)))
				if write {
					atomic.StoreUint32(w, binary.LittleEndian.Uint32(p[i:]))
				} else {
					binary.LittleEndian.PutUint32(p[i:], atomic.LoadUint32(w))
				}
			}
			i := 0
			if o%8 != 0 {
				dword(0)
				i = 4
			}
			if nw := (n - i) / 8; nw > 0 {
				ws, q := unsafe.Slice((*uint64)(ptr32(pg[:], o+uint64(i))), nw), p[i:i+8*nw]
				if write {
					for k := range ws {
						atomic.StoreUint64(&ws[k], binary.LittleEndian.Uint64(q[8*k:]))
					}
				} else {
					for k := range ws {
						binary.LittleEndian.PutUint64(q[8*k:], atomic.LoadUint64(&ws[k]))
					}
				}
				i += 8 * nw
			}
			if i < n {
				dword(i)
			}
		} else if write {
			copy(pg[o:], p[:n])
		} else {
			copy(p[:n], pg[o:])
		}
		p, va = p[n:], va+uint64(n)
	}
	return nil
}

func (m *flatMem) Read(va uint64, p []byte) error  { return m.do(va, p, false) }
func (m *flatMem) Write(va uint64, p []byte) error { return m.do(va, p, true) }
func (m *flatMem) Atomic(va uint64, size int, f func(uint64) uint64) (uint64, error) {
	// An aligned word is one hardware compare-and-swap loop, atomic against CPU threads too.
	if pg := m.pages[va&^4095]; pg != nil && va%uint64(size) == 0 {
		p := ptr32(pg[:], va&4095)
		for {
			if size == 8 {
				old := atomic.LoadUint64((*uint64)(p))
				if atomic.CompareAndSwapUint64((*uint64)(p), old, f(old)) {
					return old, nil
				}
				continue
			}
			old := atomic.LoadUint32((*uint32)(p))
			if atomic.CompareAndSwapUint32((*uint32)(p), old, uint32(f(uint64(old)))) {
				return uint64(old), nil
			}
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var b [8]byte
	if err := m.do(va, b[:size], false); err != nil {
		return 0, err
	}
	old := binary.LittleEndian.Uint64(b[:])
	binary.LittleEndian.PutUint64(b[:], f(old))
	return old, m.do(va, b[:size], true)
}

// loaded is the corpus code object placed in a flatMem.
type loaded struct {
	mem  *flatMem
	base uint64
	syms map[string]uint64
	next uint64
	// scratch is the 4 MiB scratch area of run's dispatches, mapped at the first one and reused,
	// as a queue reuses its scratch (hardware clears nothing between dispatches); a new area per
	// dispatch was a map insert and a page allocation per 4 KiB inside the benchmarks' timing.
	scratch uint64
}

const codeBase = 0x10000000

// load copies the PT_LOAD segments of the (relocation-free) code object to codeBase and resolves symbols.
func load(t testing.TB) *loaded { return loadPath(t, buildCorpus(t)) }

// loadPath is load of the code object at path.
func loadPath(t testing.TB, path string) *loaded {
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	l := &loaded{mem: newMem(), base: codeBase, syms: map[string]uint64{}, next: 0x40000000}
	for _, p := range f.Progs {
		if p.Type != elf.PT_LOAD {
			continue
		}
		l.mem.mapRange(codeBase+p.Vaddr, p.Memsz)
		data := make([]byte, p.Filesz)
		if _, err := p.ReadAt(data, 0); err != nil {
			t.Fatal(err)
		}
		if err := l.mem.Write(codeBase+p.Vaddr, data); err != nil {
			t.Fatal(err)
		}
	}
	syms, err := f.DynamicSymbols()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range syms {
		l.syms[s.Name] = codeBase + s.Value
	}
	return l
}

func (l *loaded) alloc(n uint64) uint64 {
	va := l.next
	l.mem.mapRange(va, n)
	l.next += (n + 0xffff) &^ 0xffff
	return va
}

func (l *loaded) put(data any) uint64 {
	b, err := binary.Append(nil, binary.LittleEndian, data)
	if err != nil {
		panic(err)
	}
	va := l.alloc(uint64(len(b)) + 16)
	l.mem.Write(va, b)
	return va
}

func (l *loaded) get(va uint64, out any) {
	n := binary.Size(out)
	b := make([]byte, n)
	if err := l.mem.Read(va, b); err != nil {
		panic(err)
	}
	binary.Decode(b, binary.LittleEndian, out)
}

// run dispatches kernel name over grid/wg with kernarg bytes.
func (l *loaded) run(t testing.TB, name string, grid [3]uint32, wg [3]uint16, kernarg []byte) Stats {
	t.Helper()
	st, err := Dispatch(context.Background(), l.mem, l.prepare(t, name, grid, wg, kernarg))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return st
}

// prepare writes kernarg and a dispatch packet of kernel name over grid/wg into l's memory (and
// allocates the scratch, once) and returns the dispatch's parameters.
func (l *loaded) prepare(t testing.TB, name string, grid [3]uint32, wg [3]uint16, kernarg []byte) DispatchParams {
	t.Helper()
	kd, ok := l.syms[name+".kd"]
	if !ok {
		t.Fatalf("no symbol %s.kd", name)
	}
	ka := l.alloc(uint64(len(kernarg)) + 256)
	l.mem.Write(ka, kernarg)
	pkt := l.packet(grid, wg, kd, ka)
	if l.scratch == 0 {
		l.scratch = l.alloc(4 << 20)
	}
	return DispatchParams{GridSize: grid, WorkgroupSize: wg, KernelObject: kd, KernargAddress: ka, DispatchPacket: pkt,
		ScratchBase: l.scratch, ScratchSize: 4 << 20, Apertures: DefaultApertures, MaxWaveInstructions: 1 << 24}
}

// packet writes an AQL kernel dispatch packet (the Dispatch Ptr of the kernels) and returns its address.
func (l *loaded) packet(grid [3]uint32, wg [3]uint16, kd, ka uint64) uint64 {
	pkt := l.alloc(64)
	l.writePacket(pkt, grid, wg, kd, ka)
	return pkt
}

func (l *loaded) writePacket(pkt uint64, grid [3]uint32, wg [3]uint16, kd, ka uint64) {
	var pk [64]byte
	binary.LittleEndian.PutUint16(pk[0:], 2)
	binary.LittleEndian.PutUint16(pk[2:], 3)
	binary.LittleEndian.PutUint16(pk[4:], wg[0])
	binary.LittleEndian.PutUint16(pk[6:], wg[1])
	binary.LittleEndian.PutUint16(pk[8:], wg[2])
	binary.LittleEndian.PutUint32(pk[12:], grid[0])
	binary.LittleEndian.PutUint32(pk[16:], grid[1])
	binary.LittleEndian.PutUint32(pk[20:], grid[2])
	binary.LittleEndian.PutUint64(pk[32:], kd)
	binary.LittleEndian.PutUint64(pk[40:], ka)
	l.mem.Write(pkt, pk[:])
}

func args(v ...any) []byte {
	var b []byte
	for _, x := range v {
		// 8-byte align pointers
		if _, ok := x.(uint64); ok {
			for len(b)%8 != 0 {
				b = append(b, 0)
			}
		}
		b, _ = binary.Append(b, binary.LittleEndian, x)
	}
	return b
}

func TestCorpusVaddSaxpy(t *testing.T) {
	l := load(t)
	const n = 1000
	a, b := make([]float32, n), make([]float32, n)
	for i := range a {
		a[i], b[i] = float32(i)*0.5, float32(n-i)*1.25
	}
	pa, pb, pc := l.put(a), l.put(b), l.put(make([]float32, n))
	l.run(t, "vadd", [3]uint32{1024, 1, 1}, [3]uint16{256, 1, 1}, args(pa, pb, pc, uint32(n)))
	c := make([]float32, n)
	l.get(pc, c)
	for i := range c {
		if c[i] != a[i]+b[i] {
			t.Fatalf("vadd[%d] = %v, want %v", i, c[i], a[i]+b[i])
		}
	}
	l.run(t, "saxpy", [3]uint32{n, 1, 1}, [3]uint16{64, 1, 1}, args(float32(3), uint32(0), pa, pb, uint32(n)))
	y := make([]float32, n)
	l.get(pb, y)
	for i := range y {
		want := float32(math.FMA(3, float64(a[i]), float64(b[i])))
		if y[i] != want {
			t.Fatalf("saxpy[%d] = %v, want %v", i, y[i], want)
		}
	}
}

// TestCorpusCopybuf runs the corpus's blit-shaped copy (the kernel of BenchmarkCopyWaveInstructionsPorts)
// at byte offsets 5 -> 7 (unaligned dword accesses), its last work-item copying a 3-byte tail, and in
// its byte-per-work-item form (remain 8); bytes around the destination stay untouched.
func TestCorpusCopybuf(t *testing.T) {
	l := load(t)
	const bytes = 4*1000 + 3
	src := make([]byte, bytes+16)
	for i := range src {
		src[i] = byte(i*7 + 3)
	}
	for _, tc := range []struct {
		name         string
		size, remain uint64
		items        uint32
	}{{"dwords", bytes/4 + 1, 3, 1024}, {"bytes", bytes, 8, 4096}} {
		t.Run(tc.name, func(t *testing.T) {
			ps, pd := l.put(src), l.put(make([]byte, bytes+16))
			l.run(t, "copybuf", [3]uint32{tc.items, 1, 1}, [3]uint16{256, 1, 1}, args(ps, pd, uint64(5), uint64(7), tc.size, uint32(tc.remain)))
			got := make([]byte, bytes+16)
			l.get(pd, got)
			for i, v := range got {
				want := byte(0)
				if i >= 7 && i < 7+bytes {
					want = src[i-7+5]
				}
				if v != want {
					t.Fatalf("dst[%d] = %#x, want %#x", i, v, want)
				}
			}
		})
	}
}
