package cp

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/kfdemu/kfdemu/gpu/aql"
	"github.com/kfdemu/kfdemu/gpu/hqd"
)

// Accessors on queue memory. Every address the client controls goes through Memory, whose errors
// (and misaligned addresses) become *FaultError.

func (q *Queue) load32(va uint64, op string) (uint32, error) {
	if va%4 != 0 {
		return 0, &FaultError{VA: va, Op: op}
	}
	v, err := q.cfg.Memory.Load32(va)
	if err != nil {
		return 0, &FaultError{VA: va, Op: op, Err: err}
	}
	return v, nil
}

func (q *Queue) store32(va uint64, v uint32, op string) error {
	if va%4 != 0 {
		return &FaultError{VA: va, Op: op}
	}
	if err := q.cfg.Memory.Store32(va, v); err != nil {
		return &FaultError{VA: va, Op: op, Err: err}
	}
	return nil
}

func (q *Queue) load64(va uint64, op string) (uint64, error) {
	if va%8 != 0 {
		return 0, &FaultError{VA: va, Op: op}
	}
	v, err := q.cfg.Memory.Load64(va)
	if err != nil {
		return 0, &FaultError{VA: va, Op: op, Err: err}
	}
	return v, nil
}

func (q *Queue) store64(va, v uint64, op string) error {
	if va%8 != 0 {
		return &FaultError{VA: va, Op: op}
	}
	if err := q.cfg.Memory.Store64(va, v); err != nil {
		return &FaultError{VA: va, Op: op, Err: err}
	}
	return nil
}

func (q *Queue) add64(va uint64, d uint64, op string) error {
	if va%8 != 0 {
		return &FaultError{VA: va, Op: op}
	}
	var err error
	if q.adder != nil {
		_, err = q.adder.AtomicAdd(va, 8, d)
	} else {
		_, err = q.cfg.Memory.Atomic(va, 8, func(old uint64) uint64 { return old + d })
	}
	if err != nil {
		return &FaultError{VA: va, Op: op, Err: err}
	}
	return nil
}

// signalValue loads amd_signal_t.value of the signal whose handle (address) is h ([PSA] §2.5:
// system-scope atomic, signed).
func (q *Queue) signalValue(h uint64) (int64, error) {
	v, err := q.load64(h+aql.SignalValueOffset, "signal value")
	return int64(v), err
}

// report tells the host about the queue's first error (PSA-2.9.3-02) and, unless the host keeps
// it from the CP (Host.QueueError), takes the queue offline for the runtime: a fault here leaves
// the code unreported (the queue is in the error state either way). The runner enters StateError
// after it.
func (q *Queue) report(err error) {
	if q.cfg.Host.QueueError(q, err) {
		_, _ = q.reportInactive(aql.QueueInactiveCode(err))
	}
}

