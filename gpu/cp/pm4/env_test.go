package pm4

import (
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/kfdemu/kfdemu/gpu/hqd"
	"sync"
	"testing"
	"time"
)

var errUnmapped = errors.New("unmapped")

// Test address space: [0, memSize) is mapped except the page at holeVA.
const (
	memSize   = 1 << 20
	ringVA    = 0x1000
	rptrVA    = 0x40000
	wptrVA    = 0x40008
	dataVA    = 0x50000
	ibVA      = 0x60000
	ib2VA     = 0x70000
	pgmVA     = 0x80000
	holeVA    = 0xF0000
	pageSize  = 0x1000
	ringBytes = 4096
)

// memory is a flat in-memory GPU address space with one unmapped page (holeVA) and nothing
// mapped at or above memSize. One mutex makes every access atomic (race-detector clean).
type memory struct {
	mu sync.Mutex
	b  []byte
}

func newMemory() *memory { return &memory{b: make([]byte, memSize)} }

func (m *memory) check(va uint64, n int) error {
	if n < 0 || va >= memSize || uint64(n) > memSize-va {
		return fmt.Errorf("%w: %#x+%d", errUnmapped, va, n)
	}
	if n > 0 && va < holeVA+pageSize && va+uint64(n) > holeVA {
		return fmt.Errorf("%w: %#x+%d touches the hole", errUnmapped, va, n)
	}
	return nil
}

func (m *memory) Read(va uint64, p []byte) error {
	if err := m.check(va, len(p)); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	copy(p, m.b[va:])
	return nil
}

func (m *memory) Write(va uint64, p []byte) error {
	if err := m.check(va, len(p)); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	copy(m.b[va:], p)
	return nil
}

func (m *memory) Atomic(va uint64, size int, f func(uint64) uint64) (uint64, error) {
	if size != 4 && size != 8 || va%uint64(size) != 0 {
		return 0, fmt.Errorf("misaligned atomic %#x/%d", va, size)
	}
	if err := m.check(va, size); err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if f == nil { // a load
		f = func(old uint64) uint64 { return old }
	}
	if size == 4 {
		old := uint64(binary.LittleEndian.Uint32(m.b[va:]))
		binary.LittleEndian.PutUint32(m.b[va:], uint32(f(old)))
		return old, nil
	}
	old := binary.LittleEndian.Uint64(m.b[va:])
	binary.LittleEndian.PutUint64(m.b[va:], f(old))
	return old, nil
}

func (m *memory) u32(va uint64) uint32 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return binary.LittleEndian.Uint32(m.b[va:])
}

func (m *memory) u64(va uint64) uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return binary.LittleEndian.Uint64(m.b[va:])
}

func (m *memory) put32(va uint64, v ...uint32) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, x := range v {
		binary.LittleEndian.PutUint32(m.b[va+uint64(4*i):], x)
	}
}

func (m *memory) put64(va, v uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	binary.LittleEndian.PutUint64(m.b[va:], v)
}

// host records what the queue reports.
type host struct {
	mu         sync.Mutex
	dispatches []ComputeState
	interrupts []uint32
	errs       []error
	clock      uint64
	dispatch   func(q *Queue, cs *ComputeState) error // optional
}

func (h *host) Dispatch(q *Queue, cs *ComputeState) error {
	h.mu.Lock()
	h.dispatches = append(h.dispatches, *cs)
	f := h.dispatch
	h.mu.Unlock()
	if f != nil {
		return f(q, cs)
	}
	return nil
}

func (h *host) Interrupt(_ *Queue, id uint32) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.interrupts = append(h.interrupts, id)
}

func (h *host) Timestamp() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.clock += 1000
	return h.clock
}

func (h *host) QueueError(_ *Queue, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.errs = append(h.errs, err)
}

func (h *host) snapshot() (d []ComputeState, ints []uint32, errs []error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]ComputeState(nil), h.dispatches...), append([]uint32(nil), h.interrupts...), append([]error(nil), h.errs...)
}

type env struct {
	t    testing.TB
	m    *memory
	host *host
}

func newEnv(t testing.TB) *env { return &env{t: t, m: newMemory(), host: &host{}} }

// tq is a queue plus the client's side of the ring: the 64-bit write pointer it has published.
type tq struct {
	*Queue
	e      *env
	w      uint64
	sizeDw uint64
}

type qopt struct {
	ringBytes uint32
	noStart   bool
	noPoll    bool // WAIT_REG_MEM re-checks only on Kick
}

