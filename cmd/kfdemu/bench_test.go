package main

import (
	"testing"
	"time"

	"github.com/kfdemu/kfdemu/internal/testenv"
)

// BenchmarkIdleQueues is kfdemu bench's row "daemon CPU over 2 s, 64 idle AQL queues in 16
// processes" in go test: the daemon's (this process's) CPU time over 2 s while 16 client
// processes (re-executions of this test binary, benchclient.go) hold 4 idle AQL queues each,
// against 2 s with no client, in the same run; metrics in % of one CPU and their ratio. On mi210
// the 64 queues oversubscribe the GPU's 24 hardware queue slots, but the hardware scheduler
// time-slices only queues with work (gpu/hws), so idle ones cost nothing there; on mi210x8 (client i on GPU i mod 8) each GPU holds 8. Each iteration takes
// about 7 s:
//
//	go test -run '^$' -bench BenchmarkIdleQueues -benchtime 1x ./cmd/kfdemu
func BenchmarkIdleQueues(b *testing.B) {
	testenv.NeedMount(b)
	for _, profile := range []string{"mi210", "mi210x8"} {
		b.Run(profile, func(b *testing.B) {
			f := serveFlags{mount: b.TempDir(), profile: profile, logLevel: "warn"}
			srv, _, err := mountEmulator(&f, newLogger("warn"))
			if err != nil {
				b.Fatal(err)
			}
			defer srv.Unmount()
			var base, busy float64
			for range b.N {
				base += float64(idleCPU(200 * time.Millisecond))
				ps, err := startClients(f.mount, idleProcs, clientSpec{queues: idleQueuesPerProc}, time.Minute)
				if err != nil {
					b.Fatal(err)
				}
				busy += float64(idleCPU(idleSettle))
				if err := stopClients(ps, 10*time.Second); err != nil {
					b.Fatal(err)
				}
				if err := waitNoProcess(f.mount); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(100*busy/float64(b.N)/float64(idleSpan), "%cpu-64queues")
			b.ReportMetric(100*base/float64(b.N)/float64(idleSpan), "%cpu-noclient")
			b.ReportMetric(ratio(busy, base), "ratio")
		})
	}
}
