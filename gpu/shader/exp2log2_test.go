package shader

import (
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"sync"
	"testing"
)

// TestExp2Log2F32: exp2F32 and log2F32 give exp2Ref's and log2Ref's f32 for every input tried:
// all 2x2^20 inputs around 1 and 2x2^20 at the ends of exp2F32's range, powers of two and their
// neighbours, 4M random ones; with KFDEMU_EXHAUSTIVE=1 all 2^32.
func TestExp2Log2F32(t *testing.T) {
	check := func(a uint32) bool {
		return exp2F32(a, 0, 0) == exp2Ref(a) && log2F32(a, 0, 0) == log2Ref(a)
	}
	report := func(a uint32) {
		t.Errorf("input %#08x: exp2 %#08x, want %#08x; log2 %#08x, want %#08x",
			a, exp2F32(a, 0, 0), exp2Ref(a), log2F32(a, 0, 0), log2Ref(a))
	}
	if os.Getenv("KFDEMU_EXHAUSTIVE") != "" {
		var wg sync.WaitGroup
		var mu sync.Mutex
		bad := 0
		par := runtime.GOMAXPROCS(0)
		for p := 0; p < par; p++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for hi := uint32(p); hi < 1<<16; hi += uint32(par) {
					for lo := uint32(0); lo < 1<<16; lo++ {
						if a := hi<<16 | lo; !check(a) {
							mu.Lock()
							if bad++; bad < 10 {
								report(a)
							}
							mu.Unlock()
						}
					}
				}
			}()
		}
		wg.Wait()
		if bad > 0 {
			t.Fatalf("%d inputs differ", bad)
		}
		return
	}
	for hi := uint32(0); hi < 1<<16; hi++ {
		// every input next to 1 (log2's results near 0) and the ends of exp2F32's range; elsewhere
		// lo 0 and 0xffff (powers of two and their neighbours)
		full := hi>>4 == 0x3f7 || hi>>4 == 0x3f8 || hi>>4 == 0x42f || hi>>4 == 0xc2f
		for lo := uint32(0); lo < 1<<16; lo++ {
			if !full && lo != 0 {
				lo = 1<<16 - 1
			}
			if a := hi<<16 | lo; !check(a) {
				report(a)
				return
			}
		}
	}
	rnd := rand.New(rand.NewPCG(9, 10))
	for i := 0; i < 4<<20; i++ {
		if a := rnd.Uint32(); !check(a) {
			report(a)
			return
		}
	}
	for _, x := range []float32{1, 0.75, 1.5, -125, -124.99999, 127.5, 127.49999, 128, -126, -150, -149.99998, 1024, 2, 0.5} {
		for d := -3; d <= 3; d++ {
			if a := uint32(int32(math.Float32bits(x)) + int32(d)); !check(a) {
				report(a)
			}
		}
	}
}
