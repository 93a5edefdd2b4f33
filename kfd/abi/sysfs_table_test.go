package abi

// sysfsValues lists every kfd_sysfs.h constant for the header test.
var sysfsValues = map[string]uint64{
	"HSA_CAP_RESERVED_WAS_SRAM_EDCSUPPORTED": HSA_CAP_RESERVED_WAS_SRAM_EDCSUPPORTED,
}
