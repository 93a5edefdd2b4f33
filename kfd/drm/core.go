package drm

import (
	"encoding/binary"
	"syscall"

	"github.com/kfdemu/kfdemu/kfd/abi"
)

// DRM identity (amdgpu_drv.c DRIVER_NAME/DRIVER_DESC/DRIVER_DATE, KMS_DRIVER_MAJOR/MINOR/PATCHLEVEL):
// 3.57 is "Compute tunneling on GFX10+", Linux 6.10.
const (
	DriverName  = "amdgpu"
	DriverDesc  = "AMD GPU"
	DriverDate  = "20150101"
	DriverMajor = 3
	DriverMinor = 57
	DriverPatch = 0
)

// Permission flags of drm_ioctl_desc (drm_ioctl.h).
const (
	flagAuth        = 1
	flagMaster      = 2
	flagRootOnly    = 4
	flagRenderAllow = 0x20
	// flagEmulatedRender marks DRM_IOCTL_GET_CLIENT. On a real render node it lacks DRM_RENDER_ALLOW
	// and fails with EACCES, but libdrm never sends it there: drmGetNodeTypeFromFd recognises the
	// character device. The emulated node is a regular file, so amdgpu_device_initialize's
	// amdgpu_get_auth falls back to GET_CLIENT and must get an answer; it is served as drm_getclient.
	flagEmulatedRender = 0x100
)

const overflowUID = 65534 // overflowuid: drm_getclient reports it as the uid

type handler func(d *Device, m Memory, k []byte) syscall.Errno

type ioctlDesc struct {
	cmd   uint32 // the kernel's command word (direction and size)
	flags uint32
	fn    handler
}

// denied stands for the function of an ioctl a render client can never reach (no DRM_RENDER_ALLOW,
// or DRM_MASTER): drm_ioctl_permit rejects it first.
func denied(*Device, Memory, []byte) syscall.Errno { return syscall.EACCES }

// coreIoctls is drm_ioctls[] of drm_ioctl.c (Linux 6.10: legacy UMS entries are gone and have no
// function; DRM_CORE_IOCTL_COUNT is 0xD1, MODE_CLOSEFB being the last).
var coreIoctls = func() [0xD1]ioctlDesc {
	var t [0xD1]ioctlDesc
	set := func(cmd, flags uint32, fn handler) {
		if fn == nil {
			fn = denied
		}
		t[abi.IOCNr(cmd)] = ioctlDesc{cmd, flags, fn}
	}
	set(abi.DRM_IOCTL_VERSION, flagRenderAllow, (*Device).version)
	set(0xc0106401, 0, nil) // GET_UNIQUE
	set(0x80046402, 0, nil) // GET_MAGIC
	set(abi.DRM_IOCTL_GET_CLIENT, flagEmulatedRender, (*Device).getClient)
	set(0x80f86406, 0, nil) // GET_STATS
	set(abi.DRM_IOCTL_GET_CAP, flagRenderAllow, (*Device).getCap)
	set(abi.DRM_IOCTL_SET_CLIENT_CAP, 0, nil)              // drm_setclientcap
	set(0xc0106407, flagMaster, nil)                       // SET_VERSION
	set(0x40106410, flagAuth|flagMaster|flagRootOnly, nil) // SET_UNIQUE
	set(0xc0046412, flagAuth|flagMaster|flagRootOnly, nil) // BLOCK
	set(0xc0046413, flagAuth|flagMaster|flagRootOnly, nil) // UNBLOCK
	set(0x40046411, flagMaster, nil)                       // AUTH_MAGIC
	set(abi.DRM_IOCTL_SET_MASTER, 0, nil)
	set(abi.DRM_IOCTL_DROP_MASTER, 0, nil)
	set(0xc0046427, flagAuth|flagMaster|flagRootOnly, nil) // ADD_DRAW
	set(0xc0046428, flagAuth|flagMaster|flagRootOnly, nil) // RM_DRAW
	set(0x4008642c, flagAuth, nil)                         // FINISH
	set(0xc018643a, 0, nil)                                // WAIT_VBLANK
	set(0x4018643f, flagAuth|flagMaster|flagRootOnly, nil) // UPDATE_DRAW
	set(abi.DRM_IOCTL_GEM_CLOSE, flagRenderAllow, (*Device).gemClose)
	set(0xc008640a, flagAuth, nil) // GEM_FLINK
	set(0xc010640b, flagAuth, nil) // GEM_OPEN
	set(abi.DRM_IOCTL_PRIME_HANDLE_TO_FD, flagRenderAllow, (*Device).primeHandleToFD)
	set(abi.DRM_IOCTL_PRIME_FD_TO_HANDLE, flagRenderAllow, (*Device).primeFDToHandle)
	set(0xc018643b, 0, nil) // CRTC_GET_SEQUENCE
	set(0xc018643c, 0, nil) // CRTC_QUEUE_SEQUENCE
	// The KMS ioctls 0xA0-0xBE: none is DRM_RENDER_ALLOW.
	for _, c := range modeIoctls {
		set(c, 0, nil)
	}
	// SYNCOBJ ioctls are DRM_RENDER_ALLOW; each starts with "if (!drm_core_check_feature(dev,
	// DRIVER_SYNCOBJ)) return -EOPNOTSUPP". The model has no syncobjs (GET_CAP says so).
	for _, c := range []uint32{abi.DRM_IOCTL_SYNCOBJ_CREATE, abi.DRM_IOCTL_SYNCOBJ_DESTROY, 0xc01064c1, 0xc01064c2,
		0xc02064c3, 0xc01064c4, 0xc01064c5, 0xc02864ca, 0xc01864cb, 0xc02064cc, 0xc01864cd, 0xc01864cf} {
		set(c, flagRenderAllow, (*Device).noSyncobj)
	}
	for _, c := range []uint32{0xc01864c6, 0xc01064c7, 0xc01064c8, 0xc00464c9} { // leases
		set(c, flagMaster, nil)
	}
	set(0xc06864ce, 0, nil) // MODE_GETFB2
	set(0xc00864d0, 0, nil) // MODE_CLOSEFB
	return t
}()

