package kfd

import (
	"os"
	"testing"

	"github.com/kfdemu/kfdemu/kfd/abi"
)

// A driver's teardown (Close, the daemon's shutdown) leaves no descriptor behind: the test
// environment closes it, so that a fuzz target making one per input (FuzzDebugTrap) does not run
// out of descriptors. 40 environments with a debugger session each (as its inputs run), then the
// count of open files.
func TestDriverCloseLeavesNoDescriptors(t *testing.T) {
	count := func() int { d, _ := os.ReadDir("/proc/self/fd"); return len(d) }
	before := count()
	for range 40 {
		t.Run("env", func(t *testing.T) {
			e := newDbgEnv(t)
			e.runtime(abi.KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK)
			e.enable(^uint64(0))
			e.dbg(abi.KFD_IOC_DBG_TRAP_DISABLE, nil)
			e.d.ProcessExited(os.Getpid())
		})
	}
	// (internal/hrtimer keeps up to 8 stopped timers for reuse, a descriptor each)
	if after := count(); after > before+8 {
		t.Fatalf("%d open descriptors after 40 drivers, %d before", after, before)
	}
}
