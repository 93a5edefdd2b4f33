package shader

import (
	"fmt"
	"math/big"
)

// execFn is an instruction's interpreter routine. It reports what stops the wave as an error value
// (WaveError, Fault, TrapError are built from it in step); routines do not panic.
type execFn func(w *wave, in *Inst) error

// opRec is what the interpreter knows of one Op: its routine and the rules that modify it. The
// encoding tables (optab_gen.go) give each opcode its Op; Decode's caller binds the record to the
// Inst once (Inst.exec, Inst.notF32; workgroup.go fetch), so execution looks nothing up by name.
type opRec struct {
	// exec is the routine, wrapped at init by its rounding rule (withRounding); nil: unimplemented
	// (the wave stops with ErrUnimplemented). near is the routine unwrapped, which exec runs when
	// MODE&rmask (the FP_ROUND field it obeys) is 0, round to nearest even; rmask is 0 when exec is
	// not wrapped (near is then exec).
	exec  execFn
	near  execFn
	rmask uint32
	// round is the FP_ROUND field the operation obeys (round.go); directed builds its routine for a
	// directed mode, h16dir the directed function of a binary16 operation of valu16.go, applied through h16.
	round    roundRule
	directed func(m big.RoundingMode) execFn
	h16dir   func(m big.RoundingMode) func(x *h16ctx, a, b, c uint32) uint32
	// h16 is a 16-bit operation's spec (valu16.go): operand halves, the destination high-half rule,
	// op_sel, DPP/SDWA.
	h16 *h16spec
	// notF32: a 32-bit operation with f32 sources whose result is not an f32 (conversions to
	// integers or f16, frexp_exp), which the single-precision denormal mode leaves alone.
	notF32 bool
	// v32: exec is a v32k routine (unwrapped: near) and this its operation (turn's v32own).
	v32 *v32spec
}

// opTab holds the record of every Op, filled at init by the units' tables below.
var opTab [NumOps]opRec

// def sets the routine of op. Each Op has one routine: a second one is a bug of the tables.
func def(op Op, f execFn) {
	if opTab[op].exec != nil {
		panic(fmt.Sprintf("shader: %s has two routines", opNames[op]))
	}
	opTab[op].exec = f
}

// defs sets one routine for several Ops.
func defs(ops []Op, f execFn) {
	for _, op := range ops {
		def(op, f)
	}
}

// The units register their opcodes in this order; then each routine is bound with its rounding rule.
func init() {
	sop2Ops() // sop.go: scalar ALU, branches, messages
	sop1Ops()
	sopcOps()
	sopkOps()
	soppOps()
	smemOps()   // smem.go: scalar memory
	vopF32Ops() // vop.go: 32/64-bit VALU
	vopIntOps()
	vop64Ops()
	vopCarryOps()
	vopPkF32Ops()
	transOps()     // transcendental.go: division steps, frexp, f64 transcendental
	trigPreopOps() // trigpreop.go
	vop2F16Ops()   // valu16.go: 16-bit VALU, packed, dot, mix
	vop1F16Ops()
	vop3F16Ops()
	vop3pF16Ops()
	xlaneOps() // xlane.go: cross-lane and bit operations
	valuBitOps()
	saluBitOps()
	mfmaOps()       // mfma.go: matrix cores
	legacyValuOps() // legacy.go: legacy and graphics-only VALU and SALU forms
	legacySaluOps()
	vopcOps()  // vopc.go: compares and class
	dsOps()    // DS: LDS, cross-lane, GWS
	vmemOps()  // FLAT/GLOBAL/SCRATCH and MUBUF
	mimgOps()  // mimg_exec.go: image instructions
	roundOps() // round.go: FP_ROUND rules and directed routines
	roundOps16()
	for op := Op(1); op < NumOps; op++ {
		r := &opTab[op]
		r.v32 = v32specs[funcID(r.exec)]
		r.near, r.rmask = r.exec, roundMask(op)
		r.exec = withRounding(op, r.exec)
		r.notF32 = !floatResult(opNames[op])
	}
	tablesBuilt, v32specs = true, nil
}

// resolve gives the routine of a decoded instruction (nil: unimplemented).
func resolve(in *Inst) execFn { return opTab[in.Info.Op].exec }

// bind sets a decoded instruction's routine and rounding flag from its opcode's record, once per
// decoded instruction (the wave's decode cache, decodeAt). step runs in.near itself when MODE's
// FP_ROUND field of the operation is round to nearest even (one call less than exec's wrapper).
func (in *Inst) bind() {
	r := &opTab[in.Info.Op]
	in.exec, in.notF32 = r.exec, r.notF32
	in.near, in.rmask, in.v32 = r.near, r.rmask, r.v32
	in.pre = resolvePre(in)
	in.pre.run = in.pre.ok && in.v32 != nil && in.near != nil
	in.vneed = vregNeed(in)
}