// modeIoctls are DRM_IOCTL_MODE_GETRESOURCES (0xA0) .. DRM_IOCTL_MODE_DESTROYPROPBLOB (0xBE).
var modeIoctls = []uint32{0xc04064a0, 0xc06864a1, 0xc06864a2, 0xc01c64a3, 0xc02064a4, 0xc02064a5, 0xc01464a6,
	0xc05064a7, 0xc04864a8, 0xc04864a9, 0xc04064aa, 0xc01064ab, 0xc01064ac, 0xc01c64ad, 0xc01c64ae, 0xc00464af,
	0xc01864b0, 0xc01864b1, 0xc02064b2, 0xc01064b3, 0xc00464b4, 0xc01064b5, 0xc02064b6, 0xc03064b7, 0xc06864b8,
	0xc02064b9, 0xc01864ba, 0xc02464bb, 0xc03864bc, 0xc01064bd, 0xc00464be}

// driverIoctls is amdgpu_ioctls_kms[] (amdgpu_kms.c, KMS 3.57): indexed by nr - DRM_COMMAND_BASE,
// num_ioctls = 0x16. All are DRM_AUTH|DRM_RENDER_ALLOW except SCHED (DRM_MASTER).
var driverIoctls = func() [0x16]ioctlDesc {
	var t [0x16]ioctlDesc
	ra := uint32(flagAuth | flagRenderAllow)
	set := func(cmd, flags uint32, fn handler) { t[abi.IOCNr(cmd)-abi.DRMCommandBase] = ioctlDesc{cmd, flags, fn} }
	set(abi.DRM_IOCTL_AMDGPU_GEM_CREATE, ra, notModelled)
	set(abi.DRM_IOCTL_AMDGPU_GEM_MMAP, ra, noHandle)
	set(abi.DRM_IOCTL_AMDGPU_CTX, ra, notModelled)
	set(abi.DRM_IOCTL_AMDGPU_BO_LIST, ra, notModelled)
	set(abi.DRM_IOCTL_AMDGPU_CS, ra, notModelled)
	set(abi.DRM_IOCTL_AMDGPU_INFO, ra, (*Device).amdgpuInfo)
	set(abi.DRM_IOCTL_AMDGPU_GEM_METADATA, ra, noHandle)
	set(abi.DRM_IOCTL_AMDGPU_GEM_WAIT_IDLE, ra, noHandle)
	set(abi.DRM_IOCTL_AMDGPU_GEM_VA, ra, notModelled)
	set(abi.DRM_IOCTL_AMDGPU_WAIT_CS, ra, notModelled)
	set(abi.DRM_IOCTL_AMDGPU_GEM_OP, ra, noHandle)
	set(abi.DRM_IOCTL_AMDGPU_GEM_USERPTR, ra, notModelled)
	set(abi.DRM_IOCTL_AMDGPU_WAIT_FENCES, ra, notModelled)
	set(abi.DRM_IOCTL_AMDGPU_VM, ra, notModelled)
	set(abi.DRM_IOCTL_AMDGPU_FENCE_TO_HANDLE, ra, notModelled)
	set(abi.DRM_IOCTL_AMDGPU_SCHED, flagMaster, denied)
	return t
}()

