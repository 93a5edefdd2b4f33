package kmt

import (
	"encoding/binary"
	"fmt"

	"github.com/kfdemu/kfdemu/kfd/abi"
)

// ClockCounters is GET_CLOCK_COUNTERS (hsaKmtGetClockCounters).
type ClockCounters struct {
	GPUClockCounter    uint64
	CPUClockCounter    uint64
	SystemClockCounter uint64
	SystemClockFreq    uint64 // Hz
}

// ClockCounters reads g's clock counters.
func (d *Device) ClockCounters(g *GPU) (ClockCounters, error) {
	if err := d.check(); err != nil {
		return ClockCounters{}, err
	}
	a := abi.GetClockCountersArgs{GPUID: g.ID()}
	if err := ioctl(d.kfd, "GET_CLOCK_COUNTERS", abi.AMDKFD_IOC_GET_CLOCK_COUNTERS, &a); err != nil {
		return ClockCounters{}, err
	}
	return ClockCounters{a.GPUClockCounter, a.CPUClockCounter, a.SystemClockCounter, a.SystemClockFreq}, nil
}

// SVMAttr is one kfd_ioctl_svm_attribute (type KFD_IOCTL_SVM_ATTR_*, value).
type SVMAttr struct {
	Type  uint32
	Value uint32
}

// svm issues AMDKFD_IOC_SVM with the attributes following the fixed head; the command word
// carries the total size, as libhsakmt's hsaKmtSVMSetAttr/GetAttr build it
// (AMDKFD_IOC_SVM + (size << _IOC_SIZESHIFT)).
func (d *Device) svm(op uint32, start, size uint64, attrs []SVMAttr) ([]SVMAttr, error) {
	if err := d.check(); err != nil {
		return nil, err
	}
	if start%pageSize != 0 || size == 0 || size%pageSize != 0 {
		return nil, fmt.Errorf("%w: SVM range %#x+%#x is not page aligned", ErrInvalidArgument, start, size)
	}
	n := 24 + 8*len(attrs)
	if n > abi.IOCSizeMask {
		return nil, fmt.Errorf("%w: %d SVM attributes", ErrInvalidArgument, len(attrs))
	}
	buf := make([]byte, n)
	le := binary.LittleEndian
	le.PutUint64(buf[0:], start)
	le.PutUint64(buf[8:], size)
	le.PutUint32(buf[16:], op)
	le.PutUint32(buf[20:], uint32(len(attrs)))
	for i, a := range attrs {
		le.PutUint32(buf[24+8*i:], a.Type)
		le.PutUint32(buf[28+8*i:], a.Value)
	}
	cmd := abi.IOC(abi.IOCRead|abi.IOCWrite, abi.AMDKFDIOCTLBase, abi.IOCNr(abi.AMDKFD_IOC_SVM), uint32(n))
	if err := ioctlBuf(d.kfd, "SVM", cmd, buf); err != nil {
		return nil, err
	}
	out := make([]SVMAttr, len(attrs))
	for i := range out {
		out[i] = SVMAttr{le.Uint32(buf[24+8*i:]), le.Uint32(buf[28+8*i:])}
	}
	return out, nil
}

// SVMSetAttr sets attributes of the shared virtual memory range [start, start+size)
// (hsaKmtSVMSetAttr, KFD_IOCTL_SVM_OP_SET_ATTR).
func (d *Device) SVMSetAttr(start, size uint64, attrs ...SVMAttr) error {
	_, err := d.svm(abi.KFD_IOCTL_SVM_OP_SET_ATTR, start, size, attrs)
	return err
}

// SVMGetAttr queries the given attribute types of a range (hsaKmtSVMGetAttr); the driver fills in
// the values.
func (d *Device) SVMGetAttr(start, size uint64, attrs ...SVMAttr) ([]SVMAttr, error) {
	return d.svm(abi.KFD_IOCTL_SVM_OP_GET_ATTR, start, size, attrs)
}

// SetXNACKMode enables or disables XNACK (retry on GPU page faults) for the process
// (hsaKmtSetXNACKMode; the driver refuses while queues exist).
func (d *Device) SetXNACKMode(enable bool) error {
	if err := d.check(); err != nil {
		return err
	}
	a := abi.SetXnackModeArgs{}
	if enable {
		a.XnackEnabled = 1
	}
	return ioctl(d.kfd, "SET_XNACK_MODE", abi.AMDKFD_IOC_SET_XNACK_MODE, &a)
}

// XNACKMode queries the process's XNACK mode (hsaKmtGetXNACKMode: SET_XNACK_MODE with -1).
func (d *Device) XNACKMode() (bool, error) {
	if err := d.check(); err != nil {
		return false, err
	}
	a := abi.SetXnackModeArgs{XnackEnabled: -1}
	err := ioctl(d.kfd, "SET_XNACK_MODE", abi.AMDKFD_IOC_SET_XNACK_MODE, &a)
	return a.XnackEnabled > 0, err
}

// SetMemoryPolicy sets g's default and alternate cache policies (hsaKmtSetMemoryPolicy).
func (d *Device) SetMemoryPolicy(g *GPU, defaultCoherent, altCoherent bool, altBase, altSize uint64) error {
	if err := d.check(); err != nil {
		return err
	}
	pol := func(c bool) uint32 {
		if c {
			return abi.KFD_IOC_CACHE_POLICY_COHERENT
		}
		return abi.KFD_IOC_CACHE_POLICY_NONCOHERENT
	}
	a := abi.SetMemoryPolicyArgs{GPUID: g.ID(), DefaultPolicy: pol(defaultCoherent), AlternatePolicy: pol(altCoherent),
		AlternateApertureBase: altBase, AlternateApertureSize: altSize}
	return ioctl(d.kfd, "SET_MEMORY_POLICY", abi.AMDKFD_IOC_SET_MEMORY_POLICY, &a)
}
