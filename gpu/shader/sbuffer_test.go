package shader

import (
	"encoding/binary"
	"testing"
)

// TestScalarBufferRange: S_BUFFER_LOAD/STORE are range-checked against the V#'s NUM_RECORDS
// (bytes when STRIDE is 0, else STRIDE x NUM_RECORDS); dwords out of range read 0 without a memory
// access and are not written. A V# whose base is unmapped but whose range excludes the offset (as
// kfdtest's loop_isa builds one) reads zeros instead of faulting.
func TestScalarBufferRange(t *testing.T) {
	code := asm(t, `
	s_mov_b32 s4, s0
	s_and_b32 s5, s1, 0xffff
	s_mov_b32 s6, 12
	s_mov_b32 s7, 0
	s_buffer_load_dwordx4 s[8:11], s[4:7], 0x4
	s_mov_b32 s12, 0
	s_mov_b32 s13, 0xff
	s_mov_b32 s14, 3
	s_mov_b32 s15, 0
	s_buffer_load_dwordx8 s[16:23], s[12:15], 0x10
	s_mov_b32 s24, s0
	s_or_b32 s25, s5, 0x40000
	s_mov_b32 s26, 2
	s_mov_b32 s27, 0
	s_buffer_load_dwordx4 s[28:31], s[24:27], 0x0
	s_mov_b32 s32, 0x1234
	s_mov_b32 s33, 0x5678
	s_buffer_store_dwordx2 s[32:33], s[4:7], 0x8
	s_waitcnt lgkmcnt(0)
	s_store_dwordx4 s[8:11], s[0:1], 0x40
	s_store_dwordx4 s[16:19], s[0:1], 0x50
	s_store_dwordx4 s[20:23], s[0:1], 0x60
	s_store_dwordx4 s[28:31], s[0:1], 0x70
	s_endpgm
`)
	m, _, err := runAsm(t, code, 1, 0, func(m *flatMem, _ *DispatchParams) {
		init := make([]byte, 0x80)
		for i := 0; i < 8; i++ {
			binary.LittleEndian.PutUint32(init[4*i:], uint32(0xa0+i))
		}
		for i := 16; i < 32; i++ {
			binary.LittleEndian.PutUint32(init[4*i:], 0xdeadbeef)
		}
		m.Write(asmOut, init)
	})
	if err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 0x80)
	m.Read(asmOut, got)
	d := func(off int) uint32 { return binary.LittleEndian.Uint32(got[off:]) }
	for _, c := range []struct {
		off  int
		want uint32
		what string
	}{
		{0x40, 0xa1, "dword at 4 (in range 12)"},
		{0x44, 0xa2, "dword at 8"},
		{0x48, 0, "dword at 12: out of range"},
		{0x4c, 0, "dword at 16: out of range"},
		{0x50, 0, "unmapped base, NUM_RECORDS 3 < offset 16: zero, no fault"},
		{0x6c, 0, "unmapped base, last dword"},
		{0x70, 0xa0, "stride 4 x 2 records: dword 0"},
		{0x74, 0xa1, "dword 1"},
		{0x78, 0, "dword 2 beyond 8 bytes"},
		{0x08, 0x1234, "s_buffer_store: dword at 8 written"},
		{0x0c, 0xa3, "s_buffer_store: dword at 12 out of range, kept"},
	} {
		if g := d(c.off); g != c.want {
			t.Errorf("%s: %#x, want %#x", c.what, g, c.want)
		}
	}
}