// notModelled answers the amdgpu GEM-creation and command-submission ioctls. kfd allocates and maps
// every buffer itself, so this node has no GEM objects, contexts or fences; these return EOPNOTSUPP
// (what amdgpu returns for a feature the device lacks) instead of pretending to succeed.
func notModelled(*Device, Memory, []byte) syscall.Errno { return syscall.EOPNOTSUPP }

// noHandle answers the ioctls whose first step is drm_gem_object_lookup(handle) (GEM_MMAP via
// amdgpu_mode_dumb_mmap, GEM_METADATA, GEM_WAIT_IDLE, GEM_OP): no handle exists, so -ENOENT.
func noHandle(*Device, Memory, []byte) syscall.Errno { return syscall.ENOENT }

// Ioctl serves one ioctl on the render node. arg holds _IOC_SIZE(cmd) bytes of input and is the
// output buffer, updated in place. It follows drm_ioctl (drm_ioctl.c): a type other than 'd' is
// ENOTTY; numbers outside both tables, or without a function, are EINVAL; the argument is copied in
// only if both the caller's and the kernel's command words have _IOC_WRITE, zero-extended to the
// kernel's size, and copied out (also on error) only if both have _IOC_READ; drm_ioctl_permit for a
// render client gives EACCES to everything without DRM_RENDER_ALLOW (and to DRM_MASTER ioctls).
func (d *Device) Ioctl(m Memory, cmd uint32, arg []byte) syscall.Errno {
	if abi.IOCType(cmd) != abi.DRMIOCTLBase {
		return syscall.ENOTTY
	}
	nr := abi.IOCNr(cmd)
	var desc ioctlDesc
	if nr >= abi.DRMCommandBase && nr < abi.DRMCommandEnd {
		i := nr - abi.DRMCommandBase
		if i >= uint32(len(driverIoctls)) {
			return syscall.EINVAL
		}
		desc = driverIoctls[i]
	} else {
		if nr >= uint32(len(coreIoctls)) {
			return syscall.EINVAL
		}
		desc = coreIoctls[nr]
	}
	if desc.fn == nil {
		return syscall.EINVAL // "no function"
	}
	usize := min(int(abi.IOCSize(cmd)), len(arg))
	in, out := usize, usize
	const iocIn, iocOut = abi.IOCWrite << 30, abi.IOCRead << 30
	if cmd&desc.cmd&iocIn == 0 {
		in = 0
	}
	if cmd&desc.cmd&iocOut == 0 {
		out = 0
	}
	k := make([]byte, max(in, out, int(abi.IOCSize(desc.cmd))))
	copy(k, arg[:in])
	var errno syscall.Errno
	switch {
	case desc.flags&flagMaster != 0, desc.flags&(flagRenderAllow|flagEmulatedRender) == 0:
		errno = syscall.EACCES
	default:
		errno = desc.fn(d, m, k)
	}
	copy(arg[:out], k)
	return errno
}

func le32(b []byte, off int) uint32 { return binary.LittleEndian.Uint32(b[off:]) }

// decode fills v from k (which is at least the kernel's struct size).
func decode(k []byte, v any) { _, _ = binary.Decode(k, binary.LittleEndian, v) }

// encode writes v to the front of k.
func encode(k []byte, v any) { _, _ = binary.Encode(k, binary.LittleEndian, v) }

func bytesOf(v any) []byte {
	b, _ := binary.Append(nil, binary.LittleEndian, v)
	return b
}

// version is drm_version with drm_copy_field: each string is copied up to the caller's length (no
// NUL), the full length is reported, a NULL pointer skips the copy, and a failing copy stops with
// EFAULT (the struct, with the lengths set so far, is still copied out).
func (d *Device) version(m Memory, k []byte) syscall.Errno {
	var v abi.DRMVersion
	decode(k, &v)
	v.VersionMajor, v.VersionMinor, v.VersionPatchlevel = DriverMajor, DriverMinor, DriverPatch
	errno := syscall.Errno(0)
	for _, f := range []struct {
		ptr uint64
		n   *uint64
		s   string
	}{{v.Name, &v.NameLen, DriverName}, {v.Date, &v.DateLen, DriverDate}, {v.Desc, &v.DescLen, DriverDesc}} {
		l := min(*f.n, uint64(len(f.s)))
		*f.n = uint64(len(f.s))
		if l > 0 && f.ptr != 0 && m.WriteMemory(f.ptr, []byte(f.s[:l])) != nil {
			errno = syscall.EFAULT
			break
		}
	}
	encode(k, v)
	return errno
}

