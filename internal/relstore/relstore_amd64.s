//go:build amd64 && !race

#include "textflag.h"

// func mov32(p *uint32, v uint32)
TEXT ·mov32(SB), NOSPLIT, $0-12
	MOVQ p+0(FP), AX
	MOVL v+8(FP), BX
	MOVL BX, 0(AX)
	RET

// func mov64(p *uint64, v uint64)
TEXT ·mov64(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), AX
	MOVQ v+8(FP), BX
	MOVQ BX, 0(AX)
	RET
