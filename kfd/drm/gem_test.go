package drm

import (
	"bytes"
	"encoding/binary"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/kfdemu/kfdemu/gpu/sdma"
	"github.com/kfdemu/kfdemu/kfd/abi"
)

// gemEnv is a render-node file over a fakeBackend (64 MiB of VRAM, 1 GiB of GTT) and a
// client memory window; Close and the leak check run at the end of the test.
type gemEnv struct {
	t   testing.TB
	f   *File
	fb  *fakeBackend
	m   *fakeMem
	pos uint64 // bump allocator in m
}

func newGemEnv(t testing.TB) *gemEnv {
	e := &gemEnv{t: t, fb: newFakeBackend(64<<20, 1<<30), m: &fakeMem{base: 0x10000, buf: make([]byte, 1<<20), tgid: fakePid}}
	e.f = NewFile(mi210(t), e.fb, nil)
	t.Cleanup(func() {
		e.f.Close()
		if live, mapped := e.fb.counts(); live != 0 || mapped != 0 {
			t.Errorf("after Close: %d buffers, %d mapped pages", live, mapped)
		}
		if o, c, l := e.f.Stats(); o+c+l != 0 {
			t.Errorf("after Close: %d objects %d contexts %d lists", o, c, l)
		}
	})
	return e
}

// put copies b into client memory and returns its address.
func (e *gemEnv) put(b []byte) uint64 {
	if e.pos+uint64(len(b))+64 > uint64(len(e.m.buf)) {
		e.pos = 0
	}
	a := e.m.base + e.pos
	copy(e.m.buf[e.pos:], b)
	e.pos = (e.pos + uint64(len(b)) + 63) &^ 63
	return a
}

// io issues cmd with v's bytes and returns the argument after the ioctl.
func (e *gemEnv) io(cmd uint32, v any) ([]byte, syscall.Errno) {
	arg := bytesOf(v)
	errno := e.f.Ioctl(e.m, cmd, arg)
	return arg, errno
}

func (e *gemEnv) create(size uint64, domains uint64, flags uint64) (uint32, syscall.Errno) {
	out, errno := e.io(abi.DRM_IOCTL_AMDGPU_GEM_CREATE, abi.DRMAmdgpuGemCreate{BOSize: size, Domains: domains, DomainFlags: flags})
	return le32(out, 0), errno
}

func (e *gemEnv) mustCreate(size uint64, domains uint64) uint32 {
	h, errno := e.create(size, domains, 0)
	if errno != 0 {
		e.t.Fatalf("GEM_CREATE %d %#x: %v", size, domains, errno)
	}
	return h
}

func (e *gemEnv) va(op, handle uint32, va, off, size uint64, flags uint32) syscall.Errno {
	_, errno := e.io(abi.DRM_IOCTL_AMDGPU_GEM_VA, abi.DRMAmdgpuGemVA{Handle: handle, Operation: op, VAAddress: va,
		OffsetInBO: off, MapSize: size, Flags: flags})
	return errno
}

const rwx = abi.AMDGPU_VM_PAGE_READABLE | abi.AMDGPU_VM_PAGE_WRITEABLE | abi.AMDGPU_VM_PAGE_EXECUTABLE

func (e *gemEnv) info(h uint32) abi.DRMAmdgpuGemCreateIn {
	ptr := e.put(make([]byte, 32))
	if _, errno := e.io(abi.DRM_IOCTL_AMDGPU_GEM_OP, abi.DRMAmdgpuGemOp{Handle: h, Op: abi.AMDGPU_GEM_OP_GET_GEM_CREATE_INFO, Value: ptr}); errno != 0 {
		e.t.Fatalf("GET_GEM_CREATE_INFO: %v", errno)
	}
	var in abi.DRMAmdgpuGemCreateIn
	decode(e.m.at(ptr, 32), &in)
	return in
}

func (e *gemEnv) ctx() uint32 {
	out, errno := e.io(abi.DRM_IOCTL_AMDGPU_CTX, abi.DRMAmdgpuCtx{Op: abi.AMDGPU_CTX_OP_ALLOC_CTX})
	if errno != 0 {
		e.t.Fatalf("CTX ALLOC: %v", errno)
	}
	return le32(out, 0)
}

func (e *gemEnv) entries(handles ...uint32) uint64 {
	var b []byte
	for _, h := range handles {
		b = append(b, bytesOf(abi.DRMAmdgpuBOListEntry{BOHandle: h})...)
	}
	return e.put(b)
}

func (e *gemEnv) boList(op, list uint32, handles ...uint32) (uint32, syscall.Errno) {
	out, errno := e.io(abi.DRM_IOCTL_AMDGPU_BO_LIST, abi.DRMAmdgpuBOList{Operation: op, ListHandle: list,
		BONumber: uint32(len(handles)), BOInfoSize: 8, BOInfoPtr: e.entries(handles...)})
	return le32(out, 0), errno
}

// chunk builds a drm_amdgpu_cs_chunk of v's bytes in client memory and returns its address.
func (e *gemEnv) chunk(id uint32, v any) uint64 {
	data := bytesOf(v)
	return e.put(bytesOf(abi.DRMAmdgpuCSChunk{ChunkID: id, LengthDW: uint32(len(data) / 4), ChunkData: e.put(data)}))
}

func (e *gemEnv) cs(ctx, list uint32, chunks ...uint64) (uint64, syscall.Errno) {
	var ptrs []byte
	for _, c := range chunks {
		ptrs = binary.LittleEndian.AppendUint64(ptrs, c)
	}
	out, errno := e.io(abi.DRM_IOCTL_AMDGPU_CS, abi.DRMAmdgpuCS{CtxID: ctx, BOListHandle: list, NumChunks: uint32(len(chunks)),
		Chunks: e.put(ptrs)})
	return binary.LittleEndian.Uint64(out), errno
}

func dmaIB(va uint64, bytes uint32) abi.DRMAmdgpuCSChunkIB {
	return abi.DRMAmdgpuCSChunkIB{VAStart: va, IBBytes: bytes, IPType: abi.AMDGPU_HW_IP_DMA}
}

// waitCS returns WAIT_CS's status for seq with an absolute timeout.
func (e *gemEnv) waitCS(ctx uint32, seq uint64, timeout uint64) (uint64, syscall.Errno) {
	out, errno := e.io(abi.DRM_IOCTL_AMDGPU_WAIT_CS, abi.DRMAmdgpuWaitCS{Handle: seq, Timeout: timeout, IPType: abi.AMDGPU_HW_IP_DMA, CtxID: ctx})
	return binary.LittleEndian.Uint64(out), errno
}

