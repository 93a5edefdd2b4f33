package trace

import (
	"encoding/binary"
	"testing"

	"github.com/kfdemu/kfdemu/kfd/abi"
)

// TestDescribeFromTables: every command of the kfd/abi tables is named and, where the table has
// an argument type, decoded; other commands are not described.
func TestDescribeFromTables(t *testing.T) {
	for _, io := range abi.Ioctls {
		arg := make([]byte, abi.IOCSize(io.Cmd))
		if name, _, _, ok := describeABI(io.Cmd, arg); !ok || name != "AMDKFD_IOC_"+io.Name {
			t.Errorf("%#x: %q %v, want AMDKFD_IOC_%s", io.Cmd, name, ok, io.Name)
		}
	}
	for _, io := range abi.DRMIoctls {
		arg := make([]byte, abi.IOCSize(io.Cmd))
		name, keys, _, ok := describeABI(io.Cmd, arg)
		if !ok || name != io.Name || (io.Arg == nil) != (keys == nil) {
			t.Errorf("%#x: %q %v %v, want %s", io.Cmd, name, ok, keys, io.Name)
		}
	}
	gem := binary.LittleEndian.AppendUint32(nil, 7)
	gem = binary.LittleEndian.AppendUint32(gem, 0)
	if d := Decode(Call{Cmd: abi.DRM_IOCTL_GEM_CLOSE, Arg: gem}); d.Ioctl != "DRM_IOCTL_GEM_CLOSE" || d.Fields["Handle"] != 7 || len(d.Order) != 1 {
		t.Errorf("GEM_CLOSE: %+v", d)
	}
	for _, cmd := range []uint32{abi.IOC(abi.IOCRead, 'K', 0x40, 8), abi.IOC(abi.IOCRead, 'd', 0x3e, 8), 0x5401} {
		if name, _, _, ok := describeABI(cmd, nil); ok {
			t.Errorf("%#x described as %q", cmd, name)
		}
	}
}

// TestArraysMatchABI ties the BPF program's constants for the arrays it copies to kfd/abi.
func TestArraysMatchABI(t *testing.T) {
	for _, c := range []struct{ prog, cmd uint32 }{
		{cmdWaitEvents, abi.AMDKFD_IOC_WAIT_EVENTS}, {cmdMap, abi.AMDKFD_IOC_MAP_MEMORY_TO_GPU},
		{cmdUnmap, abi.AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU},
	} {
		if c.prog != c.cmd&0xffff {
			t.Errorf("%#x is not the type and number of %#x", c.prog, c.cmd)
		}
	}
	if n := binary.Size(abi.EventData{}); n != eventDataSize {
		t.Errorf("struct kfd_event_data is %d bytes, the program copies %d", n, eventDataSize)
	}
}
