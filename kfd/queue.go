package kfd

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/kfdemu/kfdemu/doorbell"
	"github.com/kfdemu/kfdemu/gpu/hqd"
	"github.com/kfdemu/kfdemu/gpu/hws"
	"github.com/kfdemu/kfdemu/gpu/shader"
	"github.com/kfdemu/kfdemu/kfd/abi"
	"github.com/kfdemu/kfdemu/mmu"
	"github.com/kfdemu/kfdemu/topology"
)

// Queues: CREATE/DESTROY/UPDATE_QUEUE as kfd_chardev.c (set_queue_properties_from_user),
// kfd_process_queue_manager.c (pqm_create_queue, find_available_queue_slot), kfd_queue.c
// (kfd_queue_acquire_buffers) and kfd_device_queue_manager.c (allocate_doorbell) check them. Each
// queue is driven by an engine of the hardware model: the AQL packet processor (gpu/cp) for
// COMPUTE_AQL. The engine reaches memory through the process's GPUVM and is kicked by the
// doorbell watcher (package doorbell) when the client stores to the queue's doorbell.

const maxQueuesPerProcess = 1024 // KFD_MAX_NUM_OF_QUEUES_PER_PROCESS

const noDoorbell = ^uint32(0)

// engine is a hardware queue: the AQL processor, an SDMA ring or a PM4 ring.
type engine interface {
	Start() error
	Stop()
	Kick()
	HasWork() bool              // gpu/hqd Runner.HasWork
	SetDoorbell(d hqd.Doorbell) // gpu/hqd Runner.SetDoorbell
	Err() error
	status() string // one debugfs line: state and pointers
}

type queue struct {
	p          *Process
	pd         *pdd
	id         uint32
	args       abi.CreateQueueArgs // as created (ring size clamped), updated by UPDATE_QUEUE
	doorbellID uint32
	bell       *doorbell.Bell
	mem        *mmu.Port
	ports      *cuPorts                   // the ports of its dispatches' work-groups
	gws        atomic.Pointer[shader.GWS] // its process's GWS on the GPU while it holds it
	eng        engine
	bufs       []*bo    // BOs acquired by kfd_queue_acquire_buffers (queue_refcount)
	svmCWSR    bool     // the context-save area is in SVM ranges it holds a queue reference on
	sdmaQueue  uint32   // SDMA queues: the queue index on its engine
	sdmaHeld   bool     // the engine/queue pair is taken in Driver.sdmaUsed
	cuMask     []uint32 // SET_CU_MASK as given
	seq        uint64   // creation order (Driver.queueSeq)
	// The debugger's state of the queue, under Process.mu: exception_status and is_suspended.
	excStatus uint64
	suspended bool
	// cus are the CUs the queue's work-groups go to (the mask's bits below the node's CU count;
	// all CUs without a mask), and cuGroups counts the work-groups each CU ran.
	cus      atomic.Pointer[[]int]
	cuGroups []cuCount

	mu        sync.Mutex
	lastErr   string
	stopped   bool
	scheduled bool // in its GPU's hardware scheduler (its runlist)
	// ringUnset: UPDATE_QUEUE gave a NULL ring address or size 0 (QUEUE_IS_ACTIVE false); under
	// Process.mu like args.
	ringUnset bool
	pre       preemptState // context save of the dispatch a preemption stopped (compute queues)
	// ctl serialises stopping the queue (stop); the engine goroutine never takes it.
	ctl     sync.Mutex
	packets atomic.Uint64
	// destroying makes the next Unmap abandon the running dispatch at once (DESTROY_QUEUE and
	// teardown need no resume point).
	destroying atomic.Bool
	// hw is its runlist entry in the GPU's hardware scheduler, for the doorbell (sched.go kick).
	hw atomic.Pointer[hws.Handle]
}

// Errors of the queue manager.
var errQueueState = errors.New("kfd: queue is not in a state that allows this")

