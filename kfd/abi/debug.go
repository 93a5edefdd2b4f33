package abi

// The debugger interface of kfd_ioctl.h 1.13 (RUNTIME_ENABLE, DBG_TRAP): the per-operation
// argument structs of kfd_ioctl_dbg_trap_args' union, the structs the debugger's buffers hold and
// the enums. Debian's header is 1.11; TestAgainstROCTHeader checks these against libhsakmt
// 6.2.4's copy of the 1.16 header.

// RuntimeInfo is struct kfd_runtime_info, copied to the debugger at DBG_TRAP_ENABLE.
type RuntimeInfo struct {
	RDebug       uint64 `c:"r_debug"`
	RuntimeState uint32 `c:"runtime_state"`
	TTMPSetup    uint32 `c:"ttmp_setup"`
}

// enum kfd_dbg_runtime_state.
const (
	DEBUG_RUNTIME_STATE_DISABLED      = 0
	DEBUG_RUNTIME_STATE_ENABLED       = 1
	DEBUG_RUNTIME_STATE_ENABLED_BUSY  = 2
	DEBUG_RUNTIME_STATE_ENABLED_ERROR = 3
)

// KFD_RUNTIME_ENABLE_CAPS_SUPPORTS_CORE_DUMP_MASK is RUNTIME_ENABLE's capabilities_mask bit.
const KFD_RUNTIME_ENABLE_CAPS_SUPPORTS_CORE_DUMP_MASK = 0x80000000

type DbgTrapEnableArgs struct {
	ExceptionMask uint64 `c:"exception_mask"`
	RInfoPtr      uint64 `c:"rinfo_ptr"`
	RInfoSize     uint32 `c:"rinfo_size"`
	DbgFD         uint32 `c:"dbg_fd"`
}

type DbgTrapSendRuntimeEventArgs struct {
	ExceptionMask uint64 `c:"exception_mask"`
	GPUID         uint32 `c:"gpu_id"`
	QueueID       uint32 `c:"queue_id"`
}

type DbgTrapSetExceptionsEnabledArgs struct {
	ExceptionMask uint64 `c:"exception_mask"`
}

type DbgTrapSetWaveLaunchOverrideArgs struct {
	OverrideMode       uint32 `c:"override_mode"`
	EnableMask         uint32 `c:"enable_mask"`
	SupportRequestMask uint32 `c:"support_request_mask"`
	Pad                uint32 `c:"pad"`
}

type DbgTrapSetWaveLaunchModeArgs struct {
	LaunchMode uint32 `c:"launch_mode"`
	Pad        uint32 `c:"pad"`
}

type DbgTrapSuspendQueuesArgs struct {
	ExceptionMask uint64 `c:"exception_mask"`
	QueueArrayPtr uint64 `c:"queue_array_ptr"`
	NumQueues     uint32 `c:"num_queues"`
	GracePeriod   uint32 `c:"grace_period"`
}

type DbgTrapResumeQueuesArgs struct {
	QueueArrayPtr uint64 `c:"queue_array_ptr"`
	NumQueues     uint32 `c:"num_queues"`
	Pad           uint32 `c:"pad"`
}

type DbgTrapSetNodeAddressWatchArgs struct {
	Address uint64 `c:"address"`
	Mode    uint32 `c:"mode"`
	Mask    uint32 `c:"mask"`
	GPUID   uint32 `c:"gpu_id"`
	ID      uint32 `c:"id"`
}

type DbgTrapClearNodeAddressWatchArgs struct {
	GPUID uint32 `c:"gpu_id"`
	ID    uint32 `c:"id"`
}

type DbgTrapSetFlagsArgs struct {
	Flags uint32 `c:"flags"`
	Pad   uint32 `c:"pad"`
}

type DbgTrapQueryDebugEventArgs struct {
	ExceptionMask uint64 `c:"exception_mask"`
	GPUID         uint32 `c:"gpu_id"`
	QueueID       uint32 `c:"queue_id"`
}

type DbgTrapQueryExceptionInfoArgs struct {
	InfoPtr        uint64 `c:"info_ptr"`
	InfoSize       uint32 `c:"info_size"`
	SourceID       uint32 `c:"source_id"`
	ExceptionCode  uint32 `c:"exception_code"`
	ClearException uint32 `c:"clear_exception"`
}

// DbgTrapSnapshotArgs is struct kfd_ioctl_dbg_trap_queue_snapshot_args, and the device snapshot's
// (kfd_ioctl_dbg_trap_device_snapshot_args, same layout with num_devices for num_queues).
type DbgTrapSnapshotArgs struct {
	ExceptionMask  uint64 `c:"exception_mask"`
	SnapshotBufPtr uint64 `c:"snapshot_buf_ptr"`
	NumEntries     uint32 `c:"num_queues"`
	EntrySize      uint32 `c:"entry_size"`
}

