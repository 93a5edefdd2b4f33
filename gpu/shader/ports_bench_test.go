package shader

import (
	"context"
	"encoding/binary"
	"slices"
	"sync"
	"testing"

	"github.com/kfdemu/kfdemu/mmu"
)

// mmuPorts is the daemon's memory path for a benchmark: the loaded kernel's pages copied into VRAM
// segments of an mmu.Phys, mapped in a VM, and each running work-group given its own mmu.Port (its
// TLB), as kfd's cuPorts lends them. A TLB hit is a copy from the segment, as in the daemon; flatMem
// (a map lookup and an atomic store per 8 bytes) is the tests' memory, not the daemon's.
type mmuPorts struct {
	vm   *mmu.VM
	mu   sync.Mutex
	free []*mmu.Port
}

func (p *mmuPorts) Get() Memory {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.free); n > 0 {
		pt := p.free[n-1]
		p.free = p.free[:n-1]
		return pt
	}
	return p.vm.NewPort()
}

func (p *mmuPorts) Put(m Memory) {
	p.mu.Lock()
	p.free = append(p.free, m.(*mmu.Port))
	p.mu.Unlock()
}

// portsOf copies every page of l's memory into VRAM behind a VM (one segment per run of
// consecutive pages) and returns the ports.
func portsOf(t testing.TB, l *loaded) *mmuPorts {
	t.Helper()
	ph := mmu.NewPhys()
	vm := mmu.NewVM(ph, mmu.Config{PASID: 1})
	vas := make([]uint64, 0, len(l.mem.pages))
	for va := range l.mem.pages {
		vas = append(vas, va)
	}
	slices.Sort(vas)
	for i := 0; i < len(vas); {
		j := i + 1
		for j < len(vas) && vas[j] == vas[j-1]+4096 {
			j++
		}
		mem := make([]byte, (j-i)*4096)
		for k := i; k < j; k++ {
			copy(mem[(k-i)*4096:], l.mem.pages[vas[k]][:])
		}
		pa, err := ph.AllocVRAM(0, uint64(len(mem)), mmu.Backing{Mem: mem})
		if err != nil {
			t.Fatal(err)
		}
		if err := vm.Map(vas[i], uint64(len(mem)), pa, mmu.PTEReadable|mmu.PTEWriteable|mmu.PTEExecutable); err != nil {
			t.Fatal(err)
		}
		i = j
	}
	return &mmuPorts{vm: vm}
}

// benchPorts runs kernel name of l b.N times through mmu ports (the dispatch's own Memory is a
// port too: the kernarg and packet reads before the work-groups start) and reports
// wave-instructions per second; check verifies the result in the VM's memory after the last run.
func benchPorts(b *testing.B, l *loaded, name string, grid [3]uint32, wg [3]uint16, kernarg []byte, check func(read func(va uint64, p []byte) error)) {
	params := l.prepare(b, name, grid, wg, kernarg)
	ports := portsOf(b, l)
	params.Engine = Engine{Ports: ports}
	var total uint64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		mem := ports.Get()
		st, err := Dispatch(context.Background(), mem, params)
		ports.Put(mem)
		if err != nil {
			b.Fatalf("%s: %v", name, err)
		}
		total += st.WaveInstructions
	}
	b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "wave-inst/s")
	b.StopTimer()
	pt := ports.vm.NewPort()
	defer pt.Close()
	check(pt.Read)
}

// floats is v(0), ..., v(n-1).
func floats(n int, v func(i int) float32) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = v(i)
	}
	return out
}

// readFloats reads n floats at va.
func readFloats(t testing.TB, read func(va uint64, p []byte) error, va uint64, n int) []float32 {
	b, out := make([]byte, 4*n), make([]float32, n)
	if err := read(va, b); err != nil {
		t.Fatal(err)
	}
	binary.Decode(b, binary.LittleEndian, out)
	return out
}

// BenchmarkVaddWaveInstructionsPorts is BenchmarkVaddWaveInstructions on the daemon's memory path
// (mmuPorts), its result checked.
func BenchmarkVaddWaveInstructionsPorts(b *testing.B) {
	l := load(b)
	const n = 1 << 20
	pa, pb := l.put(floats(n, func(i int) float32 { return float32(i) })), l.put(floats(n, func(int) float32 { return 0.5 }))
	pc := l.alloc(4 * n)
	benchPorts(b, l, "vadd", [3]uint32{n, 1, 1}, [3]uint16{256, 1, 1}, args(pa, pb, pc, uint32(n)), func(read func(uint64, []byte) error) {
		for i, c := range readFloats(b, read, pc, n) {
			if c != float32(i)+0.5 {
				b.Fatalf("c[%d] = %v, want %v", i, c, float32(i)+0.5)
			}
		}
	})
}

// BenchmarkMatmulWaveInstructionsPorts is BenchmarkMatmulWaveInstructions on mmuPorts, its result
// checked: A has ones on row r from column 0 to r, B is the identity times 2, so C = 2A.
func BenchmarkMatmulWaveInstructionsPorts(b *testing.B) {
	l := load(b)
	const M = 128
	a := func(i int) float32 {
		if i%M <= i/M {
			return 1
		}
		return 0
	}
	pa := l.put(floats(M*M, a))
	pb := l.put(floats(M*M, func(i int) float32 {
		if i%M == i/M {
			return 2
		}
		return 0
	}))
	pc := l.alloc(4 * M * M)
	benchPorts(b, l, "matmul", [3]uint32{M, M, 1}, [3]uint16{16, 16, 1}, args(pa, pb, pc, uint32(M), uint32(M), uint32(M)), func(read func(uint64, []byte) error) {
		for i, c := range readFloats(b, read, pc, M*M) {
			if c != 2*a(i) {
				b.Fatalf("C[%d] = %v, want %v", i, c, 2*a(i))
			}
		}
	})
}

// BenchmarkCopyWaveInstructionsPorts runs the corpus's copybuf (a runtime's buffer-copy blit, one
// dword per work-item in work-groups of 256: the shape of HIP's device-to-device copy) over 16 MiB
// on mmuPorts and reports bytes copied per second beside the wave-instruction rate; the copy is
// checked.
func BenchmarkCopyWaveInstructionsPorts(b *testing.B) {
	l := load(b)
	const n = 1 << 22 // dwords
	src := make([]uint32, n)
	for i := range src {
		src[i] = uint32(i)*2654435761 + 1
	}
	ps, pd := l.put(src), l.alloc(4*n)
	benchPorts(b, l, "copybuf", [3]uint32{n, 1, 1}, [3]uint16{256, 1, 1}, args(ps, pd, uint64(0), uint64(0), uint64(n), uint32(4)), func(read func(uint64, []byte) error) {
		got := make([]byte, 4*n)
		if err := read(pd, got); err != nil {
			b.Fatal(err)
		}
		for i := range n {
			if v := binary.LittleEndian.Uint32(got[4*i:]); v != src[i] {
				b.Fatalf("dst[%d] = %#x, want %#x", i, v, src[i])
			}
		}
	})
	b.ReportMetric(float64(4*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
}
