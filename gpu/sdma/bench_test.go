package sdma

import (
	"encoding/binary"
	"testing"
	"time"
)

// BenchmarkCopy measures COPY_LINEAR bandwidth of 4 MiB through the engine (ring, doorbell,
// packet decode, chunked Memory reads and writes, fence) against a memmove of the same size in
// the same run: the floor. Compare the MB/s of the two sub-benchmarks.
func BenchmarkCopy(b *testing.B) {
	const n = MaxCopyBytes // 4 MiB, one packet
	const src, dst, fence = base + 0x10000, base + 0x10000 + n, base + 0x8000
	m := &flat{base: base, b: make([]byte, 0x10000+2*n)}
	b.Run("floor_memmove", func(b *testing.B) {
		b.SetBytes(n)
		for i := 0; i < b.N; i++ {
			copy(m.b[dst-base:dst-base+n], m.b[src-base:src-base+n])
		}
	})
	// One queue for every run of the sub-benchmark (the framework calls it with growing b.N).
	h := &host{errCh: make(chan error, 1)}
	q, err := New(Config{RingBase: ring, RingSizeBytes: 4096, ReadPtrVA: rptr, WritePtrVA: wptr, Memory: m, Host: h})
	if err != nil {
		b.Fatal(err)
	}
	q.Start()
	defer q.Stop()
	var pos uint64
	b.Run("sdma_copy_linear", func(b *testing.B) {
		m.Atomic(fence, 4, func(uint64) uint64 { return 0 })
		b.SetBytes(n)
		for i := 0; i < b.N; i++ {
			p := AppendFence(AppendCopyLinear(nil, dst, src, n), fence, uint32(i+1))
			for j := range p {
				m.b[(pos+uint64(j))%4096] = p[j]
			}
			pos += uint64(len(p))
			m.Atomic(wptr, 8, func(uint64) uint64 { return pos })
			q.Kick()
			for {
				v, _ := m.Atomic(fence, 4, nil)
				if uint32(v) == uint32(i+1) {
					break
				}
				if err := q.Err(); err != nil {
					b.Fatal(err)
				}
				time.Sleep(10 * time.Microsecond)
			}
		}
		b.StopTimer()
		if got := binary.LittleEndian.Uint32(m.b[fence-base:]); got != uint32(b.N) {
			b.Fatalf("fence %d after %d copies", got, b.N)
		}
	})
}
