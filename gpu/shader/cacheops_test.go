package shader

import "testing"

// The gfx90a MUBUF cache-control instructions decode (encodings from llvm-mc-14 -mcpu=gfx90a
// -show-encoding), print as llvm-objdump-14 prints them and execute as no-ops.
func TestMUBUFCacheOps(t *testing.T) {
	for _, c := range []struct {
		w0   uint32
		name string
	}{
		{0xe0a00000, "buffer_wbl2"},
		{0xe0a40000, "buffer_invl2"},
		{0xe0f80000, "buffer_wbinvl1"},
		{0xe0fc0000, "buffer_wbinvl1_vol"},
	} {
		in, err := Decode([]uint32{c.w0, 0})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if in.Size != 8 || in.String() != c.name {
			t.Fatalf("%#x decodes to %q (%d bytes), want %s", c.w0, in.String(), in.Size, c.name)
		}
		if fn := resolve(&in); fn == nil {
			t.Fatalf("%s has no routine", c.name)
		} else if err := fn(&wave{v: make([][lanes]uint32, 512)}, &in); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
	}
}

// A DS address is ADDR + offset in 32 bits: LLVM reverses through LDS with ADDR = -4*tid and the
// constant in the offset field (ds_read_b32 v, v offset:252 reads 252 - 4*tid).
func TestDSAddressWraps(t *testing.T) {
	code := asm(t, `
	v_lshlrev_b32 v1, 2, v0
	ds_write_b32 v1, v0
	s_waitcnt lgkmcnt(0)
	s_barrier
	v_sub_u32 v2, 0, v1
	ds_read_b32 v3, v2 offset:252
	ds_read2_b32 v[4:5], v2 offset0:63 offset1:62
	s_waitcnt lgkmcnt(0)
	v_add_u32 v3, v3, v4
	v_add_u32 v3, v3, v5
	global_store_dword v1, v3, s[0:1]
	s_endpgm
`)
	got := runAsmBytes(t, code, 64, 256, 256)
	for l := 0; l < 64; l++ {
		v := uint32(got[4*l]) | uint32(got[4*l+1])<<8
		// lds[252-4l] = 63-l twice, then lds[248-4l] = 62-l; for lane 63 that address wraps to
		// 0xfffffffc, out of range, which reads 0.
		want := uint32(2*(63-l) + max(62-l, 0))
		if v != want {
			t.Fatalf("lane %d: %d, want %d", l, v, want)
		}
	}
}
