package kfd

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/kfdemu/kfdemu/amdgpu"
	"github.com/kfdemu/kfdemu/doorbell"
	"github.com/kfdemu/kfdemu/gpu/hws"
	"github.com/kfdemu/kfdemu/gpu/shader"
	"github.com/kfdemu/kfdemu/kfd/abi"
	"github.com/kfdemu/kfdemu/kfd/drm"
	"github.com/kfdemu/kfdemu/mmnotify"
	"github.com/kfdemu/kfdemu/mmu"
	"github.com/kfdemu/kfdemu/pasid"
	"github.com/kfdemu/kfdemu/topology"
)

var errNoSpace = errors.New("kfd: device memory space exhausted")

// Driver is the emulated amdkfd: one per mount.
type Driver struct {
	sys   *topology.System
	log   *slog.Logger
	pasid *pasid.Space

	mu    sync.Mutex
	procs map[int]*Process // by tgid
	dying int              // processes out of procs whose teardown has not ended (Stats counts them)
	// watchIDs are each device's allocated address watch points (dev->alloc_watch_ids, debug.go).
	watchIDs map[uint32]uint8
	queueSeq uint64 // creation order of queues (pqm->queues order, debug.go)
	// vramUsed is the VRAM allocated per GPU by all processes (amdgpu_amdkfd_reserve_mem_limit).
	vramUsed map[uint32]uint64
	// gttUsed is the GTT allocated per GPU; meters are the GPUs' busy meters (activity.go).
	gttUsed map[uint32]uint64
	meters  map[uint32]*amdgpu.Meter
	// sdmaUsed is dqm->sdma_bitmap per GPU: {engine, queue} pairs taken by SDMA queues.
	sdmaUsed map[uint32]map[[2]uint32]bool

	bells *doorbell.Watcher // detects doorbell stores of every queue
	stats driverStats

	// phys is the physical address space every BO gets a segment of (VRAM windows per GPU,
	// system memory); PTEs point into it. filters are the per-GPU retry-fault filters
	// (amdgpu_gmc_filter_faults), under mu.
	phys    *mmu.Phys
	filters map[uint32]*mmu.Filter
	// scheds are the GPUs' hardware schedulers (sched.go), created with hwsCfg; under mu.
	scheds map[uint32]*hws.Scheduler
	hwsCfg hws.Config
	// cuDevs are the GPUs' compute units (gpu/shader), created on first use; under mu.
	cuDevs map[uint32]*shader.Device
	// mm reports clients' munmaps (nil: not available, SVM not advertised); set before serving.
	mm    *mmnotify.Notifier
	noSVM bool // GET_VERSION reports MinorGPUVM although mm is set (AdvertiseSVM)
	// dmabuf is the table of exported buffers (dmabuf.go); its mutex comes after Process.mu.
	dmabuf dmabufs
	// smi holds the SMI event clients (smi.go).
	smi smiHub
	// ipc maps the live IPC keys to their objects (ipc.go); ipcMu is a leaf like dmabuf.mu.
	ipcMu sync.Mutex
	ipc   map[[4]uint32]*ipcObj
}

// SetMMNotifier gives the driver the clients' munmap notices (package mmnotify), the stand-in for
// amdkfd's MMU notifiers on SVM ranges; GET_VERSION then reports MinorSVM. Call before serving;
// Close closes n.
func (d *Driver) SetMMNotifier(n *mmnotify.Notifier) { d.mm = n }

// SetDoorbellTuning replaces the doorbell watcher's tuning (package doorbell); call before any
// queue exists. kfdemu's tests use it to take the safety poll away.
func (d *Driver) SetDoorbellTuning(t doorbell.Tuning) {
	d.bells.Close()
	d.bells = doorbell.NewWatcher(t)
	d.bells.SetArm(d.armDoorbells)
}

