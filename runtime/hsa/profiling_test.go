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
// read before the submission and after the completion, end after start, and a barrier's end after
// the GPU clock at which the CPU satisfied its dependency (20 ms after the submission). Without the property nothing is
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
	// run submits a barrier whose dependency the CPU satisfies after delay; it returns the
	// completion signal and the GPU clock just before that store.
	run := func(delay time.Duration) (*Signal, uint64) {
		dep, _ := r.NewSignal(1, false)
		done, _ := r.NewSignal(1, true)
		if _, err := q.SubmitBarrierAnd([]*Signal{dep}, done); err != nil {
			t.Fatal(err)
		}
		time.Sleep(delay)
		release, err := r.d.ClockCounters(g.gpu)
		if err != nil {
			t.Fatal(err)
		}
		dep.Store(0, Release)
		if _, ok, err := done.Wait(Eq, 0, 5*time.Second); !ok || err != nil {
			t.Fatalf("barrier did not complete: %v", err)
		}
		return done, release.GPUClockCounter
	}
	off, _ := run(0)
	if s, e := ts(off); s != 0 || e != 0 {
		t.Fatalf("profiling off: start_ts %d end_ts %d written", s, e)
	}
	props := kmt.Word32(q.amdq.Bytes(), aql.AMDQueuePropertiesOffset)
	props.Store(aql.QueuePropEnableProfiling.Set(props.Load(), 1))
	before, err := r.d.ClockCounters(g.gpu)
	if err != nil {
		t.Fatal(err)
	}
	done, release := run(20 * time.Millisecond)
	s, e := ts(done)
	after, _ := r.d.ClockCounters(g.gpu)
	t.Logf("gpu clock %d .. %d, dependency released at %d, start_ts %d end_ts %d", before.GPUClockCounter,
		after.GPUClockCounter, release, s, e)
	// The launch follows the submission (how long after depends on when the doorbell is seen:
	// on a loaded machine it may even follow the release), the completion follows the release.
	if s < before.GPUClockCounter || e > after.GPUClockCounter || e < s || e < release {
		t.Fatalf("start_ts %d end_ts %d: not inside [%d, %d] in order, or the end before the dependency's release at %d",
			s, e, before.GPUClockCounter, after.GPUClockCounter, release)
	}
	if release-before.GPUClockCounter < 2_000_000*9/10 {
		t.Fatalf("the release came %d ticks after the submission, not 20 ms at 100 MHz", release-before.GPUClockCounter)
	}
}