func (e *env) queue(o qopt) *tq {
	e.t.Helper()
	if o.ringBytes == 0 {
		o.ringBytes = ringBytes
	}
	q, err := New(Config{RingBase: ringVA, RingSizeBytes: o.ringBytes, ReadPtrVA: rptrVA, WritePtrVA: wptrVA,
		Memory: e.m, Host: e.host})
	if err != nil {
		e.t.Fatal(err)
	}
	if o.noPoll {
		q.SetMinPoll(time.Hour)
	}
	t := &tq{Queue: q, e: e, sizeDw: uint64(o.ringBytes) / 4}
	e.t.Cleanup(q.Stop)
	if !o.noStart {
		if err := q.Start(); err != nil {
			e.t.Fatal(err)
		}
	}
	return t
}

// place writes dwords at the client's write position (wrapping the ring) without publishing.
func (q *tq) place(dws ...uint32) {
	for _, d := range dws {
		q.e.m.put32(ringVA+(q.w%q.sizeDw)*4, d)
		q.w++
	}
}

// publish stores the write pointer and rings the doorbell (kfdtest PM4Queue::SubmitPacket).
func (q *tq) publish() {
	q.e.m.put64(wptrVA, q.w)
	q.Kick()
}

// submit places packets, publishes them and returns the write pointer to wait for.
func (q *tq) submit(pkts ...[]uint32) uint64 {
	for _, p := range pkts {
		q.place(p...)
	}
	q.publish()
	return q.w
}

// drain waits until the CP consumed everything published, or the queue failed.
func (q *tq) drain(t testing.TB) {
	t.Helper()
	// Drained: every packet retired and the read pointer published (flushRptr runs when the
	// scan ends, just after the last retire).
	waitFor(t, "ring drained", func() bool {
		s := q.Status()
		return s.ReadIndex == q.w && s.ReadPtr == uint32(q.w%q.sizeDw) || s.State == hqd.StateError
	})
}

func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Microsecond)
	}
}

func stopWithin(t testing.TB, q *Queue) {
	t.Helper()
	done := make(chan struct{})
	go func() { q.Stop(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Stop did not return")
	}
}

// Packet builders (kfdtest PM4Packet.cpp layouts; the header has the compute shader-type bit as
// kfdtest's InitPM4Header sets it).

func hdr(op uint8, count int) uint32 { return Header(op, uint32(count)) | headerCompute }

func writeData(va uint64, data ...uint32) []uint32 {
	p := []uint32{hdr(OpWriteData, len(data)+2), writeDataDstMemory<<8 | 1<<20, uint32(va), uint32(va >> 32)}
	return append(p, data...)
}

func releaseMem(eventType, dataSel, intSel uint32, va, data uint64, ctx uint32) []uint32 {
	return []uint32{hdr(OpReleaseMem, releaseMemCount), eventType | EventIndexEOP<<8 | 1<<15 | 1<<17,
		intSel<<24 | dataSel<<29, uint32(va), uint32(va >> 32), uint32(data), uint32(data >> 32), ctx}
}

func waitMem(fn uint32, va uint64, ref, mask uint32) []uint32 {
	return []uint32{hdr(OpWaitRegMem, waitRegMemCount), fn | waitMemSpaceMemory<<4, uint32(va), uint32(va >> 32), ref, mask, 4}
}

func ib(va uint64, sizeDw uint32, chain bool) []uint32 {
	ctl := sizeDw | indirectBufferValidBit | 2<<28
	if chain {
		ctl |= indirectBufferChainBit
	}
	return []uint32{hdr(OpIndirectBuffer, indirectBufferCount), uint32(va), uint32(va>>32) & 0xFFFF, ctl}
}

func setSH(reg uint32, vals ...uint32) []uint32 {
	return append([]uint32{hdr(OpSetSHReg, len(vals)), reg - SHRegStart}, vals...)
}

func dispatch(x, y, z, init uint32) []uint32 {
	return []uint32{hdr(OpDispatchDirect, dispatchDirectCount), x, y, z, init}
}

func acquireMem() []uint32 {
	return []uint32{hdr(OpAcquireMem, acquireMemCount), 0x28c00000, 0xFFFFFFFF, 0, 0, 0, 4}
}

func partialFlush() []uint32 {
	return []uint32{hdr(OpEventWrite, eventWriteShortCount), eventIndexPartialFlush<<8 | EventCSPartialFlush}
}

func nop(body int) []uint32 { return append([]uint32{hdr(OpNOP, body-1)}, make([]uint32, body)...) }

func cat(pkts ...[]uint32) []uint32 {
	var out []uint32
	for _, p := range pkts {
		out = append(out, p...)
	}
	return out
}
