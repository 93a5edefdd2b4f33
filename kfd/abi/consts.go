package abi

import "reflect"

// Ioctl describes one AMDKFD_IOC_* command: what the header's
// "#define AMDKFD_IOC_<Name> AMDKFD_IOWR(<Nr>, struct <C>)" says.
type Ioctl struct {
	Nr   uint32
	Name string // without the AMDKFD_IOC_ prefix
	Cmd  uint32 // _IOC(direction, 'K', Nr, sizeof(Arg))
	// Arg is the argument struct of this package (its fields' c tags name the C members; its
	// size is IOCSize(Cmd)) and C the name of the C struct, without "struct".
	Arg reflect.Type
	C   string
}

func ioctl[T any](dir, nr uint32, name, c string) Ioctl {
	t := reflect.TypeFor[T]()
	return Ioctl{Nr: nr, Name: name, Cmd: IOC(dir, AMDKFDIOCTLBase, nr, uint32(t.Size())), Arg: t, C: c}
}

// The AMDKFD_IOR/IOW/IOWR macros of kfd_ioctl.h.
func ior[T any](nr uint32, name, c string) Ioctl  { return ioctl[T](IOCRead, nr, name, c) }
func iow[T any](nr uint32, name, c string) Ioctl  { return ioctl[T](IOCWrite, nr, name, c) }
func iowr[T any](nr uint32, name, c string) Ioctl { return ioctl[T](IOCRead|IOCWrite, nr, name, c) }

// AMDKFD_COMMAND_START and _END (1.18: END is 0x27).
const (
	AMDKFD_COMMAND_START = 0x01
	AMDKFD_COMMAND_END   = 0x27
)

