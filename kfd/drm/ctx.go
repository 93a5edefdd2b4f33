package drm

import (
	"reflect"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/kfdemu/kfdemu/kfd/abi"
)

// Contexts, their scheduler entities and fences (amdgpu_ctx.c, amdgpu_cs.c's wait ioctls, Linux
// 6.10).

const (
	maxContexts = 4096 // AMDGPU_VM_MAX_NUM_CTX: context ids are 1..4095
	schedJobs   = 32   // amdgpu_sched_jobs: fences an entity remembers
	gangSize    = 4    // AMDGPU_CS_GANG_SIZE
	maxEntities = 4    // AMDGPU_MAX_ENTITY_NUM
)

// numEntities is amdgpu_ctx_num_entities: the rings a context has per IP type.
var numEntities = [abi.AMDGPU_HW_IP_NUM]uint32{1, 4, 2, 1, 1, 1, 1, 1, 1}

// fence is a job's finished fence (drm_sched_fence.finished): done is closed when the job ended,
// err (0, or the errno amdgpu would set on the fence) written before.
type fence struct {
	seq  uint64
	done chan struct{}
	err  syscall.Errno
}

func newFence(seq uint64) *fence { return &fence{seq: seq, done: make(chan struct{})} }

func (fc *fence) signal(errno syscall.Errno) { fc.err = errno; close(fc.done) }

func (fc *fence) signaled() bool {
	select {
	case <-fc.done:
		return true
	default:
		return false
	}
}

// entity is an amdgpu_ctx_entity: a context's queue of jobs on one ring of an IP, with the
// sequence numbers CS returns and the last schedJobs fences.
type entity struct {
	ip, ring uint32
	rq       bool // the device runs jobs of this IP (drm_sched_entity.rq != NULL)

	mu      sync.Mutex
	seq     uint64 // sequence of the next job; starts at 1
	fences  [schedJobs]*fence
	queue   []*job
	running bool   // a goroutine drains queue
	last    *fence // the last job taken for execution (entity->last_scheduled)
}

// err is drm_sched_entity_error: the error of the last job taken for execution.
func (e *entity) err() syscall.Errno {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.last != nil && e.last.signaled() {
		return e.last.err
	}
	return 0
}

// fence is amdgpu_ctx_get_fence: EINVAL for a sequence not submitted yet, nil (signaled) for one
// older than the entity remembers; ^0 is the latest.
func (e *entity) fence(seq uint64) (*fence, syscall.Errno) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if seq == ^uint64(0) {
		seq = e.seq - 1
	}
	if seq >= e.seq {
		return nil, syscall.EINVAL
	}
	if seq+schedJobs < e.seq {
		return nil, 0
	}
	return e.fences[seq&(schedJobs-1)], 0
}

// gpuCtx is an amdgpu_ctx.
type gpuCtx struct {
	id       uint32
	priority int32
	guilty   atomic.Bool

	// under File.mu
	entities     [abi.AMDGPU_HW_IP_NUM][maxEntities]*entity
	resetCounter uint32 // the file's reset count at creation (QUERY_STATE2's RESET flag)
	resetQuery   uint32 // ... at the last QUERY_STATE
}

// entity is amdgpu_ctx_get_entity: the ring must exist for the IP type (instance 0 only), and an
// entity whose last job failed returns that job's error.
func (f *File) entity(c *gpuCtx, ip, inst, ring uint32) (*entity, syscall.Errno) {
	if ip >= abi.AMDGPU_HW_IP_NUM || inst != 0 || ring >= numEntities[ip] {
		return nil, syscall.EINVAL
	}
	f.mu.Lock()
	e := c.entities[ip][ring]
	if e == nil {
		e = &entity{ip: ip, ring: ring, seq: 1, rq: f.dev.runs(ip)}
		c.entities[ip][ring] = e
	}
	f.mu.Unlock()
	if errno := e.err(); errno != 0 {
		return nil, errno
	}
	return e, 0
}

// runs reports whether the device has rings for IP type ip (amdgpu's entity gets a run queue): SDMA
// IBs run on gpu/sdma, COMPUTE IBs through the Backend's PM4 engine. The GFX IP has no rings on the
// compute-only parts (HW_IP_INFO's available_rings is 0) and the multimedia IPs are not modelled.
func (d *Device) runs(ip uint32) bool {
	switch ip {
	case abi.AMDGPU_HW_IP_DMA:
		return d.info.NumSDMA > 0
	case abi.AMDGPU_HW_IP_COMPUTE:
		return d.info.NumComputeRings > 0
	case abi.AMDGPU_HW_IP_GFX:
		return false // the model has no graphics pipeline, whatever NumGfxRings says
	}
	return false
}

