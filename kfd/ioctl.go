package kfd

import (
	"encoding/binary"
	"fmt"
	"reflect"
	"syscall"

	"github.com/kfdemu/kfdemu/kfd/abi"
)

// handler serves one command on kdata, the kernel-side copy of its argument (max(usize, ksize)
// bytes, zero past what the caller supplied). def builds one from a typed handler.
type handler func(p *Process, c Caller, kdata []byte) syscall.Errno

type ioctlDesc struct {
	cmd  uint32 // the driver's own command word (direction and size), abi.Ioctls'
	fn   handler
	name string
	// consultsSVM: the outcome depends on the SVM ranges (address overlap, queue buffers, the
	// ranges themselves), so the client's earlier munmaps must have reached them first.
	consultsSVM bool
}

// ioctls is amdkfd_ioctls[] and, from AMDKFD_COMMAND_START_2, the DKMS driver's table of its
// out-of-tree commands: one entry per number, the function nil for numbers with none.
var ioctls = ioctlTable()

func ioctlTable() *[abi.AMDKFD_COMMAND_END_2]ioctlDesc {
	t := new([abi.AMDKFD_COMMAND_END_2]ioctlDesc)
	def(t, abi.AMDKFD_IOC_GET_VERSION, getVersion)
	def(t, abi.AMDKFD_IOC_GET_PROCESS_APERTURES, getProcessApertures)
	def(t, abi.AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, getProcessAperturesNew)
	def(t, abi.AMDKFD_IOC_ACQUIRE_VM, acquireVM)
	def(t, abi.AMDKFD_IOC_GET_CLOCK_COUNTERS, getClockCounters)
	def(t, abi.AMDKFD_IOC_SET_MEMORY_POLICY, setMemoryPolicy)
	def(t, abi.AMDKFD_IOC_SET_SCRATCH_BACKING_VA, setScratchBackingVA)
	def(t, abi.AMDKFD_IOC_GET_TILE_CONFIG, getTileConfig)
	def(t, abi.AMDKFD_IOC_SET_TRAP_HANDLER, setTrapHandler)
	def(t, abi.AMDKFD_IOC_SET_XNACK_MODE, setXnackMode)
	def(t, abi.AMDKFD_IOC_RUNTIME_ENABLE, runtimeEnable)
	def(t, abi.AMDKFD_IOC_AVAILABLE_MEMORY, availableMemory)
	def(t, abi.AMDKFD_IOC_SMI_EVENTS, smiEvents)
	def(t, abi.AMDKFD_IOC_DBG_TRAP, dbgTrap)
	def(t, abi.AMDKFD_IOC_DBG_REGISTER_DEPRECATED, deprecated[abi.DbgRegisterArgs])
	def(t, abi.AMDKFD_IOC_DBG_UNREGISTER_DEPRECATED, deprecated[abi.DbgUnregisterArgs])
	def(t, abi.AMDKFD_IOC_DBG_ADDRESS_WATCH_DEPRECATED, deprecated[abi.DbgAddressWatchArgs])
	def(t, abi.AMDKFD_IOC_DBG_WAVE_CONTROL_DEPRECATED, deprecated[abi.DbgWaveControlArgs])
	def(t, abi.AMDKFD_IOC_CRIU_OP, criuOp)
	def(t, abi.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, allocMemory)
	def(t, abi.AMDKFD_IOC_FREE_MEMORY_OF_GPU, freeMemory)
	def(t, abi.AMDKFD_IOC_MAP_MEMORY_TO_GPU, mapMemory)
	def(t, abi.AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU, unmapMemory)
	def(t, abi.AMDKFD_IOC_GET_DMABUF_INFO, getDmabufInfo)
	def(t, abi.AMDKFD_IOC_IMPORT_DMABUF, importDmabuf)
	def(t, abi.AMDKFD_IOC_EXPORT_DMABUF, exportDmabuf)
	defFlex(t, abi.AMDKFD_IOC_SVM, svmIoctl)
	def(t, abi.AMDKFD_IOC_CREATE_EVENT, createEvent)
	def(t, abi.AMDKFD_IOC_DESTROY_EVENT, destroyEvent)
	def(t, abi.AMDKFD_IOC_SET_EVENT, setEvent)
	def(t, abi.AMDKFD_IOC_RESET_EVENT, resetEvent)
	def(t, abi.AMDKFD_IOC_WAIT_EVENTS, waitEvents)
	def(t, abi.AMDKFD_IOC_CREATE_QUEUE, createQueue)
	def(t, abi.AMDKFD_IOC_DESTROY_QUEUE, destroyQueue)
	def(t, abi.AMDKFD_IOC_UPDATE_QUEUE, updateQueue)
	def(t, abi.AMDKFD_IOC_SET_CU_MASK, setCUMask)
	def(t, abi.AMDKFD_IOC_GET_QUEUE_WAVE_STATE, getQueueWaveState)
	def(t, abi.AMDKFD_IOC_ALLOC_QUEUE_GWS, allocQueueGWS)
	// AMD's out-of-tree commands (ipc.go).
	def(t, abi.AMDKFD_IOC_IPC_IMPORT_HANDLE, ipcImportHandle)
	def(t, abi.AMDKFD_IOC_IPC_EXPORT_HANDLE, ipcExportHandle)
	def(t, abi.AMDKFD_IOC_CROSS_MEMORY_COPY, crossMemoryCopy)
	for _, cmd := range []uint32{abi.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, abi.AMDKFD_IOC_MAP_MEMORY_TO_GPU,
		abi.AMDKFD_IOC_CREATE_QUEUE, abi.AMDKFD_IOC_SVM, abi.AMDKFD_IOC_SET_XNACK_MODE} {
		t[abi.IOCNr(cmd)].consultsSVM = true
	}
	return t
}