// queueTypeName is the debugfs name of a KFD_IOC_QUEUE_TYPE_*.
func queueTypeName(t uint32) string {
	switch t {
	case abi.KFD_IOC_QUEUE_TYPE_COMPUTE:
		return "pm4"
	case abi.KFD_IOC_QUEUE_TYPE_COMPUTE_AQL:
		return "aql"
	case abi.KFD_IOC_QUEUE_TYPE_SDMA:
		return "sdma"
	case abi.KFD_IOC_QUEUE_TYPE_SDMA_XGMI:
		return "sdma-xgmi"
	case abi.KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID:
		return "sdma-eng"
	}
	return fmt.Sprint(t)
}

func isSDMA(t uint32) bool {
	return t == abi.KFD_IOC_QUEUE_TYPE_SDMA || t == abi.KFD_IOC_QUEUE_TYPE_SDMA_XGMI || t == abi.KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID
}

// setQueueProperties is set_queue_properties_from_user: the checks made before the device is looked
// up. access_ok only rejects addresses above the user address space.
func setQueueProperties(a *abi.CreateQueueArgs) syscall.Errno {
	if a.QueuePercentage&0xff > abi.KFD_MAX_QUEUE_PERCENTAGE || a.QueuePriority > abi.KFD_MAX_QUEUE_PRIORITY {
		return syscall.EINVAL
	}
	for _, va := range []uint64{a.RingBaseAddress, a.ReadPointerAddress, a.WritePointerAddress, a.EOPBufferAddress, a.CtxSaveRestoreAddress} {
		if va >= userAddressLimit {
			return syscall.EFAULT
		}
	}
	if a.RingSize != 0 && a.RingSize&(a.RingSize-1) != 0 {
		return syscall.EINVAL // "Ring size must be a power of 2 or 0"
	}
	if a.RingSize < abi.KFD_MIN_QUEUE_RING_SIZE {
		a.RingSize = abi.KFD_MIN_QUEUE_RING_SIZE // "Size lower. clamped to KFD_MIN_QUEUE_RING_SIZE"
	}
	switch a.QueueType {
	case abi.KFD_IOC_QUEUE_TYPE_COMPUTE, abi.KFD_IOC_QUEUE_TYPE_COMPUTE_AQL, abi.KFD_IOC_QUEUE_TYPE_SDMA,
		abi.KFD_IOC_QUEUE_TYPE_SDMA_XGMI, abi.KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID:
	default:
		return syscall.ENOTSUP // -ENOTSUPP (524) in the kernel; ENOTSUP is the closest errno
	}
	return 0
}

// userAddressLimit is TASK_SIZE on x86-64 (access_ok).
const userAddressLimit = 1 << 47

// ctxSaveSizes are the node properties kfd_queue_ctx_save_restore_size computes for a GPU node:
// control stack, CWSR area, debugger memory and EOP buffer sizes (kfd_queue.c).
type ctxSaveSizes struct {
	ctlStack, cwsr, debugMem, eop uint32
	xcc                           uint32
}

func alignUp(v, a uint64) uint64 { return (v + a - 1) &^ (a - 1) }

