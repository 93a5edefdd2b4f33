package shader

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
)

// The compute-unit model. A GPU (Device) has CUs, each with a budget of wave slots, VGPR rows and
// LDS, as the SPI sees them (CDNA2 ISA "Work-groups": a work-group runs on one CU, its waves on the
// CU's SIMDs; the SPI launches a work-group where its waves, VGPRs and LDS fit). A dispatch's
// work-groups are admitted to CUs of the queue's CU mask and become resident until they end; every
// resident work-group is a goroutine, and the host threads that run them are a token pool shared by
// every device of the process (SetWorkers): a work-group runs a slice of at most groupSlice wave
// instructions while it holds a token, then queues for the next. So resident work-groups of every
// dispatch and every queue make progress together, as on hardware, and a wave spinning on a flag
// another work-group (or a CPU thread) sets never starves it.

// DeviceConfig sizes a Device from its topology node.
type DeviceConfig struct {
	CUs        int // compute units (simd_count / simd_per_cu)
	WavesPerCU int // simd_per_cu * max_waves_per_simd
	VGPRsPerCU int // VGPR rows (per lane) of the CU's SIMDs: simd_per_cu * 512 on gfx90a
	LDSPerCU   int // bytes (lds_size_in_kb * 1024)
	// ShaderEngines and SHsPerSE place CU i in the chip (cuLocation): array_count /
	// simd_arrays_per_engine and simd_arrays_per_engine of the node; zero: 1.
	ShaderEngines, SHsPerSE int
}

// cuLocation is where CU i of the device sits: shader engine, shader array and CU within the
// array, as amdkfd's mqd_symmetrically_map_cu_mask numbers CUs (CU mask bit i is SE i mod SEs, SH
// (i / SEs) mod SHs, CU i / (SEs * SHs)). Harvested CU slots are not modelled: the k-th CU of an
// array has CU_ID k.
func (d *Device) cuLocation(cu int) (se, sh, id uint32) {
	if cu < 0 {
		return 0, 0, 0
	}
	nse, nsh := max(d.cfg.ShaderEngines, 1), max(d.cfg.SHsPerSE, 1)
	return uint32(cu % nse), uint32(cu / nse % nsh), uint32(cu / (nse * nsh))
}

// gfx90a (MI200): 4 SIMDs per CU, 8 waves per SIMD, a 512-row unified VGPR file per SIMD, 64 KiB of
// LDS per CU, 64 GWS entries (CDNA2 ISA; the MI210 topology's simd_per_cu 4, max_waves_per_simd 8,
// lds_size_in_kb 64).
const (
	gfx90aWavesPerSIMD = 8
	gfx90aSIMDsPerCU   = 4
	gfx90aVGPRRows     = 512
	gfx90aLDS          = 64 << 10
)

// DefaultDeviceConfig is a small gfx90a with n CUs.
func DefaultDeviceConfig(n int) DeviceConfig {
	return DeviceConfig{CUs: n, WavesPerCU: gfx90aSIMDsPerCU * gfx90aWavesPerSIMD,
		VGPRsPerCU: gfx90aSIMDsPerCU * gfx90aVGPRRows, LDSPerCU: gfx90aLDS}
}

// defaultDevice serves dispatches that name no Device (tests, tools): 8 CUs of gfx90a.
var defaultDevice = NewDevice(DefaultDeviceConfig(8))

// Device is one GPU's compute units: resource accounting for admission.
type Device struct {
	cfg DeviceConfig
	// mu guards cus, rr, changed and owners (admission and release only, never per instruction).
	mu      sync.Mutex
	cus     []cuUse
	rr      int
	changed chan struct{} // closed (and replaced) when a CU frees resources and waiting is set
	waiting bool
	owners  map[uint32]int // resident waves by Engine.Owner
}

type cuUse struct{ waves, vgprs, lds, groups int }

// NewDevice returns a device with cfg's CUs, all free. Zero fields take gfx90a's values.
func NewDevice(cfg DeviceConfig) *Device {
	def := DefaultDeviceConfig(1)
	if cfg.CUs <= 0 {
		cfg.CUs = 1
	}
	if cfg.WavesPerCU <= 0 {
		cfg.WavesPerCU = def.WavesPerCU
	}
	if cfg.VGPRsPerCU <= 0 {
		cfg.VGPRsPerCU = def.VGPRsPerCU
	}
	if cfg.LDSPerCU <= 0 {
		cfg.LDSPerCU = def.LDSPerCU
	}
	return &Device{cfg: cfg, cus: make([]cuUse, cfg.CUs), changed: make(chan struct{}), owners: map[uint32]int{}}
}

// groupNeed is what one work-group takes on its CU, and whose it is (Engine.Owner).
type groupNeed struct {
	waves, vgprs, lds int
	owner             uint32
}

