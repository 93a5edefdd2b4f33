package drm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"syscall"

	"github.com/kfdemu/kfdemu/gpu/sdma"
	"github.com/kfdemu/kfdemu/kfd/abi"
)

// Command submission (amdgpu_cs.c, Linux 6.10): the chunk array is read and checked in amdgpu's
// order (pass 1 per chunk, pass 2, the BO list), the jobs are queued on their contexts' entities
// and run by a goroutine per entity while it has jobs, so CS returns at once with the sequence
// number and WAIT_CS waits for the fence.

// csChunk is one chunk of a submission: its id and its data (length_dw dwords).
type csChunk struct {
	id   uint32
	data []byte
}

// pass1 holds the checks amdgpu_cs_pass1 makes on a chunk before it reads the next one.
type pass1 struct {
	ib        func(*abi.DRMAmdgpuCSChunkIB) syscall.Errno
	userFence func(*abi.DRMAmdgpuCSChunkFence) syscall.Errno
	boHandles func(*abi.DRMAmdgpuBOListIn) syscall.Errno
}

// readCSChunks is amdgpu_cs_pass1's reading of the chunk array of a: the array of num_chunks
// pointers, then each drm_amdgpu_cs_chunk and its data, each chunk checked by p (nil functions
// accept) before the next is read. Sizes beyond the model's kvmalloc limit, in total too, are
// ENOMEM; unreadable memory EFAULT; a chunk too short for its id, a second FENCE or BO_HANDLES
// chunk, or an unknown id EINVAL.
func readCSChunks(m Memory, a *abi.DRMAmdgpuCS, p pass1) ([]csChunk, syscall.Errno) {
	n := uint64(a.NumChunks)
	if n*8 > maxKvmalloc {
		return nil, syscall.ENOMEM
	}
	ptrs := make([]byte, n*8)
	if m.ReadMemory(a.Chunks, ptrs) != nil {
		return nil, syscall.EFAULT
	}
	if n*16 > maxKvmalloc { // p->chunks
		return nil, syscall.ENOMEM
	}
	chunks := make([]csChunk, 0, n)
	total := uint64(0)
	fence, list := false, false
	for i := uint64(0); i < n; i++ {
		var hdr [abi.SizeofDRMAmdgpuCSChunk]byte
		if m.ReadMemory(binary.LittleEndian.Uint64(ptrs[8*i:]), hdr[:]) != nil {
			return nil, syscall.EFAULT
		}
		var c abi.DRMAmdgpuCSChunk
		decode(hdr[:], &c)
		size := 4 * uint64(c.LengthDW)
		if total += size; size > maxKvmalloc || total > maxKvmalloc {
			return nil, syscall.ENOMEM
		}
		data := make([]byte, size)
		if m.ReadMemory(c.ChunkData, data) != nil {
			return nil, syscall.EFAULT
		}
		chunks = append(chunks, csChunk{id: c.ChunkID, data: data})
		errno := syscall.EINVAL // "Assume the worst on the following checks"
		switch c.ChunkID {
		case abi.AMDGPU_CHUNK_ID_IB:
			if size < abi.SizeofDRMAmdgpuCSChunkIB {
				return nil, errno
			}
			var ib abi.DRMAmdgpuCSChunkIB
			decode(data, &ib)
			if p.ib != nil {
				errno = p.ib(&ib)
			} else {
				errno = 0
			}
		case abi.AMDGPU_CHUNK_ID_FENCE:
			if size < abi.SizeofDRMAmdgpuCSChunkFence || fence {
				return nil, errno // "Only a single user fence is allowed"
			}
			fence = true
			var fc abi.DRMAmdgpuCSChunkFence
			decode(data, &fc)
			if p.userFence != nil {
				errno = p.userFence(&fc)
			} else {
				errno = 0
			}
		case abi.AMDGPU_CHUNK_ID_BO_HANDLES:
			if size < abi.SizeofDRMAmdgpuBOListIn || list {
				return nil, errno // "Only a single BO list is allowed"
			}
			list = true
			var in abi.DRMAmdgpuBOListIn
			decode(data, &in)
			if p.boHandles != nil {
				errno = p.boHandles(&in)
			} else {
				errno = 0
			}
		case abi.AMDGPU_CHUNK_ID_CP_GFX_SHADOW:
			if size < abi.SizeofDRMAmdgpuCSChunkShadow {
				return nil, errno
			}
			errno = 0
		case abi.AMDGPU_CHUNK_ID_DEPENDENCIES, abi.AMDGPU_CHUNK_ID_SYNCOBJ_IN, abi.AMDGPU_CHUNK_ID_SYNCOBJ_OUT,
			abi.AMDGPU_CHUNK_ID_SCHEDULED_DEPENDENCIES, abi.AMDGPU_CHUNK_ID_SYNCOBJ_TIMELINE_WAIT,
			abi.AMDGPU_CHUNK_ID_SYNCOBJ_TIMELINE_SIGNAL:
			errno = 0
		}
		if errno != 0 {
			return nil, errno
		}
	}
	return chunks, 0
}

