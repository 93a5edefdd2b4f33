package trace

import (
	"encoding/binary"
	"reflect"

	"github.com/kfdemu/kfdemu/kfd/abi"
)

// describeABI names a kfd ioctl (AMDKFD_IOC_*, from abi.Ioctls) or a DRM/amdgpu ioctl
// (DRM_IOCTL_*, from abi.DRMIoctls) and decodes the scalar fields of its argument struct, as the
// table gives it, in field order. ok is false for a command neither table has.
func describeABI(cmd uint32, arg []byte) (name string, keys []string, vals []uint64, ok bool) {
	var typ reflect.Type
	switch nr := abi.IOCNr(cmd); abi.IOCType(cmd) {
	case abi.AMDKFDIOCTLBase:
		io, found := abi.IoctlOf(nr)
		if !found {
			return "", nil, nil, false
		}
		name, typ = "AMDKFD_IOC_"+io.Name, io.Arg
	case abi.DRMIOCTLBase:
		io, found := abi.DRMIoctlOf(nr)
		if !found {
			return "", nil, nil, false
		}
		name, typ = io.Name, io.Arg
	default:
		return "", nil, nil, false
	}
	if typ == nil || len(arg) == 0 {
		return name, nil, nil, true
	}
	v := reflect.New(typ)
	size := binary.Size(v.Interface())
	if size < 0 {
		return name, nil, nil, true
	}
	// Older callers pass shorter structs (libhsakmt 5.2.3's 88-byte CREATE_QUEUE): zero-extend, as
	// kfd_ioctl does.
	full := make([]byte, max(size, len(arg)))
	copy(full, arg)
	binary.Decode(full, binary.LittleEndian, v.Interface())
	e := v.Elem()
	for i := 0; i < e.NumField(); i++ {
		f := e.Field(i)
		n := typ.Field(i).Name
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