func queueSizes(n interface{ Prop(topology.NodeKey) uint64 }) ctxSaveSizes {
	gfxv := n.Prop(topology.GfxTargetVersion)
	xcc := uint32(max(n.Prop(topology.NumXCC), 1))
	var s ctxSaveSizes
	s.xcc = xcc
	if gfxv < 80001 || n.Prop(topology.SIMDPerCU) == 0 {
		return s
	}
	cu := n.Prop(topology.SIMDCount) / n.Prop(topology.SIMDPerCU) / uint64(xcc)
	var waves uint64
	if gfxv < 100100 {
		sae := max(n.Prop(topology.SIMDArraysPerEngine), 1)
		waves = min(cu*40, n.Prop(topology.ArrayCount)/sae*512)
	} else {
		waves = cu * 32
	}
	vgpr := uint64(0x40000)
	switch {
	case gfxv/100*100 == 90400, gfxv == 90010, gfxv == 90008, gfxv == 90500:
		vgpr = 0x80000
	case gfxv == 110000, gfxv == 110001, gfxv == 120000, gfxv == 120001:
		vgpr = 0x60000
	}
	lds := uint64(0x10000)
	if gfxv == 90500 {
		lds = n.Prop(topology.LDSSizeInKB) << 10
	}
	wgData := alignUp(cu*(vgpr+0x4000+lds+0x1000), pageSize)
	perWave := uint64(8)
	if gfxv >= 100100 {
		perWave = 12
	}
	ctl := alignUp(40+waves*perWave+8, pageSize)
	if gfxv/10000*10000 == 100000 {
		ctl = min(ctl, 0x7000)
	}
	s.ctlStack = uint32(ctl)
	s.debugMem = uint32(alignUp(waves*32, 64))
	s.cwsr = uint32(ctl + wgData)
	switch {
	case gfxv == 80002:
		s.eop = 0x8000
	case gfxv >= 80000:
		s.eop = 4096
	}
	return s
}

// QueueBufferSizes are the sizes CREATE_QUEUE requires of a compute queue's buffers on a GPU
// (kfd_queue_ctx_save_restore_size): the EOP buffer, the control stack, the context save area
// per XCC and the whole mapping at ctx_save_restore_address (save area plus debugger memory, per
// XCC, page aligned). ok is false for an unknown gpuID.
func (d *Driver) QueueBufferSizes(gpuID uint32) (eop, ctlStack, ctxSave uint32, total uint64, ok bool) {
	for _, n := range d.sys.GPUs() {
		if n.GPUID == gpuID {
			s := queueSizes(n)
			return s.eop, s.ctlStack, s.cwsr, alignUp(uint64(s.cwsr+s.debugMem)*uint64(s.xcc), pageSize), true
		}
	}
	return 0, 0, 0, 0, false
}

// queueBuffer is kfd_queue_buffer_get: va must be the first page of a GPU mapping that, when
// size is at least a page, ends exactly size bytes later. Called with Process.mu held.
func (p *Process) queueBuffer(pd *pdd, va, size uint64) (*bo, bool) {
	page := va >> 12
	b := p.boAt(pd.gpuID, va)
	if b == nil || page != b.va>>12 {
		return nil, false
	}
	if n := size >> 12; n != 0 && page+n-1 != (b.va+b.size-1)>>12 {
		return nil, false
	}
	return b, true
}

// boAt returns the BO mapped on gpu that contains va.
func (p *Process) boAt(gpu uint32, va uint64) *bo { return p.boIdx.mappedAt(gpu, va) }

