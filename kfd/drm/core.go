package drm

import (
	"encoding/binary"
	"fmt"
	"reflect"
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

// handler serves one command of a file on k, the kernel-side copy of its argument (see Ioctl). def
// builds one from a typed handler; the others answer without reading the argument.
type handler func(f *File, m Memory, k []byte) syscall.Errno

type ioctlDesc struct {
	cmd   uint32 // the kernel's command word (direction and size), abi.DRMIoctls'
	flags uint32
	fn    handler
}

// denied stands for the function of an ioctl a render client can never reach (no DRM_RENDER_ALLOW,
// or DRM_MASTER): drm_ioctl_permit rejects it first.
func denied(*File, Memory, []byte) syscall.Errno { return syscall.EACCES }

// raw is the entry of cmd served by fn without decoding (nil: denied).
func raw(cmd, flags uint32, fn handler) ioctlDesc {
	if fn == nil {
		fn = denied
	}
	return ioctlDesc{cmd, flags, fn}
}

// def is the entry of cmd served by the typed handler fn of a file (dev adapts a handler of the
// device, which needs no per-file state). cmd must be in abi.DRMIoctls with A as its
// argument type, and A's encoded size must be the command's size: a mismatch is a mistake in the
// tables below and panics as the package loads, so it fails every test. The wrapper decodes the
// struct from k if the command is _IOW (it starts zeroed otherwise), calls fn, and encodes it back
// into k if the command is _IOR, also on errors (drm_ioctl copies out whatever the function left).
func def[A any](cmd, flags uint32, fn func(*File, Memory, *A) syscall.Errno) ioctlDesc {
	io, ok := abi.DRMIoctlOf(abi.IOCNr(cmd))
	switch typ := reflect.TypeFor[A](); {
	case !ok || io.Cmd != cmd || abi.IOCType(cmd) != abi.DRMIOCTLBase:
		panic(fmt.Sprintf("drm: command %#x is not in abi.DRMIoctls", cmd))
	case typ != io.Arg:
		panic(fmt.Sprintf("drm: the handler of %s takes %v, abi.DRMIoctls says %v", io.Name, typ, io.Arg))
	case binary.Size(new(A)) != int(abi.IOCSize(cmd)):
		panic(fmt.Sprintf("drm: %v encodes to %d bytes, %s carries %d", typ, binary.Size(new(A)), io.Name, abi.IOCSize(cmd)))
	}
	in, out := abi.IOCDir(cmd)&abi.IOCWrite != 0, abi.IOCDir(cmd)&abi.IOCRead != 0
	return ioctlDesc{cmd, flags, func(f *File, m Memory, k []byte) syscall.Errno {
		var a A
		if in {
			decode(k, &a)
		}
		errno := fn(f, m, &a)
		if out {
			encode(k, &a)
		}
		return errno
	}}
}

// dev adapts a handler that reads only the device to def.
func dev[A any](fn func(*Device, Memory, *A) syscall.Errno) func(*File, Memory, *A) syscall.Errno {
	return func(f *File, m Memory, a *A) syscall.Errno { return fn(f.dev, m, a) }
}

// coreIoctls is drm_ioctls[] of drm_ioctl.c (Linux 6.10: legacy UMS entries are gone and have no
// function; DRM_CORE_IOCTL_COUNT is 0xD1, MODE_CLOSEFB being the last).
var coreIoctls = func() [0xD1]ioctlDesc {
	var t [0xD1]ioctlDesc
	put := func(e ioctlDesc) { t[abi.IOCNr(e.cmd)] = e }
	put(def(abi.DRM_IOCTL_VERSION, flagRenderAllow, dev((*Device).version)))
	put(raw(abi.DRM_IOCTL_GET_UNIQUE, 0, nil))
	put(raw(abi.DRM_IOCTL_GET_MAGIC, 0, nil))
	put(def(abi.DRM_IOCTL_GET_CLIENT, flagEmulatedRender, dev((*Device).getClient)))
	put(raw(abi.DRM_IOCTL_GET_STATS, 0, nil))
	put(def(abi.DRM_IOCTL_GET_CAP, flagRenderAllow, dev((*Device).getCap)))
	put(raw(abi.DRM_IOCTL_SET_CLIENT_CAP, 0, nil)) // drm_setclientcap
	put(raw(abi.DRM_IOCTL_SET_VERSION, flagMaster, nil))
	put(raw(abi.DRM_IOCTL_SET_UNIQUE, flagAuth|flagMaster|flagRootOnly, nil))
	put(raw(abi.DRM_IOCTL_BLOCK, flagAuth|flagMaster|flagRootOnly, nil))
	put(raw(abi.DRM_IOCTL_UNBLOCK, flagAuth|flagMaster|flagRootOnly, nil))
	put(raw(abi.DRM_IOCTL_AUTH_MAGIC, flagMaster, nil))
	put(raw(abi.DRM_IOCTL_SET_MASTER, 0, nil))
	put(raw(abi.DRM_IOCTL_DROP_MASTER, 0, nil))
	put(raw(abi.DRM_IOCTL_ADD_DRAW, flagAuth|flagMaster|flagRootOnly, nil))
	put(raw(abi.DRM_IOCTL_RM_DRAW, flagAuth|flagMaster|flagRootOnly, nil))
	put(raw(abi.DRM_IOCTL_FINISH, flagAuth, nil))
	put(raw(abi.DRM_IOCTL_WAIT_VBLANK, 0, nil))
	put(raw(abi.DRM_IOCTL_UPDATE_DRAW, flagAuth|flagMaster|flagRootOnly, nil))
	put(def(abi.DRM_IOCTL_GEM_CLOSE, flagRenderAllow, (*File).gemClose))
	put(raw(abi.DRM_IOCTL_GEM_FLINK, flagAuth, nil))
	put(raw(abi.DRM_IOCTL_GEM_OPEN, flagAuth, nil))
	put(def(abi.DRM_IOCTL_PRIME_HANDLE_TO_FD, flagRenderAllow, (*File).primeHandleToFD))
	put(def(abi.DRM_IOCTL_PRIME_FD_TO_HANDLE, flagRenderAllow, (*File).primeFDToHandle))
	put(raw(abi.DRM_IOCTL_CRTC_GET_SEQUENCE, 0, nil))
	put(raw(abi.DRM_IOCTL_CRTC_QUEUE_SEQUENCE, 0, nil))
	// The KMS ioctls 0xA0-0xBE: none is DRM_RENDER_ALLOW.
	for _, c := range modeIoctls {
		put(raw(c, 0, nil))
	}
	// SYNCOBJ ioctls are DRM_RENDER_ALLOW; each starts with "if (!drm_core_check_feature(dev,
	// DRIVER_SYNCOBJ)) return -EOPNOTSUPP". The model has no syncobjs (GET_CAP says so).
	for _, c := range []uint32{abi.DRM_IOCTL_SYNCOBJ_CREATE, abi.DRM_IOCTL_SYNCOBJ_DESTROY,
		abi.DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, abi.DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, abi.DRM_IOCTL_SYNCOBJ_WAIT,
		abi.DRM_IOCTL_SYNCOBJ_RESET, abi.DRM_IOCTL_SYNCOBJ_SIGNAL, abi.DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT,
		abi.DRM_IOCTL_SYNCOBJ_QUERY, abi.DRM_IOCTL_SYNCOBJ_TRANSFER, abi.DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL,
		abi.DRM_IOCTL_SYNCOBJ_EVENTFD} {
		put(raw(c, flagRenderAllow, noSyncobj))
	}
	for _, c := range []uint32{abi.DRM_IOCTL_MODE_CREATE_LEASE, abi.DRM_IOCTL_MODE_LIST_LESSEES,
		abi.DRM_IOCTL_MODE_GET_LEASE, abi.DRM_IOCTL_MODE_REVOKE_LEASE} {
		put(raw(c, flagMaster, nil))
	}
	put(raw(abi.DRM_IOCTL_MODE_GETFB2, 0, nil))
	put(raw(abi.DRM_IOCTL_MODE_CLOSEFB, 0, nil))
	return t
}()

// modeIoctls are DRM_IOCTL_MODE_GETRESOURCES (0xA0) .. DRM_IOCTL_MODE_DESTROYPROPBLOB (0xBE).
var modeIoctls = []uint32{abi.DRM_IOCTL_MODE_GETRESOURCES, abi.DRM_IOCTL_MODE_GETCRTC, abi.DRM_IOCTL_MODE_SETCRTC,
	abi.DRM_IOCTL_MODE_CURSOR, abi.DRM_IOCTL_MODE_GETGAMMA, abi.DRM_IOCTL_MODE_SETGAMMA,
	abi.DRM_IOCTL_MODE_GETENCODER, abi.DRM_IOCTL_MODE_GETCONNECTOR, abi.DRM_IOCTL_MODE_ATTACHMODE,
	abi.DRM_IOCTL_MODE_DETACHMODE, abi.DRM_IOCTL_MODE_GETPROPERTY, abi.DRM_IOCTL_MODE_SETPROPERTY,
	abi.DRM_IOCTL_MODE_GETPROPBLOB, abi.DRM_IOCTL_MODE_GETFB, abi.DRM_IOCTL_MODE_ADDFB, abi.DRM_IOCTL_MODE_RMFB,
	abi.DRM_IOCTL_MODE_PAGE_FLIP, abi.DRM_IOCTL_MODE_DIRTYFB, abi.DRM_IOCTL_MODE_CREATE_DUMB,
	abi.DRM_IOCTL_MODE_MAP_DUMB, abi.DRM_IOCTL_MODE_DESTROY_DUMB, abi.DRM_IOCTL_MODE_GETPLANERESOURCES,
	abi.DRM_IOCTL_MODE_GETPLANE, abi.DRM_IOCTL_MODE_SETPLANE, abi.DRM_IOCTL_MODE_ADDFB2,
	abi.DRM_IOCTL_MODE_OBJ_GETPROPERTIES, abi.DRM_IOCTL_MODE_OBJ_SETPROPERTY, abi.DRM_IOCTL_MODE_CURSOR2,
	abi.DRM_IOCTL_MODE_ATOMIC, abi.DRM_IOCTL_MODE_CREATEPROPBLOB, abi.DRM_IOCTL_MODE_DESTROYPROPBLOB}

// driverIoctls is amdgpu_ioctls_kms[] (amdgpu_kms.c, KMS 3.57): indexed by nr - DRM_COMMAND_BASE,
// num_ioctls = 0x16. All are DRM_AUTH|DRM_RENDER_ALLOW except SCHED (DRM_MASTER).
var driverIoctls = func() [0x16]ioctlDesc {
	var t [0x16]ioctlDesc
	ra := uint32(flagAuth | flagRenderAllow)
	put := func(e ioctlDesc) { t[abi.IOCNr(e.cmd)-abi.DRMCommandBase] = e }
	put(def(abi.DRM_IOCTL_AMDGPU_GEM_CREATE, ra, (*File).gemCreate))
	put(def(abi.DRM_IOCTL_AMDGPU_GEM_MMAP, ra, (*File).gemMmap))
	put(def(abi.DRM_IOCTL_AMDGPU_CTX, ra, (*File).ctxIoctl))
	put(def(abi.DRM_IOCTL_AMDGPU_BO_LIST, ra, (*File).boListIoctl))
	put(def(abi.DRM_IOCTL_AMDGPU_CS, ra, (*File).cs))
	put(def(abi.DRM_IOCTL_AMDGPU_INFO, ra, dev((*Device).amdgpuInfo)))
	put(def(abi.DRM_IOCTL_AMDGPU_GEM_METADATA, ra, (*File).gemMetadata))
	put(def(abi.DRM_IOCTL_AMDGPU_GEM_WAIT_IDLE, ra, (*File).gemWaitIdle))
	put(def(abi.DRM_IOCTL_AMDGPU_GEM_VA, ra, (*File).gemVA))
	put(def(abi.DRM_IOCTL_AMDGPU_WAIT_CS, ra, (*File).waitCS))
	put(def(abi.DRM_IOCTL_AMDGPU_GEM_OP, ra, (*File).gemOp))
	put(raw(abi.DRM_IOCTL_AMDGPU_GEM_USERPTR, ra, notModelled))
	put(def(abi.DRM_IOCTL_AMDGPU_WAIT_FENCES, ra, (*File).waitFences))
	put(def(abi.DRM_IOCTL_AMDGPU_VM, ra, (*File).vmIoctl))
	put(def(abi.DRM_IOCTL_AMDGPU_FENCE_TO_HANDLE, ra, (*File).fenceToHandle))
	put(raw(abi.DRM_IOCTL_AMDGPU_SCHED, flagMaster, denied))
	return t
}()

// notModelled answers GEM_USERPTR: user-pointer GEM objects (HMM-backed system pages with an MMU
// notifier) are not modelled; EOPNOTSUPP is what amdgpu returns for a feature the device lacks.
func notModelled(*File, Memory, []byte) syscall.Errno { return syscall.EOPNOTSUPP }

// Ioctl serves one ioctl on the render-node file. arg holds _IOC_SIZE(cmd) bytes of input and is the
// output buffer, updated in place. It follows drm_ioctl (drm_ioctl.c): a type other than 'd' is
// ENOTTY; numbers outside both tables, or without a function, are EINVAL; the argument is copied in
// only if both the caller's and the kernel's command words have _IOC_WRITE, zero-extended to the
// kernel's size, and copied out (also on error) only if both have _IOC_READ; drm_ioctl_permit for a
// render client gives EACCES to everything without DRM_RENDER_ALLOW (and to DRM_MASTER ioctls).
func (f *File) Ioctl(m Memory, cmd uint32, arg []byte) syscall.Errno {
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
		errno = desc.fn(f, m, k)
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
func (d *Device) version(m Memory, v *abi.DRMVersion) syscall.Errno {
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
	return errno
}

// getClient is drm_getclient: only idx 0 (the caller itself) exists. auth is 0 as for a render-node
// file (not authenticated through a master), so libdrm takes the render-node path.
func (d *Device) getClient(m Memory, c *abi.DRMClient) syscall.Errno {
	if c.Idx != 0 {
		return syscall.EINVAL
	}
	c.Auth, c.Pid, c.UID, c.Magic, c.Iocs = 0, 0, overflowUID, 0, 0
	if t, ok := m.(interface{ Tgid() int }); ok {
		c.Pid = uint64(t.Tgid())
	}
	return 0
}

const drmCapAtomicAsyncPageFlip = 0x15 // DRM_CAP_ATOMIC_ASYNC_PAGE_FLIP (Linux 6.8, newer than libdrm 2.4.114)

// getCap is drm_getcap for amdgpu (DRIVER_MODESET set, DRIVER_SYNCOBJ not modelled). The mode_config
// values are amdgpu_dm's for an ASIC with display hardware, zero for a headless one.
func (d *Device) getCap(m Memory, c *abi.DRMGetCap) syscall.Errno {
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
	return errno
}

func noSyncobj(*File, Memory, []byte) syscall.Errno { return syscall.EOPNOTSUPP }