// QueueSnapshotEntry is struct kfd_queue_snapshot_entry.
type QueueSnapshotEntry struct {
	ExceptionStatus        uint64 `c:"exception_status"`
	RingBaseAddress        uint64 `c:"ring_base_address"`
	WritePointerAddress    uint64 `c:"write_pointer_address"`
	ReadPointerAddress     uint64 `c:"read_pointer_address"`
	CtxSaveRestoreAddress  uint64 `c:"ctx_save_restore_address"`
	QueueID                uint32 `c:"queue_id"`
	GPUID                  uint32 `c:"gpu_id"`
	RingSize               uint32 `c:"ring_size"`
	QueueType              uint32 `c:"queue_type"`
	CtxSaveRestoreAreaSize uint32 `c:"ctx_save_restore_area_size"`
	Reserved               uint32 `c:"reserved"`
}

// DbgDeviceInfoEntry is struct kfd_dbg_device_info_entry.
type DbgDeviceInfoEntry struct {
	ExceptionStatus     uint64 `c:"exception_status"`
	LDSBase             uint64 `c:"lds_base"`
	LDSLimit            uint64 `c:"lds_limit"`
	ScratchBase         uint64 `c:"scratch_base"`
	ScratchLimit        uint64 `c:"scratch_limit"`
	GPUVMBase           uint64 `c:"gpuvm_base"`
	GPUVMLimit          uint64 `c:"gpuvm_limit"`
	GPUID               uint32 `c:"gpu_id"`
	LocationID          uint32 `c:"location_id"`
	VendorID            uint32 `c:"vendor_id"`
	DeviceID            uint32 `c:"device_id"`
	RevisionID          uint32 `c:"revision_id"`
	SubsystemVendorID   uint32 `c:"subsystem_vendor_id"`
	SubsystemDeviceID   uint32 `c:"subsystem_device_id"`
	FWVersion           uint32 `c:"fw_version"`
	GfxTargetVersion    uint32 `c:"gfx_target_version"`
	SIMDCount           uint32 `c:"simd_count"`
	MaxWavesPerSIMD     uint32 `c:"max_waves_per_simd"`
	ArrayCount          uint32 `c:"array_count"`
	SIMDArraysPerEngine uint32 `c:"simd_arrays_per_engine"`
	NumXCC              uint32 `c:"num_xcc"`
	Capability          uint32 `c:"capability"`
	DebugProp           uint32 `c:"debug_prop"`
}

// Wave launch overrides, modes, address watch modes and flags (kfd_dbg_trap_*).
const (
	KFD_DBG_TRAP_OVERRIDE_OR      = 0
	KFD_DBG_TRAP_OVERRIDE_REPLACE = 1

	KFD_DBG_TRAP_MASK_FP_INVALID           = 1
	KFD_DBG_TRAP_MASK_FP_INPUT_DENORMAL    = 2
	KFD_DBG_TRAP_MASK_FP_DIVIDE_BY_ZERO    = 4
	KFD_DBG_TRAP_MASK_FP_OVERFLOW          = 8
	KFD_DBG_TRAP_MASK_FP_UNDERFLOW         = 16
	KFD_DBG_TRAP_MASK_FP_INEXACT           = 32
	KFD_DBG_TRAP_MASK_INT_DIVIDE_BY_ZERO   = 64
	KFD_DBG_TRAP_MASK_DBG_ADDRESS_WATCH    = 128
	KFD_DBG_TRAP_MASK_DBG_MEMORY_VIOLATION = 256
	KFD_DBG_TRAP_MASK_TRAP_ON_WAVE_START   = 1 << 30
	KFD_DBG_TRAP_MASK_TRAP_ON_WAVE_END     = 1 << 31

	KFD_DBG_TRAP_WAVE_LAUNCH_MODE_NORMAL = 0
	KFD_DBG_TRAP_WAVE_LAUNCH_MODE_HALT   = 1
	KFD_DBG_TRAP_WAVE_LAUNCH_MODE_DEBUG  = 3

	KFD_DBG_TRAP_ADDRESS_WATCH_MODE_READ    = 0
	KFD_DBG_TRAP_ADDRESS_WATCH_MODE_NONREAD = 1
	KFD_DBG_TRAP_ADDRESS_WATCH_MODE_ATOMIC  = 2
	KFD_DBG_TRAP_ADDRESS_WATCH_MODE_ALL     = 3

	KFD_DBG_TRAP_FLAG_SINGLE_MEM_OP = 1

	// Flags of a SUSPEND/RESUME_QUEUES queue id (kfd_ioctl.h).
	KFD_DBG_QUEUE_ERROR_BIT    = 30
	KFD_DBG_QUEUE_INVALID_BIT  = 31
	KFD_DBG_QUEUE_ERROR_MASK   = 1 << KFD_DBG_QUEUE_ERROR_BIT
	KFD_DBG_QUEUE_INVALID_MASK = 1 << KFD_DBG_QUEUE_INVALID_BIT
)

