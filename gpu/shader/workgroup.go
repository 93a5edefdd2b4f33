package shader

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/cpu"

	"github.com/kfdemu/kfdemu/gpu/aql"
)

// Work-group execution (cu.go has the model): the dispatcher (the goroutine that called Dispatch,
// i.e. the queue's packet processor) admits work-groups in order to CUs with room; each resident
// work-group is a goroutine that runs its waves while it holds a worker token.
//
// Waves of a work-group interleave: a wave's turn ends at s_barrier, s_sleep, a GWS wait,
// s_endpgm or after waveTurn instructions; the work-group gives its token back after groupSlice
// instructions or when all its waves wait. A goroutine whose group ends and that admits the next one
// runs it in the rest of the same turn, token and memory port kept (runGroups): the slice counts
// wave instructions per token turn, not per group, so a worker streams through a dispatch's short
// groups without a hand-over of its token (and a wake-up of a thread) per group, and a group waiting
// for a token still gets one within groupSlice instructions. Such a goroutine claims consecutive
// work-groups, claimWaves waves' worth (handOver), so that workers take turns at the shared
// admission state once per claim, not per group, and each runs whole pages of a streaming kernel's
// arrays. Memory accesses complete within their instruction, so s_waitcnt needs no wait and a
// memory poll is an instruction like any other: the turn quantum is what lets the wave being
// waited for run.
const (
	waveTurn   = 256
	groupSlice = 32 << 10
)

// A claim: a goroutine whose short work-group ended with its turn unspent admits the next
// work-groups until they hold claimWaves waves (at most maxClaim groups, one wave each), all
// resident at once, and runs them one after another (handOver, nextClaimed); the ended ones give
// back their CU room and counts together (settle). Given the next group alone, two workers
// streaming vadd's 4-wave groups took alternate groups, each group's end and start a hold of the
// shared locks and counts, and wrote alternate KiB of every page (on 2 CPUs a plain Go loop over
// 1 KiB slices taken in turn scales 1.50x where 4 KiB slices scale 1.78x). 256 waves are 64 KiB
// of a dword-per-lane stream (vadd's 2-worker speed-up in BenchmarkInterpreter, medians of
// alternating rounds: claims of 16 waves 1.62x and of 64 1.74x over 10 rounds; of 64 1.72x, 128
// 1.75x and 256 1.81x over 8). A claim takes at most a 1/(2 x workers) share of the groups not
// yet admitted (claimSize), as guided self-scheduling does, so that a dispatch's last groups
// spread over the workers instead of queueing behind one claim. A claim's groups not started
// hold no token and must never wait behind a group that waits for them: their goroutine's first
// yield keeps them (its group started in the rest of a turn), any later yield, a GWS wait, a
// suspension or an error gives each a goroutine of its own (unclaim), where it takes a token as a
// newly admitted group does.
const (
	claimWaves = 256
	maxClaim   = 64
)

// PortPool lends a window on a dispatch's memory to a work-group while it runs (each CU has its own
// UTCL1; an mmu.Port is used by one goroutine at a time) and takes it back.
type PortPool interface {
	Get() Memory
	Put(Memory)
}

// cinst is a decoded instruction in a dispatch's code cache, with links to the instructions that
// followed it (sequentially and by the last branch taken), so a wave looks the cache up only on
// a new edge.
type cinst struct {
	Inst
	pc    uint64
	raw   [3]uint32 // the instruction's own words, as decoded (CodeCache checks them)
	next  atomic.Pointer[cinst]
	taken atomic.Pointer[edge]
}

type edge struct {
	pc uint64
	to *cinst
}

type dispatch struct {
	ctx   context.Context
	kill  <-chan struct{} // closed: stop inside a work-group (nil: ctx does)
	l     launch
	mem   Memory
	ports PortPool
	dev   *Device
	cus   []int
	need  groupNeed
	nregs int // VGPRs allocated per wave
	ng    [3]uint64
	code  *codeGraph // the dispatch's decoded code, shared by its work-groups (codecache.go)
	kc    kcache     // the scalar data cache, emptied at each run of drive
	gws   *GWS

	abort chan struct{} // closed when waves must stop inside their work-group
	// Suspension in place (CWSR, suspend.go): a suspendable dispatch whose context ends stops
	// admitting work-groups and parks the resident ones at instruction boundaries.
	suspendable bool
	suspended   atomic.Bool
	// The fields above are read by every running wave (per instruction, wave or round of a
	// group's waves) and written only when a dispatch starts, stops or suspends; those below are
	// written per claim, token turn or ended group. Apart, a worker's writes do not take the
	// other workers' read lines away.
	_           cpu.CacheLinePad
	abortOnce   sync.Once
	running     atomic.Int64  // resident work-groups holding a worker token
	resident    atomic.Int64  // admitted work-groups that have not ended
	parked      atomic.Int64  // resident work-groups suspended in place, or asleep on GWS
	amu         sync.Mutex    // admission (admit): guards next, admitting and the writes of ctx
	admitting   bool          // a run of drive is in its admission loop
	next, total uint64        // admission: the next work-group and the grid's count
	reported    Stats         // what earlier returns (suspended) reported
	wake        chan struct{} // a work-group finished or stalled (cap 1)
	fresh       atomic.Int64  // resident work-groups that have not yet given their token back
	wg          sync.WaitGroup
	_           cpu.CacheLinePad

	mu         sync.Mutex // guards the fields below
	err        error      // the failure of the lowest-numbered failing work-group
	errGroup   uint64
	midStop    uint64 // lowest work-group stopped inside (killed); valid if stopped
	stopped    bool
	slots      []uint32                      // free scratch wave slots
	resumeCh   chan struct{}                 // closed by resume (nil when not suspended)
	parkedSusp int64                         // groups parkWait counted in parked since the last resume (d.mu)
	suspCh     atomic.Pointer[chan struct{}] // closed while suspended (nil when not): wakes groups waiting for a worker
	gen        uint64                        // runs of drive: Resume starts a new one
	free       []*group                      // finished work-groups whose waves and LDS are reused
	freeBuf    [4]*group                     // free's first array (run): no allocation for small dispatches

	stats Stats // updated with atomic adds
}