// step processes the packet at the read index. It returns false when there is none to process.
func (q *Queue) step(stop <-chan struct{}) (bool, error) {
	rd := q.rd.Load()
	// A doorbell stored since the queue was made, whose value is packet rd's index or a later
	// one, announces packet rd: the client stores a packet's index there after its header (ROCr's
	// AQL doorbell; the CP takes the value as its write pointer), so the header is looked at
	// without the write index. Loading that line here took it from the client, whose next store to
	// it then waited for the line to come back before its doorbell store could follow (x86 stores
	// become visible in order): one cross-core transfer of every barrier round trip. The header
	// still decides: an INVALID one waits for the next doorbell, as below (PSA-2.8-Q19). Otherwise
	// (the look after a packet, a doorbell still at its value from before the queue, a client that
	// publishes with the write index alone) the write index decides, as before. The look right
	// after an announced packet leaves the write index for later (recheck): a client that rings
	// for every packet, as ROCr does, announces the next one, and the line stays the client's.
	dv := q.doorbell()
	rung := dv != q.dbStart
	announced := rung && dv >= rd
	if !announced {
		if rung && q.lazy {
			return false, nil
		}
		wr, err := q.load64(q.cfg.WriteIndexVA, "write index")
		if err != nil {
			return false, err
		}
		q.wrSeen.Store(wr)
		if wr <= rd { // empty (PSA-2.8-I05); indices never wrap (PSA-2.8-I04)
			return false, nil
		}
	}
	slot := q.slotVA(rd)
	// An announced packet in client memory is read whole, with amd_queue_t's fields, in one
	// access: its doorbell was stored after its header, and the header after the body (ROCr's
	// release store), so every byte of it was written before the doorbell value that announced
	// it was seen. Else the header word is read first: a 32-bit atomic acquire of header+setup
	// (PSA-2.8-Q20, Q02), the body after it (copyPacket).
	var word uint32
	var err error
	whole, scratchRead := announced && q.vec != nil, false
	if whole {
		if scratchRead, err = q.copyPacket(slot, true, true); err != nil {
			var fe *FaultError
			if errors.As(err, &fe) && fe.VA != slot { // the packet arrived, amd_queue_t did not
				return false, packetErr(rd, uint16(binary.LittleEndian.Uint32(q.pkt[:4])), err)
			}
			return false, err
		}
		word = binary.LittleEndian.Uint32(q.pkt[:4])
	} else if word, err = q.load32(slot, "ring"); err != nil {
		return false, err
	}
	hdr := uint16(word)
	typ := aql.PacketType(hdr)
	if typ == aql.PacketTypeInvalid {
		return false, nil // PSA-2.8-Q19: never process an INVALID packet; wait for the next kick
	}
	perr := func(e error) error { return packetErr(rd, hdr, e) }
	if hdr&aql.HeaderReservedMask != 0 {
		return false, perr(fmt.Errorf("%w: reserved header bits %#x set", ErrMalformed, hdr&aql.HeaderReservedMask))
	}
	if aql.AcquireFenceScope(hdr) == aql.FenceScopeReserved || aql.ReleaseFenceScope(hdr) == aql.FenceScopeReserved {
		return false, perr(fmt.Errorf("%w: reserved fence scope", ErrMalformed))
	}
	// A dispatch's scratch fields and queue_properties are read with its body where the ring is
	// client memory (copyPacket), else together after it (loadScratch); other packets read
	// queue_properties (profiling) the same way, with the scratch fields they do not use.
	if !whole {
		binary.LittleEndian.PutUint32(q.pkt[:4], word)
		if scratchRead, err = q.copyPacket(slot, typ == aql.PacketTypeKernelDispatch || q.cfg.Clock != nil, false); err != nil {
			return false, perr(err)
		}
	}
	// The barrier bit needs every earlier packet complete: packets complete before the next
	// launches, so it holds here by construction (see the package doc).
	var completion uint64
	var sc Scratch
	var prof bool
	switch {
	case typ == aql.PacketTypeKernelDispatch:
		var props uint32
		if scratchRead {
			sc, props = q.decodeScratch()
		} else if sc, props, err = q.loadScratch(); err != nil {
			return false, perr(err)
		}
		prof = q.profiledBy(props)
	case scratchRead:
		_, props := q.decodeScratch()
		prof = q.profiledBy(props)
	default:
		if prof, err = q.profiling(); err != nil {
			return false, perr(err)
		}
	}
	var start uint64 // launch: start_ts of a profiled packet
	if prof {
		start = q.now()
	}
	reclaim := false // a dispatch that used scratch: single-use scratch is returned after it
	switch typ {
	case aql.PacketTypeKernelDispatch:
		q.kd.Decode(q.pkt[:])
		if err := validateDispatch(&q.kd); err != nil {
			return false, perr(err)
		}
		completion = q.kd.CompletionSignal
		// Dynamic scratch: a dispatch needing more private segment than the queue has takes the
		// queue offline with "insufficient scratch" and stays in the ring; ROCr's handler
		// allocates scratch, fills amd_queue_t and stores 0 to the inactive signal, and the packet
		// is launched again from the start (ROCr AqlQueue::DynamicScratchHandler, error code 1).
		// Without an inactive signal nobody can answer: the dispatch is launched and fails on the
		// shader's own scratch check (a queue error), instead of the queue hanging.
		if q.amdQueue != 0 && needsScratch(q.kd.PrivateSegmentSize, &sc) {
			reported, err := q.reportInactive(aql.QueueInactiveInsufficientScratch)
			if err != nil {
				return false, perr(err)
			}
			if reported {
				q.scratchWaits.Add(1)
				if err := q.waitResume(stop, false); err != nil {
					return false, wrapWait(err, rd, hdr)
				}
				return true, nil
			}
		}
		q.scratch = sc
		reclaim = q.kd.PrivateSegmentSize != 0
		// Launch: acquire fence at the end of the launch phase ([PSA] §2.9.1.1), an ordering point.
		q.curID = rd
		q.SetState(hqd.StateActive)
		if err := q.cfg.Host.Dispatch(q, &q.kd); err != nil {
			select {
			case <-stop:
				return false, hqd.ErrStopped // aborted by Stop: abandoned, not a queue error
			default:
			}
			// Error in the active phase: release fence (ordering point), then the error state
			// (PSA-2.9.3-01/02).
			return false, perr(fmt.Errorf("%w: %w", ErrDispatchFailed, err))
		}
		q.SetState(hqd.StateIdle)
	case aql.PacketTypeBarrierAnd, aql.PacketTypeBarrierOr:
		var b aql.BarrierPacket
		b.Decode(q.pkt[:])
		completion = b.CompletionSignal
		if err := q.waitBarrier(stop, &b, typ == aql.PacketTypeBarrierAnd); err != nil {
			return false, wrapWait(err, rd, hdr)
		}
		// Completion phase of a barrier: acquire fence, then release fence ([PSA] §2.9.1.2).
	case aql.PacketTypeVendorSpecific:
		var v aql.BarrierValuePacket
		v.Decode(q.pkt[:])
		if v.Header.AmdFormat == amdFormatPM4IB {
			c, err := q.runPM4IB(q.pkt[:])
			if err != nil {
				return false, perr(err)
			}
			completion = c
			break
		}
		if v.Header.AmdFormat != aql.AMDPacketTypeBarrierValue {
			return false, perr(fmt.Errorf("%w: vendor packet with AMD format %d", ErrUnsupported, v.Header.AmdFormat))
		}
		if _, ok := aql.CompareSignal(v.Cond, 0, 0); !ok {
			return false, perr(fmt.Errorf("%w: barrier-value condition %d", ErrMalformed, v.Cond))
		}
		completion = v.CompletionSignal
		if err := q.waitBarrierValue(stop, &v); err != nil {
			return false, wrapWait(err, rd, hdr)
		}
	case aql.PacketTypeAgentDispatch:
		// A GPU kernel queue has features = KERNEL_DISPATCH only (reference §3.7).
		return false, perr(fmt.Errorf("%w: AGENT_DISPATCH on a kernel-dispatch queue", ErrUnsupported))
	default:
		return false, perr(fmt.Errorf("%w: reserved packet type %d", ErrMalformed, typ))
	}
	// Release the slot: INVALID made visible before the read index passes it (PSA-2.8-Q25, Q17).
	// The slot is translated again: the ring may have been unmapped while the packet ran.
	released := word&^0xffff | aql.PacketTypeInvalid
	if q.relAdder != nil && completion != 0 && completion%8 == 0 {
		// In client memory: the release, timestamps and signal in one read and one write.
		if err := q.releaseComplete(slot, released, hdr, rd, announced, completion, prof, start); err != nil {
			return false, err
		}
	} else {
		if err := q.release(slot, released, rd+1); err != nil {
			return false, err
		}
		q.advance(rd, announced)
		if err := q.complete(completion, prof, start); err != nil {
			return false, packetErr(rd, hdr, err)
		}
	}
	if reclaim {
		// A large scratch allocation is for one dispatch (AMD_QUEUE_PROPERTIES_USE_SCRATCH_ONCE):
		// the CP returns it with code 512 and waits until ROCr has released it, stored 0 and
		// cleared the property.
		p, err := q.properties()
		if err != nil {
			return false, err
		}
		if aql.QueuePropUseScratchOnce.Get(p) != 0 {
			reported, err := q.reportInactive(aql.QueueInactiveScratchReclaim)
			if err != nil {
				return false, err
			}
			if reported {
				if err := q.waitResume(stop, true); err != nil {
					return false, err
				}
			}
		}
	}
	return true, nil
}