// Exception codes (enum kfd_dbg_trap_exception_code).
const (
	EC_NONE                                             = 0
	EC_QUEUE_WAVE_ABORT                                 = 1
	EC_QUEUE_WAVE_TRAP                                  = 2
	EC_QUEUE_WAVE_MATH_ERROR                            = 3
	EC_QUEUE_WAVE_ILLEGAL_INSTRUCTION                   = 4
	EC_QUEUE_WAVE_MEMORY_VIOLATION                      = 5
	EC_QUEUE_WAVE_APERTURE_VIOLATION                    = 6
	EC_QUEUE_PACKET_DISPATCH_DIM_INVALID                = 16
	EC_QUEUE_PACKET_DISPATCH_GROUP_SEGMENT_SIZE_INVALID = 17
	EC_QUEUE_PACKET_DISPATCH_CODE_INVALID               = 18
	EC_QUEUE_PACKET_RESERVED                            = 19
	EC_QUEUE_PACKET_UNSUPPORTED                         = 20
	EC_QUEUE_PACKET_DISPATCH_WORK_GROUP_SIZE_INVALID    = 21
	EC_QUEUE_PACKET_DISPATCH_REGISTER_INVALID           = 22
	EC_QUEUE_PACKET_VENDOR_UNSUPPORTED                  = 23
	EC_QUEUE_PREEMPTION_ERROR                           = 30
	EC_QUEUE_NEW                                        = 31
	EC_DEVICE_QUEUE_DELETE                              = 32
	EC_DEVICE_MEMORY_VIOLATION                          = 33
	EC_DEVICE_RAS_ERROR                                 = 34
	EC_DEVICE_FATAL_HALT                                = 35
	EC_DEVICE_NEW                                       = 36
	EC_PROCESS_RUNTIME                                  = 48
	EC_PROCESS_DEVICE_REMOVE                            = 49
	EC_MAX                                              = 50
)

// KFD_EC_MASK is the bit of exception code ec.
func KFD_EC_MASK(ec uint) uint64 { return 1 << (ec - 1) }

// The exception masks by source.
var (
	KFD_EC_MASK_QUEUE = KFD_EC_MASK(EC_QUEUE_WAVE_ABORT) | KFD_EC_MASK(EC_QUEUE_WAVE_TRAP) |
		KFD_EC_MASK(EC_QUEUE_WAVE_MATH_ERROR) | KFD_EC_MASK(EC_QUEUE_WAVE_ILLEGAL_INSTRUCTION) |
		KFD_EC_MASK(EC_QUEUE_WAVE_MEMORY_VIOLATION) | KFD_EC_MASK(EC_QUEUE_WAVE_APERTURE_VIOLATION) |
		KFD_EC_MASK(EC_QUEUE_PACKET_DISPATCH_DIM_INVALID) |
		KFD_EC_MASK(EC_QUEUE_PACKET_DISPATCH_GROUP_SEGMENT_SIZE_INVALID) |
		KFD_EC_MASK(EC_QUEUE_PACKET_DISPATCH_CODE_INVALID) | KFD_EC_MASK(EC_QUEUE_PACKET_UNSUPPORTED) |
		KFD_EC_MASK(EC_QUEUE_PACKET_DISPATCH_WORK_GROUP_SIZE_INVALID) |
		KFD_EC_MASK(EC_QUEUE_PACKET_DISPATCH_REGISTER_INVALID) |
		KFD_EC_MASK(EC_QUEUE_PACKET_VENDOR_UNSUPPORTED) | KFD_EC_MASK(EC_QUEUE_PREEMPTION_ERROR) |
		KFD_EC_MASK(EC_QUEUE_NEW)
	KFD_EC_MASK_DEVICE = KFD_EC_MASK(EC_DEVICE_QUEUE_DELETE) | KFD_EC_MASK(EC_DEVICE_RAS_ERROR) |
		KFD_EC_MASK(EC_DEVICE_FATAL_HALT) | KFD_EC_MASK(EC_DEVICE_MEMORY_VIOLATION) | KFD_EC_MASK(EC_DEVICE_NEW)
	KFD_EC_MASK_PROCESS = KFD_EC_MASK(EC_PROCESS_RUNTIME) | KFD_EC_MASK(EC_PROCESS_DEVICE_REMOVE)
)