func inSecond() uint64 { return monotonicNow() + uint64(time.Second) }

func TestGemCreate(t *testing.T) {
	e := newGemEnv(t)
	const vram, gtt, cpu = abi.AMDGPU_GEM_DOMAIN_VRAM, abi.AMDGPU_GEM_DOMAIN_GTT, abi.AMDGPU_GEM_DOMAIN_CPU
	for _, tc := range []struct {
		name           string
		size, dom, fl  uint64
		errno          syscall.Errno
		placed, domain uint32 // where it went, what GET_GEM_CREATE_INFO reports
	}{
		{"vram", 4096, vram, abi.AMDGPU_GEM_CREATE_VRAM_CLEARED, 0, vram, vram},
		{"gtt rounded", 10, gtt, 0, 0, gtt, gtt},
		{"cpu", 4096, cpu, 0, 0, cpu, cpu},
		{"no domain is system memory", 4096, 0, 0, 0, cpu, 0},
		{"vram full falls back to gtt", 128 << 20, vram, 0, 0, gtt, vram | gtt},
		{"vram|gtt in gtt", 1<<30 + 4096, vram | gtt, 0, syscall.ENOMEM, 0, 0},
		{"larger than every domain", 128 << 30, vram | gtt, 0, syscall.ENOMEM, 0, 0},
		{"larger than vram, gtt full", 100 << 30, vram, 0, syscall.ENOMEM, 0, 0},
		{"size 0", 0, gtt, 0, syscall.EINVAL, 0, 0},
		{"unknown flag", 4096, gtt, 1 << 20, syscall.EINVAL, 0, 0},
		{"contiguous is not settable", 4096, vram, abi.AMDGPU_GEM_CREATE_VRAM_CONTIGUOUS, syscall.EINVAL, 0, 0},
		{"unknown domain", 4096, 0x80, 0, syscall.EINVAL, 0, 0},
		{"encrypted without TMZ", 4096, vram, abi.AMDGPU_GEM_CREATE_ENCRYPTED, syscall.EINVAL, 0, 0},
		{"GDS per-VM", 4096, abi.AMDGPU_GEM_DOMAIN_GDS, abi.AMDGPU_GEM_CREATE_VM_ALWAYS_VALID, syscall.EINVAL, 0, 0},
		{"GDS not modelled", 4096, abi.AMDGPU_GEM_DOMAIN_GDS, 0, syscall.ENOMEM, 0, 0},
		{"doorbell not modelled", 4096, abi.AMDGPU_GEM_DOMAIN_DOORBELL, 0, syscall.ENOMEM, 0, 0},
	} {
		h, errno := e.create(tc.size, tc.dom, tc.fl)
		if errno != tc.errno {
			t.Errorf("%s: errno %v, want %v", tc.name, errno, tc.errno)
			continue
		}
		if errno != 0 {
			continue
		}
		bo := e.f.lookup(h)
		in := e.info(h)
		if bo.buf.Domain != tc.placed || in.Domains != uint64(tc.domain) || in.DomainFlags&abi.AMDGPU_GEM_CREATE_VRAM_CLEARED == 0 ||
			in.BOSize != (tc.size+4095)&^4095 {
			t.Errorf("%s: placed %#x, info %+v", tc.name, bo.buf.Domain, in)
		}
		bo.put(e.f)
		if _, errno := e.io(abi.DRM_IOCTL_GEM_CLOSE, abi.DRMGemClose{Handle: h}); errno != 0 {
			t.Errorf("%s: close: %v", tc.name, errno)
		}
	}
	// Handles are the lowest free ids; CPU_ACCESS_REQUIRED is dropped when it cannot be honoured.
	h1, h2, h3 := e.mustCreate(4096, gtt), e.mustCreate(4096, gtt), e.mustCreate(4096, gtt)
	if h1 != 1 || h2 != 2 || h3 != 3 {
		t.Errorf("handles %d %d %d", h1, h2, h3)
	}
	e.io(abi.DRM_IOCTL_GEM_CLOSE, abi.DRMGemClose{Handle: 2})
	if h := e.mustCreate(4096, gtt); h != 2 {
		t.Errorf("reused handle %d", h)
	}
	if _, errno := e.io(abi.DRM_IOCTL_GEM_CLOSE, abi.DRMGemClose{Handle: 2}); errno != 0 {
		t.Error(errno)
	}
	if _, errno := e.io(abi.DRM_IOCTL_GEM_CLOSE, abi.DRMGemClose{Handle: 2}); errno != syscall.EINVAL {
		t.Errorf("double close: %v", errno)
	}
	out, _ := e.io(abi.DRM_IOCTL_AMDGPU_GEM_CREATE, abi.DRMAmdgpuGemCreate{BOSize: 4096, Alignment: 1<<44 + 1, Domains: vram,
		DomainFlags: abi.AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED})
	if in := e.info(le32(out, 0)); in.Alignment != 4096 || in.DomainFlags != abi.AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED|abi.AMDGPU_GEM_CREATE_VRAM_CLEARED {
		t.Errorf("alignment/flags: %+v", in) // page_alignment is a u32 of pages, shifted in 32 bits
	}
}