// acquireBuffers is kfd_queue_acquire_buffers: the write and read pointers, the ring and, for
// compute queues, the EOP buffer and context-save area must be GPU-mapped with the sizes the node
// requires. The BOs are referenced until the queue is destroyed (UNMAP gets EBUSY meanwhile).
func (p *Process) acquireBuffers(pd *pdd, a *abi.CreateQueueArgs) (bufs []*bo, svmCWSR bool, errno syscall.Errno) {
	get := func(va, size uint64) bool {
		b, ok := p.queueBuffer(pd, va, size)
		if ok {
			bufs = append(bufs, b)
		}
		return ok
	}
	if !get(a.WritePointerAddress, pageSize) || !get(a.ReadPointerAddress, pageSize) ||
		!get(a.RingBaseAddress, uint64(a.RingSize)) {
		p.d.log.Debug("create queue: ring or ring pointers not in mapped BOs", "tgid", p.tgid,
			"ring", hexVA(a.RingBaseAddress), "size", a.RingSize, "rptr", hexVA(a.ReadPointerAddress), "wptr", hexVA(a.WritePointerAddress))
		return nil, false, syscall.EINVAL
	}
	if a.QueueType != abi.KFD_IOC_QUEUE_TYPE_COMPUTE && a.QueueType != abi.KFD_IOC_QUEUE_TYPE_COMPUTE_AQL {
		return bufs, false, 0
	}
	sz := pd.sizes
	if a.EOPBufferAddress != 0 {
		if a.EOPBufferSize != uint64(sz.eop) || !get(a.EOPBufferAddress, a.EOPBufferSize) {
			p.d.log.Debug("create queue: EOP buffer size differs from the node's or not in a mapped BO", "tgid", p.tgid,
				"size", a.EOPBufferSize, "node", sz.eop)
			return nil, false, syscall.EINVAL
		}
	}
	// kfd_queue_acquire_buffers: "queue cwsr size ... not equal to node cwsr size", likewise the
	// control stack.
	if a.CtlStackSize != sz.ctlStack || a.CtxSaveRestoreSize != sz.cwsr {
		p.d.log.Debug("create queue: context-save sizes differ from the node's", "tgid", p.tgid,
			"ctl_stack", a.CtlStackSize, "node_ctl_stack", sz.ctlStack, "cwsr", a.CtxSaveRestoreSize, "node_cwsr", sz.cwsr)
		return nil, false, syscall.EINVAL
	}
	_, _, _, total, _ := p.d.QueueBufferSizes(pd.gpuID)
	if get(a.CtxSaveRestoreAddress, total) {
		return bufs, false, 0
	}
	// kfd_queue_buffer_svm_get: libhsakmt 6.x registers the area as an SVM range (1.11+).
	if p.svm == nil || !p.svm.QueueBufferGet(pd.gpuID, a.CtxSaveRestoreAddress, total) {
		p.d.log.Debug("create queue: context-save area not in a mapped BO or SVM range", "tgid", p.tgid,
			"va", hexVA(a.CtxSaveRestoreAddress), "size", total)
		return nil, false, syscall.EINVAL
	}
	return bufs, true, 0
}

// doorbellIdle is the value of a queue's doorbell word before the client's first store.
const doorbellIdle = ^uint64(0)

func createQueue(p *Process, c Caller, out *abi.CreateQueueArgs) syscall.Errno {
	a := *out // out is written only once the queue exists
	if errno := setQueueProperties(&a); errno != 0 {
		return errno
	}
	p.mu.Lock()
	q, errno := p.createQueueLocked(a, out)
	p.mu.Unlock()
	if errno != 0 {
		return errno
	}
	// Scheduling can preempt other queues, this process's too, whose engines may be delivering an
	// event under Process.mu: it runs without the lock.
	if err := q.schedule(); err != nil {
		p.d.log.Warn("queue could not be mapped", "tgid", p.tgid, "queue", q.id, "err", err)
		p.mu.Lock()
		delete(p.queues, q.id)
		p.mu.Unlock()
		q.stop()
		p.mu.Lock()
		q.release()
		p.mu.Unlock()
		return syscall.EINVAL
	}
	p.mu.Lock()
	p.dbgRaiseLocked(abi.KFD_EC_MASK(abi.EC_QUEUE_NEW), q.pd, q.id, nil) // kfd_ioctl_create_queue
	p.mu.Unlock()
	return 0
}

