package trace

import (
	"bytes"
	"encoding/binary"
	"reflect"

	"github.com/kfdemu/kfdemu/kfd/abi"
)

// argTypes maps kfd ioctl numbers to their kfd/abi argument struct.
var argTypes = map[uint32]any{
	0x01: abi.GetVersionArgs{}, 0x02: abi.CreateQueueArgs{}, 0x03: abi.DestroyQueueArgs{},
	0x04: abi.SetMemoryPolicyArgs{}, 0x05: abi.GetClockCountersArgs{}, 0x07: abi.UpdateQueueArgs{},
	0x08: abi.CreateEventArgs{}, 0x09: abi.DestroyEventArgs{}, 0x0A: abi.SetEventArgs{}, 0x0B: abi.ResetEventArgs{},
	0x0C: abi.WaitEventsArgs{}, 0x11: abi.SetScratchBackingVAArgs{}, 0x12: abi.GetTileConfigArgs{},
	0x13: abi.SetTrapHandlerArgs{}, 0x14: abi.GetProcessAperturesNewArgs{}, 0x15: abi.AcquireVMArgs{},
	0x16: abi.AllocMemoryOfGPUArgs{}, 0x17: abi.FreeMemoryOfGPUArgs{}, 0x18: abi.MapMemoryToGPUArgs{},
	0x19: abi.MapMemoryToGPUArgs{}, 0x1A: abi.SetCUMaskArgs{}, 0x1B: abi.GetQueueWaveStateArgs{},
	0x1C: abi.GetDmabufInfoArgs{}, 0x1D: abi.ImportDmabufArgs{}, 0x1E: abi.AllocQueueGWSArgs{},
	0x1F: abi.SMIEventsArgs{}, 0x20: abi.SVMArgs{}, 0x21: abi.SetXnackModeArgs{}, 0x22: abi.CRIUArgs{},
	0x23: abi.GetAvailableMemoryArgs{}, 0x24: abi.ExportDmabufArgs{}, 0x25: abi.RuntimeEnableArgs{},
	0x26: abi.DbgTrapArgs{},
}

// describeABI names kfd ioctls (AMDKFD_IOC_*) and DRM/amdgpu ioctls and decodes scalar fields of
// their argument structs with the kfd/abi layouts.
func describeABI(cmd uint32, arg []byte) (string, []string, []uint64, bool) {
	nr := abi.IOCNr(cmd)
	var typ any
	name := ""
	switch abi.IOCType(cmd) {
	case abi.AMDKFDIOCTLBase:
		for _, io := range abi.Ioctls {
			if io.Nr == nr {
				name = "AMDKFD_IOC_" + io.Name
			}
		}
		typ = argTypes[nr]
	case abi.DRMIOCTLBase:
		switch cmd {
		case abi.DRM_IOCTL_VERSION:
			name, typ = "DRM_IOCTL_VERSION", abi.DRMVersion{}
		case abi.DRM_IOCTL_GET_CLIENT:
			name, typ = "DRM_IOCTL_GET_CLIENT", abi.DRMClient{}
		case abi.DRM_IOCTL_GET_CAP:
			name, typ = "DRM_IOCTL_GET_CAP", abi.DRMGetCap{}
		case abi.DRM_IOCTL_AMDGPU_INFO:
			name, typ = "DRM_IOCTL_AMDGPU_INFO", abi.DRMAmdgpuInfo{}
		}
	}
	if name == "" {
		return "", nil, nil, false
	}
	if typ == nil {
		return name, nil, nil, true
	}
	v := reflect.New(reflect.TypeOf(typ))
	size := binary.Size(v.Interface())
	if size < 0 || len(arg) == 0 {
		return name, nil, nil, true
	}
	// Older callers pass shorter structs (libhsakmt 5.2.3's 88-byte CREATE_QUEUE): zero-extend, as
	// kfd_ioctl does.
	full := make([]byte, max(size, len(arg)))
	copy(full, arg)
	binary.Read(bytes.NewReader(full), binary.LittleEndian, v.Interface())
	var keys []string
	var vals []uint64
	e := v.Elem()
	for i := 0; i < e.NumField(); i++ {
		f := e.Field(i)
		n := e.Type().Field(i).Name
		if n == "Pad" || n == "Union" {
			continue
		}
		switch f.Kind() {
		case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			keys, vals = append(keys, n), append(vals, f.Uint())
		case reflect.Int32, reflect.Int64:
			keys, vals = append(keys, n), append(vals, uint64(f.Int()))
		}
	}
	return name, keys, vals, true
}

func init() { SetDescriber(describeABI) }
