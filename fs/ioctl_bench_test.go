package fs

import (
	"slices"
	"testing"
	"time"

	"github.com/kfdemu/kfdemu/kfd/abi"
)

// BenchmarkIoctlTail is kfdemu bench's GET_VERSION row in go test: round trips of the cheapest
// kfd ioctl through the mount, their p50 and p99 and the ratio (issue 20's goal: p99 <= 3x p50).
// The client and the daemon share this process, so allocs/op and B/op are the daemon's per ioctl
// plus the loop's: what drives the garbage collector, whose mark phases slow the requests they
// overlap.
//
//	go test -run '^$' -bench BenchmarkIoctlTail -benchtime 20000x ./fs
func BenchmarkIoctlTail(b *testing.B) {
	mnt, _ := mountDriver(b, "mi210")
	c, err := openClient(mnt)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.close)
	var v abi.GetVersionArgs
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		if e := ioctl(c.kfd, abi.AMDKFD_IOC_GET_VERSION, &v); e != 0 {
			b.Fatal(e)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	p50, p99 := lat[len(lat)/2], lat[len(lat)*99/100]
	b.ReportMetric(float64(p50.Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(p99.Nanoseconds()), "p99-ns")
	b.ReportMetric(float64(p99)/float64(p50), "p99/p50")
}
