package shader

import (
	"context"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"time"
)

// miniKernel places a descriptor at 0x1000 and code at 0x1100 in a fresh memory.
func miniKernel(t *testing.T, code []uint32) (*flatMem, DispatchParams) {
	m := newMem()
	m.mapRange(0x1000, 0x1000)
	var kd [64]byte
	binary.LittleEndian.PutUint64(kd[16:], 0x100)
	binary.LittleEndian.PutUint32(kd[52:], 2<<1|1<<7) // USER_SGPR_COUNT 2, work-group id x
	binary.LittleEndian.PutUint16(kd[56:], 1<<3)      // kernarg segment ptr
	m.Write(0x1000, kd[:])
	b := make([]byte, 4*len(code))
	for i, w := range code {
		binary.LittleEndian.PutUint32(b[4*i:], w)
	}
	m.Write(0x1100, b)
	return m, DispatchParams{GridSize: [3]uint32{256, 1, 1}, WorkgroupSize: [3]uint16{64, 1, 1}, KernelObject: 0x1000,
		Apertures: DefaultApertures, MaxWaveInstructions: 1000}
}

// Memory of the small assembled test kernels: s[0:1] (the kernarg pointer) points at asmOut.
const (
	asmOut = 0x100000 // two zeroed pages the kernels store their results to
	asmBuf = 0x200000 // one more zeroed page (buffer memory for the MUBUF tests)
)

// runAsm runs code as one work-group of n work-items with lds bytes of LDS and s[0:1] = asmOut; setup
// may fill memory or change the descriptor and the dispatch first. It returns the memory to read the
// results from.
func runAsm(t *testing.T, code []uint32, n int, lds uint32, setup func(m *flatMem, p *DispatchParams)) (*flatMem, Stats, error) {
	t.Helper()
	m, p := miniKernel(t, code)
	var gs [4]byte
	binary.LittleEndian.PutUint32(gs[:], lds) // group_segment_fixed_size
	m.Write(0x1000, gs[:])
	m.mapRange(asmOut, 0x2000)
	m.mapRange(asmBuf, 0x1000)
	p.KernargAddress = asmOut
	p.GridSize, p.WorkgroupSize = [3]uint32{uint32(n), 1, 1}, [3]uint16{uint16(n), 1, 1}
	if setup != nil {
		setup(m, &p)
	}
	var mem Memory = m
	if asmMemory != nil {
		mem = asmMemory(m)
	}
	st, err := Dispatch(context.Background(), mem, p)
	return m, st, err
}

// asmMemory, if set, wraps the memory runAsm dispatches on (a test of another Memory kind).
var asmMemory func(*flatMem) Memory

// runAsmBytes is runAsm without setup that fails the test on a dispatch error and returns the first
// size bytes at asmOut.
func runAsmBytes(t *testing.T, code []uint32, n int, lds uint32, size int) []byte {
	t.Helper()
	m, _, err := runAsm(t, code, n, lds, nil)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, size)
	m.Read(asmOut, b)
	return b
}