// context returns context id with f.mu held.
func (f *File) context(id uint32) *gpuCtx {
	if !f.usable() {
		return nil
	}
	c, _ := f.ctxs.get(id)
	return c
}

func (f *File) lookupCtx(id uint32) *gpuCtx {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.context(id)
}

// ctxIoctl is amdgpu_ctx_ioctl. An invalid priority counts as NORMAL ("garbage in the priority
// field"); one above NORMAL needs CAP_SYS_NICE (a render client is never DRM master).
func (f *File) ctxIoctl(m Memory, a *abi.DRMAmdgpuCtx) syscall.Errno {
	id, prio := a.CtxID, a.Priority
	switch prio {
	case abi.AMDGPU_CTX_PRIORITY_VERY_LOW, abi.AMDGPU_CTX_PRIORITY_LOW, abi.AMDGPU_CTX_PRIORITY_NORMAL,
		abi.AMDGPU_CTX_PRIORITY_HIGH, abi.AMDGPU_CTX_PRIORITY_VERY_HIGH:
	default:
		prio = abi.AMDGPU_CTX_PRIORITY_NORMAL
	}
	op := a.Op
	if op == abi.AMDGPU_CTX_OP_SET_STABLE_PSTATE {
		if a.Flags&^abi.AMDGPU_CTX_STABLE_PSTATE_FLAGS_MASK != 0 || a.Flags > abi.AMDGPU_CTX_STABLE_PSTATE_PEAK {
			return f.reject(m, syscall.EINVAL, "CTX: invalid stable pstate", "flags", a.Flags)
		}
	} else if a.Flags != 0 && op >= abi.AMDGPU_CTX_OP_ALLOC_CTX && op <= abi.AMDGPU_CTX_OP_GET_STABLE_PSTATE {
		return f.reject(m, syscall.EINVAL, "CTX: flags", "op", op, "flags", a.Flags)
	}
	switch op {
	case abi.AMDGPU_CTX_OP_ALLOC_CTX:
		errno := f.ctxAlloc(m, prio, &id)
		a.Op = id // out.alloc.ctx_id overlays in.op
		return errno
	case abi.AMDGPU_CTX_OP_FREE_CTX:
		f.mu.Lock()
		var ok bool
		if f.usable() {
			_, ok = f.ctxs.remove(id)
		}
		f.mu.Unlock()
		if !ok {
			return f.reject(m, syscall.EINVAL, "CTX: free of an unknown context", "ctx", id)
		}
		// Jobs already queued run to their end (their entities drain); nothing new can be queued.
		return 0
	case abi.AMDGPU_CTX_OP_QUERY_STATE, abi.AMDGPU_CTX_OP_QUERY_STATE2:
		f.mu.Lock()
		c := f.context(id)
		var out abi.DRMAmdgpuCtxOutState
		if c != nil {
			if op == abi.AMDGPU_CTX_OP_QUERY_STATE {
				// amdgpu_ctx_query: "reset since the last call", never told apart.
				if c.resetQuery != f.resets {
					out.ResetStatus = abi.AMDGPU_CTX_UNKNOWN_RESET
				}
				c.resetQuery = f.resets
			} else {
				if c.resetCounter != f.resets {
					out.Flags |= abi.AMDGPU_CTX_QUERY2_FLAGS_RESET
				}
				if c.guilty.Load() {
					out.Flags |= abi.AMDGPU_CTX_QUERY2_FLAGS_GUILTY
				}
			}
		}
		f.mu.Unlock()
		if c == nil {
			return f.reject(m, syscall.EINVAL, "CTX: query of an unknown context", "ctx", id)
		}
		asOut(a, out)
		return 0
	case abi.AMDGPU_CTX_OP_GET_STABLE_PSTATE, abi.AMDGPU_CTX_OP_SET_STABLE_PSTATE:
		if f.lookupCtx(id) == nil {
			return f.reject(m, syscall.EINVAL, "CTX: pstate of an unknown context", "ctx", id)
		}
		// Power management is not modelled (dpm disabled): forcing a level does nothing, so the
		// device stays at AUTO, which reads back as STABLE_PSTATE_NONE.
		if op == abi.AMDGPU_CTX_OP_GET_STABLE_PSTATE {
			a.Op = abi.AMDGPU_CTX_STABLE_PSTATE_NONE // out.pstate.flags overlays in.op
		}
		return 0
	}
	return f.reject(m, syscall.EINVAL, "CTX: unknown op", "op", op)
}

