package kfd

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/kfdemu/kfdemu/gpu/cp/pm4"
	"github.com/kfdemu/kfdemu/gpu/shader"
	"github.com/kfdemu/kfdemu/kfd/drm"
	"github.com/kfdemu/kfdemu/mmu"
)

// The COMPUTE IP of the render node. amdgpu runs a submission's PM4 IBs on one of its kernel
// compute rings: gfx_v9_0_ring_emit_ib_compute puts an INDIRECT_BUFFER with the job's VMID in the
// ring, and the ring's fence tells the job has ended. Here each job gets a gpu/cp/pm4 queue of its
// own whose ring, a page above the 48-bit GPUVM that the daemon serves (a kernel ring is a kernel
// object, not in the client's VM), holds one INDIRECT_BUFFER per IB and a RELEASE_MEM whose
// interrupt ends the job. Dispatches run on the GPU's compute units (gpu/shader) as a kfd PM4
// queue's do; the kernel's compute rings are HQDs of their own, outside kfd's runlist, so these
// jobs are not in gpu/hws either.

const (
	kernelRingVA    = 1 << 52 // beyond every GPUVM address: no client mapping aliases it
	kernelRingBytes = 4096
	kernelRptrVA    = kernelRingVA + kernelRingBytes
	kernelWptrVA    = kernelRptrVA + 8
	jobEndContext   = 0x4a4f42 // int_ctxid of the job's closing RELEASE_MEM
)

// kernelRing is the job's view of memory: the kernel ring and its pointers from the daemon's page,
// everything else through the VM.
type kernelRing struct {
	drm.GPUMemory
	mu sync.Mutex
	b  [kernelRingBytes + 16]byte
}

func (k *kernelRing) local(va uint64, n int) []byte {
	if va >= kernelRingVA && va-kernelRingVA+uint64(n) <= uint64(len(k.b)) {
		return k.b[va-kernelRingVA : va-kernelRingVA+uint64(n)]
	}
	return nil
}

func (k *kernelRing) Read(va uint64, p []byte) error {
	if s := k.local(va, len(p)); s != nil {
		k.mu.Lock()
		copy(p, s)
		k.mu.Unlock()
		return nil
	}
	return k.GPUMemory.Read(va, p)
}

func (k *kernelRing) Write(va uint64, p []byte) error {
	if s := k.local(va, len(p)); s != nil {
		k.mu.Lock()
		copy(s, p)
		k.mu.Unlock()
		return nil
	}
	return k.GPUMemory.Write(va, p)
}

