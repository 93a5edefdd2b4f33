package drm

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/bits"
	"syscall"
	"testing"

	"github.com/kfdemu/kfdemu/kfd/abi"
	"github.com/kfdemu/kfdemu/topology"
)

// fakeMem is a client address space with one mapped window [base, base+len(buf)).
type fakeMem struct {
	base uint64
	buf  []byte
	tgid int
	intr <-chan struct{} // the caller's interrupt (nil: never)
}

func (f *fakeMem) Interrupted() <-chan struct{} { return f.intr }

var errFault = errors.New("fault")

// fakePid is the tgid of the tests' clients: above any pid_max (1 << 22), so no process of the
// machine has it (capability and uid lookups in /proc find nothing, as for an unprivileged client).
const fakePid = 1 << 30

func newMem() *fakeMem { return &fakeMem{base: 0x10000, buf: make([]byte, 1<<16), tgid: fakePid} }

func (f *fakeMem) Tgid() int { return f.tgid }

func (f *fakeMem) span(addr uint64, n int) ([]byte, error) {
	if addr < f.base || addr-f.base > uint64(len(f.buf)) || uint64(n) > uint64(len(f.buf))-(addr-f.base) {
		return nil, errFault
	}
	return f.buf[addr-f.base : addr-f.base+uint64(n)], nil
}

func (f *fakeMem) ReadMemory(addr uint64, p []byte) error {
	s, err := f.span(addr, len(p))
	if err == nil {
		copy(p, s)
	}
	return err
}

func (f *fakeMem) WriteMemory(addr uint64, p []byte) error {
	s, err := f.span(addr, len(p))
	if err == nil {
		copy(s, p)
	}
	return err
}

func (f *fakeMem) at(addr uint64, n int) []byte {
	s, err := f.span(addr, n)
	if err != nil {
		panic(err)
	}
	return s
}

// mi210 is the render node of the default profile's GPU.
func mi210(t testing.TB) *Device {
	s, err := topology.Profile("mi210")
	if err != nil {
		t.Fatal(err)
	}
	return NewDevice(InfoFromNode(s, s.GPUs()[0]), func() Usage { return Usage{VRAM: 1 << 30, VisibleVRAM: 1 << 29, GTT: 1 << 20} })
}

func argOf(v any) []byte { return bytesOf(v) }

// query issues DRM_IOCTL_AMDGPU_INFO with the result buffer at mem.base+0x1000.
func query(d *Device, m *fakeMem, id uint32, size uint32, union [16]byte) ([]byte, syscall.Errno) {
	ptr := m.base + 0x1000
	clear(m.at(ptr, 4096))
	arg := argOf(abi.DRMAmdgpuInfo{ReturnPointer: ptr, ReturnSize: size, Query: id, Union: union})
	e := ioctl(d, m, abi.DRM_IOCTL_AMDGPU_INFO, arg)
	return m.at(ptr, int(min(size, 4096))), e
}

func union(words ...uint32) (u [16]byte) {
	for i, w := range words {
		binary.LittleEndian.PutUint32(u[i*4:], w)
	}
	return
}