func TestGemMmapMetadataOp(t *testing.T) {
	e := newGemEnv(t)
	h := e.mustCreate(8192, abi.AMDGPU_GEM_DOMAIN_GTT)
	out, errno := e.io(abi.DRM_IOCTL_AMDGPU_GEM_MMAP, abi.DRMAmdgpuGemMmap{Handle: h, Pad: 7})
	if bo := e.f.lookup(h); errno != 0 || binary.LittleEndian.Uint64(out) != bo.buf.Offset {
		t.Errorf("GEM_MMAP: %v % x", errno, out)
	} else {
		bo.put(e.f)
	}
	nc, _ := e.create(4096, abi.AMDGPU_GEM_DOMAIN_VRAM, abi.AMDGPU_GEM_CREATE_NO_CPU_ACCESS)
	if _, errno := e.io(abi.DRM_IOCTL_AMDGPU_GEM_MMAP, abi.DRMAmdgpuGemMmap{Handle: nc}); errno != syscall.EPERM {
		t.Errorf("GEM_MMAP of NO_CPU_ACCESS: %v", errno)
	}
	if _, errno := e.io(abi.DRM_IOCTL_AMDGPU_GEM_MMAP, abi.DRMAmdgpuGemMmap{Handle: 99}); errno != syscall.ENOENT {
		t.Errorf("GEM_MMAP of no handle: %v", errno)
	}
	set := abi.DRMAmdgpuGemMetadata{Handle: h, Op: abi.AMDGPU_GEM_METADATA_OP_SET_METADATA, Flags: 5, TilingInfo: 0x1234, DataSizeBytes: 8}
	set.Data[0], set.Data[1], set.Data[2] = 0xa, 0xb, 0xc
	if _, errno := e.io(abi.DRM_IOCTL_AMDGPU_GEM_METADATA, set); errno != 0 {
		t.Fatal(errno)
	}
	out, errno = e.io(abi.DRM_IOCTL_AMDGPU_GEM_METADATA, abi.DRMAmdgpuGemMetadata{Handle: h, Op: abi.AMDGPU_GEM_METADATA_OP_GET_METADATA})
	var got abi.DRMAmdgpuGemMetadata
	decode(out, &got)
	if errno != 0 || got.Flags != 5 || got.TilingInfo != 0x1234 || got.DataSizeBytes != 8 || got.Data[1] != 0xb || got.Data[2] != 0 {
		t.Errorf("GET_METADATA: %v %+v", errno, got)
	}
	set.DataSizeBytes = 257
	if _, errno := e.io(abi.DRM_IOCTL_AMDGPU_GEM_METADATA, set); errno != syscall.EINVAL {
		t.Errorf("metadata of 257 bytes: %v", errno)
	}
	if _, errno := e.io(abi.DRM_IOCTL_AMDGPU_GEM_METADATA, abi.DRMAmdgpuGemMetadata{Handle: h, Op: 9}); errno != 0 {
		t.Errorf("metadata op 9: %v", errno)
	}
	for _, tc := range []struct {
		op    abi.DRMAmdgpuGemOp
		errno syscall.Errno
	}{
		{abi.DRMAmdgpuGemOp{Handle: h, Op: abi.AMDGPU_GEM_OP_GET_GEM_CREATE_INFO, Value: 0xdead0000}, syscall.EFAULT},
		{abi.DRMAmdgpuGemOp{Handle: h, Op: 2}, syscall.EINVAL},
		{abi.DRMAmdgpuGemOp{Handle: 77, Op: 0}, syscall.ENOENT},
		{abi.DRMAmdgpuGemOp{Handle: h, Op: abi.AMDGPU_GEM_OP_SET_PLACEMENT, Value: 0xff}, 0},
	} {
		if _, errno := e.io(abi.DRM_IOCTL_AMDGPU_GEM_OP, tc.op); errno != tc.errno {
			t.Errorf("GEM_OP %+v: %v, want %v", tc.op, errno, tc.errno)
		}
	}
	if in := e.info(h); in.Domains != 7 {
		t.Errorf("after SET_PLACEMENT: %+v", in)
	}
	// PRIME export: the backend installs the fd (kfd's needs kfdemu exec's supervisor, else
	// EOPNOTSUPP, which passes through).
	e.fb.exportErrno = syscall.EOPNOTSUPP
	if _, errno := e.io(abi.DRM_IOCTL_PRIME_HANDLE_TO_FD, abi.DRMPrimeHandle{Handle: h, Flags: abi.DRM_CLOEXEC}); errno != syscall.EOPNOTSUPP {
		t.Errorf("PRIME export, backend refusing: %v", errno)
	}
	e.fb.exportErrno = 0
	out, errno = e.io(abi.DRM_IOCTL_PRIME_HANDLE_TO_FD, abi.DRMPrimeHandle{Handle: h, Flags: abi.DRM_RDWR})
	if errno != 0 || int32(le32(out, 8)) != 102 {
		t.Errorf("PRIME export: %v, fd %d", errno, int32(le32(out, 8)))
	}
	if ex := e.fb.exports; len(ex) != 2 || !ex[0].CloExec || ex[1].CloExec || ex[1].Preferred != 7 || ex[1].Meta == nil {
		t.Errorf("exports %+v", ex)
	}
	out, errno = e.io(abi.DRM_IOCTL_AMDGPU_GEM_WAIT_IDLE, abi.DRMAmdgpuGemWaitIdle{Handle: h, Timeout: inSecond()})
	if errno != 0 || !bytes.Equal(out, make([]byte, 16)) {
		t.Errorf("WAIT_IDLE of an idle object: %v % x", errno, out)
	}
}

func TestGemVA(t *testing.T) {
	e := newGemEnv(t)
	h := e.mustCreate(16384, abi.AMDGPU_GEM_DOMAIN_GTT)
	const base = 0x100000000
	for _, tc := range []struct {
		name          string
		op, handle    uint32
		va, off, size uint64
		flags         uint32
		errno         syscall.Errno
	}{
		{"reserved bottom", abi.AMDGPU_VA_OP_MAP, h, 0xf000, 0, 4096, rwx, syscall.EINVAL},
		{"in the hole", abi.AMDGPU_VA_OP_MAP, h, 0x800000000000, 0, 4096, rwx, syscall.EINVAL},
		{"top reserved", abi.AMDGPU_VA_OP_MAP, h, 1<<48 - 0x402000, 0, 4096, rwx, syscall.EINVAL},
		{"high VA just below top reserved", abi.AMDGPU_VA_OP_MAP, h, 0xffff000000000000 | (1<<48 - 0x403000), 0, 4096, rwx, 0},
		{"bad flags", abi.AMDGPU_VA_OP_MAP, h, base, 0, 4096, 1 << 12, syscall.EINVAL},
		{"bad op", 9, h, base, 0, 4096, rwx, syscall.EINVAL},
		{"no handle", abi.AMDGPU_VA_OP_MAP, 42, base, 0, 4096, rwx, syscall.ENOENT},
		{"unaligned va", abi.AMDGPU_VA_OP_MAP, h, base + 8, 0, 4096, rwx, syscall.EINVAL},
		{"unaligned size", abi.AMDGPU_VA_OP_MAP, h, base, 0, 100, rwx, syscall.EINVAL},
		{"size 0", abi.AMDGPU_VA_OP_MAP, h, base, 0, 0, rwx, syscall.EINVAL},
		{"beyond object", abi.AMDGPU_VA_OP_MAP, h, base, 8192, 12288, rwx, syscall.EINVAL},
		{"map", abi.AMDGPU_VA_OP_MAP, h, base, 0, 16384, rwx, 0},
		{"overlap", abi.AMDGPU_VA_OP_MAP, h, base + 4096, 0, 4096, rwx, syscall.EINVAL},
		{"unmap not at a start", abi.AMDGPU_VA_OP_UNMAP, h, base + 4096, 0, 0, 0, syscall.ENOENT},
		{"clear the middle", abi.AMDGPU_VA_OP_CLEAR, 0, base + 4096, 0, 8192, 0, 0},
		{"remap the middle", abi.AMDGPU_VA_OP_MAP, h, base + 4096, 0, 4096, rwx, 0},
		{"replace beyond the object", abi.AMDGPU_VA_OP_REPLACE, h, base, 4096, 16384, rwx, syscall.EINVAL},
		{"replace", abi.AMDGPU_VA_OP_REPLACE, h, base, 4096, 12288, rwx, 0},
		{"PRT", abi.AMDGPU_VA_OP_MAP, 0, base + 1<<20, 0, 1 << 20, abi.AMDGPU_VM_PAGE_PRT, 0},
		{"unmap PRT", abi.AMDGPU_VA_OP_UNMAP, 0, base + 1<<20, 0, 0, abi.AMDGPU_VM_PAGE_PRT, 0},
		{"clear unaligned", abi.AMDGPU_VA_OP_CLEAR, 0, base, 0, 10, 0, syscall.EINVAL},
	} {
		if errno := e.va(tc.op, tc.handle, tc.va, tc.off, tc.size, tc.flags); errno != tc.errno {
			t.Errorf("%s: %v, want %v", tc.name, errno, tc.errno)
		}
	}
	bo := e.f.lookup(h)
	defer bo.put(e.f)
	// After REPLACE, [base, base+12K) maps offset 4096; [base+12K, base+16K) is what CLEAR left of the
	// first mapping; the high mapping stays.
	var got []uint64
	for _, m := range bo.maps {
		got = append(got, m.va(), m.size(), m.offset)
	}
	want := []uint64{1<<48 - 0x403000, 4096, 0, base + 12288, 4096, 12288, base, 12288, 4096}
	if !slices.Equal(got, want) {
		t.Errorf("mappings after REPLACE: %#x, want %#x", got, want)
	}
	if _, mapped := e.fb.counts(); mapped != 5 {
		t.Errorf("%d pages mapped, want 5", mapped)
	}
	// GEM_CLOSE removes the object's mappings.
	e.io(abi.DRM_IOCTL_GEM_CLOSE, abi.DRMGemClose{Handle: h})
	if _, mapped := e.fb.counts(); mapped != 0 {
		t.Errorf("%d pages mapped after GEM_CLOSE", mapped)
	}
	if errno := e.va(abi.AMDGPU_VA_OP_MAP, h, base, 0, 4096, rwx); errno != syscall.ENOENT {
		t.Errorf("map of a closed handle: %v", errno)
	}
}

