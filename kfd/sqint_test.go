package kfd

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/kfdemu/kfdemu/gpu/aql"
	"github.com/kfdemu/kfdemu/kfd/abi"
)

// sendmsgKernel stores kernarg word 3 to the address in kernarg words 0-1 (an event's slot in the
// signal page), then raises s_sendmsg(MSG_INTERRUPT) with M0 = kernarg word 2.
var sendmsgKernel = []uint32{
	0xC00A0100, 0x00000000, // s_load_dwordx4 s[4:7], s[0:1], 0x0
	0xBF8CC07F,             // s_waitcnt lgkmcnt(0)
	0x7E000207,             // v_mov_b32 v0, s7
	0x7E020280,             // v_mov_b32 v1, 0
	0x7E040280,             // v_mov_b32 v2, 0
	0xDC748000, 0x00040002, // global_store_dwordx2 v2, v[0:1], s[4:5]
	0xBF8C0F70, // s_waitcnt vmcnt(0)
	0xBEFC0006, // s_mov_b32 m0, s6
	0xBF900001, // s_sendmsg sendmsg(MSG_INTERRUPT)
	0xBF810000, // s_endpgm
}

// TestSendmsgInterruptSignalsEvent: a wave's s_sendmsg(MSG_INTERRUPT) reaches
// kfd_signal_event_interrupt with M0[23:0]: the event whose slot the kernel wrote and whose id is in
// M0 is set and its slot acknowledged, another event is not; with an id whose slot was not written,
// the exhaustive search sets the event whose slot was.
func TestSendmsgInterruptSignalsEvent(t *testing.T) {
	e := newEnv(t, "mi210")
	e.acquire(e.gpu)
	var evA, evB uint32
	const pageVA, code, args, sig = 0x400000000, 0xa00000000, 0xc00000000, 0xd00000000
	for _, m := range []struct {
		va    uint64
		size  uint64
		flags uint32
	}{{pageVA, signalSlots * 8, allocGTT | abi.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE}, {code, 4096, allocGTT | abi.KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE},
		{args, 4096, allocGTT}, {sig, 4096, allocGTT | abi.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE}} {
		a := abi.AllocMemoryOfGPUArgs{VAAddr: m.va, Size: m.size, GPUID: e.gpu, Flags: m.flags}
		if errno := e.do(abi.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &a); errno != 0 {
			t.Fatal(errno)
		}
		binary.LittleEndian.PutUint32(e.c.mem, e.gpu)
		if errno := e.do(abi.AMDKFD_IOC_MAP_MEMORY_TO_GPU, &abi.MapMemoryToGPUArgs{Handle: a.Handle, DeviceIDsArrayPtr: e.c.base, NDevices: 1}); errno != 0 {
			t.Fatal(errno)
		}
		if m.va == pageVA { // the first CREATE_EVENT passes the event page (kfd_kmap_event_page)
			for i, id := range []*uint32{&evA, &evB} {
				ce := abi.CreateEventArgs{EventType: abi.KFD_IOC_EVENT_SIGNAL, AutoReset: 1}
				if i == 0 {
					ce.EventPageOffset = a.Handle
				}
				if errno := e.do(abi.AMDKFD_IOC_CREATE_EVENT, &ce); errno != 0 {
					t.Fatal(errno)
				}
				*id = ce.EventID
			}
		}
	}
	p := e.d.procs[e.c.tgid]
	cm := p.boAt(e.gpu, code).mem
	binary.LittleEndian.PutUint64(cm[16:], 0x100)
	binary.LittleEndian.PutUint32(cm[52:], 2<<1|1<<7)
	binary.LittleEndian.PutUint16(cm[56:], 1<<3)
	for i, w := range sendmsgKernel {
		binary.LittleEndian.PutUint32(cm[0x100+4*i:], w)
	}
	_, submit := e.aqlAt(0x600000000)
	s := word64(p.boAt(e.gpu, sig).mem[aql.SignalValueOffset:])
	slot := func(id uint32) uint64 { return word64(p.evt.page[8*id:]).Load() }
	poll := func(id uint32) uint32 {
		eventData(e.c.mem, id)
		w := abi.WaitEventsArgs{EventsPtr: e.c.base, NumEvents: 1, Timeout: 0}
		if errno := e.do(abi.AMDKFD_IOC_WAIT_EVENTS, &w); errno != 0 {
			t.Fatal(errno)
		}
		return w.WaitResult
	}
	run := func(slotOf, m0 uint32) {
		am := p.boAt(e.gpu, args).mem
		binary.LittleEndian.PutUint64(am[0:], pageVA+8*uint64(slotOf))
		binary.LittleEndian.PutUint32(am[8:], m0)
		binary.LittleEndian.PutUint32(am[12:], slotOf) // the value ROCr's device code writes: the event id
		s.Store(1)
		var pkt [aql.PacketSize]byte
		(&aql.KernelDispatchPacket{Setup: 1, WorkgroupSizeX: 1, WorkgroupSizeY: 1, WorkgroupSizeZ: 1, GridSizeX: 1, GridSizeY: 1,
			GridSizeZ: 1, KernelObject: code, KernargAddress: args, CompletionSignal: sig}).Encode(pkt[:])
		submit(pkt, aql.PacketTypeKernelDispatch)
		waitWord(t, "dispatch completion", s, 0, 10*time.Second)
	}

	// M0 names event B, whose slot the kernel wrote: B is set and acknowledged, A is not.
	run(evB, evB)
	if r := poll(evB); r != abi.KFD_IOC_WAIT_RESULT_COMPLETE {
		t.Errorf("event B after its interrupt: wait result %d", r)
	}
	if r := poll(evA); r != abi.KFD_IOC_WAIT_RESULT_TIMEOUT {
		t.Errorf("event A set by B's interrupt: wait result %d", r)
	}
	if v := slot(evB); v != slotUnsignalled {
		t.Errorf("B's slot not acknowledged: %#x", v)
	}
	// M0 names A (slot not written) while the kernel wrote B's slot: the exhaustive search sets B.
	run(evB, evA|0x5a000000) // bits above the 24 the interrupt carries are dropped
	if r := poll(evB); r != abi.KFD_IOC_WAIT_RESULT_COMPLETE {
		t.Errorf("event B through the exhaustive search: wait result %d", r)
	}
	if r := poll(evA); r != abi.KFD_IOC_WAIT_RESULT_TIMEOUT {
		t.Errorf("event A set although its slot was never written: wait result %d", r)
	}
}
