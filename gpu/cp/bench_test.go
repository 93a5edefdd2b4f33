package cp

import (
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kfdemu/kfdemu/gpu/aql"
	"github.com/kfdemu/kfdemu/gpu/hqd"
)

// BenchmarkBarrierPackets measures barrier-AND packets (no dependencies, a completion signal, a
// doorbell per packet, as ROCr submits them) through in-memory queues: packets/s is the total over
// all queues. Each queue has its own producer goroutine and a 256-slot ring.
func BenchmarkBarrierPackets(b *testing.B) {
	for _, nq := range []int{1, 8} {
		b.Run(fmt.Sprintf("queues=%d", nq), func(b *testing.B) {
			e := newEnv(b)
			qs := make([]*tq, nq)
			done := make([]uint64, nq)
			per := b.N/nq + 1
			for i := range qs {
				qs[i] = e.queue(qopt{size: 256})
				done[i] = e.signal(int64(per))
			}
			pkts := make([][]byte, nq)
			for i := range pkts {
				pkts[i] = barrier(aql.PacketTypeBarrierAnd, false, done[i])
			}
			b.ResetTimer()
			var wg sync.WaitGroup
			for i, q := range qs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for j := 0; j < per; j++ {
						q.submit(pkts[i])
					}
				}()
			}
			wg.Wait()
			for i := range qs {
				waitFor(b, "completion", func() bool { return e.value(done[i]) == 0 })
			}
			b.StopTimer()
			b.ReportMetric(float64(per*nq)/b.Elapsed().Seconds(), "packets/s")
		})
	}
}

// BenchmarkBlockedQueueCPU reports the process CPU time spent while 8 queues sit blocked on
// barriers that never resolve (default 1 ms maximum poll), as a percentage of one core, next to a
// baseline without queues (the benchmark loop and Go runtime alone): "recent"
// measures during the first second of blocking, "after1s" once the ceiling has risen to 50 ms.
// Each iteration is 10 ms of wall time; run with -benchtime 100x for one second.
func BenchmarkBlockedQueueCPU(b *testing.B) {
	for _, c := range []struct {
		name   string
		queues int
		delay  time.Duration
	}{{"baseline-no-queues", 0, 0}, {"recent", 8, 20 * time.Millisecond}, {"after1s", 8, 1200 * time.Millisecond}} {
		b.Run(c.name, func(b *testing.B) {
			e := newEnv(b)
			for i := 0; i < c.queues; i++ {
				q := e.queue(qopt{})
				q.submit(barrier(aql.PacketTypeBarrierAnd, false, 0, e.signal(1)))
				waitFor(b, "blocked", func() bool { return q.State() == hqd.StateBlocked })
			}
			time.Sleep(c.delay)
			var before, after syscall.Rusage
			syscall.Getrusage(syscall.RUSAGE_SELF, &before)
			start := time.Now()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				time.Sleep(10 * time.Millisecond)
			}
			b.StopTimer()
			syscall.Getrusage(syscall.RUSAGE_SELF, &after)
			cpu := time.Duration(after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano())
			b.ReportMetric(100*cpu.Seconds()/time.Since(start).Seconds(), "cpu-%")
		})
	}
}