func TestCtxIoctl(t *testing.T) {
	e := newGemEnv(t)
	if a, b := e.ctx(), e.ctx(); a != 1 || b != 2 {
		t.Errorf("ids %d %d", a, b)
	}
	for _, tc := range []struct {
		name  string
		in    abi.DRMAmdgpuCtx
		errno syscall.Errno
		out0  uint32 // the first word after the call
	}{
		{"alloc with flags", abi.DRMAmdgpuCtx{Op: abi.AMDGPU_CTX_OP_ALLOC_CTX, Flags: 1}, syscall.EINVAL, 1},
		{"alloc with garbage priority", abi.DRMAmdgpuCtx{Op: abi.AMDGPU_CTX_OP_ALLOC_CTX, Priority: 77}, 0, 3},
		{"alloc HIGH without CAP_SYS_NICE", abi.DRMAmdgpuCtx{Op: abi.AMDGPU_CTX_OP_ALLOC_CTX, Priority: abi.AMDGPU_CTX_PRIORITY_HIGH, CtxID: 9}, syscall.EACCES, 0},
		{"free unknown", abi.DRMAmdgpuCtx{Op: abi.AMDGPU_CTX_OP_FREE_CTX, CtxID: 50}, syscall.EINVAL, 2},
		{"free", abi.DRMAmdgpuCtx{Op: abi.AMDGPU_CTX_OP_FREE_CTX, CtxID: 2}, 0, 2},
		{"query freed", abi.DRMAmdgpuCtx{Op: abi.AMDGPU_CTX_OP_QUERY_STATE, CtxID: 2}, syscall.EINVAL, 3},
		{"query", abi.DRMAmdgpuCtx{Op: abi.AMDGPU_CTX_OP_QUERY_STATE, CtxID: 1}, 0, 0},
		{"query2", abi.DRMAmdgpuCtx{Op: abi.AMDGPU_CTX_OP_QUERY_STATE2, CtxID: 1}, 0, 0},
		{"get pstate", abi.DRMAmdgpuCtx{Op: abi.AMDGPU_CTX_OP_GET_STABLE_PSTATE, CtxID: 1}, 0, 0},
		{"set pstate peak", abi.DRMAmdgpuCtx{Op: abi.AMDGPU_CTX_OP_SET_STABLE_PSTATE, CtxID: 1, Flags: 4}, 0, abi.AMDGPU_CTX_OP_SET_STABLE_PSTATE},
		{"set pstate 5", abi.DRMAmdgpuCtx{Op: abi.AMDGPU_CTX_OP_SET_STABLE_PSTATE, CtxID: 1, Flags: 5}, syscall.EINVAL, abi.AMDGPU_CTX_OP_SET_STABLE_PSTATE},
		{"op 7", abi.DRMAmdgpuCtx{Op: 7}, syscall.EINVAL, 7},
	} {
		out, errno := e.io(abi.DRM_IOCTL_AMDGPU_CTX, tc.in)
		if errno != tc.errno || le32(out, 0) != tc.out0 {
			t.Errorf("%s: %v (want %v), out % x", tc.name, errno, tc.errno, out)
		}
	}
	// Ids end at 4095.
	n := 0
	for {
		_, errno := e.io(abi.DRM_IOCTL_AMDGPU_CTX, abi.DRMAmdgpuCtx{Op: abi.AMDGPU_CTX_OP_ALLOC_CTX})
		if errno == syscall.ENOSPC {
			break
		}
		if n++; errno != 0 || n > 5000 {
			t.Fatalf("alloc %d: %v", n, errno)
		}
	}
	if _, c, _ := e.f.Stats(); c != 4095 {
		t.Errorf("%d contexts", c)
	}
}