// createQueueLocked checks the arguments, acquires the buffers and the doorbell and creates the
// engine (not yet running), and fills in out. Called with Process.mu held.
func (p *Process) createQueueLocked(a abi.CreateQueueArgs, out *abi.CreateQueueArgs) (*queue, syscall.Errno) {
	pd := p.pdds[a.GPUID]
	if pd == nil {
		return nil, syscall.EINVAL
	}
	if _, errno := p.bind(a.GPUID); errno != 0 {
		return nil, syscall.ESRCH
	}
	n := 0
	for _, q := range p.queues {
		if q.pd == pd {
			n++
		}
	}
	if n >= maxQueuesPerProcess {
		return nil, syscall.ENOSPC // pqm_create_queue: qpd.queue_count >= max_queues
	}
	id := uint32(0)
	for id < maxQueuesPerProcess && p.queues[id] != nil {
		id++
	}
	if id == maxQueuesPerProcess {
		return nil, syscall.ENOMEM // find_available_queue_slot
	}
	bufs, svmCWSR, errno := p.acquireBuffers(pd, &a)
	if errno != 0 {
		return nil, errno
	}
	q := &queue{p: p, pd: pd, id: id, args: a, bufs: bufs, svmCWSR: svmCWSR, doorbellID: noDoorbell}
	for _, b := range bufs {
		b.queueRefs++
	}
	if isSDMA(a.QueueType) {
		if q.args.SDMAEngineID, q.sdmaQueue, errno = p.pickSDMA(pd, &a); errno != 0 {
			q.release()
			return nil, errno
		}
		q.sdmaHeld = true
	}
	if errno := p.doorbells(pd); errno != 0 {
		q.release()
		return nil, errno
	}
	var err error
	if isSDMA(a.QueueType) {
		q.doorbellID, err = pd.slice.AllocSDMA(q.args.SDMAEngineID, q.sdmaQueue)
	} else {
		q.doorbellID, err = pd.slice.AllocCP()
	}
	if err != nil {
		q.doorbellID = noDoorbell
		q.release()
		return nil, syscall.EBUSY // allocate_doorbell: "No doorbells available"
	}
	dbID := q.doorbellID
	// A store is seen as a change of the word, and a client's first store may well be 0 (AQL
	// packet index 0): the word starts at a value no ring pointer takes, so every store after
	// creation is a change (the packet processor, made next, takes it as the value of a doorbell
	// not yet rung). (Reads of a hardware doorbell return nothing meaningful either.)
	bell := word64(pd.doorbellMem[8*dbID:])
	bell.Store(doorbellIdle)
	q.mem = p.port(pd)
	q.ports = &cuPorts{vm: pd.vm}
	q.setCUs()
	if q.eng, err = newEngine(q); err != nil {
		p.d.log.Warn("queue creation failed", "tgid", p.tgid, "type", queueTypeName(a.QueueType), "err", err)
		q.release()
		return nil, syscall.EINVAL
	}
	a = q.args
	q.bell = p.d.bells.Watch(bell, q.kick)
	q.eng.SetDoorbell(q.bell)
	p.queues[id] = q
	p.d.mu.Lock()
	p.d.queueSeq++
	q.seq = p.d.queueSeq
	p.d.mu.Unlock()
	a.QueueID = id
	// Doorbell offset: the slice's mmap offset in dev/kfd plus the doorbell's byte offset (SOC15:
	// doorbell id * 8); libhsakmt maps "offset & ~(slice-1)" and adds "offset & (slice-1)".
	a.DoorbellOffset = uint64(pd.doorbellOff) + 8*uint64(dbID)
	*out = a
	p.d.log.Debug("queue created", "tgid", p.tgid, "queue", id, "type", queueTypeName(a.QueueType), "gpu", a.GPUID,
		"ring", hexVA(a.RingBaseAddress), "rptr", hexVA(a.ReadPointerAddress), "wptr", hexVA(a.WritePointerAddress),
		"doorbell_offset", hexVA(a.DoorbellOffset))
	return q, 0
}