// recheck is the look at the write index that step left for later after an announced packet
// (hqd Engine.Recheck): it runs when the queue's doorbell spin ended without a store, and reports
// whether packets wait (published with the write index alone, or rung out of order: packet 6's
// doorbell before packet 5's) or the write index cannot be read (step then reports the error).
func (q *Queue) recheck() bool {
	if !q.lazy {
		return false
	}
	q.lazy = false
	wr, err := q.load64(q.cfg.WriteIndexVA, "write index")
	if err != nil {
		return true
	}
	q.wrSeen.Store(wr)
	return wr > q.rd.Load()
}

// doorbell is Config.Doorbell's value, or the value at the queue's start without one.
func (q *Queue) doorbell() uint64 {
	if q.cfg.Doorbell == nil {
		return q.dbStart
	}
	return q.cfg.Doorbell()
}

// release stores the slot's header word, then the read index: in one access when the Memory moves
// pieces in order (vecMemory), else as two stores.
func (q *Queue) release(slot uint64, word uint32, rd uint64) error {
	ri := q.cfg.ReadIndexVA
	if q.vec == nil || slot%4 != 0 || ri%8 != 0 {
		if err := q.store32(slot, word, "ring"); err != nil {
			return err
		}
		return q.store64(ri, rd, "read index")
	}
	binary.LittleEndian.PutUint32(q.relBuf[:4], word)
	binary.LittleEndian.PutUint64(q.relBuf[4:], rd)
	q.vecVAs = [3]uint64{slot, ri}
	q.vecBufs = [3][]byte{q.relBuf[:4], q.relBuf[4:]}
	n, err := q.vec.WriteV(q.vecVAs[:2], q.vecBufs[:2])
	q.vecBufs = [3][]byte{}
	if err != nil {
		if n == 0 {
			return &FaultError{VA: slot, Op: "ring", Err: err}
		}
		return &FaultError{VA: ri, Op: "read index", Err: err}
	}
	return nil
}