// AdvertiseSVM(false) makes GET_VERSION report MinorGPUVM even with an MMU notifier, so that
// libhsakmt keeps SVM off (kfdemu's --no-svm: a client's non-SVM paths on a machine that could run
// SVM). The notifier still serves the doorbells' touch notices. Call before serving.
func (d *Driver) AdvertiseSVM(on bool) { d.noSVM = !on }

// InterfaceMinor is the GET_VERSION minor this driver reports.
func (d *Driver) InterfaceMinor() uint32 {
	if d.mm != nil && !d.noSVM {
		return MinorSVM
	}
	return MinorGPUVM
}

// driverStats are counters of the hardware model (debugfs kfdemu/stats).
type driverStats struct {
	waveInstructions atomic.Uint64
	sdmaBytes        atomic.Uint64 // bytes copied or filled by SDMA queues that have stopped
}

// New creates the driver for a topology and hooks its VRAM accounting into used_memory.
func New(sys *topology.System, log *slog.Logger) *Driver {
	if log == nil {
		log = slog.Default()
	}
	d := &Driver{sys: sys, log: log, pasid: pasid.NewSpace(), procs: map[int]*Process{}, vramUsed: map[uint32]uint64{},
		gttUsed: map[uint32]uint64{}, meters: map[uint32]*amdgpu.Meter{},
		sdmaUsed: map[uint32]map[[2]uint32]bool{}, bells: doorbell.NewWatcher(doorbell.Tuning{}),
		phys: mmu.NewPhys(), filters: map[uint32]*mmu.Filter{}, scheds: map[uint32]*hws.Scheduler{}, cuDevs: map[uint32]*shader.Device{}}
	sys.SetUsedMemoryFunc(func(gpuID uint32, bank int) uint64 {
		if bank != 0 {
			return 0
		}
		d.mu.Lock()
		defer d.mu.Unlock()
		return d.vramUsed[gpuID]
	})
	d.bells.SetArm(d.armDoorbells)
	return d
}

var _ Device = (*Driver)(nil)

// Close tears down every process and stops the hardware model (daemon shutdown).
func (d *Driver) Close() {
	defer d.closeSMI()
	d.mu.Lock()
	procs := d.procs
	d.procs = map[int]*Process{}
	d.mu.Unlock()
	for _, p := range procs {
		p.teardown()
	}
	d.closeSchedulers()
	d.bells.Close()
	if d.mm != nil {
		d.mm.Close()
	}
}

// filter returns GPU gpuID's retry-fault filter.
func (d *Driver) filter(gpuID uint32) *mmu.Filter {
	d.mu.Lock()
	defer d.mu.Unlock()
	f := d.filters[gpuID]
	if f == nil {
		f = mmu.NewFilter(mmu.DefaultFilterWindow)
		d.filters[gpuID] = f
	}
	return f
}

// gpuIndex is the position of gpuID among the system's GPUs: its VRAM window in phys and its
// doorbell window in the kfd space.
func (d *Driver) gpuIndex(gpuID uint32) int {
	for i, n := range d.sys.GPUs() {
		if n.GPUID == gpuID {
			return i
		}
	}
	return 0
}

// Poke tells the doorbell watcher that a client is active (every ioctl): it scans the doorbells at
// once, so a client that rings and then blocks in WAIT_EVENTS is served without polling delay.
func (d *Driver) Poke() { d.bells.Poke() }

// process returns (creating) the KFD process of tgid and takes a reference.
func (d *Driver) process(tgid int) (*Process, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if p := d.procs[tgid]; p != nil {
		p.refs++
		return p, nil
	}
	p, err := newProcess(d, tgid)
	if err != nil {
		return nil, err
	}
	d.procs[tgid] = p
	p.refs = 1
	d.log.Info("kfd process created", "tgid", tgid, "pasid", p.pasid)
	return p, nil
}

// put drops a reference; the last one tears the process down.
func (d *Driver) put(p *Process) {
	d.mu.Lock()
	p.refs--
	last := p.refs == 0 && d.procs[p.tgid] == p
	if last {
		delete(d.procs, p.tgid)
		d.dying++
	}
	d.mu.Unlock()
	if last {
		d.teardown(p)
	}
}