func TestVersionLikeDrmGetVersion(t *testing.T) {
	d, m := mi210(t), newMem()
	// First pass: all lengths 0, as drmGetVersion does to learn the lengths.
	arg := argOf(abi.DRMVersion{})
	if e := ioctl(d, m, abi.DRM_IOCTL_VERSION, arg); e != 0 {
		t.Fatal(e)
	}
	var v abi.DRMVersion
	decode(arg, &v)
	if v.VersionMajor != 3 || v.VersionMinor != 57 || v.NameLen != 6 || v.DateLen != 8 || v.DescLen != 7 {
		t.Fatalf("first pass: %+v", v)
	}
	// Second pass with buffers; name truncated to 3 bytes reports the full length.
	nameP, dateP, descP := m.base, m.base+64, m.base+128
	arg = argOf(abi.DRMVersion{NameLen: 3, Name: nameP, DateLen: 8, Date: dateP, DescLen: 100, Desc: descP})
	if e := ioctl(d, m, abi.DRM_IOCTL_VERSION, arg); e != 0 {
		t.Fatal(e)
	}
	decode(arg, &v)
	if got := string(m.at(nameP, 4)); got != "amd\x00" || v.NameLen != 6 {
		t.Errorf("name %q len %d", got, v.NameLen)
	}
	if got := string(m.at(dateP, 8)); got != "20150101" {
		t.Errorf("date %q", got)
	}
	if got := string(m.at(descP, 8)); got != "AMD GPU\x00" || v.DescLen != 7 {
		t.Errorf("desc %q len %d", got, v.DescLen)
	}
	// A bad pointer with a non-zero length faults; a NULL pointer is skipped.
	arg = argOf(abi.DRMVersion{NameLen: 6, Name: 0xdead0000})
	if e := ioctl(d, m, abi.DRM_IOCTL_VERSION, arg); e != syscall.EFAULT {
		t.Errorf("bad name pointer: %v", e)
	}
	arg = argOf(abi.DRMVersion{NameLen: 6, Name: 0})
	if e := ioctl(d, m, abi.DRM_IOCTL_VERSION, arg); e != 0 {
		t.Errorf("NULL name pointer: %v", e)
	}
}

func TestGetClient(t *testing.T) {
	d, m := mi210(t), newMem()
	arg := argOf(abi.DRMClient{Idx: 0, Auth: 7, Magic: 9})
	if e := ioctl(d, m, abi.DRM_IOCTL_GET_CLIENT, arg); e != 0 {
		t.Fatal(e)
	}
	var c abi.DRMClient
	decode(arg, &c)
	if c != (abi.DRMClient{Idx: 0, Auth: 0, Pid: fakePid, UID: 65534}) {
		t.Errorf("got %+v", c)
	}
	arg = argOf(abi.DRMClient{Idx: 1})
	if e := ioctl(d, m, abi.DRM_IOCTL_GET_CLIENT, arg); e != syscall.EINVAL {
		t.Errorf("idx 1: %v", e)
	}
}

func TestGetCap(t *testing.T) {
	headless := mi210(t)
	s, _ := topology.Profile("rx6800")
	display := NewDevice(InfoFromNode(s, s.GPUs()[0]), nil)
	for _, tc := range []struct {
		cap        uint64
		head, disp uint64
		errno      syscall.Errno
	}{
		{abi.DRM_CAP_DUMB_BUFFER, 1, 1, 0},
		{abi.DRM_CAP_PRIME, 3, 3, 0},
		{abi.DRM_CAP_TIMESTAMP_MONOTONIC, 1, 1, 0},
		{abi.DRM_CAP_SYNCOBJ, 0, 0, 0},
		{abi.DRM_CAP_SYNCOBJ_TIMELINE, 0, 0, 0},
		{abi.DRM_CAP_DUMB_PREFERRED_DEPTH, 0, 24, 0},
		{abi.DRM_CAP_ASYNC_PAGE_FLIP, 0, 1, 0},
		{abi.DRM_CAP_CURSOR_WIDTH, 64, 256, 0},
		{abi.DRM_CAP_ADDFB2_MODIFIERS, 1, 1, 0},
		{0, 0, 0, syscall.EINVAL},
		{0x16, 0, 0, syscall.EINVAL},
		{1 << 40, 0, 0, syscall.EINVAL},
	} {
		for _, dv := range []struct {
			d    *Device
			want uint64
		}{{headless, tc.head}, {display, tc.disp}} {
			arg := argOf(abi.DRMGetCap{Capability: tc.cap, Value: 99})
			e := ioctl(dv.d, newMem(), abi.DRM_IOCTL_GET_CAP, arg)
			var c abi.DRMGetCap
			decode(arg, &c)
			if e != tc.errno || c.Value != dv.want {
				t.Errorf("cap %#x display=%v: value %d errno %v, want %d %v", tc.cap, dv.d.info.Display, c.Value, e, dv.want, tc.errno)
			}
		}
	}
}

