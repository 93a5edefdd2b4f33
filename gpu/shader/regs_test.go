package shader

import (
	"context"
	"debug/elf"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// asm assembles gfx90a source with llvm-mc-14 into an object file and returns its .text dwords (branches to
// labels are resolved by the assembler).
func asm(t testing.TB, src string) []uint32 {
	t.Helper()
	if _, err := exec.LookPath("llvm-mc-14"); err != nil {
		t.Skip("llvm-mc-14 not installed")
	}
	dir := t.TempDir()
	in, obj := filepath.Join(dir, "a.s"), filepath.Join(dir, "a.o")
	if err := os.WriteFile(in, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("llvm-mc-14", "-arch=amdgcn", "-mcpu=gfx90a", "-filetype=obj", in, "-o", obj).CombinedOutput(); err != nil {
		t.Fatalf("llvm-mc-14: %v\n%s", err, out)
	}
	f, err := elf.Open(obj)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data, err := f.Section(".text").Data()
	if err != nil {
		t.Fatal(err)
	}
	w := make([]uint32, len(data)/4)
	for i := range w {
		w[i] = binary.LittleEndian.Uint32(data[4*i:])
	}
	return w
}

// decodeAll decodes a .text stream into its instructions, each bound to its routine (bind).
func decodeAll(t testing.TB, code []uint32) []Inst {
	t.Helper()
	var out []Inst
	for pc := 0; pc < len(code); {
		in, err := Decode(code[pc:min(pc+3, len(code))])
		if err != nil {
			t.Fatal(err)
		}
		pc += int(in.Size) / 4
		in.bind()
		out = append(out, in)
	}
	return out
}

func putWords(m Memory, va uint64, code []uint32) {
	b := make([]byte, 4*len(code))
	for i, w := range code {
		binary.LittleEndian.PutUint32(b[4*i:], w)
	}
	m.Write(va, b)
}

// execMem models GPUVM execute permission: code pages can be fetched but not read, data cannot be fetched.
type execMem struct {
	*flatMem
	codeLo, codeHi uint64
	fetches        atomic.Int64 // waves decode concurrently
}

var errNoExec = errors.New("page not executable")
var errNoRead = errors.New("page not readable")

func (m *execMem) Read(va uint64, p []byte) error {
	if va >= m.codeLo && va < m.codeHi {
		return errNoRead
	}
	return m.flatMem.Read(va, p)
}

func (m *execMem) Fetch(va uint64, p []byte) error {
	m.fetches.Add(1)
	if va < m.codeLo || va+uint64(len(p)) > m.codeHi {
		return errNoExec
	}
	return m.flatMem.Read(va, p)
}

// TestFetchThroughExecute runs vadd with code that is fetchable but not readable, and checks that a jump to
// data stops the wave with an instruction-fetch fault.
func TestFetchThroughExecute(t *testing.T) {
	l := load(t)
	code := l.syms["vadd"]
	em := &execMem{flatMem: l.mem, codeLo: code, codeHi: code + 0x100}
	const n = 300
	a, b := make([]float32, n), make([]float32, n)
	for i := range a {
		a[i], b[i] = float32(i), float32(2*i)+0.5
	}
	pa, pb, pc := l.put(a), l.put(b), l.put(make([]float32, n))
	ka := l.put(args(pa, pb, pc, uint32(n)))
	pkt := l.alloc(64)
	var pk [64]byte
	binary.LittleEndian.PutUint16(pk[4:], 64)
	l.mem.Write(pkt, pk[:])
	_, err := Dispatch(context.Background(), em, DispatchParams{GridSize: [3]uint32{n, 1, 1}, WorkgroupSize: [3]uint16{64, 1, 1},
		KernelObject: l.syms["vadd.kd"], KernargAddress: ka, DispatchPacket: pkt, Apertures: DefaultApertures})
	if err != nil {
		t.Fatal(err)
	}
	if em.fetches.Load() == 0 {
		t.Fatal("code was not read through Fetch")
	}
	c := make([]float32, n)
	l.get(pc, c)
	for i := range c {
		if c[i] != a[i]+b[i] {
			t.Fatalf("c[%d] = %v", i, c[i])
		}
	}
	// s_setpc_b64 to a data page: the fetch fails with execute permission.
	m := newMem()
	m.mapRange(0x1000, 0x2000)
	em2 := &execMem{flatMem: m, codeLo: 0x1100, codeHi: 0x1200}
	code2 := asm(t, "s_mov_b32 s0, 0x1800\ns_mov_b32 s1, 0\ns_setpc_b64 s[0:1]\n")
	putWords(m, 0x1100, code2)
	var kd [64]byte
	binary.LittleEndian.PutUint64(kd[16:], 0x100)
	m.Write(0x1000, kd[:])
	_, err = Dispatch(context.Background(), em2, DispatchParams{GridSize: [3]uint32{64, 1, 1}, WorkgroupSize: [3]uint16{64, 1, 1},
		KernelObject: 0x1000, MaxWaveInstructions: 100})
	var f *Fault
	if !errors.As(err, &f) || f.Addr != 0x1800 || !errors.Is(err, errNoExec) || !strings.Contains(f.Inst, "fetch") {
		t.Fatalf("err = %v, want an instruction fetch fault at 0x1800", err)
	}
}

// TestCodeChangesBetweenDispatches: the decode cache is per dispatch, so rewritten code takes effect.
func TestCodeChangesBetweenDispatches(t *testing.T) {
	m, p := miniKernel(t, []uint32{0xBF920002}) // s_trap 2
	for _, code := range []uint8{2, 5, 7} {
		putWords(m, 0x1100, []uint32{0xBF920000 | uint32(code)})
		_, err := Dispatch(context.Background(), m, p)
		var te *TrapError
		if !errors.As(err, &te) || te.Code != code {
			t.Fatalf("err = %v, want s_trap %d", err, code)
		}
	}
}

// TestDispatchRegs runs the corpus vadd through the register path: CP's user data is given explicitly.
func TestDispatchRegs(t *testing.T) {
	l := load(t)
	var kdb [64]byte
	if err := l.mem.Read(l.syms["vadd.kd"], kdb[:]); err != nil {
		t.Fatal(err)
	}
	kd, err := ParseKernelDescriptor(kdb[:])
	if err != nil {
		t.Fatal(err)
	}
	// vadd asks for private segment buffer (s0-s3), dispatch ptr (s4-s5), kernarg ptr (s6-s7); wg id x in s8.
	if kd.Flags != 0xb || kd.RSRC2>>1&0x1f != 8 || kd.RSRC2>>7&1 != 1 {
		t.Fatalf("unexpected vadd descriptor: flags %#x rsrc2 %#x", kd.Flags, kd.RSRC2)
	}
	const groups, wg = 5, 128
	const n = groups*wg - 37
	a, b := make([]float32, groups*wg), make([]float32, groups*wg)
	for i := range a {
		a[i], b[i] = float32(i)*3, 1/float32(i+1)
	}
	pa, pb, pc := l.put(a), l.put(b), l.put(make([]float32, groups*wg))
	ka := l.put(args(pa, pb, pc, uint32(n)))
	pkt := l.alloc(64)
	var pk [64]byte
	binary.LittleEndian.PutUint16(pk[4:], wg)
	l.mem.Write(pkt, pk[:])
	scratch := l.alloc(1 << 16)
	r := RegParams{PgmAddr: uint64(int64(l.syms["vadd.kd"]) + kd.KernelCodeEntryOffset), RSRC1: kd.RSRC1, RSRC2: kd.RSRC2,
		RSRC3: kd.RSRC3, NumGroups: [3]uint32{groups, 1, 1}, WorkgroupSize: [3]uint16{wg, 1, 1}, ScratchBase: scratch,
		ScratchSize: 1 << 16, Apertures: DefaultApertures}
	r.UserData[0], r.UserData[1] = uint32(scratch), uint32(scratch>>32&0xffff)|1<<31
	r.UserData[2], r.UserData[3] = 0xffffffff, 1<<23|3<<21|4<<15|4<<12
	r.UserData[4], r.UserData[5] = uint32(pkt), uint32(pkt>>32)
	r.UserData[6], r.UserData[7] = uint32(ka), uint32(ka>>32)
	st, err := DispatchRegs(context.Background(), l.mem, r)
	if err != nil {
		t.Fatal(err)
	}
	if st.Groups != groups || st.Waves != groups*wg/64 {
		t.Fatalf("stats %+v", st)
	}
	c := make([]float32, groups*wg)
	l.get(pc, c)
	for i := range c {
		want := float32(0)
		if i < n {
			want = a[i] + b[i]
		}
		if c[i] != want {
			t.Fatalf("c[%d] = %v, want %v", i, c[i], want)
		}
	}
	// Preemption and resume through the register path.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r.StartGroup = 3
	var pe *PreemptedError
	if _, err := DispatchRegs(ctx, l.mem, r); !errors.As(err, &pe) || pe.NextGroup != 3 {
		t.Fatalf("err = %v", err)
	}
}

// TestDispatchRegsState checks the state that comes from registers alone: LDS size from RSRC2.LDS_SIZE, the
// per-lane scratch size from COMPUTE_TMPRING_SIZE.WAVESIZE (scratch wave offset SGPR), work-item ids per
// ENABLE_VGPR_WORKITEM_ID and the group ids.
func TestDispatchRegsState(t *testing.T) {
	m := newMem()
	m.mapRange(0x1000, 0x1000)
	m.mapRange(0x100000, 0x10000)
	// s[0:1] = output; s2 = wg id x, s3 = wg id y, s4 = scratch wave offset.
	// out[((gy*2+gx)*128 + tid)*16] = {v0, s4, LDS round trip of tid}, tid = x + 16*y.
	code := asm(t, `
	s_mul_i32 s5, s3, 2
	s_add_u32 s5, s5, s2
	s_lshl_b32 s5, s5, 11
	v_and_b32 v8, 0x3ff, v0
	v_bfe_u32 v10, v0, 10, 10
	v_lshl_add_u32 v9, v10, 4, v8
	v_lshlrev_b32 v1, 4, v9
	v_add_u32 v1, s5, v1
	v_mov_b32 v2, v0
	v_mov_b32 v3, s4
	v_lshlrev_b32 v5, 2, v9
	v_add_u32 v5, 0x3e00, v5
	ds_write_b32 v5, v9
	s_waitcnt lgkmcnt(0)
	ds_read_b32 v4, v5
	s_waitcnt lgkmcnt(0)
	global_store_dwordx3 v1, v[2:4], s[0:1]
	s_endpgm
`)
	putWords(m, 0x1100, code)
	// LDS_SIZE = 32 (16 KiB), USER_SGPR 2, TGID_X/Y, private segment wave offset, TIDIG_COMP_CNT 1 (x, y).
	rsrc2 := uint32(1 | 2<<1 | 1<<7 | 1<<8 | 1<<11 | 32<<15)
	r := RegParams{PgmAddr: 0x1100, RSRC2: rsrc2, NumGroups: [3]uint32{2, 2, 1}, WorkgroupSize: [3]uint16{16, 8, 1},
		TmpringSize: 3 << 12, ScratchBase: 0x200000, ScratchSize: 1 << 20, Apertures: DefaultApertures}
	r.UserData[0] = 0x100000
	r.UserData[2] = 0xdead // USER_SGPR_COUNT is 2: s2 is the work-group id x
	if _, err := DispatchRegs(context.Background(), m, r); err != nil {
		t.Fatal(err)
	}
	for g := 0; g < 4; g++ {
		for tid := 0; tid < 128; tid++ {
			var b [12]byte
			m.Read(0x100000+uint64(g*2048+tid*16), b[:])
			v0, off, lds := binary.LittleEndian.Uint32(b[:]), binary.LittleEndian.Uint32(b[4:]), binary.LittleEndian.Uint32(b[8:])
			if want := uint32(tid%16 | tid/16<<10); v0 != want {
				t.Fatalf("group %d lane %d: v0 = %#x, want %#x", g, tid, v0, want)
			}
			// 3 KiB per wave (WAVESIZE 3): every wave owns a scratch slot of the queue's scratch
			// (resident work-groups run at once, so slots, not positions in the group, decide).
			if off%3072 != 0 || off+3072 > 1<<20 || lds != uint32(tid) {
				t.Fatalf("group %d lane %d: wave offset %d (not a 3072-byte slot) lds %d", g, tid, off, lds)
			}
			if tid == 64 {
				var b0 [8]byte
				m.Read(0x100000+uint64(g*2048), b0[:])
				if binary.LittleEndian.Uint32(b0[4:]) == off {
					t.Fatalf("group %d: both waves got scratch offset %d", g, off)
				}
			}
		}
	}
	r.TmpringSize = 0x1fff << 12 // more scratch than ScratchSize
	r.ScratchSize = 1 << 10
	if _, err := DispatchRegs(context.Background(), m, r); !errors.Is(err, ErrBadDispatch) {
		t.Fatalf("err = %v, want ErrBadDispatch for scratch", err)
	}
	r.TmpringSize, r.ScratchSize = 0, 0
	r.RSRC2 |= 0x1ff << 15 // 255.5 KiB of LDS
	if _, err := DispatchRegs(context.Background(), m, r); !errors.Is(err, ErrBadDispatch) {
		t.Fatalf("err = %v, want ErrBadDispatch for LDS", err)
	}
	r.RSRC2, r.PgmAddr = rsrc2, 0x1180
	if _, err := DispatchRegs(context.Background(), m, r); !errors.Is(err, ErrBadDispatch) {
		t.Fatalf("err = %v, want ErrBadDispatch for a misaligned program address", err)
	}
}

// buildAmdKernelCode returns a 256-byte amd_kernel_code_t as LLVM's assembler emits for gfx90a (defaults of
// AMDGPUUsage ".amd_kernel_code_t"), with the given entry offset, RSRC1/2 and enable_sgpr_* bits.
func buildAmdKernelCode(entry int64, rsrc1, rsrc2 uint32, flags uint16, priv, lds uint32) []byte {
	b := make([]byte, AmdKernelCodeSize)
	le := binary.LittleEndian
	le.PutUint32(b[0:], 1)  // amd_code_version_major
	le.PutUint32(b[4:], 2)  // amd_code_version_minor
	le.PutUint16(b[8:], 1)  // AMD_MACHINE_KIND_AMDGPU
	le.PutUint16(b[10:], 9) // gfx90a: 9.0.10
	le.PutUint16(b[14:], 10)
	le.PutUint64(b[16:], uint64(entry))
	le.PutUint32(b[48:], rsrc1)
	le.PutUint32(b[52:], rsrc2)
	le.PutUint16(b[56:], flags)
	le.PutUint16(b[58:], 1<<1|1<<3) // private_element_size = 4 bytes, is_ptr64
	le.PutUint32(b[60:], priv)
	le.PutUint32(b[64:], lds)
	b[100], b[101], b[102], b[103] = 4, 4, 4, 6 // alignments 2^4, wavefront_size 2^6
	le.PutUint32(b[104:], 0xffffffff)           // call_convention
	return b
}

// TestAmdKernelCodeV2 wraps corpus kernels in hand-built amd_kernel_code_t headers (code object V2) and
// checks the V2-only grid work-group count SGPRs.
func TestAmdKernelCodeV2(t *testing.T) {
	l := load(t)
	for _, name := range []string{"vadd", "private_array"} {
		var kdb [64]byte
		l.mem.Read(l.syms[name+".kd"], kdb[:])
		kd, _ := ParseKernelDescriptor(kdb[:])
		hdr := l.alloc(AmdKernelCodeSize)
		entry := int64(l.syms[name+".kd"]) + kd.KernelCodeEntryOffset
		l.mem.Write(hdr, buildAmdKernelCode(entry-int64(hdr), kd.RSRC1, kd.RSRC2, kd.Flags, kd.PrivateSegmentFixedSize, kd.GroupSegmentFixedSize))
		l.syms[name+"_v2.kd"] = hdr
	}
	const n = 1000
	a, b := make([]float32, n), make([]float32, n)
	for i := range a {
		a[i], b[i] = float32(i)*0.25, float32(7*i)
	}
	pa, pb, pc := l.put(a), l.put(b), l.put(make([]float32, n))
	l.run(t, "vadd_v2", [3]uint32{n, 1, 1}, [3]uint16{256, 1, 1}, args(pa, pb, pc, uint32(n)))
	c := make([]float32, n)
	l.get(pc, c)
	for i := range c {
		if c[i] != a[i]+b[i] {
			t.Fatalf("vadd_v2[%d] = %v", i, c[i])
		}
	}
	// private_array uses scratch through the private segment buffer V#.
	in := make([]uint32, 70)
	for i := range in {
		in[i] = uint32(i * 977)
	}
	pin, pout := l.put(in), l.put(make([]uint32, len(in)))
	l.run(t, "private_array_v2", [3]uint32{uint32(len(in)), 1, 1}, [3]uint16{64, 1, 1}, args(pin, pout, uint32(len(in))))
	out := make([]uint32, len(in))
	l.get(pout, out)
	for i := range in {
		var arr [200]uint32
		seed := in[i]
		for k := range arr {
			seed = seed*1664525 + 1013904223
			arr[k] = seed
		}
		var acc uint32
		for k := uint32(0); k < 200; k++ {
			acc += arr[(k*37+in[i])%200] ^ k
		}
		if out[i] != acc {
			t.Fatalf("private_array_v2[%d] = %#x, want %#x", i, out[i], acc)
		}
	}

	// Grid work-group counts: kernarg ptr s[0:1], count X s2, count Y s3, wg id x s4.
	m := newMem()
	m.mapRange(0x1000, 0x1000)
	m.mapRange(0x100000, 0x1000)
	code := asm(t, `
	s_load_dwordx2 s[6:7], s[0:1], 0x0
	s_mul_i32 s5, s4, 12
	v_mov_b32 v1, s5
	v_mov_b32 v2, s2
	v_mov_b32 v3, s3
	v_mov_b32 v4, s4
	s_waitcnt lgkmcnt(0)
	global_store_dwordx3 v1, v[2:4], s[6:7]
	s_endpgm
`)
	putWords(m, 0x1100, code)
	m.Write(0x1000, buildAmdKernelCode(0x100, 0, 4<<1|1<<7, 1<<3|1<<7|1<<8, 0, 0))
	m.Write(0x100000, args(uint64(0x100100)))
	_, err := Dispatch(context.Background(), m, DispatchParams{GridSize: [3]uint32{3*64 - 10, 2, 1}, WorkgroupSize: [3]uint16{64, 1, 1},
		KernelObject: 0x1000, KernargAddress: 0x100000, Apertures: DefaultApertures, MaxWaveInstructions: 100})
	if err != nil {
		t.Fatal(err)
	}
	for g := 0; g < 3; g++ {
		var w [3]uint32
		var bb [12]byte
		m.Read(0x100100+uint64(12*g), bb[:])
		binary.Decode(bb[:], binary.LittleEndian, &w)
		if w != [3]uint32{3, 2, uint32(g)} {
			t.Errorf("group %d: count x/y, id = %v, want [3 2 %d]", g, w, g)
		}
	}
	// Malformed V2 headers are rejected.
	for _, tc := range []struct {
		name string
		mod  func(b []byte)
	}{
		{"wave32", func(b []byte) { b[103] = 5 }},
		{"ptr32", func(b []byte) { b[58] &^= 1 << 3 }},
		{"element size", func(b []byte) { b[58] = 3<<1 | 1<<3 }},
		{"gds", func(b []byte) { b[58] |= 1 }},
	} {
		b := buildAmdKernelCode(0x100, 0, 4<<1|1<<7, 1<<3|1<<7|1<<8, 0, 0)
		tc.mod(b)
		m.Write(0x1000, b)
		_, err := Dispatch(context.Background(), m, DispatchParams{GridSize: [3]uint32{64, 1, 1}, WorkgroupSize: [3]uint16{64, 1, 1},
			KernelObject: 0x1000, KernargAddress: 0x100000, Apertures: DefaultApertures, MaxWaveInstructions: 100})
		if !errors.Is(err, ErrBadDispatch) {
			t.Errorf("%s: err = %v, want ErrBadDispatch", tc.name, err)
		}
	}
}

// TestSetreg: s_setreg writes HW_REG_MODE fields that s_getreg reads back.
func TestSetreg(t *testing.T) {
	code := asm(t, `
	s_setreg_imm32_b32 hwreg(HW_REG_MODE, 4, 4), 0xf
	s_getreg_b32 s6, hwreg(HW_REG_MODE, 4, 4)
	s_mov_b32 s7, 3
	s_setreg_b32 hwreg(HW_REG_MODE, 4, 2), s7
	s_getreg_b32 s8, hwreg(HW_REG_MODE, 0, 8)
	v_mov_b32 v1, s6
	v_mov_b32 v2, s8
	v_mov_b32 v3, 0
	global_store_dword v3, v1, s[0:1]
	global_store_dword v3, v2, s[0:1] offset:4
	s_endpgm
`)
	got := runAsmBytes(t, code, 1, 0, 8) // the stores go to the kernarg segment (s[0:1])
	if a, b := binary.LittleEndian.Uint32(got), binary.LittleEndian.Uint32(got[4:]); a != 0xf || b>>4 != 0xf {
		t.Errorf("MODE denorm field after setreg: %#x, mode %#x", a, b)
	}
}

// TestRoundingModes: under each FP_ROUND mode (set with s_setreg, both fields) the mode-dependent
// operations round once in the mode's direction — sums just above/below 1, overflow to infinity or the
// largest finite value, a subnormal product, an inexact integer conversion, an f64->f32 conversion;
// an operation without a directed routine stops the wave. Expected bits worked by hand.
func TestRoundingModes(t *testing.T) {
	const src = `
	s_setreg_imm32_b32 hwreg(HW_REG_MODE, 4, 4), 0xf
	s_setreg_imm32_b32 hwreg(HW_REG_MODE, 0, 4), @ROUND@
	v_mov_b32 v1, 0x30800000
	v_add_f32 v2, 1.0, v1
	v_sub_f32 v3, -1.0, v1
	v_mov_b32 v4, 0x7f7fffff
	v_mul_f32 v4, 2.0, v4
	v_mov_b32 v5, 1
	v_mul_f32 v5, 0.5, v5
	v_bfrev_b32 v6, -2
	v_cvt_f32_i32 v6, v6
	v_mov_b32 v8, 0
	v_mov_b32 v9, 0x3ff00000
	v_mov_b32 v10, 0x10000000
	v_cvt_f32_f64 v7, v[8:9]
	v_add_f64 v[8:9], v[8:9], v[10:11]
	v_fma_f32 v11, 1.0, 1.0, v1
	v_mad_f32 v12, 1.0, 1.0, v1
	s_mov_b64 vcc, 0
	v_div_fmas_f32 v13, 1.0, 1.0, v1
	v_mov_b32 v14, 1.0
	v_mov_b32 v15, 1.0
	v_mov_b32 v16, v1
	v_mov_b32 v17, v1
	v_pk_add_f32 v[14:15], v[14:15], v[16:17]
	v_mov_b32 v20, 0x1234
	v_mov_b32 v21, 0x3c00
	v_mov_b32 v23, 0x400
	v_fma_f16 v20, v21, v21, v23 op_sel:[0,0,0,1]
	v_add_f16 v24, v21, v23
	v_mov_b32 v25, 0x3f800008
	v_cvt_f16_f32 v25, v25
	v_mul_legacy_f32 v28, 1.0, v1
	v_mov_b32 v26, 0x3c003c00
	v_mov_b32 v27, 0x04000400
	v_pk_add_f16 v26, v26, v27
	v_mov_b32 v0, 0
	global_store_dwordx4 v0, v[2:5], s[0:1]
	global_store_dwordx4 v0, v[6:9], s[0:1] offset:16
	global_store_dword v0, v11, s[0:1] offset:32
	global_store_dwordx4 v0, v[12:15], s[0:1] offset:36
	global_store_dword v0, v20, s[0:1] offset:52
	global_store_dwordx2 v0, v[24:25], s[0:1] offset:56
	global_store_dword v0, v26, s[0:1] offset:64
	s_endpgm
`
	// v1 = 2^-30. v[8:9] = 1.0 (f64), v[10:11] = 2^-510 as an f64 (hi word 0x10000000, lo 0) — then v11
	// is overwritten by the fma after the f64 add has read it.
	want := [4][17]uint32{
		// v2 1+2^-30, v3 -1-2^-30, v4 2·max, v5 2^-149·0.5, v6 f32(2^31-1), v7 f32(1.0 f64), v8:v9 1+2^-510,
		// v11 fma, v12 mad, v13 div_fmas (VCC 0: an fma), v14:v15 packed add (1+2^-30 in both halves),
		// v20 f16 fma 1·1+2^-14 into the high half (op_sel[3]; low half 0x1234 kept), v24 f16 1+2^-14,
		// v25 f16(f32 1+2^-20), v26 packed f16 1+2^-14 in both halves
		{0x3f800000, 0xbf800000, 0x7f800000, 0, 0x4f000000, 0x3f800000, 0, 0x3ff00000, 0x3f800000, 0x3f800000, 0x3f800000, 0x3f800000, 0x3f800000, 0x3c001234, 0x3c00, 0x3c00, 0x3c003c00},
		{0x3f800001, 0xbf800000, 0x7f800000, 1, 0x4f000000, 0x3f800000, 1, 0x3ff00000, 0x3f800001, 0x3f800001, 0x3f800001, 0x3f800001, 0x3f800001, 0x3c011234, 0x3c01, 0x3c01, 0x3c013c01},
		{0x3f800000, 0xbf800001, 0x7f7fffff, 0, 0x4effffff, 0x3f800000, 0, 0x3ff00000, 0x3f800000, 0x3f800000, 0x3f800000, 0x3f800000, 0x3f800000, 0x3c001234, 0x3c00, 0x3c00, 0x3c003c00},
		{0x3f800000, 0xbf800000, 0x7f7fffff, 0, 0x4effffff, 0x3f800000, 0, 0x3ff00000, 0x3f800000, 0x3f800000, 0x3f800000, 0x3f800000, 0x3f800000, 0x3c001234, 0x3c00, 0x3c00, 0x3c003c00},
	}
	for mode := 0; mode < 4; mode++ {
		code := asm(t, strings.Replace(src, "@ROUND@", strconv.Itoa(mode|mode<<2), 1))
		m, _, err := runAsm(t, code, 1, 0, nil)
		if err != nil {
			t.Fatalf("mode %d: %v", mode, err)
		}
		got := make([]byte, 68)
		m.Read(asmOut, got)
		for i, w := range want[mode] {
			if g := binary.LittleEndian.Uint32(got[4*i:]); g != w {
				t.Errorf("mode %d, result %d: %#08x, want %#08x", mode, i, g, w)
			}
		}
	}
	bad := asm(t, "s_setreg_imm32_b32 hwreg(HW_REG_MODE, 0, 4), 1\nv_dot2_f32_f16 v1, v2, v3, v4\ns_endpgm\n")
	m2, p2 := miniKernel(t, bad)
	if _, err := Dispatch(context.Background(), m2, p2); !errors.Is(err, ErrUnimplemented) {
		t.Errorf("v_dot2_f32_f16 toward +inf: %v, want ErrUnimplemented", err)
	}
}

// TestDenormModes: FLOAT_DENORM_MODE_32 from the descriptor is the MODE register's single-precision
// denormal field: 0 flushes denormal inputs and results to signed zero, 3 keeps both.
func TestDenormModes(t *testing.T) {
	code := asm(t, `
	v_mov_b32 v1, 0x80400000
	v_mul_f32 v2, 1.0, v1
	v_mov_b32 v4, 0x00800000
	v_mul_f32 v3, 0.5, v4
	v_mov_b32 v5, 0
	global_store_dword v5, v2, s[0:1]
	global_store_dword v5, v3, s[0:1] offset:4
	s_endpgm
`)
	for _, tc := range []struct {
		mode         uint32
		want2, want3 uint32
	}{{0, 0x80000000, 0}, {3, 0x80400000, 0x00400000}, {1, 0x80000000, 0}, {2, 0x80000000, 0x00400000}} {
		m, _, err := runAsm(t, code, 1, 0, func(m *flatMem, _ *DispatchParams) {
			var rsrc1 [4]byte
			binary.LittleEndian.PutUint32(rsrc1[:], tc.mode<<16) // FLOAT_DENORM_MODE_32
			m.Write(0x1000+48, rsrc1[:])
		})
		if err != nil {
			t.Fatal(err)
		}
		got := make([]byte, 8)
		m.Read(asmOut, got)
		if a, b := binary.LittleEndian.Uint32(got), binary.LittleEndian.Uint32(got[4:]); a != tc.want2 || b != tc.want3 {
			t.Errorf("denorm mode %d: input-denormal product %#x (want %#x), denormal result %#x (want %#x)", tc.mode, a, tc.want2, b, tc.want3)
		}
	}
}

// TestPermB32: v_perm_b32 byte selectors, worked by hand from the GFX9 ISA's pseudo-code.
func TestPermB32(t *testing.T) {
	const s0, s1 = 0x11223344, 0x8899AABB
	for _, tc := range []struct{ sel, want uint32 }{
		{0x07000400, 0x11BB44BB}, // plain bytes of {S0, S1}
		{0x0c0d0809, 0x00ffffff}, // sign of byte 3 and 1 of S1 (both set), 0xff, 0x00
		{0x0a0b0a0b, 0},          // signs of bytes 5 and 7 (S0's, clear)
		{0x03020100, s1}, {0x07060504, s0},
	} {
		if got := permB32(s0, s1, tc.sel); got != tc.want {
			t.Errorf("v_perm_b32 sel %#08x = %#08x, want %#08x", tc.sel, got, tc.want)
		}
	}
}

// TestAccVGPR: v_accvgpr_write/read/mov, an MFMA with both sources in AGPRs (the acc bits) and an inline
// constant for C, a store straight from AGPRs; an f64 MFMA with blgp (gfx940's negation) stops the wave.
func TestAccVGPR(t *testing.T) {
	code := asm(t, `
	v_mov_b32 v1, 2.0
	v_accvgpr_write_b32 a1, v1
	v_accvgpr_write_b32 a2, 4.0
	v_accvgpr_mov_b32 a3, a2
	v_mfma_f32_4x4x1f32 a[4:7], a1, a3, 1.0
	v_accvgpr_read_b32 v2, a5
	v_accvgpr_write_b32 a5, v2
	v_lshlrev_b32 v6, 4, v0
	global_store_dwordx4 v6, a[4:7], s[0:1]
	s_endpgm
`)
	got := runAsmBytes(t, code, 64, 0, 1024)
	for i := 0; i < 256; i++ {
		if v := math.Float32frombits(binary.LittleEndian.Uint32(got[4*i:])); v != 9 {
			t.Fatalf("lane %d D[%d] = %v, want 1 + 2·4 = 9", i/4, i%4, v)
		}
	}

	bad := asm(t, "v_mfma_f64_4x4x4f64 v[0:1], v[2:3], v[4:5], 0 blgp:1\ns_endpgm\n")
	m2, p2 := miniKernel(t, bad)
	if _, err := Dispatch(context.Background(), m2, p2); !errors.Is(err, ErrUnimplemented) {
		t.Errorf("f64 MFMA with blgp: %v, want ErrUnimplemented", err)
	}
}
