// Package tracefs makes the kernel's syscalls tracepoints reachable for the eBPF users of kfdemu
// (trace, mmnotify): it mounts tracefs at /sys/kernel/tracing when no tracefs is visible.
package tracefs

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Ensure returns nil once events/syscalls/<event> exists under a visible tracefs, mounting tracefs
// at /sys/kernel/tracing if needed; the error says which step failed.
func Ensure(event string) error {
	rel := filepath.Join("events/syscalls", event)
	for _, d := range []string{"/sys/kernel/tracing", "/sys/kernel/debug/tracing"} {
		if _, err := os.Stat(filepath.Join(d, rel)); err == nil {
			return nil
		}
	}
	if err := unix.Mount("nodev", "/sys/kernel/tracing", "tracefs", 0, ""); err != nil {
		return fmt.Errorf("mount tracefs at /sys/kernel/tracing: %w", err)
	}
	if _, err := os.Stat(filepath.Join("/sys/kernel/tracing", rel)); err != nil {
		return fmt.Errorf("syscalls/%s tracepoint: %w", event, err)
	}
	return nil
}