// TestDispatch covers drm_ioctl's table walk, permissions and size rules.
func TestDispatch(t *testing.T) {
	d := mi210(t)
	iowr := func(nr, size uint32) uint32 { return abi.IOC(abi.IOCRead|abi.IOCWrite, 'd', nr, size) }
	for _, tc := range []struct {
		name  string
		cmd   uint32
		arg   []byte
		errno syscall.Errno
	}{
		{"wrong type", abi.IOC(abi.IOCRead|abi.IOCWrite, 'K', 0, 64), make([]byte, 64), syscall.ENOTTY},
		{"legacy IRQ_BUSID has no function", iowr(0x03, 16), make([]byte, 16), syscall.EINVAL},
		{"beyond core table", iowr(0xd1, 8), make([]byte, 8), syscall.EINVAL},
		{"core 0xff", iowr(0xff, 8), make([]byte, 8), syscall.EINVAL},
		{"driver gap 0x0a", iowr(0x4a, 8), make([]byte, 8), syscall.EINVAL},
		{"driver beyond num_ioctls", iowr(0x56, 8), make([]byte, 8), syscall.EINVAL},
		{"driver 0x9f", iowr(0x9f, 8), make([]byte, 8), syscall.EINVAL},
		{"SET_CLIENT_CAP not render-allowed", abi.DRM_IOCTL_SET_CLIENT_CAP, argOf(abi.DRMSetClientCap{Capability: 2, Value: 1}), syscall.EACCES},
		{"SET_MASTER", abi.DRM_IOCTL_SET_MASTER, nil, syscall.EACCES},
		{"GET_UNIQUE", 0xc0106401, make([]byte, 16), syscall.EACCES},
		{"MODE_GETRESOURCES", 0xc04064a0, make([]byte, 64), syscall.EACCES},
		{"MODE_CLOSEFB", 0xc00864d0, make([]byte, 8), syscall.EACCES},
		{"AMDGPU_SCHED is DRM_MASTER", abi.DRM_IOCTL_AMDGPU_SCHED, make([]byte, 16), syscall.EACCES},
		{"GEM_CLOSE unknown handle", abi.DRM_IOCTL_GEM_CLOSE, argOf(abi.DRMGemClose{Handle: 1}), syscall.EINVAL},
		{"PRIME_HANDLE_TO_FD bad flags", abi.DRM_IOCTL_PRIME_HANDLE_TO_FD, argOf(abi.DRMPrimeHandle{Handle: 1, Flags: 4}), syscall.EINVAL},
		{"PRIME_HANDLE_TO_FD no handle", abi.DRM_IOCTL_PRIME_HANDLE_TO_FD, argOf(abi.DRMPrimeHandle{Handle: 1, Flags: abi.DRM_CLOEXEC | abi.DRM_RDWR}), syscall.ENOENT},
		{"PRIME_FD_TO_HANDLE", abi.DRM_IOCTL_PRIME_FD_TO_HANDLE, argOf(abi.DRMPrimeHandle{FD: 3}), syscall.EINVAL},
		{"SYNCOBJ_CREATE", abi.DRM_IOCTL_SYNCOBJ_CREATE, make([]byte, 8), syscall.EOPNOTSUPP},
		{"SYNCOBJ_EVENTFD", 0xc01864cf, make([]byte, 24), syscall.EOPNOTSUPP},
		{"GEM_CREATE without a backend", abi.DRM_IOCTL_AMDGPU_GEM_CREATE, argOf(abi.DRMAmdgpuGemCreate{BOSize: 4096, Domains: 4}), syscall.ENODEV},
		{"GEM_MMAP", abi.DRM_IOCTL_AMDGPU_GEM_MMAP, argOf(abi.DRMAmdgpuGemMmap{Handle: 1}), syscall.ENOENT},
		{"GEM_OP", abi.DRM_IOCTL_AMDGPU_GEM_OP, make([]byte, 16), syscall.ENOENT},
		{"GEM_METADATA", abi.DRM_IOCTL_AMDGPU_GEM_METADATA, make([]byte, 288), syscall.ENOENT},
		{"GEM_WAIT_IDLE", abi.DRM_IOCTL_AMDGPU_GEM_WAIT_IDLE, make([]byte, 16), syscall.ENOENT},
		{"GEM_VA reserved bottom", abi.DRM_IOCTL_AMDGPU_GEM_VA, make([]byte, 40), syscall.EINVAL},
		{"GEM_USERPTR", abi.DRM_IOCTL_AMDGPU_GEM_USERPTR, make([]byte, 24), syscall.EOPNOTSUPP},
		{"CTX op 0", abi.DRM_IOCTL_AMDGPU_CTX, make([]byte, 16), syscall.EINVAL},
		{"CS without chunks", abi.DRM_IOCTL_AMDGPU_CS, make([]byte, 24), syscall.EINVAL},
		{"VM op 0", abi.DRM_IOCTL_AMDGPU_VM, make([]byte, 8), syscall.EINVAL},
	} {
		if e := ioctl(d, newMem(), tc.cmd, tc.arg); e != tc.errno {
			t.Errorf("%s: errno %v, want %v", tc.name, e, tc.errno)
		}
	}
}

