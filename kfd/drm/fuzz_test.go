package drm

import (
	"encoding/binary"
	"syscall"
	"testing"
	"time"

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
	f.Add(uint32(abi.DRM_IOCTL_AMDGPU_GEM_CREATE), bytesOf(abi.DRMAmdgpuGemCreate{BOSize: 4096, Domains: abi.AMDGPU_GEM_DOMAIN_GTT}), false)
	f.Add(uint32(abi.DRM_IOCTL_AMDGPU_CTX), bytesOf(abi.DRMAmdgpuCtx{Op: abi.AMDGPU_CTX_OP_ALLOC_CTX}), false)
	f.Add(uint32(abi.DRM_IOCTL_AMDGPU_CS), bytesOf(abi.DRMAmdgpuCS{CtxID: 1, NumChunks: 1, Chunks: 0x100}), true)
	f.Add(uint32(abi.DRM_IOCTL_AMDGPU_BO_LIST), bytesOf(abi.DRMAmdgpuBOList{BONumber: 2, BOInfoSize: 8, BOInfoPtr: 0x100}), true)
	f.Add(uint32(abi.DRM_IOCTL_AMDGPU_GEM_VA), bytesOf(abi.DRMAmdgpuGemVA{Handle: 1, Operation: 1, VAAddress: 1 << 32, MapSize: 4096}), false)
	d := mi210(f)
	// One file for the whole run, with a context and a mapped object, so the GEM, CTX, BO_LIST and CS
	// paths meet state; the fake backend panics on a double free or a free of a mapped buffer.
	file := NewFile(d, newFakeBackend(64<<20, 64<<20), nil)
	defer file.Close()
	setup := newMem()
	file.Ioctl(setup, abi.DRM_IOCTL_AMDGPU_CTX, bytesOf(abi.DRMAmdgpuCtx{Op: abi.AMDGPU_CTX_OP_ALLOC_CTX}))
	file.Ioctl(setup, abi.DRM_IOCTL_AMDGPU_GEM_CREATE, bytesOf(abi.DRMAmdgpuGemCreate{BOSize: 8192, Domains: abi.AMDGPU_GEM_DOMAIN_GTT}))
	file.Ioctl(setup, abi.DRM_IOCTL_AMDGPU_GEM_VA, bytesOf(abi.DRMAmdgpuGemVA{Handle: 1, Operation: abi.AMDGPU_VA_OP_MAP,
		VAAddress: 1 << 32, MapSize: 8192, Flags: abi.AMDGPU_VM_PAGE_READABLE}))
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
		// A wait that would block (an absolute timeout far ahead, WAIT_FENCES of no fence) ends as if
		// the client got a signal.
		intr := make(chan struct{})
		m.intr = intr
		tm := time.AfterFunc(5*time.Millisecond, func() { close(intr) })
		defer tm.Stop()
		if ptrs {
			ioctl(d, m, cmd, a)
		} else {
			file.Ioctl(m, cmd, a)
		}
		if len(a) != size {
			t.Fatalf("argument length changed: %d -> %d", size, len(a))
		}
	})
}

// fuzzMem is a client window of the fuzzer's bytes at 0x10000 (1 MiB, the bytes at its start).
func fuzzMem(b []byte) *fakeMem {
	m := &fakeMem{base: 0x10000, buf: make([]byte, 1<<20), tgid: fakePid}
	copy(m.buf, b)
	return m
}

// FuzzCSChunks drives the CS chunk reader (readCSChunks) with arbitrary argument words and client
// memory. Pointers in the memory are taken as they are, so chunks point anywhere in and out of the
// window. It must never panic, must keep every chunk's data its declared length, and must fail with
// one of amdgpu's errnos of the chunk parser.
func FuzzCSChunks(f *testing.F) {
	ib := bytesOf(abi.DRMAmdgpuCSChunkIB{VAStart: 0x1000, IBBytes: 64, IPType: abi.AMDGPU_HW_IP_DMA})
	mem := binary.LittleEndian.AppendUint64(nil, 0x10010) // chunk pointer -> chunk header at +0x10
	mem = append(mem, make([]byte, 8)...)
	mem = append(mem, bytesOf(abi.DRMAmdgpuCSChunk{ChunkID: abi.AMDGPU_CHUNK_ID_IB, LengthDW: 8, ChunkData: 0x10020})...)
	mem = append(mem, ib...)
	f.Add(uint32(1), uint64(0x10000), mem)
	f.Add(uint32(3), uint64(0x10000), mem)
	f.Add(uint32(1<<21), uint64(0x10000), mem)
	f.Fuzz(func(t *testing.T, n uint32, chunks uint64, b []byte) {
		m := fuzzMem(b)
		out, errno := readCSChunks(m, &abi.DRMAmdgpuCS{NumChunks: n, Chunks: chunks}, pass1{})
		switch errno {
		case 0:
			if len(out) != int(n) {
				t.Fatalf("%d chunks of %d", len(out), n)
			}
		case syscall.EINVAL, syscall.EFAULT, syscall.ENOMEM:
		default:
			t.Fatalf("errno %v", errno)
		}
	})
}

// FuzzBOListEntries drives readBOListEntries: every entry visited, in order, whatever the entry size
// and pointer; only ENOMEM and EFAULT as errors.
func FuzzBOListEntries(f *testing.F) {
	f.Add(uint32(2), uint32(8), uint64(0x10000), []byte{1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0})
	f.Add(uint32(3), uint32(4), uint64(0x10000), []byte{1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0})
	f.Add(uint32(5), uint32(24), uint64(0x10008), []byte{})
	f.Add(uint32(1<<30), uint32(0), uint64(0), []byte{})
	f.Fuzz(func(t *testing.T, n, size uint32, ptr uint64, b []byte) {
		m := fuzzMem(b)
		seen := uint64(0)
		errno := readBOListEntries(m, &abi.DRMAmdgpuBOListIn{BONumber: n, BOInfoSize: size, BOInfoPtr: ptr},
			func(e []abi.DRMAmdgpuBOListEntry) syscall.Errno {
				seen += uint64(len(e))
				if seen > 1<<20 {
					return syscall.E2BIG // enough: the walk is bounded by n, not the fuzzer's time
				}
				return 0
			})
		switch errno {
		case 0:
			if seen != uint64(n) {
				t.Fatalf("visited %d of %d", seen, n)
			}
		case syscall.ENOMEM, syscall.EFAULT, syscall.E2BIG:
		default:
			t.Fatalf("errno %v", errno)
		}
	})
}
