package kfd

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/kfdemu/kfdemu/doorbell"
	"github.com/kfdemu/kfdemu/gpu/cp"
	"github.com/kfdemu/kfdemu/gpu/shader"
	"github.com/kfdemu/kfdemu/kfd/abi"
	"github.com/kfdemu/kfdemu/kfd/svm"
	"github.com/kfdemu/kfdemu/mmnotify"
	"github.com/kfdemu/kfdemu/mmu"
	"github.com/kfdemu/kfdemu/topology"
)

// Process is one client process (kfd_process): created at its first open of a device file, torn
// down when its last file is released or it exits.
type Process struct {
	d     *Driver
	tgid  int
	pasid uint32
	refs  int // under Driver.mu

	mu       sync.Mutex
	dead     bool
	kfdSpace *space // backing of dev/kfd: doorbell and MMIO pages
	// render backs every render node the process opens (VRAM/GTT BOs, GEM objects): one memfd for
	// all its GPUs, so a BO's mmap offset is valid through any of its render files (libhsakmt 6.2.4
	// maps every GPU's BOs through the one fd libdrm keeps, see acquireVM). nil until first used.
	render      *space
	pdds        map[uint32]*pdd // gpu_id -> per-device data
	bos         map[uint64]*bo
	boIdx       boIndex           // bos by GPU VA (boindex.go)
	nextIDR     map[uint32]uint32 // gpu_id -> next BO idr id
	ipcNext     uint64            // the next unbacked render-node offset of an IPC import (ipc.go)
	events      map[uint32]*event
	queues      map[uint32]*queue
	evt         eventState
	dbg         debugState    // the debugger interface (debug.go)
	gone        chan struct{} // closed at teardown
	xnack       bool
	evicted     bool                     // queues evicted (EvictQueues) until RestoreQueues
	evictedAt   time.Time                // when they were
	evictedFor  time.Duration            // evict_duration_counter: summed at each restore
	svm         *svm.Manager             // the SVM range list (svms); its callbacks run under Process.mu
	svmPDDs     []*pdd                   // the devices in svm gpu-index order (topology order)
	mm          *mmnotify.Watch          // the client's munmaps (nil without a notifier); see cpuUnmapped
	renderFiles map[*renderFile]struct{} // open render-node files (their GEM state goes at teardown)
	bg          sync.WaitGroup           // work the queues' fault reports started (evictForVMFault)
}

// pdd is kfd_process_device: what a process has on one GPU.
type pdd struct {
	node      *topology.Node
	gpuID     uint32
	acquired  bool              // ACQUIRE_VM done
	vm        *mmu.VM           // the GPUVM, created at the render node's open or ACQUIRE_VM: every engine reaches memory through it
	gemVA     []gemInterval     // the render node's GEM mappings in vm, sorted (gem.go)
	svmChunks map[uint64]uint64 // SVM: client chunk base -> its physical segment (sharedvm.go)
	gwsQueue  *queue            // the queue holding the device's global wave sync slots (ALLOC_QUEUE_GWS)
	gws       *shader.GWS       // those slots (created at the first ALLOC_QUEUE_GWS)
	drmMinor  uint32            // render node whose VM was acquired
	scratchVA uint64
	tba, tma  uint64
	debugTrap bool // the first-level trap handler's debug flag (TMA word 2): set while debugged
	// trap is the trap handling dispatches get (shader.Engine.Trap): the second-level handler
	// (tba/tma, 0 when none is set) while debugTrap, else nil; written under Process.mu, read by
	// the engines without it.
	trap      atomic.Pointer[shader.TrapHandler]
	dbg       pddDebug // the debugger's state of the device (debug.go)
	policySet bool
	// The process's doorbell slice on this GPU in the kfd space, once allocated.
	doorbellOff int64
	doorbellMem []byte
	slice       *doorbell.Slice // doorbell ids in the slice
	layout      doorbell.Layout
	sizes       ctxSaveSizes     // queue buffer sizes of the node (kfd_queue_ctx_save_restore_size)
	sdmaPast    uint64           // sdma_past_activity_counter: activity of its destroyed SDMA queues
	group       cp.Group         // the process's AQL queues on this GPU wake each other's barriers
	code        shader.CodeCache // its queues' recent kernels, decoded (checked against memory at each dispatch)
	// vmFaultEvicted: a GPUVM fault evicted the device's queues for good (evictForVMFault).
	vmFaultEvicted bool
}