// Ioctls is the ioctl table of the interface: every command from AMDKFD_COMMAND_START to
// AMDKFD_COMMAND_END, in order of number, with its argument struct. It is the one place that pairs
// a number with a struct: the AMDKFD_IOC_* command words below, kfd's dispatch table (which checks
// each handler's argument type against it), the tracer's decoder and the C header test
// (abi_c_test.go, which takes the struct list and the C member names from here) all derive from it.
var Ioctls = []Ioctl{
	ior[GetVersionArgs](0x01, "GET_VERSION", "kfd_ioctl_get_version_args"),
	iowr[CreateQueueArgs](0x02, "CREATE_QUEUE", "kfd_ioctl_create_queue_args"),
	iowr[DestroyQueueArgs](0x03, "DESTROY_QUEUE", "kfd_ioctl_destroy_queue_args"),
	iow[SetMemoryPolicyArgs](0x04, "SET_MEMORY_POLICY", "kfd_ioctl_set_memory_policy_args"),
	iowr[GetClockCountersArgs](0x05, "GET_CLOCK_COUNTERS", "kfd_ioctl_get_clock_counters_args"),
	ior[GetProcessAperturesArgs](0x06, "GET_PROCESS_APERTURES", "kfd_ioctl_get_process_apertures_args"),
	iow[UpdateQueueArgs](0x07, "UPDATE_QUEUE", "kfd_ioctl_update_queue_args"),
	iowr[CreateEventArgs](0x08, "CREATE_EVENT", "kfd_ioctl_create_event_args"),
	iow[DestroyEventArgs](0x09, "DESTROY_EVENT", "kfd_ioctl_destroy_event_args"),
	iow[SetEventArgs](0x0A, "SET_EVENT", "kfd_ioctl_set_event_args"),
	iow[ResetEventArgs](0x0B, "RESET_EVENT", "kfd_ioctl_reset_event_args"),
	iowr[WaitEventsArgs](0x0C, "WAIT_EVENTS", "kfd_ioctl_wait_events_args"),
	iow[DbgRegisterArgs](0x0D, "DBG_REGISTER_DEPRECATED", "kfd_ioctl_dbg_register_args"),
	iow[DbgUnregisterArgs](0x0E, "DBG_UNREGISTER_DEPRECATED", "kfd_ioctl_dbg_unregister_args"),
	iow[DbgAddressWatchArgs](0x0F, "DBG_ADDRESS_WATCH_DEPRECATED", "kfd_ioctl_dbg_address_watch_args"),
	iow[DbgWaveControlArgs](0x10, "DBG_WAVE_CONTROL_DEPRECATED", "kfd_ioctl_dbg_wave_control_args"),
	iowr[SetScratchBackingVAArgs](0x11, "SET_SCRATCH_BACKING_VA", "kfd_ioctl_set_scratch_backing_va_args"),
	iowr[GetTileConfigArgs](0x12, "GET_TILE_CONFIG", "kfd_ioctl_get_tile_config_args"),
	iow[SetTrapHandlerArgs](0x13, "SET_TRAP_HANDLER", "kfd_ioctl_set_trap_handler_args"),
	iowr[GetProcessAperturesNewArgs](0x14, "GET_PROCESS_APERTURES_NEW", "kfd_ioctl_get_process_apertures_new_args"),
	iow[AcquireVMArgs](0x15, "ACQUIRE_VM", "kfd_ioctl_acquire_vm_args"),
	iowr[AllocMemoryOfGPUArgs](0x16, "ALLOC_MEMORY_OF_GPU", "kfd_ioctl_alloc_memory_of_gpu_args"),
	iow[FreeMemoryOfGPUArgs](0x17, "FREE_MEMORY_OF_GPU", "kfd_ioctl_free_memory_of_gpu_args"),
	iowr[MapMemoryToGPUArgs](0x18, "MAP_MEMORY_TO_GPU", "kfd_ioctl_map_memory_to_gpu_args"),
	iowr[UnmapMemoryFromGPUArgs](0x19, "UNMAP_MEMORY_FROM_GPU", "kfd_ioctl_unmap_memory_from_gpu_args"),
	iow[SetCUMaskArgs](0x1A, "SET_CU_MASK", "kfd_ioctl_set_cu_mask_args"),
	iowr[GetQueueWaveStateArgs](0x1B, "GET_QUEUE_WAVE_STATE", "kfd_ioctl_get_queue_wave_state_args"),
	iowr[GetDmabufInfoArgs](0x1C, "GET_DMABUF_INFO", "kfd_ioctl_get_dmabuf_info_args"),
	iowr[ImportDmabufArgs](0x1D, "IMPORT_DMABUF", "kfd_ioctl_import_dmabuf_args"),
	iowr[AllocQueueGWSArgs](0x1E, "ALLOC_QUEUE_GWS", "kfd_ioctl_alloc_queue_gws_args"),
	iowr[SMIEventsArgs](0x1F, "SMI_EVENTS", "kfd_ioctl_smi_events_args"),
	iowr[SVMArgs](0x20, "SVM", "kfd_ioctl_svm_args"),
	iowr[SetXnackModeArgs](0x21, "SET_XNACK_MODE", "kfd_ioctl_set_xnack_mode_args"),
	iowr[CRIUArgs](0x22, "CRIU_OP", "kfd_ioctl_criu_args"),
	iowr[GetAvailableMemoryArgs](0x23, "AVAILABLE_MEMORY", "kfd_ioctl_get_available_memory_args"),
	iowr[ExportDmabufArgs](0x24, "EXPORT_DMABUF", "kfd_ioctl_export_dmabuf_args"),
	iowr[RuntimeEnableArgs](0x25, "RUNTIME_ENABLE", "kfd_ioctl_runtime_enable_args"),
	iowr[DbgTrapArgs](0x26, "DBG_TRAP", "kfd_ioctl_dbg_trap_args"),
}

// AMDKFD_COMMAND_START_2 and _END_2 bound the out-of-tree commands: AMD's DKMS amdkfd
// (ROCK-Kernel-Driver) serves them beside the upstream ones, and the kfd_ioctl.h that libhsakmt
// ships lists them as "non-upstream ioctls". Upstream amdkfd answers them ENOTTY.
const (
	AMDKFD_COMMAND_START_2 = 0x80
	AMDKFD_COMMAND_END_2   = 0x86
)

