package abi

// Argument structs of kfd_ioctl.h, in the order of the header.

type GetVersionArgs struct {
	MajorVersion uint32
	MinorVersion uint32
}

type CreateQueueArgs struct {
	RingBaseAddress       uint64
	WritePointerAddress   uint64
	ReadPointerAddress    uint64
	DoorbellOffset        uint64
	RingSize              uint32
	GPUID                 uint32
	QueueType             uint32
	QueuePercentage       uint32
	QueuePriority         uint32
	QueueID               uint32
	EOPBufferAddress      uint64
	EOPBufferSize         uint64
	CtxSaveRestoreAddress uint64
	CtxSaveRestoreSize    uint32
	CtlStackSize          uint32
	SDMAEngineID          uint32 // 1.15 (was pad before)
	Pad                   uint32
}

type DestroyQueueArgs struct {
	QueueID uint32
	Pad     uint32
}

type UpdateQueueArgs struct {
	RingBaseAddress uint64
	QueueID         uint32
	RingSize        uint32
	QueuePercentage uint32
	QueuePriority   uint32
}

type SetCUMaskArgs struct {
	QueueID   uint32
	NumCUMask uint32
	CUMaskPtr uint64
}

type GetQueueWaveStateArgs struct {
	CtlStackAddress  uint64
	CtlStackUsedSize uint32
	SaveAreaUsedSize uint32
	QueueID          uint32
	Pad              uint32
}

type SetMemoryPolicyArgs struct {
	AlternateApertureBase uint64
	AlternateApertureSize uint64
	GPUID                 uint32
	DefaultPolicy         uint32
	AlternatePolicy       uint32
	MiscProcessFlag       uint32 // 1.18 (was pad)
}

type GetClockCountersArgs struct {
	GPUClockCounter    uint64
	CPUClockCounter    uint64
	SystemClockCounter uint64
	SystemClockFreq    uint64
	GPUID              uint32
	Pad                uint32
}

type ProcessDeviceApertures struct {
	LDSBase      uint64
	LDSLimit     uint64
	ScratchBase  uint64
	ScratchLimit uint64
	GPUVMBase    uint64
	GPUVMLimit   uint64
	GPUID        uint32
	Pad          uint32
}

// NUM_OF_SUPPORTED_GPUS for the old GET_PROCESS_APERTURES.
const NUM_OF_SUPPORTED_GPUS = 7

type GetProcessAperturesArgs struct {
	ProcessApertures [NUM_OF_SUPPORTED_GPUS]ProcessDeviceApertures
	NumOfNodes       uint32
	Pad              uint32
}

type GetProcessAperturesNewArgs struct {
	KFDProcessDeviceAperturesPtr uint64
	NumOfNodes                   uint32
	Pad                          uint32
}

type CreateEventArgs struct {
	EventPageOffset  uint64
	EventTriggerData uint32
	EventType        uint32
	AutoReset        uint32
	NodeID           uint32
	EventID          uint32
	EventSlotIndex   uint32
}

type DestroyEventArgs struct {
	EventID uint32
	Pad     uint32
}

type SetEventArgs struct {
	EventID uint32
	Pad     uint32
}

type ResetEventArgs struct {
	EventID uint32
	Pad     uint32
}

type MemoryExceptionFailure struct {
	NotPresent uint32
	ReadOnly   uint32
	NoExecute  uint32
	Imprecise  uint32
}

type HSAMemoryExceptionData struct {
	Failure   MemoryExceptionFailure
	VA        uint64
	GPUID     uint32
	ErrorType uint32
}

type HSAHWExceptionData struct {
	ResetType  uint32
	ResetCause uint32
	MemoryLost uint32
	GPUID      uint32
}

// EventData is struct kfd_event_data: a 32-byte union (memory exception, hw exception, or the
// signal event's last_event_age in its first 8 bytes), the extension pointer, the event id.
type EventData struct {
	Union           [32]byte
	KFDEventDataExt uint64
	EventID         uint32
	Pad             uint32
}

type WaitEventsArgs struct {
	EventsPtr  uint64
	NumEvents  uint32
	WaitForAll uint32
	Timeout    uint32
	WaitResult uint32
}

type SetScratchBackingVAArgs struct {
	VAAddr uint64
	GPUID  uint32
	Pad    uint32
}

type GetTileConfigArgs struct {
	TileConfigPtr       uint64
	MacroTileConfigPtr  uint64
	NumTileConfigs      uint32
	NumMacroTileConfigs uint32
	GPUID               uint32
	GBAddrConfig        uint32
	NumBanks            uint32
	NumRanks            uint32
}

type SetTrapHandlerArgs struct {
	TBAAddr uint64
	TMAAddr uint64
	GPUID   uint32
	Pad     uint32
}

type AcquireVMArgs struct {
	DRMFD uint32
	GPUID uint32
}

type AllocMemoryOfGPUArgs struct {
	VAAddr     uint64
	Size       uint64
	Handle     uint64
	MmapOffset uint64
	GPUID      uint32
	Flags      uint32
}

type FreeMemoryOfGPUArgs struct {
	Handle uint64
}

type GetAvailableMemoryArgs struct {
	Available uint64
	GPUID     uint32
	Pad       uint32
}

type MapMemoryToGPUArgs struct {
	Handle            uint64
	DeviceIDsArrayPtr uint64
	NDevices          uint32
	NSuccess          uint32
}

type UnmapMemoryFromGPUArgs = MapMemoryToGPUArgs

type AllocQueueGWSArgs struct {
	QueueID  uint32
	NumGWS   uint32
	FirstGWS uint32
	Pad      uint32
}

type GetDmabufInfoArgs struct {
	Size         uint64
	MetadataPtr  uint64
	MetadataSize uint32
	GPUID        uint32
	Flags        uint32
	DmabufFD     uint32
}

type ImportDmabufArgs struct {
	VAAddr   uint64
	Handle   uint64
	GPUID    uint32
	DmabufFD uint32
}

type ExportDmabufArgs struct {
	Handle   uint64
	Flags    uint32
	DmabufFD uint32
}

type SMIEventsArgs struct {
	GPUID  uint32
	AnonFD uint32
}

// SVMArgs is the fixed head of kfd_ioctl_svm_args; nattr SVMAttribute entries follow, and the cmd
// word carries the total size.
type SVMArgs struct {
	StartAddr uint64
	Size      uint64
	Op        uint32
	NAttr     uint32
}

type SVMAttribute struct {
	Type  uint32
	Value uint32
}

type SetXnackModeArgs struct {
	XnackEnabled int32
}

type CRIUArgs struct {
	Devices      uint64
	BOs          uint64
	PrivData     uint64
	PrivDataSize uint64
	NumDevices   uint32
	NumBOs       uint32
	NumObjects   uint32
	Pid          uint32
	Op           uint32
	Pad          uint32
}

type RuntimeEnableArgs struct {
	RDebug           uint64
	ModeMask         uint32
	CapabilitiesMask uint32
}

// DbgTrapArgs is kfd_ioctl_dbg_trap_args: pid, op and a 24-byte union of per-op arguments.
type DbgTrapArgs struct {
	Pid   uint32
	Op    uint32
	Union [24]byte
}

// The deprecated debugger ioctls' argument sizes (kfd_ioctl.h 1.11).
type DbgRegisterArgs struct{ GPUID, Pad uint32 }
type DbgAddressWatchArgs struct {
	ContentPtr     uint64
	GPUID          uint32
	BufSizeInBytes uint32
}
