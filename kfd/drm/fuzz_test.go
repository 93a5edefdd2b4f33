package drm

import (
	"encoding/binary"
	"testing"

	"github.com/kfdemu/kfdemu/kfd/abi"
)

// FuzzIoctl drives Ioctl with arbitrary command words and argument bytes. When ptrs is set, every
// 8-byte-aligned word of the argument that looks like a small offset is rebased into the client's
// mapped window, so the pointer-following paths (VERSION strings, AMDGPU_INFO return buffers) are
// reached too. It must never panic, never change the argument's length, and every write it makes to
// client memory must stay inside the mapping (the fake memory faults otherwise).
func FuzzIoctl(f *testing.F) {
	f.Add(uint32(abi.DRM_IOCTL_VERSION), make([]byte, 64), true)
	f.Add(uint32(abi.DRM_IOCTL_GET_CAP), bytesOf(abi.DRMGetCap{Capability: abi.DRM_CAP_PRIME}), false)
	f.Add(uint32(abi.DRM_IOCTL_GET_CLIENT), make([]byte, 40), false)
	f.Add(uint32(abi.DRM_IOCTL_AMDGPU_INFO), bytesOf(abi.DRMAmdgpuInfo{ReturnPointer: 0x100, ReturnSize: 368, Query: abi.AMDGPU_INFO_DEV_INFO}), true)
	f.Add(uint32(abi.DRM_IOCTL_AMDGPU_INFO), bytesOf(abi.DRMAmdgpuInfo{ReturnPointer: 0x100, ReturnSize: 512, Query: abi.AMDGPU_INFO_READ_MMR_REG,
		Union: union(0x263e, 128, 0xffffffff)}), true)
	f.Add(uint32(0xc0106401), make([]byte, 16), false)
	f.Add(uint32(abi.DRM_IOCTL_PRIME_HANDLE_TO_FD), make([]byte, 12), false)
	d := mi210(f)
	f.Fuzz(func(t *testing.T, cmd uint32, arg []byte, ptrs bool) {
		size := int(abi.IOCSize(cmd))
		a := make([]byte, size)
		copy(a, arg)
		m := newMem()
		if ptrs {
			for i := 0; i+8 <= len(a); i += 8 {
				if v := binary.LittleEndian.Uint64(a[i:]); v < uint64(len(m.buf)) {
					binary.LittleEndian.PutUint64(a[i:], m.base+v)
				}
			}
		}
		ioctl(d, m, cmd, a)
		if len(a) != size {
			t.Fatalf("argument length changed: %d -> %d", size, len(a))
		}
	})
}
