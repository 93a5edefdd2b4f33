package fs

import (
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/kfdemu/kfdemu/gpu/aql"
	"github.com/kfdemu/kfdemu/kfd"
	"github.com/kfdemu/kfdemu/kfd/abi"
	"golang.org/x/sys/unix"
)

// BenchmarkAQLRoundTrip measures what a ROCr client waits for: write a barrier-AND packet, publish
// the write index, store the doorbell, spin until the completion signal drops, through a real
// mount (FUSE passthrough mappings, doorbell watcher, packet processor). The floor, measured in the
// same run, is a no-op ioctl (GET_VERSION) through FUSE: the cheapest thing a client can ask of
// the driver. Report the ratio of the two.
func BenchmarkAQLRoundTrip(b *testing.B) {
	mnt, d := mountDriver(b, "mi210")
	c, err := openClient(mnt)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.close)
	b.Run("floor_ioctl_GET_VERSION", func(b *testing.B) {
		var v abi.GetVersionArgs
		for i := 0; i < b.N; i++ {
			if e := ioctl(c.kfd, abi.AMDKFD_IOC_GET_VERSION, &v); e != 0 {
				b.Fatal(e)
			}
		}
	})
	q0 := newBenchQueue(b, c, d, 0x100000000)
	ring, aq, sig, doorbell, sigs := q0.ring, q0.aq, q0.sig, q0.doorbell, q0.sigVA
	hdr := uint32(aql.MakeHeader(aql.PacketTypeBarrierAnd, true, aql.FenceScopeSystem, aql.FenceScopeSystem))
	var pkt [aql.PacketSize]byte
	(&aql.BarrierPacket{CompletionSignal: sigs}).Encode(pkt[:])
	b.Run("aql_barrier", func(b *testing.B) {
		lat := make([]time.Duration, 0, b.N)
		kicks := d.Stats()["doorbell_kicks"]
		for i := 0; i < b.N; i++ {
			start := time.Now()
			idx := u64(aq, aql.AMDQueueWriteDispatchIDOffset).Load()
			slot := ring[64*(idx%64) : 64*(idx%64)+64]
			copy(slot[4:], pkt[4:])
			u64(sig, aql.SignalValueOffset).Store(1)
			(*atomic.Uint32)(unsafe.Pointer(&slot[0])).Store(hdr)
			u64(aq, aql.AMDQueueWriteDispatchIDOffset).Store(idx + 1)
			doorbell.Store(idx)
			for u64(sig, aql.SignalValueOffset).Load() != 0 {
			}
			lat = append(lat, time.Since(start))
		}
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
		b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
		// Stores the doorbell watcher took rather than the queue (which polls its doorbell).
		b.ReportMetric(float64(d.Stats()["doorbell_kicks"]-kicks)/float64(b.N), "watcher-kicks/op")
	})
	// Packets per second on one queue: 63 barrier packets per doorbell (the ring holds 64), only
	// the last with a completion signal.
	b.Run("aql_packets_batch63", func(b *testing.B) {
		start := time.Now()
		for i := 0; i < b.N; i++ {
			q0.batch63()
		}
		b.ReportMetric(float64(63*b.N)/time.Since(start).Seconds(), "packets/s")
	})
	// Packets per second on 8 queues at once, one client thread per queue: each queue has its own
	// engine, so the total should grow with the cores the host has, not shrink.
	qs := []*benchQueue{q0}
	for i := 1; i < 8; i++ {
		qs = append(qs, newBenchQueue(b, c, d, 0x100000000+uint64(i)<<28))
	}
	b.Run("aql_packets_batch63_8queues", func(b *testing.B) {
		start := time.Now()
		var wg sync.WaitGroup
		for k, q := range qs {
			n := b.N / len(qs)
			if k < b.N%len(qs) {
				n++
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range n {
					q.batch63()
				}
			}()
		}
		wg.Wait()
		b.ReportMetric(float64(63*b.N)/time.Since(start).Seconds(), "packets/s")
	})
}

// benchQueue is an AQL queue laid out as ROCr lays it out, at base and above (256 MiB of VA).
type benchQueue struct {
	ring, aq, sig []byte
	sigVA         uint64
	doorbell      *atomic.Uint64
	pkt, none     [aql.PacketSize]byte
	hdr           uint32
}

