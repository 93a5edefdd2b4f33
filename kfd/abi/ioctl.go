package abi

// Argument structs of kfd_ioctl.h, in the order of the header. Each field's c tag names the C
// member it stands for; it is empty for padding the C side leaves implicit and for members newer
// than Debian's 1.11 header (abi_c_test.go compares offsets by these names).

type GetVersionArgs struct {
	MajorVersion uint32 `c:"major_version"`
	MinorVersion uint32 `c:"minor_version"`
}

type CreateQueueArgs struct {
	RingBaseAddress       uint64 `c:"ring_base_address"`
	WritePointerAddress   uint64 `c:"write_pointer_address"`
	ReadPointerAddress    uint64 `c:"read_pointer_address"`
	DoorbellOffset        uint64 `c:"doorbell_offset"`
	RingSize              uint32 `c:"ring_size"`
	GPUID                 uint32 `c:"gpu_id"`
	QueueType             uint32 `c:"queue_type"`
	QueuePercentage       uint32 `c:"queue_percentage"`
	QueuePriority         uint32 `c:"queue_priority"`
	QueueID               uint32 `c:"queue_id"`
	EOPBufferAddress      uint64 `c:"eop_buffer_address"`
	EOPBufferSize         uint64 `c:"eop_buffer_size"`
	CtxSaveRestoreAddress uint64 `c:"ctx_save_restore_address"`
	CtxSaveRestoreSize    uint32 `c:"ctx_save_restore_size"`
	CtlStackSize          uint32 `c:"ctl_stack_size"`
	SDMAEngineID          uint32 `c:""` // sdma_engine_id, 1.15 (with pad: 88 -> 96 bytes)
	Pad                   uint32 `c:""`
}

type DestroyQueueArgs struct {
	QueueID uint32 `c:"queue_id"`
	Pad     uint32 `c:"pad"`
}

type UpdateQueueArgs struct {
	RingBaseAddress uint64 `c:"ring_base_address"`
	QueueID         uint32 `c:"queue_id"`
	RingSize        uint32 `c:"ring_size"`
	QueuePercentage uint32 `c:"queue_percentage"`
	QueuePriority   uint32 `c:"queue_priority"`
}

type SetCUMaskArgs struct {
	QueueID   uint32 `c:"queue_id"`
	NumCUMask uint32 `c:"num_cu_mask"`
	CUMaskPtr uint64 `c:"cu_mask_ptr"`
}

type GetQueueWaveStateArgs struct {
	CtlStackAddress  uint64 `c:"ctl_stack_address"`
	CtlStackUsedSize uint32 `c:"ctl_stack_used_size"`
	SaveAreaUsedSize uint32 `c:"save_area_used_size"`
	QueueID          uint32 `c:"queue_id"`
	Pad              uint32 `c:"pad"`
}

type SetMemoryPolicyArgs struct {
	AlternateApertureBase uint64 `c:"alternate_aperture_base"`
	AlternateApertureSize uint64 `c:"alternate_aperture_size"`
	GPUID                 uint32 `c:"gpu_id"`
	DefaultPolicy         uint32 `c:"default_policy"`
	AlternatePolicy       uint32 `c:"alternate_policy"`
	MiscProcessFlag       uint32 `c:""` // misc_process_flag, 1.18 (was pad)
}

type GetClockCountersArgs struct {
	GPUClockCounter    uint64 `c:"gpu_clock_counter"`
	CPUClockCounter    uint64 `c:"cpu_clock_counter"`
	SystemClockCounter uint64 `c:"system_clock_counter"`
	SystemClockFreq    uint64 `c:"system_clock_freq"`
	GPUID              uint32 `c:"gpu_id"`
	Pad                uint32 `c:"pad"`
}

type ProcessDeviceApertures struct {
	LDSBase      uint64 `c:"lds_base"`
	LDSLimit     uint64 `c:"lds_limit"`
	ScratchBase  uint64 `c:"scratch_base"`
	ScratchLimit uint64 `c:"scratch_limit"`
	GPUVMBase    uint64 `c:"gpuvm_base"`
	GPUVMLimit   uint64 `c:"gpuvm_limit"`
	GPUID        uint32 `c:"gpu_id"`
	Pad          uint32 `c:"pad"`
}