// Stats counts executed work.
type Stats struct {
	WaveInstructions uint64
	Waves            uint64
	Groups           uint64
	Interrupts       uint64 // s_sendmsg(MSG_INTERRUPT) host interrupts raised (legacy.go)
}

type group struct {
	d     *dispatch
	idx   uint64 // flattened work-group id
	id    [3]uint64
	cu    int
	lds   []byte
	waves []*wave
	mem   Memory // while the group holds its token
	tok   token
	// A vectored access's pieces (vmem.go globalRunsV), kept to avoid allocating per access.
	vas   [lanes]uint64
	vbufs [lanes][]byte
	slots []uint32 // scratch wave slots of its waves
	fresh bool     // counted in dispatch.fresh
	// The claim still to run after this group (handOver): work-groups claimIdx, claimIdx+1, ...
	// on the CUs claimCUs, admitted (resident, in the wait group, not fresh). Only a group that
	// holds its token has one.
	claimIdx uint64
	claimCUs []int
	claimBuf [maxClaim]int
	// The CUs of groups of the claim that ended: their room, resident count and wait-group count
	// are given back together (settle, or handOver with the next claim). Emptied, not freed: the
	// group object keeps the array.
	ended []int
	// Counts not yet added to dispatch.stats (flushStats): the work-groups a goroutine runs in a
	// row (handOver) add theirs once, not each to the shared counters.
	nInst, nWaves, nGroups uint64
}

// flushStats adds the group's counts to the dispatch's.
func (g *group) flushStats() {
	d := g.d
	if g.nInst != 0 {
		atomic.AddUint64(&d.stats.WaveInstructions, g.nInst)
	}
	if g.nWaves != 0 {
		atomic.AddUint64(&d.stats.Waves, g.nWaves)
	}
	if g.nGroups != 0 {
		atomic.AddUint64(&d.stats.Groups, g.nGroups)
	}
	g.nInst, g.nWaves, g.nGroups = 0, 0, 0
}

// Fetcher is implemented by a Memory that distinguishes instruction fetches (execute permission) from data
// reads; the dispatcher then reads code only through Fetch.
type Fetcher interface {
	Fetch(va uint64, p []byte) error
}

// killed reports whether waves must stop inside their work-group.
func (d *dispatch) killed() bool {
	select {
	case <-d.abort:
		return true
	default:
		return false
	}
}

func (d *dispatch) stopAll() { d.abortOnce.Do(func() { close(d.abort) }) }

func (d *dispatch) signal() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// vgprsOf is the VGPR allocation of a wave from COMPUTE_PGM_RSRC1.VGPRS (gfx90a: granule of 8,
// arch VGPRs and AGPRs together).
func vgprsOf(rsrc1 uint32) int { return int(rsrc1&0x3f+1) * 8 }

