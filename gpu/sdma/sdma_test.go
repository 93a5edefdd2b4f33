package sdma

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/kfdemu/kfdemu/gpu/hqd"
	"sync"
	"testing"
	"time"
)

// flat is a Memory over one byte slice at base; everything else faults.
type flat struct {
	mu   sync.Mutex
	base uint64
	b    []byte
}

var errHole = errors.New("unmapped")

func (m *flat) span(va uint64, n int) ([]byte, error) {
	if va < m.base || va-m.base+uint64(n) > uint64(len(m.b)) {
		return nil, fmt.Errorf("%w: %#x", errHole, va)
	}
	return m.b[va-m.base : va-m.base+uint64(n)], nil
}

func (m *flat) Read(va uint64, p []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, err := m.span(va, len(p))
	if err == nil {
		copy(p, s)
	}
	return err
}

func (m *flat) Write(va uint64, p []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, err := m.span(va, len(p))
	if err == nil {
		copy(s, p)
	}
	return err
}

func (m *flat) Atomic(va uint64, size int, f func(uint64) uint64) (uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, err := m.span(va, size)
	if err != nil {
		return 0, err
	}
	var o uint64
	if size == 4 {
		o = uint64(binary.LittleEndian.Uint32(s))
	} else {
		o = binary.LittleEndian.Uint64(s)
	}
	if f != nil {
		if size == 4 {
			binary.LittleEndian.PutUint32(s, uint32(f(o)))
		} else {
			binary.LittleEndian.PutUint64(s, f(o))
		}
	}
	return o, nil
}

type host struct {
	mu    sync.Mutex
	ints  []uint32
	err   error
	errCh chan error
	probe func() // optional: called first in Interrupt
}

func (h *host) Interrupt(_ *Queue, id uint32) {
	if h.probe != nil {
		h.probe()
	}
	h.mu.Lock()
	h.ints = append(h.ints, id)
	h.mu.Unlock()
}
func (h *host) Timestamp() uint64 { return 0x1234_5678_9abc }
func (h *host) QueueError(_ *Queue, err error) {
	h.mu.Lock()
	h.err = err
	h.mu.Unlock()
	h.errCh <- err
}

// Layout of the test memory.
const (
	base  = 0x10_0000_0000
	ring  = base           // 4 KiB ring
	rptr  = base + 0x1000  // 64-bit read pointer
	wptr  = base + 0x1008  // 64-bit write pointer
	data  = base + 0x2000  // scratch data, 64 KiB
	data2 = base + 0x12000 // second buffer, 64 KiB
	size  = 0x22000
)

type env struct {
	t   *testing.T
	m   *flat
	h   *host
	q   *Queue
	pos uint64 // write index (bytes)
}

func newEnv(t *testing.T) *env { return newEnvWith(t, size, false) }

// newEnvWith is newEnv with memSize bytes of memory at base and Config.WideCopyCount.
func newEnvWith(t *testing.T, memSize int, wide bool) *env {
	e := &env{t: t, m: &flat{base: base, b: make([]byte, memSize)}, h: &host{errCh: make(chan error, 1)}}
	q, err := New(Config{RingBase: ring, RingSizeBytes: 4096, ReadPtrVA: rptr, WritePtrVA: wptr, Memory: e.m, Host: e.h, WideCopyCount: wide})
	if err != nil {
		t.Fatal(err)
	}
	e.q = q
	if err := q.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(q.Stop)
	return e
}

// submit writes packets at the write index (wrapping), publishes the write pointer and kicks.
func (e *env) submit(pkts []byte) {
	for i := range pkts {
		e.m.b[(e.pos+uint64(i))%4096] = pkts[i]
	}
	e.pos += uint64(len(pkts))
	e.m.Atomic(wptr, 8, func(uint64) uint64 { return e.pos })
	e.q.Kick()
}

func (e *env) u64(va uint64) uint64 { v, _ := e.m.Atomic(va, 8, nil); return v }
func (e *env) u32(va uint64) uint32 { v, _ := e.m.Atomic(va, 4, nil); return uint32(v) }

