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