// maxIBs is amdgpu_ring_max_ibs, which amdgpu calls with the chunk's HW IP type.
func maxIBs(ip uint32) uint32 {
	switch ip {
	case abi.AMDGPU_HW_IP_GFX:
		return 192
	case abi.AMDGPU_HW_IP_COMPUTE:
		return 125
	case abi.AMDGPU_HW_IP_VCN_JPEG:
		return 16
	}
	return 49
}

// job is an amdgpu_job: the IBs of one entity of a submission.
type job struct {
	ctx     *gpuCtx
	ent     *entity
	ibs     []abi.DRMAmdgpuCSChunkIB
	deps    []*fence        // DEPENDENCIES: finished fences to wait for
	gang    []chan struct{} // the leader waits until the other members have started
	started chan struct{}   // closed when the job starts (its scheduled fence)
	fence   *fence
	bos     []*gemBO // references held while the job exists
	uf      *gemBO   // the user fence object (leader), written with the sequence at the end
	ufOff   uint32
}

func (j *job) release(f *File) {
	for _, bo := range j.bos {
		bo.put(f)
	}
	j.bos = nil
	if j.uf != nil {
		j.uf.put(f)
		j.uf = nil
	}
}

// csParser is amdgpu_cs_parser: what a submission collected.
type csParser struct {
	f        *File
	m        Memory
	ctx      *gpuCtx
	entities []*entity // the gang: one job per entity
	numIBs   []uint32
	leader   int // the job of the last IB chunk
	uf       *gemBO
	ufOff    uint32
	list     *boList
	deps     []*fence
	postDeps bool
}

func (p *csParser) release() {
	if p.uf != nil {
		p.uf.put(p.f)
	}
	if p.list != nil {
		p.list.release(p.f)
	}
}

// ib is amdgpu_cs_p1_ib with amdgpu_cs_job_idx.
func (p *csParser) ib(ib *abi.DRMAmdgpuCSChunkIB) syscall.Errno {
	e, errno := p.f.entity(p.ctx, ib.IPType, ib.IPInstance, ib.Ring)
	if errno != 0 {
		return p.f.reject(p.m, errno, "CS: IB entity", "ip", ib.IPType, "instance", ib.IPInstance, "ring", ib.Ring)
	}
	if !e.rq {
		return p.f.reject(p.m, syscall.EINVAL, "CS: no ring runs this IP type", "ip", ib.IPType)
	}
	i := 0
	for i < len(p.entities) && p.entities[i] != e {
		i++
	}
	if i == len(p.entities) {
		if i == gangSize {
			return p.f.reject(p.m, syscall.EINVAL, "CS: gang too large")
		}
		p.entities, p.numIBs = append(p.entities, e), append(p.numIBs, 0)
	}
	if p.numIBs[i] >= maxIBs(ib.IPType) {
		return p.f.reject(p.m, syscall.EINVAL, "CS: too many IBs", "ip", ib.IPType)
	}
	p.numIBs[i]++
	p.leader = i
	return 0
}

// userFence is amdgpu_cs_p1_user_fence: a one-page object, the 8-byte sequence inside it.
func (p *csParser) userFence(fc *abi.DRMAmdgpuCSChunkFence) syscall.Errno {
	bo := p.f.lookup(fc.Handle)
	if bo == nil {
		return p.f.reject(p.m, syscall.EINVAL, "CS: user fence: no such handle", "handle", fc.Handle)
	}
	p.uf, p.ufOff = bo, fc.Offset
	if bo.size != gpuPage || fc.Offset > gpuPage-8 {
		return p.f.reject(p.m, syscall.EINVAL, "CS: user fence object or offset", "size", bo.size, "offset", fc.Offset)
	}
	return 0
}