// pickSDMA is allocate_sdma_queue: SDMA queues go to the lowest free queue of the PCIe engines,
// SDMA_XGMI queues to the XGMI engines (numbered after the PCIe ones), SDMA_BY_ENG_ID queues to
// the engine the caller names. It returns the engine index and the queue index on it.
func (p *Process) pickSDMA(pd *pdd, a *abi.CreateQueueArgs) (engine, index uint32, errno syscall.Errno) {
	n := pd.node
	pcie, xgmi := uint32(n.Prop(topology.NumSDMAEngines)), uint32(n.Prop(topology.NumSDMAXGMIEngines))
	perEngine := uint32(n.Prop(topology.NumSDMAQueuesPerEngine))
	var engines []uint32
	switch a.QueueType {
	case abi.KFD_IOC_QUEUE_TYPE_SDMA:
		for e := uint32(0); e < pcie; e++ {
			engines = append(engines, e)
		}
	case abi.KFD_IOC_QUEUE_TYPE_SDMA_XGMI:
		for e := pcie; e < pcie+xgmi; e++ {
			engines = append(engines, e)
		}
	case abi.KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID:
		if a.SDMAEngineID >= pcie+xgmi {
			return 0, 0, syscall.EINVAL // "Invalid SDMA engine id"
		}
		engines = []uint32{a.SDMAEngineID}
	}
	// dqm->sdma_bitmap is device-wide: queue ids go engine-minor across all processes.
	p.d.mu.Lock()
	defer p.d.mu.Unlock()
	used := p.d.sdmaUsed[pd.gpuID]
	if used == nil {
		used = map[[2]uint32]bool{}
		p.d.sdmaUsed[pd.gpuID] = used
	}
	for i := uint32(0); i < perEngine; i++ {
		for _, e := range engines {
			if k := [2]uint32{e, i}; !used[k] && int(e) < len(pd.layout.SDMAEngine) {
				used[k] = true
				return e, i, 0
			}
		}
	}
	return 0, 0, syscall.ENOMEM // "No more SDMA queue to allocate"
}

// newEngine builds the hardware queue for the queue type.
func newEngine(q *queue) (engine, error) {
	switch q.args.QueueType {
	case abi.KFD_IOC_QUEUE_TYPE_COMPUTE_AQL:
		return newAQL(q)
	case abi.KFD_IOC_QUEUE_TYPE_COMPUTE:
		return newPM4(q)
	case abi.KFD_IOC_QUEUE_TYPE_SDMA, abi.KFD_IOC_QUEUE_TYPE_SDMA_XGMI, abi.KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID:
		return newSDMA(q)
	}
	return nil, fmt.Errorf("queue type %s is not modelled yet", queueTypeName(q.args.QueueType))
}

// release undoes what createQueue acquired; the engine must be stopped.
func (q *queue) release() {
	if q.pd.gwsQueue == q {
		q.pd.gwsQueue = nil
		q.gws.Store(nil)
		q.pd.gws.Reset()
	}
	for _, b := range q.bufs {
		b.queueRefs--
	}
	if q.svmCWSR {
		_, _, _, total, _ := q.p.d.QueueBufferSizes(q.pd.gpuID)
		q.p.svm.QueueBufferPut(q.args.CtxSaveRestoreAddress, total)
		q.svmCWSR = false
	}
	q.bufs = nil
	if q.doorbellID != noDoorbell {
		q.pd.slice.Free(q.doorbellID)
	}
	if q.sdmaHeld {
		q.p.d.mu.Lock()
		delete(q.p.d.sdmaUsed[q.pd.gpuID], [2]uint32{q.args.SDMAEngineID, q.sdmaQueue})
		q.p.d.mu.Unlock()
	}
	if countsSDMAActivity(q.args.QueueType) { // destroy_queue_cpsch keeps the queue's SDMA activity
		q.pd.sdmaPast += q.sdmaActivity()
	}
	if q.mem != nil {
		q.mem.Close()
	}
	if q.ports != nil {
		q.ports.close()
	}
}

// stop stops the engine and the doorbell (DESTROY_QUEUE preempts first; teardown). It must be
// called without Process.mu: the engine may be delivering an event.
func (q *queue) stop() {
	q.ctl.Lock()
	defer q.ctl.Unlock()
	q.mu.Lock()
	if q.stopped {
		q.mu.Unlock()
		return
	}
	q.stopped = true
	scheduled := q.scheduled
	q.mu.Unlock()
	if q.bell != nil {
		q.bell.Close()
	}
	q.destroying.Store(true)
	if scheduled {
		q.p.d.scheduler(q.pd.gpuID).Remove(q)
	}
	q.eng.Stop()
	q.pre.discard() // a dispatch suspended by an earlier preemption never resumes
}