func (e *env) waitIdle() {
	e.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for e.u64(rptr) != e.pos {
		if time.Now().After(deadline) {
			e.t.Fatalf("read pointer %d, write pointer %d; status %+v", e.u64(rptr), e.pos, e.q.Status())
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// TestTrapAfterReadPointer: a TRAP's interrupt comes after the packet is consumed: a host reading
// the read pointer in Interrupt finds it past the TRAP, and the fence before it written (kfdtest's
// SDMAQueue places its next packets by the pointer as soon as the event fires).
func TestTrapAfterReadPointer(t *testing.T) {
	e := newEnv(t)
	var rp uint64
	var fence uint32
	e.h.probe = func() { rp, fence = e.u64(rptr), e.u32(data) }
	var p []byte
	p = AppendFence(p, data, 5)
	p = AppendTrap(p, 9)
	e.submit(p)
	var ints []uint32
	for deadline := time.Now().Add(5 * time.Second); len(ints) == 0 && time.Now().Before(deadline); time.Sleep(100 * time.Microsecond) {
		e.h.mu.Lock() // the interrupt follows the read pointer's store: wait for it
		ints = append([]uint32(nil), e.h.ints...)
		e.h.mu.Unlock()
	}
	if len(ints) != 1 || ints[0] != 9 {
		t.Fatalf("interrupts %v, want [9]", ints)
	}
	if rp != uint64(len(p)) || fence != 5 {
		t.Fatalf("at the interrupt: read pointer %d, want %d (past the TRAP); fence %d, want 5", rp, len(p), fence)
	}
}

// TestROCrCopySequence is what ROCr's BlitSdma submits for hsa_amd_memory_async_copy with a
// dependency and a completion signal that has an event: poll the dependency, HDP flush, copy,
// decrement the signal, write the event id to the mailbox, trap.
func TestROCrCopySequence(t *testing.T) {
	e := newEnv(t)
	for i := 0; i < 0x8000; i++ {
		e.m.b[data-base+uint64(i)] = byte(i * 7)
	}
	const dep, sig, mailbox = data2 + 0x9000, data2 + 0xa000, data2 + 0xb000
	binary.LittleEndian.PutUint64(e.m.b[dep-base:], 1)
	binary.LittleEndian.PutUint64(e.m.b[sig-base:], 1)
	var p []byte
	p = AppendPoll(p, Poll{Addr: dep, Value: 0, Mask: ^uint32(0), Func: PollEqual, Interval: 4, Retry: RetryForever, MemPoll: true})
	p = AppendPoll(p, Poll{HDPFlush: true, Func: PollEqual, Interval: 10, Retry: RetryForever})
	p = AppendCopyLinear(p, data2, data, 0x8000)
	p = AppendAtomic(p, Atomic{Op: AtomicAdd64, Addr: sig, Src: ^uint64(0)})
	p = AppendFence(p, mailbox, 77)
	p = AppendTrap(p, 77)
	e.submit(p)
	time.Sleep(5 * time.Millisecond)
	if e.u64(rptr) != 0 || e.q.Status().State != hqd.StateBlocked {
		t.Fatalf("the dependency poll did not block: rptr %d status %+v", e.u64(rptr), e.q.Status())
	}
	e.m.Atomic(dep, 8, func(uint64) uint64 { return 0 })
	e.q.Kick()
	e.waitIdle()
	if !bytes.Equal(e.m.b[data-base:data-base+0x8000], e.m.b[data2-base:data2-base+0x8000]) {
		t.Error("copy differs")
	}
	if v := e.u64(sig); v != 0 {
		t.Errorf("signal %d", v)
	}
	if v := e.u32(mailbox); v != 77 {
		t.Errorf("mailbox %d", v)
	}
	if len(e.h.ints) != 1 || e.h.ints[0] != 77 {
		t.Errorf("interrupts %v", e.h.ints)
	}
}

func TestWriteFillTimestampAtomics(t *testing.T) {
	e := newEnv(t)
	var p []byte
	p = AppendWrite(p, data, []uint32{1, 2, 3})
	p = AppendConstFill(p, data+0x100, 0xa5, FillByte, 7)
	p = AppendConstFill(p, data+0x200, 0xdeadbeef, FillDword, 16)
	p = AppendTimestampGet(p, data+0x300, true)
	p = AppendAtomic(p, Atomic{Op: AtomicAdd32 + 0x40, Addr: data + 0x400, Src: 5})
	p = AppendAtomic(p, Atomic{Op: AtomicCmpSwap64, Addr: data + 0x408, Src: 9, Cmp: 0})
	p = AppendAtomic(p, Atomic{Op: AtomicUMax32, Addr: data + 0x410, Src: 3})
	p = AppendNOP(p, 3)
	e.submit(p)
	e.waitIdle()
	if a, b, c := e.u32(data), e.u32(data+4), e.u32(data+8); a != 1 || b != 2 || c != 3 {
		t.Errorf("write: %d %d %d", a, b, c)
	}
	if !bytes.Equal(e.m.b[data-base+0x100:data-base+0x108], []byte{0xa5, 0xa5, 0xa5, 0xa5, 0xa5, 0xa5, 0xa5, 0}) {
		t.Errorf("byte fill: % x", e.m.b[data-base+0x100:data-base+0x108])
	}
	if e.u32(data+0x200) != 0xdeadbeef || e.u32(data+0x20c) != 0xdeadbeef || e.u32(data+0x210) != 0 {
		t.Error("dword fill")
	}
	if e.u64(data+0x300) != 0x1234_5678_9abc {
		t.Errorf("timestamp %#x", e.u64(data+0x300))
	}
	if e.u32(data+0x400) != 5 || e.u64(data+0x408) != 9 || e.u32(data+0x410) != 3 {
		t.Errorf("atomics %d %d %d", e.u32(data+0x400), e.u64(data+0x408), e.u32(data+0x410))
	}
}

// TestRingWrapAndPartial: a packet crossing the ring end, and one published in two halves.
func TestRingWrapAndPartial(t *testing.T) {
	e := newEnv(t)
	e.submit(AppendNOP(nil, 1021)) // 4088 bytes: the next packet wraps
	e.waitIdle()
	p := AppendFence(nil, data, 42)
	e.submit(p[:8])
	time.Sleep(2 * time.Millisecond)
	if e.u64(rptr) != 4088 {
		t.Fatalf("a half-written packet was executed: rptr %d", e.u64(rptr))
	}
	e.submit(p[8:])
	e.waitIdle()
	if e.u32(data) != 42 {
		t.Errorf("fence %d", e.u32(data))
	}
}

func TestQueueErrors(t *testing.T) {
	for name, c := range map[string]struct {
		pkt  []byte
		want error
	}{
		"unknown opcode":    {[]byte{99, 0, 0, 0}, ErrUnsupported},
		"tiled copy":        {binary.LittleEndian.AppendUint32(nil, header(OpCopy, SubCopyTiled)), ErrUnsupported},
		"fault":             {AppendFence(nil, 0x1000, 1), ErrFault},
		"copy fault":        {AppendCopyLinear(nil, data, 0x5000, 16), ErrFault},
		"register poll":     {AppendPoll(nil, Poll{Addr: 0x1234, Func: PollEqual}), ErrUnsupported},
		"misaligned atomic": {AppendAtomic(nil, Atomic{Op: AtomicAdd64, Addr: data + 4}), ErrMalformed},
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			e.submit(c.pkt)
			select {
			case err := <-e.h.errCh:
				if !errors.Is(err, c.want) {
					t.Errorf("error %v, want %v", err, c.want)
				}
				if e.u64(rptr) != 0 {
					t.Errorf("read pointer moved past the failing packet: %d", e.u64(rptr))
				}
			case <-time.After(5 * time.Second):
				t.Fatal("no queue error")
			}
		})
	}
	e := newEnv(t)
	e.m.Atomic(wptr, 8, func(uint64) uint64 { return 8192 })
	e.q.Kick()
	if err := <-e.h.errCh; !errors.Is(err, ErrWritePtr) {
		t.Errorf("write pointer two rings ahead: %v", err)
	}
}

// TestStopDuringPoll: Stop abandons a blocked poll and Start resumes it.
func TestStopDuringPoll(t *testing.T) {
	e := newEnv(t)
	binary.LittleEndian.PutUint32(e.m.b[data-base:], 1)
	e.submit(AppendPoll(nil, Poll{Addr: data, Value: 0, Mask: ^uint32(0), Func: PollEqual, MemPoll: true, Retry: RetryForever}))
	time.Sleep(2 * time.Millisecond)
	e.q.Stop()
	e.m.Atomic(data, 4, func(uint64) uint64 { return 0 })
	if err := e.q.Start(); err != nil {
		t.Fatal(err)
	}
	e.waitIdle()
}

func FuzzRing(f *testing.F) {
	f.Add(AppendFence(AppendCopyLinear(nil, data2, data, 64), data, 1))
	f.Add(AppendAtomic(AppendConstFill(nil, data, 1, FillWord, 6), Atomic{Op: AtomicDec32, Addr: data, Src: 3}))
	f.Fuzz(func(t *testing.T, pkts []byte) {
		if len(pkts) > 4096 {
			pkts = pkts[:4096]
		}
		pkts = pkts[:len(pkts)&^3]
		m := &flat{base: base, b: make([]byte, size)}
		h := &host{errCh: make(chan error, 1)}
		copy(m.b, pkts)
		binary.LittleEndian.PutUint64(m.b[wptr-base:], uint64(len(pkts)))
		q, err := New(Config{RingBase: ring, RingSizeBytes: 4096, ReadPtrVA: rptr, WritePtrVA: wptr, Memory: m, Host: h})
		if err != nil {
			t.Fatal(err)
		}
		q.Start()
		deadline := time.Now().Add(20 * time.Millisecond)
		for time.Now().Before(deadline) && q.Err() == nil && q.Status().ReadIndex != uint64(len(pkts)) && q.Status().State != hqd.StateBlocked {
			time.Sleep(100 * time.Microsecond)
		}
		q.Stop()
	})
}

// TestCopySubWindow: COPY_LINEAR_SUB_WINDOW (ROCr's hipMemcpy2D/3D path) copies exactly the
// rectangle, for 4-byte and 1-byte elements, with offsets and 3-D slices; every byte outside it
// stays untouched (the reference is computed byte by byte here, independently of the engine).
func TestCopySubWindow(t *testing.T) {
	for _, es := range []uint32{0, 2, 4} {
		e := newEnv(t)
		for i := 0; i < 0x10000; i++ {
			e.m.b[data-base+uint64(i)] = byte(i*7 + 1)
		}
		w := SubWindow{Element: es, Src: data, Dst: data2,
			SrcX: 3, SrcY: 2, SrcZ: 1, DstX: 1, DstY: 1, DstZ: 0,
			SrcPitch: 40, SrcSlicePitch: 40 * 12, DstPitch: 24, DstSlicePitch: 24 * 8,
			Width: 10, Height: 5, Depth: 3}
		want := make([]byte, 0x10000)
		el := 1 << es
		for z := 0; z < int(w.Depth); z++ {
			for y := 0; y < int(w.Height); y++ {
				for x := 0; x < int(w.Width); x++ {
					s := (int(w.SrcX) + x + (int(w.SrcY)+y)*int(w.SrcPitch) + (int(w.SrcZ)+z)*int(w.SrcSlicePitch)) * el
					d := (int(w.DstX) + x + (int(w.DstY)+y)*int(w.DstPitch) + (int(w.DstZ)+z)*int(w.DstSlicePitch)) * el
					copy(want[d:d+el], e.m.b[data-base+uint64(s):data-base+uint64(s+el)])
				}
			}
		}
		e.submit(AppendCopySubWindow(nil, w))
		e.waitIdle()
		if got := e.m.b[data2-base : data2-base+0x10000]; !bytes.Equal(got, want) {
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("element size %d: byte %#x is %#x, want %#x", el, i, got[i], want[i])
				}
			}
		}
	}
}