// advance moves the read index past packet rd, released (PSA-2.8-I07), and counts it. Counted
// before the completion signal: a client that saw the signal sees the packet counted
// (TestRingWrapAround read Status right after the last completion and once found n-1).
func (q *Queue) advance(rd uint64, announced bool) {
	q.rd.Store(rd + 1)
	q.lazy = announced
	q.packets.Add(1)
}

// releaseComplete is release, advance and complete of packet rd in one access of each kind where
// the ring and the signal lie in client memory (releaseAdder): the slot's header word, the read
// index and, profiled, start_ts and end_ts are written in that order with the signal's decremented
// value, after one read of the value, event_mailbox_ptr and event_id. The read index and the count
// move before the write (as advance before complete) and back when the release itself faults. An
// error of the release is returned as release returns it; one of the signal as a *PacketError.
func (q *Queue) releaseComplete(slot uint64, word uint32, hdr uint16, rd uint64, announced bool, sig uint64, prof bool, start uint64) error {
	binary.LittleEndian.PutUint32(q.relBuf[:4], word)
	binary.LittleEndian.PutUint64(q.relBuf[4:], rd+1)
	ri, ts := q.cfg.ReadIndexVA, sig+aql.SignalStartTSOffset
	q.vecVAs = [3]uint64{slot, ri, ts}
	q.vecBufs = [3][]byte{q.relBuf[:4], q.relBuf[4:], q.tsBuf[:]}
	k := 2
	if prof {
		binary.LittleEndian.PutUint64(q.tsBuf[:], start)
		binary.LittleEndian.PutUint64(q.tsBuf[8:], q.now())
		k = 3
	}
	q.advance(rd, announced)
	tail := q.sigTail[:]
	_, n, err := q.relAdder.AtomicAddTailAfter(q.vecVAs[:k], q.vecBufs[:k], sig+aql.SignalValueOffset, ^uint64(0), tail)
	q.vecBufs = [3][]byte{}
	switch {
	case err == nil:
	case n < 2: // not released
		q.rd.Store(rd)
		q.packets.Add(^uint64(0))
		if n == 0 {
			return &FaultError{VA: slot, Op: "ring", Err: err}
		}
		return &FaultError{VA: ri, Op: "read index", Err: err}
	case n < k:
		return packetErr(rd, hdr, &FaultError{VA: ts, Op: "completion signal start_ts", Err: err})
	default:
		return packetErr(rd, hdr, &FaultError{VA: sig + aql.SignalValueOffset, Op: "completion signal", Err: err})
	}
	if err := q.deliver(binary.LittleEndian.Uint64(tail),
		uint64(binary.LittleEndian.Uint32(tail[aql.SignalEventIDOffset-aql.SignalMailboxOffset:]))); err != nil {
		return packetErr(rd, hdr, err)
	}
	return nil
}