// ctxAlloc is amdgpu_ctx_alloc: the lowest free id of 1..4095 (ENOSPC when all are taken), then the
// priority check (EACCES, id 0).
func (f *File) ctxAlloc(m Memory, prio int32, id *uint32) syscall.Errno {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.usable() {
		return f.reject(m, syscall.ENODEV, "CTX: file closed")
	}
	c := &gpuCtx{priority: prio, resetCounter: f.resets, resetQuery: f.resets}
	n, ok := f.ctxs.alloc(c)
	if !ok {
		return f.reject(m, syscall.ENOSPC, "CTX: no free context id")
	}
	if prio > abi.AMDGPU_CTX_PRIORITY_NORMAL && !capable(m, capSysNice) {
		f.ctxs.remove(n)
		*id = 0
		return f.reject(m, syscall.EACCES, "CTX: priority above NORMAL without CAP_SYS_NICE", "priority", prio)
	}
	c.id, *id = n, n
	return 0
}

// waitCS is amdgpu_cs_wait_ioctl: status 1 if the submission is still running at the absolute
// timeout; a fence that signalled with an error fails the ioctl with that error.
func (f *File) waitCS(m Memory, a *abi.DRMAmdgpuWaitCS) syscall.Errno {
	c := f.lookupCtx(a.CtxID)
	if c == nil {
		return f.reject(m, syscall.EINVAL, "WAIT_CS: unknown context", "ctx", a.CtxID)
	}
	e, errno := f.entity(c, a.IPType, a.IPInstance, a.Ring)
	if errno != 0 {
		return f.reject(m, errno, "WAIT_CS: entity", "ip", a.IPType, "instance", a.IPInstance, "ring", a.Ring)
	}
	fc, errno := e.fence(a.Handle)
	if errno != 0 {
		return f.reject(m, errno, "WAIT_CS: sequence not submitted", "seq", a.Handle)
	}
	done := true
	if fc != nil {
		var intr bool
		done, intr = waitFence(fc, a.Timeout, interrupted(m))
		if intr {
			return syscall.EINTR
		}
		if done && fc.err != 0 {
			return fc.err
		}
	}
	*a = abi.DRMAmdgpuWaitCS{}
	asOut(a, abi.DRMAmdgpuWaitCSOut{Status: uint64(b2u32(!done))})
	return 0
}

// fenceOf is amdgpu_cs_get_fence for a drm_amdgpu_fence.
func (f *File) fenceOf(m Memory, u abi.DRMAmdgpuFence) (*fence, syscall.Errno) {
	c := f.lookupCtx(u.CtxID)
	if c == nil {
		return nil, f.reject(m, syscall.EINVAL, "fence: unknown context", "ctx", u.CtxID)
	}
	e, errno := f.entity(c, u.IPType, u.IPInstance, u.Ring)
	if errno != 0 {
		return nil, f.reject(m, errno, "fence: entity", "ip", u.IPType, "instance", u.IPInstance, "ring", u.Ring)
	}
	fc, errno := e.fence(u.SeqNo)
	if errno != 0 {
		return nil, f.reject(m, errno, "fence: sequence not submitted", "seq", u.SeqNo)
	}
	return fc, 0
}

// maxKmalloc is where the model's kmalloc/kvmalloc of client-sized arrays fails with ENOMEM: 4 MiB
// is kmalloc's limit (KMALLOC_MAX_SIZE); amdgpu's kvmalloc goes up to INT_MAX, the model stops at
// 16 MiB (README, deviations).
const (
	maxKmalloc  = 4 << 20
	maxKvmalloc = 16 << 20
)

