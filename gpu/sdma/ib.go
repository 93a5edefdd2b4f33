package sdma

import (
	"errors"
	"fmt"

	"github.com/kfdemu/kfdemu/gpu/hqd"
)

// IB describes an indirect buffer: a command submission's IB that amdgpu's ring puts behind an
// SDMA_OP_INDIRECT packet (sdma_v4_0_ring_emit_ib: the IB's VA with bits 4:0 cleared, its length
// in dwords). The engine fetches it through the submitting VM.
type IB struct {
	VA     uint64 // bits 4:0 are ignored, as the INDIRECT packet's IB_BASE_LO drops them
	Dwords uint32
	Memory Memory
	Host   Host            // Interrupt (TRAP) and Timestamp; QueueError is not called
	Stop   <-chan struct{} // closed: a POLL_REGMEM wait and the packet loop stop (ErrStopped)
}

// ErrStopped is returned by RunIB when IB.Stop was closed before the buffer ended.
var ErrStopped = hqd.ErrStopped

// IBStatus is what an executed buffer did.
type IBStatus struct {
	Packets, Bytes uint64 // packets executed; bytes copied or filled
}

// RunIB executes the packets of an indirect buffer in order on the calling goroutine, through the
// same decoder and executor as the rings, until its end: a packet that runs past the end is
// malformed. A POLL_REGMEM waits as on a ring (re-checked on a backoff; nothing kicks an IB) until
// it holds or Stop is closed. Errors are a *PacketError whose Index is the packet's byte offset in
// the IB (errors.Is ErrFault for memory faults), or ErrStopped.
func RunIB(ib IB) (IBStatus, error) {
	if ib.Memory == nil || ib.Host == nil {
		return IBStatus{}, fmt.Errorf("%w: Memory and Host are required", ErrConfig)
	}
	size := 4 * uint64(ib.Dwords)
	// The buffer is the "ring": offsets below its size never wrap.
	q := &Queue{cfg: Config{RingBase: ib.VA &^ 0x1f, Memory: ib.Memory, Host: ib.Host}, size: max(size, 4)}
	q.Init(hqd.Engine{})
	stop := ib.Stop
	if stop == nil {
		stop = make(chan struct{})
	}
	for q.rd < size {
		select {
		case <-stop:
			return q.ibStatus(), ErrStopped
		default:
		}
		n, ok, err := q.step(stop, size-q.rd)
		if errors.Is(err, hqd.ErrStopped) {
			return q.ibStatus(), ErrStopped
		}
		if err == nil && !ok {
			err = fmt.Errorf("%w: %d-dword packet runs past the end of a %d-dword IB", ErrMalformed, n, ib.Dwords)
		}
		if err != nil {
			return q.ibStatus(), &PacketError{Index: q.rd, Header: q.dw[0], Err: err}
		}
		q.rd += 4 * n
		q.packets.Add(1)
		q.interrupt()
	}
	return q.ibStatus(), nil
}

func (q *Queue) ibStatus() IBStatus {
	return IBStatus{Packets: q.packets.Load(), Bytes: q.bytes.Load()}
}