// profiling reports whether the packet being launched is profiled: a Config.Clock and
// ENABLE_PROFILING in amd_queue_t.queue_properties (read at each launch, as ROCr may switch it).
func (q *Queue) profiling() (bool, error) {
	if q.cfg.Clock == nil || q.amdQueue == 0 {
		return false, nil
	}
	p, err := q.properties()
	return q.profiledBy(p), err
}

// profiledBy is profiling's answer for queue_properties props already read.
func (q *Queue) profiledBy(props uint32) bool {
	return q.cfg.Clock != nil && q.amdQueue != 0 && aql.QueuePropEnableProfiling.Get(props) != 0
}

// copyPacket copies the body of the packet at slot after its header word (PSA-2.8-Q03), or with
// whole the packet from its header on. Where the Memory moves pieces (vecMemory:
// Config.ClientMemory), amd_queue_t's fields loadScratch reads come in the same access with scratch
// (a dispatch, or a packet whose profiling matters), into scratchBuf: scratchRead says so.
func (q *Queue) copyPacket(slot uint64, scratch, whole bool) (scratchRead bool, err error) {
	at, body := slot+4, q.pkt[4:]
	if whole {
		at, body = slot, q.pkt[:]
	}
	sva := q.amdQueue + aql.AMDQueueComputeTmpringSizeOffset
	if !scratch || q.vec == nil || q.amdQueue == 0 || sva%8 != 4 ||
		sva/pageSize != (sva+uint64(len(q.scratchBuf))-1)/pageSize || slot%aql.PacketSize != 0 {
		if err := q.cfg.Memory.Read(at, body); err != nil {
			return false, &FaultError{VA: at, Op: "ring", Err: err}
		}
		return false, nil
	}
	q.vecVAs = [3]uint64{at, sva}
	q.vecBufs = [3][]byte{body, q.scratchBuf[:]}
	n, err := q.vec.ReadV(q.vecVAs[:2], q.vecBufs[:2])
	q.vecBufs = [3][]byte{}
	switch {
	case n == 0 && err != nil:
		return false, &FaultError{VA: at, Op: "ring", Err: err}
	case err != nil:
		return false, &FaultError{VA: sva, Op: "amd_queue_t", Err: err}
	}
	return true, nil
}

// now is the GPU timestamp (0 without Config.Clock).
func (q *Queue) now() uint64 {
	if q.cfg.Clock == nil {
		return 0
	}
	return q.cfg.Clock()
}

func packetErr(id uint64, hdr uint16, err error) error {
	return &PacketError{ID: id, Header: hdr, Err: err}
}

func wrapWait(err error, id uint64, hdr uint16) error {
	if errors.Is(err, hqd.ErrStopped) {
		return err
	}
	return packetErr(id, hdr, err)
}

// complete signals a completion signal: with profiling on, start_ts (the packet's launch) and end_ts
// (now) first, as the CP writes them before the signal; then atomic decrement by one after the
// release fence ([PSA] §2.9.2; NULL = no operation), the AMD event mailbox and interrupt.
func (q *Queue) complete(sig uint64, prof bool, start uint64) error {
	if sig == 0 {
		return nil
	}
	if prof {
		if err := q.timestamps(sig, start, q.now()); err != nil {
			return err
		}
	}
	if q.sigAdder == nil || sig%8 != 0 {
		if err := q.add64(sig+aql.SignalValueOffset, ^uint64(0), "completion signal"); err != nil {
			return err
		}
		return q.notify(sig)
	}
	// The decrement reads event_mailbox_ptr and event_id in the same access (signalAdder), into
	// the queue's own buffer: a local one would escape through the interface call.
	tail := q.sigTail[:]
	if _, err := q.sigAdder.AtomicAddTail(sig+aql.SignalValueOffset, ^uint64(0), tail); err != nil {
		return &FaultError{VA: sig + aql.SignalValueOffset, Op: "completion signal", Err: err}
	}
	return q.deliver(binary.LittleEndian.Uint64(tail),
		uint64(binary.LittleEndian.Uint32(tail[aql.SignalEventIDOffset-aql.SignalMailboxOffset:])))
}