// run is the common dispatch: SPI launches the work-groups' waves with the initial register state.
func run(ctx context.Context, mem Memory, l launch, dev *Device, cus []int, ports PortPool, gw *GWS, code *CodeCache) (Stats, error) {
	if dev == nil {
		dev = defaultDevice
	}
	d := &dispatch{ctx: ctx, kill: l.kill, l: l, mem: mem, ports: ports, dev: dev, cus: cus, gws: gw,
		abort: make(chan struct{}), wake: make(chan struct{}, 1)}
	d.free = d.freeBuf[:0]
	if l.pgm&0xff != 0 {
		return d.stats, fmt.Errorf("%w: entry %#x not 256-byte aligned", ErrBadDispatch, l.pgm)
	}
	wgItems := 1
	for i := 0; i < 3; i++ {
		if l.wg[i] == 0 {
			return d.stats, fmt.Errorf("%w: zero work-group size", ErrBadDispatch)
		}
		wgItems *= int(l.wg[i])
	}
	if wgItems > 1024 {
		return d.stats, aql.Classify(fmt.Errorf("%w: work-group of %d work-items", ErrBadDispatch, wgItems), aql.ErrGroupTooLarge)
	}
	if l.lds > 64<<10 {
		return d.stats, aql.Classify(fmt.Errorf("%w: %d bytes of LDS (gfx90a has 64 KiB)", ErrBadDispatch, l.lds), aql.ErrGroupTooLarge)
	}
	nw := (wgItems + lanes - 1) / lanes
	// Each resident wave owns one scratch slot of waveScratch bytes (the CP checked the queue's
	// scratch against the packet before launching).
	waveScratch := l.waveScratch
	if l.priv > 0 && (uint64(l.priv)*lanes > waveScratch || waveScratch*uint64(nw) > l.scratchSize) {
		return d.stats, fmt.Errorf("%w: scratch of %d bytes (%d per wave) < %d per wave for %d waves", ErrBadDispatch,
			l.scratchSize, waveScratch, uint64(l.priv)*lanes, nw)
	}
	d.nregs = vgprsOf(l.rsrc1)
	if acc := int(l.rsrc3&0x3f+1) * 4; acc < d.nregs { // ACCUM_OFFSET: AGPRs a0.. follow the arch VGPRs
		d.nregs = 256 + d.nregs - acc
	}
	d.need = groupNeed{waves: nw, vgprs: vgprsOf(l.rsrc1), lds: int(l.lds), owner: l.owner}
	if err := dev.fits(d.need); err != nil {
		return d.stats, aql.Classify(err, aql.ErrGroupTooLarge)
	}
	if l.priv > 0 { // the queue's scratch is divided into wave slots (COMPUTE_TMPRING_SIZE.WAVES)
		n := min(l.scratchSize/waveScratch, 1<<20)
		d.slots = make([]uint32, n)
		for i := range d.slots {
			d.slots[i] = uint32(n) - 1 - uint32(i) // pop order 0, 1, ...
		}
	}
	total := uint64(1)
	for i := 0; i < 3; i++ {
		d.ng[i] = (l.grid[i] + uint64(l.wg[i]) - 1) / uint64(l.wg[i])
		total *= d.ng[i]
	}
	d.next, d.total, d.suspendable = l.start, total, l.suspendable
	read := mem.Read
	if f, ok := mem.(Fetcher); ok {
		read = f.Fetch
	}
	d.code = code.get(l.pgm, read) // the CP invalidates the instruction cache: kept code is checked
	defer code.put(d.code)
	st, err := d.drive(ctx)
	if _, ok := err.(*SuspendedError); !ok {
		d.spareGroups()
	}
	return st, err
}

// drive admits the dispatch's work-groups from d.next and waits for them (run, and Resume after a
// suspension).
func (d *dispatch) drive(ctx context.Context) (Stats, error) {
	d.amu.Lock()
	d.ctx = ctx
	d.amu.Unlock()
	d.kc.start() // the CP invalidates the scalar cache at the dispatch's start (and a resumed one's)
	stopWatch := make(chan struct{})
	k := d.kill // read here: Resume replaces it while an earlier watcher may still be exiting
	d.mu.Lock()
	gen := d.gen // a watcher acts only on its own run: an earlier one may still be exiting
	d.mu.Unlock()
	go func() { // a closed Kill (or the context, without Kill) stops waves inside their groups
		var done <-chan struct{}
		if k == nil || d.suspendable {
			done = ctx.Done()
		}
		select {
		case <-k:
			d.stopRun(gen, false)
		case <-done:
			d.stopRun(gen, d.suspendable) // suspendable: CWSR, waves stop where they stand and are kept
		case <-stopWatch:
		}
	}()
	defer close(stopWatch)
	d.amu.Lock()
	d.admitting = true
	d.amu.Unlock()
	for {
		g, freed, more, _ := d.admit()
		if g != nil {
			d.spawnGroup(g)
			continue
		}
		if !more {
			break
		}
		d.waitAdmission(freed)
	}
	d.amu.Lock()
	d.admitting = false // d.next is final for this run: no finishing group admits another
	d.amu.Unlock()
	if d.suspendable && ctx.Err() != nil && !d.killed() {
		d.suspend() // (the watcher may not have seen the context yet)
	}
	if d.suspendable && d.waitSuspended() {
		return d.delta(), &SuspendedError{S: &Suspended{d: d}, NextGroup: d.next}
	}
	d.wg.Wait()
	st := d.delta()
	switch {
	case d.err != nil:
		return st, d.err
	case d.stopped:
		return st, &PreemptedError{NextGroup: min(d.midStop, d.next), MidGroup: true}
	case d.next < d.total:
		return st, &PreemptedError{NextGroup: d.next}
	}
	return st, nil
}

// admit admits work-group d.next when the rules allow it now: it returns the group, counted
// resident and fresh, to be run. Else more tells whether admission goes on (wait for a finished or
// stalled group, or for freed, the CU room it needs) or has ended for this run of drive (all
// admitted, the context ended, killed, suspended, or drive left its loop). last: the group
// returned is the grid's last. Both drive and a work-group goroutine whose group just ended call
// it (the latter runs the group it gets itself: no wake-up of the dispatcher per group).
func (d *dispatch) admit() (g *group, freed <-chan struct{}, more, last bool) {
	d.amu.Lock()
	defer d.amu.Unlock()
	if d.admissionOver() {
		return nil, nil, false, false
	}
	// Admit while fewer resident groups than workers are running their first slice, or when
	// resident ones wait or run long (a spinning group must not keep out the one it waits for):
	// resident groups stay few for short kernels and fill the CUs otherwise.
	if d.fresh.Load() > int64(Workers()) || !d.haveSlots(d.need.waves) {
		return nil, nil, true, false
	}
	cu, freed := d.dev.reserve(d.cus, d.need)
	if cu < 0 {
		return nil, freed, true, false
	}
	g = d.newGroup(d.next, cu)
	d.fresh.Add(1)
	d.resident.Add(1)
	d.wg.Add(1)
	d.next++
	return g, nil, true, d.next == d.total
}