func destroyQueue(p *Process, c Caller, a *abi.DestroyQueueArgs) syscall.Errno {
	p.mu.Lock()
	q := p.queues[a.QueueID]
	if q == nil {
		p.mu.Unlock()
		return syscall.EINVAL
	}
	delete(p.queues, a.QueueID)
	p.mu.Unlock()
	q.stop() // preempt first: wait until the processor has stopped
	p.mu.Lock()
	q.release()
	p.dbgRaiseLocked(abi.KFD_EC_MASK(abi.EC_DEVICE_QUEUE_DELETE), q.pd, 0, nil) // destroy_queue_cpsch
	p.mu.Unlock()
	return 0
}

func updateQueue(p *Process, c Caller, a *abi.UpdateQueueArgs) syscall.Errno {
	if a.QueuePercentage&0xff > abi.KFD_MAX_QUEUE_PERCENTAGE || a.QueuePriority > abi.KFD_MAX_QUEUE_PRIORITY {
		return syscall.EINVAL
	}
	if a.RingBaseAddress >= userAddressLimit {
		return syscall.EFAULT
	}
	if a.RingSize != 0 && a.RingSize&(a.RingSize-1) != 0 {
		return syscall.EINVAL
	}
	p.mu.Lock()
	q := p.queues[a.QueueID]
	if q == nil {
		p.mu.Unlock()
		return syscall.EINVAL
	}
	// pqm_update_queue_properties: the ring may not move or change size (6.12+: "Cannot update
	// ring address or size").
	if (a.RingBaseAddress != 0 && a.RingBaseAddress != q.args.RingBaseAddress) ||
		(a.RingSize != 0 && a.RingSize != q.args.RingSize) {
		p.mu.Unlock()
		return syscall.EINVAL
	}
	q.args.QueuePriority, q.args.QueuePercentage = a.QueuePriority, a.QueuePercentage
	// QUEUE_IS_ACTIVE (kfd_priv.h: queue_size > 0, queue_address != 0, queue_percent > 0): an
	// update with a NULL ring address or size 0 makes the queue inactive like percentage 0; the
	// engine keeps its read position for an update that makes it active again.
	q.ringUnset = a.RingBaseAddress == 0 || a.RingSize == 0
	par := q.params()
	scheduled := q.scheduled
	p.mu.Unlock()
	if scheduled {
		// Rescheduling may preempt queues of this process: after Process.mu is released, and
		// before returning (update_queue unmaps first), so packets the client writes after an
		// update that made the queue inactive do not run.
		q.p.d.scheduler(q.pd.gpuID).Update(q, par)
	}
	return 0
}