func TestBOList(t *testing.T) {
	e := newGemEnv(t)
	a, b := e.mustCreate(4096, abi.AMDGPU_GEM_DOMAIN_GTT), e.mustCreate(4096, abi.AMDGPU_GEM_DOMAIN_VRAM)
	l, errno := e.boList(abi.AMDGPU_BO_LIST_OP_CREATE, 0, a, b, a)
	if errno != 0 || l != 1 {
		t.Fatalf("create: %d %v", l, errno)
	}
	if _, errno := e.boList(abi.AMDGPU_BO_LIST_OP_CREATE, 0, a, 9); errno != syscall.ENOENT {
		t.Errorf("unknown handle: %v", errno)
	}
	if h, errno := e.boList(abi.AMDGPU_BO_LIST_OP_UPDATE, l, b); errno != 0 || h != l {
		t.Errorf("update: %d %v", h, errno)
	}
	if _, errno := e.boList(abi.AMDGPU_BO_LIST_OP_UPDATE, 7, b); errno != syscall.ENOENT {
		t.Errorf("update of unknown list: %v", errno)
	}
	if _, errno := e.boList(9, 0, b); errno != syscall.EINVAL {
		t.Errorf("op 9: %v", errno)
	}
	// The objects live on in the list after their handles are closed.
	e.io(abi.DRM_IOCTL_GEM_CLOSE, abi.DRMGemClose{Handle: b})
	if live, _ := e.fb.counts(); live != 2 {
		t.Errorf("%d buffers live with a list holding a closed one", live)
	}
	if h, errno := e.boList(abi.AMDGPU_BO_LIST_OP_DESTROY, l); errno != 0 || h != 0 {
		t.Errorf("destroy: %d %v", h, errno)
	}
	if live, _ := e.fb.counts(); live != 1 {
		t.Errorf("%d buffers live after the list went", live)
	}
	if _, errno := e.boList(abi.AMDGPU_BO_LIST_OP_DESTROY, 55); errno != 0 {
		t.Errorf("destroy of unknown list: %v", errno)
	}
	// Entry sizes other than 8: a 4-byte entry is the handle only, a 16-byte one is read from its start.
	for _, size := range []uint32{4, 16} {
		var arr []byte
		for range 3 {
			ent := make([]byte, size)
			binary.LittleEndian.PutUint32(ent, a)
			arr = append(arr, ent...)
		}
		out, errno := e.io(abi.DRM_IOCTL_AMDGPU_BO_LIST, abi.DRMAmdgpuBOList{Operation: abi.AMDGPU_BO_LIST_OP_CREATE, BONumber: 3,
			BOInfoSize: size, BOInfoPtr: e.put(arr)})
		if errno != 0 {
			t.Errorf("entry size %d: %v", size, errno)
		}
		e.boList(abi.AMDGPU_BO_LIST_OP_DESTROY, le32(out, 0))
	}
	for _, tc := range []struct {
		name  string
		in    abi.DRMAmdgpuBOList
		errno syscall.Errno
	}{
		{"unreadable", abi.DRMAmdgpuBOList{BONumber: 2, BOInfoSize: 8, BOInfoPtr: 0xdead000}, syscall.EFAULT},
		{"unreadable on destroy", abi.DRMAmdgpuBOList{Operation: abi.AMDGPU_BO_LIST_OP_DESTROY, BONumber: 2, BOInfoSize: 8, BOInfoPtr: 0xdead000}, syscall.EFAULT},
		{"more than kvmalloc", abi.DRMAmdgpuBOList{BONumber: 1 << 28, BOInfoSize: 8, BOInfoPtr: 0x10000}, syscall.ENOMEM},
		{"zero-size entries name handle 0", abi.DRMAmdgpuBOList{BONumber: 1, BOInfoSize: 0, BOInfoPtr: 0}, syscall.ENOENT},
		{"empty list", abi.DRMAmdgpuBOList{}, 0},
	} {
		out, errno := e.io(abi.DRM_IOCTL_AMDGPU_BO_LIST, tc.in)
		if errno != tc.errno {
			t.Errorf("%s: %v, want %v", tc.name, errno, tc.errno)
		}
		if errno == 0 {
			e.boList(abi.AMDGPU_BO_LIST_OP_DESTROY, le32(out, 0))
		}
	}
}

// csEnv is a context and a mapped GTT object of 64 KiB at ibVA with a BO list naming it.
type csEnv struct {
	*gemEnv
	ctx, h, list uint32
	mem          []byte
}

const ibVA = 0x200000000

func newCSEnv(t testing.TB) *csEnv {
	e := &csEnv{gemEnv: newGemEnv(t)}
	e.ctx = e.gemEnv.ctx()
	e.h = e.mustCreate(64<<10, abi.AMDGPU_GEM_DOMAIN_GTT)
	if errno := e.va(abi.AMDGPU_VA_OP_MAP, e.h, ibVA, 0, 64<<10, rwx); errno != 0 {
		t.Fatal(errno)
	}
	e.list, _ = e.boList(abi.AMDGPU_BO_LIST_OP_CREATE, 0, e.h)
	bo := e.f.lookup(e.h)
	e.mem = bo.buf.Mem
	bo.put(e.f)
	return e
}

// store32 is a CPU store into the object while engines may read it.
func (e *csEnv) store32(off int, v uint32) {
	e.fb.mu.Lock()
	binary.LittleEndian.PutUint32(e.mem[off:], v)
	e.fb.mu.Unlock()
}