// admissionOver reports whether this run of drive admits no more work-groups: all admitted, the
// context ended, killed, suspended, or drive left its loop. d.amu held.
func (d *dispatch) admissionOver() bool {
	return !d.admitting || d.next >= d.total || d.ctx.Err() != nil || d.killed() || d.suspended.Load()
}

// delta returns the counters since the last return of drive.
func (d *dispatch) delta() Stats {
	cur := Stats{WaveInstructions: atomic.LoadUint64(&d.stats.WaveInstructions), Waves: atomic.LoadUint64(&d.stats.Waves),
		Groups: atomic.LoadUint64(&d.stats.Groups), Interrupts: atomic.LoadUint64(&d.stats.Interrupts)}
	st := Stats{WaveInstructions: cur.WaveInstructions - d.reported.WaveInstructions, Waves: cur.Waves - d.reported.Waves,
		Groups: cur.Groups - d.reported.Groups, Interrupts: cur.Interrupts - d.reported.Interrupts}
	d.reported = cur
	return st
}

// waitAdmission waits until a group finishes or stalls, resources free, or the dispatch stops.
func (d *dispatch) waitAdmission(freed <-chan struct{}) {
	select {
	case <-d.wake:
	case <-freed:
	case <-d.ctx.Done():
	case <-d.abort:
	}
}

func (d *dispatch) haveSlots(nw int) bool {
	if d.l.priv == 0 {
		return true
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.slots) >= nw
}

// newGroup builds work-group gi on CU cu with its waves' initial state.
func (d *dispatch) newGroup(gi uint64, cu int) *group {
	d.mu.Lock()
	var g *group
	if n := len(d.free); n > 0 {
		g = d.free[n-1]
		d.free = d.free[:n-1]
	}
	d.mu.Unlock()
	if g == nil {
		if sp, _ := spares.Get().(*group); sp != nil {
			g = sp
			g.d = d
			if uint64(cap(g.lds)) >= d.l.lds {
				g.lds = g.lds[:d.l.lds]
				clear(g.lds)
			} else {
				g.lds = make([]byte, d.l.lds)
			}
		} else {
			g = &group{d: d, lds: make([]byte, d.l.lds), waves: make([]*wave, 0, d.need.waves)}
		}
	} else {
		clear(g.lds)
	}
	d.initGroup(g, gi, cu)
	return g
}

// spares holds ended dispatches' work-groups, with their LDS and their waves' register files, for
// the groups of later dispatches (a tiny dispatch otherwise allocates, and the collector frees, a
// group of 3 KiB and a register file per wave each time). A spare keeps nothing of its dispatch
// (its memory, code, process): spareGroups empties it, and whoever takes it clears the LDS and
// registers it uses, so the values of another dispatch, maybe another process's, never show.
var spares sync.Pool

// spareGroups gives the ended dispatch's free work-groups to later dispatches.
func (d *dispatch) spareGroups() {
	d.mu.Lock()
	free := d.free
	d.free = nil
	d.mu.Unlock()
	for _, g := range free {
		waves := g.waves[:cap(g.waves)]
		for _, w := range waves {
			if w != nil {
				*w = wave{v: w.v} // nothing of this dispatch (its memory, code, process) stays reachable
			}
		}
		clear(g.vbufs[:]) // slices of the dispatch's memory
		*g = group{lds: g.lds, waves: waves[:0], slots: g.slots[:0], ended: g.ended[:0]}
		spares.Put(g)
	}
}

// initGroup makes g work-group gi on CU cu, fresh, with its waves' initial state (and scratch
// slots), its LDS already zero.
func (d *dispatch) initGroup(g *group, gi uint64, cu int) {
	l := &d.l
	ng := d.ng
	g.idx, g.cu, g.fresh = gi, cu, true
	g.id = [3]uint64{gi % ng[0], gi / ng[0] % ng[1], gi / (ng[0] * ng[1])}
	// partial work-groups at the grid edge
	var sz [3]int
	for i := 0; i < 3; i++ {
		sz[i] = int(l.wg[i])
		if rem := l.grid[i] - g.id[i]*uint64(l.wg[i]); rem < uint64(sz[i]) {
			sz[i] = int(rem)
		}
	}
	nw := (sz[0]*sz[1]*sz[2] + lanes - 1) / lanes
	if l.priv > 0 {
		d.mu.Lock()
		n := len(d.slots)
		g.slots = append(g.slots[:0], make([]uint32, d.need.waves)...)
		for i := range g.slots { // the free list is a stack: wave 0 gets the lowest free slot
			g.slots[i] = d.slots[n-1-i]
		}
		d.slots = d.slots[:n-d.need.waves]
		d.mu.Unlock()
	}
	for len(g.waves) < nw {
		i := len(g.waves)
		if i < cap(g.waves) {
			// a spare's wave (newGroup; spareGroups left only its register file): cleared
			if w := g.waves[:i+1][i]; w != nil && w.d == nil && cap(w.v) >= d.nregs {
				v := w.v[:d.nregs]
				clear(v)
				*w = wave{v: v, id: i, d: d, g: g}
				g.waves = g.waves[:i+1]
				continue
			}
		}
		g.waves = append(g.waves, &wave{v: make([][lanes]uint32, d.nregs), id: i, d: d, g: g})
	}
	g.waves = g.waves[:nw]
	first := d.code.first.Load() // nil until a wave has decoded it: turn fetches it then
	for _, w := range g.waves {
		w.done, w.yield, w.block, w.gw, w.cur = false, false, nil, nil, first
		d.initWave(w, g, sz, nw)
	}
	g.nWaves += uint64(nw)
}