// NUM_OF_SUPPORTED_GPUS for the old GET_PROCESS_APERTURES.
const NUM_OF_SUPPORTED_GPUS = 7

type GetProcessAperturesArgs struct {
	ProcessApertures [NUM_OF_SUPPORTED_GPUS]ProcessDeviceApertures `c:"process_apertures"`
	NumOfNodes       uint32                                        `c:"num_of_nodes"`
	Pad              uint32                                        `c:"pad"`
}

type GetProcessAperturesNewArgs struct {
	KFDProcessDeviceAperturesPtr uint64 `c:"kfd_process_device_apertures_ptr"`
	NumOfNodes                   uint32 `c:"num_of_nodes"`
	Pad                          uint32 `c:"pad"`
}

type CreateEventArgs struct {
	EventPageOffset  uint64 `c:"event_page_offset"`
	EventTriggerData uint32 `c:"event_trigger_data"`
	EventType        uint32 `c:"event_type"`
	AutoReset        uint32 `c:"auto_reset"`
	NodeID           uint32 `c:"node_id"`
	EventID          uint32 `c:"event_id"`
	EventSlotIndex   uint32 `c:"event_slot_index"`
}

type DestroyEventArgs struct {
	EventID uint32 `c:"event_id"`
	Pad     uint32 `c:"pad"`
}

type SetEventArgs struct {
	EventID uint32 `c:"event_id"`
	Pad     uint32 `c:"pad"`
}

type ResetEventArgs struct {
	EventID uint32 `c:"event_id"`
	Pad     uint32 `c:"pad"`
}

type MemoryExceptionFailure struct {
	NotPresent uint32 `c:"NotPresent"`
	ReadOnly   uint32 `c:"ReadOnly"`
	NoExecute  uint32 `c:"NoExecute"`
	Imprecise  uint32 `c:"imprecise"`
}

type HSAMemoryExceptionData struct {
	Failure   MemoryExceptionFailure `c:"failure"`
	VA        uint64                 `c:"va"`
	GPUID     uint32                 `c:"gpu_id"`
	ErrorType uint32                 `c:"ErrorType"`
}

type HSAHWExceptionData struct {
	ResetType  uint32 `c:"reset_type"`
	ResetCause uint32 `c:"reset_cause"`
	MemoryLost uint32 `c:"memory_lost"`
	GPUID      uint32 `c:"gpu_id"`
}

// EventData is struct kfd_event_data: a 32-byte union (memory exception, hw exception, or the
// signal event's last_event_age in its first 8 bytes), the extension pointer, the event id.
type EventData struct {
	Union           [32]byte `c:"memory_exception_data"`
	KFDEventDataExt uint64   `c:"kfd_event_data_ext"`
	EventID         uint32   `c:"event_id"`
	Pad             uint32   `c:"pad"`
}

type WaitEventsArgs struct {
	EventsPtr  uint64 `c:"events_ptr"`
	NumEvents  uint32 `c:"num_events"`
	WaitForAll uint32 `c:"wait_for_all"`
	Timeout    uint32 `c:"timeout"`
	WaitResult uint32 `c:"wait_result"`
}

type SetScratchBackingVAArgs struct {
	VAAddr uint64 `c:"va_addr"`
	GPUID  uint32 `c:"gpu_id"`
	Pad    uint32 `c:"pad"`
}

type GetTileConfigArgs struct {
	TileConfigPtr       uint64 `c:"tile_config_ptr"`
	MacroTileConfigPtr  uint64 `c:"macro_tile_config_ptr"`
	NumTileConfigs      uint32 `c:"num_tile_configs"`
	NumMacroTileConfigs uint32 `c:"num_macro_tile_configs"`
	GPUID               uint32 `c:"gpu_id"`
	GBAddrConfig        uint32 `c:"gb_addr_config"`
	NumBanks            uint32 `c:"num_banks"`
	NumRanks            uint32 `c:"num_ranks"`
}

