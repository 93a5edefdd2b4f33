package hsa

import (
	"testing"
	"time"

	"github.com/kfdemu/kfdemu/gpu/aql"
	"github.com/kfdemu/kfdemu/runtime/kmt"
)

// With AMD_QUEUE_PROPERTIES_ENABLE_PROFILING set in amd_queue_t (what ROCr's
// hsa_amd_profiling_set_profiler_enabled does), the packet processor writes a completion signal's
// start_ts and end_ts in the GPU timestamp domain: between GET_CLOCK_COUNTERS' gpu_clock_counter
// read before the submission and after the completion, end after start, and a barrier that waits
// 20 ms for its dependency lasts at least that long at 100 MHz. Without the property nothing is
// written.
func TestProfilingTimestamps(t *testing.T) {
	r := initRT(t)
	g := r.GPUs()[0]
	q, err := g.CreateQueue(64, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Destroy()
	ts := func(s *Signal) (uint64, uint64) {
		r.mu.Lock()
		b := r.sigMem[s.VA]
		r.mu.Unlock()
		return kmt.Word64(b, aql.SignalStartTSOffset).Load(), kmt.Word64(b, aql.SignalEndTSOffset).Load()
	}
	run := func(delay time.Duration) *Signal {
		dep, _ := r.NewSignal(1, false)
		done, _ := r.NewSignal(1, true)
		if _, err := q.SubmitBarrierAnd([]*Signal{dep}, done); err != nil {
			t.Fatal(err)
		}
		time.Sleep(delay)
		dep.Store(0, Release)
		if _, ok, err := done.Wait(Eq, 0, 5*time.Second); !ok || err != nil {
			t.Fatalf("barrier did not complete: %v", err)
		}
		return done
	}
	if s, e := ts(run(0)); s != 0 || e != 0 {
		t.Fatalf("profiling off: start_ts %d end_ts %d written", s, e)
	}
	props := kmt.Word32(q.amdq.Bytes(), aql.AMDQueuePropertiesOffset)
	props.Store(aql.QueuePropEnableProfiling.Set(props.Load(), 1))
	before, err := r.d.ClockCounters(g.gpu)
	if err != nil {
		t.Fatal(err)
	}
	s, e := ts(run(20 * time.Millisecond))
	after, _ := r.d.ClockCounters(g.gpu)
	t.Logf("gpu clock %d .. %d, start_ts %d end_ts %d", before.GPUClockCounter, after.GPUClockCounter, s, e)
	if s < before.GPUClockCounter || e > after.GPUClockCounter || e < s+2_000_000*9/10 {
		t.Fatalf("start_ts %d end_ts %d outside [%d, %d] or shorter than 20 ms at 100 MHz",
			s, e, before.GPUClockCounter, after.GPUClockCounter)
	}
}
