package kfd

import (
	"encoding/binary"
	"github.com/kfdemu/kfdemu/gpu/cp/pm4"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/kfdemu/kfdemu/gpu/aql"
	"github.com/kfdemu/kfdemu/gpu/hws"
	"github.com/kfdemu/kfdemu/kfd/abi"
)

// aqlAt creates an AQL queue laid out at base (queueArgs) and returns a submit function for
// barrier packets and its ring/amd_queue_t memory.
func (e *env) aqlAt(base uint64) (abi.CreateQueueArgs, func(pkt [aql.PacketSize]byte, typ uint8)) {
	e.t.Helper()
	return e.aqlAtPriority(base, 0)
}

func (e *env) aqlAtPriority(base uint64, priority uint32) (abi.CreateQueueArgs, func(pkt [aql.PacketSize]byte, typ uint8)) {
	e.t.Helper()
	a := e.queueArgs(base)
	a.QueuePriority = priority
	if errno := e.do(abi.AMDKFD_IOC_CREATE_QUEUE, &a); errno != 0 {
		e.t.Fatalf("create: %v", errno)
	}
	p := e.d.procs[e.c.tgid]
	ring, aq := p.boAt(e.gpu, base).mem, p.boAt(e.gpu, base+0x10000).mem
	bell := word64(p.pdds[e.gpu].doorbellMem[a.DoorbellOffset&(doorbellSlice-1):])
	submit := func(pkt [aql.PacketSize]byte, typ uint8) {
		idx := word64(aq[0x38:]).Load()
		slot := ring[64*(idx%64) : 64*(idx%64)+64]
		copy(slot[4:], pkt[4:])
		word32(slot).Store(uint32(aql.MakeHeader(typ, true, aql.FenceScopeSystem, aql.FenceScopeSystem)) | uint32(pkt[2])<<16)
		word64(aq[0x38:]).Store(idx + 1)
		bell.Store(idx)
	}
	return a, submit
}

