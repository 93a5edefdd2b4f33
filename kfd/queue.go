package kfd

import (
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/kfdemu/kfdemu/gpu/hsa"
	"github.com/kfdemu/kfdemu/kfd/abi"
)

// Queues: CREATE/DESTROY/UPDATE_QUEUE as kfd_chardev.c and kfd_process_queue_manager.c check them,
// and an AQL packet processor per queue (the CP firmware's part): it follows the doorbell, consumes
// packets between the read and write indices through the process's GPU mappings, honours the
// barrier bit, processes barrier-AND/OR packets and completion signals (amd_signal_t, event
// mailbox). A kernel dispatch needs the shader model, which is not connected yet: it puts the queue
// in the error state and raises a hardware exception event, never a fake success.

const maxQueuesPerProcess = 1024 // KFD_MAX_NUM_OF_QUEUES_PER_PROCESS

type queueState int32

const (
	qActive queueState = iota
	qError
	qStopped
)

type queue struct {
	p        *Process
	id       uint32
	gpu      uint32
	typ      uint32
	ring     uint64 // GPU VA of the ring
	size     uint64 // ring size in bytes
	rptr     uint64 // VA of the 64-bit read index (amd_queue_t.read_dispatch_id)
	wptr     uint64 // VA of the 64-bit write index
	doorbell []byte // the 8-byte doorbell in the process's doorbell slice
	prio     uint32
	pct      uint32
	state    atomic.Int32
	read     uint64 // packets consumed
	lastErr  string
	stopCh   chan struct{}
	done     chan struct{}
	once     sync.Once
	packets  atomic.Uint64
}

func (q *queue) uses(b *bo) bool {
	return q.ring >= b.va && q.ring < b.va+b.size
}