// boHandles is amdgpu_cs_p1_bo_handles: a BO list of the submission's own.
func (p *csParser) boHandles(in *abi.DRMAmdgpuBOListIn) syscall.Errno {
	if errno := readBOListEntries(p.m, in, nil); errno != 0 {
		return p.f.reject(p.m, errno, "CS: BO_HANDLES entries", "bo_number", in.BONumber)
	}
	l, errno := p.f.newBOList(p.m, in)
	if errno != 0 {
		return errno
	}
	p.list = l
	return 0
}

// pass2 is amdgpu_cs_pass2: the IBs, the dependencies and the syncobj chunks (there are no syncobjs:
// a wait on one is ENOENT, a signal of one EINVAL, as drm_syncobj_find fails for every handle).
func (p *csParser) pass2(chunks []csChunk) ([][]abi.DRMAmdgpuCSChunkIB, syscall.Errno) {
	f, m := p.f, p.m
	ibs := make([][]abi.DRMAmdgpuCSChunkIB, len(p.entities))
	for _, c := range chunks {
		switch c.id {
		case abi.AMDGPU_CHUNK_ID_IB:
			var ib abi.DRMAmdgpuCSChunkIB
			decode(c.data, &ib)
			i := 0
			for p.entities[i].ip != ib.IPType || p.entities[i].ring != ib.Ring {
				i++
			}
			ibs[i] = append(ibs[i], ib)
		case abi.AMDGPU_CHUNK_ID_DEPENDENCIES, abi.AMDGPU_CHUNK_ID_SCHEDULED_DEPENDENCIES:
			// A scheduled dependency waits for the job to start; the model waits for its end,
			// which is later and so also satisfies it.
			for i := 0; i+abi.SizeofDRMAmdgpuCSChunkDep <= len(c.data); i += abi.SizeofDRMAmdgpuCSChunkDep {
				var d abi.DRMAmdgpuCSChunkDep
				decode(c.data[i:], &d)
				fc, errno := f.fenceOf(m, abi.DRMAmdgpuFence{CtxID: d.CtxID, IPType: d.IPType, IPInstance: d.IPInstance,
					Ring: d.Ring, SeqNo: d.Handle})
				if errno != 0 {
					return nil, errno
				}
				if fc != nil {
					p.deps = append(p.deps, fc)
				}
			}
		case abi.AMDGPU_CHUNK_ID_SYNCOBJ_IN, abi.AMDGPU_CHUNK_ID_SYNCOBJ_TIMELINE_WAIT:
			if len(c.data) >= syncobjSize(c.id) {
				return nil, f.reject(m, syscall.ENOENT, "CS: wait on a syncobj (none exist)", "handle", le32(c.data, 0))
			}
		case abi.AMDGPU_CHUNK_ID_SYNCOBJ_OUT, abi.AMDGPU_CHUNK_ID_SYNCOBJ_TIMELINE_SIGNAL:
			if p.postDeps {
				return nil, f.reject(m, syscall.EINVAL, "CS: second syncobj signal chunk")
			}
			p.postDeps = true
			if len(c.data) >= syncobjSize(c.id) {
				return nil, f.reject(m, syscall.EINVAL, "CS: signal of a syncobj (none exist)", "handle", le32(c.data, 0))
			}
		case abi.AMDGPU_CHUNK_ID_CP_GFX_SHADOW:
			if fl := le32(c.data, 24); fl&^1 != 0 { // AMDGPU_CS_CHUNK_CP_GFX_SHADOW_FLAGS_INIT_SHADOW
				return nil, f.reject(m, syscall.EINVAL, "CS: CP_GFX_SHADOW flags", "flags", fl)
			}
		}
	}
	return ibs, 0
}

func syncobjSize(id uint32) int {
	if id == abi.AMDGPU_CHUNK_ID_SYNCOBJ_IN || id == abi.AMDGPU_CHUNK_ID_SYNCOBJ_OUT {
		return abi.SizeofDRMAmdgpuCSChunkSem
	}
	return abi.SizeofDRMAmdgpuCSChunkSyncobj
}