// Work-group goroutines are reused: one whose work-group ended waits runnerIdle for the next
// resident group before it exits, so that group starts on a stack the interpreter has already grown
// (a new goroutine starts small and copies its stack on its first deep call, about 4 % of vadd).
const runnerIdle = 20 * time.Millisecond

var runnerQ = make(chan *group)

// spawnGroup runs g on a goroutine of its own (runGroups), an idle work-group goroutine or a new
// one, counted as wanting a host thread until it starts (threads.go).
func (d *dispatch) spawnGroup(g *group) {
	threadWant.Add(1)
	select {
	case runnerQ <- g:
	default:
		go runner(g)
	}
}

// runner is a work-group goroutine: it runs g's dispatch's groups from g (runGroups), then waits
// runnerIdle for the next group spawnGroup hands it.
func runner(g *group) {
	t := time.NewTimer(runnerIdle)
	defer t.Stop()
	for {
		threadWant.Add(-1)
		g.d.runGroups(g)
		g = nil
		t.Reset(runnerIdle)
		select {
		case g = <-runnerQ:
		case <-t.C:
			return
		}
	}
}

// runGroups runs g and then the groups its goroutine admits as each one ends, each in what is
// left of the token turn of the one before it (runGroup).
func (d *dispatch) runGroups(g *group) {
	left := 0
	for n := 0; g != nil; n++ {
		if n%threadLook == threadLook-1 {
			lookThreads()
		}
		var handed bool
		g, left, handed = d.runGroup(g, left)
		if !handed {
			d.wg.Done() // after admit: the next group is counted before this one is done
		}
	}
}

// runGroup runs a resident work-group on its goroutine. When it ends, the goroutine admits the next
// work-group if it may (admit), and returns it. left > 0: g runs in the rest of the previous
// group's token turn, whose token and port it was given, for left wave instructions before it
// yields; it returns what is left of its own turn when it hands the token to next (0: it gave the
// token back and next takes one). handed: next is g itself, made the next work-group (handOver),
// and counted in the dispatch's wait group in its place.
func (d *dispatch) runGroup(g *group, left int) (next *group, nextLeft int, handed bool) {
	if left <= 0 {
		g.take()
		left = groupSlice
	}
	left, err := d.execGroup(g, left)
	var steps uint64
	for _, w := range g.waves {
		steps += w.steps
	}
	g.nInst += steps
	for _, w := range g.waves {
		if w.gw != nil && d.gws != nil {
			d.gws.cancel(w.gw) // stopped while stalled: a later release must not go to it
		}
	}
	if err == nil && len(g.claimCUs) > 0 {
		d.nextClaimed(g)
		if left <= 0 { // the turn ended with g: the next claimed group takes a token (runGroup)
			g.give()
		}
		return g, left, true
	}
	if err == nil && left > 0 && d.handOver(g) {
		return g, left, true
	}
	d.unclaim(g) // the claim's ended groups; after an error, the groups not started stop on their own
	if g.cu >= 0 {
		d.dev.release(g.cu, d.need)
	}
	d.mu.Lock()
	for i := len(g.slots) - 1; i >= 0; i-- {
		d.slots = append(d.slots, g.slots[i])
	}
	g.slots = g.slots[:0]
	switch {
	case err == nil:
	case errors.Is(err, errStopMidGroup):
		if !d.stopped || g.idx < d.midStop {
			d.midStop = g.idx
		}
		d.stopped = true
	default:
		if d.err == nil || g.idx < d.errGroup {
			d.err, d.errGroup = err, g.idx
		}
	}
	d.mu.Unlock()
	if err == nil {
		g.nGroups++
	}
	g.flushStats()
	if err == nil {
		if d.l.groupDone != nil {
			d.l.groupDone(g.idx, g.cu)
		}
	} else if !errors.Is(err, errStopMidGroup) {
		d.stopAll() // a failing work-group stops the dispatch (the queue goes to its error state)
	}
	if g.fresh { // unfresh without its signal: admit below, or the signal, follows
		g.fresh = false
		d.fresh.Add(-1)
	}
	tok, mem := g.tok, g.mem
	keep := left > 0 && err == nil
	if keep {
		g.mem = nil
	} else {
		g.give()
	}
	d.mu.Lock()
	d.free = append(d.free, g) // reused by a later work-group: g is not touched after this
	d.mu.Unlock()
	d.resident.Add(-1)
	next, _, _, last := d.admit()
	if next == nil || last {
		d.signal() // the dispatcher admits, or sees the admission end or the last group end
	}
	if !keep {
		return next, 0, false
	}
	if next == nil { // nothing to run in the rest of the turn
		d.giveBack(tok, mem)
		return nil, 0, false
	}
	next.tok, next.mem = tok, mem // still counted running
	return next, left, false
}

