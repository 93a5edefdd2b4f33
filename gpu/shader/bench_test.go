package shader

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// oneLaneLoop is the loop of kfdtest's KFDCWSRTest.BasicTest (ROCT-Thunk-Interface
// tests/kfdtest/src/ShaderStore.cpp IterateIsa): a single work-item counts v6 up to the
// iteration number in s0 with two VALU ops and a branch on VCC, then stores it. One lane of one
// wave is active, and the loop is 3 wave instructions per round.
const oneLaneLoop = `
	v_mov_b32 v2, s0
	v_mov_b32 v3, s1
	v_mov_b32 v0, s4
	v_lshlrev_b32 v0, 2, v0
	v_add_co_u32 v4, vcc, s2, v0
	v_mov_b32 v5, s3
	v_addc_co_u32 v5, vcc, v5, 0, vcc
	v_mov_b32 v6, 0
LOOP:
	v_add_co_u32 v6, vcc, 1, v6
	v_cmp_lt_u32 vcc, v6, v2
	s_cbranch_vccnz LOOP
	flat_store_dword v[4:5], v6
	s_waitcnt vmcnt(0) lgkmcnt(0)
	s_endpgm`

// runOneLaneLoop dispatches oneLaneLoop as one work-item counting to n and checks the result.
func runOneLaneLoop(t testing.TB, code []uint32, n uint32) Stats {
	t.Helper()
	m := newMem()
	m.mapRange(0x1000, 0x1000)
	putWords(m, 0x1100, code)
	const ka, out = 0x8000, 0x10000
	m.mapRange(ka, 0x1000)
	m.mapRange(out, 0x1000)
	// PM4 dispatch as kfdtest's Dispatch class does it: 16 VGPRs, USER_SGPR_COUNT 4 (s[0:1] the
	// iteration number, s[2:3] the result buffer), work-group id x in s4; one group of one item.
	regs := RegParams{PgmAddr: 0x1100, RSRC1: 1, RSRC2: 4<<1 | 1<<7, NumGroups: [3]uint32{1, 1, 1},
		WorkgroupSize: [3]uint16{1, 1, 1}, Apertures: DefaultApertures}
	regs.UserData[0], regs.UserData[2], regs.UserData[3] = n, out, 0
	st, err := DispatchRegs(context.Background(), m, regs)
	if err != nil {
		t.Fatal(err)
	}
	var b [4]byte
	m.Read(out, b[:])
	if got := binary.LittleEndian.Uint32(b[:]); got != n {
		t.Fatalf("result %d, want %d", got, n)
	}
	if want := uint64(3*n + 11); st.WaveInstructions != want {
		t.Fatalf("%d wave instructions, want %d", st.WaveInstructions, want)
	}
	return st
}

// BenchmarkOneLaneLoop models KFDCWSRTest.BasicTest (1.2 G wave instructions in one lane):
// wave instructions per second of a loop with one active lane.
func BenchmarkOneLaneLoop(b *testing.B) {
	code := asm(b, oneLaneLoop)
	var total uint64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		total += runOneLaneLoop(b, code, 1_000_000).WaveInstructions
	}
	b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "wave-inst/s")
}

// TestKernels: every VALU lane loop (v32k) computes what its per-lane function does, for random
// operands, special values and a destination that is also a source.
func TestKernels(t *testing.T) {
	if len(kernels) < 20 {
		t.Fatalf("%d lane loops registered", len(kernels))
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	special := []uint32{0, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0x7f800001, 1, 0x807fffff, 0x3f800000, 31, 32, 0xffffffff}
	for i, p := range kernels {
		for round := 0; round < 8; round++ {
			var a, b, c, d [lanes]uint32
			for l := range a {
				for _, x := range []*uint32{&a[l], &b[l], &c[l]} {
					*x = rnd.Uint32()
					if rnd.IntN(3) == 0 {
						*x = special[rnd.IntN(len(special))]
					}
				}
			}
			p.k(&d, &a, &b, &c)
			for l := range d {
				if want := p.f(a[l], b[l], c[l]); d[l] != want {
					t.Fatalf("kernel %d lane %d: f(%#x, %#x, %#x) = %#x, loop %#x", i, l, a[l], b[l], c[l], want, d[l])
				}
			}
			a2 := a
			p.k(&a2, &a2, &b, &c) // d aliases a
			if a2 != d {
				t.Fatalf("kernel %d: result differs when the destination is source 0", i)
			}
		}
	}
}