func TestCSSdma(t *testing.T) {
	e := newCSEnv(t)
	// KFDEvictTest's IB: 16 SDMA NOP dwords, 100 times.
	var last uint64
	for i := 0; i < 100; i++ {
		seq, errno := e.cs(e.ctx, e.list, e.chunk(abi.AMDGPU_CHUNK_ID_IB, dmaIB(ibVA, 64)))
		if errno != 0 || seq != last+1 {
			t.Fatalf("CS %d: seq %d %v", i, seq, errno)
		}
		last = seq
		if st, errno := e.waitCS(e.ctx, seq, inSecond()); errno != 0 || st != 0 {
			t.Fatalf("WAIT_CS %d: %d %v", seq, st, errno)
		}
	}
	// WRITE_LINEAR into the object at +0x1000, with a user fence in a page of its own.
	uf := e.mustCreate(4096, abi.AMDGPU_GEM_DOMAIN_GTT)
	copy(e.mem[0x800:], sdma.AppendWrite(nil, ibVA+0x1000, []uint32{0xcafe, 0xf00d}))
	seq, errno := e.cs(e.ctx, e.list, e.chunk(abi.AMDGPU_CHUNK_ID_IB, dmaIB(ibVA+0x800, 24)),
		e.chunk(abi.AMDGPU_CHUNK_ID_FENCE, abi.DRMAmdgpuCSChunkFence{Handle: uf, Offset: 16}))
	if errno != 0 {
		t.Fatal(errno)
	}
	if st, errno := e.waitCS(e.ctx, ^uint64(0), inSecond()); errno != 0 || st != 0 {
		t.Fatalf("WAIT_CS latest: %d %v", st, errno)
	}
	if binary.LittleEndian.Uint32(e.mem[0x1004:]) != 0xf00d {
		t.Errorf("WRITE_LINEAR: % x", e.mem[0x1000:0x1008])
	}
	if bo := e.f.lookup(uf); binary.LittleEndian.Uint64(bo.buf.Mem[16:]) != seq {
		t.Errorf("user fence %d, want %d", binary.LittleEndian.Uint64(bo.buf.Mem[16:]), seq)
	} else {
		bo.put(e.f)
	}
	// The second DMA ring has its own sequence; a dependency on the first ring's last job.
	ib1 := dmaIB(ibVA, 64)
	ib1.Ring = 1
	seq1, errno := e.cs(e.ctx, 0, e.chunk(abi.AMDGPU_CHUNK_ID_IB, ib1),
		e.chunk(abi.AMDGPU_CHUNK_ID_DEPENDENCIES, abi.DRMAmdgpuCSChunkDep{IPType: abi.AMDGPU_HW_IP_DMA, CtxID: e.ctx, Handle: seq}))
	if errno != 0 || seq1 != 1 {
		t.Errorf("ring 1: %d %v", seq1, errno)
	}
	// WAIT_FENCES over both rings.
	fences := append(bytesOf(abi.DRMAmdgpuFence{CtxID: e.ctx, IPType: abi.AMDGPU_HW_IP_DMA, SeqNo: seq}),
		bytesOf(abi.DRMAmdgpuFence{CtxID: e.ctx, IPType: abi.AMDGPU_HW_IP_DMA, Ring: 1, SeqNo: seq1})...)
	for _, all := range []uint32{0, 1} {
		out, errno := e.io(abi.DRM_IOCTL_AMDGPU_WAIT_FENCES, abi.DRMAmdgpuWaitFences{Fences: e.put(fences), FenceCount: 2, WaitAll: all,
			TimeoutNs: inSecond()})
		if errno != 0 || le32(out, 0) != 1 {
			t.Errorf("WAIT_FENCES all=%d: %v % x", all, errno, out)
		}
	}
}

func TestCSErrors(t *testing.T) {
	e := newCSEnv(t)
	ib := e.chunk(abi.AMDGPU_CHUNK_ID_IB, dmaIB(ibVA, 64))
	withIB := func(mod func(*abi.DRMAmdgpuCSChunkIB)) uint64 {
		c := dmaIB(ibVA, 64)
		mod(&c)
		return e.chunk(abi.AMDGPU_CHUNK_ID_IB, c)
	}
	short := e.put(bytesOf(abi.DRMAmdgpuCSChunk{ChunkID: abi.AMDGPU_CHUNK_ID_IB, LengthDW: 4, ChunkData: e.put(make([]byte, 16))}))
	badData := e.put(bytesOf(abi.DRMAmdgpuCSChunk{ChunkID: abi.AMDGPU_CHUNK_ID_IB, LengthDW: 8, ChunkData: 0xdead000}))
	huge := e.put(bytesOf(abi.DRMAmdgpuCSChunk{ChunkID: abi.AMDGPU_CHUNK_ID_IB, LengthDW: 1 << 30, ChunkData: e.m.base}))
	small := e.mustCreate(8192, abi.AMDGPU_GEM_DOMAIN_GTT)
	for _, tc := range []struct {
		name   string
		ctx    uint32
		list   uint32
		chunks []uint64
		errno  syscall.Errno
	}{
		{"unknown context", 99, 0, []uint64{ib}, syscall.EINVAL},
		{"GFX has no rings", e.ctx, 0, []uint64{withIB(func(c *abi.DRMAmdgpuCSChunkIB) { c.IPType = abi.AMDGPU_HW_IP_GFX })}, syscall.EINVAL},
		{"COMPUTE ring 4", e.ctx, 0, []uint64{withIB(func(c *abi.DRMAmdgpuCSChunkIB) { c.IPType, c.Ring = abi.AMDGPU_HW_IP_COMPUTE, 4 })}, syscall.EINVAL},
		{"DMA ring 2", e.ctx, 0, []uint64{withIB(func(c *abi.DRMAmdgpuCSChunkIB) { c.Ring = 2 })}, syscall.EINVAL},
		{"instance 1", e.ctx, 0, []uint64{withIB(func(c *abi.DRMAmdgpuCSChunkIB) { c.IPInstance = 1 })}, syscall.EINVAL},
		{"IP 9", e.ctx, 0, []uint64{withIB(func(c *abi.DRMAmdgpuCSChunkIB) { c.IPType = 9 })}, syscall.EINVAL},
		{"IB chunk too short", e.ctx, 0, []uint64{short}, syscall.EINVAL},
		{"chunk data unreadable", e.ctx, 0, []uint64{badData}, syscall.EFAULT},
		{"chunk data beyond kvmalloc", e.ctx, 0, []uint64{huge}, syscall.ENOMEM},
		{"chunk pointer unreadable", e.ctx, 0, []uint64{0xdead000}, syscall.EFAULT},
		{"unknown chunk", e.ctx, 0, []uint64{ib, e.chunk(0x33, [2]uint32{})}, syscall.EINVAL},
		{"no IB", e.ctx, 0, []uint64{e.chunk(abi.AMDGPU_CHUNK_ID_DEPENDENCIES, [0]byte{})}, syscall.EINVAL},
		{"user fence of no handle", e.ctx, 0, []uint64{ib, e.chunk(abi.AMDGPU_CHUNK_ID_FENCE, abi.DRMAmdgpuCSChunkFence{Handle: 77})}, syscall.EINVAL},
		{"user fence object not a page", e.ctx, 0, []uint64{ib, e.chunk(abi.AMDGPU_CHUNK_ID_FENCE, abi.DRMAmdgpuCSChunkFence{Handle: small})}, syscall.EINVAL},
		{"user fence offset", e.ctx, 0, []uint64{ib, e.chunk(abi.AMDGPU_CHUNK_ID_FENCE, abi.DRMAmdgpuCSChunkFence{Handle: e.h, Offset: 4089})}, syscall.EINVAL},
		{"two BO_HANDLES", e.ctx, 0, []uint64{ib, e.chunk(abi.AMDGPU_CHUNK_ID_BO_HANDLES, abi.DRMAmdgpuBOListIn{}),
			e.chunk(abi.AMDGPU_CHUNK_ID_BO_HANDLES, abi.DRMAmdgpuBOListIn{})}, syscall.EINVAL},
		{"BO_HANDLES with a bad handle", e.ctx, 0, []uint64{ib, e.chunk(abi.AMDGPU_CHUNK_ID_BO_HANDLES,
			abi.DRMAmdgpuBOListIn{BONumber: 1, BOInfoSize: 8, BOInfoPtr: e.entries(55)})}, syscall.ENOENT},
		{"BO_HANDLES and a list handle", e.ctx, e.list, []uint64{ib, e.chunk(abi.AMDGPU_CHUNK_ID_BO_HANDLES,
			abi.DRMAmdgpuBOListIn{BONumber: 1, BOInfoSize: 8, BOInfoPtr: e.entries(e.h)})}, syscall.EINVAL},
		{"unknown list", e.ctx, 33, []uint64{ib}, syscall.ENOENT},
		{"syncobj in", e.ctx, 0, []uint64{ib, e.chunk(abi.AMDGPU_CHUNK_ID_SYNCOBJ_IN, abi.DRMAmdgpuCSChunkSem{Handle: 1})}, syscall.ENOENT},
		{"syncobj out", e.ctx, 0, []uint64{ib, e.chunk(abi.AMDGPU_CHUNK_ID_SYNCOBJ_OUT, abi.DRMAmdgpuCSChunkSem{Handle: 1})}, syscall.EINVAL},
		{"two empty signal chunks", e.ctx, 0, []uint64{ib, e.chunk(abi.AMDGPU_CHUNK_ID_SYNCOBJ_OUT, [0]byte{}),
			e.chunk(abi.AMDGPU_CHUNK_ID_SYNCOBJ_TIMELINE_SIGNAL, [0]byte{})}, syscall.EINVAL},
		{"timeline wait", e.ctx, 0, []uint64{ib, e.chunk(abi.AMDGPU_CHUNK_ID_SYNCOBJ_TIMELINE_WAIT, abi.DRMAmdgpuCSChunkSyncobj{Handle: 1})}, syscall.ENOENT},
		{"dependency not submitted", e.ctx, 0, []uint64{ib, e.chunk(abi.AMDGPU_CHUNK_ID_DEPENDENCIES,
			abi.DRMAmdgpuCSChunkDep{IPType: abi.AMDGPU_HW_IP_DMA, CtxID: e.ctx, Handle: 5})}, syscall.EINVAL},
		{"dependency on unknown context", e.ctx, 0, []uint64{ib, e.chunk(abi.AMDGPU_CHUNK_ID_DEPENDENCIES,
			abi.DRMAmdgpuCSChunkDep{IPType: abi.AMDGPU_HW_IP_DMA, CtxID: 9, Handle: 5})}, syscall.EINVAL},
		{"shadow flags", e.ctx, 0, []uint64{ib, e.chunk(abi.AMDGPU_CHUNK_ID_CP_GFX_SHADOW, [8]uint32{6: 2})}, syscall.EINVAL},
		{"empty syncobj chunks", e.ctx, 0, []uint64{ib, e.chunk(abi.AMDGPU_CHUNK_ID_SYNCOBJ_IN, [0]byte{}),
			e.chunk(abi.AMDGPU_CHUNK_ID_SYNCOBJ_OUT, [0]byte{})}, 0},
	} {
		if _, errno := e.cs(tc.ctx, tc.list, tc.chunks...); errno != tc.errno {
			t.Errorf("%s: %v, want %v", tc.name, errno, tc.errno)
		}
	}
	if _, errno := e.io(abi.DRM_IOCTL_AMDGPU_CS, abi.DRMAmdgpuCS{CtxID: e.ctx}); errno != syscall.EINVAL {
		t.Errorf("no chunks: %v", errno)
	}
	if _, errno := e.waitCS(e.ctx, 1000, inSecond()); errno != syscall.EINVAL {
		t.Errorf("WAIT_CS of a sequence not submitted: %v", errno)
	}
	if _, errno := e.waitCS(77, 1, inSecond()); errno != syscall.EINVAL {
		t.Errorf("WAIT_CS of an unknown context: %v", errno)
	}
}