// handOver ends g, which finished without error with instructions left in its turn, and makes it
// the next work-group when the admission rules allow one now (admit): the group object, token,
// port and goroutine go on, one resident group ends and one starts (the resident count and the
// wait group are unchanged), and the CU room moves in one hold of the device's lock. If g never
// gave its token back (a short group), the groups after the next one are claimed with it, up to
// claimWaves waves: admitted now, run by this goroutine after it (nextClaimed). Only the
// dispatch's admission lock and the device's are taken: with short work-groups (a vector add's
// 4 waves of 30 instructions) the locks and counters each group used to take were the shared cache
// lines two workers fought over (kfdemu bench's vadd on 2 workers: 1.3x the rate of 1). It reports
// false when it did not (g is then ended the usual way; g.cu may have become -1: its room was
// given back and none was found for another group).
func (d *dispatch) handOver(g *group) bool {
	if g.cu < 0 || len(g.slots) > 0 || d.l.priv > 0 {
		return false
	}
	d.amu.Lock()
	fresh := d.fresh.Load()
	if g.fresh {
		fresh--
	}
	if d.admissionOver() || fresh > int64(Workers()) {
		d.amu.Unlock()
		return false
	}
	k := uint64(1)
	if g.fresh && d.need.waves < claimWaves {
		k = claimSize(d.need.waves, d.total-d.next, Workers())
	}
	old := g.cu
	from := append(g.ended, old) // g and the claim's groups that ended before it
	cus := g.claimBuf[:k]
	n := d.dev.moveClaim(from, d.cus, d.need, cus)
	g.ended = from[:0]
	// g is counted in place of the first group placed, or ends the usual way (g.cu -1): the
	// other groups that ended are uncounted, the other groups placed counted.
	delta := len(from) - n
	if n == 0 {
		g.cu = -1
		delta--
	}
	if delta != 0 {
		d.resident.Add(int64(-delta))
		d.wg.Add(-delta)
	}
	if n == 0 {
		d.amu.Unlock()
		return false
	}
	gi := d.next
	d.next += uint64(n)
	last := d.next == d.total
	d.amu.Unlock()
	g.nGroups++
	if d.l.groupDone != nil {
		d.l.groupDone(g.idx, old)
	}
	if !g.fresh {
		d.fresh.Add(1)
	}
	clear(g.lds)
	d.initGroup(g, gi, cus[0]) // fresh again
	g.claimIdx, g.claimCUs = gi+1, cus[1:n]
	if last {
		d.signal() // the dispatcher sees the admission end
	}
	return true
}

// claimSize is how many of the left groups not yet admitted (left >= 1) of waves waves each a
// claim takes: claimWaves waves' worth, at most maxClaim groups and at most a 1/(2 x workers)
// share of left, at least one.
func claimSize(waves int, left uint64, workers int) uint64 {
	share := uint64(2 * max(workers, 1))
	return max(min(uint64((claimWaves+waves-1)/max(waves, 1)), maxClaim, (left+share-1)/share), 1)
}

// nextClaimed ends g, which finished without error, and makes it the next work-group of its claim
// (handOver), already admitted. g's CU room, resident count and wait-group count are given back
// with the claim's other ended groups (settle, or the next claim's handOver): one hold of the
// device's lock and one add to each shared count per claim. (Given back per group, claims of
// vadd's groups on 2 workers scaled no better than single groups.) Until then the ended groups
// count as resident: at most maxClaim-1 of them, until the claim's last group ends or its
// goroutine lets the claim go.
func (d *dispatch) nextClaimed(g *group) {
	g.ended = append(g.ended, g.cu)
	g.nGroups++
	if d.l.groupDone != nil {
		d.l.groupDone(g.idx, g.cu)
	}
	if !g.fresh {
		d.fresh.Add(1)
	}
	gi, cu := g.claimIdx, g.claimCUs[0]
	g.claimIdx, g.claimCUs = gi+1, g.claimCUs[1:]
	clear(g.lds)
	d.initGroup(g, gi, cu) // fresh
}

// settle gives back the CU room, resident count and wait-group count of the claim's ended groups.
func (d *dispatch) settle(g *group) {
	n := len(g.ended)
	d.dev.releaseAll(g.ended, d.need)
	g.ended = g.ended[:0]
	d.resident.Add(int64(-n))
	d.wg.Add(-n)
}

// unclaim settles g's ended groups and gives each group of g's claim that has not started a
// goroutine of its own, where it takes a token as a newly admitted group does.
func (d *dispatch) unclaim(g *group) {
	if len(g.ended) > 0 {
		d.settle(g)
	}
	if len(g.claimCUs) == 0 {
		return
	}
	gi := g.claimIdx
	for _, cu := range g.claimCUs {
		ng := d.newGroup(gi, cu)
		gi++
		d.fresh.Add(1)
		d.spawnGroup(ng)
	}
	g.claimCUs = nil
}

