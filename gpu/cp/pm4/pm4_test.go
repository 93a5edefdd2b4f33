package pm4

import (
	"errors"
	"fmt"
	"github.com/kfdemu/kfdemu/gpu/hqd"
	"testing"
	"time"
)

func TestNewConfig(t *testing.T) {
	m, h := newMemory(), &host{}
	ok := Config{RingBase: ringVA, RingSizeBytes: ringBytes, ReadPtrVA: rptrVA, WritePtrVA: wptrVA, Memory: m, Host: h}
	tests := []struct {
		name string
		mod  func(*Config)
		want error
	}{
		{"valid", func(*Config) {}, nil},
		{"no memory", func(c *Config) { c.Memory = nil }, ErrConfig},
		{"no host", func(c *Config) { c.Host = nil }, ErrConfig},
		{"size not power of two", func(c *Config) { c.RingSizeBytes = 3000 }, ErrConfig},
		{"size below 8 bytes", func(c *Config) { c.RingSizeBytes = 4 }, ErrConfig},
		{"base not 256-byte aligned", func(c *Config) { c.RingBase = ringVA + 0x80 }, ErrConfig},
		{"rptr misaligned", func(c *Config) { c.ReadPtrVA = rptrVA + 2 }, ErrConfig},
		{"wptr misaligned", func(c *Config) { c.WritePtrVA = wptrVA + 4 }, ErrConfig},
		{"rptr unmapped", func(c *Config) { c.ReadPtrVA = holeVA }, ErrFault},
		{"wptr unmapped", func(c *Config) { c.WritePtrVA = memSize }, ErrFault},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.mod(&c)
			q, err := New(c)
			if !errors.Is(err, tc.want) || (tc.want == nil) != (q != nil) {
				t.Fatalf("New = %v, %v; want %v", q, err, tc.want)
			}
		})
	}
}

// The read index is derived the way the HQD sees the ring: pending = (wptr - rptr) mod size.
func TestNewDerivesReadIndex(t *testing.T) {
	e := newEnv(t)
	e.m.put32(rptrVA, 1000)
	e.m.put64(wptrVA, 3*1024+1010) // 10 dwords pending in a 1024-dword ring
	q := e.queue(qopt{noStart: true})
	if s := q.Status(); s.ReadIndex != 3*1024+1000 || s.ReadPtr != 1000 || s.WritePtr != 3*1024+1010 {
		t.Fatalf("status %+v", s)
	}
	e.m.put32(rptrVA, 1024)
	if _, err := New(q.Config()); !errors.Is(err, ErrConfig) {
		t.Fatalf("rptr beyond the ring: %v", err)
	}
}

func TestWriteData(t *testing.T) {
	tests := []struct {
		name  string
		pkt   []uint32
		check func(*env) error
	}{
		{"one dword", writeData(dataVA, 0xCAFEF00D), func(e *env) error {
			return expect32(e, dataVA, 0xCAFEF00D)
		}},
		{"64-bit", writeData(dataVA+8, 0x11111111, 0x22222222), func(e *env) error {
			return expect64(e, dataVA+8, 0x2222222211111111)
		}},
		{"three dwords, 4-byte aligned", writeData(dataVA+4, 1, 2, 3), func(e *env) error {
			return errors.Join(expect32(e, dataVA+4, 1), expect32(e, dataVA+8, 2), expect32(e, dataVA+12, 3))
		}},
		{"address bits 1:0 are not address bits", writeData(dataVA+3, 7), func(e *env) error {
			return expect32(e, dataVA, 7)
		}},
		{"WR_ONE_ADDR keeps the last dword", func() []uint32 {
			p := writeData(dataVA, 5, 6, 7)
			p[1] |= writeDataWrOneAddr
			return p
		}(), func(e *env) error { return errors.Join(expect32(e, dataVA, 7), expect32(e, dataVA+4, 0)) }},
		{"TC L2 destination", func() []uint32 {
			p := writeData(dataVA, 9)
			p[1] = writeDataDstTCL2 << 8
			return p
		}(), func(e *env) error { return expect32(e, dataVA, 9) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			q := e.queue(qopt{})
			q.submit(tc.pkt)
			q.drain(t)
			if err := errors.Join(q.Err(), tc.check(e)); err != nil {
				t.Fatal(err)
			}
			if got, want := e.m.u32(rptrVA), uint32(len(tc.pkt)); got != want {
				t.Fatalf("read pointer %d, want %d", got, want)
			}
		})
	}
}