// waitFences is amdgpu_cs_wait_fences_ioctl: wait_all waits for each fence in order (a timeout
// ends the wait, status 0); otherwise the first to signal (an already forgotten one counts as
// signalled at once) is reported with its error as the ioctl's result.
func (f *File) waitFences(m Memory, a *abi.DRMAmdgpuWaitFences) syscall.Errno {
	n := uint64(a.FenceCount)
	if n*abi.SizeofDRMAmdgpuFence > maxKmalloc {
		return f.reject(m, syscall.ENOMEM, "WAIT_FENCES: fence_count too large", "count", n)
	}
	raw := make([]byte, n*abi.SizeofDRMAmdgpuFence)
	if m.ReadMemory(a.Fences, raw) != nil {
		return f.reject(m, syscall.EFAULT, "WAIT_FENCES: fences unreadable", "fences", hex(a.Fences))
	}
	us := make([]abi.DRMAmdgpuFence, n)
	decode(raw, us)
	intr := interrupted(m)
	if a.WaitAll != 0 {
		done := true
		for _, u := range us {
			fc, errno := f.fenceOf(m, u)
			if errno != 0 {
				return errno
			}
			if fc == nil {
				continue
			}
			ok, in := waitFence(fc, a.TimeoutNs, intr)
			if in {
				return syscall.EINTR
			}
			if ok && fc.err != 0 {
				return fc.err
			}
			if !ok {
				done = false
				break
			}
		}
		*a = abi.DRMAmdgpuWaitFences{}
		asOut(a, abi.DRMAmdgpuWaitFencesOut{Status: b2u32(done)})
		return 0
	}
	fcs := make([]*fence, 0, n)
	first, done := ^uint32(0), false
	for i, u := range us {
		fc, errno := f.fenceOf(m, u)
		if errno != 0 {
			return errno
		}
		if fc == nil { // "already signaled"
			first, done = uint32(i), true
			break
		}
		fcs = append(fcs, fc)
	}
	if !done {
		i, in := waitAny(fcs, a.TimeoutNs, intr)
		if in {
			return syscall.EINTR
		}
		if i >= 0 {
			first, done = uint32(i), true
		}
	}
	*a = abi.DRMAmdgpuWaitFences{}
	asOut(a, abi.DRMAmdgpuWaitFencesOut{Status: b2u32(done), FirstSignaled: first})
	if done && int(first) < len(fcs) {
		return fcs[first].err
	}
	return 0
}

// fenceToHandle is amdgpu_cs_fence_to_handle_ioctl: the fence is looked up as WAIT_CS does; turning
// it into a syncobj, a syncobj fd or a sync_file fd needs syncobjs (not modelled, GET_CAP(SYNCOBJ)
// is 0) or installing an fd in the client (a FUSE server cannot): EOPNOTSUPP.
func (f *File) fenceToHandle(m Memory, a *abi.DRMAmdgpuFenceToHandle) syscall.Errno {
	if _, errno := f.fenceOf(m, a.Fence); errno != 0 {
		return errno
	}
	switch a.What {
	case abi.AMDGPU_FENCE_TO_HANDLE_GET_SYNCOBJ, abi.AMDGPU_FENCE_TO_HANDLE_GET_SYNCOBJ_FD,
		abi.AMDGPU_FENCE_TO_HANDLE_GET_SYNC_FILE_FD:
		return f.reject(m, syscall.EOPNOTSUPP, "FENCE_TO_HANDLE: no syncobjs or sync files", "what", a.What)
	}
	return f.reject(m, syscall.EINVAL, "FENCE_TO_HANDLE: unknown what", "what", a.What)
}

// remaining is amdgpu_gem_timeout: the time left until the absolute CLOCK_MONOTONIC timeout (ns);
// negative as int64: forever (-1).
func remaining(timeout uint64) time.Duration {
	if int64(timeout) < 0 {
		return -1
	}
	now := monotonicNow()
	if timeout <= now {
		return 0
	}
	return time.Duration(timeout - now)
}

// waitFence waits for fc up to the absolute timeout; interrupted when intr closes first.
func waitFence(fc *fence, timeout uint64, intr <-chan struct{}) (signaled, interrupted bool) {
	if fc.signaled() {
		return true, false
	}
	d := remaining(timeout)
	if d == 0 {
		return false, false
	}
	var tc <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		tc = t.C
	}
	select {
	case <-fc.done:
		return true, false
	case <-tc:
		return fc.signaled(), false
	case <-intr:
		return false, true
	}
}

// waitAny waits for the first of fcs to signal (its index; -1 at the timeout).
func waitAny(fcs []*fence, timeout uint64, intr <-chan struct{}) (int, bool) {
	for i, fc := range fcs {
		if fc.signaled() {
			return i, false
		}
	}
	d := remaining(timeout)
	if d == 0 {
		return -1, false
	}
	cases := make([]reflect.SelectCase, 0, len(fcs)+2)
	for _, fc := range fcs {
		cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(fc.done)})
	}
	cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(intr)})
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(t.C)})
	}
	i, _, _ := reflect.Select(cases)
	switch {
	case i < len(fcs):
		return i, false
	case i == len(fcs):
		return -1, true
	}
	return -1, false
}
