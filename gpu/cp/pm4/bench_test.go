package pm4

import (
	"github.com/kfdemu/kfdemu/gpu/hqd"
	"runtime"
	"testing"
	"time"
)

// BenchmarkPackets measures PM4 packets per second through a running queue on the in-memory
// Memory: each iteration submits 32 WRITE_DATA packets and one RELEASE_MEM with one doorbell and
// waits for the read pointer to reach the write pointer.
func BenchmarkPackets(b *testing.B) {
	e := newEnv(b)
	q := e.queue(qopt{ringBytes: 64 << 10})
	var batch []uint32
	for i := range 32 {
		batch = append(batch, writeData(dataVA+uint64(8*i), uint32(i), 0)...)
	}
	batch = append(batch, releaseMem(EventCacheFlushAndInvTS, DataSel64, IntSelNone, dataVA+512, 1, 0)...)
	start := time.Now()
	b.ResetTimer()
	for range b.N {
		w := q.submit(batch)
		for q.rd.Load() != w {
			runtime.Gosched()
			if q.State() == hqd.StateError {
				b.Fatal(q.Err())
			}
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(33*b.N)/time.Since(start).Seconds(), "packets/s")
}
