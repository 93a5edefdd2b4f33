package kfd

import "testing"

// TestWideSDMACopyCount: the ISAs whose SDMA copies take 30-bit counts are those ROCr 6.2.4 gives
// copy_size_override 0x3fffffff (GpuAgent::CreateBlitSdma).
func TestWideSDMACopyCount(t *testing.T) {
	for v, want := range map[uint64]bool{
		90000:  false, // gfx900 (vega10)
		90006:  false, // gfx906
		90008:  false, // gfx908 (MI100)
		90010:  true,  // gfx90a (MI210)
		90402:  false, // gfx942 (MI300X)
		100100: false,
		100300: true, // gfx1030 (RX 6800)
		110000: true,
	} {
		if got := wideSDMACopyCount(v); got != want {
			t.Errorf("gfx_target_version %d: wide %v, want %v", v, got, want)
		}
	}
}