type SetTrapHandlerArgs struct {
	TBAAddr uint64 `c:"tba_addr"`
	TMAAddr uint64 `c:"tma_addr"`
	GPUID   uint32 `c:"gpu_id"`
	Pad     uint32 `c:"pad"`
}

type AcquireVMArgs struct {
	DRMFD uint32 `c:"drm_fd"`
	GPUID uint32 `c:"gpu_id"`
}

type AllocMemoryOfGPUArgs struct {
	VAAddr     uint64 `c:"va_addr"`
	Size       uint64 `c:"size"`
	Handle     uint64 `c:"handle"`
	MmapOffset uint64 `c:"mmap_offset"`
	GPUID      uint32 `c:"gpu_id"`
	Flags      uint32 `c:"flags"`
}

type FreeMemoryOfGPUArgs struct {
	Handle uint64 `c:"handle"`
}

type GetAvailableMemoryArgs struct {
	Available uint64 `c:"available"`
	GPUID     uint32 `c:"gpu_id"`
	Pad       uint32 `c:"pad"`
}

type MapMemoryToGPUArgs struct {
	Handle            uint64 `c:"handle"`
	DeviceIDsArrayPtr uint64 `c:"device_ids_array_ptr"`
	NDevices          uint32 `c:"n_devices"`
	NSuccess          uint32 `c:"n_success"`
}

// UnmapMemoryFromGPUArgs is struct kfd_ioctl_unmap_memory_from_gpu_args: the header repeats the
// map struct's members under its own name, and so does this package, so that each command has its
// own argument type (a *UnmapMemoryFromGPUArgs converts to a *MapMemoryToGPUArgs).
type UnmapMemoryFromGPUArgs MapMemoryToGPUArgs

type AllocQueueGWSArgs struct {
	QueueID  uint32 `c:"queue_id"`
	NumGWS   uint32 `c:"num_gws"`
	FirstGWS uint32 `c:"first_gws"`
	Pad      uint32 `c:"pad"`
}

type GetDmabufInfoArgs struct {
	Size         uint64 `c:"size"`
	MetadataPtr  uint64 `c:"metadata_ptr"`
	MetadataSize uint32 `c:"metadata_size"`
	GPUID        uint32 `c:"gpu_id"`
	Flags        uint32 `c:"flags"`
	DmabufFD     uint32 `c:"dmabuf_fd"`
}

type ImportDmabufArgs struct {
	VAAddr   uint64 `c:"va_addr"`
	Handle   uint64 `c:"handle"`
	GPUID    uint32 `c:"gpu_id"`
	DmabufFD uint32 `c:"dmabuf_fd"`
}

type ExportDmabufArgs struct {
	Handle   uint64 `c:"handle"`
	Flags    uint32 `c:"flags"`
	DmabufFD uint32 `c:"dmabuf_fd"`
}

type SMIEventsArgs struct {
	GPUID  uint32 `c:"gpuid"`
	AnonFD uint32 `c:"anon_fd"`
}

// SVMArgs is the fixed head of kfd_ioctl_svm_args; nattr SVMAttribute entries follow, and the cmd
// word carries the total size.
type SVMArgs struct {
	StartAddr uint64 `c:"start_addr"`
	Size      uint64 `c:"size"`
	Op        uint32 `c:"op"`
	NAttr     uint32 `c:"nattr"`
}

type SVMAttribute struct {
	Type  uint32 `c:"type"`
	Value uint32 `c:"value"`
}

type SetXnackModeArgs struct {
	XnackEnabled int32 `c:"xnack_enabled"`
}

type CRIUArgs struct {
	Devices      uint64 `c:"devices"`
	BOs          uint64 `c:"bos"`
	PrivData     uint64 `c:"priv_data"`
	PrivDataSize uint64 `c:"priv_data_size"`
	NumDevices   uint32 `c:"num_devices"`
	NumBOs       uint32 `c:"num_bos"`
	NumObjects   uint32 `c:"num_objects"`
	Pid          uint32 `c:"pid"`
	Op           uint32 `c:"op"`
	Pad          uint32 `c:""` // implicit C padding to 8-byte alignment
}

