package shader

import (
	"encoding/binary"
	"testing"
)

// adderMem is a flatMem with AtomicAdd, counting its calls.
type adderMem struct {
	*flatMem
	adds int
}

func (m *adderMem) AtomicAdd(va uint64, size int, d uint64) (uint64, error) {
	m.adds++
	return m.flatMem.Atomic(va, size, func(o uint64) uint64 { return o + d })
}

// TestAtomicAdder: vector atomic add and sub on global memory go to the Memory's AtomicAdd when it has
// one (the mmu Port's LOCK XADD) and give the same results as through Atomic: 32- and 64-bit, returned
// old values, sub as the add of the negation; other atomics (smax) still use Atomic.
func TestAtomicAdder(t *testing.T) {
	code := asm(t, `
	v_mov_b32 v1, 0
	v_mov_b32 v2, 3
	v_mov_b32 v3, 0
	v_mov_b32 v4, 5
	v_mov_b32 v5, 0
	global_atomic_add v6, v1, v2, s[0:1] offset:0x800 glc
	global_atomic_sub v7, v1, v4, s[0:1] offset:0x804 glc
	global_atomic_add_x2 v[8:9], v1, v[4:5], s[0:1] offset:0x808 glc
	global_atomic_sub_x2 v1, v[2:3], s[0:1] offset:0x810
	global_atomic_smax v1, v0, s[0:1] offset:0x818
	v_lshlrev_b32 v10, 4, v0
	s_waitcnt vmcnt(0)
	global_store_dword v10, v6, s[0:1]
	global_store_dword v10, v7, s[0:1] offset:4
	global_store_dwordx2 v10, v[8:9], s[0:1] offset:8
	s_endpgm
`)
	run := func(adder bool) ([]byte, int) {
		m, p := miniKernel(t, code)
		m.mapRange(asmOut, 0x2000)
		binary.LittleEndian.PutUint32(m.pages[asmOut][0x804:], 1000)
		binary.LittleEndian.PutUint64(m.pages[asmOut][0x810:], 1000)
		p.KernargAddress = asmOut
		p.GridSize, p.WorkgroupSize = [3]uint32{64, 1, 1}, [3]uint16{64, 1, 1}
		var mem Memory = m
		am := &adderMem{flatMem: m}
		if adder {
			mem = am
		}
		if _, err := Dispatch(t.Context(), mem, p); err != nil {
			t.Fatal(err)
		}
		b := make([]byte, 0x820)
		m.Read(asmOut, b)
		return b, am.adds
	}
	plain, _ := run(false)
	fast, adds := run(true)
	if adds != 4*64 {
		t.Errorf("AtomicAdd called %d times, want %d (add, sub, add_x2, sub_x2 of 64 lanes)", adds, 4*64)
	}
	if string(plain) != string(fast) {
		t.Errorf("results differ with AtomicAdd")
	}
	le := binary.LittleEndian
	if a, s, a2, s2, mx := le.Uint32(fast[0x800:]), le.Uint32(fast[0x804:]), le.Uint64(fast[0x808:]), le.Uint64(fast[0x810:]), le.Uint32(fast[0x818:]); a != 3*64 || s != 1000-5*64 || a2 != 5*64 || s2 != 1000-3*64 || mx != 63 {
		t.Errorf("add %d sub %d add_x2 %d sub_x2 %d smax %d", a, s, a2, s2, mx)
	}
	seen := map[uint32]bool{}
	for l := 0; l < 64; l++ {
		old := le.Uint32(fast[16*l:])
		if old%3 != 0 || old >= 3*64 || seen[old] {
			t.Fatalf("lane %d: add returned %d", l, old)
		}
		seen[old] = true
	}
}
