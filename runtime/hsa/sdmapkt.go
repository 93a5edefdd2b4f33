package hsa

import "encoding/binary"

// The runtime's own SDMA packet encoder, as ROCr's BlitSdma writes packets from its own
// sdma_registers.h, independent of the emulated engine's decoder (package gpu/sdma): a layout bug
// on either side then shows as a failing copy between them (TestSDMAPacketsAgainstDevice) and
// against the packet structs of kfdtest's sdma_pkt_struct.h (TestSDMAPacketsAgainstKfdtest).
const (
	sdmaOpCopy        = 1 // SDMA_OP_COPY
	sdmaSubCopyLinear = 0 // SDMA_SUBOP_COPY_LINEAR
	sdmaOpFence       = 5 // SDMA_OP_FENCE
	// sdmaMaxCopy is the largest COPY_LINEAR: COUNT_UNION.count is 22 bits of bytes - 1 (SDMA 4+).
	sdmaMaxCopy = 1 << 22
)

// sdmaHeader is HEADER_UNION: op in bits 0-7, sub_op in bits 8-15.
func sdmaHeader(op, sub uint32) uint32 { return op | sub<<8 }

func appendU32(b []byte, v ...uint32) []byte {
	for _, d := range v {
		b = binary.LittleEndian.AppendUint32(b, d)
	}
	return b
}

// appendCopyLinear appends SDMA_PKT_COPY_LINEAR of n bytes (1 <= n <= sdmaMaxCopy): header,
// count - 1, parameters (no swaps), source low/high, destination low/high.
func appendCopyLinear(b []byte, dst, src uint64, n uint32) []byte {
	return appendU32(b, sdmaHeader(sdmaOpCopy, sdmaSubCopyLinear), (n-1)&(sdmaMaxCopy-1), 0,
		uint32(src), uint32(src>>32), uint32(dst), uint32(dst>>32))
}

// appendFence appends SDMA_PKT_FENCE: header, address low/high, 32-bit data.
func appendFence(b []byte, addr uint64, v uint32) []byte {
	return appendU32(b, sdmaHeader(sdmaOpFence, 0), uint32(addr), uint32(addr>>32), v)
}