type RuntimeEnableArgs struct {
	RDebug           uint64 `c:"r_debug"`
	ModeMask         uint32 `c:"mode_mask"`
	CapabilitiesMask uint32 `c:"capabilities_mask"`
}

// DbgTrapArgs is kfd_ioctl_dbg_trap_args: pid, op and a 24-byte union of per-op arguments.
type DbgTrapArgs struct {
	Pid   uint32   `c:"pid"`
	Op    uint32   `c:"op"`
	Union [24]byte `c:""` // the anonymous union of per-op argument structs
}

// The deprecated debugger ioctls' arguments (kfd_ioctl.h 1.11; amdkfd answers them with EPERM).
type DbgRegisterArgs struct {
	GPUID uint32 `c:"gpu_id"`
	Pad   uint32 `c:"pad"`
}

// DbgUnregisterArgs is struct kfd_ioctl_dbg_unregister_args, laid out as the register one.
type DbgUnregisterArgs DbgRegisterArgs

type DbgAddressWatchArgs struct {
	ContentPtr     uint64 `c:"content_ptr"`
	GPUID          uint32 `c:"gpu_id"`
	BufSizeInBytes uint32 `c:"buf_size_in_bytes"`
}

// DbgWaveControlArgs is struct kfd_ioctl_dbg_wave_control_args, laid out as the address watch one.
type DbgWaveControlArgs DbgAddressWatchArgs

// Argument structs of the out-of-tree (DKMS) commands, from the "non-upstream ioctls" part of the
// kfd_ioctl.h libhsakmt 6.2.4 ships (include/hsakmt/linux/kfd_ioctl.h; libhsakmt 5.2.3 sends the
// same layouts: its fmm_share_memory and fmm_register_shared_memory). Debian's upstream header has
// none of them (debug_c_test.go checks them against ROCT's).

// IPCExportHandleArgs is struct kfd_ioctl_ipc_export_handle_args. Flags carries libhsakmt's
// HsaMemFlags of the buffer (fmm_share_memory: obj->mflags.Value), not KFD allocation flags.
type IPCExportHandleArgs struct {
	Handle      uint64    `c:"handle"`       // to KFD
	ShareHandle [4]uint32 `c:"share_handle"` // from KFD
	GPUID       uint32    `c:"gpu_id"`       // to KFD
	Flags       uint32    `c:"flags"`        // to KFD
}

// IPCImportHandleArgs is struct kfd_ioctl_ipc_import_handle_args.
type IPCImportHandleArgs struct {
	Handle      uint64    `c:"handle"`       // from KFD
	VAAddr      uint64    `c:"va_addr"`      // to KFD
	MmapOffset  uint64    `c:"mmap_offset"`  // from KFD
	ShareHandle [4]uint32 `c:"share_handle"` // to KFD
	GPUID       uint32    `c:"gpu_id"`       // to KFD
	Flags       uint32    `c:"flags"`        // from KFD: the export's flags
}

// MemoryRange is struct kfd_memory_range, an element of CROSS_MEMORY_COPY's arrays.
type MemoryRange struct {
	VAAddr uint64 `c:"va_addr"`
	Size   uint64 `c:"size"`
}

// KFD_CROSS_MEMORY_RW_BIT in CrossMemoryCopyArgs.Flags: set, local to remote (write); clear,
// remote to local (read).
const KFD_CROSS_MEMORY_RW_BIT = 1 << 0

// CrossMemoryCopyArgs is struct kfd_ioctl_cross_memory_copy_args.
type CrossMemoryCopyArgs struct {
	PID              uint32 `c:"pid"`
	Flags            uint32 `c:"flags"`
	SrcMemRangeArray uint64 `c:"src_mem_range_array"`
	SrcMemArraySize  uint64 `c:"src_mem_array_size"`
	DstMemRangeArray uint64 `c:"dst_mem_range_array"`
	DstMemArraySize  uint64 `c:"dst_mem_array_size"`
	BytesCopied      uint64 `c:"bytes_copied"`
}