func setCUMask(p *Process, c Caller, a *abi.SetCUMaskArgs) syscall.Errno {
	if a.NumCUMask%32 != 0 || a.NumCUMask == 0 {
		return syscall.EINVAL // "num_cu_mask must be a multiple of 32" / "CU mask cannot be 0"
	}
	n := min(a.NumCUMask, 1024) / 32 // "CU mask cannot be greater than 1024 bits"
	mask := make([]byte, 4*n)
	if err := c.ReadMemory(a.CUMaskPtr, mask); err != nil {
		return syscall.EFAULT
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	q := p.queues[a.QueueID]
	if q == nil {
		return syscall.EINVAL
	}
	q.cuMask = make([]uint32, n)
	for i := range q.cuMask {
		q.cuMask[i] = binary.LittleEndian.Uint32(mask[4*i:])
	}
	q.setCUs()
	return 0
}

func getQueueWaveState(p *Process, c Caller, a *abi.GetQueueWaveStateArgs) syscall.Errno {
	p.mu.Lock()
	q := p.queues[a.QueueID]
	p.mu.Unlock()
	if q == nil {
		return syscall.EINVAL
	}
	// get_wave_state (kfd_device_queue_manager.c): compute queues (AQL or PM4) that are not
	// active (not mapped: percentage 0, or waiting for a slot) have a saved context to report.
	if isSDMA(q.args.QueueType) || q.p.d.scheduler(q.pd.gpuID).IsMapped(q) {
		return syscall.EINVAL
	}
	// The control stack is kfdemu's own record of the context save: the resume point of a
	// dispatch preempted at a work-group boundary (dispatch id, next work-group), 16 bytes, or
	// nothing. Wave registers are not saved (waves end at work-group boundaries).
	var ctl []byte
	q.pre.mu.Lock()
	if r := q.pre.resume; r != nil {
		ctl = binary.LittleEndian.AppendUint64(ctl, r.DispatchID)
		ctl = binary.LittleEndian.AppendUint64(ctl, r.NextGroup)
	}
	q.pre.mu.Unlock()
	if len(ctl) > 0 {
		if err := c.WriteMemory(a.CtlStackAddress, ctl); err != nil {
			return syscall.EFAULT
		}
	}
	a.CtlStackUsedSize, a.SaveAreaUsedSize = uint32(len(ctl)), 0
	return 0
}

func allocQueueGWS(p *Process, c Caller, a *abi.AllocQueueGWSArgs) syscall.Errno {
	p.mu.Lock()
	defer p.mu.Unlock()
	q := p.queues[a.QueueID]
	if q == nil {
		return syscall.EINVAL
	}
	// kfd_ioctl_alloc_queue_gws + pqm_set_gws: the device must have GWS (num_gws in its
	// properties); one queue per process and device holds them; num_gws 0 releases them.
	size := uint32(q.pd.node.Prop(topology.NumGWS))
	if size == 0 {
		return syscall.ENODEV
	}
	if a.NumGWS != 0 && q.pd.gwsQueue != nil {
		return syscall.EBUSY
	}
	if a.NumGWS == 0 {
		if q.pd.gwsQueue == nil {
			return syscall.EINVAL
		}
		q.pd.gwsQueue = nil
		q.gws.Store(nil)
		q.pd.gws.Reset()
	} else {
		q.pd.gwsQueue = q
		if q.pd.gws == nil {
			q.pd.gws = shader.NewGWS(int(size))
		}
		q.gws.Store(q.pd.gws)
	}
	a.FirstGWS = 0
	return 0
}

// fail records a queue error for debugfs and the log.
func (q *queue) fail(err error) {
	q.mu.Lock()
	q.lastErr = err.Error()
	q.mu.Unlock()
	if errors.Is(err, shader.ErrInternal) { // the interpreter's fault, not the program's: worth a report
		var stack string
		var we *shader.WaveError
		if errors.As(err, &we) {
			stack = string(we.Stack)
		}
		q.p.d.log.Error("queue error: kfdemu interpreter bug", "tgid", q.p.tgid, "queue", q.id, "err", err, "stack", stack)
		return
	}
	q.p.d.log.Warn("queue error", "tgid", q.p.tgid, "queue", q.id, "type", queueTypeName(q.args.QueueType), "err", err)
}

func (d *Driver) debugQueues() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-8s %-5s %-10s %-9s %-8s %-18s %-8s %s\n", "tgid", "queue", "gpu_id", "type", "doorbell", "ring", "size", "state")
	for _, p := range d.sortedProcs() {
		p.mu.Lock()
		ids := make([]uint32, 0, len(p.queues))
		for id := range p.queues {
			ids = append(ids, id)
		}
		sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
		for _, id := range ids {
			q := p.queues[id]
			st := q.eng.status()
			q.mu.Lock()
			if q.lastErr != "" {
				st += " error: " + q.lastErr
			}
			q.mu.Unlock()
			fmt.Fprintf(&b, "%-8d %-5d %-10d %-9s %#-8x %#-18x %-8d %s\n", p.tgid, q.id, q.args.GPUID,
				queueTypeName(q.args.QueueType), q.doorbellID, q.args.RingBaseAddress, q.args.RingSize, st)
		}
		p.mu.Unlock()
	}
	return b.String()
}