// OutOfTreeIoctls are the DKMS commands the emulator serves, in order of number: the IPC pair
// that libhsakmt's hsaKmtShareMemory and hsaKmtRegisterSharedHandle (so ROCr's
// hsa_amd_ipc_memory_create/attach and HIP's hipIpc*MemHandle, in both 5.2.3 and 6.2.4) are
// built on, and the cross-process copy of libhsakmt 5.2.3's hsaKmtProcessVMRead/Write. The other
// numbers of the range (0x82 the old debugger's DBG_TRAP, 0x84 RLC_SPM, 0x85 PC_SAMPLE) are not
// served: ENOTTY, as upstream.
var OutOfTreeIoctls = []Ioctl{
	iowr[IPCImportHandleArgs](0x80, "IPC_IMPORT_HANDLE", "kfd_ioctl_ipc_import_handle_args"),
	iowr[IPCExportHandleArgs](0x81, "IPC_EXPORT_HANDLE", "kfd_ioctl_ipc_export_handle_args"),
	iowr[CrossMemoryCopyArgs](0x83, "CROSS_MEMORY_COPY", "kfd_ioctl_cross_memory_copy_args"),
}

// IoctlOf returns the table entry of command number nr, from Ioctls or OutOfTreeIoctls; ok is
// false for a number neither has.
func IoctlOf(nr uint32) (io Ioctl, ok bool) {
	if nr >= AMDKFD_COMMAND_START_2 {
		for _, io := range OutOfTreeIoctls {
			if io.Nr == nr {
				return io, true
			}
		}
		return Ioctl{}, false
	}
	if nr < AMDKFD_COMMAND_START || nr-AMDKFD_COMMAND_START >= uint32(len(Ioctls)) {
		return Ioctl{}, false
	}
	return Ioctls[nr-AMDKFD_COMMAND_START], true
}

// command is the command word of table entry name (a name missing from the table is a mistake
// in this file: the package panics as it loads).
func command(name string) uint32 {
	for _, io := range append(Ioctls[:len(Ioctls):len(Ioctls)], OutOfTreeIoctls...) {
		if io.Name == name {
			return io.Cmd
		}
	}
	panic("abi: AMDKFD_IOC_" + name + " is not in Ioctls")
}