func waitWord(t *testing.T, what string, w interface{ Load() uint64 }, want uint64, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for w.Load() != want {
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d, want %d", what, w.Load(), want)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// TestSchedulerOversubscribed: three processes with two AQL queues each on a GPU with two hardware
// slots; every queue's barrier completes (time slicing), and the runlist shows all six.
func TestSchedulerOversubscribed(t *testing.T) {
	e := newEnv(t, "mi210")
	e.d.SetScheduling(hws.Config{Slots: 2, Quantum: time.Millisecond})
	e.acquire(e.gpu)
	envs := []*env{e, e.peer(fakeTgid + 10), e.peer(fakeTgid + 11)}
	type sig struct {
		w interface{ Load() uint64 }
	}
	var sigs []sig
	for pi, pe := range envs {
		const sigVA = 0x900000000
		pe.alloc(sigVA, 4096)
		smem := pe.d.procs[pe.c.tgid].boAt(pe.gpu, sigVA).mem
		for qi := range 2 {
			_, submit := pe.aqlAt(0x600000000 + uint64(qi)<<28)
			s := word64(smem[64*qi+aql.SignalValueOffset:])
			s.Store(1)
			var pkt [aql.PacketSize]byte
			(&aql.BarrierPacket{CompletionSignal: sigVA + uint64(64*qi)}).Encode(pkt[:])
			submit(pkt, aql.PacketTypeBarrierAnd)
			sigs = append(sigs, sig{s})
			_ = pi
		}
	}
	for i, s := range sigs {
		waitWord(t, "barrier of queue "+string(rune('0'+i)), s.w, 0, 10*time.Second)
	}
	if st := e.d.scheduler(e.gpu).Stats(); st.Preemptions == 0 {
		t.Errorf("six queues on two slots ran without a preemption: %+v", st)
	}
	t.Log("\n" + e.d.debugRunlists())
}

// preemptKernel: one wave per work-group loops 20000 times, then stores its work-group id to
// out[group] (out is the kernarg's first pointer).
var preemptKernel = []uint32{
	0xC0060100, 0x00000000, // s_load_dwordx2 s[4:5], s[0:1], 0x0
	0xBE8A00FF, 20000, // s_mov_b32 s10, 20000
	0x808A810A, 0xBF07800A, 0xBF85FFFD, // L: s_sub_u32 s10, s10, 1; s_cmp_lg_u32 s10, 0; s_cbranch_scc1 L
	0xBF8CC07F,             // s_waitcnt lgkmcnt(0)
	0x7E000202, 0x8E038202, // v_mov_b32 v0, s2; s_lshl_b32 s3, s2, 2
	0x7E020203,             // v_mov_b32 v1, s3
	0xDC708000, 0x00040001, // global_store_dword v1, v0, s[4:5]
	0xBF810000, // s_endpgm
}

// oneCU is a beforeSubmit that limits the queue to CU 0 (SET_CU_MASK): at most its 32 wave slots
// hold work-groups of preemptKernel, so a long dispatch keeps work-groups not yet admitted, where a
// preemption saves its resume point (resident work-groups run to their end: no wave-level save).
func oneCU(t *testing.T, e *env) func(uint32) {
	return func(id uint32) {
		binary.LittleEndian.PutUint32(e.c.mem[0x2000:], 1)
		for i := 1; i < 4; i++ {
			binary.LittleEndian.PutUint32(e.c.mem[0x2000+4*i:], 0)
		}
		if errno := e.do(abi.AMDKFD_IOC_SET_CU_MASK, &abi.SetCUMaskArgs{QueueID: id, NumCUMask: 128, CUMaskPtr: e.c.base + 0x2000}); errno != 0 {
			t.Fatalf("SET_CU_MASK: %v", errno)
		}
	}
}

// runPreemptKernel dispatches preemptKernel over groups work-groups on a queue at base and
// returns the output and the wave instructions it took.
func runPreemptKernel(t *testing.T, e *env, base uint64, groups int) ([]byte, uint64) {
	t.Helper()
	_, wait := startPreemptKernel(t, e, base, groups, 0)
	return wait()
}

// beforeSubmit, when set, runs between the queue's creation and the dispatch's submission.
var beforeSubmit func(queueID uint32)

// startPreemptKernel submits the dispatch (on a queue of the given priority) and returns its
// queue and a function that waits for it.
func startPreemptKernel(t *testing.T, e *env, base uint64, groups int, priority uint32) (abi.CreateQueueArgs, func() ([]byte, uint64)) {
	t.Helper()
	const code, out, args, sig = 0xa00000000, 0xb00000000, 0xc00000000, 0xd00000000
	for _, m := range []struct {
		va    uint64
		flags uint32
	}{{code, allocGTT | abi.KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE}, {out, allocGTT | abi.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE},
		{args, allocGTT}, {sig, allocGTT | abi.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE}} {
		if e.d.procs[e.c.tgid].boAt(e.gpu, m.va) != nil {
			continue
		}
		a := abi.AllocMemoryOfGPUArgs{VAAddr: m.va, Size: 4096, GPUID: e.gpu, Flags: m.flags}
		if errno := e.do(abi.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &a); errno != 0 {
			t.Fatal(errno)
		}
		binary.LittleEndian.PutUint32(e.c.mem, e.gpu)
		if errno := e.do(abi.AMDKFD_IOC_MAP_MEMORY_TO_GPU, &abi.MapMemoryToGPUArgs{Handle: a.Handle, DeviceIDsArrayPtr: e.c.base, NDevices: 1}); errno != 0 {
			t.Fatal(errno)
		}
	}
	p := e.d.procs[e.c.tgid]
	cm := p.boAt(e.gpu, code).mem
	binary.LittleEndian.PutUint64(cm[16:], 0x100)
	binary.LittleEndian.PutUint32(cm[52:], 2<<1|1<<7)
	binary.LittleEndian.PutUint16(cm[56:], 1<<3)
	for i, w := range preemptKernel {
		binary.LittleEndian.PutUint32(cm[0x100+4*i:], w)
	}
	binary.LittleEndian.PutUint64(p.boAt(e.gpu, args).mem, out)
	om := p.boAt(e.gpu, out).mem
	clear(om)
	s := word64(p.boAt(e.gpu, sig).mem[aql.SignalValueOffset:])
	s.Store(1)
	qa, submit := e.aqlAtPriority(base, priority)
	if beforeSubmit != nil {
		beforeSubmit(qa.QueueID)
	}
	var pkt [aql.PacketSize]byte
	(&aql.KernelDispatchPacket{Setup: 1, WorkgroupSizeX: 64, WorkgroupSizeY: 1, WorkgroupSizeZ: 1, GridSizeX: uint32(64 * groups),
		GridSizeY: 1, GridSizeZ: 1, KernelObject: code, KernargAddress: args, CompletionSignal: sig}).Encode(pkt[:])
	before := e.d.stats.waveInstructions.Load()
	submit(pkt, aql.PacketTypeKernelDispatch)
	return qa, func() ([]byte, uint64) {
		waitWord(t, "dispatch completion", s, 0, 60*time.Second)
		return append([]byte(nil), om[:4*groups]...), e.d.stats.waveInstructions.Load() - before
	}
}

// TestPreemptAndResumeDispatch: a long dispatch on a GPU with one slot, shared with another busy
// queue, is preempted (its waves suspended in place) and resumed many times; its output and its
// instruction count equal an uninterrupted run's.
func TestPreemptAndResumeDispatch(t *testing.T) {
	const groups = 240
	ref := newEnv(t, "mi210")
	ref.acquire(ref.gpu)
	want, wantInsts := runPreemptKernel(t, ref, 0x600000000, groups)
	for g := range groups {
		if v := binary.LittleEndian.Uint32(want[4*g:]); v != uint32(g) {
			t.Fatalf("uninterrupted run: out[%d] = %d", g, v)
		}
	}

	e := newEnv(t, "mi210")
	e.d.SetScheduling(hws.Config{Slots: 1, Quantum: 500 * time.Microsecond, PreemptionTimeout: 10 * time.Second})
	e.acquire(e.gpu)
	busyCompetitor(e)

	beforeSubmit = oneCU(t, e)
	got, insts := runPreemptKernel(t, e, 0x600000000, groups)
	beforeSubmit = nil
	saves, resumes := contextSaves(e)
	if string(got) != string(want) || insts != wantInsts {
		t.Errorf("preempted run: %d wave instructions vs %d uninterrupted; output equal %v", insts, wantInsts, string(got) == string(want))
	}
	if saves == 0 || resumes == 0 {
		t.Errorf("the dispatch was never preempted and resumed (saves %d, resumes %d): %+v", saves, resumes, e.d.scheduler(e.gpu).Stats())
	}
	t.Logf("context saves %d, resumes %d, scheduler %+v", saves, resumes, e.d.scheduler(e.gpu).Stats())
}

// TestHungQueueReset: a kernel that never ends is preempted like any other (its waves are
// suspended in place, CWSR), so another process's queue on the same single slot runs and no queue
// is declared hung. A queue that does hang (hws calls OnHang after the preemption timeout; gpu/hws
// tests that) is reset: error state and a HW exception event for its process only.
func TestHungQueueReset(t *testing.T) {
	e := newEnv(t, "mi210")
	e.d.SetScheduling(hws.Config{Slots: 1, Quantum: time.Millisecond, PreemptionTimeout: 50 * time.Millisecond})
	e.acquire(e.gpu)
	hw := abi.CreateEventArgs{EventType: abi.KFD_IOC_EVENT_HW_EXCEPTION}
	if errno := e.do(abi.AMDKFD_IOC_CREATE_EVENT, &hw); errno != 0 {
		t.Fatal(errno)
	}
	const code = 0xa00000000
	a := abi.AllocMemoryOfGPUArgs{VAAddr: code, Size: 4096, GPUID: e.gpu, Flags: allocGTT | abi.KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE}
	e.do(abi.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &a)
	binary.LittleEndian.PutUint32(e.c.mem, e.gpu)
	e.do(abi.AMDKFD_IOC_MAP_MEMORY_TO_GPU, &abi.MapMemoryToGPUArgs{Handle: a.Handle, DeviceIDsArrayPtr: e.c.base, NDevices: 1})
	cm := e.d.procs[e.c.tgid].boAt(e.gpu, code).mem
	binary.LittleEndian.PutUint64(cm[16:], 0x100)
	binary.LittleEndian.PutUint32(cm[52:], 2<<1|1<<7)
	binary.LittleEndian.PutUint32(cm[0x100:], 0xBF82FFFF) // s_branch -1
	qa, submit := e.aqlAt(0x600000000)
	var pkt [aql.PacketSize]byte
	(&aql.KernelDispatchPacket{Setup: 1, WorkgroupSizeX: 1, WorkgroupSizeY: 1, WorkgroupSizeZ: 1, GridSizeX: 1, GridSizeY: 1,
		GridSizeZ: 1, KernelObject: code}).Encode(pkt[:])
	submit(pkt, aql.PacketTypeKernelDispatch)
	time.Sleep(10 * time.Millisecond)

	other := e.peer(fakeTgid + 12)
	const sigVA = 0x900000000
	other.alloc(sigVA, 4096)
	s := word64(other.d.procs[other.c.tgid].boAt(other.gpu, sigVA).mem[aql.SignalValueOffset:])
	s.Store(1)
	_, submitB := other.aqlAt(0x600000000)
	var bp [aql.PacketSize]byte
	(&aql.BarrierPacket{CompletionSignal: sigVA}).Encode(bp[:])
	submitB(bp, aql.PacketTypeBarrierAnd)
	waitWord(t, "the other process's barrier", s, 0, 10*time.Second)
	q := e.d.procs[e.c.tgid].queues[qa.QueueID]
	q.pre.mu.Lock()
	saves := q.pre.saves
	q.pre.mu.Unlock()
	if st := e.d.scheduler(e.gpu).Stats(); st.Hangs != 0 || saves == 0 {
		t.Errorf("never-ending kernel: scheduler %+v, context saves %d (want preemptions, no hang)", st, saves)
	}
	ohw := abi.CreateEventArgs{EventType: abi.KFD_IOC_EVENT_HW_EXCEPTION}
	if errno := other.do(abi.AMDKFD_IOC_CREATE_EVENT, &ohw); errno != 0 {
		t.Fatal(errno)
	}
	// The driver's reset of a queue the scheduler found hung: by then hws has stopped it and
	// dropped it from the runlist (the queue's memory port is its engine's alone while it runs).
	e.d.scheduler(e.gpu).Remove(q)
	q.reset()
	eventData(e.c.mem, hw.EventID)
	w := abi.WaitEventsArgs{EventsPtr: e.c.base, NumEvents: 1, Timeout: 5000}
	if errno := e.do(abi.AMDKFD_IOC_WAIT_EVENTS, &w); errno != 0 || w.WaitResult != abi.KFD_IOC_WAIT_RESULT_COMPLETE {
		t.Fatalf("hardware exception event: %v %d", errno, w.WaitResult)
	}
	q.mu.Lock()
	lastErr := q.lastErr
	q.mu.Unlock()
	if lastErr == "" {
		t.Errorf("the reset queue has no error")
	}
	eventData(other.c.mem, ohw.EventID)
	ow := abi.WaitEventsArgs{EventsPtr: other.c.base, NumEvents: 1, Timeout: 50}
	if errno := other.do(abi.AMDKFD_IOC_WAIT_EVENTS, &ow); errno != 0 || ow.WaitResult != abi.KFD_IOC_WAIT_RESULT_TIMEOUT {
		t.Errorf("the other process got a hardware exception: %v %d", errno, ow.WaitResult)
	}
}

// TestAllocQueueGWS: the device's GWS go to one queue of the process; a second queue gets EBUSY
// until the first releases them (num_gws 0); releasing twice is EINVAL; a device without GWS
// (the vega10 profile) gives ENODEV.
func TestAllocQueueGWS(t *testing.T) {
	e := newEnv(t, "mi210")
	e.acquire(e.gpu)
	q1, _ := e.aqlAt(0x600000000)
	q2, _ := e.aqlAt(0x700000000)
	for _, c := range []struct {
		q, n uint32
		want syscall.Errno
	}{{q1.QueueID, 64, 0}, {q2.QueueID, 64, syscall.EBUSY}, {q1.QueueID, 0, 0}, {q1.QueueID, 0, syscall.EINVAL},
		{q2.QueueID, 64, 0}, {99, 64, syscall.EINVAL}} {
		a := abi.AllocQueueGWSArgs{QueueID: c.q, NumGWS: c.n, FirstGWS: 7}
		if errno := e.do(abi.AMDKFD_IOC_ALLOC_QUEUE_GWS, &a); errno != c.want || errno == 0 && a.FirstGWS != 0 {
			t.Errorf("queue %d num_gws %d: %v first %d, want %v", c.q, c.n, errno, a.FirstGWS, c.want)
		}
	}
	v := newEnv(t, "vega10")
	v.acquire(v.gpu)
	qv, _ := v.aqlAt(0x600000000)
	if errno := v.do(abi.AMDKFD_IOC_ALLOC_QUEUE_GWS, &abi.AllocQueueGWSArgs{QueueID: qv.QueueID, NumGWS: 1}); errno != syscall.ENODEV {
		t.Errorf("GWS on vega10: %v, want ENODEV", errno)
	}
}

// TestEvictRestoreAndWaveState: evicting a process preempts its running dispatch (its context is
// saved: GET_QUEUE_WAVE_STATE reports the resume point), nothing runs while evicted, and after
// the restore the dispatch finishes with the output of an uninterrupted run.
//
// Work-groups run concurrently and a preemption lets the resident ones end (no wave-level save), so
// the queue's CU mask names one CU: at most its 32 wave slots hold work-groups, and the eviction
// finds work-groups not yet admitted, whose first is the resume point.
func TestEvictRestoreAndWaveState(t *testing.T) {
	const groups = 480 // about 30 M wave instructions: the dispatch is still running at the eviction
	e := newEnv(t, "mi210")
	e.acquire(e.gpu)
	beforeSubmit = oneCU(t, e)
	qa, wait := startPreemptKernel(t, e, 0x600000000, groups, 0)
	beforeSubmit = nil
	ws := abi.GetQueueWaveStateArgs{CtlStackAddress: e.c.base + 0x1000, QueueID: qa.QueueID}
	if errno := e.do(abi.AMDKFD_IOC_GET_QUEUE_WAVE_STATE, &ws); errno != syscall.EINVAL {
		t.Errorf("wave state of a running queue: %v, want EINVAL", errno)
	}
	time.Sleep(20 * time.Millisecond)
	if err := e.d.EvictQueues(e.c.tgid); err != nil {
		t.Fatal(err)
	}
	before := e.d.stats.waveInstructions.Load()
	time.Sleep(30 * time.Millisecond)
	if after := e.d.stats.waveInstructions.Load(); after != before {
		t.Errorf("%d wave instructions ran while the process was evicted", after-before)
	}
	ws = abi.GetQueueWaveStateArgs{CtlStackAddress: e.c.base + 0x1000, QueueID: qa.QueueID}
	if errno := e.do(abi.AMDKFD_IOC_GET_QUEUE_WAVE_STATE, &ws); errno != 0 || ws.CtlStackUsedSize != 16 {
		t.Fatalf("wave state of the evicted queue: %v, %d bytes of control stack", errno, ws.CtlStackUsedSize)
	}
	id, next := binary.LittleEndian.Uint64(e.c.mem[0x1000:]), binary.LittleEndian.Uint64(e.c.mem[0x1008:])
	if id != 0 || next == 0 || next >= groups {
		t.Errorf("saved resume point: dispatch %d group %d", id, next)
	}
	t.Logf("evicted at work-group %d of %d\n%s", next, groups, e.d.debugMQDs())
	if err := e.d.RestoreQueues(e.c.tgid); err != nil {
		t.Fatal(err)
	}
	out, _ := wait()
	for g := range groups {
		if v := binary.LittleEndian.Uint32(out[4*g:]); v != uint32(g) {
			t.Fatalf("out[%d] = %d after evict and restore", g, v)
		}
	}
}

// TestPriorityPreempts: on one slot, a priority-14 queue created while a priority-1 queue runs a
// long dispatch preempts it at once: its barrier completes while the long dispatch is unfinished.
func TestPriorityPreempts(t *testing.T) {
	e := newEnv(t, "mi210")
	e.d.SetScheduling(hws.Config{Slots: 1, Quantum: time.Millisecond})
	e.acquire(e.gpu)
	beforeSubmit = oneCU(t, e)
	_, wait := startPreemptKernel(t, e, 0x600000000, 480, 1)
	beforeSubmit = nil
	time.Sleep(10 * time.Millisecond)
	const sigVA = 0x900000000
	e.alloc(sigVA, 4096)
	p := e.d.procs[e.c.tgid]
	s := word64(p.boAt(e.gpu, sigVA).mem[aql.SignalValueOffset:])
	s.Store(1)
	_, submit := e.aqlAtPriority(0x700000000, 14)
	var bp [aql.PacketSize]byte
	(&aql.BarrierPacket{CompletionSignal: sigVA}).Encode(bp[:])
	submit(bp, aql.PacketTypeBarrierAnd)
	waitWord(t, "the priority-14 barrier", s, 0, 5*time.Second)
	low := word64(p.boAt(e.gpu, 0xd00000000).mem[aql.SignalValueOffset:])
	if low.Load() == 0 {
		t.Error("the low-priority dispatch finished before the high-priority barrier ran")
	}
	wait()
}

// BenchmarkPreemptionLatency: how long preempting a queue that runs a long dispatch takes (from
// the unmap request to the saved context), against the floor of one work-group's run time in
// the same run: a preemption waits for the running work-group to end.
func BenchmarkPreemptionLatency(b *testing.B) {
	t := &testing.T{}
	e := newEnv(t, "mi210")
	e.acquire(e.gpu)
	// Floor: time per work-group of an uninterrupted 32-group dispatch.
	start := time.Now()
	runPreemptKernel(t, e, 0x600000000, 32)
	perGroup := time.Since(start) / 32
	qa, wait := startPreemptKernel(t, e, 0x700000000, 4096, 0)
	q := e.d.procs[e.c.tgid].queues[qa.QueueID]
	s := e.d.scheduler(e.gpu)
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		time.Sleep(time.Millisecond)
		t0 := time.Now()
		if err := e.d.EvictQueues(e.c.tgid); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
		if s.IsMapped(q) {
			b.Fatal("still mapped after eviction")
		}
		e.d.RestoreQueues(e.c.tgid)
	}
	b.StopTimer()
	e.d.EvictQueues(e.c.tgid) // stop the long dispatch
	_ = wait
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-us")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-us")
	b.ReportMetric(float64(perGroup.Microseconds()), "workgroup-us")
}

