//go:build amd64 && !purego

#include "textflag.h"

// The lane kernels of simd_amd64.go. Registers: Y0-Y14 only (X15 is ABIInternal's zero register).
// VEX encodings only (VMOVD/VMOVQ, not MOVD/MOVQ, into an X register): a legacy-SSE instruction
// while the upper halves are dirty cost 1 µs per carry kernel call on this host (a state transition
// per instruction).

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