// AMDKFD_IOC_* command words, from Ioctls.
var (
	AMDKFD_IOC_GET_VERSION                  = command("GET_VERSION")
	AMDKFD_IOC_CREATE_QUEUE                 = command("CREATE_QUEUE")
	AMDKFD_IOC_DESTROY_QUEUE                = command("DESTROY_QUEUE")
	AMDKFD_IOC_SET_MEMORY_POLICY            = command("SET_MEMORY_POLICY")
	AMDKFD_IOC_GET_CLOCK_COUNTERS           = command("GET_CLOCK_COUNTERS")
	AMDKFD_IOC_GET_PROCESS_APERTURES        = command("GET_PROCESS_APERTURES")
	AMDKFD_IOC_UPDATE_QUEUE                 = command("UPDATE_QUEUE")
	AMDKFD_IOC_CREATE_EVENT                 = command("CREATE_EVENT")
	AMDKFD_IOC_DESTROY_EVENT                = command("DESTROY_EVENT")
	AMDKFD_IOC_SET_EVENT                    = command("SET_EVENT")
	AMDKFD_IOC_RESET_EVENT                  = command("RESET_EVENT")
	AMDKFD_IOC_WAIT_EVENTS                  = command("WAIT_EVENTS")
	AMDKFD_IOC_DBG_REGISTER_DEPRECATED      = command("DBG_REGISTER_DEPRECATED")
	AMDKFD_IOC_DBG_UNREGISTER_DEPRECATED    = command("DBG_UNREGISTER_DEPRECATED")
	AMDKFD_IOC_DBG_ADDRESS_WATCH_DEPRECATED = command("DBG_ADDRESS_WATCH_DEPRECATED")
	AMDKFD_IOC_DBG_WAVE_CONTROL_DEPRECATED  = command("DBG_WAVE_CONTROL_DEPRECATED")
	AMDKFD_IOC_SET_SCRATCH_BACKING_VA       = command("SET_SCRATCH_BACKING_VA")
	AMDKFD_IOC_GET_TILE_CONFIG              = command("GET_TILE_CONFIG")
	AMDKFD_IOC_SET_TRAP_HANDLER             = command("SET_TRAP_HANDLER")
	AMDKFD_IOC_GET_PROCESS_APERTURES_NEW    = command("GET_PROCESS_APERTURES_NEW")
	AMDKFD_IOC_ACQUIRE_VM                   = command("ACQUIRE_VM")
	AMDKFD_IOC_ALLOC_MEMORY_OF_GPU          = command("ALLOC_MEMORY_OF_GPU")
	AMDKFD_IOC_FREE_MEMORY_OF_GPU           = command("FREE_MEMORY_OF_GPU")
	AMDKFD_IOC_MAP_MEMORY_TO_GPU            = command("MAP_MEMORY_TO_GPU")
	AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU        = command("UNMAP_MEMORY_FROM_GPU")
	AMDKFD_IOC_SET_CU_MASK                  = command("SET_CU_MASK")
	AMDKFD_IOC_GET_QUEUE_WAVE_STATE         = command("GET_QUEUE_WAVE_STATE")
	AMDKFD_IOC_GET_DMABUF_INFO              = command("GET_DMABUF_INFO")
	AMDKFD_IOC_IMPORT_DMABUF                = command("IMPORT_DMABUF")
	AMDKFD_IOC_ALLOC_QUEUE_GWS              = command("ALLOC_QUEUE_GWS")
	AMDKFD_IOC_SMI_EVENTS                   = command("SMI_EVENTS")
	AMDKFD_IOC_SVM                          = command("SVM")
	AMDKFD_IOC_SET_XNACK_MODE               = command("SET_XNACK_MODE")
	AMDKFD_IOC_CRIU_OP                      = command("CRIU_OP")
	AMDKFD_IOC_AVAILABLE_MEMORY             = command("AVAILABLE_MEMORY")
	AMDKFD_IOC_EXPORT_DMABUF                = command("EXPORT_DMABUF")
	AMDKFD_IOC_RUNTIME_ENABLE               = command("RUNTIME_ENABLE")
	AMDKFD_IOC_DBG_TRAP                     = command("DBG_TRAP")

	// Out of tree (OutOfTreeIoctls).
	AMDKFD_IOC_IPC_IMPORT_HANDLE = command("IPC_IMPORT_HANDLE")
	AMDKFD_IOC_IPC_EXPORT_HANDLE = command("IPC_EXPORT_HANDLE")
	AMDKFD_IOC_CROSS_MEMORY_COPY = command("CROSS_MEMORY_COPY")
)

// Queue types (KFD_IOC_QUEUE_TYPE_*).
const (
	KFD_IOC_QUEUE_TYPE_COMPUTE        = 0x0
	KFD_IOC_QUEUE_TYPE_SDMA           = 0x1
	KFD_IOC_QUEUE_TYPE_COMPUTE_AQL    = 0x2
	KFD_IOC_QUEUE_TYPE_SDMA_XGMI      = 0x3
	KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID = 0x4
	KFD_MAX_QUEUE_PERCENTAGE          = 100
	KFD_MAX_QUEUE_PRIORITY            = 15
	KFD_MIN_QUEUE_RING_SIZE           = 1024
)

// Memory policies.
const (
	KFD_IOC_CACHE_POLICY_COHERENT     = 0
	KFD_IOC_CACHE_POLICY_NONCOHERENT  = 1
	KFD_PROC_FLAG_MFMA_HIGH_PRECISION = 1 << 0
)