// TestSlotsFromTopology: a GPU's hardware slots are its node's num_cp_queues (24 on MI210).
func TestSlotsFromTopology(t *testing.T) {
	e := newEnv(t, "mi210")
	if n := e.d.scheduler(e.gpu).Slots(); n != 24 {
		t.Errorf("%d slots, want num_cp_queues 24", n)
	}
}

// TestCUMask: with SET_CU_MASK naming CUs 0 and 5, the 48 work-groups of a dispatch go to those
// two CUs only, 24 each; without a mask they spread over all 104 CUs of an MI210.
func TestCUMask(t *testing.T) {
	e := newEnv(t, "mi210")
	e.acquire(e.gpu)
	var qid uint32
	beforeSubmit = func(id uint32) {
		qid = id
		binary.LittleEndian.PutUint32(e.c.mem[0x2000:], 1<<0|1<<5)
		for i := 1; i < 4; i++ {
			binary.LittleEndian.PutUint32(e.c.mem[0x2000+4*i:], 0)
		}
		if errno := e.do(abi.AMDKFD_IOC_SET_CU_MASK, &abi.SetCUMaskArgs{QueueID: id, NumCUMask: 128, CUMaskPtr: e.c.base + 0x2000}); errno != 0 {
			t.Fatalf("SET_CU_MASK: %v", errno)
		}
	}
	runPreemptKernel(t, e, 0x600000000, 48)
	beforeSubmit = nil
	q := e.d.procs[e.c.tgid].queues[qid]
	if got := q.cuUsage(); got != "0:24 5:24" {
		t.Errorf("work-groups per CU with mask {0,5}: %s", got)
	}
	if errno := e.do(abi.AMDKFD_IOC_SET_CU_MASK, &abi.SetCUMaskArgs{QueueID: qid, NumCUMask: 0, CUMaskPtr: e.c.base + 0x2000}); errno != syscall.EINVAL {
		t.Errorf("empty CU mask: %v", errno)
	}
	if n := len(*q.cus.Load()); n != 2 {
		t.Errorf("%d CUs after a refused mask, want 2", n)
	}
}

