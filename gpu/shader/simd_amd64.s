//go:build amd64 && !purego

#include "textflag.h"

// The lane kernels of simd_amd64.go. Registers: Y0-Y14 only (X15 is ABIInternal's zero register).
// VEX encodings only (VMOVD/VMOVQ, not MOVD/MOVQ, into an X register): a legacy-SSE instruction
// while the upper halves are dirty cost 1 µs per carry kernel call on this host (a state transition
// per instruction).

// SHIFTARGS loads the shift kernels' arguments (defined before any TEXT, for vet's asmdecl).
#define SHIFTARGS \
	MOVQ dlo+0(FP), DI \
	MOVQ dhi+8(FP), CX \
	MOVQ lo+16(FP), SI \
	MOVQ hi+24(FP), DX \
	MOVL s+32(FP), AX \
	VMOVQ AX, X10 \
	MOVQ $32, BX \
	SUBQ AX, BX \
	VMOVQ BX, X11 \
	SUBQ $32, AX \
	VMOVQ AX, X12

// laneBits holds 1<<i in dword i: a broadcast carry-in byte ANDed with it and compared leaves -1
// in the lanes whose bit is set.
DATA laneBits<>+0(SB)/4, $1
DATA laneBits<>+4(SB)/4, $2
DATA laneBits<>+8(SB)/4, $4
DATA laneBits<>+12(SB)/4, $8
DATA laneBits<>+16(SB)/4, $16
DATA laneBits<>+20(SB)/4, $32
DATA laneBits<>+24(SB)/4, $64
DATA laneBits<>+28(SB)/4, $128
GLOBL laneBits<>(SB), RODATA|NOPTR, $32

// signBit is the unsigned-compare bias (VPCMPGTD compares signed).
DATA signBit<>+0(SB)/4, $0x80000000
GLOBL signBit<>(SB), RODATA|NOPTR, $4

// FMA8 computes eight lanes of c + a*b into R and ORs its unordered (NaN) lanes into Y10.
#define FMA8(off, R) \
	VMOVUPS off(CX), R \
	VMOVUPS off(SI), Y8 \
	VFMADD231PS off(DX), Y8, R \
	VCMPPS $3, R, R, Y9 \
	VORPS Y9, Y10, Y10