// Event types, wait results and limits.
const (
	KFD_IOC_EVENT_SIGNAL            = 0
	KFD_IOC_EVENT_NODECHANGE        = 1
	KFD_IOC_EVENT_DEVICESTATECHANGE = 2
	KFD_IOC_EVENT_HW_EXCEPTION      = 3
	KFD_IOC_EVENT_SYSTEM_EVENT      = 4
	KFD_IOC_EVENT_DEBUG_EVENT       = 5
	KFD_IOC_EVENT_PROFILE_EVENT     = 6
	KFD_IOC_EVENT_QUEUE_EVENT       = 7
	KFD_IOC_EVENT_MEMORY            = 8

	KFD_IOC_WAIT_RESULT_COMPLETE = 0
	KFD_IOC_WAIT_RESULT_TIMEOUT  = 1
	KFD_IOC_WAIT_RESULT_FAIL     = 2

	KFD_SIGNAL_EVENT_LIMIT = 4096
)

// Allocation flags (KFD_IOC_ALLOC_MEM_FLAGS_*).
const (
	KFD_IOC_ALLOC_MEM_FLAGS_VRAM          = 1 << 0
	KFD_IOC_ALLOC_MEM_FLAGS_GTT           = 1 << 1
	KFD_IOC_ALLOC_MEM_FLAGS_USERPTR       = 1 << 2
	KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL      = 1 << 3
	KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP    = 1 << 4
	KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE      = 1 << 31
	KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE    = 1 << 30
	KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC        = 1 << 29
	KFD_IOC_ALLOC_MEM_FLAGS_NO_SUBSTITUTE = 1 << 28
	KFD_IOC_ALLOC_MEM_FLAGS_AQL_QUEUE_MEM = 1 << 27
	KFD_IOC_ALLOC_MEM_FLAGS_COHERENT      = 1 << 26
	KFD_IOC_ALLOC_MEM_FLAGS_UNCACHED      = 1 << 25
	KFD_IOC_ALLOC_MEM_FLAGS_EXT_COHERENT  = 1 << 24
	KFD_IOC_ALLOC_MEM_FLAGS_CONTIGUOUS    = 1 << 23
)

// SVM (kfd_ioctl_svm_*).
const (
	KFD_IOCTL_SVM_OP_SET_ATTR = 0
	KFD_IOCTL_SVM_OP_GET_ATTR = 1

	KFD_IOCTL_SVM_ATTR_PREFERRED_LOC   = 0
	KFD_IOCTL_SVM_ATTR_PREFETCH_LOC    = 1
	KFD_IOCTL_SVM_ATTR_ACCESS          = 2
	KFD_IOCTL_SVM_ATTR_ACCESS_IN_PLACE = 3
	KFD_IOCTL_SVM_ATTR_NO_ACCESS       = 4
	KFD_IOCTL_SVM_ATTR_SET_FLAGS       = 5
	KFD_IOCTL_SVM_ATTR_CLR_FLAGS       = 6
	KFD_IOCTL_SVM_ATTR_GRANULARITY     = 7

	KFD_IOCTL_SVM_FLAG_HOST_ACCESS       = 0x1
	KFD_IOCTL_SVM_FLAG_COHERENT          = 0x2
	KFD_IOCTL_SVM_FLAG_HIVE_LOCAL        = 0x4
	KFD_IOCTL_SVM_FLAG_GPU_RO            = 0x8
	KFD_IOCTL_SVM_FLAG_GPU_EXEC          = 0x10
	KFD_IOCTL_SVM_FLAG_GPU_READ_MOSTLY   = 0x20
	KFD_IOCTL_SVM_FLAG_GPU_ALWAYS_MAPPED = 0x40
	KFD_IOCTL_SVM_FLAG_EXT_COHERENT      = 0x80

	KFD_IOCTL_SVM_LOCATION_SYSMEM    = 0
	KFD_IOCTL_SVM_LOCATION_UNDEFINED = 0xffffffff
)

