package drm

import (
	"testing"

	"github.com/kfdemu/kfdemu/kfd/abi"
)

// BenchmarkRenderIoctl measures the render node's ioctl path without FUSE: an AMDGPU_INFO query
// (the table, the copies, a write to client memory) and a command submission of KFDEvictTest's
// 16-NOP SDMA IB followed by its WAIT_CS (the CS parser, the job queue, the engine).
func BenchmarkRenderIoctl(b *testing.B) {
	d := mi210(b)
	b.Run("INFO_VRAM_USAGE", func(b *testing.B) {
		f, m := NewFile(d, nil, nil), newMem()
		arg := bytesOf(abi.DRMAmdgpuInfo{ReturnPointer: m.base, ReturnSize: 8, Query: abi.AMDGPU_INFO_VRAM_USAGE})
		b.ReportAllocs()
		for b.Loop() {
			if e := f.Ioctl(m, abi.DRM_IOCTL_AMDGPU_INFO, arg); e != 0 {
				b.Fatal(e)
			}
		}
	})
	b.Run("CS_WAIT_SDMA_NOP", func(b *testing.B) {
		e := newCSEnv(b)
		ib := e.chunk(abi.AMDGPU_CHUNK_ID_IB, dmaIB(ibVA, 64))
		b.ReportAllocs()
		for b.Loop() {
			seq, errno := e.cs(e.ctx, e.list, ib)
			if errno != 0 {
				b.Fatal(errno)
			}
			if st, errno := e.waitCS(e.ctx, seq, ^uint64(0)); errno != 0 || st != 0 {
				b.Fatal(st, errno)
			}
		}
	})
}