func TestSizeRules(t *testing.T) {
	d, m := mi210(t), newMem()
	// A shorter VERSION struct (old ABI size 32): the kernel works on a zero-extended 64-byte copy and
	// copies back only 32 bytes.
	short := make([]byte, 32)
	if e := ioctl(d, m, abi.IOC(abi.IOCRead|abi.IOCWrite, 'd', 0, 32), short); e != 0 {
		t.Fatal(e)
	}
	if binary.LittleEndian.Uint32(short[4:]) != 57 || binary.LittleEndian.Uint64(short[16:]) != 6 {
		t.Errorf("short version: % x", short)
	}
	// A longer GET_CAP (24 bytes): the kernel copy is 24 bytes, so the extra tail goes out as it came in.
	long := append(argOf(abi.DRMGetCap{Capability: abi.DRM_CAP_PRIME}), 1, 2, 3, 4, 5, 6, 7, 8)
	if e := ioctl(d, m, abi.IOC(abi.IOCRead|abi.IOCWrite, 'd', 0x0c, 24), long); e != 0 {
		t.Fatal(e)
	}
	if binary.LittleEndian.Uint64(long[8:]) != 3 || !bytes.Equal(long[16:], []byte{1, 2, 3, 4, 5, 6, 7, 8}) {
		t.Errorf("long get_cap: % x", long)
	}
	// GET_CAP sent as _IOR: nothing is copied in, so the capability reads as 0 (EINVAL), and the
	// zeroed struct is copied out.
	ior := argOf(abi.DRMGetCap{Capability: abi.DRM_CAP_PRIME, Value: 5})
	if e := ioctl(d, m, abi.IOC(abi.IOCRead, 'd', 0x0c, 16), ior); e != syscall.EINVAL {
		t.Errorf("_IOR get_cap: %v", e)
	}
	if !bytes.Equal(ior, make([]byte, 16)) {
		t.Errorf("_IOR get_cap out: % x", ior)
	}
	// AMDGPU_INFO is _IOW: sent as _IOWR, nothing is copied back into the argument.
	arg := argOf(abi.DRMAmdgpuInfo{ReturnPointer: m.base, ReturnSize: 4, Query: abi.AMDGPU_INFO_ACCEL_WORKING})
	orig := append([]byte(nil), arg...)
	if e := ioctl(d, m, abi.IOC(abi.IOCRead|abi.IOCWrite, 'd', 0x45, 32), arg); e != 0 || !bytes.Equal(arg, orig) {
		t.Errorf("INFO as _IOWR: %v % x", e, arg)
	}
	// Error paths still copy out (drm_ioctl copies kdata back whatever the return value).
	c := argOf(abi.DRMClient{Idx: 3, Auth: 1})
	if e := ioctl(d, m, abi.DRM_IOCTL_GET_CLIENT, c); e != syscall.EINVAL || binary.LittleEndian.Uint32(c[4:]) != 1 {
		t.Errorf("get_client idx 3: %v % x", e, c)
	}
}