// take acquires a worker token and a memory port; give returns both.
func (g *group) take() {
	d := g.d
	for {
		// A suspension reaches a group waiting for a worker too: it parks without taking one
		// (parkWait), so suspending many resident groups costs no hand-over of workers.
		// Killed, it only waits for a worker: parkWait returns at once then, and a closed
		// suspension channel would make this loop spin forever (seen: a queue destroyed while its
		// dispatch was suspended hung DESTROY_QUEUE with a group spinning here).
		var sus <-chan struct{}
		if p := d.suspCh.Load(); p != nil && !d.killed() {
			sus = *p
		}
		c := *tokens.Load()
		threadWant.Add(1)
		select {
		case c <- struct{}{}:
			g.tok = token{c}
		case <-sus:
			threadWant.Add(-1)
			d.parkWait(g)
			continue
		}
		break
	}
	threadWant.Add(-1)
	threadHeld.Add(1)
	d.running.Add(1)
	g.mem = g.d.mem
	if g.d.ports != nil {
		g.mem = g.d.ports.Get()
	}
}

func (g *group) give() {
	g.d.giveBack(g.tok, g.mem)
	g.mem = nil
}

// giveBack returns a running group's token and port.
func (d *dispatch) giveBack(tok token, mem Memory) {
	if d.ports != nil {
		d.ports.Put(mem)
	}
	threadHeld.Add(-1)
	tok.release()
	if d.running.Add(-1) == 0 && d.suspended.Load() {
		d.signal() // the dispatcher waits for the last running group to park
	}
}

// yield gives the token to the next work-group that wants one and queues for it again. Gosched lets
// work-groups that are runnable but not yet queued for a token (just admitted) reach the queue: a
// CPU-bound goroutine would otherwise keep its thread and take the token straight back.
func (g *group) yield() {
	g.give()
	runtime.Gosched()
	g.take()
}

// unfresh marks the group as no longer in its first slice (it finished, waits or runs long).
func (g *group) unfresh() {
	if g.fresh {
		g.fresh = false
		g.d.fresh.Add(-1)
		g.d.signal()
	}
}

// execGroup runs the group's waves until all end, one fails, or the dispatch stops them. It holds
// a token with budget wave instructions left in its turn and returns what is left when the group
// ends.
func (d *dispatch) execGroup(g *group, budget int) (int, error) {
	if d.killed() { // admitted (a claim's, or waiting for a token) but not started: it never runs
		return budget, errStopMidGroup
	}
	for {
		if d.suspended.Load() {
			if err := d.park(g); err != nil {
				return budget, err
			}
			budget = groupSlice
		}
		live, atBar, waiting, slept := 0, 0, 0, 0
		var waitOn <-chan struct{}
		for _, w := range g.waves {
			if w.done {
				continue
			}
			if w.block != nil {
				select {
				case <-w.block:
					w.block, w.gw = nil, nil
				default:
				}
			}
			if !w.bar && w.block == nil {
				n, err := d.turn(g, w)
				budget -= n
				if err != nil {
					return budget, err
				}
				if w.done {
					continue
				}
			}
			live++
			switch {
			case w.bar:
				atBar++
			case w.block != nil:
				waiting++
				waitOn = w.block
			case w.yield:
				w.yield = false
				slept++
			}
		}
		switch {
		case live == 0:
			return budget, nil
		case atBar == live: // every live wave arrived: release the barrier
			for _, w := range g.waves {
				w.bar = false
			}
			continue
		case waiting > 0 && atBar+waiting == live: // all wait on GWS: sleep until released
			g.unfresh()
			d.unclaim(g)
			g.give()
			d.parked.Add(1) // executes nothing until released (a suspension needs no more)
			d.signal()
			select {
			case <-waitOn:
			case <-d.abort:
			}
			d.parked.Add(-1)
			g.take()
			budget = groupSlice
		case budget <= 0 || slept > 0 && atBar+waiting+slept == live:
			// A group's first yield keeps its claim (it started in the rest of a turn, maybe
			// its last instructions); a later one, after a whole slice of its own, gives it up:
			// the group may be waiting for a claimed one.
			if !g.fresh {
				d.unclaim(g)
			}
			g.unfresh()
			g.yield()
			budget = groupSlice
		}
		if d.killed() {
			return budget, errStopMidGroup
		}
	}
}

