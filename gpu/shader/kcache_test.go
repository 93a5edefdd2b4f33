package shader

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync/atomic"
	"testing"
)

// countMem counts the reads of a flatMem that touch [lo, hi).
type countMem struct {
	*flatMem
	lo, hi uint64
	reads  atomic.Int64
}

func (c *countMem) Read(va uint64, p []byte) error {
	if va < c.hi && va+uint64(len(p)) > c.lo {
		c.reads.Add(1)
	}
	return c.flatMem.Read(va, p)
}

// TestScalarCache: SMEM loads read through the dispatch's scalar cache, which a vector store does
// not update (as on hardware, K$ is not coherent with vector memory); GLC bypasses it, s_dcache_inv
// empties it, an SMEM store writes through and empties it, and every wave of every work-group of
// the dispatch shares it: the kernel argument line is read from memory once.
func TestScalarCache(t *testing.T) {
	code := asm(t, `
	s_load_dword s4, s[0:1], 0x40
	s_waitcnt lgkmcnt(0)
	v_mov_b32 v1, 0
	v_mov_b32 v2, 0xbbbb
	global_store_dword v1, v2, s[0:1] offset:0x40
	s_waitcnt vmcnt(0)
	s_load_dword s5, s[0:1], 0x40
	s_load_dword s6, s[0:1], 0x40 glc
	s_dcache_inv
	s_load_dword s7, s[0:1], 0x40
	s_waitcnt lgkmcnt(0)
	s_mov_b32 s8, 0xcccc
	s_store_dword s8, s[0:1], 0x40
	s_load_dword s9, s[0:1], 0x40
	s_waitcnt lgkmcnt(0)
	s_store_dwordx4 s[4:7], s[0:1], 0x80
	s_store_dwordx2 s[8:9], s[0:1], 0x90
	s_endpgm
`)
	m, _, err := runAsm(t, code, 1, 0, func(m *flatMem, _ *DispatchParams) {
		var b [4]byte
		binary.LittleEndian.PutUint32(b[:], 0xaaaa)
		m.Write(asmOut+0x40, b[:])
	})
	if err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 24)
	m.Read(asmOut+0x80, got)
	for i, c := range []struct {
		want uint32
		what string
	}{
		{0xaaaa, "first load"},
		{0xaaaa, "load after a vector store (the cached line)"},
		{0xbbbb, "glc load"},
		{0xbbbb, "load after s_dcache_inv"},
		{0xcccc, "stored value"},
		{0xcccc, "load after an SMEM store"},
	} {
		if g := binary.LittleEndian.Uint32(got[4*i:]); g != c.want {
			t.Errorf("%s: %#x, want %#x", c.what, g, c.want)
		}
	}

	// 4 work-groups of 4 waves each load the same kernel argument: one read of its line.
	code = asm(t, `
	s_load_dword s4, s[0:1], 0x0
	s_waitcnt lgkmcnt(0)
	v_mov_b32 v1, s4
	v_lshlrev_b32 v2, 2, v0
	global_store_dword v2, v1, s[0:1] offset:0x100
	s_endpgm
`)
	fm, p := miniKernel(t, code)
	fm.mapRange(asmOut, 0x2000)
	p.KernargAddress = asmOut
	p.GridSize, p.WorkgroupSize = [3]uint32{1024, 1, 1}, [3]uint16{256, 1, 1}
	for round, v := range []uint32{7, 9} {
		var b [4]byte
		binary.LittleEndian.PutUint32(b[:], v)
		fm.Write(asmOut, b[:])
		cm := &countMem{flatMem: fm, lo: asmOut, hi: asmOut + kLine}
		if _, err := Dispatch(context.Background(), cm, p); err != nil {
			t.Fatal(err)
		}
		if n := cm.reads.Load(); n != 1 {
			t.Errorf("round %d: the kernel argument line was read %d times by 16 waves, want once", round, n)
		}
		out := make([]byte, 4*256)
		fm.Read(asmOut+0x100, out)
		if g := binary.LittleEndian.Uint32(out[4*255:]); g != v { // a new dispatch reads memory again
			t.Errorf("round %d: work-item 255 stored %d, want %d", round, g, v)
		}
	}
}

// TestScalarCacheManyLines: 16 waves of 4 work-groups load 12 lines of kernel arguments (more than
// the kcInline a table holds in place: the last 4 go to its map) at once; every value is right and
// every line is read from memory once.
func TestScalarCacheManyLines(t *testing.T) {
	const lines = 12
	if lines <= kcInline {
		t.Fatalf("the test needs more lines (%d) than a table holds in place (%d)", lines, kcInline)
	}
	src := ""
	for i := range lines {
		src += fmt.Sprintf("\ts_load_dword s%d, s[0:1], %#x\n", 4+i, i*kLine)
	}
	src += "\ts_waitcnt lgkmcnt(0)\n"
	for i := 1; i < lines; i++ {
		src += fmt.Sprintf("\ts_add_u32 s4, s4, s%d\n", 4+i)
	}
	src += `	v_mov_b32 v1, s4
	v_lshlrev_b32 v2, 2, v0
	global_store_dword v2, v1, s[0:1] offset:0x400
	s_endpgm
`
	fm, p := miniKernel(t, asm(t, src))
	fm.mapRange(asmOut, 0x2000)
	p.KernargAddress = asmOut
	p.GridSize, p.WorkgroupSize = [3]uint32{1024, 1, 1}, [3]uint16{256, 1, 1}
	want := uint32(0)
	for i := range lines {
		var b [4]byte
		binary.LittleEndian.PutUint32(b[:], uint32(i+1)*0x101)
		fm.Write(asmOut+uint64(i*kLine), b[:])
		want += uint32(i+1) * 0x101
	}
	cm := &countMem{flatMem: fm, lo: asmOut, hi: asmOut + lines*kLine}
	if _, err := Dispatch(context.Background(), cm, p); err != nil {
		t.Fatal(err)
	}
	if n := cm.reads.Load(); n != lines {
		t.Errorf("%d kernel argument lines were read %d times by 16 waves, want %d", lines, n, lines)
	}
	out := make([]byte, 4*256)
	fm.Read(asmOut+0x400, out)
	for i := 0; i < 256; i++ {
		if g := binary.LittleEndian.Uint32(out[4*i:]); g != want {
			t.Fatalf("work-item %d stored %#x, want %#x", i, g, want)
		}
	}
}