// WRITE_DATA to a register (dst_sel 0) lands in the register file the dispatch reads.
func TestWriteDataRegister(t *testing.T) {
	e := newEnv(t)
	q := e.queue(qopt{})
	p := writeData(RegComputeUserData0+3, 0xABCD)
	p[1] = writeDataDstRegister << 8
	q.submit(p)
	q.drain(t)
	q.Stop()
	if v, ok := q.Register(RegComputeUserData0 + 3); !ok || v != 0xABCD || q.Err() != nil {
		t.Fatalf("register = %#x %v, err %v", v, ok, q.Err())
	}
}

func TestReleaseMem(t *testing.T) {
	const ctx = 0x1234
	tests := []struct {
		name      string
		pkt       []uint32
		mem       func(*env) error
		interrupt bool
	}{
		{"interrupt only (kfdtest Dispatch::Submit with no address)",
			releaseMem(EventCacheFlushAndInvTS, DataSelNone, IntSelInterrupt, 0, 0, ctx),
			func(*env) error { return nil }, true},
		{"32-bit data, interrupt after write confirm",
			releaseMem(EventCacheFlushAndInvTS, DataSel32, IntSelInterruptAfterWrite, dataVA, 0xDEADBEEF00000042, ctx),
			func(e *env) error { return errors.Join(expect32(e, dataVA, 0x42), expect32(e, dataVA+4, 0)) }, true},
		{"64-bit data, no interrupt (polling)",
			releaseMem(EventCacheFlushAndInvTS, DataSel64, IntSelDataAfterWrite, dataVA, 0xDEADBEEF00000042, ctx),
			func(e *env) error { return expect64(e, dataVA, 0xDEADBEEF00000042) }, false},
		{"64-bit data, address bits 2:0 dropped",
			releaseMem(EventBottomOfPipeTS, DataSel64, IntSelNone, dataVA+4, 0x0102030405060708, ctx),
			func(e *env) error { return expect64(e, dataVA, 0x0102030405060708) }, false},
		{"timestamp with interrupt",
			releaseMem(EventCacheFlushTS, DataSelTimestamp, IntSelInterruptAfterWrite, dataVA, 0, ctx),
			func(e *env) error { return expect64(e, dataVA, 1000) }, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			q := e.queue(qopt{})
			q.submit(tc.pkt)
			q.drain(t)
			_, ints, _ := e.host.snapshot()
			if err := errors.Join(q.Err(), tc.mem(e)); err != nil {
				t.Fatal(err)
			}
			if tc.interrupt != (len(ints) == 1) || (tc.interrupt && ints[0] != ctx) {
				t.Fatalf("interrupts %v, want one with context id %#x: %v", ints, ctx, tc.interrupt)
			}
			if s := q.Status(); s.Interrupts != uint64(len(ints)) || s.Packets != 1 {
				t.Fatalf("status %+v", s)
			}
		})
	}
}

// The interrupt comes after the data is written and the packet consumed: a host reading the fence
// in Interrupt sees it, and the read pointer in memory is past the packet (kfdtest
// KFDQMTest.QueueLatency places its next packets by it as soon as the event fires).
func TestReleaseMemWriteBeforeInterrupt(t *testing.T) {
	e := newEnv(t)
	var seen, rptr uint32
	q := e.queue(qopt{noStart: true})
	q.cfg.Host = interruptProbe{e.host, func() { seen, rptr = e.m.u32(dataVA), e.m.u32(rptrVA) }}
	if err := q.Start(); err != nil {
		t.Fatal(err)
	}
	pkt := releaseMem(EventCacheFlushAndInvTS, DataSel32, IntSelInterruptAfterWrite, dataVA, 77, 5)
	q.submit(pkt)
	q.drain(t)
	q.Stop()
	if seen != 77 {
		t.Fatalf("fence at interrupt time %d, want 77", seen)
	}
	if rptr != uint32(len(pkt)) {
		t.Fatalf("read pointer at interrupt time %d, want %d (past the RELEASE_MEM)", rptr, len(pkt))
	}
}