// notify delivers a signal's event after its value changed: if amd_signal_t.event_mailbox_ptr is
// non-zero, event_id is stored there and the host raises the interrupt; then barrier waiters of the
// group re-check.
func (q *Queue) notify(sig uint64) error {
	mailbox, err := q.load64(sig+aql.SignalMailboxOffset, "signal mailbox")
	if err != nil {
		return err
	}
	var id uint64
	if mailbox != 0 {
		id32, err := q.load32(sig+aql.SignalEventIDOffset, "signal event id")
		if err != nil {
			return err
		}
		id = uint64(id32)
	}
	return q.deliver(mailbox, id)
}

// deliver is notify with amd_signal_t.event_mailbox_ptr and event_id already read.
func (q *Queue) deliver(mailbox, id uint64) error {
	if mailbox != 0 {
		if err := q.store64(mailbox, id, "event mailbox"); err != nil {
			return err
		}
		q.cfg.Host.RaiseEvent(q, id)
	}
	if q.cfg.Group != nil {
		q.cfg.Group.Wake()
	}
	return nil
}

// waitBarrier waits for a barrier-AND (every non-NULL dependency observed 0 at some point after
// launch; NULL counts as 0) or barrier-OR (any non-NULL dependency observed 0; NULL never
// satisfies, so all-NULL blocks forever, which is legal) ([PSA] §2.9.8, §2.9.9).
func (q *Queue) waitBarrier(stop <-chan struct{}, b *aql.BarrierPacket, and bool) error {
	if !and && b.DepSignal == [5]uint64{} {
		return q.Wait(stop, nil) // never completes; legal ([PSA] §2.9.9), costs no CPU
	}
	var seen uint8 // AND: dependencies already observed at 0
	return q.Wait(stop, func() (bool, error) {
		for i, s := range b.DepSignal {
			if s == 0 || seen&(1<<i) != 0 {
				continue
			}
			v, err := q.signalValue(s)
			if err != nil {
				return false, err
			}
			if v == 0 {
				if !and {
					return true, nil
				}
				seen |= 1 << i
			}
		}
		if !and {
			return false, nil
		}
		for i, s := range b.DepSignal {
			if s != 0 && seen&(1<<i) == 0 {
				return false, nil
			}
		}
		return true, nil
	})
}

// waitBarrierValue waits until (value & mask) cond value holds (hsa_amd_barrier_value_packet_t);
// a NULL signal is a satisfied dependency.
func (q *Queue) waitBarrierValue(stop <-chan struct{}, p *aql.BarrierValuePacket) error {
	if p.Signal == 0 {
		return nil
	}
	return q.Wait(stop, func() (bool, error) {
		v, err := q.signalValue(p.Signal)
		if err != nil {
			return false, err
		}
		met, _ := aql.CompareSignal(p.Cond, v&p.Mask, p.Value)
		return met, nil
	})
}

