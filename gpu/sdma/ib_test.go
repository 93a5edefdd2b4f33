package sdma

import (
	"encoding/binary"
	"errors"
	"testing"
	"time"
)

// TestRunIB executes command-submission IBs: packets in order to the end, the address's low five
// bits ignored, a packet crossing the end, a fault and an unsupported packet located by offset, and a
// POLL_REGMEM that waits until memory changes or the IB is stopped.
func TestRunIB(t *testing.T) {
	newIB := func() (*flat, *host) {
		return &flat{base: base, b: make([]byte, size)}, &host{errCh: make(chan error, 1)}
	}
	put := func(m *flat, va uint64, b []byte) { copy(m.b[va-base:], b) }

	m, h := newIB()
	var ib []byte
	ib = AppendNOP(ib, 3)
	ib = AppendWrite(ib, data, []uint32{0x11, 0x22})
	ib = AppendConstFill(ib, data+0x100, 0xabababab, FillDword, 64)
	ib = AppendTrap(ib, 7)
	put(m, ring, ib)
	st, err := RunIB(IB{VA: ring + 0x1c, Dwords: uint32(len(ib) / 4), Memory: m, Host: h})
	if err != nil || st.Packets != 4 || st.Bytes != 64 {
		t.Fatalf("RunIB: %+v %v", st, err)
	}
	if binary.LittleEndian.Uint32(m.b[data-base+4:]) != 0x22 || m.b[data-base+0x13f] != 0xab || len(h.ints) != 1 || h.ints[0] != 7 {
		t.Errorf("effects: % x ints %v", m.b[data-base:data-base+8], h.ints)
	}

	// A WRITE whose data runs past the end of the IB.
	m, h = newIB()
	ib = AppendWrite(nil, data, []uint32{1, 2, 3})
	put(m, ring, ib)
	var pe *PacketError
	if _, err := RunIB(IB{VA: ring, Dwords: uint32(len(ib)/4 - 1), Memory: m, Host: h}); !errors.As(err, &pe) || !errors.Is(err, ErrMalformed) || pe.Index != 0 {
		t.Errorf("truncated WRITE: %v", err)
	}

	// A fault in the second packet, and an unsupported one.
	m, h = newIB()
	ib = AppendNOP(nil, 0)
	ib = AppendFence(ib, 0xdead_0000, 1)
	put(m, ring, ib)
	if _, err := RunIB(IB{VA: ring, Dwords: uint32(len(ib) / 4), Memory: m, Host: h}); !errors.As(err, &pe) || !errors.Is(err, ErrFault) || pe.Index != 4 {
		t.Errorf("fault: %v", err)
	}
	put(m, ring, []byte{0x04, 0, 0, 0}) // SDMA_OP_INDIRECT inside an IB
	if _, err := RunIB(IB{VA: ring, Dwords: 1, Memory: m, Host: h}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("INDIRECT in an IB: %v", err)
	}
	if st, err := RunIB(IB{VA: ring, Dwords: 0, Memory: m, Host: h}); err != nil || st.Packets != 0 {
		t.Errorf("empty IB: %+v %v", st, err)
	}

	// POLL_REGMEM: completes once the word changes; a stop ends the wait.
	m, h = newIB()
	ib = AppendPoll(nil, Poll{MemPoll: true, Addr: data, Value: 5, Mask: 0xffffffff, Func: PollEqual, Retry: 0xfff})
	put(m, ring, ib)
	done := make(chan error, 1)
	go func() { _, err := RunIB(IB{VA: ring, Dwords: uint32(len(ib) / 4), Memory: m, Host: h}); done <- err }()
	time.Sleep(20 * time.Millisecond)
	m.Atomic(data, 4, func(uint64) uint64 { return 5 })
	if err := <-done; err != nil {
		t.Errorf("poll: %v", err)
	}
	m.Atomic(data, 4, func(uint64) uint64 { return 0 })
	stop := make(chan struct{})
	go func() {
		_, err := RunIB(IB{VA: ring, Dwords: uint32(len(ib) / 4), Memory: m, Host: h, Stop: stop})
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	close(stop)
	if err := <-done; !errors.Is(err, ErrStopped) {
		t.Errorf("stopped poll: %v", err)
	}
}