// turn runs w until its turn ends: s_endpgm, s_barrier, s_sleep, a GWS wait, waveTurn
// instructions, or an error.
func (d *dispatch) turn(g *group, w *wave) (n int, err error) {
	// A panic inside a routine is an interpreter bug: the wave stops with ErrInternal (the daemon
	// never panics on client code). Recovered once per turn, not per instruction.
	var in *cinst
	defer func() {
		if r := recover(); r != nil {
			pc, text := w.pc, "?"
			if in != nil {
				pc, text = in.pc, in.String()
			}
			err = &WaveError{PC: pc, Inst: text, Err: fmt.Errorf("%w: %v", ErrInternal, r), Stack: debug.Stack()}
		}
	}()
	limit := d.l.maxSteps
	if limit == 0 {
		limit = 1 << 32
	}
	// chk is the next step count that needs a look: the limit, or a count s with
	// s%waveStopCheck == waveStopCheck-1 (the dispatch's stop and suspend flags).
	chk := min(limit, w.steps|(waveStopCheck-1))
	for n < waveTurn && !w.done && !w.bar && !w.yield && w.block == nil {
		in = w.cur
		if in == nil || in.pc != w.pc {
			if in, err = d.fetch(g, w.pc); err != nil {
				return n, err
			}
		}
	run:
		if w.steps >= chk {
			if w.steps >= limit {
				return n, &WaveError{PC: w.pc, Inst: in.String(), Err: ErrStepLimit}
			}
			if d.killed() {
				return n, errStopMidGroup
			}
			if d.suspended.Load() {
				return n, nil // the group parks (execGroup) before this instruction
			}
			lookThreads() // a long wave's look at the pool (threads.go)
			chk = min(limit, (w.steps+1)|(waveStopCheck-1))
		}
		w.steps++
		n++
		pc := w.pc
		// step's common case here: no VSKIP or VGPR index mode, an implemented routine run
		// without its rounding wrapper (round to nearest even), no error.
		if fn := in.near; fn != nil && w.mode&(in.rmask|modeGPRIdxEn|modeVSkip) == 0 {
			var err error
			one := false // a v32k routine's one-lane case, run here without calling the routine
			if s := in.v32; s == nil {
				err = fn(w, &in.Inst)
			} else if one = v32own(w, &in.Inst, s); !one {
				err = v32lanes(w, &in.Inst, s.t, s.n, s.f, s.k)
			}
			if one && w.err == nil {
				// v32own ends no turn (no error, barrier, sleep, wait or branch): the
				// loop's tests hold; the next instruction is at w.pc + in.Size.
				w.pc += uint64(in.Size)
				if w.cur = in.next.Load(); w.cur != nil {
					if n < waveTurn {
						// the one-lane instructions after it, then the next one the usual way
						if in, n = v32run(w, w.cur, n, chk); n < waveTurn {
							goto run
						}
					}
					continue
				}
			} else if err != nil || w.err != nil {
				if err = d.finish(w, &in.Inst, pc, err); err != nil {
					return n, err
				}
			} else if !w.done {
				fallThrough := w.pc == pc // no branch moved w.pc: the next instruction is in.next
				w.pc += uint64(in.Size)
				if fallThrough {
					if w.cur = in.next.Load(); w.cur != nil {
						if n < waveTurn && !w.bar && !w.yield && w.block == nil {
							// the loop's tests hold (w.done is false) and in.next is the
							// instruction at w.pc: straight to its step checks
							in = w.cur
							goto run
						}
						continue
					}
				}
			}
		} else if err := d.step(w, &in.Inst); err != nil {
			return n, err
		}
		// Follow the cached edge to the next instruction.
		w.cur = nil
		if w.done {
			continue
		}
		if w.pc == pc+uint64(in.Size) {
			w.cur = in.next.Load()
			if w.cur == nil {
				if nx, err := d.fetch(g, w.pc); err == nil {
					in.next.Store(nx)
					w.cur = nx
				}
			}
		} else if e := in.taken.Load(); e != nil && e.pc == w.pc {
			w.cur = e.to
		} else if nx, err := d.fetch(g, w.pc); err == nil {
			in.taken.Store(&edge{pc: w.pc, to: nx})
			w.cur = nx
		}
	}
	return n, nil
}

// fetch returns the decoded instruction at pc from the dispatch's code cache, decoding it on a miss.
func (d *dispatch) fetch(g *group, pc uint64) (*cinst, error) {
	if v, ok := d.code.m.Load(pc); ok {
		return v.(*cinst), nil
	}
	return d.decodeAt(g, pc)
}

// decodeAt is fetch's miss: it reads and decodes the instruction at pc and caches it. (Apart from
// fetch, whose hit path runs at every turn of a wave: its frame stays small.)
//
//go:noinline
func (d *dispatch) decodeAt(g *group, pc uint64) (*cinst, error) {
	read := g.mem.Read
	if f, ok := g.mem.(Fetcher); ok {
		read = f.Fetch
	}
	var buf [12]byte
	var w [3]uint32
	n := 0
	for _, sz := range []int{12, 8, 4} {
		if err := read(pc, buf[:sz]); err == nil {
			n = sz / 4
			break
		} else if sz == 4 {
			return nil, &Fault{Addr: pc, PC: pc, Inst: "<instruction fetch>", Err: err}
		}
	}
	for i := 0; i < n; i++ {
		w[i] = binary.LittleEndian.Uint32(buf[4*i:])
	}
	in, err := Decode(w[:n])
	if err != nil {
		return nil, &WaveError{PC: pc, Inst: fmt.Sprintf(".long %#010x", w[0]), Err: fmt.Errorf("%w: %v", ErrIllegal, err)}
	}
	in.bind()
	c := &cinst{Inst: in, pc: pc}
	copy(c.raw[:], w[:in.Size/4])
	v, loaded := d.code.m.LoadOrStore(pc, c)
	if !loaded {
		d.code.add(c)
	}
	if pc == d.code.entry {
		d.code.first.Store(v.(*cinst))
	}
	return v.(*cinst), nil
}