// teardown tears down p, which its caller took out of d.procs (counting it in d.dying).
func (d *Driver) teardown(p *Process) {
	p.teardown()
	d.mu.Lock()
	d.dying--
	d.mu.Unlock()
}

// OpenKFD implements Device.
func (d *Driver) OpenKFD(tgid int) (File, error) {
	p, err := d.process(tgid)
	if err != nil {
		return nil, err
	}
	return &kfdFile{p: p}, nil
}

// OpenRender implements Device.
func (d *Driver) OpenRender(minor uint32, tgid int) (File, error) {
	var node *topology.Node
	for _, n := range d.sys.GPUs() {
		if n.RenderMinor() == minor {
			node = n
		}
	}
	if node == nil {
		return nil, syscall.ENODEV
	}
	p, err := d.process(tgid)
	if err != nil {
		return nil, err
	}
	dev := newDRM(d, node)
	p.mu.Lock()
	pd := p.pdds[node.GPUID]
	if p.dead || pd == nil {
		p.mu.Unlock()
		d.put(p)
		return nil, syscall.ENODEV
	}
	sp, err := p.renderSpace()
	if err != nil {
		p.mu.Unlock()
		d.put(p)
		return nil, err
	}
	p.ensureVM(pd) // amdgpu_driver_open_kms: amdgpu_vm_init
	f := &renderFile{p: p, node: node, sp: sp}
	f.gem = drm.NewFile(dev, &gemBackend{p: p, pd: pd, sp: sp, gtt: dev.Info().GTTSize}, d.log)
	p.renderFiles[f] = struct{}{}
	p.mu.Unlock()
	return f, nil
}

// ProcessExited implements Device: the process is gone, whatever files are still closing.
func (d *Driver) ProcessExited(tgid int) {
	d.mu.Lock()
	p := d.procs[tgid]
	if p != nil {
		delete(d.procs, tgid)
		d.dying++
	}
	d.mu.Unlock()
	if p != nil {
		d.log.Info("kfd process exited", "tgid", tgid)
		d.teardown(p)
	}
}

// RenderMinors implements Device.
func (d *Driver) RenderMinors() []uint32 {
	var m []uint32
	for _, n := range d.sys.GPUs() {
		m = append(m, n.RenderMinor())
	}
	return m
}

// Stats counts what the driver holds, for leak checks (debugfs kfdemu/stats).
func (d *Driver) Stats() map[string]int {
	d.mu.Lock()
	procs := make([]*Process, 0, len(d.procs))
	for _, p := range d.procs {
		procs = append(procs, p)
	}
	dying := d.dying
	d.mu.Unlock()
	// A process being torn down still holds what it had (its PASID last): it counts until it ends.
	st := map[string]int{"processes": len(procs) + dying, "pasids": d.pasid.InUse(), "doorbells_watched": d.bells.Len(), "dmabufs": d.DmaBufs(),
		"ipc_handles": d.IPCHandles(), "smi_clients": int(d.smi.n.Load()),
		"wave_instructions": int(d.stats.waveInstructions.Load()), "sdma_bytes": int(d.stats.sdmaBytes.Load()),
		"worker_thread_kicks": int(shader.ThreadKicks())}
	scans, kicks := d.bells.Stats()
	arms, touches := d.bells.Arms()
	st["doorbell_scans"], st["doorbell_kicks"], st["doorbell_arms"], st["doorbell_touches"] = int(scans), int(kicks), int(arms), int(touches)
	ps := d.phys.Stats()
	st["gpu_memory_segments"], st["page_table_bytes"] = ps.Segments, int(ps.PageTableBytes)
	for _, p := range procs {
		p.mu.Lock()
		st["bos"] += len(p.bos)
		st["events"] += len(p.events)
		st["queues"] += len(p.queues)
		st["memfds"]++ // dev/kfd's
		if p.render != nil {
			st["memfds"]++
		}
		files := make([]*renderFile, 0, len(p.renderFiles))
		for f := range p.renderFiles {
			files = append(files, f)
		}
		p.mu.Unlock()
		for _, f := range files {
			o, c, l := f.gem.Stats()
			st["gem_objects"] += o
			st["gem_contexts"] += c
			st["gem_bo_lists"] += l
		}
	}
	return st
}

