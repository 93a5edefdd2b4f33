package fs

import (
	"encoding/binary"
	"os"
	"syscall"
	"testing"
	"unsafe"

	"github.com/kfdemu/kfdemu/kfd/abi"
	"golang.org/x/sys/unix"
)

// TestConformanceThroughMount: argument -> result or errno for every ioctl number, issued with
// real ioctl(2) calls on the mount (client memory is this process's; the daemon reads it with
// process_vm_readv), before and after ACQUIRE_VM.
func TestConformanceThroughMount(t *testing.T) {
	mnt, _ := mountDriver(t, "mi210")
	c, err := openClient(mnt)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	mem := make([]byte, 1<<16)
	base := uint64(uintptr(unsafe.Pointer(&mem[0])))
	binary.LittleEndian.PutUint32(mem, c.gpu)
	h, bo, err := c.alloc(0x100000000, 1<<16, abi.KFD_IOC_ALLOC_MEM_FLAGS_GTT)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(bo)
	ring := uint64(0x100000000)
	type tc struct {
		name string
		cmd  uint32
		arg  any
		want syscall.Errno
	}
	cases := []tc{
		{"GET_VERSION", abi.AMDKFD_IOC_GET_VERSION, &abi.GetVersionArgs{}, 0},
		{"unknown nr", abi.IOC(abi.IOCRead, 'K', 0x40, 8), &abi.GetVersionArgs{}, syscall.ENOTTY},
		{"nr 0", abi.IOC(abi.IOCRead, 'K', 0x00, 8), &abi.GetVersionArgs{}, syscall.ENOTTY},
		{"CREATE_QUEUE bad percentage", abi.AMDKFD_IOC_CREATE_QUEUE, &abi.CreateQueueArgs{RingBaseAddress: ring, RingSize: 4096, GPUID: c.gpu, QueueType: 2, QueuePercentage: 101, ReadPointerAddress: ring + 0x8000, WritePointerAddress: ring + 0x8008}, syscall.EINVAL},
		{"CREATE_QUEUE ring not pow2", abi.AMDKFD_IOC_CREATE_QUEUE, &abi.CreateQueueArgs{RingBaseAddress: ring, RingSize: 3000, GPUID: c.gpu, QueueType: 2, ReadPointerAddress: ring + 0x8000, WritePointerAddress: ring + 0x8008}, syscall.EINVAL},
		{"CREATE_QUEUE unknown type", abi.AMDKFD_IOC_CREATE_QUEUE, &abi.CreateQueueArgs{RingBaseAddress: ring, RingSize: 4096, GPUID: c.gpu, QueueType: 7, ReadPointerAddress: ring + 0x8000, WritePointerAddress: ring + 0x8008}, syscall.ENOTSUP},
		{"CREATE_QUEUE unmapped ring", abi.AMDKFD_IOC_CREATE_QUEUE, &abi.CreateQueueArgs{RingBaseAddress: 0x900000000, RingSize: 4096, GPUID: c.gpu, QueueType: 2, ReadPointerAddress: ring + 0x8000, WritePointerAddress: ring + 0x8008}, syscall.EINVAL},
		{"DESTROY_QUEUE unknown", abi.AMDKFD_IOC_DESTROY_QUEUE, &abi.DestroyQueueArgs{QueueID: 77}, syscall.EINVAL},
		{"SET_MEMORY_POLICY", abi.AMDKFD_IOC_SET_MEMORY_POLICY, &abi.SetMemoryPolicyArgs{GPUID: c.gpu, DefaultPolicy: 1}, 0},
		{"SET_MEMORY_POLICY bad policy", abi.AMDKFD_IOC_SET_MEMORY_POLICY, &abi.SetMemoryPolicyArgs{GPUID: c.gpu, DefaultPolicy: 5}, syscall.EINVAL},
		{"SET_MEMORY_POLICY bad gpu", abi.AMDKFD_IOC_SET_MEMORY_POLICY, &abi.SetMemoryPolicyArgs{GPUID: 1}, syscall.EINVAL},
		{"GET_CLOCK_COUNTERS", abi.AMDKFD_IOC_GET_CLOCK_COUNTERS, &abi.GetClockCountersArgs{GPUID: c.gpu}, 0},
		{"GET_PROCESS_APERTURES", abi.AMDKFD_IOC_GET_PROCESS_APERTURES, &abi.GetProcessAperturesArgs{}, 0},
		{"UPDATE_QUEUE unknown", abi.AMDKFD_IOC_UPDATE_QUEUE, &abi.UpdateQueueArgs{QueueID: 77}, syscall.EINVAL},
		{"UPDATE_QUEUE bad priority", abi.AMDKFD_IOC_UPDATE_QUEUE, &abi.UpdateQueueArgs{QueuePriority: 16}, syscall.EINVAL},
		{"CREATE_EVENT bad type", abi.AMDKFD_IOC_CREATE_EVENT, &abi.CreateEventArgs{EventType: 42}, syscall.EINVAL},
		{"CREATE_EVENT bad page", abi.AMDKFD_IOC_CREATE_EVENT, &abi.CreateEventArgs{EventPageOffset: 0xdead}, syscall.EINVAL},
		{"DESTROY_EVENT unknown", abi.AMDKFD_IOC_DESTROY_EVENT, &abi.DestroyEventArgs{EventID: 9}, syscall.EINVAL},
		{"SET_EVENT unknown", abi.AMDKFD_IOC_SET_EVENT, &abi.SetEventArgs{EventID: 9}, syscall.EINVAL},
		{"RESET_EVENT unknown", abi.AMDKFD_IOC_RESET_EVENT, &abi.ResetEventArgs{EventID: 9}, syscall.EINVAL},
		{"WAIT_EVENTS none", abi.AMDKFD_IOC_WAIT_EVENTS, &abi.WaitEventsArgs{EventsPtr: base, NumEvents: 0}, 0}, // completes: 0 of 0 activated
		{"WAIT_EVENTS too many", abi.AMDKFD_IOC_WAIT_EVENTS, &abi.WaitEventsArgs{EventsPtr: base, NumEvents: 1 << 20}, syscall.ENOMEM},
		{"WAIT_EVENTS bad pointer", abi.AMDKFD_IOC_WAIT_EVENTS, &abi.WaitEventsArgs{EventsPtr: 8, NumEvents: 1}, syscall.EFAULT},
		{"DBG_REGISTER_DEPRECATED", abi.AMDKFD_IOC_DBG_REGISTER_DEPRECATED, &abi.DbgRegisterArgs{}, syscall.EPERM},
		{"DBG_WAVE_CONTROL_DEPRECATED", abi.AMDKFD_IOC_DBG_WAVE_CONTROL_DEPRECATED, &abi.DbgWaveControlArgs{}, syscall.EPERM},
		{"SET_SCRATCH_BACKING_VA", abi.AMDKFD_IOC_SET_SCRATCH_BACKING_VA, &abi.SetScratchBackingVAArgs{VAAddr: 0x1000, GPUID: c.gpu}, 0},
		{"SET_SCRATCH_BACKING_VA bad gpu", abi.AMDKFD_IOC_SET_SCRATCH_BACKING_VA, &abi.SetScratchBackingVAArgs{GPUID: 3}, syscall.EINVAL},
		{"GET_TILE_CONFIG", abi.AMDKFD_IOC_GET_TILE_CONFIG, &abi.GetTileConfigArgs{TileConfigPtr: base, MacroTileConfigPtr: base + 4096, NumTileConfigs: 32, NumMacroTileConfigs: 16, GPUID: c.gpu}, 0},
		{"GET_TILE_CONFIG bad pointer", abi.AMDKFD_IOC_GET_TILE_CONFIG, &abi.GetTileConfigArgs{TileConfigPtr: 8, NumTileConfigs: 4, GPUID: c.gpu}, syscall.EFAULT},
		{"SET_TRAP_HANDLER", abi.AMDKFD_IOC_SET_TRAP_HANDLER, &abi.SetTrapHandlerArgs{TBAAddr: 0x1000, GPUID: c.gpu}, 0},
		{"SET_TRAP_HANDLER bad gpu", abi.AMDKFD_IOC_SET_TRAP_HANDLER, &abi.SetTrapHandlerArgs{GPUID: 3}, syscall.EINVAL},
		{"GET_PROCESS_APERTURES_NEW bad pointer", abi.AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, &abi.GetProcessAperturesNewArgs{KFDProcessDeviceAperturesPtr: 8, NumOfNodes: 1}, syscall.EFAULT},
		{"ACQUIRE_VM bad fd", abi.AMDKFD_IOC_ACQUIRE_VM, &abi.AcquireVMArgs{DRMFD: 999, GPUID: c.gpu}, syscall.EINVAL},
		{"ACQUIRE_VM kfd fd", abi.AMDKFD_IOC_ACQUIRE_VM, &abi.AcquireVMArgs{DRMFD: uint32(c.kfd), GPUID: c.gpu}, syscall.EINVAL},
		{"ALLOC no domain", abi.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &abi.AllocMemoryOfGPUArgs{VAAddr: 0x200000000, Size: 4096, GPUID: c.gpu}, syscall.EINVAL},
		{"ALLOC overlap", abi.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &abi.AllocMemoryOfGPUArgs{VAAddr: 0x100000000, Size: 4096, GPUID: c.gpu, Flags: 2}, syscall.EINVAL},
		{"ALLOC too much VRAM", abi.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &abi.AllocMemoryOfGPUArgs{VAAddr: 0x200000000, Size: 1 << 40, GPUID: c.gpu, Flags: 1}, syscall.ENOMEM},
		{"FREE unknown", abi.AMDKFD_IOC_FREE_MEMORY_OF_GPU, &abi.FreeMemoryOfGPUArgs{Handle: 0x55}, syscall.EINVAL},
		{"MAP no devices", abi.AMDKFD_IOC_MAP_MEMORY_TO_GPU, &abi.MapMemoryToGPUArgs{Handle: h, DeviceIDsArrayPtr: base}, syscall.EINVAL},
		{"MAP bad pointer", abi.AMDKFD_IOC_MAP_MEMORY_TO_GPU, &abi.MapMemoryToGPUArgs{Handle: h, DeviceIDsArrayPtr: 8, NDevices: 1}, syscall.EFAULT},
		{"UNMAP n_success past n_devices", abi.AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU, &abi.UnmapMemoryFromGPUArgs{Handle: h, DeviceIDsArrayPtr: base, NDevices: 1, NSuccess: 2}, syscall.EINVAL},
		{"SET_CU_MASK empty", abi.AMDKFD_IOC_SET_CU_MASK, &abi.SetCUMaskArgs{QueueID: 0}, syscall.EINVAL},
		{"GET_QUEUE_WAVE_STATE unknown", abi.AMDKFD_IOC_GET_QUEUE_WAVE_STATE, &abi.GetQueueWaveStateArgs{QueueID: 5}, syscall.EINVAL},
		// dma_buf_get: an open fd that is not a dma-buf (the test's stdin) EINVAL, a closed one EBADF.
		{"GET_DMABUF_INFO not a dma-buf", abi.AMDKFD_IOC_GET_DMABUF_INFO, &abi.GetDmabufInfoArgs{}, syscall.EINVAL},
		{"GET_DMABUF_INFO bad fd", abi.AMDKFD_IOC_GET_DMABUF_INFO, &abi.GetDmabufInfoArgs{DmabufFD: 1 << 30}, syscall.EBADF},
		{"IMPORT_DMABUF no such GPU", abi.AMDKFD_IOC_IMPORT_DMABUF, &abi.ImportDmabufArgs{}, syscall.EINVAL},
		{"ALLOC_QUEUE_GWS unknown", abi.AMDKFD_IOC_ALLOC_QUEUE_GWS, &abi.AllocQueueGWSArgs{QueueID: 5}, syscall.EINVAL},
		{"SMI_EVENTS", abi.AMDKFD_IOC_SMI_EVENTS, &abi.SMIEventsArgs{GPUID: c.gpu}, syscall.EOPNOTSUPP},
		{"SMI_EVENTS bad gpu", abi.AMDKFD_IOC_SMI_EVENTS, &abi.SMIEventsArgs{GPUID: 3}, syscall.EINVAL},
		{"SVM at address 0", abi.AMDKFD_IOC_SVM, &abi.SVMArgs{}, syscall.EINVAL},
		{"SET_XNACK_MODE query", abi.AMDKFD_IOC_SET_XNACK_MODE, &abi.SetXnackModeArgs{XnackEnabled: -1}, 0},
		{"CRIU_OP bad op", abi.AMDKFD_IOC_CRIU_OP, &abi.CRIUArgs{Op: 9}, syscall.EINVAL},
		{"AVAILABLE_MEMORY", abi.AMDKFD_IOC_AVAILABLE_MEMORY, &abi.GetAvailableMemoryArgs{GPUID: c.gpu}, 0},
		{"AVAILABLE_MEMORY bad gpu", abi.AMDKFD_IOC_AVAILABLE_MEMORY, &abi.GetAvailableMemoryArgs{GPUID: 3}, syscall.EINVAL},
		// Outside kfdemu exec's seccomp supervisor no fd can be installed (README, deviations).
		{"EXPORT_DMABUF", abi.AMDKFD_IOC_EXPORT_DMABUF, &abi.ExportDmabufArgs{Handle: h}, syscall.EOPNOTSUPP},
		{"EXPORT_DMABUF no such BO", abi.AMDKFD_IOC_EXPORT_DMABUF, &abi.ExportDmabufArgs{Handle: h + 99}, syscall.EINVAL},
		{"RUNTIME_ENABLE", abi.AMDKFD_IOC_RUNTIME_ENABLE, &abi.RuntimeEnableArgs{ModeMask: 1}, 0},
		{"RUNTIME_ENABLE twice", abi.AMDKFD_IOC_RUNTIME_ENABLE, &abi.RuntimeEnableArgs{ModeMask: 1}, syscall.EBUSY},
		{"DBG_TRAP of pid 0", abi.AMDKFD_IOC_DBG_TRAP, &abi.DbgTrapArgs{Op: 99}, syscall.ESRCH},
		{"DBG_TRAP not enabled", abi.AMDKFD_IOC_DBG_TRAP, &abi.DbgTrapArgs{Pid: uint32(os.Getpid()), Op: abi.KFD_IOC_DBG_TRAP_QUERY_DEBUG_EVENT}, syscall.EINVAL},
	}
	seen := map[uint32]bool{}
	for _, tc := range cases {
		if got := ioctl(c.kfd, tc.cmd, tc.arg); got != tc.want {
			t.Errorf("%s: errno %v, want %v", tc.name, got, tc.want)
		}
		seen[abi.IOCNr(tc.cmd)] = true
	}
	for _, io := range abi.Ioctls {
		if !seen[io.Nr] && io.Nr != 0x15 && io.Nr != 0x16 && io.Nr != 0x18 && io.Nr != 0x19 && io.Nr != 0x0E && io.Nr != 0x0F && io.Nr != 0x20 {
			t.Errorf("AMDKFD_IOC_%s has no case", io.Name)
		}
	}
	var v abi.GetVersionArgs
	ioctl(c.kfd, abi.AMDKFD_IOC_GET_VERSION, &v)
	if v.MajorVersion != 1 || v.MinorVersion != 2 {
		t.Errorf("version %+v", v)
	}
}
