package shader

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"runtime"
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
// operands, special values and a destination that is also a source (each of the three).
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
			// The destination may be any source (a full EXEC writes the register row in place).
			a2, b2, c2 := a, b, c
			p.k(&a2, &a2, &b, &c)
			p.k(&b2, &a, &b2, &c)
			p.k(&c2, &a, &b, &c2)
			if a2 != d || b2 != d || c2 != d {
				t.Fatalf("kernel %d: result differs when the destination is a source", i)
			}
		}
	}
}

// TestKernels64: the same for the 64-bit lane loops (v64k).
func TestKernels64(t *testing.T) {
	if len(kernels64) < 5 {
		t.Fatalf("%d lane loops registered", len(kernels64))
	}
	rnd := rand.New(rand.NewPCG(3, 4))
	special := []uint64{0, 1 << 63, 0x7ff0000000000000, 0x7ff8000000000000, 1, 63, 64, 0x000fffffffffffff, ^uint64(0)}
	for i, p := range kernels64 {
		for round := 0; round < 8; round++ {
			var a, b, c, d [lanes]uint64
			for l := range a {
				for _, x := range []*uint64{&a[l], &b[l], &c[l]} {
					*x = rnd.Uint64()
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
		}
	}
}

// loopIsa is kfdtest's LoopIsa (ROCT-Thunk-Interface tests/kfdtest/src/ShaderStore.cpp), the kernel
// of KFDQMTest.QueuePriorityOnSamePipe/OnDifferentPipe: one-item work-groups, each looping 247
// times over a scalar buffer load and 57 single-lane VALU operations (f32 add/mul, log, exp, sqrt,
// rsq).
const loopIsa = `
	s_movk_i32 s0, 0x0008
	s_movk_i32 s1, 0x00ff
` + "\tv_mov_b32 v0, 0\n\tv_mov_b32 v1, 0\n\tv_mov_b32 v2, 0\n\tv_mov_b32 v3, 0\n\tv_mov_b32 v4, 0\n\tv_mov_b32 v5, 0\n" +
	"\tv_mov_b32 v6, 0\n\tv_mov_b32 v7, 0\n\tv_mov_b32 v8, 0\n\tv_mov_b32 v9, 0\n\tv_mov_b32 v10, 0\n\tv_mov_b32 v11, 0\n" +
	"\tv_mov_b32 v12, 0\n\tv_mov_b32 v13, 0\n\tv_mov_b32 v14, 0\n\tv_mov_b32 v15, 0\n\tv_mov_b32 v16, 0\n" + `
LOOP:
	s_mov_b32 s8, s4
	s_mov_b32 s9, s1
	s_mov_b32 s10, s6
	s_mov_b32 s11, s7
	s_cmp_le_i32 s1, s0
	s_cbranch_scc1 END_OF_PGM
	s_buffer_load_dwordx8 s[8:15], s[8:11], 0x10
	v_add_f32 v0, 2.0, v0
	v_cvt_f32_i32 v17, s1
	s_waitcnt lgkmcnt(0)
	v_add_f32 v18, s8, v17
	v_add_f32 v19, s9, v17
	v_add_f32 v20, s10, v17
	v_add_f32 v21, s11, v17
	v_add_f32 v22, s12, v17
	v_add_f32 v23, s13, v17
	v_add_f32 v24, s14, v17
	v_add_f32 v17, s15, v17
	v_log_f32 v25, v18
	v_mul_f32 v25, v22, v25
	v_exp_f32 v25, v25
	v_log_f32 v26, v19
	v_mul_f32 v26, v23, v26
	v_exp_f32 v26, v26
	v_log_f32 v27, v20
	v_mul_f32 v27, v24, v27
	v_exp_f32 v27, v27
	v_log_f32 v28, v21
	v_mul_f32 v28, v17, v28
	v_exp_f32 v28, v28
	v_add_f32 v5, v5, v25
	v_add_f32 v6, v6, v26
	v_add_f32 v7, v7, v27
	v_add_f32 v8, v8, v28
	v_mul_f32 v18, 0x3fb8aa3b, v18
	v_exp_f32 v18, v18
	v_mul_f32 v19, 0x3fb8aa3b, v19
	v_exp_f32 v19, v19
	v_mul_f32 v20, 0x3fb8aa3b, v20
	v_exp_f32 v20, v20
	v_mul_f32 v21, 0x3fb8aa3b, v21
	v_exp_f32 v21, v21
	v_add_f32 v9, v9, v18
	v_add_f32 v10, v10, v19
	v_add_f32 v11, v11, v20
	v_add_f32 v12, v12, v21
	v_sqrt_f32 v18, v22
	v_sqrt_f32 v19, v23
	v_sqrt_f32 v20, v24
	v_sqrt_f32 v21, v17
	v_add_f32 v13, v13, v18
	v_add_f32 v14, v14, v19
	v_add_f32 v15, v15, v20
	v_add_f32 v16, v16, v21
	v_rsq_f32 v18, v22
	v_rsq_f32 v19, v23
	v_rsq_f32 v20, v24
	v_rsq_f32 v17, v17
	v_add_f32 v1, v1, v18
	v_add_f32 v2, v2, v19
	v_add_f32 v3, v3, v20
	v_add_f32 v4, v4, v17
	s_add_u32 s0, s0, 1
	s_branch LOOP
END_OF_PGM:
	s_endpgm`

// BenchmarkLoopIsaGroups models KFDQMTest.QueuePriority* (1024x16x16 one-item work-groups of
// LoopIsa, 5.8 G wave instructions): 256 one-item groups on 1..GOMAXPROCS workers.
func BenchmarkLoopIsaGroups(b *testing.B) {
	code := asm(b, loopIsa)
	ninst := len(decodeAll(b, code))
	// prologue 19, 247 rounds of the body (everything but the prologue and s_endpgm), the last
	// round's 6 instructions and s_endpgm
	const groups = 256
	perWave := uint64(19 + 247*(ninst-20) + 7)
	m := newMem()
	m.mapRange(0x1000, 0x1000)
	putWords(m, 0x1100, code)
	// The buffer the loop reads: V# base s4 | (s1 & 0xffff) << 32 with s1 = 0xff, 8 dwords at 0x10.
	const buf = 0x2000
	m.mapRange(0xff<<32|buf, 0x1000)
	defer SetWorkers(0)
	var one float64
	for wk := 1; wk <= runtime.GOMAXPROCS(0); wk++ {
		b.Run(fmt.Sprintf("workers=%d", wk), func(b *testing.B) {
			SetWorkers(wk)
			var total uint64
			for i := 0; i < b.N; i++ {
				regs := RegParams{PgmAddr: 0x1100, RSRC1: 7, RSRC2: 8 << 1, NumGroups: [3]uint32{groups, 1, 1},
					WorkgroupSize: [3]uint16{1, 1, 1}, Apertures: DefaultApertures}
				regs.UserData[4], regs.UserData[6] = buf, 0x1000
				st, err := DispatchRegs(context.Background(), m, regs)
				if err != nil {
					b.Fatal(err)
				}
				if st.WaveInstructions != groups*perWave {
					b.Fatalf("%d wave instructions, want %d", st.WaveInstructions, groups*perWave)
				}
				total += st.WaveInstructions
			}
			rate := float64(total) / b.Elapsed().Seconds()
			b.ReportMetric(rate, "wave-inst/s")
			if wk == 1 {
				one = rate
			} else if one > 0 {
				b.ReportMetric(rate/one, "x-vs-1-worker")
			}
		})
	}
}

// BenchmarkLaneOps times single instructions of vadd's and matmul's inner code on one wave with
// all 64 lanes active (ns per wave instruction, one sub-benchmark each): the routines alone, without
// fetch, scheduling or Memory, so that a change to one lane loop can be measured in isolation.
func BenchmarkLaneOps(b *testing.B) {
	code := asm(b, `
	v_add_co_u32 v4, vcc, s0, v0
	v_addc_co_u32 v5, vcc, v5, v1, vcc
	v_mad_u64_u32 v[0:1], s[2:3], s2, v2, v[0:1]
	v_cmp_gt_u64 vcc, s[0:1], v[0:1]
	v_lshlrev_b64 v[0:1], 2, v[0:1]
	v_mov_b32 v3, s3
	v_add_f32 v2, v6, v7
	v_fmac_f32 v8, v14, v22
	ds_read2_b32 v[22:23], v13 offset1:16
	ds_read2_b64 v[14:17], v10 offset1:1
	ds_write_b32 v12, v1
`)
	w := &wave{v: make([][lanes]uint32, 64), g: &group{lds: make([]byte, 2048)}, mode: 0xf0}
	for l := 0; l < lanes; l++ {
		w.v[13][l], w.v[10][l], w.v[12][l] = uint32(l*4), uint32(l*8)&1023, uint32(l*4)
		w.v[14][l], w.v[22][l], w.v[6][l], w.v[7][l] = 0x3f800000, 0x40000000, 0x3f000000, 0x3e000000
	}
	w.setExec(^uint64(0))
	for _, in := range decodeAll(b, code) {
		b.Run(in.String(), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if err := in.exec(w, &in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