// fits reports whether a work-group can ever run on a CU of d.
func (d *Device) fits(n groupNeed) error {
	switch {
	case n.waves > d.cfg.WavesPerCU:
		return fmt.Errorf("%w: work-group of %d waves > %d wave slots per CU", ErrBadDispatch, n.waves, d.cfg.WavesPerCU)
	case n.waves*n.vgprs > d.cfg.VGPRsPerCU:
		return fmt.Errorf("%w: work-group of %d waves x %d VGPRs > %d VGPRs per CU", ErrBadDispatch, n.waves, n.vgprs, d.cfg.VGPRsPerCU)
	case n.lds > d.cfg.LDSPerCU:
		return fmt.Errorf("%w: %d bytes of LDS per work-group > %d per CU", ErrBadDispatch, n.lds, d.cfg.LDSPerCU)
	}
	return nil
}

// reserve places a work-group on the first CU of allowed (all CUs if empty), in round-robin order,
// where it fits now. It returns the CU, or -1 and a channel closed when resources are next freed.
func (d *Device) reserve(allowed []int, n groupNeed) (int, <-chan struct{}) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if cu := d.reserveLocked(allowed, n); cu >= 0 {
		return cu, nil
	}
	d.waiting = true
	return -1, d.changed
}

// moveClaim releases the resources of ended work-groups on CUs from and places up to len(cus)
// work-groups of the same dispatch (the same need) as reserve would, writing their CUs to cus, in
// one hold of the lock: a work-group goroutine claiming the next groups of its dispatch
// (dispatch.handOver). It returns how many it placed.
func (d *Device) moveClaim(from []int, allowed []int, n groupNeed, cus []int) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, cu := range from {
		d.unplace(cu, n)
		d.disown(n)
	}
	d.notify()
	placed := 0
	for i := range cus {
		cu := d.place(allowed, n)
		if cu < 0 {
			break
		}
		cus[i] = cu
		d.owners[n.owner] += n.waves
		placed++
	}
	return placed
}

// releaseAll returns the resources of ended work-groups of one need to their CUs (moveClaim
// placing none).
func (d *Device) releaseAll(cus []int, n groupNeed) { d.moveClaim(cus, nil, n, nil) }

func (d *Device) reserveLocked(allowed []int, n groupNeed) int {
	cu := d.place(allowed, n)
	if cu >= 0 {
		d.owners[n.owner] += n.waves
	}
	return cu
}

// place puts a group of need n on the first CU of allowed with room, round robin. d.mu held.
func (d *Device) place(allowed []int, n groupNeed) int {
	cnt := len(d.cus)
	if len(allowed) > 0 {
		cnt = len(allowed)
	}
	for i := range cnt {
		k := (d.rr + i) % cnt
		cu := k
		if len(allowed) > 0 {
			cu = allowed[k]
			if cu < 0 || cu >= len(d.cus) {
				continue
			}
		}
		u := &d.cus[cu]
		if u.waves+n.waves <= d.cfg.WavesPerCU && u.vgprs+n.waves*n.vgprs <= d.cfg.VGPRsPerCU && u.lds+n.lds <= d.cfg.LDSPerCU {
			u.waves += n.waves
			u.vgprs += n.waves * n.vgprs
			u.lds += n.lds
			u.groups++
			d.rr = k + 1
			return cu
		}
	}
	return -1
}

// release returns a work-group's resources to its CU.
func (d *Device) release(cu int, n groupNeed) {
	d.mu.Lock()
	d.releaseLocked(cu, n)
	d.mu.Unlock()
}

func (d *Device) releaseLocked(cu int, n groupNeed) {
	d.unplace(cu, n)
	d.disown(n)
	d.notify()
}

// unplace takes a group of need n off CU cu. d.mu held.
func (d *Device) unplace(cu int, n groupNeed) {
	u := &d.cus[cu]
	u.waves -= n.waves
	u.vgprs -= n.waves * n.vgprs
	u.lds -= n.lds
	u.groups--
}

// disown uncounts a group's waves from its owner's resident waves. d.mu held.
func (d *Device) disown(n groupNeed) {
	if d.owners[n.owner] -= n.waves; d.owners[n.owner] == 0 {
		delete(d.owners, n.owner)
	}
}

// notify wakes the dispatchers waiting for room. d.mu held.
func (d *Device) notify() {
	if d.waiting {
		close(d.changed)
		d.changed = make(chan struct{})
		d.waiting = false
	}
}

// ResidentWaves reports the waves of owner's dispatches resident on the device's CUs now (what
// amdgpu's get_cu_occupancy counts from the SQ's wave status for a PASID).
func (d *Device) ResidentWaves(owner uint32) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.owners[owner]
}

// WavesPerCU is a CU's wave slots (simd_per_cu x max_waves_per_simd).
func (d *Device) WavesPerCU() int { return d.cfg.WavesPerCU }

// Resident reports the work-groups and waves resident on the device's CUs now.
func (d *Device) Resident() (groups, waves int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, u := range d.cus {
		groups += u.groups
		waves += u.waves
	}
	return
}