type interruptProbe struct {
	*host
	f func()
}

func (p interruptProbe) Interrupt(q *Queue, id uint32) { p.f(); p.host.Interrupt(q, id) }

// A WAIT_REG_MEM blocks the queue (no later packet runs) until another goroutine stores the
// value; polling alone finds it (no doorbell is rung).
func TestWaitRegMemSatisfiedLater(t *testing.T) {
	tests := []struct {
		name     string
		fn       uint32
		mask     uint32
		ref      uint32
		final    uint32
		nonMatch uint32
	}{
		{"equal", 3, 0xFFFFFFFF, 1, 1, 2},
		{"greater or equal, masked", 5, 0xFF, 0x10, 0xAB10, 0xFF0F},
		{"not equal", 4, 0xFFFFFFFF, 0, 9, 0},
		{"less than", 1, 0xFFFFFFFF, 5, 4, 5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.m.put32(dataVA, tc.nonMatch)
			q := e.queue(qopt{})
			q.submit(waitMem(tc.fn, dataVA, tc.ref, tc.mask), writeData(dataVA+64, 1))
			waitFor(t, "waiting", func() bool { return q.State() == hqd.StateBlocked })
			time.Sleep(2 * time.Millisecond) // several poll periods with a non-matching value
			if e.m.u32(dataVA+64) != 0 || e.m.u32(rptrVA) != 0 {
				t.Fatal("packet after an unsatisfied WAIT_REG_MEM ran")
			}
			go e.m.put32(dataVA, tc.final)
			q.drain(t)
			if err := errors.Join(q.Err(), expect32(e, dataVA+64, 1)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// Without polling, the doorbell (Kick) re-checks the wait; Stop ends a wait and Start resumes it.
func TestWaitRegMemKickAndStop(t *testing.T) {
	e := newEnv(t)
	q := e.queue(qopt{noPoll: true})
	q.submit(writeData(dataVA+32, 1), waitMem(3, dataVA, 1, 1), writeData(dataVA+64, 2))
	waitFor(t, "waiting", func() bool { return q.State() == hqd.StateBlocked })
	stopWithin(t, q.Queue)
	if s := q.Status(); s.State != hqd.StateStopped || s.ReadPtr != 5 || e.m.u32(rptrVA) != 5 {
		t.Fatalf("after Stop in a wait: %+v", s)
	}
	if err := q.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "waiting again", func() bool { return q.State() == hqd.StateBlocked })
	e.m.put32(dataVA, 1)
	q.Kick()
	q.drain(t)
	if err := errors.Join(q.Err(), expect32(e, dataVA+64, 2)); err != nil {
		t.Fatal(err)
	}
}

// A register-space wait reads the queue's register file.
func TestWaitRegMemRegister(t *testing.T) {
	e := newEnv(t)
	q := e.queue(qopt{})
	w := waitMem(3, 0, 0x55, 0xFFFFFFFF)
	w[1], w[2], w[3] = 3|waitMemSpaceRegister<<4, UConfigRegStart+0x40, 0
	q.submit(
		[]uint32{hdr(OpSetUConfigReg, 1), 0x40, 0x55},
		w, writeData(dataVA, 1))
	q.drain(t)
	if err := errors.Join(q.Err(), expect32(e, dataVA, 1)); err != nil {
		t.Fatal(err)
	}
}

func TestIndirectBuffer(t *testing.T) {
	e := newEnv(t)
	// IB2: one write. IB1: a write, IB2, a write, then a chain to IB1b. IB1b: a final write.
	ib2 := writeData(dataVA+8, 0x22)
	ib1b := writeData(dataVA+16, 0x33)
	ib1 := cat(writeData(dataVA, 0x11), ib(ib2VA, uint32(len(ib2)), false), writeData(dataVA+4, 0x12),
		ib(ibVA+0x800, uint32(len(ib1b)), true), writeData(dataVA+12, 0xBAD))
	e.m.put32(ib2VA, ib2...)
	e.m.put32(ibVA+0x800, ib1b...)
	e.m.put32(ibVA, ib1...)
	q := e.queue(qopt{})
	q.submit(ib(ibVA, uint32(len(ib1)), false), writeData(dataVA+20, 0x44))
	q.drain(t)
	err := errors.Join(q.Err(), expect32(e, dataVA, 0x11), expect32(e, dataVA+8, 0x22), expect32(e, dataVA+4, 0x12),
		expect32(e, dataVA+16, 0x33), expect32(e, dataVA+12, 0), expect32(e, dataVA+20, 0x44))
	if err != nil {
		t.Fatal(err)
	}
	if s := q.Status(); s.Packets != 2 || s.ReadPtr != 4+uint32(len(writeData(0, 0))) || s.Depth != 0 {
		t.Fatalf("status %+v", s)
	}
}

// The whole kfdtest dispatch (Dispatch::BuildIb + Submit): an IB of ACQUIRE_MEM, SET_SH_REGs,
// DISPATCH_DIRECT, a partial flush and ACQUIRE_MEM, then WRITE_DATA and RELEASE_MEM in the ring.
// The ComputeState reaching the host must hold exactly what the IB programmed.
func TestKfdtestDispatch(t *testing.T) {
	e := newEnv(t)
	var isa, scratch, arg1, arg2 uint64 = pgmVA, 0x12_3456_7800, 0x1111_2222_3333, 0x4444_5555_6666
	const rsrc1, rsrc2, eventID = 0x000c0084, 0x00001098, 42
	ibDw := cat(
		acquireMem(),
		setSH(RegComputeStartX, 0, 0, 0, 1, 1, 1, 0, 0),
		setSH(RegComputePgmLo, uint32(isa>>8), uint32(isa>>40), 0, 0, uint32(scratch>>8), uint32(scratch>>40)),
		setSH(RegComputePgmRsrc1, rsrc1, rsrc2),
		setSH(RegComputeResourceLimits, 0),
		setSH(RegComputeTmpringSize, 2<<12|4),
		setSH(RegComputeRestartX, 0, 0, 0, 0),
		setSH(RegComputeUserData0, uint32(arg1), uint32(arg1>>32), uint32(arg2), uint32(arg2>>32),
			uint32(scratch), uint32(scratch>>32), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
		dispatch(1, 1, 1, 0x21),
		partialFlush(),
		acquireMem(),
	)
	e.m.put32(ibVA, ibDw...)
	q := e.queue(qopt{})
	q.submit(ib(ibVA, uint32(len(ibDw)), false), writeData(dataVA, eventID),
		releaseMem(EventCacheFlushAndInvTS, DataSelNone, IntSelInterrupt, 0, eventID, eventID))
	q.drain(t)
	d, ints, errs := e.host.snapshot()
	if q.Err() != nil || len(errs) != 0 || len(d) != 1 {
		t.Fatalf("err %v, host errors %v, %d dispatches", q.Err(), errs, len(d))
	}
	want := ComputeState{PGM: isa, RSRC1: rsrc1, RSRC2: rsrc2, NumThread: [3]uint32{1, 1, 1},
		TmpRingSize: 2<<12 | 4, ScratchBase: scratch, Groups: [3]uint32{1, 1, 1}, Initiator: 0x21,
		UserData: [16]uint32{uint32(arg1), uint32(arg1 >> 32), uint32(arg2), uint32(arg2 >> 32), uint32(scratch), uint32(scratch >> 32)}}
	if d[0] != want {
		t.Fatalf("compute state\n got %+v\nwant %+v", d[0], want)
	}
	if len(ints) != 1 || ints[0] != eventID || e.m.u32(dataVA) != eventID {
		t.Fatalf("interrupts %v, event slot %d", ints, e.m.u32(dataVA))
	}
	if s := q.Status(); s.Dispatches != 1 || s.Packets != 3 {
		t.Fatalf("status %+v", s)
	}
}

func TestDispatchGroups(t *testing.T) {
	tests := []struct {
		name      string
		numThread [3]uint32
		dims      [3]uint32
		init      uint32
		groups    [3]uint32 // zero: no dispatch
	}{
		{"dims are work-groups", [3]uint32{64, 1, 1}, [3]uint32{10, 2, 3}, InitiatorComputeShaderEn, [3]uint32{10, 2, 3}},
		{"USE_THREAD_DIMENSIONS rounds up", [3]uint32{64, 4, 1}, [3]uint32{100, 8, 3}, InitiatorComputeShaderEn | InitiatorUseThreadDimensions, [3]uint32{2, 2, 3}},
		{"partial field ignored for the count", [3]uint32{36<<16 | 64, 1, 1}, [3]uint32{100, 1, 1}, 0x21, [3]uint32{2, 1, 1}},
		{"empty grid launches nothing", [3]uint32{64, 1, 1}, [3]uint32{0, 5, 5}, InitiatorComputeShaderEn, [3]uint32{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			q := e.queue(qopt{})
			q.submit(setSH(RegComputeNumThreadX, tc.numThread[:]...), setSH(RegComputePgmLo, pgmVA>>8, 0),
				dispatch(tc.dims[0], tc.dims[1], tc.dims[2], tc.init), writeData(dataVA, 1))
			q.drain(t)
			d, _, _ := e.host.snapshot()
			if err := errors.Join(q.Err(), expect32(e, dataVA, 1)); err != nil {
				t.Fatal(err)
			}
			if tc.groups == ([3]uint32{}) {
				if len(d) != 0 {
					t.Fatalf("empty grid dispatched: %+v", d)
				}
				return
			}
			if len(d) != 1 || d[0].Groups != tc.groups || d[0].NumThread != tc.numThread {
				t.Fatalf("dispatches %+v, want groups %v", d, tc.groups)
			}
			q.Stop()
			for i, want := range tc.dims {
				if v, _ := q.Register(RegComputeDimX + uint32(i)); v != want {
					t.Errorf("COMPUTE_DIM_%c = %d, want %d", "XYZ"[i], v, want)
				}
			}
		})
	}
}

// Packets that wrap the ring end (amdgpu style) and kfdtest's NOP padding both work, over several
// laps; the read pointer wraps at the ring size while the write pointer grows.
func TestRingWrap(t *testing.T) {
	e := newEnv(t)
	q := e.queue(qopt{ringBytes: 64 * 4})
	var want []uint32
	for i := uint32(0); i < 40; i++ {
		va := dataVA + uint64(i)*8
		switch i % 3 {
		case 0: // plain
			q.submit(writeData(va, i, ^i))
		case 1: // kfdtest: pad to the ring end with one-dword NOPs when the packet would cross it
			p := writeData(va, i, ^i)
			for q.w%q.sizeDw+uint64(len(p)) > q.sizeDw {
				q.place(hdr(OpNOP, CountOneDwordNOP))
			}
			q.submit(p)
		case 2: // type-2 fillers and a multi-dword NOP, then the packet wherever it lands
			q.submit([]uint32{0x80000000}, nop(3), writeData(va, i, ^i))
		}
		want = append(want, i, ^i)
		q.drain(t)
		if s := q.Status(); s.ReadPtr != uint32(q.w%q.sizeDw) || e.m.u32(rptrVA) != s.ReadPtr || s.ReadIndex != q.w {
			t.Fatalf("packet %d: status %+v, wptr %d", i, s, q.w)
		}
	}
	if q.w < 4*q.sizeDw {
		t.Fatalf("only %d dwords written: the ring did not wrap enough", q.w)
	}
	for i, v := range want {
		if got := e.m.u32(dataVA + uint64(i)*4); got != v {
			t.Fatalf("dword %d = %#x, want %#x", i, got, v)
		}
	}
}

// A packet whose dwords are not all published yet is not executed until they are.
func TestPartialPacket(t *testing.T) {
	e := newEnv(t)
	q := e.queue(qopt{})
	p := writeData(dataVA, 5)
	q.place(p[:3]...)
	q.publish()
	time.Sleep(time.Millisecond)
	if q.Status().ReadIndex != 0 || e.m.u32(dataVA) != 0 || q.Err() != nil {
		t.Fatal("partial packet executed")
	}
	q.place(p[3:]...)
	q.publish()
	q.drain(t)
	if err := errors.Join(q.Err(), expect32(e, dataVA, 5)); err != nil {
		t.Fatal(err)
	}
}

// Every error stops the queue with one QueueError; the read pointer stays at the failing ring
// packet (the packet before it completed).
func TestQueueErrors(t *testing.T) {
	badIB := cat(writeData(dataVA, 1), []uint32{hdr(0xFF, 0), 0}) // unknown opcode 0xFF in an IB
	tests := []struct {
		name  string
		bad   []uint32
		ib    []uint32 // placed at ibVA
		want  error
		depth int
	}{
		{"unknown opcode", []uint32{hdr(0xFF, 0), 0}, nil, ErrUnsupported, 0},
		{"type-0 packet", []uint32{0x00002000}, nil, ErrUnsupported, 0},
		{"type-1 packet", []uint32{0x40000000}, nil, ErrMalformed, 0},
		{"predicated", func() []uint32 { p := writeData(dataVA, 1); p[0] |= headerPredicate; return p }(), nil, ErrUnsupported, 0},
		{"RELEASE_MEM of the CI size", func() []uint32 {
			p := releaseMem(EventCacheFlushAndInvTS, 0, 0, 0, 0, 0)[:7]
			p[0] = hdr(OpReleaseMem, releaseMemCount-1)
			return p
		}(), nil, ErrMalformed, 0},
		{"RELEASE_MEM shader-done index", func() []uint32 {
			p := releaseMem(EventCacheFlushAndInvTS, 0, 0, 0, 0, 0)
			p[1] = p[1]&^0xF00 | 6<<8
			return p
		}(), nil, ErrUnsupported, 0},
		{"RELEASE_MEM data_sel GDS", releaseMem(EventCacheFlushAndInvTS, 5, 0, dataVA, 0, 0), nil, ErrUnsupported, 0},
		{"WRITE_DATA without data", []uint32{hdr(OpWriteData, 2), writeDataDstMemory << 8, dataVA, 0}, nil, ErrMalformed, 0},
		{"WRITE_DATA to GDS", func() []uint32 { p := writeData(dataVA, 1); p[1] = 3 << 8; return p }(), nil, ErrUnsupported, 0},
		{"WRITE_DATA into the hole", writeData(holeVA+8, 1), nil, ErrFault, 0},
		{"WRITE_DATA unmodelled register", func() []uint32 { p := writeData(0x1234, 1); p[1] = 0; return p }(), nil, ErrUnsupported, 0},
		{"SET_SH_REG past the window", setSH(SHRegEnd-1, 1, 2), nil, ErrMalformed, 0},
		{"SET_SH_REG index bits", func() []uint32 { p := setSH(RegComputePgmLo, 1); p[1] |= 2 << 28; return p }(), nil, ErrUnsupported, 0},
		{"SET_CONFIG_REG", []uint32{hdr(OpSetConfigReg, 1), 0, 0}, nil, ErrUnsupported, 0},
		{"INDIRECT_BUFFER_CONST", []uint32{hdr(OpIndirectBufferConst, 2), ibVA, 0, 4 | indirectBufferValidBit}, nil, ErrUnsupported, 0},
		{"WAIT_REG_MEM unmodelled register", func() []uint32 { p := waitMem(3, 0, 0, 0); p[1], p[2] = 3, 0x1234; return p }(), nil, ErrUnsupported, 0},
		{"WAIT_REG_MEM function 7", waitMem(7, dataVA, 0, 0), nil, ErrMalformed, 0},
		{"WAIT_REG_MEM poll in the hole", waitMem(3, holeVA, 1, 1), nil, ErrFault, 0},
		{"EVENT_WRITE sample event", []uint32{hdr(OpEventWrite, 2), 2 << 8, dataVA, 0}, nil, ErrUnsupported, 0},
		{"ACQUIRE_MEM short", func() []uint32 { p := acquireMem()[:6]; p[0] = hdr(OpAcquireMem, acquireMemCount-1); return p }(), nil, ErrMalformed, 0},
		{"DISPATCH without COMPUTE_SHADER_EN", dispatch(1, 1, 1, 0x20), nil, ErrInvalidDispatch, 0},
		{"DISPATCH with NUM_THREAD 0", dispatch(1, 1, 1, 1), nil, ErrInvalidDispatch, 0},
		{"IB in unmapped memory", ib(holeVA, 16, false), nil, ErrFault, 1},
		{"IB above mapped memory", ib(memSize, 16, false), nil, ErrFault, 1},
		{"IB with VALID clear", func() []uint32 { p := ib(ibVA, 4, false); p[3] &^= indirectBufferValidBit; return p }(), nil, ErrUnsupported, 0},
		{"packet crossing the IB end", ib(ibVA, 3, false), writeData(dataVA, 1), ErrMalformed, 1},
		{"unknown opcode in an IB", ib(ibVA, uint32(len(badIB)), false), badIB, ErrUnsupported, 1},
		{"chain in the ring", ib(ibVA, 4, true), nil, ErrMalformed, 0},
		{"chain loop", ib(ibVA, 4, false), ib(ibVA, 4, true), ErrMalformed, 1},
		{"IB nesting beyond IB2", ib(ibVA, 4, false), ib(ibVA, 4, false), ErrMalformed, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			if tc.ib != nil {
				e.m.put32(ibVA, tc.ib...)
			}
			q := e.queue(qopt{})
			good := writeData(dataVA+128, 9)
			q.submit(good, tc.bad, writeData(dataVA+132, 9))
			waitFor(t, "queue error", func() bool { return q.State() == hqd.StateError })
			_, _, errs := e.host.snapshot()
			if len(errs) != 1 || !errors.Is(errs[0], tc.want) || !errors.Is(q.Err(), tc.want) {
				t.Fatalf("host errors %v, queue error %v; want one %v", errs, q.Err(), tc.want)
			}
			var pe *PacketError
			if !errors.As(q.Err(), &pe) || pe.ReadIndex != uint64(len(good)) || pe.Depth != tc.depth {
				t.Fatalf("packet error %+v, want ring index %d depth %d", pe, len(good), tc.depth)
			}
			if s := q.Status(); s.ReadPtr != uint32(len(good)) || e.m.u32(rptrVA) != uint32(len(good)) || s.Packets != 1 {
				t.Fatalf("status %+v", s)
			}
			if e.m.u32(dataVA+128) != 9 || e.m.u32(dataVA+132) != 0 {
				t.Fatal("packets around the failing one: the first must run, the last must not")
			}
			if err := q.Start(); !errors.Is(err, hqd.ErrQueueError) {
				t.Fatalf("Start in the error state: %v", err)
			}
		})
	}
}

func TestWritePointerErrors(t *testing.T) {
	tests := []struct {
		name string
		w    uint64
	}{
		{"more than a ring ahead", 5 + ringBytes/4 + 1}, // after 5 dwords were consumed
		{"behind the read index", 2},                    // after 5 dwords were consumed
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			q := e.queue(qopt{})
			q.submit(writeData(dataVA, 1))
			q.drain(t)
			q.w = tc.w
			q.publish()
			waitFor(t, "queue error", func() bool { return q.State() == hqd.StateError })
			if !errors.Is(q.Err(), ErrWritePointer) {
				t.Fatal(q.Err())
			}
		})
	}
}

// A failing dispatch is a queue error; a dispatch aborted by Stop is not, and runs again on Start.
func TestDispatchErrorAndStop(t *testing.T) {
	e := newEnv(t)
	q := e.queue(qopt{})
	block := make(chan struct{})
	e.host.dispatch = func(q *Queue, cs *ComputeState) error {
		if cs.UserData[0] == 1 {
			return errors.New("shader fault")
		}
		select {
		case <-q.Stopping():
			return errors.New("aborted")
		case <-block:
			return nil
		}
	}
	setup := cat(setSH(RegComputeNumThreadX, 64, 1, 1), setSH(RegComputePgmLo, pgmVA>>8, 0))
	e.m.put32(ibVA, cat(setup, dispatch(1, 1, 1, 1))...)
	q.submit(ib(ibVA, uint32(len(setup)+5), false))
	waitFor(t, "dispatch running", func() bool { d, _, _ := e.host.snapshot(); return len(d) == 1 })
	if q.State() != hqd.StateActive || q.Status().Depth != 1 {
		t.Fatalf("during dispatch: %+v", q.Status())
	}
	stopWithin(t, q.Queue)
	if q.Err() != nil || q.Status().ReadIndex != 0 {
		t.Fatalf("abort by Stop: err %v, status %+v", q.Err(), q.Status())
	}
	close(block)
	if err := q.Start(); err != nil {
		t.Fatal(err)
	}
	q.drain(t)
	if d, _, _ := e.host.snapshot(); len(d) != 2 || q.Err() != nil || q.Status().Packets != 1 {
		t.Fatalf("after restart: %d dispatches, err %v", len(d), q.Err())
	}
	q.submit(setSH(RegComputeUserData0, 1), dispatch(1, 1, 1, 1))
	waitFor(t, "queue error", func() bool { return q.State() == hqd.StateError })
	if !errors.Is(q.Err(), ErrDispatchFailed) {
		t.Fatal(q.Err())
	}
}

func TestKickDoesNotAllocate(t *testing.T) {
	e := newEnv(t)
	q := e.queue(qopt{noStart: true})
	if n := testing.AllocsPerRun(100, q.Kick); n != 0 {
		t.Fatalf("Kick allocates %v times", n)
	}
}

// Executing packets (ring, IB, register writes, dispatch, fences, a satisfied wait) does not
// allocate.
func TestStepDoesNotAllocate(t *testing.T) {
	e := newEnv(t)
	q := e.queue(qopt{noStart: true})
	ibDw := cat(setSH(RegComputeNumThreadX, 64, 1, 1), setSH(RegComputePgmLo, pgmVA>>8, 0), dispatch(2, 1, 1, 1))
	e.m.put32(ibVA, ibDw...)
	e.m.put32(dataVA+64, 1)
	e.host.dispatches = make([]ComputeState, 0, 1000)
	batch := cat(ib(ibVA, uint32(len(ibDw)), false), writeData(dataVA, 1, 2), waitMem(3, dataVA+64, 1, 1),
		releaseMem(EventCacheFlushAndInvTS, DataSel64, IntSelNone, dataVA+8, 5, 0), acquireMem(), partialFlush(), nop(2))
	stop := make(chan struct{})
	allocs := testing.AllocsPerRun(50, func() {
		q.submit(batch)
		for {
			progressed, err := q.step(stop)
			if err != nil {
				t.Fatal(err)
			}
			if !progressed {
				break
			}
		}
	})
	if allocs != 0 || q.Status().ReadIndex != q.w {
		t.Fatalf("%v allocations per batch; status %+v", allocs, q.Status())
	}
}

func expect32(e *env, va uint64, want uint32) error {
	if got := e.m.u32(va); got != want {
		return &mismatch{va, uint64(got), uint64(want)}
	}
	return nil
}

func expect64(e *env, va uint64, want uint64) error {
	if got := e.m.u64(va); got != want {
		return &mismatch{va, got, want}
	}
	return nil
}

type mismatch struct{ va, got, want uint64 }

func (m *mismatch) Error() string {
	return fmt.Sprintf("memory at %#x is %#x, want %#x", m.va, m.got, m.want)
}
