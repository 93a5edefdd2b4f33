package shader

import (
	"math"
	"math/big"
	"sync"
)

// V_TRIG_PREOP_F64 returns 53-bit segments of 2/π for Payne-Hanek argument reduction (Vega ISA):
//
//	shift = S1[4:0]·53, plus exponent(S0) - 1077 when S0's biased exponent is above 1077
//	result = the 53 bits of 2/π that follow its first `shift` fraction bits (the hardware holds 1201 bits;
//	         later bits read as 0)
//	D = result · 2^(-53-shift), times 2^128 when exponent(S0) >= 1968.

var (
	twoOverPiOnce sync.Once
	twoOverPi     *big.Int // floor(2/π · 2^1201): the hardware's 1201-bit table
)

// twoOverPiBits computes the table from π by Machin's formula, π = 16·atan(1/5) - 4·atan(1/239).
func twoOverPiBits() *big.Int {
	twoOverPiOnce.Do(func() {
		const prec = 1400
		atanInv := func(x int64) *big.Float {
			// atan(1/x) = Σ (-1)^k / ((2k+1)·x^(2k+1))
			sum := new(big.Float).SetPrec(prec)
			pow := new(big.Float).SetPrec(prec).Quo(big.NewFloat(1).SetPrec(prec), big.NewFloat(float64(x)).SetPrec(prec))
			x2 := new(big.Float).SetPrec(prec).SetInt64(x * x)
			eps := new(big.Float).SetPrec(prec).SetMantExp(big.NewFloat(1), -prec-8)
			for k := int64(0); ; k++ {
				term := new(big.Float).SetPrec(prec).Quo(pow, new(big.Float).SetPrec(prec).SetInt64(2*k+1))
				if k%2 == 0 {
					sum.Add(sum, term)
				} else {
					sum.Sub(sum, term)
				}
				if term.Cmp(eps) < 0 {
					return sum
				}
				pow.Quo(pow, x2)
			}
		}
		pi := new(big.Float).SetPrec(prec).Mul(big.NewFloat(16).SetPrec(prec), atanInv(5))
		pi.Sub(pi, new(big.Float).SetPrec(prec).Mul(big.NewFloat(4).SetPrec(prec), atanInv(239)))
		t := new(big.Float).SetPrec(prec).Quo(new(big.Float).SetPrec(prec).SetMantExp(big.NewFloat(1), 1202), pi)
		twoOverPi, _ = t.Int(nil) // truncation: floor(2^1202/π) = floor(2/π · 2^1201)
	})
	return twoOverPi
}

func trigPreop(a uint64, seg uint32) uint64 {
	e := int(a >> 52 & 0x7ff)
	shift := int(seg&31) * 53
	if e > 1077 {
		shift += e - 1077
	}
	t := twoOverPiBits()
	var r big.Int
	if s := 1201 - 53 - shift; s >= 0 {
		r.Rsh(t, uint(s))
	} else {
		r.Lsh(t, uint(-s))
	}
	r.And(&r, big.NewInt(1<<53-1))
	scale := -53 - shift
	if e >= 1968 {
		scale += 128
	}
	return u64(math.Ldexp(float64(r.Uint64()), scale))
}

func trigPreopOps() {
	// S0 an f64 (abs/neg apply; only its exponent matters), S1 the segment in a 32-bit operand.
	def(OpVTrigPreopF64, v64(tF64, tU32, 2, func(a, b, _ uint64) uint64 { return trigPreop(a, uint32(b)) }))
}