// Debug implements Device: MNT/sys/kernel/debug/kfd.
func (d *Driver) Debug() *topology.Tree {
	file := func(name string, f func() string) *topology.Tree {
		return &topology.Tree{Name: name, Kind: topology.File, Mode: 0444, Dynamic: true,
			Content: func() []byte { return []byte(f()) }}
	}
	return &topology.Tree{Name: "kfd", Kind: topology.Dir, Mode: 0555, Children: []*topology.Tree{
		file("processes", d.debugProcesses),
		file("memory", d.debugMemory),
		file("queues", d.debugQueues),
		file("svm", d.debugSVM),
		file("rls", d.debugRunlists),
		file("hqds", d.debugHQDs),
		file("mqds", d.debugMQDs),
		file("faults", d.debugFaults),
	}}
}

func (d *Driver) sortedProcs() []*Process {
	d.mu.Lock()
	defer d.mu.Unlock()
	ps := make([]*Process, 0, len(d.procs))
	for _, p := range d.procs {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].tgid < ps[j].tgid })
	return ps
}

func (d *Driver) debugProcesses() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-8s %-6s %-5s %-6s %-7s %s\n", "tgid", "pasid", "bos", "events", "queues", "vram_bytes")
	for _, p := range d.sortedProcs() {
		p.mu.Lock()
		var vram uint64
		for _, bo := range p.bos {
			if bo.flags&allocVRAM != 0 {
				vram += bo.size
			}
		}
		fmt.Fprintf(&b, "%-8d %-6d %-5d %-6d %-7d %d\n", p.tgid, p.pasid, len(p.bos), len(p.events), len(p.queues), vram)
		p.mu.Unlock()
	}
	return b.String()
}

func (d *Driver) debugMemory() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-8s %-18s %-10s %-14s %-12s %s\n", "tgid", "handle", "gpu_id", "va", "size", "flags mapped")
	for _, p := range d.sortedProcs() {
		p.mu.Lock()
		for _, h := range sortedHandles(p.bos) {
			bo := p.bos[h]
			fmt.Fprintf(&b, "%-8d %#-18x %-10d %#-14x %-12d %#x %d\n", p.tgid, h, bo.gpu, bo.va, bo.size, bo.flags, len(bo.mapped))
		}
		p.mu.Unlock()
	}
	return b.String()
}

func sortedHandles(m map[uint64]*bo) []uint64 {
	h := make([]uint64, 0, len(m))
	for k := range m {
		h = append(h, k)
	}
	sort.Slice(h, func(i, j int) bool { return h[i] < h[j] })
	return h
}

// kfdFile is one open of dev/kfd.
type kfdFile struct {
	p    *Process
	once sync.Once
}

func (f *kfdFile) Ioctl(c Caller, cmd uint32, arg []byte) syscall.Errno {
	return f.p.ioctl(c, cmd, arg)
}
func (f *kfdFile) Backing() *os.File { return f.p.kfdSpace.f }

// CopiesOut implements CopyOuter with kfd_ioctl's checks before its copy_from_user.
func (f *kfdFile) CopiesOut(cmd uint32) bool {
	nr := abi.IOCNr(cmd)
	return abi.IOCType(cmd) == abi.AMDKFDIOCTLBase && nr >= abi.AMDKFD_COMMAND_START &&
		nr < abi.AMDKFD_COMMAND_END && ioctls[nr].fn != nil
}

var _ CopyOuter = (*kfdFile)(nil)

func (f *kfdFile) Release() { f.once.Do(func() { f.p.d.put(f.p) }) }