// lookup returns the abi.Ioctls entry of cmd after checking that a handler taking *A serves it:
// cmd must be the table's command word, A the table's argument type, and A's encoded size the
// command's size. A mismatch is a mistake in ioctlTable and panics as the package loads, so it
// fails every test.
func lookup[A any](cmd uint32) abi.Ioctl {
	io, ok := abi.IoctlOf(abi.IOCNr(cmd))
	switch typ := reflect.TypeFor[A](); {
	case !ok || io.Cmd != cmd || abi.IOCType(cmd) != abi.AMDKFDIOCTLBase:
		panic(fmt.Sprintf("kfd: command %#x is not in abi.Ioctls", cmd))
	case typ != io.Arg:
		panic(fmt.Sprintf("kfd: the handler of AMDKFD_IOC_%s takes %v, abi.Ioctls says %v", io.Name, typ, io.Arg))
	case binary.Size(new(A)) != int(abi.IOCSize(cmd)):
		panic(fmt.Sprintf("kfd: %v encodes to %d bytes, AMDKFD_IOC_%s carries %d", typ, binary.Size(new(A)), io.Name, abi.IOCSize(cmd)))
	}
	return io
}

// def enters the typed handler fn for cmd in t. The wrapper decodes the argument struct from
// kdata if the command is _IOW (otherwise it starts zeroed), calls fn, and encodes the struct back
// into kdata if the command is _IOR, whatever fn returned (kfd_ioctl copies out on errors too).
func def[A any](t *[abi.AMDKFD_COMMAND_END_2]ioctlDesc, cmd uint32, fn func(*Process, Caller, *A) syscall.Errno) {
	io := lookup[A](cmd)
	in, out := abi.IOCDir(cmd)&abi.IOCWrite != 0, abi.IOCDir(cmd)&abi.IOCRead != 0
	t[io.Nr] = ioctlDesc{cmd: io.Cmd, name: io.Name, fn: func(p *Process, c Caller, kdata []byte) syscall.Errno {
		var a A
		if in {
			decode(kdata, &a)
		}
		errno := fn(p, c, &a)
		if out {
			encode(kdata, &a)
		}
		return errno
	}}
}