// validateDispatch checks a kernel dispatch packet (reference §3.2 "Validation the PP may perform"):
// dimensions 1..3, non-zero work-group and grid sizes in every used dimension, kernel_object != 0.
// Unused dimensions and reserved fields are not checked (ROCr sets unused sizes to 1; tools store
// correlation ids in reserved2).
func validateDispatch(p *aql.KernelDispatchPacket) error {
	dims := aql.Dimensions(p.Setup)
	if dims < 1 || dims > 3 {
		return aql.Classify(fmt.Errorf("%w: %d dimensions", ErrInvalidDispatch, dims), aql.ErrInvalidDim)
	}
	wg := [3]uint16{p.WorkgroupSizeX, p.WorkgroupSizeY, p.WorkgroupSizeZ}
	grid := [3]uint32{p.GridSizeX, p.GridSizeY, p.GridSizeZ}
	for d := 0; d < int(dims); d++ {
		if wg[d] == 0 {
			return aql.Classify(fmt.Errorf("%w: work-group size %c is 0", ErrInvalidDispatch, "xyz"[d]), aql.ErrInvalidDim)
		}
		if grid[d] == 0 {
			return aql.Classify(fmt.Errorf("%w: grid size %c is 0", ErrInvalidDispatch, "xyz"[d]), aql.ErrInvalidDim)
		}
	}
	if p.KernelObject == 0 {
		return aql.Classify(fmt.Errorf("%w: kernel_object is 0", ErrInvalidDispatch), aql.ErrInvalidCode)
	}
	return nil
}

// AMD_AQL_FORMAT_PM4_IB (ROCr amd_hsa_queue.h, amd_aql_pm4_ib_packet_t): a vendor packet whose
// ib_jump_cmd[4] (bytes 4-19) is a PM4 INDIRECT_BUFFER packet the CP executes, followed by
// dw_cnt_remain, reserved dwords and the completion signal at byte 56. ROCr 5.2.3 sends one
// (AqlQueue::ExecutePM4) to invalidate caches after loading code (ACQUIRE_MEM).
const (
	amdFormatPM4IB  = 1
	pm4OpNOP        = 0x10
	pm4OpIB         = 0x3F
	pm4OpEventWrite = 0x46
	pm4OpAcquireMem = 0x58
	maxPM4IBDwords  = 1 << 12 // the IBs ROCr builds are a few dwords
)

// runPM4IB executes the indirect buffer of a PM4-IB packet and returns its completion signal. The
// packets a PM4-IB carries from ROCr are cache operations; caches are coherent here, so NOP,
// ACQUIRE_MEM and EVENT_WRITE complete at once and anything else is ErrUnsupported.
func (q *Queue) runPM4IB(pkt []byte) (uint64, error) {
	le := binary.LittleEndian
	jump := [4]uint32{le.Uint32(pkt[4:]), le.Uint32(pkt[8:]), le.Uint32(pkt[12:]), le.Uint32(pkt[16:])}
	if jump[0]>>30 != 3 || jump[0]>>8&0xff != pm4OpIB || jump[0]>>16&0x3fff != 2 {
		return 0, fmt.Errorf("%w: PM4-IB packet without an INDIRECT_BUFFER (%#08x)", ErrMalformed, jump[0])
	}
	base := uint64(jump[1]&^3) | uint64(jump[2]&0xffff)<<32
	n := jump[3] & 0xfffff
	if n == 0 || n > maxPM4IBDwords {
		return 0, fmt.Errorf("%w: PM4 indirect buffer of %d dwords", ErrMalformed, n)
	}
	ib := make([]byte, 4*n)
	if err := q.cfg.Memory.Read(base, ib); err != nil {
		return 0, &FaultError{VA: base, Op: "PM4 indirect buffer", Err: err}
	}
	for i := uint32(0); i < n; {
		h := le.Uint32(ib[4*i:])
		switch {
		case h == 0x80000000: // type-2 filler
			i++
			continue
		case h>>30 != 3:
			return 0, fmt.Errorf("%w: PM4 type-%d packet in an AQL PM4-IB", ErrUnsupported, h>>30)
		}
		op, body := h>>8&0xff, h>>16&0x3fff+1
		if op == pm4OpNOP && body == 0x4000 {
			body = 0 // PACKET3(NOP, 0x3FFF): a one-dword NOP (amdgpu ring->funcs->nop)
		}
		switch op {
		case pm4OpNOP, pm4OpAcquireMem, pm4OpEventWrite:
		default:
			return 0, fmt.Errorf("%w: PM4 opcode %#x in an AQL PM4-IB", ErrUnsupported, op)
		}
		if i+1+body > n {
			return 0, fmt.Errorf("%w: PM4 packet crosses the end of its indirect buffer", ErrMalformed)
		}
		i += 1 + body
	}
	return le.Uint64(pkt[56:]), nil
}