// The host threads that run resident work-groups: a token pool shared by every Device.
var tokens atomic.Pointer[chan struct{}]

func init() { SetWorkers(0) }

// hostThreads is GOMAXPROCS as the process started: the CPUs the Go runtime was given (affinity
// mask and cgroup quota, or $GOMAXPROCS). A daemon may raise GOMAXPROCS above it afterwards, for
// goroutines that keep a P in a blocking system call (cmd/kfdemu, syscallProcs); the pool stays one
// thread per CPU.
var hostThreads = runtime.GOMAXPROCS(0)

// HostThreads is the default size of the worker pool: GOMAXPROCS as the process started.
func HostThreads() int { return hostThreads }

// SetWorkers sets how many host threads run work-groups at once (0: HostThreads). Work-groups that
// hold a token when it changes give it back to the pool they took it from.
func SetWorkers(n int) {
	if n <= 0 {
		n = hostThreads
	}
	c := make(chan struct{}, n)
	tokens.Store(&c)
}

// Workers returns the size of the worker pool.
func Workers() int { return cap(*tokens.Load()) }

// token is one held host thread.
type token struct{ c chan struct{} }

func acquire() token {
	c := *tokens.Load()
	c <- struct{}{}
	return token{c}
}

func (t token) release() { <-t.c }

// GWS is a GPU's global wave sync (CDNA2 ISA DS_GWS_*): entries (num_gws, 64 on gfx90a), each a
// semaphore or a barrier shared by the waves of the queue that holds it (ALLOC_QUEUE_GWS; kfd
// keeps one per process and GPU, as the runlist maps the GWS of one process at a time). A wave
// that must wait completes its instruction and stalls until it is granted; waiters are granted in
// arrival order, so a semaphore is fair and a release costs one wake-up.
type GWS struct {
	mu      sync.Mutex
	entries []gwsEntry
}

type gwsEntry struct {
	sema    int64     // semaphore count
	waiters []*waiter // waves stalled in DS_GWS_SEMA_P, in arrival order
	bar     []*waiter // waves stalled in DS_GWS_BARRIER
	size    uint32    // barrier: waves expected minus one (DS_GWS_INIT / DS_GWS_BARRIER data)
}

// waiter is one stalled wave: ch is closed when it may go on.
type waiter struct {
	ch   chan struct{}
	dead bool // the wave was stopped while waiting: skip it
}

// NewGWS returns a global wave sync of n entries.
func NewGWS(n int) *GWS { return &GWS{entries: make([]gwsEntry, n)} }

// Reset clears every entry (the queue holding GWS was destroyed or released it; stalled waves of a
// stopped queue are forgotten).
func (g *GWS) Reset() {
	if g == nil {
		return
	}
	g.mu.Lock()
	for i := range g.entries {
		for _, w := range g.entries[i].waiters {
			w.dead = true
		}
		g.entries[i] = gwsEntry{}
	}
	g.mu.Unlock()
}

// GWS operations (ds_gws_* opcodes).
const (
	gwsInit = iota
	gwsSemaV
	gwsSemaBR
	gwsSemaP
	gwsReleaseAll
	gwsBarrier
)

// op runs one GWS operation on entry id with the wave's data value. It returns a waiter when the
// wave must stall.
func (g *GWS) op(kind int, id int, val uint32) (*waiter, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if id < 0 || id >= len(g.entries) {
		return nil, fmt.Errorf("%w: GWS resource %d of %d", ErrIllegal, id, len(g.entries))
	}
	e := &g.entries[id]
	switch kind {
	case gwsInit: // the semaphore count, or the barrier size minus one
		e.sema, e.size = int64(val), val
	case gwsSemaV:
		e.release(1)
	case gwsSemaBR: // bulk release
		e.release(int64(val))
	case gwsReleaseAll:
		for _, w := range e.waiters {
			close(w.ch)
		}
		e.waiters = nil
	case gwsSemaP:
		if e.sema > 0 {
			e.sema--
			return nil, nil
		}
		w := &waiter{ch: make(chan struct{})}
		e.waiters = append(e.waiters, w)
		return w, nil
	case gwsBarrier:
		e.size = val
		w := &waiter{ch: make(chan struct{})}
		e.bar = append(e.bar, w)
		if uint32(len(e.bar)) > e.size {
			for _, b := range e.bar {
				close(b.ch)
			}
			e.bar = nil
		}
		return w, nil
	}
	return nil, nil
}

// release adds n to the count, granting it to stalled waves first.
func (e *gwsEntry) release(n int64) {
	for n > 0 && len(e.waiters) > 0 {
		w := e.waiters[0]
		e.waiters = e.waiters[1:]
		if w.dead {
			continue
		}
		close(w.ch)
		n--
	}
	e.sema += n
}

// cancel forgets a stalled wave (its dispatch stopped).
func (g *GWS) cancel(w *waiter) {
	g.mu.Lock()
	w.dead = true
	g.mu.Unlock()
}