func (k *kernelRing) Atomic(va uint64, size int, f func(uint64) uint64) (uint64, error) {
	s := k.local(va, size)
	if s == nil {
		return k.GPUMemory.Atomic(va, size, f)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	var old uint64
	if size == 4 {
		old = uint64(binary.LittleEndian.Uint32(s))
	} else {
		old = binary.LittleEndian.Uint64(s)
	}
	if f != nil {
		if size == 4 {
			binary.LittleEndian.PutUint32(s, uint32(f(old)))
		} else {
			binary.LittleEndian.PutUint64(s, f(old))
		}
	}
	return old, nil
}

// pm4Job is the pm4.Host of one job.
type pm4Job struct {
	b     *gemBackend
	ports *cuPorts  // the work-groups' UTCL1s
	mem   *mmu.Port // the dispatcher's
	done  chan struct{}
	errc  chan error
	once  sync.Once
}

// RunPM4 implements drm.Backend.
func (b *gemBackend) RunPM4(ibs []drm.IB, stop <-chan struct{}) error {
	mem, release, err := b.Engine()
	if err != nil {
		return err
	}
	defer release()
	b.p.mu.Lock()
	vm := b.pd.vm
	b.p.mu.Unlock()
	k := &kernelRing{GPUMemory: mem}
	var ring []uint32
	for _, ib := range ibs {
		// soc15d.h PACKET3_INDIRECT_BUFFER: base bits 31:2 and 47:32, size in dwords, VALID.
		ring = append(ring, pm4.Header(pm4.OpIndirectBuffer, 2), uint32(ib.VA)&^3, uint32(ib.VA>>32)&0xffff, ib.Dwords&0xfffff|1<<23)
	}
	// RELEASE_MEM bottom-of-pipe, no data, interrupt: every IB has ended.
	ring = append(ring, pm4.Header(pm4.OpReleaseMem, 6), pm4.EventBottomOfPipeTS|pm4.EventIndexEOP<<8,
		pm4.IntSelInterrupt<<24, 0, 0, 0, 0, jobEndContext)
	if 4*len(ring) > kernelRingBytes {
		return fmt.Errorf("%d IBs do not fit the kernel ring", len(ibs)) // amdgpu_ring_max_ibs keeps them below
	}
	for i, dw := range ring {
		binary.LittleEndian.PutUint32(k.b[4*i:], dw)
	}
	binary.LittleEndian.PutUint64(k.b[kernelWptrVA-kernelRingVA:], uint64(len(ring)))
	h := &pm4Job{b: b, ports: &cuPorts{vm: vm}, mem: vm.NewPort(), done: make(chan struct{}), errc: make(chan error, 1)}
	defer h.ports.close()
	defer h.mem.Close()
	q, err := pm4.New(pm4.Config{RingBase: kernelRingVA, RingSizeBytes: kernelRingBytes, ReadPtrVA: kernelRptrVA,
		WritePtrVA: kernelWptrVA, Memory: k, Host: h})
	if err != nil {
		return err
	}
	if err := q.Start(); err != nil {
		return err
	}
	defer q.Stop()
	select {
	case <-h.done:
		return nil
	case err := <-h.errc:
		return err
	case <-stop:
		return drm.ErrStopped
	}
}

// Dispatch implements pm4.Host: DISPATCH_DIRECT on the GPU's compute units, all of them (a kernel
// compute ring has no CU mask), with the scratch the IB's registers give.
func (h *pm4Job) Dispatch(q *pm4.Queue, cs *pm4.ComputeState) error {
	d, gpu := h.b.p.d, h.b.pd.gpuID
	r := shader.RegParams{
		PgmAddr: cs.PGM, RSRC1: cs.RSRC1, RSRC2: cs.RSRC2, RSRC3: cs.RSRC3, UserData: cs.UserData,
		NumGroups: cs.Groups, TmpringSize: cs.TmpRingSize, ScratchBase: cs.ScratchBase,
		ScratchSize: uint64(cs.TmpRingSize&0xfff) * uint64(cs.TmpRingSize>>12&0x1fff) << 10,
		Apertures:   shader.Apertures{SharedBase: ldsApertureBase, PrivateBase: scratchApertureBase},
		Kill:        q.Stopping(),
		Engine:      shader.Engine{Device: d.shaderDevice(gpu), Ports: h.ports},
	}
	for i := range r.WorkgroupSize {
		r.WorkgroupSize[i] = uint16(cs.NumThread[i])
	}
	ctx := stopContext(q.Stopping())
	defer d.busy(gpu)()
	st, err := shader.DispatchRegs(ctx, h.mem, r)
	d.stats.waveInstructions.Add(st.WaveInstructions)
	return err
}

// Interrupt implements pm4.Host: the job's closing RELEASE_MEM, in the ring (an IB's own RELEASE_MEM
// interrupts, whatever their int_ctxid, go to amdgpu's fence processing, not to a client event).
func (h *pm4Job) Interrupt(q *pm4.Queue, id uint32) {
	if id == jobEndContext && q.Status().Depth == 0 {
		h.once.Do(func() { close(h.done) })
	}
}

// Timestamp implements pm4.Host.
func (h *pm4Job) Timestamp() uint64 { return gpuClock() }

// QueueError implements pm4.Host.
func (h *pm4Job) QueueError(_ *pm4.Queue, err error) {
	var fault *shader.Fault
	if errors.As(err, &fault) {
		err = fmt.Errorf("GPU fault at %#x: %w", fault.Addr, err)
	}
	select {
	case h.errc <- err:
	default:
	}
}
