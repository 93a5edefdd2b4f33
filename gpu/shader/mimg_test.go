package shader

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"os/exec"
	"sort"
	"strings"
	"testing"
)

// TestMIMGDisasmAgainstLLVM decodes random MIMG encodings of every gfx90a image opcode (random DMASK,
// modifiers, registers, AGPR data) and compares our text with llvm-mc-14 --disassemble (the MC
// disassembler llvm-objdump-14 uses) on the same bytes.
func TestMIMGDisasmAgainstLLVM(t *testing.T) {
	if _, err := exec.LookPath("llvm-mc-14"); err != nil {
		t.Skip("skipping: llvm-mc-14 not installed (Debian package from scripts/install-deps.sh)")
	}
	rng := rand.New(rand.NewSource(1))
	var ops []uint16
	for op := range tabMIMG {
		ops = append(ops, op)
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i] < ops[j] })
	var words [][2]uint32
	var ours []string
	// The encoding of the failing ROCr blit instruction first.
	cand := [][2]uint32{{0xf0205f00, 0x00020004}}
	for _, op := range ops {
		for i := 0; i < 16; i++ {
			w0 := uint32(0x3c)<<26 | uint32(op)<<18 | rng.Uint32()&(1<<25|1<<17|1<<16|1<<15|1<<14|1<<13|1<<12|0xf<<8)
			w1 := uint32(rng.Intn(24)) << 16 // s[0:7] .. s[92:99]
			if tabMIMG[op].Name == "image_sample" {
				w1 |= uint32(rng.Intn(25)) << 21
			}
			w1 |= uint32(rng.Intn(200))<<8 | uint32(rng.Intn(250)) | rng.Uint32()&(1<<31)
			cand = append(cand, [2]uint32{w0, w1})
		}
	}
	for _, c := range cand {
		in, err := Decode([]uint32{c[0], c[1]})
		if err != nil {
			continue // an invalid DMASK/D16 pair (mimgVData 0)
		}
		words = append(words, c)
		ours = append(ours, in.String())
	}
	if len(words) < 150 {
		t.Fatalf("only %d decodable samples", len(words))
	}
	var input strings.Builder
	for _, w := range words {
		for _, x := range w {
			fmt.Fprintf(&input, "0x%02x 0x%02x 0x%02x 0x%02x ", x&0xff, x>>8&0xff, x>>16&0xff, x>>24)
		}
		input.WriteString("\n")
	}
	cmd := exec.Command("llvm-mc-14", "--disassemble", "-arch=amdgcn", "-mcpu=gfx90a")
	cmd.Stdin = strings.NewReader(input.String())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("llvm-mc-14: %v\n%s", err, out)
	}
	var theirs []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "\t") && strings.TrimSpace(l) != ".text" {
			theirs = append(theirs, strings.Join(strings.Fields(l), " "))
		}
		if strings.Contains(l, "warning") {
			t.Errorf("llvm-mc-14 rejects an encoding we accept: %s", l)
		}
	}
	if len(theirs) != len(ours) {
		t.Fatalf("llvm-mc printed %d instructions for %d", len(theirs), len(ours))
	}
	for i := range ours {
		if ours[i] != theirs[i] {
			t.Errorf("%08x %08x: llvm %q, ours %q", words[i][0], words[i][1], theirs[i], ours[i])
		}
	}
	if ours[0] != "image_store v[0:3], v4, s[8:15] dmask:0xf unorm da" {
		t.Errorf("issue encoding: %q", ours[0])
	}
}

