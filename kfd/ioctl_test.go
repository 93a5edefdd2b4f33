package kfd

import (
	"log/slog"
	"os"
	"testing"

	"github.com/kfdemu/kfdemu/kfd/abi"
	"github.com/kfdemu/kfdemu/topology"
)

// benchEnv is newEnv for benchmarks.
func benchEnv(b *testing.B) (File, *fakeCaller, uint32) {
	sys, err := topology.Profile("mi210")
	if err != nil {
		b.Fatal(err)
	}
	d := New(sys, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
	c := newCaller(fakeTgid)
	f, err := d.OpenKFD(c.tgid)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Release(); d.Close() })
	return f, c, sys.GPUs()[0].GPUID
}

// BenchmarkIoctl measures the driver side of the ioctl path (the table, the copies and the
// argument decoding), without FUSE: an _IOR command (GET_VERSION) and an _IOWR one whose handler
// reads and writes its struct (GET_CLOCK_COUNTERS).
func BenchmarkIoctl(b *testing.B) {
	f, c, gpu := benchEnv(b)
	b.Run("GET_VERSION", func(b *testing.B) {
		buf := make([]byte, abi.IOCSize(abi.AMDKFD_IOC_GET_VERSION))
		b.ReportAllocs()
		for b.Loop() {
			if e := f.Ioctl(c, abi.AMDKFD_IOC_GET_VERSION, buf); e != 0 {
				b.Fatal(e)
			}
		}
	})
	b.Run("GET_CLOCK_COUNTERS", func(b *testing.B) {
		buf := make([]byte, abi.IOCSize(abi.AMDKFD_IOC_GET_CLOCK_COUNTERS))
		encode(buf, abi.GetClockCountersArgs{GPUID: gpu})
		b.ReportAllocs()
		for b.Loop() {
			if e := f.Ioctl(c, abi.AMDKFD_IOC_GET_CLOCK_COUNTERS, buf); e != 0 {
				b.Fatal(e)
			}
		}
	})
}

// TestIoctlTable checks that every command of abi.Ioctls has a handler under the table's command
// word, and that registration refuses a handler whose argument type or command word is not the
// table's.
func TestIoctlTable(t *testing.T) {
	for _, io := range append(abi.Ioctls[:len(abi.Ioctls):len(abi.Ioctls)], abi.OutOfTreeIoctls...) {
		if d := ioctls[io.Nr]; d.fn == nil || d.cmd != io.Cmd || d.name != io.Name {
			t.Errorf("AMDKFD_IOC_%s: entry %#x %q, function %v", io.Name, d.cmd, d.name, d.fn != nil)
		}
	}
	for name, f := range map[string]func(){
		"argument type": func() { lookup[abi.SetEventArgs](abi.AMDKFD_IOC_RESET_EVENT) },
		"map for unmap": func() { lookup[abi.MapMemoryToGPUArgs](abi.AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU) },
		"command size":  func() { lookup[abi.GetVersionArgs](abi.IOC(abi.IOCRead, 'K', 0x01, 16)) },
		"direction":     func() { lookup[abi.GetVersionArgs](abi.IOC(abi.IOCRead|abi.IOCWrite, 'K', 0x01, 8)) },
		"number":        func() { lookup[abi.GetVersionArgs](abi.IOC(abi.IOCRead, 'K', 0x40, 8)) },
		"type":          func() { lookup[abi.GetVersionArgs](abi.IOC(abi.IOCRead, 'd', 0x01, 8)) },
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