func TestStopConditions(t *testing.T) {
	for _, tc := range []struct {
		name  string
		code  []uint32
		want  string
		check func(error) bool
	}{
		{"trap2", []uint32{0xBF920002}, "s_trap 2", func(e error) bool { var x *TrapError; return errors.As(e, &x) && x.Code == 2 && x.PC == 0x1100 }},
		{"debugtrap is a no-op", []uint32{0xBF920003, 0xBF810000}, "", nil},
		// v_screen_partition_4se_b32_e32 v5, -1: its table is not public (legacy.go)
		{"unimplemented", []uint32{0x7E0A6EC1, 0xBF810000}, "v_screen_partition_4se_b32", func(e error) bool { return errors.Is(e, ErrUnimplemented) }},
		// global_load_dword v1, v[2:3], off with v[2:3] = 0 (unmapped)
		{"fault", []uint32{0x7E040280, 0x7E060280, 0xDC508000, 0x017F0002, 0xBF810000}, "memory fault",
			func(e error) bool { var f *Fault; return errors.As(e, &f) && f.Addr == 0 && !f.Write && f.PC == 0x1108 }},
		{"hang guard", []uint32{0xBF82FFFF}, "limit", func(e error) bool { return errors.Is(e, ErrStepLimit) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, p := miniKernel(t, tc.code)
			_, err := Dispatch(context.Background(), m, p)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !tc.check(err) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestPreemptResume(t *testing.T) {
	// s_endpgm only: 4 groups
	m, p := miniKernel(t, []uint32{0xBF810000})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Dispatch(ctx, m, p)
	var pe *PreemptedError
	if !errors.As(err, &pe) || pe.NextGroup != 0 {
		t.Fatalf("err = %v", err)
	}
	p.StartGroup = 2
	st, err := Dispatch(context.Background(), m, p)
	if err != nil || st.Groups != 2 || st.Waves != 2 {
		t.Fatalf("resume: %+v %v", st, err)
	}
}

func TestF16Conversion(t *testing.T) {
	for _, tc := range []struct {
		x    float64
		want uint16
	}{{1, 0x3c00}, {-2, 0xc000}, {65504, 0x7bff}, {65520, 0x7c00}, {5.960464477539063e-08, 1}, {0.1, 0x2e66}, {1.0009765625 / 2 * 2, 0x3c01}} {
		if got := f64to16(tc.x); got != tc.want {
			t.Errorf("f64to16(%v) = %#x, want %#x", tc.x, got, tc.want)
		}
		if back := f16to32(tc.want); tc.want != 0x7c00 && float64(back) != float64(float32(tc.x)) && tc.x != 0.1 {
			t.Errorf("f16to32(%#x) = %v", tc.want, back)
		}
	}
}

// BenchmarkCorpus reports wave-instructions per second over all corpus kernels.
func BenchmarkVaddWaveInstructions(b *testing.B) {
	l := load(b)
	const n = 1 << 20
	pa, pb, pc := l.alloc(4*n), l.alloc(4*n), l.alloc(4*n)
	var total uint64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		st := l.run(b, "vadd", [3]uint32{n, 1, 1}, [3]uint16{256, 1, 1}, args(pa, pb, pc, uint32(n)))
		total += st.WaveInstructions
	}
	b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "wave-inst/s")
}

func BenchmarkMatmulWaveInstructions(b *testing.B) {
	l := load(b)
	const M = 128
	pa, pb, pc := l.alloc(4*M*M), l.alloc(4*M*M), l.alloc(4*M*M)
	var total uint64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		st := l.run(b, "matmul", [3]uint32{M, M, 1}, [3]uint16{16, 16, 1}, args(pa, pb, pc, uint32(M), uint32(M), uint32(M)))
		total += st.WaveInstructions
	}
	b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "wave-inst/s")
}

// TestStopNeverEndingKernel: a wave that loops forever (s_branch -1) stops within a bounded
// number of instructions once the dispatch's context ends, inside its work-group.
func TestStopNeverEndingKernel(t *testing.T) {
	m, p := miniKernel(t, []uint32{0xBF82FFFF})
	p.MaxWaveInstructions = 0 // no hang guard: only the context can stop it
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	start := time.Now()
	st, err := Dispatch(ctx, m, p)
	var pe *PreemptedError
	if !errors.As(err, &pe) || !pe.MidGroup || pe.NextGroup != 0 {
		t.Fatalf("err = %v", err)
	}
	if el := time.Since(start); el > 2*time.Second || st.WaveInstructions < waveStopCheck {
		t.Errorf("stopped after %v and %d instructions", el, st.WaveInstructions)
	}
}

// TestStepLimitExact: the step limit (turn's chk, shared with the stop checks every
// waveStopCheck instructions) stops a never-ending wave after exactly MaxWaveInstructions, on
// either side of a stop check.
func TestStepLimitExact(t *testing.T) {
	m, p := miniKernel(t, []uint32{0xBF82FFFF})
	p.GridSize[0] = 64
	for _, limit := range []uint64{1, waveStopCheck - 5, waveStopCheck - 1, waveStopCheck, waveStopCheck + 3, 3*waveStopCheck + 7} {
		p.MaxWaveInstructions = limit
		st, err := Dispatch(context.Background(), m, p)
		if !errors.Is(err, ErrStepLimit) || st.WaveInstructions != limit {
			t.Fatalf("limit %d: err = %v after %d instructions", limit, err, st.WaveInstructions)
		}
	}
}