// TestCSFaultAndWait: a POLL_REGMEM IB keeps its fence (and its objects) busy until memory changes;
// WAIT_CS and GEM_WAIT_IDLE time out meanwhile; a faulting IB makes the context guilty.
func TestCSFaultAndWait(t *testing.T) {
	e := newCSEnv(t)
	poll := sdma.AppendPoll(nil, sdma.Poll{MemPoll: true, Addr: ibVA + 0x2000, Value: 1, Mask: ^uint32(0), Func: sdma.PollEqual, Retry: 0xfff})
	copy(e.mem[0x100:], poll)
	seq, errno := e.cs(e.ctx, e.list, e.chunk(abi.AMDGPU_CHUNK_ID_IB, dmaIB(ibVA+0x100, uint32(len(poll)))))
	if errno != 0 {
		t.Fatal(errno)
	}
	if st, errno := e.waitCS(e.ctx, seq, 0); errno != 0 || st != 1 {
		t.Errorf("WAIT_CS of a running job, timeout 0: %d %v", st, errno)
	}
	if st, errno := e.waitCS(e.ctx, seq, monotonicNow()+uint64(20*time.Millisecond)); errno != 0 || st != 1 {
		t.Errorf("WAIT_CS of a running job, 20 ms: %d %v", st, errno)
	}
	out, errno := e.io(abi.DRM_IOCTL_AMDGPU_GEM_WAIT_IDLE, abi.DRMAmdgpuGemWaitIdle{Handle: e.h, Timeout: 0})
	if errno != 0 || le32(out, 0) != 1 {
		t.Errorf("WAIT_IDLE of a busy object: %v % x", errno, out)
	}
	e.store32(0x2000, 1)
	if st, errno := e.waitCS(e.ctx, seq, ^uint64(0)); errno != 0 || st != 0 {
		t.Errorf("WAIT_CS forever: %d %v", st, errno)
	}
	// A fault: FENCE to an unmapped address.
	copy(e.mem[0x300:], sdma.AppendFence(nil, 0x900000000, 1))
	seq, errno = e.cs(e.ctx, e.list, e.chunk(abi.AMDGPU_CHUNK_ID_IB, dmaIB(ibVA+0x300, 16)))
	if errno != 0 {
		t.Fatal(errno)
	}
	if _, errno := e.waitCS(e.ctx, seq, inSecond()); errno != syscall.ETIME {
		t.Errorf("WAIT_CS of a faulting job: %v", errno)
	}
	if _, errno := e.cs(e.ctx, e.list, e.chunk(abi.AMDGPU_CHUNK_ID_IB, dmaIB(ibVA, 64))); errno != syscall.ECANCELED {
		t.Errorf("CS on a guilty context: %v", errno)
	}
	out, _ = e.io(abi.DRM_IOCTL_AMDGPU_CTX, abi.DRMAmdgpuCtx{Op: abi.AMDGPU_CTX_OP_QUERY_STATE2, CtxID: e.ctx})
	if binary.LittleEndian.Uint64(out) != abi.AMDGPU_CTX_QUERY2_FLAGS_RESET|abi.AMDGPU_CTX_QUERY2_FLAGS_GUILTY {
		t.Errorf("QUERY_STATE2: % x", out)
	}
	out, _ = e.io(abi.DRM_IOCTL_AMDGPU_CTX, abi.DRMAmdgpuCtx{Op: abi.AMDGPU_CTX_OP_QUERY_STATE, CtxID: e.ctx})
	if le32(out, 12) != abi.AMDGPU_CTX_UNKNOWN_RESET {
		t.Errorf("QUERY_STATE: % x", out)
	}
	// Another context of the file is not guilty and still submits.
	c2 := e.gemEnv.ctx()
	if seq, errno := e.cs(c2, e.list, e.chunk(abi.AMDGPU_CHUNK_ID_IB, dmaIB(ibVA, 64))); errno != 0 || seq != 1 {
		t.Errorf("CS on an innocent context: %d %v", seq, errno)
	}
	// A job that never ends is stopped by Close (the test's cleanup checks nothing leaks).
	e.store32(0x2000, 0)
	if _, errno := e.cs(c2, e.list, e.chunk(abi.AMDGPU_CHUNK_ID_IB, dmaIB(ibVA+0x100, uint32(len(poll))))); errno != 0 {
		t.Fatal(errno)
	}
}