// TestImageInstructions runs image instructions on one lane over hand-built T#/S# descriptors (GFX9
// layout, imagedesc.go) on a small image at asmBuf; every expected value is worked out in the
// comments, not by the implementation.
func TestImageInstructions(t *testing.T) {
	// 4 x 2 texels, pitch 8 texels, 2D, DST_SEL X,0,0,1 (a one-channel format as ROCr sets it) or XYZW.
	const selR, selXYZW = 4 | 0<<3 | 0<<6 | 1<<9, 4 | 5<<3 | 6<<6 | 7<<9
	tsharp := func(dfmt, nfmt, sel uint32) [8]uint32 {
		return [8]uint32{asmBuf >> 8, dfmt<<20 | nfmt<<26, 3 | 1<<14, sel | imgType2D<<28, 7 << 13}
	}
	ssharp := func(clamp, filter, unnorm uint32) [4]uint32 {
		return [4]uint32{clamp | clamp<<3 | clamp<<6 | unnorm<<15, 0xfff << 12, filter<<20 | filter<<22, 0}
	}
	f := func(x float32) uint32 { return math.Float32bits(x) }
	// The float image: texel (x, y) = 10*x + 100*y at byte (8*y + x)*4.
	floatImg := make([]byte, 64)
	for y := 0; y < 2; y++ {
		for x := 0; x < 4; x++ {
			binary.LittleEndian.PutUint32(floatImg[(8*y+x)*4:], f(float32(10*x+100*y)))
		}
	}
	for _, c := range []struct {
		name    string
		t       [8]uint32
		s       [4]uint32
		mem     []byte
		pre     [6]uint32 // v0-v3 (data), v4-v5 (address)
		inst    string
		want    []uint32
		wantMem map[int]byte // offset from asmBuf -> byte
		wantErr string
	}{
		// texel (3, 1) = 130.0; channels (x, 0, 0, 1.0)
		{name: "load float", t: tsharp(4, nfFloat, selR), mem: floatImg, pre: [6]uint32{0, 0, 0, 0, 3, 1},
			inst: "image_load v[0:3], v[4:5], s[8:15] dmask:0xf unorm", want: []uint32{f(130), 0, 0, f(1)}},
		// dmask 0x9 writes x then w to v0, v1; v2, v3 keep their values
		{name: "load dmask", t: tsharp(4, nfFloat, selR), mem: floatImg, pre: [6]uint32{7, 7, 7, 7, 2, 0},
			inst: "image_load v[0:1], v[4:5], s[8:15] dmask:0x9 unorm", want: []uint32{f(20), f(1), 7, 7}},
		// x = 4 >= WIDTH: zeros
		{name: "load out of range", t: tsharp(4, nfFloat, selR), mem: floatImg, pre: [6]uint32{7, 7, 7, 7, 4, 0},
			inst: "image_load v[0:3], v[4:5], s[8:15] dmask:0xf unorm", want: []uint32{0, 0, 0, 0}},
		// 8_8_8_8 UNORM at (1, 1), byte 36: 1.0 -> 255, 0.5 -> rne(127.5) = 128, -1 -> 0, 0.2 -> 51
		{name: "store unorm8x4", t: tsharp(10, nfUnorm, selXYZW), pre: [6]uint32{f(1), f(0.5), f(-1), f(0.2), 1, 1},
			inst: "image_store v[0:3], v[4:5], s[8:15] dmask:0xf unorm", wantMem: map[int]byte{36: 255, 37: 128, 38: 0, 39: 51, 40: 0xaa, 35: 0xaa}},
		// d16 load of 8_8_8_8 UNORM bytes (0, 255, 128, 51) as binary16: 0, 0x3c00, 128/255 = 0x3804, 51/255 = 0.2 = 0x3266
		{name: "load d16", t: tsharp(10, nfUnorm, selXYZW), mem: []byte{0, 255, 128, 51}, pre: [6]uint32{7, 7, 7, 7, 0, 0},
			inst: "image_load v[0:1], v[4:5], s[8:15] dmask:0xf unorm d16", want: []uint32{0x3c000000, 0x32663804, 7, 7}},
		// bilinear, unnormalized (1.75, 0.5): u-0.5 = 1.25 -> texels 1, 2 weights 0.75, 0.25; v-0.5 = 0 -> row 0
		// only: 0.75*10 + 0.25*20 = 12.5
		{name: "sample bilinear", t: tsharp(4, nfFloat, selR), s: ssharp(texClampLastTexel, 1, 1), mem: floatImg,
			pre: [6]uint32{0, 0, 0, 0, f(1.75), f(0.5)}, inst: "image_sample v[0:3], v[4:5], s[8:15], s[16:19] dmask:0xf",
			want: []uint32{f(12.5), 0, 0, f(1)}},
		// bilinear at the corner (0, 0) normalized: u-0.5 = -0.5 -> texels -1 (clamped to 0) and 0: 0; v
		// likewise: texel (0,0) = 0. At (1.0, 1.0) normalized = (4, 2): texels 3 (x2, clamped) and row 1: 130
		{name: "sample clamp edge", t: tsharp(4, nfFloat, selR), s: ssharp(texClampLastTexel, 1, 0), mem: floatImg,
			pre: [6]uint32{0, 0, 0, 0, f(1), f(1)}, inst: "image_sample v0, v[4:5], s[8:15], s[16:19] dmask:0x1",
			want: []uint32{f(130)}},
		// point, normalized, wrap: s = -0.125 -> u = -0.5 -> floor -1 -> texel 3; t = 0.75 -> v = 1.5 -> row 1: 130
		{name: "sample wrap", t: tsharp(4, nfFloat, selR), s: ssharp(texWrap, 0, 0), mem: floatImg,
			pre: [6]uint32{0, 0, 0, 0, f(-0.125), f(0.75)}, inst: "image_sample v0, v[4:5], s[8:15], s[16:19] dmask:0x1",
			want: []uint32{f(130)}},
		// point, normalized, mirror: s = 1.125 -> u = 4.5 -> texel 4 mirrored = 3; t = -0.25 -> v = -0.5 -> -1 -> 0: 30
		{name: "sample mirror", t: tsharp(4, nfFloat, selR), s: ssharp(texMirror, 0, 0), mem: floatImg,
			pre: [6]uint32{0, 0, 0, 0, f(1.125), f(-0.25)}, inst: "image_sample v0, v[4:5], s[8:15], s[16:19] dmask:0x1",
			want: []uint32{f(30)}},
		// clamp to border (transparent black) outside, the texel inside; bilinear half-way to the border:
		// u = 4.0 -> u-0.5 = 3.5: texel 3 (30) and border 0, weights 0.5: 15 (row 0, v = 0.5)
		{name: "sample border", t: tsharp(4, nfFloat, selR), s: ssharp(texClampBorder, 1, 1), mem: floatImg,
			pre: [6]uint32{0, 0, 0, 0, f(4), f(0.5)}, inst: "image_sample v0, v[4:5], s[8:15], s[16:19] dmask:0x1",
			want: []uint32{f(15)}},
		// 32-bit UINT atomics: add returns the old value (glc); texel (2, 0) holds 20.0's bits 0x41a00000
		{name: "atomic add", t: tsharp(4, nfUint, selR), mem: floatImg, pre: [6]uint32{5, 0, 0, 0, 2, 0},
			inst: "image_atomic_add v0, v[4:5], s[8:15] dmask:0x1 unorm glc", want: []uint32{0x41a00000},
			wantMem: map[int]byte{8: 0x05, 9: 0, 10: 0xa0, 11: 0x41}},
		// cmpswap: (src 9, cmp 0) on texel (0, 0) = 0: swapped, returns 0
		{name: "atomic cmpswap", t: tsharp(4, nfUint, selR), mem: floatImg, pre: [6]uint32{9, 0, 0, 0, 0, 0},
			inst: "image_atomic_cmpswap v[0:1], v[4:5], s[8:15] dmask:0x3 unorm glc", want: []uint32{0},
			wantMem: map[int]byte{0: 9}},
		// resinfo at level 0: WIDTH 4, HEIGHT 2, depth 1, 1 level
		{name: "resinfo", t: tsharp(4, nfFloat, selR), pre: [6]uint32{0, 0, 0, 0, 0, 0},
			inst: "image_get_resinfo v[0:3], v4, s[8:15] dmask:0xf unorm", want: []uint32{4, 2, 1, 1}},
		{name: "mip chain", t: func() [8]uint32 { d := tsharp(4, nfFloat, selR); d[3] |= 2 << 16; return d }(),
			inst: "image_load v[0:3], v[4:5], s[8:15] dmask:0xf unorm", wantErr: "mip levels"},
		{name: "aniso", t: tsharp(4, nfFloat, selR), s: [4]uint32{1 << 9, 0, 0, 0},
			inst: "image_sample v0, v[4:5], s[8:15], s[16:19] dmask:0x1", wantErr: "anisotropic"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b strings.Builder
			for i, d := range c.t {
				fmt.Fprintf(&b, "s_mov_b32 s%d, 0x%x\n", 8+i, d)
			}
			for i, d := range c.s {
				fmt.Fprintf(&b, "s_mov_b32 s%d, 0x%x\n", 16+i, d)
			}
			for i, d := range c.pre {
				fmt.Fprintf(&b, "v_mov_b32 v%d, 0x%x\n", i, d)
			}
			fmt.Fprintf(&b, "v_mov_b32 v6, 0\n%s\ns_waitcnt vmcnt(0)\nglobal_store_dwordx4 v6, v[0:3], s[0:1]\ns_endpgm\n", c.inst)
			var m *flatMem
			out, _, err := runRare(t, b.String(), 1, 0, func(mm *flatMem, _ *DispatchParams) {
				m = mm
				fill := make([]byte, 128)
				for i := range fill {
					fill[i] = 0xaa
				}
				mm.Write(rareBuf, fill)
				mm.Write(rareBuf, c.mem)
			})
			if c.wantErr != "" {
				if !errors.Is(err, ErrUnimplemented) || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want ErrUnimplemented with %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for i, v := range c.want {
				if out[i] != v {
					t.Errorf("v%d = %#x, want %#x", i, out[i], v)
				}
			}
			for off, v := range c.wantMem {
				var got [1]byte
				m.Read(rareBuf+uint64(off), got[:])
				if got[0] != v {
					t.Errorf("image byte %d = %#x, want %#x", off, got[0], v)
				}
			}
		})
	}
}

