package shader

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
)

// Matrix fused multiply-add (VOP3P-MAI, gfx90a). Each block b of an instruction computes
// D_b = A_b·B_b + C_b over the whole wave. The lane and register of every matrix element follow AMD's
// Matrix Instruction Calculator (ROCm/amd_matrix_instruction_calculator, InstCalcGfx9, CDNA2 table):
//
//	A[i][k], B[k][j] of block b: G = 64/(M·blocks), KL = K/G; element slot k%KL of the operand
//	  (slot s = dword s, or half s%2 of dword s/2, or byte s%4 of dword s/4, or the dword pair for f64),
//	  lane i (or j) + M·b + M·blocks·(k/KL).
//	C/D[i][j] of block b: H = 4 (32-bit) or 1 (f64), MR = 64/N, BPR = ceil(64H/(M·N));
//	  slot b·(M·N/64) + (i/(H·MR))·H + i%H, lane (b%BPR)·N + ((i/H)%MR)·BPR·N + j.
//
// CBSZ/ABID broadcast A of block ⌊b/2^CBSZ⌋·2^CBSZ + ABID to the blocks of each group; BLGP remaps the
// lane B is read from. On gfx90a the f64 forms have neither (the calculator marks them unsupported;
// negation through BLGP is gfx940's), so non-zero fields there stop the wave as unimplemented.
//
// Decisions where the ISA does not pin the behaviour down: the whole wave takes part whatever EXEC
// holds (the matrix is spread over all 64 lanes; gem5's gfx90a model does the same, and LLVM only emits
// MFMA with a full EXEC); f32 results are C + ΣA·B summed in float64 (exact for f16/bf16 products) and rounded once to f32 (the hardware's
// internal accumulation order and rounding are not documented); f64 results accumulate with fused
// multiply-adds in k order; i8 products are signed and summed in 32-bit two's complement.
type mfmaOp struct {
	m, n, k, blocks int
	in              byte // 'f' f32, 'h' f16, 'b' bf16, 'i' i8, 'd' f64
	out             byte // 'f' f32, 'i' i32, 'd' f64
	inBits          int
	aRegs, cRegs    int
	kl              int // k values per lane
	h, mr, bpr      int // output multirow height, multirows per register, blocks per register
}

var mfmaName = regexp.MustCompile(`^v_mfma_(f32|i32|f64)_(\d+)x(\d+)x(\d+)(f32|f16|bf16|i8|f64)(_1k)?$`)

// newMFMA derives an instruction's shape from its mnemonic and the operand widths of its template.
func newMFMA(info *opInfo) (*mfmaOp, error) {
	p := mfmaName.FindStringSubmatch(info.Name)
	if p == nil {
		return nil, fmt.Errorf("shader: %s is not an MFMA mnemonic", info.Name)
	}
	op := &mfmaOp{}
	op.m, _ = strconv.Atoi(p[2])
	op.n, _ = strconv.Atoi(p[3])
	op.k, _ = strconv.Atoi(p[4])
	op.out = map[string]byte{"f32": 'f', "i32": 'i', "f64": 'd'}[p[1]]
	switch p[5] {
	case "f32":
		op.in, op.inBits = 'f', 32
	case "f16":
		op.in, op.inBits = 'h', 16
	case "bf16":
		op.in, op.inBits = 'b', 16
	case "i8":
		op.in, op.inBits = 'i', 8
	case "f64":
		op.in, op.inBits = 'd', 64
	}
	for _, t := range info.Ops {
		switch {
		case t.Lit != "":
		case t.F == fSrc0:
			op.aRegs = int(t.W)
		case t.F == fDst:
			op.cRegs = int(t.W)
		}
	}
	op.blocks = op.aRegs * 2048 / (op.m * op.k * op.inBits)
	if op.blocks == 0 || 64%(op.m*op.blocks) != 0 {
		return nil, fmt.Errorf("shader: %s: inconsistent shape", info.Name)
	}
	g := 64 / (op.m * op.blocks)
	op.kl = op.k / g
	op.h = 4
	if op.out == 'd' {
		op.h = 1
	}
	op.mr = 64 / op.n
	op.bpr = (64*op.h + op.m*op.n - 1) / (op.m * op.n)
	outBits := 32
	if op.out == 'd' {
		outBits = 64
	}
	if want := op.m * op.n * op.blocks * outBits / 2048; want != op.cRegs {
		return nil, fmt.Errorf("shader: %s: %d result registers, shape needs %d", info.Name, op.cRegs, want)
	}
	return op, nil
}

func mfmaOps() {
	for _, info := range tabVOP3P {
		if !mfmaName.MatchString(info.Name) {
			continue
		}
		info := info
		op, err := newMFMA(&info)
		if err != nil {
			panic(err) // the generated table and this file disagree: a build-time bug
		}
		def(info.Op, op.exec)
	}
}

// inLane is the lane holding input row r (i of A, j of B), k of block b.
func (op *mfmaOp) inLane(r, k, b int) int {
	return r + op.m*b + op.m*op.blocks*(k/op.kl)
}

// outPos is the slot (register, or register pair for f64) and lane of C/D[i][j] of block b.
func (op *mfmaOp) outPos(i, j, b int) (slot, lane int) {
	slot = b*(op.m*op.n/64) + (i/(op.h*op.mr))*op.h + i%op.h
	lane = (b%op.bpr)*op.n + ((i/op.h)%op.mr)*op.bpr*op.n + j
	return
}

