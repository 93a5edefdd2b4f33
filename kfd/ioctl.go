package kfd

import (
	"bytes"
	"encoding/binary"
	"syscall"

	"github.com/kfdemu/kfdemu/kfd/abi"
)

type handler func(p *Process, c Caller, arg []byte) syscall.Errno

type ioctlDesc struct {
	cmd  uint32 // the driver's own command word (direction and size)
	fn   handler
	name string
}

// consultsSVM are the ioctls whose outcome depends on the SVM ranges (address overlap, queue
// buffers, the ranges themselves): the client's earlier munmaps must have reached them.
var consultsSVM [abi.AMDKFD_COMMAND_END]bool

func init() {
	for _, cmd := range []uint32{abi.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, abi.AMDKFD_IOC_MAP_MEMORY_TO_GPU,
		abi.AMDKFD_IOC_CREATE_QUEUE, abi.AMDKFD_IOC_SVM, abi.AMDKFD_IOC_SET_XNACK_MODE} {
		consultsSVM[abi.IOCNr(cmd)] = true
	}
}

// ioctls is amdkfd_ioctls[]: one entry per number, the function nil for numbers with none.
var ioctls [abi.AMDKFD_COMMAND_END]ioctlDesc

func def(cmd uint32, fn handler) {
	nr := abi.IOCNr(cmd)
	name := ""
	for _, io := range abi.Ioctls {
		if io.Nr == nr {
			name = io.Name
		}
	}
	ioctls[nr] = ioctlDesc{cmd: cmd, fn: fn, name: name}
}

// IoctlName names a command number for logs ("" if unknown).
func IoctlName(cmd uint32) string {
	if nr := abi.IOCNr(cmd); nr < uint32(len(ioctls)) {
		return ioctls[nr].name
	}
	return ""
}

// ioctl follows kfd_ioctl() in kfd_chardev.c: numbers outside [COMMAND_START, COMMAND_END) get
// ENOTTY; the driver's own command word decides direction and size; a shorter user struct is
// zero-filled up to the driver's size and only the user's size is copied back.
func (p *Process) ioctl(c Caller, cmd uint32, arg []byte) syscall.Errno {
	nr := abi.IOCNr(cmd)
	if abi.IOCType(cmd) != abi.AMDKFDIOCTLBase || nr < abi.AMDKFD_COMMAND_START || nr >= abi.AMDKFD_COMMAND_END {
		return syscall.ENOTTY
	}
	p.d.Poke() // a client that makes a syscall may just have rung a doorbell
	p.mu.Lock()
	dead := p.dead
	p.mu.Unlock()
	if dead {
		return syscall.ENODEV // torn down under an open file (the daemon is stopping)
	}
	desc := ioctls[nr]
	if desc.fn == nil {
		return syscall.EINVAL
	}
	if consultsSVM[nr] {
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

// decode/encode move an argument struct in and out of the ioctl buffer (little endian, the
// layout abi_c_test checks).
func decode(arg []byte, v any) {
	binary.Read(bytes.NewReader(arg), binary.LittleEndian, v)
}

func encode(arg []byte, v any) {
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, v)
	copy(arg, b.Bytes())
}

func init() {
	def(abi.AMDKFD_IOC_GET_VERSION, getVersion)
	def(abi.AMDKFD_IOC_GET_PROCESS_APERTURES, getProcessApertures)
	def(abi.AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, getProcessAperturesNew)
	def(abi.AMDKFD_IOC_ACQUIRE_VM, acquireVM)
	def(abi.AMDKFD_IOC_GET_CLOCK_COUNTERS, getClockCounters)
	def(abi.AMDKFD_IOC_SET_MEMORY_POLICY, setMemoryPolicy)
	def(abi.AMDKFD_IOC_SET_SCRATCH_BACKING_VA, setScratchBackingVA)
	def(abi.AMDKFD_IOC_GET_TILE_CONFIG, getTileConfig)
	def(abi.AMDKFD_IOC_SET_TRAP_HANDLER, setTrapHandler)
	def(abi.AMDKFD_IOC_SET_XNACK_MODE, setXnackMode)
	def(abi.AMDKFD_IOC_RUNTIME_ENABLE, runtimeEnable)
	def(abi.AMDKFD_IOC_AVAILABLE_MEMORY, availableMemory)
	def(abi.AMDKFD_IOC_SMI_EVENTS, smiEvents)
	def(abi.AMDKFD_IOC_DBG_TRAP, dbgTrap)
	for _, c := range []uint32{abi.AMDKFD_IOC_DBG_REGISTER_DEPRECATED, abi.AMDKFD_IOC_DBG_UNREGISTER_DEPRECATED,
		abi.AMDKFD_IOC_DBG_ADDRESS_WATCH_DEPRECATED, abi.AMDKFD_IOC_DBG_WAVE_CONTROL_DEPRECATED} {
		def(c, deprecated)
	}
	def(abi.AMDKFD_IOC_CRIU_OP, criuOp)
	def(abi.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, allocMemory)
	def(abi.AMDKFD_IOC_FREE_MEMORY_OF_GPU, freeMemory)
	def(abi.AMDKFD_IOC_MAP_MEMORY_TO_GPU, mapMemory)
	def(abi.AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU, unmapMemory)
	def(abi.AMDKFD_IOC_GET_DMABUF_INFO, dmabufUnsupported)
	def(abi.AMDKFD_IOC_IMPORT_DMABUF, dmabufUnsupported)
	def(abi.AMDKFD_IOC_EXPORT_DMABUF, dmabufUnsupported)
	def(abi.AMDKFD_IOC_SVM, svmIoctl)
	def(abi.AMDKFD_IOC_CREATE_EVENT, createEvent)
	def(abi.AMDKFD_IOC_DESTROY_EVENT, destroyEvent)
	def(abi.AMDKFD_IOC_SET_EVENT, setEvent)
	def(abi.AMDKFD_IOC_RESET_EVENT, resetEvent)
	def(abi.AMDKFD_IOC_WAIT_EVENTS, waitEvents)
	def(abi.AMDKFD_IOC_CREATE_QUEUE, createQueue)
	def(abi.AMDKFD_IOC_DESTROY_QUEUE, destroyQueue)
	def(abi.AMDKFD_IOC_UPDATE_QUEUE, updateQueue)
	def(abi.AMDKFD_IOC_SET_CU_MASK, setCUMask)
	def(abi.AMDKFD_IOC_GET_QUEUE_WAVE_STATE, getQueueWaveState)
	def(abi.AMDKFD_IOC_ALLOC_QUEUE_GWS, allocQueueGWS)
}