// func fmaAVX2(d, a, b, c *[64]uint32) bool
TEXT ·fmaAVX2(SB), NOSPLIT, $0-33
	MOVQ d+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ c+24(FP), CX
	VXORPS Y10, Y10, Y10
	FMA8(0, Y0)
	FMA8(32, Y1)
	FMA8(64, Y2)
	FMA8(96, Y3)
	FMA8(128, Y4)
	FMA8(160, Y5)
	FMA8(192, Y6)
	FMA8(224, Y7)
	VPTEST Y10, Y10
	JNZ nan
	VMOVUPS Y0, 0(DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	VMOVUPS Y4, 128(DI)
	VMOVUPS Y5, 160(DI)
	VMOVUPS Y6, 192(DI)
	VMOVUPS Y7, 224(DI)
	VZEROUPPER
	MOVB $1, ret+32(FP)
	RET
nan:
	VZEROUPPER
	MOVB $0, ret+32(FP)
	RET

// CARRY8 adds eight lanes: u = r ^ x (Y10), v = Q, s1 = u + v, s = s1 + the carry-in bits of BX's
// low byte (Y12 the lane bits); stores s at off(DI); the carry-out is s1 < u or s < s1 (unsigned;
// both cannot hold), its eight bits shifted into R8 from the top (R8 >> 8 each round).
#define CARRY8(off, Q) \
	VMOVDQU off(SI), Y1 \
	VPXOR Y10, Y1, Y1 \
	Q \
	VPADDD Y2, Y1, Y3 \
	VMOVQ BX, X4 \
	VPBROADCASTD X4, Y4 \
	VPAND Y12, Y4, Y4 \
	VPCMPEQD Y12, Y4, Y4 \
	SHRQ $8, BX \
	VPSUBD Y4, Y3, Y5 \
	VMOVDQU Y5, off(DI) \
	VPXOR Y13, Y1, Y6 \
	VPXOR Y13, Y3, Y7 \
	VPXOR Y13, Y5, Y8 \
	VPCMPGTD Y7, Y6, Y9 \
	VPCMPGTD Y8, Y7, Y14 \
	VPOR Y14, Y9, Y9 \
	VMOVMSKPS Y9, AX \
	SHRQ $8, R8 \
	SHLQ $56, AX \
	ORQ AX, R8

#define ROWQ(off) VMOVDQU off(DX), Y2
#define CONSTQ VMOVDQA Y11, Y2

// func carryRowsAVX2(d, r, q *[64]uint32, x uint32, ci uint64) uint64
TEXT ·carryRowsAVX2(SB), NOSPLIT, $0-48
	MOVQ d+0(FP), DI
	MOVQ r+8(FP), SI
	MOVQ q+16(FP), DX
	MOVL x+24(FP), AX
	VMOVD AX, X10
	VPBROADCASTD X10, Y10
	MOVQ ci+32(FP), BX
	VMOVDQU laneBits<>(SB), Y12
	VPBROADCASTD signBit<>(SB), Y13
	XORQ R8, R8
	CARRY8(0, ROWQ(0))
	CARRY8(32, ROWQ(32))
	CARRY8(64, ROWQ(64))
	CARRY8(96, ROWQ(96))
	CARRY8(128, ROWQ(128))
	CARRY8(160, ROWQ(160))
	CARRY8(192, ROWQ(192))
	CARRY8(224, ROWQ(224))
	VZEROUPPER
	MOVQ R8, ret+40(FP)
	RET

// func carryConstAVX2(d, r *[64]uint32, x, k uint32, ci uint64) uint64
TEXT ·carryConstAVX2(SB), NOSPLIT, $0-40
	MOVQ d+0(FP), DI
	MOVQ r+8(FP), SI
	MOVL x+16(FP), AX
	VMOVD AX, X10
	VPBROADCASTD X10, Y10
	MOVL k+20(FP), AX
	VMOVD AX, X11
	VPBROADCASTD X11, Y11
	MOVQ ci+24(FP), BX
	VMOVDQU laneBits<>(SB), Y12
	VPBROADCASTD signBit<>(SB), Y13
	XORQ R8, R8
	CARRY8(0, CONSTQ)
	CARRY8(32, CONSTQ)
	CARRY8(64, CONSTQ)
	CARRY8(96, CONSTQ)
	CARRY8(128, CONSTQ)
	CARRY8(160, CONSTQ)
	CARRY8(192, CONSTQ)
	CARRY8(224, CONSTQ)
	VZEROUPPER
	MOVQ R8, ret+32(FP)
	RET

// F32OP8 computes eight lanes of a OP b into R (a from SI, b from DX) and ORs its NaN lanes into Y10.
#define F32OP8(OP, off, R) \
	VMOVUPS off(SI), R \
	OP off(DX), R, R \
	VCMPPS $3, R, R, Y9 \
	VORPS Y9, Y10, Y10

// F32KERN computes all 64 results of a two-source f32 kernel in Y0-Y7, their NaN lanes in Y10.
#define F32KERN(OP) \
	VXORPS Y10, Y10, Y10 \
	F32OP8(OP, 0, Y0) \
	F32OP8(OP, 32, Y1) \
	F32OP8(OP, 64, Y2) \
	F32OP8(OP, 96, Y3) \
	F32OP8(OP, 128, Y4) \
	F32OP8(OP, 160, Y5) \
	F32OP8(OP, 192, Y6) \
	F32OP8(OP, 224, Y7)

// STORE8 stores Y0-Y7 at DI.
#define STORE8 \
	VMOVUPS Y0, 0(DI) \
	VMOVUPS Y1, 32(DI) \
	VMOVUPS Y2, 64(DI) \
	VMOVUPS Y3, 96(DI) \
	VMOVUPS Y4, 128(DI) \
	VMOVUPS Y5, 160(DI) \
	VMOVUPS Y6, 192(DI) \
	VMOVUPS Y7, 224(DI)

// func addF32AVX2(d, a, b *[64]uint32) bool
TEXT ·addF32AVX2(SB), NOSPLIT, $0-25
	MOVQ d+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	F32KERN(VADDPS)
	VPTEST Y10, Y10
	JNZ nan
	STORE8
	VZEROUPPER
	MOVB $1, ret+24(FP)
	RET
nan:
	VZEROUPPER
	MOVB $0, ret+24(FP)
	RET

// func subF32AVX2(d, a, b *[64]uint32) bool
TEXT ·subF32AVX2(SB), NOSPLIT, $0-25
	MOVQ d+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	F32KERN(VSUBPS)
	VPTEST Y10, Y10
	JNZ nan
	STORE8
	VZEROUPPER
	MOVB $1, ret+24(FP)
	RET
nan:
	VZEROUPPER
	MOVB $0, ret+24(FP)
	RET

// func mulF32AVX2(d, a, b *[64]uint32) bool
TEXT ·mulF32AVX2(SB), NOSPLIT, $0-25
	MOVQ d+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	F32KERN(VMULPS)
	VPTEST Y10, Y10
	JNZ nan
	STORE8
	VZEROUPPER
	MOVB $1, ret+24(FP)
	RET
nan:
	VZEROUPPER
	MOVB $0, ret+24(FP)
	RET

// PAIR8 makes the eight 64-bit keys lo | hi<<32 of lanes off/4 .. off/4+7, XORed with Y12, in Y3
// (lanes 0-3) and Y4 (lanes 4-7): VPERMQ puts qwords 0,2 in the low half and 1,3 in the high
// half, so that the in-lane unpacks give lanes in order.
#define PAIR8(off) \
	VPERMQ $0xD8, off(SI), Y1 \
	VPERMQ $0xD8, off(DX), Y2 \
	VPUNPCKLDQ Y2, Y1, Y3 \
	VPUNPCKHDQ Y2, Y1, Y4 \
	VPXOR Y12, Y3, Y3 \
	VPXOR Y12, Y4, Y4

// CMPGT8 ORs into R8, at bit off/4, the lanes whose key is greater than Y13 (signed).
#define CMPGT8(off) \
	PAIR8(off) \
	VPCMPGTQ Y13, Y3, Y3 \
	VPCMPGTQ Y13, Y4, Y4 \
	VMOVMSKPD Y3, AX \
	VMOVMSKPD Y4, BX \
	SHLQ $4, BX \
	ORQ BX, AX \
	SHLQ $(off/4), AX \
	ORQ AX, R8

// CMPLT8 ORs into R8, at bit off/4, the lanes whose key is less than Y13 (signed).
#define CMPLT8(off) \
	PAIR8(off) \
	VPCMPGTQ Y3, Y13, Y3 \
	VPCMPGTQ Y4, Y13, Y4 \
	VMOVMSKPD Y3, AX \
	VMOVMSKPD Y4, BX \
	SHLQ $4, BX \
	ORQ BX, AX \
	SHLQ $(off/4), AX \
	ORQ AX, R8

// func cmpPairGtAVX2(lo, hi *[64]uint32, bias, y uint64) uint64
TEXT ·cmpPairGtAVX2(SB), NOSPLIT, $0-40
	MOVQ lo+0(FP), SI
	MOVQ hi+8(FP), DX
	VPBROADCASTQ bias+16(FP), Y12
	VPBROADCASTQ y+24(FP), Y13
	XORQ R8, R8
	CMPGT8(0)
	CMPGT8(32)
	CMPGT8(64)
	CMPGT8(96)
	CMPGT8(128)
	CMPGT8(160)
	CMPGT8(192)
	CMPGT8(224)
	VZEROUPPER
	MOVQ R8, ret+32(FP)
	RET

// func cmpPairLtAVX2(lo, hi *[64]uint32, bias, y uint64) uint64
TEXT ·cmpPairLtAVX2(SB), NOSPLIT, $0-40
	MOVQ lo+0(FP), SI
	MOVQ hi+8(FP), DX
	VPBROADCASTQ bias+16(FP), Y12
	VPBROADCASTQ y+24(FP), Y13
	XORQ R8, R8
	CMPLT8(0)
	CMPLT8(32)
	CMPLT8(64)
	CMPLT8(96)
	CMPLT8(128)
	CMPLT8(160)
	CMPLT8(192)
	CMPLT8(224)
	VZEROUPPER
	MOVQ R8, ret+32(FP)
	RET

// SHIFT8 shifts eight lanes of the 64-bit values lo (SI) | hi (DX) << 32 into dlo (DI) and dhi
// (CX) with the counts X10 (s), X11 (32-s) and X12 (s-32), each an unsigned 64-bit count (a
// count above 31 shifts every bit out): LEFT for v_lshlrev_b64, RIGHT for v_lshrrev_b64.
#define SHL8(off) \
	VMOVDQU off(SI), Y1 \
	VMOVDQU off(DX), Y2 \
	VPSLLD X10, Y1, Y3 \
	VPSLLD X10, Y2, Y4 \
	VPSRLD X11, Y1, Y5 \
	VPSLLD X12, Y1, Y6 \
	VPOR Y5, Y4, Y4 \
	VPOR Y6, Y4, Y4 \
	VMOVDQU Y3, off(DI) \
	VMOVDQU Y4, off(CX)

#define SHR8(off) \
	VMOVDQU off(SI), Y1 \
	VMOVDQU off(DX), Y2 \
	VPSRLD X10, Y2, Y4 \
	VPSRLD X10, Y1, Y3 \
	VPSLLD X11, Y2, Y5 \
	VPSRLD X12, Y2, Y6 \
	VPOR Y5, Y3, Y3 \
	VPOR Y6, Y3, Y3 \
	VMOVDQU Y3, off(DI) \
	VMOVDQU Y4, off(CX)

// SAR8 is v_ashrrev_i64's: the high half shifted arithmetically; for s >= 32 the low half is
// hi >> (s-32) arithmetically, selected by Y13 (all ones then, else zero).
#define SAR8(off) \
	VMOVDQU off(SI), Y1 \
	VMOVDQU off(DX), Y2 \
	VPSRAD X10, Y2, Y4 \
	VPSRLD X10, Y1, Y3 \
	VPSLLD X11, Y2, Y5 \
	VPSRAD X12, Y2, Y6 \
	VPAND Y13, Y6, Y6 \
	VPOR Y5, Y3, Y3 \
	VPOR Y6, Y3, Y3 \
	VMOVDQU Y3, off(DI) \
	VMOVDQU Y4, off(CX)

// func shl64AVX2(dlo, dhi, lo, hi *[64]uint32, s uint32)
TEXT ·shl64AVX2(SB), NOSPLIT, $0-36
	SHIFTARGS
	SHL8(0)
	SHL8(32)
	SHL8(64)
	SHL8(96)
	SHL8(128)
	SHL8(160)
	SHL8(192)
	SHL8(224)
	VZEROUPPER
	RET

// func shr64AVX2(dlo, dhi, lo, hi *[64]uint32, s uint32)
TEXT ·shr64AVX2(SB), NOSPLIT, $0-36
	SHIFTARGS
	SHR8(0)
	SHR8(32)
	SHR8(64)
	SHR8(96)
	SHR8(128)
	SHR8(160)
	SHR8(192)
	SHR8(224)
	VZEROUPPER
	RET

// func sar64AVX2(dlo, dhi, lo, hi *[64]uint32, s uint32)
TEXT ·sar64AVX2(SB), NOSPLIT, $0-36
	SHIFTARGS
	VPXOR Y13, Y13, Y13
	CMPL s+32(FP), $32
	JLT small
	VPCMPEQD Y13, Y13, Y13
small:
	SAR8(0)
	SAR8(32)
	SAR8(64)
	SAR8(96)
	SAR8(128)
	SAR8(160)
	SAR8(192)
	SAR8(224)
	VZEROUPPER
	RET

// MADLOAD8 loads eight lanes of a (SI), b (DX), clo (R9), chi (R10) and makes the products in
// Y5 (even lanes as qwords) and Y6 (odd lanes), with MUL VPMULUDQ or VPMULDQ, and the addends
// c = clo | chi<<32 in Y7 (even) and Y8 (odd).
#define MADLOAD8(MUL, off) \
	VMOVDQU off(SI), Y1 \
	VMOVDQU off(DX), Y2 \
	VMOVDQU off(R9), Y3 \
	VMOVDQU off(R10), Y4 \
	MUL Y2, Y1, Y5 \
	VPSRLQ $32, Y1, Y1 \
	VPSRLQ $32, Y2, Y2 \
	MUL Y2, Y1, Y6 \
	VPSLLQ $32, Y4, Y7 \
	VPBLENDD $0xAA, Y7, Y3, Y7 \
	VPSRLQ $32, Y3, Y8 \
	VPBLENDD $0xAA, Y4, Y8, Y8

// MADSTORE8 stores the sums r (Y9 even lanes, Y10 odd) as dwords into tl (DI) and th (CX) and
// ORs the carry masks (Y11 even, Y7 odd: all ones in a lane's qword) into R8 at bit off/4.
#define MADSTORE8(off) \
	VPBLENDD $0xAA, Y7, Y11, Y11 \
	VMOVMSKPS Y11, AX \
	SHLQ $(off/4), AX \
	ORQ AX, R8 \
	VPSLLQ $32, Y10, Y1 \
	VPBLENDD $0xAA, Y1, Y9, Y1 \
	VPSRLQ $32, Y9, Y2 \
	VPBLENDD $0xAA, Y10, Y2, Y2 \
	VMOVDQU Y1, off(DI) \
	VMOVDQU Y2, off(CX)

// MADU8: unsigned, the carry-out of the 64-bit sum is r < c (biased by Y13 for VPCMPGTQ).
#define MADU8(off) \
	MADLOAD8(VPMULUDQ, off) \
	VPADDQ Y7, Y5, Y9 \
	VPADDQ Y8, Y6, Y10 \
	VPXOR Y13, Y9, Y1 \
	VPXOR Y13, Y7, Y11 \
	VPCMPGTQ Y1, Y11, Y11 \
	VPXOR Y13, Y10, Y1 \
	VPXOR Y13, Y8, Y7 \
	VPCMPGTQ Y1, Y7, Y7 \
	MADSTORE8(off)

// MADI8: signed, overflow when p and c have one sign and r another: ~(p^c) & (r^p) negative.
#define MADI8(off) \
	MADLOAD8(VPMULDQ, off) \
	VPADDQ Y7, Y5, Y9 \
	VPADDQ Y8, Y6, Y10 \
	VPXOR Y7, Y5, Y11 \
	VPXOR Y9, Y5, Y12 \
	VPANDN Y12, Y11, Y11 \
	VPCMPGTQ Y11, Y14, Y11 \
	VPXOR Y8, Y6, Y7 \
	VPXOR Y10, Y6, Y12 \
	VPANDN Y12, Y7, Y7 \
	VPCMPGTQ Y7, Y14, Y7 \
	MADSTORE8(off)

// func mad64uAVX2(tl, th, a, b, clo, chi *[64]uint32) uint64
TEXT ·mad64uAVX2(SB), NOSPLIT, $0-56
	MOVQ tl+0(FP), DI
	MOVQ th+8(FP), CX
	MOVQ a+16(FP), SI
	MOVQ b+24(FP), DX
	MOVQ clo+32(FP), R9
	MOVQ chi+40(FP), R10
	MOVQ $0x8000000000000000, AX
	VMOVQ AX, X13
	VPBROADCASTQ X13, Y13
	XORQ R8, R8
	MADU8(0)
	MADU8(32)
	MADU8(64)
	MADU8(96)
	MADU8(128)
	MADU8(160)
	MADU8(192)
	MADU8(224)
	VZEROUPPER
	MOVQ R8, ret+48(FP)
	RET

// func mad64iAVX2(tl, th, a, b, clo, chi *[64]uint32) uint64
TEXT ·mad64iAVX2(SB), NOSPLIT, $0-56
	MOVQ tl+0(FP), DI
	MOVQ th+8(FP), CX
	MOVQ a+16(FP), SI
	MOVQ b+24(FP), DX
	MOVQ clo+32(FP), R9
	MOVQ chi+40(FP), R10
	VPXOR Y14, Y14, Y14
	XORQ R8, R8
	MADI8(0)
	MADI8(32)
	MADI8(64)
	MADI8(96)
	MADI8(128)
	MADI8(160)
	MADI8(192)
	MADI8(224)
	VZEROUPPER
	MOVQ R8, ret+48(FP)
	RET

// laneIdx holds i in dword i.
DATA laneIdx<>+0(SB)/4, $0
DATA laneIdx<>+4(SB)/4, $1
DATA laneIdx<>+8(SB)/4, $2
DATA laneIdx<>+12(SB)/4, $3
DATA laneIdx<>+16(SB)/4, $4
DATA laneIdx<>+20(SB)/4, $5
DATA laneIdx<>+24(SB)/4, $6
DATA laneIdx<>+28(SB)/4, $7
GLOBL laneIdx<>(SB), RODATA|NOPTR, $32

// SEQSETUP sets Y10 to x0 + i*sz (i = 0..7), Y11 to 8*sz in every dword, Y9 to zero (from AX =
// x0, BX = sz).
#define SEQSETUP \
	VMOVD AX, X10 \
	VPBROADCASTD X10, Y10 \
	VMOVD BX, X11 \
	VPBROADCASTD X11, Y11 \
	VPMULLD laneIdx<>(SB), Y11, Y1 \
	VPADDD Y1, Y10, Y10 \
	VPSLLD $3, Y11, Y11 \
	VPXOR Y9, Y9, Y9

// SEQ8 ORs into Y9 the difference of eight low dwords (SI) from the expected ones (Y10) and
// advances Y10.
#define SEQ8(off) \
	VPXOR off(SI), Y10, Y1 \
	VPOR Y1, Y9, Y9 \
	VPADDD Y11, Y10, Y10

// SEQHI8 is SEQ8 with the high dwords (DX) compared with Y12.
#define SEQHI8(off) \
	SEQ8(off) \
	VPXOR off(DX), Y12, Y2 \
	VPOR Y2, Y9, Y9

// func seqLoAVX2(lo *[64]uint32, x0, sz uint32) bool
TEXT ·seqLoAVX2(SB), NOSPLIT, $0-17
	MOVQ lo+0(FP), SI
	MOVL x0+8(FP), AX
	MOVL sz+12(FP), BX
	SEQSETUP
	SEQ8(0)
	SEQ8(32)
	SEQ8(64)
	SEQ8(96)
	SEQ8(128)
	SEQ8(160)
	SEQ8(192)
	SEQ8(224)
	VPTEST Y9, Y9
	SETEQ ret+16(FP)
	VZEROUPPER
	RET

// func seqLoHiAVX2(lo, hi *[64]uint32, x0, sz, h uint32) bool
TEXT ·seqLoHiAVX2(SB), NOSPLIT, $0-33
	MOVQ lo+0(FP), SI
	MOVQ hi+8(FP), DX
	MOVL x0+16(FP), AX
	MOVL sz+20(FP), BX
	MOVL h+24(FP), CX
	SEQSETUP
	VMOVD CX, X12
	VPBROADCASTD X12, Y12
	SEQHI8(0)
	SEQHI8(32)
	SEQHI8(64)
	SEQHI8(96)
	SEQHI8(128)
	SEQHI8(160)
	SEQHI8(192)
	SEQHI8(224)
	VPTEST Y9, Y9
	SETEQ ret+32(FP)
	VZEROUPPER
	RET

// func fillAVX2(d *[64]uint32, v uint32)
TEXT ·fillAVX2(SB), NOSPLIT, $0-12
	MOVQ d+0(FP), DI
	MOVL v+8(FP), AX
	VMOVD AX, X0
	VPBROADCASTD X0, Y0
	VMOVDQU Y0, 0(DI)
	VMOVDQU Y0, 32(DI)
	VMOVDQU Y0, 64(DI)
	VMOVDQU Y0, 96(DI)
	VMOVDQU Y0, 128(DI)
	VMOVDQU Y0, 160(DI)
	VMOVDQU Y0, 192(DI)
	VMOVDQU Y0, 224(DI)
	VZEROUPPER
	RET

// CMP32 compares eight lanes of a (SI, XORed with Y12) with B (in Y2, already XORed): the lanes
// below into R8, above into R9, at bit off/4.
#define CMP32(off, B) \
	VPXOR off(SI), Y12, Y1 \
	B \
	VPCMPGTD Y1, Y2, Y3 \
	VPCMPGTD Y2, Y1, Y4 \
	VMOVMSKPS Y3, AX \
	VMOVMSKPS Y4, BX \
	SHLQ $(off/4), AX \
	SHLQ $(off/4), BX \
	ORQ AX, R8 \
	ORQ BX, R9

#define ROWB(off) VPXOR off(DX), Y12, Y2
#define CONSTB VMOVDQA Y11, Y2

// func cmp32RowsAVX2(a, b *[64]uint32, bias uint32) (lt, gt uint64)
TEXT ·cmp32RowsAVX2(SB), NOSPLIT, $0-40
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DX
	MOVL bias+16(FP), AX
	VMOVD AX, X12
	VPBROADCASTD X12, Y12
	XORQ R8, R8
	XORQ R9, R9
	CMP32(0, ROWB(0))
	CMP32(32, ROWB(32))
	CMP32(64, ROWB(64))
	CMP32(96, ROWB(96))
	CMP32(128, ROWB(128))
	CMP32(160, ROWB(160))
	CMP32(192, ROWB(192))
	CMP32(224, ROWB(224))
	VZEROUPPER
	MOVQ R8, lt+24(FP)
	MOVQ R9, gt+32(FP)
	RET

// func cmp32ConstAVX2(a *[64]uint32, y, bias uint32) (lt, gt uint64)
TEXT ·cmp32ConstAVX2(SB), NOSPLIT, $0-32
	MOVQ a+0(FP), SI
	MOVL bias+12(FP), AX
	VMOVD AX, X12
	VPBROADCASTD X12, Y12
	MOVL y+8(FP), BX
	XORL AX, BX
	VMOVD BX, X11
	VPBROADCASTD X11, Y11
	XORQ R8, R8
	XORQ R9, R9
	CMP32(0, CONSTB)
	CMP32(32, CONSTB)
	CMP32(64, CONSTB)
	CMP32(96, CONSTB)
	CMP32(128, CONSTB)
	CMP32(160, CONSTB)
	CMP32(192, CONSTB)
	CMP32(224, CONSTB)
	VZEROUPPER
	MOVQ R8, lt+16(FP)
	MOVQ R9, gt+24(FP)
	RET

// shiftMask is 31 in a dword (the shift count's bits).
DATA shiftMask<>+0(SB)/4, $31
GLOBL shiftMask<>(SB), RODATA|NOPTR, $4

// INT8 runs BODY (Y1 = a, Y2 = b -> Y3) on eight lanes of a (SI) and b (DX) into d (DI).
#define INT8(off, BODY) \
	VMOVDQU off(SI), Y1 \
	VMOVDQU off(DX), Y2 \
	BODY \
	VMOVDQU Y3, off(DI)

#define INT64(BODY) \
	INT8(0, BODY) \
	INT8(32, BODY) \
	INT8(64, BODY) \
	INT8(96, BODY) \
	INT8(128, BODY) \
	INT8(160, BODY) \
	INT8(192, BODY) \
	INT8(224, BODY)

#define BODY_addU32 \
	VPADDD Y2, Y1, Y3

// func addU32AVX2(d, a, b *[64]uint32): v_add_u32: a + b
TEXT ·addU32AVX2(SB), NOSPLIT, $0-24
	MOVQ d+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	VPBROADCASTD shiftMask<>(SB), Y14
	INT64(BODY_addU32)
	VZEROUPPER
	RET

#define BODY_subU32 \
	VPSUBD Y2, Y1, Y3

// func subU32AVX2(d, a, b *[64]uint32): v_sub_u32: a - b
TEXT ·subU32AVX2(SB), NOSPLIT, $0-24
	MOVQ d+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	VPBROADCASTD shiftMask<>(SB), Y14
	INT64(BODY_subU32)
	VZEROUPPER
	RET

#define BODY_subrevU32 \
	VPSUBD Y1, Y2, Y3

// func subrevU32AVX2(d, a, b *[64]uint32): v_subrev_u32: b - a
TEXT ·subrevU32AVX2(SB), NOSPLIT, $0-24
	MOVQ d+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	VPBROADCASTD shiftMask<>(SB), Y14
	INT64(BODY_subrevU32)
	VZEROUPPER
	RET

#define BODY_mulLoU32 \
	VPMULLD Y2, Y1, Y3

// func mulLoU32AVX2(d, a, b *[64]uint32): v_mul_lo_u32: the low 32 bits of a * b
TEXT ·mulLoU32AVX2(SB), NOSPLIT, $0-24
	MOVQ d+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	VPBROADCASTD shiftMask<>(SB), Y14
	INT64(BODY_mulLoU32)
	VZEROUPPER
	RET

#define BODY_lshlrevB32 \
	VPAND Y14, Y1, Y1 \
	VPSLLVD Y1, Y2, Y3

// func lshlrevB32AVX2(d, a, b *[64]uint32): v_lshlrev_b32: b << (a & 31)
TEXT ·lshlrevB32AVX2(SB), NOSPLIT, $0-24
	MOVQ d+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	VPBROADCASTD shiftMask<>(SB), Y14
	INT64(BODY_lshlrevB32)
	VZEROUPPER
	RET

#define BODY_lshrrevB32 \
	VPAND Y14, Y1, Y1 \
	VPSRLVD Y1, Y2, Y3

// func lshrrevB32AVX2(d, a, b *[64]uint32): v_lshrrev_b32: b >> (a & 31)
TEXT ·lshrrevB32AVX2(SB), NOSPLIT, $0-24
	MOVQ d+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	VPBROADCASTD shiftMask<>(SB), Y14
	INT64(BODY_lshrrevB32)
	VZEROUPPER
	RET

#define BODY_ashrrevI32 \
	VPAND Y14, Y1, Y1 \
	VPSRAVD Y1, Y2, Y3

// func ashrrevI32AVX2(d, a, b *[64]uint32): v_ashrrev_i32: b >> (a & 31), arithmetic
TEXT ·ashrrevI32AVX2(SB), NOSPLIT, $0-24
	MOVQ d+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	VPBROADCASTD shiftMask<>(SB), Y14
	INT64(BODY_ashrrevI32)
	VZEROUPPER
	RET

#define BODY_andB32 \
	VPAND Y2, Y1, Y3

// func andB32AVX2(d, a, b *[64]uint32): v_and_b32
TEXT ·andB32AVX2(SB), NOSPLIT, $0-24
	MOVQ d+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	VPBROADCASTD shiftMask<>(SB), Y14
	INT64(BODY_andB32)
	VZEROUPPER
	RET

#define BODY_orB32 \
	VPOR Y2, Y1, Y3

// func orB32AVX2(d, a, b *[64]uint32): v_or_b32
TEXT ·orB32AVX2(SB), NOSPLIT, $0-24
	MOVQ d+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	VPBROADCASTD shiftMask<>(SB), Y14
	INT64(BODY_orB32)
	VZEROUPPER
	RET

#define BODY_xorB32 \
	VPXOR Y2, Y1, Y3

// func xorB32AVX2(d, a, b *[64]uint32): v_xor_b32
TEXT ·xorB32AVX2(SB), NOSPLIT, $0-24
	MOVQ d+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	VPBROADCASTD shiftMask<>(SB), Y14
	INT64(BODY_xorB32)
	VZEROUPPER
	RET