func blgpLane(blgp uint8, l int) int {
	switch {
	case blgp == 1:
		return l % 32
	case blgp == 2:
		return 32 + l%32
	case blgp == 3:
		return (l + 16) % 64
	case blgp >= 4:
		return 16*int(blgp-4) + l%16
	}
	return l
}

// mfmaRegs returns the registers of an A or B operand (at most two dwords per lane).
func (w *wave) mfmaRegs(code uint16, n int) ([2]*[lanes]uint32, error) {
	var r [2]*[lanes]uint32
	if code < opVGPR0 {
		return r, fmt.Errorf("%w: MFMA A/B operand %s must be a register", ErrIllegal, regName(code, n))
	}
	for i := 0; i < n; i++ {
		if !w.fit(int(code-opVGPR0) + i + 1) {
			return r, fmt.Errorf("%w: register %s beyond the allocation", ErrIllegal, regName(code, n))
		}
		r[i] = &w.v[int(code-opVGPR0)+i]
	}
	return r, nil
}

// elem reads input element slot s of lane l as float64 (or the signed integer for i8).
func (op *mfmaOp) elem(r [2]*[lanes]uint32, s, l int) float64 {
	switch op.in {
	case 'f':
		return float64(f32(r[s][l]))
	case 'h':
		return float64(f16to32(uint16(r[s/2][l] >> (16 * (s % 2)))))
	case 'b':
		return float64(f32(r[s/2][l] >> (16 * (s % 2)) << 16))
	case 'i':
		return float64(int8(r[s/4][l] >> (8 * (s % 4))))
	}
	return f64(uint64(r[0][l]) | uint64(r[1][l])<<32)
}

func (op *mfmaOp) exec(w *wave, in *Inst) error {
	if op.in == 'd' && (in.CBSZ|in.ABID|in.BLGP) != 0 {
		return fmt.Errorf("%w: cbsz/abid/blgp on an f64 MFMA (gfx940 negation, undefined on gfx90a)", ErrUnimplemented)
	}
	maxCBSZ := 0
	for 1<<(maxCBSZ+1) <= op.blocks && maxCBSZ < 4 {
		maxCBSZ++
	}
	if int(in.CBSZ) > maxCBSZ || int(in.ABID) >= 1<<in.CBSZ {
		return fmt.Errorf("%w: cbsz:%d abid:%d with %d blocks", ErrIllegal, in.CBSZ, in.ABID, op.blocks)
	}
	a, err := w.mfmaRegs(in.Opnd[fSrc0], op.aRegs)
	if err != nil {
		return err
	}
	b, err := w.mfmaRegs(in.Opnd[fSrc1], op.aRegs)
	if err != nil {
		return err
	}
	// C: registers, or one constant for every element.
	var c [32]*[lanes]uint32
	var cConst uint64
	cCode := in.Opnd[fSrc2]
	if cCode >= opVGPR0 {
		if !w.fit(int(cCode-opVGPR0) + op.cRegs) {
			return fmt.Errorf("%w: register %s beyond the allocation", ErrIllegal, regName(cCode, op.cRegs))
		}
		for i := 0; i < op.cRegs; i++ {
			c[i] = &w.v[int(cCode-opVGPR0)+i]
		}
	} else {
		kind := k32
		if op.out == 'd' {
			kind = k64f
		}
		if cConst, err = w.scalar(in, cCode, kind); err != nil {
			return err
		}
	}
	dCode := in.Opnd[fDst]
	if dCode < opVGPR0 || !w.fit(int(dCode-opVGPR0)+op.cRegs) {
		return fmt.Errorf("%w: destination %s", ErrIllegal, regName(dCode, op.cRegs))
	}
	var d [32][lanes]uint32 // results, written back after every C element was read
	group := 1 << in.CBSZ
	for blk := 0; blk < op.blocks; blk++ {
		ablk := blk/group*group + int(in.ABID)
		for i := 0; i < op.m; i++ {
			for j := 0; j < op.n; j++ {
				s, l := op.outPos(i, j, blk)
				switch op.out {
				case 'i':
					acc := int32(cConst)
					if c[0] != nil {
						acc = int32(c[s][l])
					}
					for k := 0; k < op.k; k++ {
						x := int32(op.elem(a, k%op.kl, op.inLane(i, k, ablk)))
						y := int32(op.elem(b, k%op.kl, blgpLane(in.BLGP, op.inLane(j, k, blk))))
						acc += x * y
					}
					d[s][l] = uint32(acc)
				case 'f':
					acc := float64(f32(uint32(cConst)))
					if c[0] != nil {
						acc = float64(f32(c[s][l]))
					}
					for k := 0; k < op.k; k++ {
						x := op.elem(a, k%op.kl, op.inLane(i, k, ablk))
						y := op.elem(b, k%op.kl, blgpLane(in.BLGP, op.inLane(j, k, blk)))
						acc += x * y // exact for f16/bf16/f32 products; see the type comment
					}
					d[s][l] = u32(float32(acc))
				case 'd':
					acc := f64(cConst)
					if c[0] != nil {
						acc = f64(uint64(c[2*s][l]) | uint64(c[2*s+1][l])<<32)
					}
					for k := 0; k < op.k; k++ {
						x := op.elem(a, 0, op.inLane(i, k, ablk))
						y := op.elem(b, 0, op.inLane(j, k, blk))
						acc = math.FMA(x, y, acc)
					}
					v := u64(acc)
					d[2*s][l], d[2*s+1][l] = uint32(v), uint32(v>>32)
				}
			}
		}
	}
	base := int(dCode - opVGPR0)
	for r := 0; r < op.cRegs; r++ {
		w.v[base+r] = d[r]
	}
	return nil
}