// getClient is drm_getclient: only idx 0 (the caller itself) exists. auth is 0 as for a render-node
// file (not authenticated through a master), so libdrm takes the render-node path.
func (d *Device) getClient(m Memory, k []byte) syscall.Errno {
	var c abi.DRMClient
	decode(k, &c)
	if c.Idx != 0 {
		return syscall.EINVAL
	}
	c.Auth, c.Pid, c.UID, c.Magic, c.Iocs = 0, 0, overflowUID, 0, 0
	if t, ok := m.(interface{ Tgid() int }); ok {
		c.Pid = uint64(t.Tgid())
	}
	encode(k, c)
	return 0
}

const drmCapAtomicAsyncPageFlip = 0x15 // DRM_CAP_ATOMIC_ASYNC_PAGE_FLIP (Linux 6.8, newer than libdrm 2.4.114)

// getCap is drm_getcap for amdgpu (DRIVER_MODESET set, DRIVER_SYNCOBJ not modelled). The mode_config
// values are amdgpu_dm's for an ASIC with display hardware, zero for a headless one.
func (d *Device) getCap(m Memory, k []byte) syscall.Errno {
	var c abi.DRMGetCap
	decode(k, &c)
	c.Value = 0
	disp := d.info.Display
	b2u := func(b bool) uint64 {
		if b {
			return 1
		}
		return 0
	}
	var errno syscall.Errno
	switch c.Capability {
	case abi.DRM_CAP_TIMESTAMP_MONOTONIC:
		c.Value = 1
	case abi.DRM_CAP_PRIME:
		c.Value = abi.DRM_PRIME_CAP_IMPORT | abi.DRM_PRIME_CAP_EXPORT
	case abi.DRM_CAP_SYNCOBJ, abi.DRM_CAP_SYNCOBJ_TIMELINE:
		c.Value = 0
	case abi.DRM_CAP_DUMB_BUFFER, abi.DRM_CAP_VBLANK_HIGH_CRTC, abi.DRM_CAP_CRTC_IN_VBLANK_EVENT,
		abi.DRM_CAP_PAGE_FLIP_TARGET, abi.DRM_CAP_ADDFB2_MODIFIERS:
		c.Value = 1
	case abi.DRM_CAP_DUMB_PREFERRED_DEPTH:
		c.Value = 24 * b2u(disp)
	case abi.DRM_CAP_DUMB_PREFER_SHADOW:
		c.Value = 0
	case abi.DRM_CAP_ASYNC_PAGE_FLIP, drmCapAtomicAsyncPageFlip:
		c.Value = b2u(disp)
	case abi.DRM_CAP_CURSOR_WIDTH, abi.DRM_CAP_CURSOR_HEIGHT:
		c.Value = 64
		if disp {
			c.Value = 256 // dc caps max_cursor_size (DCN3)
		}
	default:
		errno = syscall.EINVAL
	}
	encode(k, c)
	return errno
}

// gemClose is drm_gem_close_ioctl: drm_gem_handle_delete of a handle that does not exist is -EINVAL.
func (d *Device) gemClose(Memory, []byte) syscall.Errno { return syscall.EINVAL }

// primeHandleToFD is drm_prime_handle_to_fd_ioctl: flags other than DRM_CLOEXEC|DRM_RDWR are EINVAL,
// then the handle lookup fails with ENOENT (no GEM objects).
func (d *Device) primeHandleToFD(m Memory, k []byte) syscall.Errno {
	if le32(k, 4)&^uint32(abi.DRM_CLOEXEC|abi.DRM_RDWR) != 0 {
		return syscall.EINVAL
	}
	return syscall.ENOENT
}

// primeFDToHandle: the node cannot import dma-bufs (no GEM objects); dma_buf_get's EINVAL ("not a
// dma-buf this device can use") is returned for every fd. Deviation: an fd that is not open would get
// EBADF from the kernel.
func (d *Device) primeFDToHandle(Memory, []byte) syscall.Errno { return syscall.EINVAL }

func (d *Device) noSyncobj(Memory, []byte) syscall.Errno { return syscall.EOPNOTSUPP }