// TestWideCopyCount: ROCr 6.2.4 sends gfx90a copies of up to 2^30 - 1 bytes in one COPY_LINEAR
// (count_ext, 30 bits). With WideCopyCount the whole count is copied; without it the count is the
// field's low 22 bits (SDMA 4.0), as the engines ROCr sends at most 0x3fffe0 to.
func TestWideCopyCount(t *testing.T) {
	const n = 1<<22 + 0x1000 // 4 MiB + 4 KiB: bit 22 of "bytes - 1" is set
	const src, dst = base + 0x2000, base + 0x2000 + n + 0x1000
	for _, wide := range []bool{true, false} {
		e := newEnvWith(t, 0x2000+2*n+0x2000, wide)
		for i := 0; i < n; i++ {
			e.m.b[src-base+uint64(i)] = byte(i*13 + i>>12)
		}
		// The packet by hand: AppendCopyLinear encodes 22 bits.
		var p []byte
		p = appendDwords(p, header(OpCopy, SubCopyLinear), n-1, 0, lo32(src), hi32(src), lo32(dst), hi32(dst))
		e.submit(p)
		e.waitIdle()
		copied := n
		if !wide {
			copied = (n-1)&(MaxCopyBytes-1) + 1 // 0x1000 bytes
		}
		if !bytes.Equal(e.m.b[dst-base:dst-base+uint64(copied)], e.m.b[src-base:src-base+uint64(copied)]) {
			t.Errorf("wide %v: the first %#x bytes differ", wide, copied)
		}
		if rest := e.m.b[dst-base+uint64(copied) : dst-base+n]; !bytes.Equal(rest, make([]byte, len(rest))) {
			t.Errorf("wide %v: bytes beyond %#x were written", wide, copied)
		}
	}
}
