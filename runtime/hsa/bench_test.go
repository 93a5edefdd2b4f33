package hsa

import (
	"slices"
	"testing"
	"time"

	"github.com/kfdemu/kfdemu/gpu/aql"
	"github.com/kfdemu/kfdemu/runtime/kmt"
)

// BenchmarkRoundTrip compares a barrier packet's round trip (publish, doorbell, completion seen)
// through the runtime with the same packet written straight into a kmt queue's ring, in one run,
// and the same through the runtime for an empty kernel dispatch.
func BenchmarkRoundTrip(b *testing.B) {
	r := initRT(b)
	g := r.GPUs()[0]
	q, err := g.CreateQueue(256, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer q.Destroy()
	s, _ := r.NewSignal(0, false)
	defer s.Destroy()
	report := func(b *testing.B, lat []time.Duration) {
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
		b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
	}
	b.Run("raw_kmt_ring", func(b *testing.B) {
		// The raw client: the same ring, packet bytes and header store done by hand.
		var pkt [aql.PacketSize]byte
		(&aql.BarrierPacket{CompletionSignal: s.VA}).Encode(pkt[:])
		hdr := uint32(aql.MakeHeader(aql.PacketTypeBarrierAnd, true, aql.FenceScopeSystem, aql.FenceScopeSystem))
		lat := make([]time.Duration, 0, b.N)
		for i := 0; i < b.N; i++ {
			start := time.Now()
			s.value.Store(1)
			idx := q.wr.Add(1) - 1
			off := int(idx%uint64(q.Size)) * aql.PacketSize
			copy(q.ringB[off+4:off+aql.PacketSize], pkt[4:])
			kmt.Word32(q.ringB, off).Store(hdr)
			q.q.RingDoorbell(idx)
			for s.value.Load() != 0 {
			}
			lat = append(lat, time.Since(start))
		}
		report(b, lat)
	})
	b.Run("runtime_barrier", func(b *testing.B) {
		lat := make([]time.Duration, 0, b.N)
		for i := 0; i < b.N; i++ {
			start := time.Now()
			s.Store(1, Relaxed)
			if _, err := q.SubmitBarrierAnd(nil, s); err != nil {
				b.Fatal(err)
			}
			if _, ok, err := s.Wait(Eq, 0, 5*time.Second); !ok || err != nil {
				b.Fatal("no completion", err)
			}
			lat = append(lat, time.Since(start))
		}
		report(b, lat)
	})
}