// runPM4PreemptKernel dispatches preemptKernel over groups work-groups with DISPATCH_DIRECT on a
// PM4 queue at base limited to CU 0, waits for its RELEASE_MEM fence and returns the output and
// the wave instructions it took.
func runPM4PreemptKernel(t *testing.T, e *env, base uint64, groups int) ([]byte, uint64) {
	t.Helper()
	const code, out, args = 0xa00000000, 0xb00000000, 0xc00000000
	for _, m := range []struct {
		va    uint64
		flags uint32
	}{{code, allocGTT | abi.KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE}, {out, allocGTT | abi.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE}} {
		a := abi.AllocMemoryOfGPUArgs{VAAddr: m.va, Size: 4096, GPUID: e.gpu, Flags: m.flags}
		if errno := e.do(abi.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &a); errno != 0 {
			t.Fatal(errno)
		}
		binary.LittleEndian.PutUint32(e.c.mem, e.gpu)
		if errno := e.do(abi.AMDKFD_IOC_MAP_MEMORY_TO_GPU, &abi.MapMemoryToGPUArgs{Handle: a.Handle, DeviceIDsArrayPtr: e.c.base, NDevices: 1}); errno != 0 {
			t.Fatal(errno)
		}
	}
	a := e.queueArgs(base)
	a.QueueType = abi.KFD_IOC_QUEUE_TYPE_COMPUTE
	if errno := e.do(abi.AMDKFD_IOC_CREATE_QUEUE, &a); errno != 0 {
		t.Fatalf("create: %v", errno)
	}
	oneCU(t, e)(a.QueueID)
	p := e.d.procs[e.c.tgid]
	cm := p.boAt(e.gpu, code).mem
	for i, w := range preemptKernel {
		binary.LittleEndian.PutUint32(cm[4*i:], w)
	}
	setSH := func(reg uint32, v ...uint32) []uint32 {
		return append([]uint32{pm4.Header(pm4.OpSetSHReg, uint32(len(v))), reg - pm4.SHRegStart}, v...)
	}
	// s[0:1] = USER_DATA_0..1 (the "kernarg" pointer: preemptKernel loads out from it), s2 = the
	// work-group id (RSRC2: USER_SGPR 2, TGID_X_EN).
	binary.LittleEndian.PutUint64(cm[0x800:], out)
	var pkts []uint32
	pkts = append(pkts, setSH(pm4.RegComputePgmLo, uint32(code>>8), uint32(code>>40))...)
	pkts = append(pkts, setSH(pm4.RegComputePgmRsrc1, 0, 2<<1|1<<7)...)
	pkts = append(pkts, setSH(pm4.RegComputeNumThreadX, 64, 1, 1)...)
	pkts = append(pkts, setSH(pm4.RegComputeUserData0, uint32((code+0x800)&0xffffffff), uint32((code+0x800)>>32))...)
	pkts = append(pkts, pm4.Header(pm4.OpDispatchDirect, 3), uint32(groups), 1, 1, 1)
	fence := base + 0x10200
	pkts = append(pkts, pm4.Header(pm4.OpReleaseMem, 6), pm4.EventCacheFlushAndInvTS|5<<8, 1<<29,
		uint32(fence), uint32(fence>>32), 7, 0, 0)
	ring, ptrs := p.boAt(e.gpu, base).mem, p.boAt(e.gpu, base+0x10000).mem
	for i, w := range pkts {
		binary.LittleEndian.PutUint32(ring[4*i:], w)
	}
	before := e.d.stats.waveInstructions.Load()
	word64(ptrs[0x38:]).Store(uint64(len(pkts)))
	word64(p.pdds[e.gpu].doorbellMem[a.DoorbellOffset&(doorbellSlice-1):]).Store(uint64(len(pkts)))
	deadline := time.Now().Add(60 * time.Second)
	for word32(ptrs[0x200:]).Load() != 7 {
		if time.Now().After(deadline) {
			t.Fatalf("dispatch not completed; queue: %s (%s)", p.queues[a.QueueID].eng.status(), p.queues[a.QueueID].lastErr)
		}
		time.Sleep(time.Millisecond)
	}
	return append([]byte(nil), p.boAt(e.gpu, out).mem[:4*groups]...), e.d.stats.waveInstructions.Load() - before
}