// defFlex is def for a command whose struct ends in a flexible array member (SVM's attrs[]): fn
// also gets the bytes of kdata after the struct, the array as the caller sized it (the command
// word's size covers both), to read and update in place.
func defFlex[A any](t *[abi.AMDKFD_COMMAND_END_2]ioctlDesc, cmd uint32, fn func(*Process, Caller, *A, []byte) syscall.Errno) {
	io := lookup[A](cmd)
	size := int(abi.IOCSize(cmd))
	in, out := abi.IOCDir(cmd)&abi.IOCWrite != 0, abi.IOCDir(cmd)&abi.IOCRead != 0
	t[io.Nr] = ioctlDesc{cmd: io.Cmd, name: io.Name, fn: func(p *Process, c Caller, kdata []byte) syscall.Errno {
		var a A
		if in {
			decode(kdata, &a)
		}
		errno := fn(p, c, &a, kdata[size:])
		if out {
			encode(kdata, &a)
		}
		return errno
	}}
}

// IoctlName names a command number for logs ("" if unknown).
func IoctlName(cmd uint32) string {
	if nr := abi.IOCNr(cmd); nr < uint32(len(ioctls)) {
		return ioctls[nr].name
	}
	return ""
}

// ioctl follows kfd_ioctl() in kfd_chardev.c: numbers outside [COMMAND_START, COMMAND_END), other
// than the out-of-tree ones served (ipc.go), get ENOTTY; the driver's own command word decides
// direction and size; a shorter user struct is zero-filled up to the driver's size and only the
// user's size is copied back.
func (p *Process) ioctl(c Caller, cmd uint32, arg []byte) syscall.Errno {
	nr := abi.IOCNr(cmd)
	switch {
	case abi.IOCType(cmd) != abi.AMDKFDIOCTLBase || nr < abi.AMDKFD_COMMAND_START || nr >= abi.AMDKFD_COMMAND_END_2:
		return syscall.ENOTTY
	case nr >= abi.AMDKFD_COMMAND_END && (nr < abi.AMDKFD_COMMAND_START_2 || ioctls[nr].fn == nil):
		return syscall.ENOTTY // upstream's answer to every out-of-tree number, served here or not
	}
	p.mu.Lock()
	dead, queues := p.dead, len(p.queues)
	p.mu.Unlock()
	if queues > 0 {
		// A client that makes a syscall may just have rung a doorbell. Only a process with
		// queues has one to ring: for the others a poke would wake the scanner for nothing,
		// a goroutine switch beside every ioctl.
		p.d.Poke()
	}
	if dead {
		return syscall.ENODEV // torn down under an open file (the daemon is stopping)
	}
	desc := &ioctls[nr]
	if desc.fn == nil {
		return syscall.EINVAL
	}
	if desc.consultsSVM {
		p.syncMM()
	}
	usize := int(abi.IOCSize(cmd))
	ksize := int(abi.IOCSize(desc.cmd))
	kdata := make([]byte, max(usize, ksize))
	if abi.IOCDir(desc.cmd)&abi.IOCWrite != 0 {
		copy(kdata, arg[:min(usize, len(arg))])
	}
	errno := desc.fn(p, c, kdata)
	if abi.IOCDir(desc.cmd)&abi.IOCRead != 0 {
		copy(arg, kdata[:min(usize, len(arg))])
	}
	if errno != 0 {
		p.d.log.Debug("ioctl failed", "tgid", p.tgid, "ioctl", desc.name, "errno", errno.Error())
	}
	return errno
}

// decode/encode move a struct (or a slice of them) in and out of a byte buffer (little endian,
// the layout abi_c_test checks). decode leaves v alone if b is too short; encode writes what fits.
func decode(b []byte, v any) { _, _ = binary.Decode(b, binary.LittleEndian, v) }

func encode(b []byte, v any) {
	if _, err := binary.Encode(b, binary.LittleEndian, v); err != nil {
		full, _ := binary.Append(nil, binary.LittleEndian, v)
		copy(b, full)
	}
}