// TestImageDescriptorDecode: the T# and S# fields at their GFX9 positions (a T# as ROCr's
// PopulateImageSrd builds it for a 2D 45 x 7 SINT32 image with a 64-texel pitch, SW_MODE 22).
func TestImageDescriptorDecode(t *testing.T) {
	// the T# the surface test's kernel received (kfdemu log), base 0x7fb9255000 00
	r := decodeImageRsrc([8]uint32{0xb9255000, 0x1440007f, 0x1802c, 0x91600204, 0x2007e000, 0, 0, 0})
	want := imageRsrc{base: 0x7fb925500000, dfmt: 4, nfmt: 5, width: 45, height: 7, sel: [4]uint32{4, 0, 0, 1},
		swMode: 22, typ: imgType2D, depth: 0, pitch: 64}
	if r != want {
		t.Errorf("T# = %+v\nwant %+v", r, want)
	}
	// ROCr PopulateSamplerSrd: CLAMP_X/Y/Z = CLAMP_BORDER (6), FORCE_UNNORMALIZED, MAX_LOD 4095,
	// XY_MAG/MIN_FILTER = BILINEAR, BORDER_COLOR_TYPE = TRANS_BLACK
	s := decodeSampler([4]uint32{6 | 6<<3 | 6<<6 | 1<<15, 4095 << 12, 1<<20 | 1<<22, 0})
	ws := samplerState{clamp: [3]uint32{6, 6, 6}, unnormalized: true, magFilter: 1, minFilter: 1}
	if s != ws {
		t.Errorf("S# = %+v\nwant %+v", s, ws)
	}
}

// TestMIMGUnimplementedOpcodes: every MIMG opcode of gfx90a has a routine but the _pck forms (raw
// texel bits without conversion; not emitted by clang for HIP, not used by the runtime's blit
// kernels).
func TestMIMGUnimplementedOpcodes(t *testing.T) {
	var got []string
	for op, info := range tabMIMG {
		info := info
		if in := (Inst{Fmt: FmtMIMG, Op: op, Info: &info}); resolve(&in) == nil {
			got = append(got, info.Name)
		}
	}
	sort.Strings(got)
	want := "image_load_mip_pck image_load_mip_pck_sgn image_load_pck image_load_pck_sgn image_store_mip_pck image_store_pck"
	if strings.Join(got, " ") != want {
		t.Errorf("unimplemented MIMG opcodes: %v, want %s", got, want)
	}
}