func TestInfoQueries(t *testing.T) {
	d, m := mi210(t), newMem()
	u32 := func(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }
	u64 := func(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }
	for _, tc := range []struct {
		name  string
		id    uint32
		size  uint32
		un    [16]byte
		errno syscall.Errno
		check func(b []byte) bool
	}{
		{"accel working", abi.AMDGPU_INFO_ACCEL_WORKING, 4, union(), 0, func(b []byte) bool { return u32(b) == 1 }},
		{"accel working truncated", abi.AMDGPU_INFO_ACCEL_WORKING, 2, union(), 0, func(b []byte) bool { return b[0] == 1 && b[1] == 0 }},
		{"vram usage", abi.AMDGPU_INFO_VRAM_USAGE, 8, union(), 0, func(b []byte) bool { return u64(b) == 1<<30 }},
		{"vis vram usage", abi.AMDGPU_INFO_VIS_VRAM_USAGE, 8, union(), 0, func(b []byte) bool { return u64(b) == 1<<29 }},
		{"gtt usage", abi.AMDGPU_INFO_GTT_USAGE, 8, union(), 0, func(b []byte) bool { return u64(b) == 1<<20 }},
		{"vram_gtt", abi.AMDGPU_INFO_VRAM_GTT, 24, union(), 0, func(b []byte) bool {
			return u64(b) == 68702699520-8<<20 && u64(b[8:]) == u64(b) && u64(b[16:]) > 0
		}},
		{"memory", abi.AMDGPU_INFO_MEMORY, 96, union(), 0, func(b []byte) bool {
			return u64(b) == 68702699520 && u64(b[8:]) == 68702699520-8<<20 && u64(b[16:]) == 1<<30 &&
				u64(b[24:]) == u64(b[8:])*3/4 && u64(b[48:]) == 1<<29 && u64(b[80:]) == 1<<20
		}},
		{"fw mec", abi.AMDGPU_INFO_FW_VERSION, 8, union(abi.AMDGPU_INFO_FW_GFX_MEC), 0, func(b []byte) bool { return u32(b) == 92 }},
		{"fw mec2", abi.AMDGPU_INFO_FW_VERSION, 8, union(abi.AMDGPU_INFO_FW_GFX_MEC, 0, 1), 0, func(b []byte) bool { return u32(b) == 92 }},
		{"fw mec index 2", abi.AMDGPU_INFO_FW_VERSION, 8, union(abi.AMDGPU_INFO_FW_GFX_MEC, 0, 2), syscall.EINVAL, nil},
		{"fw sdma 4", abi.AMDGPU_INFO_FW_VERSION, 8, union(abi.AMDGPU_INFO_FW_SDMA, 0, 4), 0, func(b []byte) bool { return u32(b) == 9 }},
		{"fw sdma 5", abi.AMDGPU_INFO_FW_VERSION, 8, union(abi.AMDGPU_INFO_FW_SDMA, 0, 5), syscall.EINVAL, nil},
		{"fw ip instance 1", abi.AMDGPU_INFO_FW_VERSION, 8, union(abi.AMDGPU_INFO_FW_GFX_MEC, 1), syscall.EINVAL, nil},
		{"fw vce absent", abi.AMDGPU_INFO_FW_VERSION, 8, union(abi.AMDGPU_INFO_FW_VCE), 0, func(b []byte) bool { return u64(b) == 0 }},
		{"fw unknown type", abi.AMDGPU_INFO_FW_VERSION, 8, union(0x40), syscall.EINVAL, nil},
		{"gb_addr_config", abi.AMDGPU_INFO_READ_MMR_REG, 4, union(0x263e, 1, 0xffffffff), 0, func(b []byte) bool { return u32(b) == 0x22014042 }},
		{"mmr count 0", abi.AMDGPU_INFO_READ_MMR_REG, 4, union(0x263e, 0, 0xffffffff), 0, func(b []byte) bool { return u32(b) == 0 }},
		{"mmr disallowed", abi.AMDGPU_INFO_READ_MMR_REG, 4, union(0x263d, 1, 0xffffffff), syscall.EFAULT, nil},
		{"mmr run past allowed", abi.AMDGPU_INFO_READ_MMR_REG, 8, union(0x263e, 2, 0xffffffff), syscall.EFAULT, nil},
		{"mmr count 129", abi.AMDGPU_INFO_READ_MMR_REG, 4, union(0x263e, 129, 0xffffffff), syscall.EINVAL, nil},
		{"mmr se 4", abi.AMDGPU_INFO_READ_MMR_REG, 4, union(0x263e, 1, 0xff04), syscall.EINVAL, nil},
		{"mmr sh 2", abi.AMDGPU_INFO_READ_MMR_REG, 4, union(0x263e, 1, 0x0200), syscall.EINVAL, nil},
		{"mmr se 3 sh 1", abi.AMDGPU_INFO_READ_MMR_REG, 4, union(0x263e, 1, 0x0103), 0, func(b []byte) bool { return u32(b) == 0x22014042 }},
		{"hw ip compute", abi.AMDGPU_INFO_HW_IP_INFO, 32, union(abi.AMDGPU_HW_IP_COMPUTE), 0, func(b []byte) bool {
			return u32(b) == 9 && u32(b[4:]) == 0 && u32(b[16:]) == 32 && u32(b[24:]) == 0xf && u32(b[28:]) == 0x090402
		}},
		{"hw ip gfx (no gfx rings)", abi.AMDGPU_INFO_HW_IP_INFO, 32, union(abi.AMDGPU_HW_IP_GFX), 0, func(b []byte) bool { return u32(b) == 9 && u32(b[24:]) == 0 }},
		{"hw ip dma", abi.AMDGPU_INFO_HW_IP_INFO, 32, union(abi.AMDGPU_HW_IP_DMA), 0, func(b []byte) bool {
			return u32(b) == 4 && u32(b[16:]) == 256 && u32(b[20:]) == 4 && u32(b[24:]) == 3 && u32(b[28:]) == 0x040400
		}},
		{"hw ip vcn absent", abi.AMDGPU_INFO_HW_IP_INFO, 32, union(abi.AMDGPU_HW_IP_VCN_DEC), 0, func(b []byte) bool { return bytes.Equal(b, make([]byte, 32)) }},
		{"hw ip type 9", abi.AMDGPU_INFO_HW_IP_INFO, 32, union(9), syscall.EINVAL, nil},
		{"hw ip instance 1", abi.AMDGPU_INFO_HW_IP_INFO, 32, union(abi.AMDGPU_HW_IP_COMPUTE, 1), syscall.EINVAL, nil},
		{"hw ip count dma", abi.AMDGPU_INFO_HW_IP_COUNT, 4, union(abi.AMDGPU_HW_IP_DMA), 0, func(b []byte) bool { return u32(b) == 5 }},
		{"hw ip count compute", abi.AMDGPU_INFO_HW_IP_COUNT, 4, union(abi.AMDGPU_HW_IP_COMPUTE), 0, func(b []byte) bool { return u32(b) == 1 }},
		{"hw ip count uvd", abi.AMDGPU_INFO_HW_IP_COUNT, 4, union(abi.AMDGPU_HW_IP_UVD), syscall.EINVAL, nil},
		{"gds", abi.AMDGPU_INFO_GDS_CONFIG, 32, union(), 0, func(b []byte) bool { return u32(b[16:]) == 64 && u32(b[24:]) == 16 }},
		{"vbios size", abi.AMDGPU_INFO_VBIOS, 4, union(abi.AMDGPU_INFO_VBIOS_SIZE), 0, func(b []byte) bool { return u32(b) == 0 }},
		{"vbios image", abi.AMDGPU_INFO_VBIOS, 64, union(abi.AMDGPU_INFO_VBIOS_IMAGE), syscall.EINVAL, nil},
		{"vbios type 9", abi.AMDGPU_INFO_VBIOS, 64, union(9), syscall.EINVAL, nil},
		{"num handles uvd", abi.AMDGPU_INFO_NUM_HANDLES, 8, union(abi.AMDGPU_HW_IP_UVD), syscall.ENODATA, nil},
		{"num handles gfx", abi.AMDGPU_INFO_NUM_HANDLES, 8, union(abi.AMDGPU_HW_IP_GFX), syscall.EINVAL, nil},
		{"sensor", abi.AMDGPU_INFO_SENSOR, 4, union(abi.AMDGPU_INFO_SENSOR_GFX_SCLK), syscall.ENOENT, nil},
		{"ras", abi.AMDGPU_INFO_RAS_ENABLED_FEATURES, 8, union(), syscall.EINVAL, nil},
		{"vram lost", abi.AMDGPU_INFO_VRAM_LOST_COUNTER, 4, union(), 0, func(b []byte) bool { return u32(b) == 0 }},
		{"crtc", abi.AMDGPU_INFO_CRTC_FROM_ID, 4, union(1), syscall.EINVAL, nil},
		{"unknown 0x04", 0x04, 4, union(), syscall.EINVAL, nil},
		{"unknown 0x40", 0x40, 4, union(), syscall.EINVAL, nil},
		{"return_size 0", abi.AMDGPU_INFO_ACCEL_WORKING, 0, union(), syscall.EINVAL, nil},
	} {
		b, e := query(d, m, tc.id, tc.size, tc.un)
		if e != tc.errno || (tc.check != nil && !tc.check(b)) {
			t.Errorf("%s: errno %v (want %v), result % x", tc.name, e, tc.errno, b)
		}
	}
	// NULL and unmapped return pointers.
	arg := argOf(abi.DRMAmdgpuInfo{ReturnPointer: 0, ReturnSize: 4})
	if e := ioctl(d, m, abi.DRM_IOCTL_AMDGPU_INFO, arg); e != syscall.EINVAL {
		t.Errorf("NULL return_pointer: %v", e)
	}
	arg = argOf(abi.DRMAmdgpuInfo{ReturnPointer: 0xdead000, ReturnSize: 368, Query: abi.AMDGPU_INFO_DEV_INFO})
	if e := ioctl(d, m, abi.DRM_IOCTL_AMDGPU_INFO, arg); e != syscall.EFAULT {
		t.Errorf("unmapped return_pointer: %v", e)
	}
	// A return buffer that runs off the mapping by one byte faults.
	arg = argOf(abi.DRMAmdgpuInfo{ReturnPointer: m.base + uint64(len(m.buf)) - 3, ReturnSize: 4})
	if e := ioctl(d, m, abi.DRM_IOCTL_AMDGPU_INFO, arg); e != syscall.EFAULT {
		t.Errorf("straddling return_pointer: %v", e)
	}
	// A huge return_size writes only the result's size.
	b, e := query(d, m, abi.AMDGPU_INFO_DEV_INFO, 1<<31, union())
	if e != 0 || !bytes.Equal(b[abi.SizeofDRMAmdgpuInfoDevice:abi.SizeofDRMAmdgpuInfoDevice+8], make([]byte, 8)) {
		t.Errorf("huge return_size: %v", e)
	}
}