// Runtime enable (1.13+).
const (
	KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK    = 1
	KFD_RUNTIME_ENABLE_MODE_TTMP_SAVE_MASK = 2
)

// DBG_TRAP operations (kfd_dbg_trap_operations).
const (
	KFD_IOC_DBG_TRAP_ENABLE = iota
	KFD_IOC_DBG_TRAP_DISABLE
	KFD_IOC_DBG_TRAP_SEND_RUNTIME_EVENT
	KFD_IOC_DBG_TRAP_SET_EXCEPTIONS_ENABLED
	KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_OVERRIDE
	KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_MODE
	KFD_IOC_DBG_TRAP_SUSPEND_QUEUES
	KFD_IOC_DBG_TRAP_RESUME_QUEUES
	KFD_IOC_DBG_TRAP_SET_NODE_ADDRESS_WATCH
	KFD_IOC_DBG_TRAP_CLEAR_NODE_ADDRESS_WATCH
	KFD_IOC_DBG_TRAP_SET_FLAGS
	KFD_IOC_DBG_TRAP_QUERY_DEBUG_EVENT
	KFD_IOC_DBG_TRAP_QUERY_EXCEPTION_INFO
	KFD_IOC_DBG_TRAP_GET_QUEUE_SNAPSHOT
	KFD_IOC_DBG_TRAP_GET_DEVICE_SNAPSHOT
)

// FDIoctls are the commands whose result is a new file descriptor of the caller. A FUSE reply
// cannot create one: kfdemu exec's seccomp filter stops these commands (fs/nsexec) and the
// daemon's supervisor answers them (fs/supervise.go).
func FDIoctls() []uint32 {
	return []uint32{uint32(AMDKFD_IOC_SMI_EVENTS), uint32(AMDKFD_IOC_EXPORT_DMABUF), uint32(DRM_IOCTL_PRIME_HANDLE_TO_FD)}
}

// SMI events (enum kfd_smi_event, KFD_MIGRATE_TRIGGERS, KFD_QUEUE_EVICTION_TRIGGERS,
// KFD_SVM_UNMAP_TRIGGERS of kfd_ioctl.h).
const (
	KFD_SMI_EVENT_VMFAULT          = 1
	KFD_SMI_EVENT_THERMAL_THROTTLE = 2
	KFD_SMI_EVENT_GPU_PRE_RESET    = 3
	KFD_SMI_EVENT_GPU_POST_RESET   = 4
	KFD_SMI_EVENT_MIGRATE_START    = 5
	KFD_SMI_EVENT_MIGRATE_END      = 6
	KFD_SMI_EVENT_PAGE_FAULT_START = 7
	KFD_SMI_EVENT_PAGE_FAULT_END   = 8
	KFD_SMI_EVENT_QUEUE_EVICTION   = 9
	KFD_SMI_EVENT_QUEUE_RESTORE    = 10
	KFD_SMI_EVENT_UNMAP_FROM_GPU   = 11
	KFD_SMI_EVENT_ALL_PROCESS      = 64

	KFD_MIGRATE_TRIGGER_PREFETCH      = 0
	KFD_MIGRATE_TRIGGER_PAGEFAULT_GPU = 1
	KFD_MIGRATE_TRIGGER_PAGEFAULT_CPU = 2
	KFD_MIGRATE_TRIGGER_TTM_EVICTION  = 3

	KFD_QUEUE_EVICTION_TRIGGER_SVM = 0

	KFD_SVM_UNMAP_TRIGGER_MMU_NOTIFY         = 0
	KFD_SVM_UNMAP_TRIGGER_MMU_NOTIFY_MIGRATE = 1
	KFD_SVM_UNMAP_TRIGGER_UNMAP_FROM_CPU     = 2

	KFD_SMI_EVENT_MSG_SIZE = 96
)

// KFD_SMI_EVENT_MASK_FROM_INDEX is the bit of event i in the mask a client writes.
func KFD_SMI_EVENT_MASK_FROM_INDEX(i uint) uint64 { return 1 << (i - 1) }