// cs is amdgpu_cs_ioctl.
func (f *File) cs(m Memory, a *abi.DRMAmdgpuCS) syscall.Errno {
	if a.NumChunks == 0 {
		return f.reject(m, syscall.EINVAL, "CS: no chunks")
	}
	c := f.lookupCtx(a.CtxID)
	if c == nil {
		return f.reject(m, syscall.EINVAL, "CS: unknown context", "ctx", a.CtxID)
	}
	if c.guilty.Load() {
		return f.reject(m, syscall.ECANCELED, "CS: context is guilty of a GPU reset", "ctx", a.CtxID)
	}
	p := &csParser{f: f, m: m, ctx: c}
	defer p.release()
	chunks, errno := readCSChunks(m, a, pass1{ib: p.ib, userFence: p.userFence, boHandles: p.boHandles})
	if errno != 0 {
		return f.reject(m, errno, "CS: chunks", "num_chunks", a.NumChunks, "chunks", hex(a.Chunks))
	}
	if len(p.entities) == 0 {
		return f.reject(m, syscall.EINVAL, "CS: no IB")
	}
	ibs, errno := p.pass2(chunks)
	if errno != 0 {
		return errno
	}
	// amdgpu_cs_parser_bos: the list given by handle, unless the submission brought its own.
	if a.BOListHandle != 0 {
		if p.list != nil {
			return f.reject(m, syscall.EINVAL, "CS: BO list handle and BO_HANDLES chunk")
		}
		f.mu.Lock()
		l, ok := f.lists.get(a.BOListHandle)
		if ok {
			p.list = &boList{}
			for _, bo := range l.bos {
				p.list.bos = append(p.list.bos, bo.get())
			}
		}
		f.mu.Unlock()
		if !ok {
			return f.reject(m, syscall.ENOENT, "CS: no such BO list", "list", a.BOListHandle)
		}
	}
	jobs := make([]*job, len(p.entities))
	for i, e := range p.entities {
		j := &job{ctx: c, ent: e, ibs: ibs[i], deps: p.deps, started: make(chan struct{}), fence: newFence(0)}
		if p.list != nil {
			for _, bo := range p.list.bos {
				j.bos = append(j.bos, bo.get())
			}
		}
		jobs[i] = j
	}
	lead := jobs[p.leader]
	for i, j := range jobs {
		if i != p.leader {
			lead.gang = append(lead.gang, j.started)
		}
	}
	if p.uf != nil {
		lead.uf, lead.ufOff = p.uf.get(), p.ufOff
	}
	seq, errno := f.submit(m, p.entities[p.leader], jobs)
	if errno != 0 {
		for _, j := range jobs {
			j.release(f)
		}
		return errno
	}
	*a = abi.DRMAmdgpuCS{}
	asOut(a, abi.DRMAmdgpuCSOut{Handle: seq})
	return 0
}

// submit is amdgpu_cs_sync_rings' wait for the fence whose slot the new sequence reuses
// (amdgpu_ctx_wait_prev_fence, interruptible), then amdgpu_cs_submit: the sequence is the leader
// entity's, every object of the submission gets the jobs' fences, and the jobs are queued.
func (f *File) submit(m Memory, le *entity, jobs []*job) (uint64, syscall.Errno) {
	intr := interrupted(m)
	for {
		f.mu.Lock()
		if f.closed {
			f.mu.Unlock()
			return 0, syscall.ENODEV
		}
		le.mu.Lock()
		seq := le.seq
		if old := le.fences[seq&(schedJobs-1)]; old != nil && !old.signaled() {
			le.mu.Unlock()
			f.mu.Unlock()
			if _, in := waitFence(old, ^uint64(0), intr); in {
				return 0, syscall.EINTR
			}
			continue
		}
		var lead *job
		for _, j := range jobs {
			if j.ent == le {
				lead = j
			}
		}
		lead.fence.seq = seq
		le.fences[seq&(schedJobs-1)] = lead.fence
		le.seq++
		le.mu.Unlock()
		for _, j := range jobs {
			for _, bo := range j.bos {
				bo.busy = append(pruneFences(bo.busy), j.fence)
			}
			if j.uf != nil {
				j.uf.busy = append(pruneFences(j.uf.busy), j.fence)
			}
			f.push(j)
		}
		f.mu.Unlock()
		return seq, 0
	}
}