// TestPM4PreemptAndResumeDispatch: a PM4 queue is in the runlist like an AQL queue (issue 19): on
// a GPU with one HQD shared with a busy AQL queue, its long DISPATCH_DIRECT is preempted (waves
// suspended in place) and resumed; output and instruction count equal an uninterrupted run's.
func TestPM4PreemptAndResumeDispatch(t *testing.T) {
	const groups = 240
	ref := newEnv(t, "mi210")
	ref.acquire(ref.gpu)
	want, wantInsts := runPM4PreemptKernel(t, ref, 0x600000000, groups)
	for g := range groups {
		if v := binary.LittleEndian.Uint32(want[4*g:]); v != uint32(g) {
			t.Fatalf("uninterrupted run: out[%d] = %d", g, v)
		}
	}
	e := newEnv(t, "mi210")
	e.d.SetScheduling(hws.Config{Slots: 1, Quantum: 500 * time.Microsecond, PreemptionTimeout: 10 * time.Second})
	e.acquire(e.gpu)
	busyCompetitor(e)
	got, insts := runPM4PreemptKernel(t, e, 0x600000000, groups)
	saves, resumes := contextSaves(e)
	if string(got) != string(want) || insts != wantInsts {
		t.Errorf("preempted run: %d wave instructions vs %d uninterrupted; output equal %v", insts, wantInsts, string(got) == string(want))
	}
	if saves == 0 || resumes == 0 {
		t.Errorf("saves %d resumes %d: the dispatch was never preempted mid-way", saves, resumes)
	}
	t.Logf("%d saves, %d resumes", saves, resumes)
}