// TestPreemptWaitsForGroupBoundary: with Kill set, a context that ends while a wave loops (600K
// instructions) stops the dispatch at the next work-group boundary, not inside the group; closing
// Kill stops it inside.
func TestPreemptWaitsForGroupBoundary(t *testing.T) {
	// s_mov_b32 s10, 200000; L: s_sub_u32 s10, s10, 1; s_cmp_lg_u32 s10, 0; s_cbranch_scc1 L; s_endpgm
	code := []uint32{0xBE8A00FF, 200000, 0x808A810A, 0xBF07800A, 0xBF85FFFD, 0xBF810000}
	m, p := miniKernel(t, code)
	p.MaxWaveInstructions = 0
	kill := make(chan struct{})
	p.Kill = kill
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // preempt at once: the first group still runs to its end
	st, err := Dispatch(ctx, m, p)
	var pe *PreemptedError
	if !errors.As(err, &pe) || pe.MidGroup || pe.NextGroup != 0 {
		t.Fatalf("preempted before any group: %v", err)
	}
	// Work-groups are resident several at a time: with 64 groups of 600K instructions the
	// dispatch is still admitting when the context ends; the resident ones run to their end.
	p.GridSize[0] = 64 * 64
	ctx2, cancel2 := context.WithCancel(context.Background())
	go func() { time.Sleep(time.Millisecond); cancel2() }()
	st, err = Dispatch(ctx2, m, p)
	if !errors.As(err, &pe) || pe.MidGroup || pe.NextGroup == 0 || st.Groups != pe.NextGroup {
		t.Fatalf("preempted during a group: %v (%+v)", err, st)
	}
	close(kill)
	ctx3, cancel3 := context.WithCancel(context.Background())
	cancel3()
	p.StartGroup = pe.NextGroup
	if _, err := Dispatch(ctx3, m, p); !errors.As(err, &pe) {
		t.Fatalf("killed: %v", err)
	}
}

// A GLOBAL store's VDST field is not an operand: any value there, even a register beyond the
// wave's file, leaves the store alone (the one-dword paths took the data row from VDST before they
// looked at the kind of access; found by FuzzDecodeStep: "global_store_dword v0, a0, s[1:2]" with
// the field at a191 stopped the wave with an internal error). The data here are AGPRs, as gfx90a's
// acc bit allows, stored by a full wave in one run (globalRun), by half a wave, and by a full wave
// in two runs, once on a plain memory and once on a VecMemory (globalRunsV).
func TestGlobalStoreIgnoresVDSTField(t *testing.T) {
	src := `
	v_lshlrev_b32 v1, 2, v0
	v_accvgpr_write_b32 a0, v0
	global_store_dword v1, a0, s[0:1]
	v_cmp_le_u32 vcc, 32, v0
	v_cndmask_b32 v3, 0, 64, vcc
	v_add_u32 v3, v3, v1
	v_add_u32 v4, 1000, v0
	v_accvgpr_write_b32 a2, v4
	global_store_dword v3, a2, s[0:1] offset:512
	v_cmp_gt_u32 vcc, 32, v0
	s_and_saveexec_b64 s[4:5], vcc
	v_add_u32 v2, 100, v0
	v_accvgpr_write_b32 a1, v2
	global_store_dword v1, a1, s[0:1] offset:256
	s_endpgm
	`
	for _, vec := range []bool{false, true} {
		code := asm(t, src)
		stores := 0
		for i := 0; i+1 < len(code); i++ {
			if code[i]>>26 == 0x37 { // FLAT/GLOBAL/SCRATCH
				code[i+1] = code[i+1]&0x00ffffff | 0xbf<<24 // VDST = 191: with the acc bit, a191
				stores++
				i++
			}
		}
		if stores != 3 {
			t.Fatalf("%d FLAT encodings found in the kernel, want 3", stores)
		}
		var vm *vecMem
		if vec {
			asmMemory = func(m *flatMem) Memory { vm = &vecMem{flatMem: m}; return vm }
		}
		b := runAsmBytes(t, code, 64, 0, 1024)
		asmMemory = nil
		if vec && (vm == nil || vm.pieces.Load() == 0) {
			t.Error("no vectored access")
		}
		for l := 0; l < 64; l++ {
			if got := binary.LittleEndian.Uint32(b[4*l:]); got != uint32(l) {
				t.Errorf("vec %v, one run: lane %d stored %d", vec, l, got)
			}
			want := uint32(0)
			if l < 32 {
				want = uint32(100 + l)
			}
			if got := binary.LittleEndian.Uint32(b[256+4*l:]); got != want {
				t.Errorf("vec %v, half wave: lane %d stored %d, want %d", vec, l, got, want)
			}
			at := 512 + 4*l
			if l >= 32 {
				at += 64
			}
			if got := binary.LittleEndian.Uint32(b[at:]); got != uint32(1000+l) {
				t.Errorf("vec %v, two runs: lane %d stored %d", vec, l, got)
			}
		}
	}
}