func pruneFences(fs []*fence) []*fence {
	out := fs[:0]
	for _, fc := range fs {
		if !fc.signaled() {
			out = append(out, fc)
		}
	}
	clear(fs[len(out):])
	return out
}

// push queues j on its entity and starts the entity's goroutine if none runs; with f.mu held and f
// not closed (Close waits for the goroutines it starts).
func (f *File) push(j *job) {
	e := j.ent
	e.mu.Lock()
	e.queue = append(e.queue, j)
	start := !e.running
	e.running = true
	e.mu.Unlock()
	if start {
		f.jobs.Add(1)
		go f.drain(e)
	}
}

// drain runs e's jobs in order until its queue is empty.
func (f *File) drain(e *entity) {
	defer f.jobs.Done()
	for {
		e.mu.Lock()
		if len(e.queue) == 0 {
			e.running = false
			e.mu.Unlock()
			return
		}
		j := e.queue[0]
		e.queue[0] = nil
		e.queue = e.queue[1:]
		e.last = j.fence
		e.mu.Unlock()
		j.fence.signal(f.run(j))
		j.release(f)
	}
}

// run executes a job (SDMA IBs on gpu/sdma, COMPUTE IBs on the Backend's PM4 engine) and returns
// its fence's error: ESRCH when the file closed first (drm_sched_entity_kill), ECANCELED for a job of
// a guilty context (drm_sched_resubmit_jobs skips them), ETIME for one whose IB faulted or hit a
// packet the engine cannot execute (the model stops the engine where amdgpu's job timeout would
// reset the GPU: the context becomes guilty).
func (f *File) run(j *job) syscall.Errno {
	for _, d := range j.deps {
		select {
		case <-d.done:
		case <-f.stop:
			close(j.started)
			return syscall.ESRCH
		}
	}
	for _, g := range j.gang {
		select {
		case <-g:
		case <-f.stop:
			close(j.started)
			return syscall.ESRCH
		}
	}
	close(j.started)
	if j.ctx.guilty.Load() {
		return syscall.ECANCELED
	}
	var err error
	if j.ent.ip == abi.AMDGPU_HW_IP_COMPUTE {
		ibs := make([]IB, len(j.ibs))
		for i, ib := range j.ibs {
			ibs[i] = IB{VA: ib.VAStart & gmcHoleMask, Dwords: ib.IBBytes / 4}
		}
		err = f.be.RunPM4(ibs, f.stop)
	} else {
		err = f.runSDMA(j)
	}
	switch {
	case errors.Is(err, ErrStopped), errors.Is(err, sdma.ErrStopped), errors.Is(err, ErrGone):
		return syscall.ESRCH
	case err != nil:
		j.ctx.guilty.Store(true)
		f.mu.Lock()
		f.resets++
		f.mu.Unlock()
		f.log.Warn("render node: IB failed; the context is guilty", "ctx", j.ctx.id, "ip", j.ent.ip, "ring", j.ent.ring,
			"err", err.Error())
		return syscall.ETIME
	}
	if j.uf != nil && j.uf.buf != nil && int(j.ufOff)+8 <= len(j.uf.buf.Mem) {
		binary.LittleEndian.PutUint64(j.uf.buf.Mem[j.ufOff:], j.fence.seq) // the ring's 64-bit user fence write
	}
	return 0
}

// runSDMA executes a job's SDMA IBs one after another through a Port of the VM.
func (f *File) runSDMA(j *job) error {
	mem, release, err := f.be.Engine()
	if err != nil {
		return err
	}
	defer release()
	for _, ib := range j.ibs {
		st, err := sdma.RunIB(sdma.IB{VA: ib.VAStart & gmcHoleMask, Dwords: ib.IBBytes / 4, Memory: mem,
			Host: ibHost{f.be}, Stop: f.stop})
		if err != nil {
			return fmt.Errorf("IB at %#x (%d bytes), after %d packets: %w", ib.VAStart, ib.IBBytes, st.Packets, err)
		}
	}
	return nil
}

// ibHost is what an IB reports: a TRAP goes to amdgpu's fence processing, no client event.
type ibHost struct{ be Backend }

func (ibHost) Interrupt(*sdma.Queue, uint32) {}
func (h ibHost) Timestamp() uint64           { return h.be.Clock() }
func (ibHost) QueueError(*sdma.Queue, error) {}