// BenchmarkCWSRCycle is kfdtest's KFDCWSRTest.BasicTest without its sleeps: a PM4 queue runs a
// persistent kernel of 1024 one-wave work-groups polling a flag, and each iteration deactivates
// the queue (UPDATE_QUEUE percentage 0: the waves are suspended in place) and activates it again.
func BenchmarkCWSRCycle(b *testing.B) {
	e := newEnv(b, "mi210")
	e.acquire(e.gpu)
	const base, code, flag = 0x600000000, 0xa00000000, 0xb00000000
	for _, m := range []struct {
		va    uint64
		flags uint32
	}{{code, allocGTT | abi.KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE}, {flag, allocGTT | abi.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE}} {
		a := abi.AllocMemoryOfGPUArgs{VAAddr: m.va, Size: 4096, GPUID: e.gpu, Flags: m.flags}
		if errno := e.do(abi.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &a); errno != 0 {
			b.Fatal(errno)
		}
		binary.LittleEndian.PutUint32(e.c.mem, e.gpu)
		if errno := e.do(abi.AMDKFD_IOC_MAP_MEMORY_TO_GPU, &abi.MapMemoryToGPUArgs{Handle: a.Handle, DeviceIDsArrayPtr: e.c.base, NDevices: 1}); errno != 0 {
			b.Fatal(errno)
		}
	}
	a := e.queueArgs(base)
	a.QueueType = abi.KFD_IOC_QUEUE_TYPE_COMPUTE
	if errno := e.do(abi.AMDKFD_IOC_CREATE_QUEUE, &a); errno != 0 {
		b.Fatalf("create: %v", errno)
	}
	p := e.d.procs[e.c.tgid]
	// L: s_load_dword s6, s[0:1], 0x0 glc; s_waitcnt lgkmcnt(0); s_cmp_eq_u32 s6, 0; s_cbranch_scc1 L; s_endpgm
	for i, w := range []uint32{0xC0030180, 0, 0xBF8CC07F, 0xBF068006, 0xBF85FFFB, 0xBF810000} {
		binary.LittleEndian.PutUint32(p.boAt(e.gpu, code).mem[4*i:], w)
	}
	setSH := func(reg uint32, v ...uint32) []uint32 {
		return append([]uint32{pm4.Header(pm4.OpSetSHReg, uint32(len(v))), reg - pm4.SHRegStart}, v...)
	}
	var pkts []uint32
	pkts = append(pkts, setSH(pm4.RegComputePgmLo, uint32(code>>8), uint32(code>>40))...)
	pkts = append(pkts, setSH(pm4.RegComputePgmRsrc1, 0, 2<<1)...)
	pkts = append(pkts, setSH(pm4.RegComputeNumThreadX, 1, 1, 1)...)
	pkts = append(pkts, setSH(pm4.RegComputeUserData0, uint32(flag&0xffffffff), uint32(flag>>32))...)
	pkts = append(pkts, pm4.Header(pm4.OpDispatchDirect, 3), 1024, 1, 1, 1)
	fence := base + 0x10200
	pkts = append(pkts, pm4.Header(pm4.OpReleaseMem, 6), pm4.EventCacheFlushAndInvTS|5<<8, 1<<29,
		uint32(fence), uint32(fence>>32), 7, 0, 0)
	ring, ptrs := p.boAt(e.gpu, base).mem, p.boAt(e.gpu, base+0x10000).mem
	for i, w := range pkts {
		binary.LittleEndian.PutUint32(ring[4*i:], w)
	}
	word64(ptrs[0x38:]).Store(uint64(len(pkts)))
	word64(p.pdds[e.gpu].doorbellMem[a.DoorbellOffset&(doorbellSlice-1):]).Store(uint64(len(pkts)))
	// 64 work-groups resident (the admission adds groups as resident ones run long; all 1024 would
	// take minutes with the others spinning).
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(time.Millisecond) {
		if g, _ := e.d.shaderDevice(e.gpu).Resident(); g >= 256 {
			break
		}
		if time.Now().After(deadline) {
			b.Fatal("the work-groups did not all become resident")
		}
	}
	update := func(pct uint32) {
		u := abi.UpdateQueueArgs{QueueID: a.QueueID, RingBaseAddress: base, RingSize: a.RingSize, QueuePercentage: pct}
		if errno := e.do(abi.AMDKFD_IOC_UPDATE_QUEUE, &u); errno != 0 {
			b.Fatal(errno)
		}
	}
	b.ResetTimer()
	for range b.N {
		update(0)
		update(100)
	}
	b.StopTimer()
	word32(p.boAt(e.gpu, flag).mem).Store(1)
	for deadline := time.Now().Add(60 * time.Second); word32(ptrs[0x200:]).Load() != 7; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatalf("the persistent kernel did not end; queue: %s", p.queues[a.QueueID].eng.status())
		}
	}
}

