package shader

import (
	"context"
	"fmt"
)

// Suspension in place is the model's compute wave save/restore (CWSR): on hardware a preempted
// queue's waves trap, the trap handler saves their registers, LDS and PC to the queue's context
// save area, and the CP restores them when the queue is mapped again (kfd_mqd_manager_v9.c
// cp_hqd_cntl_stack; the trap handler of cwsr_trap_handler_gfx9.asm). Here the waves' state stays
// where it is: a suspended work-group gives back its worker and its CU, keeps its waves, LDS and
// scratch slots, and waits; Resume gives it a CU again (of the queue's CU mask) and it continues
// at the same instruction. Output and instruction count equal an uninterrupted run's.

// Suspended is a dispatch whose waves are suspended in place.
type Suspended struct{ d *dispatch }

// SuspendedError is what Dispatch and DispatchRegs return for a Suspendable dispatch whose context
// ended: S continues it (Resume) or ends it (Abort). NextGroup is the first work-group not admitted
// yet (the resident ones before it may be suspended anywhere inside).
type SuspendedError struct {
	S         *Suspended
	NextGroup uint64
}

func (e *SuspendedError) Error() string {
	return fmt.Sprintf("shader: dispatch suspended in place (work-groups admitted up to %d)", e.NextGroup)
}

// Resume continues a suspended dispatch until it completes or ctx ends again (another
// *SuspendedError); kill replaces the Kill channel the dispatch was started with. The Stats count
// what ran since the suspension.
func Resume(ctx context.Context, s *Suspended, kill <-chan struct{}) (Stats, error) {
	d := s.d
	d.kill = kill
	d.mu.Lock()
	d.gen++ // the suspended run's watcher may still be exiting: it must not act on this one
	d.mu.Unlock()
	d.resume()
	return d.drive(ctx)
}

// Abort ends a suspended dispatch: its waves are abandoned where they stand (as a queue reset or
// destruction leaves them) and their resources freed before Abort returns.
func (s *Suspended) Abort() {
	d := s.d
	d.stopAll()
	d.resume()
	d.wg.Wait()
}

// stopRun is the watcher of run gen: it suspends (or, kill, stops inside the groups) only if that
// run is still the current one.
func (d *dispatch) stopRun(gen uint64, suspend bool) {
	d.mu.Lock()
	cur := d.gen == gen
	d.mu.Unlock()
	switch {
	case !cur:
	case suspend:
		d.suspend()
	default:
		d.stopAll()
	}
}

// suspend stops admission and makes resident groups park at their next instruction boundary.
func (d *dispatch) suspend() {
	d.mu.Lock()
	if d.resumeCh == nil {
		d.resumeCh = make(chan struct{})
		ch := make(chan struct{})
		close(ch)
		d.suspCh.Store(&ch)
	}
	d.suspended.Store(true)
	d.mu.Unlock()
	d.signal()
}

// resume lets parked groups continue.
func (d *dispatch) resume() {
	d.mu.Lock()
	d.suspended.Store(false)
	d.suspCh.Store(nil)
	if d.resumeCh != nil {
		// The resumer un-counts the groups it wakes: were they to do it themselves, a suspension
		// right after this resumption could count a woken group as still parked, report the
		// dispatch suspended, and the group would then take a CU (and a worker) again.
		d.parked.Add(-d.parkedSusp)
		d.parkedSusp = 0
		close(d.resumeCh)
		d.resumeCh = nil
	}
	d.mu.Unlock()
}

// waitSuspended waits, after admission stopped, until every resident group has ended (false) or,
// suspended, every one is parked (true: the context is saved; a group asleep on a GWS semaphore
// counts as parked, it executes nothing until released and then parks).
func (d *dispatch) waitSuspended() bool {
	for {
		res := d.resident.Load()
		if res == 0 && d.next >= d.total {
			return false // complete
		}
		if d.suspended.Load() && d.running.Load() == 0 && d.parked.Load() == res && !d.killed() {
			return true
		}
		if res == 0 {
			return false
		}
		select {
		case <-d.wake:
		case <-d.abort:
			return false // killed: the groups end (drive waits for them)
		}
	}
}

// park suspends g, which holds a worker, until the dispatch resumes or is killed (errStopMidGroup).
func (d *dispatch) park(g *group) error {
	g.unfresh()
	g.flushStats() // the suspension's figures include the groups this goroutine ended before
	g.give()
	d.parkWait(g)
	g.take()
	if d.killed() {
		return errStopMidGroup
	}
	return nil
}

// parkWait parks g, which holds no worker, while the dispatch is suspended: it gives back its CU
// room (its waves, LDS and scratch slots stay), waits for the resumption and takes CU room of the
// dispatch's mask again. Killed, it returns with no CU (g.cu -1).
func (d *dispatch) parkWait(g *group) {
	d.unclaim(g) // the claim's groups park on their own
	d.mu.Lock()
	ch := d.resumeCh
	d.mu.Unlock()
	if ch == nil {
		return // resumed meanwhile
	}
	if g.cu >= 0 {
		d.dev.release(g.cu, d.need)
		g.cu = -1
	}
	d.mu.Lock()
	if d.resumeCh == ch { // not resumed meanwhile: parked until resume un-counts it
		d.parkedSusp++
		d.parked.Add(1)
	}
	d.mu.Unlock()
	d.signal()
	select {
	case <-ch:
	case <-d.abort:
	}
	for !d.killed() {
		cu, freed := d.dev.reserve(d.cus, d.need)
		if cu >= 0 {
			g.cu = cu
			return
		}
		select {
		case <-freed:
		case <-d.abort:
		}
	}
}
