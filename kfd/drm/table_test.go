package drm

import (
	"syscall"
	"testing"

	"github.com/kfdemu/kfdemu/kfd/abi"
)

// TestIoctlTables checks that the command tables and abi.DRMIoctls name the same commands with the
// same words, and that def refuses a handler whose argument type or command word is not the table's.
func TestIoctlTables(t *testing.T) {
	n := 0
	for _, io := range abi.DRMIoctls {
		nr := abi.IOCNr(io.Cmd)
		var d ioctlDesc
		if nr >= abi.DRMCommandBase && nr < abi.DRMCommandEnd {
			d = driverIoctls[nr-abi.DRMCommandBase]
		} else {
			d = coreIoctls[nr]
		}
		if d.fn == nil || d.cmd != io.Cmd {
			t.Errorf("%s: entry %#x, function %v", io.Name, d.cmd, d.fn != nil)
		}
	}
	for _, d := range append(coreIoctls[:], driverIoctls[:]...) {
		if d.fn != nil {
			n++
		}
	}
	if n != len(abi.DRMIoctls) {
		t.Errorf("%d commands with a function, abi.DRMIoctls has %d", n, len(abi.DRMIoctls))
	}
	getCap := func(*File, Memory, *abi.DRMGetCap) syscall.Errno { return 0 }
	for name, f := range map[string]func(){
		"argument type": func() { def(abi.DRM_IOCTL_SET_CLIENT_CAP, 0, getCap) },
		"command size":  func() { def(abi.IOC(abi.IOCRead|abi.IOCWrite, 'd', 0x0c, 8), 0, getCap) },
		"no type":       func() { def(abi.DRM_IOCTL_GET_UNIQUE, 0, getCap) },
		"not a command": func() { def(abi.IOC(abi.IOCRead|abi.IOCWrite, 'd', 0x3e, 16), 0, getCap) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: a mismatched registration did not panic", name)
				}
			}()
			f()
		}()
	}
}