func u64(m []byte, off uintptr) *atomic.Uint64 { return (*atomic.Uint64)(unsafe.Pointer(&m[off])) }

func newBenchQueue(b *testing.B, c *client, d *kfd.Driver, base uint64) *benchQueue {
	ptrs, sigs, eopVA, cwsrVA := base+0x10000, base+0x20000, base+0x100000, base+0x200000
	eop, ctl, cwsr, total, _ := d.QueueBufferSizes(c.gpu)
	var views []([]byte)
	for _, m := range []struct {
		va, size uint64
		flags    uint32
	}{{base, 4096, abi.KFD_IOC_ALLOC_MEM_FLAGS_GTT}, {ptrs, 4096, abi.KFD_IOC_ALLOC_MEM_FLAGS_GTT},
		{sigs, 4096, abi.KFD_IOC_ALLOC_MEM_FLAGS_GTT}, {eopVA, uint64(eop), abi.KFD_IOC_ALLOC_MEM_FLAGS_VRAM},
		{cwsrVA, total, abi.KFD_IOC_ALLOC_MEM_FLAGS_GTT}} {
		_, v, err := c.alloc(m.va, m.size, m.flags)
		if err != nil {
			b.Fatal(err)
		}
		views = append(views, v)
	}
	b.Cleanup(func() {
		for _, v := range views {
			unix.Munmap(v)
		}
	})
	q := abi.CreateQueueArgs{RingBaseAddress: base, RingSize: 4096, GPUID: c.gpu, QueueType: abi.KFD_IOC_QUEUE_TYPE_COMPUTE_AQL,
		QueuePercentage: 100, ReadPointerAddress: ptrs + aql.AMDQueueReadDispatchIDOffset, WritePointerAddress: ptrs + aql.AMDQueueWriteDispatchIDOffset,
		EOPBufferAddress: eopVA, EOPBufferSize: uint64(eop), CtxSaveRestoreAddress: cwsrVA, CtxSaveRestoreSize: cwsr, CtlStackSize: ctl}
	if e := ioctl(c.kfd, abi.AMDKFD_IOC_CREATE_QUEUE, &q); e != 0 {
		b.Fatalf("CREATE_QUEUE: %v", e)
	}
	const slice = 8192
	bell, err := unix.Mmap(c.kfd, int64(q.DoorbellOffset&^(slice-1)), slice, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ioctl(c.kfd, abi.AMDKFD_IOC_DESTROY_QUEUE, &abi.DestroyQueueArgs{QueueID: q.QueueID})
		unix.Munmap(bell)
	})
	bq := &benchQueue{ring: views[0], aq: views[1], sig: views[2], sigVA: sigs,
		doorbell: u64(bell, uintptr(q.DoorbellOffset&(slice-1))),
		hdr:      uint32(aql.MakeHeader(aql.PacketTypeBarrierAnd, true, aql.FenceScopeSystem, aql.FenceScopeSystem))}
	(&aql.BarrierPacket{CompletionSignal: sigs}).Encode(bq.pkt[:])
	(&aql.BarrierPacket{}).Encode(bq.none[:])
	return bq
}

// batch63 submits 63 barrier packets with one doorbell (the ring holds 64), only the last with a
// completion signal, and spins until it drops.
func (q *benchQueue) batch63() {
	idx := u64(q.aq, aql.AMDQueueWriteDispatchIDOffset).Load()
	u64(q.sig, aql.SignalValueOffset).Store(1)
	for k := uint64(0); k < 63; k++ {
		slot := q.ring[64*((idx+k)%64) : 64*((idx+k)%64)+64]
		if k == 62 {
			copy(slot[4:], q.pkt[4:])
		} else {
			copy(slot[4:], q.none[4:])
		}
		(*atomic.Uint32)(unsafe.Pointer(&slot[0])).Store(q.hdr)
	}
	u64(q.aq, aql.AMDQueueWriteDispatchIDOffset).Store(idx + 63)
	q.doorbell.Store(idx + 62)
	for u64(q.sig, aql.SignalValueOffset).Load() != 0 {
		runtime.Gosched()
	}
}
