package shader

import (
	"encoding/binary"
	"testing"

	"golang.org/x/sys/unix"
)

// TestMemtime: s_memtime and s_memrealtime (llvm-mc-14 encodes s_memtime s[0:1] as c0900000 00000000)
// decode and return the 100 MHz GPU timestamp of GET_CLOCK_COUNTERS: CLOCK_MONOTONIC_RAW / 10 ns,
// read here independently of RefClock. Four waves of one work-group each take a stamp, meet at
// s_barrier and take two more: every stamp lies within the dispatch, each wave's stamps do not
// decrease, and every stamp taken after the barrier is at least every stamp taken before it, whichever
// wave took it (monotonic across waves).
func TestMemtime(t *testing.T) {
	if w := asm(t, "s_memtime s[0:1]\n"); len(w) != 2 || w[0] != 0xc0900000 || w[1] != 0 {
		t.Fatalf("llvm-mc-14 encodes s_memtime s[0:1] as %08x", w)
	}
	for _, src := range []string{"s_memtime s[4:5]", "s_memrealtime s[4:5]", "s_dcache_inv", "s_dcache_wb",
		"s_dcache_inv_vol", "s_dcache_wb_vol"} {
		w := asm(t, src+"\n")
		in, err := Decode(w)
		if err != nil || in.String() != src {
			t.Errorf("%s (%08x) decodes to %q, %v", src, w, in.String(), err)
		}
	}
	code := asm(t, `
	s_memtime s[2:3]
	s_waitcnt lgkmcnt(0)
	s_barrier
	s_memrealtime s[4:5]
	s_memtime s[6:7]
	s_waitcnt lgkmcnt(0)
	v_lshlrev_b32 v8, 5, v0
	v_mov_b32 v2, s2
	v_mov_b32 v3, s3
	v_mov_b32 v4, s4
	v_mov_b32 v5, s5
	v_mov_b32 v6, s6
	v_mov_b32 v7, s7
	global_store_dwordx2 v8, v[2:3], s[0:1]
	global_store_dwordx4 v8, v[4:7], s[0:1] offset:8
	s_endpgm
`)
	raw := func() uint64 {
		var ts unix.Timespec
		if err := unix.ClockGettime(unix.CLOCK_MONOTONIC_RAW, &ts); err != nil {
			t.Fatal(err)
		}
		return uint64(ts.Nano()) / 10
	}
	const n = 256
	t0 := raw()
	m, _, err := runAsm(t, code, n, 0, nil)
	t1 := raw()
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 32*n)
	m.Read(asmOut, b)
	var maxBefore, minAfter uint64 = 0, ^uint64(0)
	for l := 0; l < n; l++ {
		var s [3]uint64
		for k := range s {
			s[k] = binary.LittleEndian.Uint64(b[32*l+8*k:])
		}
		if s[0] < t0 || s[2] > t1 || s[1] < s[0] || s[2] < s[1] {
			t.Fatalf("lane %d: stamps %d %d %d, not in order within the dispatch [%d, %d]", l, s[0], s[1], s[2], t0, t1)
		}
		maxBefore, minAfter = max(maxBefore, s[0]), min(minAfter, s[1], s[2])
	}
	if minAfter < maxBefore {
		t.Errorf("a stamp after the barrier (%d) precedes one before it (%d)", minAfter, maxBefore)
	}
}