// TestCSCompute: COMPUTE IBs go to the Backend's PM4 engine, in order, with their VA's high bits
// dropped; an engine error makes the context guilty.
func TestCSCompute(t *testing.T) {
	e := newCSEnv(t)
	ib := func(va uint64, bytes uint32) uint64 {
		return e.chunk(abi.AMDGPU_CHUNK_ID_IB, abi.DRMAmdgpuCSChunkIB{VAStart: va, IBBytes: bytes, IPType: abi.AMDGPU_HW_IP_COMPUTE, Ring: 3})
	}
	seq, errno := e.cs(e.ctx, e.list, ib(0xffff800000001000, 64), ib(0x2000, 8))
	if errno != 0 || seq != 1 {
		t.Fatalf("CS: %d %v", seq, errno)
	}
	w := abi.DRMAmdgpuWaitCS{Handle: seq, Timeout: inSecond(), IPType: abi.AMDGPU_HW_IP_COMPUTE, Ring: 3, CtxID: e.ctx}
	if out, errno := e.io(abi.DRM_IOCTL_AMDGPU_WAIT_CS, w); errno != 0 || binary.LittleEndian.Uint64(out) != 0 {
		t.Fatalf("WAIT_CS: %v % x", errno, out)
	}
	e.fb.mu.Lock()
	got := slices.Clone(e.fb.pm4)
	e.fb.mu.Unlock()
	if !slices.Equal(got, []IB{{0x800000001000, 16}, {0x2000, 2}}) {
		t.Errorf("PM4 IBs %+v", got)
	}
	seq, _ = e.cs(e.ctx, e.list, ib(0x3000, 0))
	w.Handle = seq
	if _, errno := e.io(abi.DRM_IOCTL_AMDGPU_WAIT_CS, w); errno != syscall.ETIME {
		t.Errorf("WAIT_CS of a failed PM4 job: %v", errno)
	}
}

// TestPrimeImport: PRIME_FD_TO_HANDLE of a dma-buf the file exported gives the object's own handle
// (drm_prime_lookup_buf_handle); another dma-buf gets a new handle to an object over its memory,
// which GEM_VA maps and GEM_CLOSE releases; an fd that is no dma-buf of the device is EINVAL.
func TestPrimeImport(t *testing.T) {
	e := newGemEnv(t)
	h := e.mustCreate(8192, abi.AMDGPU_GEM_DOMAIN_GTT)
	out, errno := e.io(abi.DRM_IOCTL_PRIME_HANDLE_TO_FD, abi.DRMPrimeHandle{Handle: h, Flags: abi.DRM_CLOEXEC})
	fd := int32(le32(out, 8))
	if errno != 0 {
		t.Fatal(errno)
	}
	out, errno = e.io(abi.DRM_IOCTL_PRIME_FD_TO_HANDLE, abi.DRMPrimeHandle{FD: fd})
	if errno != 0 || le32(out, 0) != h {
		t.Fatalf("import of its own export: %v handle %d, want %d", errno, le32(out, 0), h)
	}
	// A second file imports it as a new object of its own.
	e2 := newGemEnvOn(t, e.fb)
	out, errno = e2.io(abi.DRM_IOCTL_PRIME_FD_TO_HANDLE, abi.DRMPrimeHandle{FD: fd})
	h2 := le32(out, 0)
	if errno != 0 || h2 == 0 {
		t.Fatalf("import in another file: %v %d", errno, h2)
	}
	if out, errno := e2.io(abi.DRM_IOCTL_PRIME_FD_TO_HANDLE, abi.DRMPrimeHandle{FD: fd}); errno != 0 || le32(out, 0) != h2 {
		t.Fatalf("second import: %v %d, want %d", errno, le32(out, 0), h2)
	}
	if in := e2.info(h2); in.BOSize != 8192 || in.Domains != abi.AMDGPU_GEM_DOMAIN_GTT {
		t.Errorf("imported object %+v", in)
	}
	if errno := e2.va(abi.AMDGPU_VA_OP_MAP, h2, 0x200000000, 0, 8192, rwx); errno != 0 {
		t.Fatalf("GEM_VA of the import: %v", errno)
	}
	if _, errno := e2.io(abi.DRM_IOCTL_PRIME_FD_TO_HANDLE, abi.DRMPrimeHandle{FD: 3}); errno != syscall.EINVAL {
		t.Errorf("an fd that is no dma-buf: %v", errno)
	}
	live, _ := e.fb.counts()
	if _, errno := e2.io(abi.DRM_IOCTL_GEM_CLOSE, abi.DRMGemClose{Handle: h2}); errno != 0 {
		t.Fatal(errno)
	}
	if l, _ := e.fb.counts(); l != live-1 {
		t.Errorf("live buffers %d after closing the import, want %d", l, live-1)
	}
}

// newGemEnvOn opens a second file over fb (another client of the same backend); it is closed
// before the first one's checks.
func newGemEnvOn(t testing.TB, fb *fakeBackend) *gemEnv {
	e := &gemEnv{t: t, fb: fb, m: &fakeMem{base: 0x10000, buf: make([]byte, 1<<20), tgid: fakePid + 1}}
	e.f = NewFile(mi210(t), fb, nil)
	t.Cleanup(e.f.Close)
	return e
}