// busyCompetitor gives e's GPU an AQL queue that always wants a slot: its barrier waits on a signal
// nobody sets (an active queue holds a slot whenever it is mapped), so a GPU with one slot stays
// oversubscribed.
func busyCompetitor(e *env) {
	const block = 0xe00000000
	e.alloc(block, 4096)
	word64(e.d.procs[e.c.tgid].boAt(e.gpu, block).mem[aql.SignalValueOffset:]).Store(1)
	_, submit := e.aqlAt(0x700000000)
	var bp [aql.PacketSize]byte
	(&aql.BarrierPacket{DepSignal: [5]uint64{block}}).Encode(bp[:])
	submit(bp, aql.PacketTypeBarrierAnd)
}

// contextSaves sums the context saves and restores of e's queues.
func contextSaves(e *env) (saves, resumes uint64) {
	for _, q := range e.d.procs[e.c.tgid].queues {
		q.pre.mu.Lock()
		saves, resumes = saves+q.pre.saves, resumes+q.pre.resumes
		q.pre.mu.Unlock()
	}
	return saves, resumes
}

// TestIdleQueuesOversubscribed: six idle queues on two slots are not time-sliced (no preemption
// while they idle), and the first doorbell of an unmapped one gets it mapped and its packet run
// at once: the quantum is an hour, so no rotation can be what maps it (gpu/hws Handle.Doorbell).
func TestIdleQueuesOversubscribed(t *testing.T) {
	e := newEnv(t, "mi210")
	e.d.SetScheduling(hws.Config{Slots: 2, Quantum: time.Hour})
	e.acquire(e.gpu)
	const sigVA = 0x900000000
	e.alloc(sigVA, 4096)
	smem := e.d.procs[e.c.tgid].boAt(e.gpu, sigVA).mem
	var submits []func([aql.PacketSize]byte, uint8)
	var ids []uint32
	for qi := range 6 {
		a, submit := e.aqlAt(0x600000000 + uint64(qi)<<28)
		submits, ids = append(submits, submit), append(ids, a.QueueID)
	}
	s := e.d.scheduler(e.gpu)
	time.Sleep(20 * time.Millisecond)
	if st := s.Stats(); st.Preemptions != 0 {
		t.Fatalf("idle queues were preempted: %+v\n%s", st, e.d.debugRunlists())
	}
	p := e.d.procs[e.c.tgid]
	for qi := range 6 {
		q := p.queues[ids[qi]]
		if s.IsMapped(q) {
			continue
		}
		sig := word64(smem[64*qi+aql.SignalValueOffset:])
		sig.Store(1)
		var pkt [aql.PacketSize]byte
		(&aql.BarrierPacket{CompletionSignal: sigVA + uint64(64*qi)}).Encode(pkt[:])
		start := time.Now()
		submits[qi](pkt, aql.PacketTypeBarrierAnd)
		waitWord(t, "the barrier of an unmapped idle queue", sig, 0, 10*time.Second)
		t.Logf("queue %d: doorbell to completion %v", qi, time.Since(start))
	}
	if st := s.Stats(); st.Bells == 0 || st.Preemptions == 0 {
		t.Errorf("no unmapped queue was mapped by its doorbell: %+v\n%s", st, e.d.debugRunlists())
	}
}