func newProcess(d *Driver, tgid int) (*Process, error) {
	p := &Process{d: d, tgid: tgid, pdds: map[uint32]*pdd{},
		bos: map[uint64]*bo{}, nextIDR: map[uint32]uint32{}, events: map[uint32]*event{},
		queues: map[uint32]*queue{}, renderFiles: map[*renderFile]struct{}{}, gone: make(chan struct{})}
	p.dbg.ack = make(chan struct{}, 64)
	id, err := d.pasid.Alloc(p)
	if err != nil {
		return nil, err
	}
	p.pasid = id
	if p.kfdSpace, err = newSpace("kfd"); err != nil {
		d.pasid.Free(id)
		return nil, err
	}
	for _, n := range d.sys.GPUs() {
		l := doorbell.LayoutFor(n.GfxTarget())
		p.pdds[n.GPUID] = &pdd{node: n, gpuID: n.GPUID, layout: l, slice: doorbell.NewSlice(l), sizes: queueSizes(n)}
	}
	p.evt.init()
	if err := p.newSVM(); err != nil {
		p.kfdSpace.close()
		d.pasid.Free(id)
		return nil, err
	}
	if d.mm != nil {
		if p.mm, err = d.mm.Watch(tgid, p.cpuUnmapped); err != nil {
			p.svm.Close()
			p.kfdSpace.close()
			d.pasid.Free(id)
			return nil, err
		}
	}
	return p, nil
}

// cpuUnmapped is svm_range_cpu_invalidate_pagetables for MMU_NOTIFY_UNMAP: the client unmapped
// [start, start+size) of its address space (munmap, mremap, mmap MAP_FIXED), so SVM ranges there
// lose those pages and their GPU mappings (svm_range_unmap_from_cpu). Called by the notifier's
// goroutine.
func (p *Process) cpuUnmapped(start, size uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dead || p.svm == nil {
		return
	}
	p.svm.Munmap(start, size)
}

// syncMM waits until the driver has seen every munmap the client made so far; called before any
// request that consults the SVM ranges, without Process.mu (cpuUnmapped takes it).
func (p *Process) syncMM() {
	if p.mm != nil {
		p.mm.Sync()
	}
}

// renderSpace returns the process's render-node backing, created at first use; under p.mu.
func (p *Process) renderSpace() (*space, error) {
	if p.render == nil {
		s, err := newSpace("render")
		if err != nil {
			return nil, err
		}
		p.render = s
	}
	return p.render, nil
}

// teardown releases everything the process holds (kfd_process_wq_release): queues first, then
// events, memory, memfds and the PASID.
func (p *Process) teardown() {
	p.dbgTeardown()
	p.mu.Lock()
	if p.dead {
		p.mu.Unlock()
		return
	}
	p.dead = true
	close(p.gone)
	// The client's mappings of its memfds keep their bytes from here on (space.retired).
	p.kfdSpace.retired.Store(true)
	if p.render != nil {
		p.render.retired.Store(true)
	}
	if p.mm != nil {
		p.mm.Stop()
	}
	queues := p.queues
	p.queues = map[uint32]*queue{}
	files := p.renderFiles
	p.renderFiles = map[*renderFile]struct{}{}
	p.mu.Unlock()
	for _, q := range queues {
		q.stop()
	}
	p.bg.Wait() // a fault's eviction the stopped queues started (they start no more)
	// amdgpu_driver_postclose_kms of every render-node file still open: its jobs stop, its GEM
	// objects are unmapped and freed while the VMs and memfds still exist.
	for f := range files {
		f.gem.Close()
	}
	p.mu.Lock()
	for _, q := range queues {
		q.release()
	}
	p.evt.closeAll(p)
	// amdgpu_vm_fini: the VMs go first (no engine runs any more), then the BOs they mapped.
	p.svm.Close()
	for _, pd := range p.pdds {
		if pd.vm != nil {
			pd.vm.Close()
			p.freeSVMChunks(pd)
		}
	}
	for h, b := range p.bos {
		clear(b.mapped)
		p.freeBOLocked(h, b)
	}
	for _, pd := range p.pdds {
		if pd.doorbellMem != nil {
			p.kfdSpace.release(pd.doorbellOff, pd.doorbellMem)
			pd.doorbellMem = nil
		}
	}
	if p.render != nil {
		p.render.close()
	}
	p.kfdSpace.close()
	p.mu.Unlock()
	p.d.pasid.Free(p.pasid)
}

// updateTrap publishes the second-level trap handler the device's dispatches enter; under
// Process.mu.
func (pd *pdd) updateTrap() {
	if !pd.debugTrap {
		pd.trap.Store(nil)
		return
	}
	t := &shader.TrapHandler{TBA: pd.tba, TMA: pd.tma}
	if pd.dbg.override&abi.KFD_DBG_TRAP_MASK_DBG_ADDRESS_WATCH != 0 {
		for id, wp := range pd.dbg.watch {
			if wp.used {
				if t.Watch == nil {
					t.Watch = make([]shader.Watch, maxWatchPoints)
					for i := range t.Watch {
						t.Watch[i].Mode = shader.WatchOff
					}
				}
				t.Watch[id] = shader.Watch{Addr: wp.addr, Mask: wp.mask, Mode: wp.mode}
			}
		}
	}
	pd.trap.Store(t)
}
