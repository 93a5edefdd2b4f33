// Package abi holds the binary interface of amdkfd as Go types and constants: the argument structs,
// ioctl numbers and flags of <linux/kfd_ioctl.h> (up to interface 1.18 as listed in
// shared/reference/kfd-abi-and-peers.md; Debian's linux-libc-dev ships 1.11) and <linux/kfd_sysfs.h>.
// No behaviour lives here. Names keep the C spelling in Go form; padding is spelled out.
//
// Ioctls is the one ioctl table of the interface: per command its number, name, command word, Go
// argument type and C struct name. Everything that needs to know which struct goes with which
// command reads it: the AMDKFD_IOC_* command words are taken from it, kfd registers its typed
// handlers against it (and panics at start-up on a handler whose argument type or size differs),
// the tracer decodes arguments with it, and abi_c_test.go compiles the struct list it implies (plus
// the nested structs, listed there) against the real header, taking the C member names from the
// fields' c tags. DRMIoctls (drm.go) does the same for the render node's DRM commands: each has a
// DRM_IOCTL_* constant, and those the emulator decodes an argument type; drm_c_test.go checks them
// against libdrm's <libdrm/drm.h> and <libdrm/amdgpu_drm.h>.
package abi

// _IOC encoding (include/uapi/asm-generic/ioctl.h).
const (
	IOCNone  = 0
	IOCWrite = 1
	IOCRead  = 2

	iocNRShift   = 0
	iocTypeShift = 8
	iocSizeShift = 16
	iocDirShift  = 30
	IOCSizeMask  = 0x3fff
)

// IOC builds an ioctl command word.
func IOC(dir, typ, nr, size uint32) uint32 {
	return dir<<iocDirShift | typ<<iocTypeShift | nr<<iocNRShift | size<<iocSizeShift
}

// IOCNr, IOCType, IOCSize and IOCDir decode a command word.
func IOCNr(cmd uint32) uint32   { return cmd & 0xff }
func IOCType(cmd uint32) uint32 { return cmd >> iocTypeShift & 0xff }
func IOCSize(cmd uint32) uint32 { return cmd >> iocSizeShift & IOCSizeMask }
func IOCDir(cmd uint32) uint32  { return cmd >> iocDirShift & 3 }

// AMDKFD_IOCTL_BASE.
const AMDKFDIOCTLBase = 'K'

// Interface version this package describes (KFD_IOCTL_MAJOR_VERSION / MINOR of 1.18).
const (
	KFD_IOCTL_MAJOR_VERSION = 1
	KFD_IOCTL_MINOR_VERSION = 18
)
