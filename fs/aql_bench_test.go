package fs

import (
	"slices"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/kfdemu/kfdemu/gpu/hsa"
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
	const base, ptrs, sigs, eopVA, cwsrVA = 0x100000000, 0x100010000, 0x100020000, 0x300000000, 0x400000000
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
	ring, aq, sig := views[0], views[1], views[2]
	q := abi.CreateQueueArgs{RingBaseAddress: base, RingSize: 4096, GPUID: c.gpu, QueueType: abi.KFD_IOC_QUEUE_TYPE_COMPUTE_AQL,
		QueuePercentage: 100, ReadPointerAddress: ptrs + hsa.AMDQueueReadDispatchIDOffset, WritePointerAddress: ptrs + hsa.AMDQueueWriteDispatchIDOffset,
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
	u64 := func(m []byte, off uintptr) *atomic.Uint64 { return (*atomic.Uint64)(unsafe.Pointer(&m[off])) }
	doorbell := u64(bell, uintptr(q.DoorbellOffset&(slice-1)))
	hdr := uint32(hsa.MakeHeader(hsa.PacketTypeBarrierAnd, true, hsa.FenceScopeSystem, hsa.FenceScopeSystem))
	var pkt [hsa.PacketSize]byte
	(&hsa.BarrierPacket{CompletionSignal: sigs}).Encode(pkt[:])
	b.Run("aql_barrier", func(b *testing.B) {
		lat := make([]time.Duration, 0, b.N)
		for i := 0; i < b.N; i++ {
			start := time.Now()
			idx := u64(aq, hsa.AMDQueueWriteDispatchIDOffset).Load()
			slot := ring[64*(idx%64) : 64*(idx%64)+64]
			copy(slot[4:], pkt[4:])
			u64(sig, hsa.SignalValueOffset).Store(1)
			(*atomic.Uint32)(unsafe.Pointer(&slot[0])).Store(hdr)
			u64(aq, hsa.AMDQueueWriteDispatchIDOffset).Store(idx + 1)
			doorbell.Store(idx)
			for u64(sig, hsa.SignalValueOffset).Load() != 0 {
			}
			lat = append(lat, time.Since(start))
		}
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
		b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
	})
	// Packets per second on one queue: 63 barrier packets per doorbell (the ring holds 64), only
	// the last with a completion signal.
	b.Run("aql_packets_batch63", func(b *testing.B) {
		var none [hsa.PacketSize]byte
		(&hsa.BarrierPacket{}).Encode(none[:])
		start := time.Now()
		for i := 0; i < b.N; i++ {
			idx := u64(aq, hsa.AMDQueueWriteDispatchIDOffset).Load()
			u64(sig, hsa.SignalValueOffset).Store(1)
			for k := uint64(0); k < 63; k++ {
				slot := ring[64*((idx+k)%64) : 64*((idx+k)%64)+64]
				if k == 62 {
					copy(slot[4:], pkt[4:])
				} else {
					copy(slot[4:], none[4:])
				}
				(*atomic.Uint32)(unsafe.Pointer(&slot[0])).Store(hdr)
			}
			u64(aq, hsa.AMDQueueWriteDispatchIDOffset).Store(idx + 63)
			doorbell.Store(idx + 62)
			for u64(sig, hsa.SignalValueOffset).Load() != 0 {
			}
		}
		b.ReportMetric(float64(63*b.N)/time.Since(start).Seconds(), "packets/s")
	})
}