func createQueue(p *Process, c Caller, arg []byte) syscall.Errno {
	var a abi.CreateQueueArgs
	decode(arg, &a)
	// set_queue_properties_from_user
	if a.QueuePercentage&0xff > abi.KFD_MAX_QUEUE_PERCENTAGE || a.QueuePriority > abi.KFD_MAX_QUEUE_PRIORITY {
		return syscall.EINVAL
	}
	if a.RingSize != 0 && a.RingSize&(a.RingSize-1) != 0 {
		return syscall.EINVAL
	}
	if a.RingSize < abi.KFD_MIN_QUEUE_RING_SIZE {
		return syscall.EINVAL
	}
	switch a.QueueType {
	case abi.KFD_IOC_QUEUE_TYPE_COMPUTE_AQL:
	case abi.KFD_IOC_QUEUE_TYPE_COMPUTE, abi.KFD_IOC_QUEUE_TYPE_SDMA, abi.KFD_IOC_QUEUE_TYPE_SDMA_XGMI,
		abi.KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID:
		// Valid types whose engines (PM4, SDMA) are not modelled yet.
		p.d.log.Warn("queue type not modelled", "tgid", p.tgid, "type", a.QueueType)
		return syscall.EINVAL
	default:
		return syscall.ENOTSUP // -ENOTSUPP (524) in the kernel; ENOTSUP is the closest errno
	}
	if a.RingBaseAddress == 0 || a.ReadPointerAddress == 0 || a.WritePointerAddress == 0 ||
		a.ReadPointerAddress&7 != 0 || a.WritePointerAddress&7 != 0 {
		return syscall.EFAULT
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	pd := p.pdds[a.GPUID]
	if pd == nil {
		return syscall.EINVAL
	}
	if _, errno := p.bind(a.GPUID); errno != 0 {
		return syscall.ESRCH
	}
	if len(p.queues) >= maxQueuesPerProcess {
		return syscall.ENOSPC
	}
	// kfd_queue_acquire_buffers: the ring and the read/write indices must be GPU-mapped.
	if _, _, ok := p.gpuAccess(a.GPUID, a.RingBaseAddress, uint64(a.RingSize)); !ok {
		return syscall.EINVAL
	}
	for _, va := range []uint64{a.ReadPointerAddress, a.WritePointerAddress} {
		if _, _, ok := p.gpuAccess(a.GPUID, va, 8); !ok {
			if !p.readableUser(va) {
				return syscall.EINVAL
			}
		}
	}
	if errno := p.doorbells(pd); errno != 0 {
		return errno
	}
	id := uint32(0)
	for id < maxQueuesPerProcess && p.queues[id] != nil {
		id++
	}
	q := &queue{p: p, id: id, gpu: a.GPUID, typ: a.QueueType, ring: a.RingBaseAddress, size: uint64(a.RingSize),
		rptr: a.ReadPointerAddress, wptr: a.WritePointerAddress, doorbell: pd.doorbellMem[8*id : 8*id+8],
		prio: a.QueuePriority, pct: a.QueuePercentage, stopCh: make(chan struct{}), done: make(chan struct{})}
	p.queues[id] = q
	a.QueueID = id
	// Doorbell offset: the slice's mmap offset in dev/kfd plus the doorbell's byte offset (SOC15:
	// queue id * 8); libhsakmt maps "offset & ~(slice-1)" and adds "offset & (slice-1)".
	a.DoorbellOffset = uint64(pd.doorbellOff) + 8*uint64(id)
	encode(arg, a)
	go q.run()
	return 0
}

// readableUser reports whether a userptr-backed address (amd_queue_t in system memory registered
// as userptr) is reachable; userptr BOs are found by gpuAccess already, so this is the fallback
// for indices placed in memory the GPU reaches through an SVM/userptr range.
func (p *Process) readableUser(va uint64) bool {
	var b [8]byte
	return p.readUser(va, b[:])
}

func destroyQueue(p *Process, c Caller, arg []byte) syscall.Errno {
	var a abi.DestroyQueueArgs
	decode(arg, &a)
	p.mu.Lock()
	q := p.queues[a.QueueID]
	if q == nil {
		p.mu.Unlock()
		return syscall.EINVAL
	}
	delete(p.queues, a.QueueID)
	p.mu.Unlock()
	q.stop() // preempt first: wait until the processor has stopped
	return 0
}

func updateQueue(p *Process, c Caller, arg []byte) syscall.Errno {
	var a abi.UpdateQueueArgs
	decode(arg, &a)
	if a.QueuePercentage&0xff > abi.KFD_MAX_QUEUE_PERCENTAGE || a.QueuePriority > abi.KFD_MAX_QUEUE_PRIORITY {
		return syscall.EINVAL
	}
	if a.RingSize != 0 && (a.RingSize&(a.RingSize-1) != 0 || a.RingSize < abi.KFD_MIN_QUEUE_RING_SIZE) {
		return syscall.EINVAL
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	q := p.queues[a.QueueID]
	if q == nil {
		return syscall.EINVAL
	}
	q.prio, q.pct = a.QueuePriority, a.QueuePercentage
	return 0
}

func setCUMask(p *Process, c Caller, arg []byte) syscall.Errno {
	var a abi.SetCUMaskArgs
	decode(arg, &a)
	if a.NumCUMask == 0 || a.NumCUMask%32 != 0 {
		return syscall.EINVAL // "CU mask cannot be 0" / "num_cu_mask must be a multiple of 32"
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.queues[a.QueueID] == nil {
		return syscall.EINVAL
	}
	return 0
}

func getQueueWaveState(p *Process, c Caller, arg []byte) syscall.Errno {
	var a abi.GetQueueWaveStateArgs
	decode(arg, &a)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.queues[a.QueueID] == nil {
		return syscall.EINVAL
	}
	return syscall.EINVAL // only CWSR-enabled compute queues of a preempted dispatch have wave state
}

func allocQueueGWS(p *Process, c Caller, arg []byte) syscall.Errno {
	var a abi.AllocQueueGWSArgs
	decode(arg, &a)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.queues[a.QueueID] == nil {
		return syscall.EINVAL
	}
	return syscall.ENODEV // GWS is not modelled (kfd: -ENODEV when the device has no GWS)
}

// stop stops the packet processor and waits for it (DESTROY_QUEUE, teardown).
func (q *queue) stop() {
	q.once.Do(func() { close(q.stopCh) })
	<-q.done
	q.state.Store(int32(qStopped))
}

// run is the packet processor. It polls the doorbell: every 50 µs while packets flow, backing off
// to 10 ms after 20 ms without activity, so an idle queue costs ~100 wake-ups per second.
func (q *queue) run() {
	defer close(q.done)
	var last uint64
	idleSince := time.Now()
	for {
		bell := word64(q.doorbell).Load()
		if bell != last || q.pending() {
			last = bell
			q.process()
			idleSince = time.Now()
		}
		wait := 50 * time.Microsecond
		if time.Since(idleSince) > 20*time.Millisecond {
			wait = 10 * time.Millisecond
		}
		select {
		case <-q.stopCh:
			return
		case <-time.After(wait):
		}
	}
}

// pending reports unread packets (read index behind write index) on an active queue.
func (q *queue) pending() bool {
	if queueState(q.state.Load()) != qActive {
		return false
	}
	w, ok := q.load64(q.wptr)
	return ok && w > q.read
}

func (q *queue) load64(va uint64) (uint64, bool) {
	p := q.p
	p.mu.Lock()
	mem, user, ok := p.gpuAccess(q.gpu, va, 8)
	p.mu.Unlock()
	if mem != nil && va&7 == 0 {
		return word64(mem).Load(), true
	}
	var b [8]byte
	if (ok && user != 0 && p.readUser(user, b[:])) || (!ok && p.readUser(va, b[:])) {
		return binary.LittleEndian.Uint64(b[:]), true
	}
	return 0, false
}

func (q *queue) store64(va, v uint64) bool {
	p := q.p
	p.mu.Lock()
	mem, user, ok := p.gpuAccess(q.gpu, va, 8)
	p.mu.Unlock()
	if mem != nil && va&7 == 0 {
		word64(mem).Store(v)
		return true
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	if ok && user != 0 {
		return p.writeUser(user, b[:])
	}
	return !ok && p.writeUser(va, b[:])
}

// add64 atomically adds to a signal value. Signals in VRAM/GTT are real atomics on shared memory;
// in userptr memory the daemon can only read-modify-write through process_vm (docs/memory.md).
func (q *queue) add64(va uint64, d int64) (int64, bool) {
	p := q.p
	p.mu.Lock()
	mem, _, _ := p.gpuAccess(q.gpu, va, 8)
	p.mu.Unlock()
	if mem != nil && va&7 == 0 {
		return int64(word64(mem).Add(uint64(d))), true
	}
	v, ok := q.load64(va)
	if !ok {
		return 0, false
	}
	nv := int64(v) + d
	return nv, q.store64(va, uint64(nv))
}

func (q *queue) fail(format string, args ...any) {
	q.lastErr = fmt.Sprintf(format, args...)
	q.state.Store(int32(qError))
	p := q.p
	p.d.log.Warn("queue error", "tgid", p.tgid, "queue", q.id, "err", q.lastErr)
	p.mu.Lock()
	p.raiseHWExceptionLocked(q.gpu)
	p.mu.Unlock()
}

// process consumes packets from the read index up to the write index.
func (q *queue) process() {
	for queueState(q.state.Load()) == qActive {
		w, ok := q.load64(q.wptr)
		if !ok {
			q.fail("write index at %#x not readable", q.wptr)
			return
		}
		if q.read >= w {
			return
		}
		slot := q.ring + (q.read*hsa.PacketSize)%q.size
		var pkt [hsa.PacketSize]byte
		if !q.readGPU(slot, pkt[:]) {
			q.fail("ring slot at %#x not readable", slot)
			return
		}
		hdr := binary.LittleEndian.Uint16(pkt[:])
		switch hsa.PacketType(hdr) {
		case hsa.PacketTypeInvalid:
			return // the producer has not published this packet yet: wait for the next kick
		case hsa.PacketTypeBarrierAnd, hsa.PacketTypeBarrierOr:
			if !q.barrier(pkt[:], hsa.PacketType(hdr) == hsa.PacketTypeBarrierAnd) {
				return // dependencies not met: re-check on the next poll
			}
		case hsa.PacketTypeKernelDispatch:
			q.fail("kernel dispatch at read index %d: the shader model is not connected to queues", q.read)
			return
		default:
			q.fail("unsupported AQL packet type %d at read index %d", hsa.PacketType(hdr), q.read)
			return
		}
		if !q.complete(binary.LittleEndian.Uint64(pkt[56:])) {
			return
		}
		// Release the slot (header -> INVALID) before publishing the new read index.
		q.writeHeaderInvalid(slot)
		q.read++
		q.store64(q.rptr, q.read)
		q.packets.Add(1)
	}
}

func (q *queue) readGPU(va uint64, b []byte) bool {
	p := q.p
	p.mu.Lock()
	mem, user, ok := p.gpuAccess(q.gpu, va, uint64(len(b)))
	if mem != nil {
		copy(b, mem)
	}
	p.mu.Unlock()
	if mem != nil {
		// The header word was published with a release store: read it atomically last.
		binary.LittleEndian.PutUint32(b, word32(mem).Load())
		return true
	}
	return ok && user != 0 && p.readUser(user, b)
}

func (q *queue) writeHeaderInvalid(slot uint64) {
	p := q.p
	p.mu.Lock()
	mem, user, ok := p.gpuAccess(q.gpu, slot, 4)
	p.mu.Unlock()
	if mem != nil {
		v := word32(mem).Load()
		word32(mem).Store(v&^0xffff | hsa.PacketTypeInvalid)
		return
	}
	if ok && user != 0 {
		var b [2]byte
		binary.LittleEndian.PutUint16(b[:], hsa.PacketTypeInvalid)
		p.writeUser(user, b[:])
	}
}

// barrier evaluates a barrier-AND (all dependencies at 0) or barrier-OR (any at 0) packet; null
// signal handles are ignored (HSA: an OR with no dependencies is satisfied).
func (q *queue) barrier(pkt []byte, and bool) bool {
	any, none := false, true
	for i := 0; i < 5; i++ {
		h := binary.LittleEndian.Uint64(pkt[8+8*i:])
		if h == 0 {
			continue
		}
		none = false
		v, ok := q.load64(h + hsa.SignalValueOffset)
		if !ok {
			q.fail("dependency signal %#x not readable", h)
			return false
		}
		if v == 0 {
			any = true
		} else if and {
			return false
		}
	}
	return and || any || none
}

// complete decrements the completion signal and raises its event, if any.
func (q *queue) complete(sig uint64) bool {
	if sig == 0 {
		return true
	}
	if _, ok := q.add64(sig+hsa.SignalValueOffset, -1); !ok {
		q.fail("completion signal %#x not writable", sig)
		return false
	}
	mailbox, ok1 := q.load64(sig + hsa.SignalMailboxOffset)
	id, ok2 := q.load64(sig + hsa.SignalEventIDOffset)
	if ok1 && ok2 && mailbox != 0 {
		q.store64(mailbox, uint64(uint32(id)))
		q.p.SignalInterrupt(uint32(id))
	}
	return true
}

func (d *Driver) debugQueues() string {
	out := fmt.Sprintf("%-8s %-5s %-10s %-6s %-18s %-8s %-10s %-8s %s\n", "tgid", "queue", "gpu_id", "type", "ring", "size", "read", "packets", "state")
	for _, p := range d.sortedProcs() {
		p.mu.Lock()
		for id := uint32(0); id < maxQueuesPerProcess; id++ {
			q := p.queues[id]
			if q == nil {
				continue
			}
			st := [...]string{"active", "error", "stopped"}[q.state.Load()]
			if q.lastErr != "" {
				st += ": " + q.lastErr
			}
			out += fmt.Sprintf("%-8d %-5d %-10d %-6s %#-18x %-8d %-10d %-8d %s\n", p.tgid, q.id, q.gpu, "aql",
				q.ring, q.size, q.read, q.packets.Load(), st)
		}
		p.mu.Unlock()
	}
	return out
}