// TestDevInfoProfiles checks DEV_INFO for every GPU of every profile against its topology node.
func TestDevInfoProfiles(t *testing.T) {
	want := map[string]struct {
		family, extRev uint32
		vram           uint32
	}{
		"vega10": {abi.AMDGPU_FAMILY_AI, 0x1, abi.AMDGPU_VRAM_TYPE_HBM}, "mi100": {abi.AMDGPU_FAMILY_AI, 0x32, abi.AMDGPU_VRAM_TYPE_HBM},
		"mi210": {abi.AMDGPU_FAMILY_AI, 0x3c, abi.AMDGPU_VRAM_TYPE_HBM}, "mi300x": {abi.AMDGPU_FAMILY_AI, 0x46, abi.AMDGPU_VRAM_TYPE_HBM},
		"mi300x-cpx": {abi.AMDGPU_FAMILY_AI, 0x46, abi.AMDGPU_VRAM_TYPE_HBM}, "rx6800": {abi.AMDGPU_FAMILY_NV, 0x28, abi.AMDGPU_VRAM_TYPE_GDDR6},
	}
	seen := map[string]bool{}
	for _, p := range topology.Profiles() {
		s, err := topology.Profile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range s.GPUs() {
			m := newMem()
			d := NewDevice(InfoFromNode(s, n), nil)
			b, e := query(d, m, abi.AMDGPU_INFO_DEV_INFO, abi.SizeofDRMAmdgpuInfoDevice, union())
			if e != 0 {
				t.Fatalf("%s: %v", p, e)
			}
			var di abi.DRMAmdgpuInfoDevice
			decode(b, &di)
			w, ok := want[n.Asic]
			if !ok {
				t.Errorf("%s: asic %q has no expectation", p, n.Asic)
				continue
			}
			seen[n.Asic] = true
			xcc := max(uint32(n.Prop(topology.NumXCC)), 1)
			cus := 0
			for i := range di.CUBitmap {
				for j := range di.CUBitmap[i] {
					cus += bits.OnesCount32(di.CUBitmap[i][j])
				}
			}
			switch {
			case di.DeviceID != uint32(n.Prop(topology.DeviceID)) || di.Family != w.family || di.ExternalRev != w.extRev || di.VRAMType != w.vram:
				t.Errorf("%s/%s: id %#x family %d ext %#x vram type %d", p, n.Asic, di.DeviceID, di.Family, di.ExternalRev, di.VRAMType)
			case di.NumShaderEngines*di.NumShaderArraysPerEngine*xcc != uint32(n.Prop(topology.ArrayCount)):
				t.Errorf("%s: SE %d x SH %d x XCC %d != array_count %d", p, di.NumShaderEngines, di.NumShaderArraysPerEngine, xcc, n.Prop(topology.ArrayCount))
			case uint64(di.CUActiveNumber)*uint64(xcc) != n.ComputeUnits() || cus != int(di.CUActiveNumber):
				t.Errorf("%s: cu_active %d, bitmap %d, topology %d", p, di.CUActiveNumber, cus, n.ComputeUnits())
			case di.CUAOBitmap != di.CUBitmap || di.CUAOMask == 0:
				t.Errorf("%s: ao bitmap/mask %#x", p, di.CUAOMask)
			case di.MaxEngineClock != n.Prop(topology.MaxEngineClkFCompute)*1000 || di.MaxMemoryClock == 0:
				t.Errorf("%s: clocks %d %d", p, di.MaxEngineClock, di.MaxMemoryClock)
			case di.WaveFrontSize != uint32(n.Prop(topology.WaveFrontSize)) || di.NumCUPerSH != uint32(n.Prop(topology.CUPerSIMDArray)):
				t.Errorf("%s: wave %d cu/sh %d", p, di.WaveFrontSize, di.NumCUPerSH)
			case di.VirtualAddressOffset != 1<<16 || di.VirtualAddressMax != 0x800000000000 || di.HighVAOffset != 0xffff800000000000 ||
				di.HighVAMax != 0xffffffffffbfe000 || di.PTEFragmentSize != 2<<20 || di.GPUCounterFreq != 100000:
				t.Errorf("%s: VA layout %#x %#x %#x %#x", p, di.VirtualAddressOffset, di.VirtualAddressMax, di.HighVAOffset, di.HighVAMax)
			}
		}
	}
	for a := range want {
		if !seen[a] {
			t.Errorf("no profile exercised asic %s", a)
		}
	}
}
