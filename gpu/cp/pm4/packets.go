package pm4

import (
	"fmt"
	"github.com/kfdemu/kfdemu/gpu/hqd"
)

// waitRegMem is a decoded WAIT_REG_MEM (soc15d.h PACKET3_WAIT_REG_MEM; gfx_v9_0.c
// gfx_v9_0_wait_reg_mem writes header, control, addr0, addr1, ref, mask, poll interval).
type waitRegMem struct {
	function uint32 // 0 always, 1 <, 2 <=, 3 ==, 4 !=, 5 >=, 6 >
	register bool   // mem_space 0: poll a register of this queue's register file
	addr     uint64 // memory VA (dword aligned) or register offset
	ref      uint32
	mask     uint32
}

func (q *Queue) dw(i int) uint32 { return le32(q.pkt[4*i:]) }

// exec runs the n-dword packet in q.pkt. It returns false when the packet is not finished (an
// INDIRECT_BUFFER pushed or chained a frame; the packet retires when the IB ends).
func (q *Queue) exec(stop <-chan struct{}, h uint32, n uint64) (bool, error) {
	if h>>30 == PacketType2 {
		return true, nil
	}
	op := uint8(h >> 8)
	if op == OpNOP { // any count, including the one-dword 0x3FFF form; the body is skipped
		return true, nil
	}
	if h&headerPredicate != 0 {
		return false, fmt.Errorf("%w: predicated packet (SET_PREDICATION is not modelled)", ErrUnsupported)
	}
	switch op {
	case OpWriteData:
		return true, q.writeData(n)
	case OpReleaseMem:
		return true, q.releaseMem(n)
	case OpWaitRegMem:
		if err := q.decodeWait(n); err != nil {
			return false, err
		}
		return true, q.wait(stop)
	case OpIndirectBuffer:
		return false, q.indirectBuffer(n)
	case OpAcquireMem:
		// Cache operations (coher_cntl/size/base): kfdemu's memory is coherent, so ACQUIRE_MEM is
		// an ordering point only. Packets execute in order and complete before the next starts.
		if n != acquireMemCount+2 {
			return false, fmt.Errorf("%w: ACQUIRE_MEM of %d dwords, gfx9 has %d", ErrMalformed, n, acquireMemCount+2)
		}
		return true, nil
	case OpEventWrite:
		return true, q.eventWrite(n)
	case OpSetSHReg:
		return true, q.setRegs(n, SHRegStart, q.sh[:])
	case OpSetUConfigReg:
		return true, q.setRegs(n, UConfigRegStart, q.uconfig[:])
	case OpDispatchDirect:
		return true, q.dispatchDirect(stop, n)
	case OpIndirectBufferConst:
		return false, fmt.Errorf("%w: INDIRECT_BUFFER_CONST (constant engine; a compute queue has none)", ErrUnsupported)
	case OpSetConfigReg:
		return false, fmt.Errorf("%w: SET_CONFIG_REG (no config registers are modelled)", ErrUnsupported)
	}
	return false, fmt.Errorf("%w: opcode %#02x", ErrUnsupported, op)
}

// regSpan returns the register file slots of the absolute registers first..last, or nil unless
// they all lie in one modelled window (SH or UCONFIG).
func (q *Queue) regSpan(first, last uint32) []uint32 {
	switch {
	case first > last:
	case first >= SHRegStart && last < SHRegEnd:
		return q.sh[first-SHRegStart : last-SHRegStart+1]
	case first >= UConfigRegStart && last < UConfigRegEnd:
		return q.uconfig[first-UConfigRegStart : last-UConfigRegStart+1]
	}
	return nil
}

// reg returns the register file slot of an absolute register offset, or nil if it is not modelled.
func (q *Queue) reg(r uint32) *uint32 {
	if s := q.regSpan(r, r); s != nil {
		return &s[0]
	}
	return nil
}

// setRegs is SET_SH_REG / SET_UCONFIG_REG: dword 1 bits 15:0 is the offset from the window start,
// then one value per register (kfdtest PM4SetShaderRegPacket: reg_offset = reg - 0x2C00).
func (q *Queue) setRegs(n uint64, start uint32, file []uint32) error {
	if n < 3 {
		return fmt.Errorf("%w: register packet without a value", ErrMalformed)
	}
	d1 := q.dw(1)
	if d1&setRegReservedMask != 0 {
		return fmt.Errorf("%w: register packet index/vmid_shift bits %#x", ErrUnsupported, d1&setRegReservedMask)
	}
	off, cnt := uint64(d1&setRegOffsetMask), n-2
	if off+cnt > uint64(len(file)) {
		return fmt.Errorf("%w: registers %#x..%#x outside the window [%#x, %#x)", ErrMalformed,
			uint64(start)+off, uint64(start)+off+cnt-1, start, int(start)+len(file))
	}
	for i := uint64(0); i < cnt; i++ {
		file[off+i] = q.dw(int(2 + i))
	}
	return nil
}

// writeData is WRITE_DATA (kfdtest PM4WriteDataPacket; soc15d.h WRITE_DATA_DST_SEL, WR_ONE_ADDR,
// WR_CONFIRM, WRITE_DATA_ENGINE_SEL): control, dst_addr_lo, dst_addr_hi, data... Memory writes are
// synchronous, so WR_CONFIRM (wait for the write to be confirmed) always holds. A one- or
// two-dword write to an aligned address is a single 32/64-bit atomic store.
func (q *Queue) writeData(n uint64) error {
	if n < 5 {
		return fmt.Errorf("%w: WRITE_DATA of %d dwords, at least 5", ErrMalformed, n)
	}
	ctl := q.dw(1)
	if e := ctl >> writeDataEngineShift; e != 0 {
		return fmt.Errorf("%w: WRITE_DATA engine_sel %d (a compute queue has only the ME)", ErrUnsupported, e)
	}
	oneAddr := ctl&writeDataWrOneAddr != 0
	ndw := int(n - 4)
	switch dst := ctl >> 8 & 0xF; dst {
	case writeDataDstMemory, writeDataDstTCL2, writeDataDstMemorySync:
		va := uint64(q.dw(3))<<32 | uint64(q.dw(2)&^3) // DST_MEM_ADDR_LO is bits 31:2
		switch {
		case oneAddr:
			for i := 0; i < ndw; i++ {
				if err := q.store(va, 4, uint64(q.dw(4+i)), "write data"); err != nil {
					return err
				}
			}
		case ndw == 1:
			return q.store(va, 4, uint64(q.dw(4)), "write data")
		case ndw == 2 && va%8 == 0:
			return q.store(va, 8, uint64(q.dw(4))|uint64(q.dw(5))<<32, "write data")
		default:
			if err := q.cfg.Memory.Write(va, q.pkt[16:16+4*ndw]); err != nil {
				return &FaultError{VA: va, Op: "write data", Err: err}
			}
		}
		return nil
	case writeDataDstRegister:
		r := q.dw(2) & regOffsetMask
		last := r
		if !oneAddr {
			last = r + uint32(ndw) - 1
		}
		regs := q.regSpan(r, last)
		if regs == nil {
			return fmt.Errorf("%w: WRITE_DATA to registers %#x..%#x (only the SH and UCONFIG windows are modelled)", ErrUnsupported, r, last)
		}
		if oneAddr {
			regs[0] = q.dw(4 + ndw - 1) // every dword goes to the same register; the last one stays
			return nil
		}
		for i := range regs {
			regs[i] = q.dw(4 + i)
		}
		return nil
	default:
		return fmt.Errorf("%w: WRITE_DATA dst_sel %d", ErrUnsupported, dst)
	}
}

// releaseMem is the gfx9 MEC RELEASE_MEM (kfd_pm4_headers_ai.h struct pm4_mec_release_mem, 8
// dwords; kfdtest PM4ReleaseMemoryPacket). The end-of-pipe event is reached when every earlier
// packet is complete, which holds here: packets run one at a time and Host.Dispatch returns only
// when its grid is done. The cache actions (tc_wb/tc_action) are no-ops on coherent memory. Then
// the data is written (DATA_SEL), then the interrupt is sent (INT_SEL 1, 2).
func (q *Queue) releaseMem(n uint64) error {
	if n != releaseMemCount+2 {
		return fmt.Errorf("%w: RELEASE_MEM of %d dwords, gfx9 has %d", ErrMalformed, n, releaseMemCount+2)
	}
	d1, d2 := q.dw(1), q.dw(2)
	evType, evIndex := d1&0x3F, d1>>8&0xF
	if evIndex != EventIndexEOP {
		return fmt.Errorf("%w: RELEASE_MEM event_index %d (only end-of-pipe)", ErrUnsupported, evIndex)
	}
	switch evType {
	case EventCacheFlushTS, EventCacheFlushAndInvTS, EventBottomOfPipeTS:
	default:
		return fmt.Errorf("%w: RELEASE_MEM event_type %#x", ErrUnsupported, evType)
	}
	dstSel, intSel, dataSel := d2>>16&3, d2>>24&7, d2>>29&7
	if dstSel != releaseMemDstMemory && dstSel != releaseMemDstTCL2 {
		return fmt.Errorf("%w: RELEASE_MEM dst_sel %d (queue write pointer destinations)", ErrUnsupported, dstSel)
	}
	if intSel > IntSelDataAfterWrite {
		return fmt.Errorf("%w: RELEASE_MEM int_sel %d", ErrUnsupported, intSel)
	}
	lo, hi := q.dw(3), uint64(q.dw(4))<<32
	switch dataSel {
	case DataSelNone:
	case DataSel32: // address_lo_32b: bits 31:2
		if err := q.store(hi|uint64(lo&^3), 4, uint64(q.dw(5)), "release mem"); err != nil {
			return err
		}
	case DataSel64: // address_lo_64b: bits 31:3
		if err := q.store(hi|uint64(lo&^7), 8, uint64(q.dw(5))|uint64(q.dw(6))<<32, "release mem"); err != nil {
			return err
		}
	case DataSelTimestamp:
		if err := q.store(hi|uint64(lo&^7), 8, q.cfg.Host.Timestamp(), "release mem"); err != nil {
			return err
		}
	default:
		return fmt.Errorf("%w: RELEASE_MEM data_sel %d", ErrUnsupported, dataSel)
	}
	if intSel == IntSelInterrupt || intSel == IntSelInterruptAfterWrite {
		q.intPending, q.intCtx = true, q.dw(7) // int_ctxid; sent once the packet retires (step)
	}
	return nil
}

// eventWrite is EVENT_WRITE: CS_PARTIAL_FLUSH (kfdtest PM4PartialFlushPacket: event_index 4, 2
// dwords) waits for earlier dispatches, which are already complete; cache flush events are no-ops
// on coherent memory. Sampling events (which write memory) are not supported.
func (q *Queue) eventWrite(n uint64) error {
	if n != eventWriteShortCount+2 && n != eventWriteLongCount+2 {
		return fmt.Errorf("%w: EVENT_WRITE of %d dwords", ErrMalformed, n)
	}
	d1 := q.dw(1)
	typ, idx := d1&0x3F, d1>>8&0xF
	switch {
	case idx == eventIndexPartialFlush && typ == EventCSPartialFlush:
	case (idx == eventIndexOther || idx == eventIndexCacheFlush) && (typ == EventCacheFlush || typ == EventCacheFlushAndInv):
	default:
		return fmt.Errorf("%w: EVENT_WRITE event_type %#x event_index %d", ErrUnsupported, typ, idx)
	}
	return nil
}

func (q *Queue) decodeWait(n uint64) error {
	if n != waitRegMemCount+2 {
		return fmt.Errorf("%w: WAIT_REG_MEM of %d dwords, gfx9 has %d", ErrMalformed, n, waitRegMemCount+2)
	}
	d1 := q.dw(1)
	fn, space, op, engine := d1&7, d1>>4&3, d1>>6&3, d1>>8&1
	if fn == waitFunctionReserved {
		return fmt.Errorf("%w: WAIT_REG_MEM function 7", ErrMalformed)
	}
	if op != waitOpWait && op != waitOpWaitMemPreemptable {
		return fmt.Errorf("%w: WAIT_REG_MEM operation %d", ErrUnsupported, op)
	}
	if engine != 0 {
		return fmt.Errorf("%w: WAIT_REG_MEM engine PFP (a compute queue has only the ME)", ErrUnsupported)
	}
	// Dword 6 is POLL_INTERVAL: the hardware's re-read spacing in its clocks. kfdemu has no cycle
	// clock; Queue.wait defines the timing instead.
	w := waitRegMem{function: fn, ref: q.dw(4), mask: q.dw(5)}
	switch space {
	case waitMemSpaceMemory:
		w.addr = uint64(q.dw(3))<<32 | uint64(q.dw(2)&^3)
	case waitMemSpaceRegister:
		w.register, w.addr = true, uint64(q.dw(2)&regOffsetMask)
		if q.reg(uint32(w.addr)) == nil {
			return fmt.Errorf("%w: WAIT_REG_MEM on register %#x (only the SH and UCONFIG windows are modelled)", ErrUnsupported, w.addr)
		}
	default:
		return fmt.Errorf("%w: WAIT_REG_MEM mem_space %d", ErrUnsupported, space)
	}
	q.wr = w
	return nil
}

// waitSatisfied evaluates (value & mask) function ref for the pending WAIT_REG_MEM.
func (q *Queue) waitSatisfied() (bool, error) {
	w := &q.wr
	var v uint32
	if w.register {
		v = *q.reg(uint32(w.addr))
	} else {
		x, err := q.load(w.addr, 4, "wait_reg_mem poll")
		if err != nil {
			return false, err
		}
		v = uint32(x)
	}
	return compare(w.function, v&w.mask, w.ref), nil
}

func compare(fn, v, ref uint32) bool {
	switch fn {
	case 0:
		return true
	case 1:
		return v < ref
	case 2:
		return v <= ref
	case 3:
		return v == ref
	case 4:
		return v != ref
	case 5:
		return v >= ref
	case 6:
		return v > ref
	}
	return false
}

// indirectBuffer is the MEC INDIRECT_BUFFER (kfdtest pm4_pkt_struct_common.h
// PM4MEC_INDIRECT_BUFFER; soc15d.h PACKET3_INDIRECT_BUFFER__*): ib_base_lo bits 31:2, ib_base_hi
// bits 15:0, ib_size (dwords) bits 19:0, chain bit 20, valid bit 23. A plain IB is pushed on the
// fetch stack (the CP's IB1/IB2: depth at most 2); a chained IB replaces the current IB (it does
// not return to it) and is only valid inside an IB. Chains per ring packet are bounded.
func (q *Queue) indirectBuffer(n uint64) error {
	if n != indirectBufferCount+2 {
		return fmt.Errorf("%w: INDIRECT_BUFFER of %d dwords", ErrMalformed, n)
	}
	ctl := q.dw(3)
	if ctl&indirectBufferValidBit == 0 {
		return fmt.Errorf("%w: INDIRECT_BUFFER with VALID = 0", ErrUnsupported)
	}
	base := uint64(q.dw(2)&0xFFFF)<<32 | uint64(q.dw(1)&^3)
	size := uint64(ctl & indirectBufferSizeMask)
	if ctl&indirectBufferChainBit != 0 {
		if q.sp == 0 {
			return fmt.Errorf("%w: chained INDIRECT_BUFFER in the ring", ErrMalformed)
		}
		if q.chains++; q.chains > maxChainsPerRingPacket {
			return fmt.Errorf("%w: more than %d chained IBs", ErrMalformed, maxChainsPerRingPacket)
		}
		f := &q.frames[q.sp]
		f.base, f.size, f.pos = base, size, 0
		return nil
	}
	if q.sp == maxIBDepth {
		return fmt.Errorf("%w: INDIRECT_BUFFER nested deeper than %d", ErrMalformed, maxIBDepth)
	}
	q.sp++
	q.frames[q.sp] = frame{base: base, size: size, ret: n}
	q.depth.Store(int32(q.sp))
	return nil
}

// dispatchDirect is DISPATCH_DIRECT (kfdtest PM4DispatchDirectPacket: dim_x, dim_y, dim_z,
// dispatch_initiator). The dims and initiator are also written to COMPUTE_DIM_X/Y/Z and
// COMPUTE_DISPATCH_INITIATOR. With USE_THREAD_DIMENSIONS the dims count threads and the number of
// work-groups is ceil(dim / NUM_THREAD full size); otherwise they count work-groups. A grid with
// no work-group launches nothing.
func (q *Queue) dispatchDirect(stop <-chan struct{}, n uint64) error {
	if n != dispatchDirectCount+2 {
		return fmt.Errorf("%w: DISPATCH_DIRECT of %d dwords", ErrMalformed, n)
	}
	dims := [3]uint32{q.dw(1), q.dw(2), q.dw(3)}
	init := q.dw(4)
	sh := func(r uint32) uint32 { return q.sh[r-SHRegStart] }
	for i := range dims {
		q.sh[RegComputeDimX+uint32(i)-SHRegStart] = dims[i]
	}
	q.sh[RegComputeDispatchInitiator-SHRegStart] = init
	if init&InitiatorComputeShaderEn == 0 {
		return fmt.Errorf("%w: DISPATCH_INITIATOR %#x without COMPUTE_SHADER_EN", ErrInvalidDispatch, init)
	}
	cs := &q.cs
	*cs = ComputeState{
		PGM:            (uint64(sh(RegComputePgmLo)) | uint64(sh(RegComputePgmHi)&0xFF)<<32) << 8,
		RSRC1:          sh(RegComputePgmRsrc1),
		RSRC2:          sh(RegComputePgmRsrc2),
		RSRC3:          sh(RegComputePgmRsrc3),
		TmpRingSize:    sh(RegComputeTmpringSize),
		ResourceLimits: sh(RegComputeResourceLimits),
		ScratchBase:    (uint64(sh(RegComputeScratchBaseLo)) | uint64(sh(RegComputeScratchBaseHi)&0xFF)<<32) << 8,
		Initiator:      init,
	}
	copy(cs.UserData[:], q.sh[RegComputeUserData0-SHRegStart:])
	for i := range 3 {
		r := uint32(i)
		cs.NumThread[i] = sh(RegComputeNumThreadX + r)
		cs.Start[i] = sh(RegComputeStartX + r)
		cs.Restart[i] = sh(RegComputeRestartX + r)
		full := cs.NumThread[i] & 0xFFFF
		if full == 0 {
			return fmt.Errorf("%w: COMPUTE_NUM_THREAD_%c is 0", ErrInvalidDispatch, "XYZ"[i])
		}
		cs.Groups[i] = dims[i]
		if init&InitiatorUseThreadDimensions != 0 {
			cs.Groups[i] = uint32((uint64(dims[i]) + uint64(full) - 1) / uint64(full))
		}
	}
	if cs.Groups[0] == 0 || cs.Groups[1] == 0 || cs.Groups[2] == 0 {
		return nil
	}
	if cs.PGM == 0 {
		return fmt.Errorf("%w: COMPUTE_PGM is 0", ErrInvalidDispatch)
	}
	q.SetState(hqd.StateActive)
	q.dispatches.Add(1)
	if err := q.flushRptr(); err != nil {
		return err
	}
	if err := q.cfg.Host.Dispatch(q, cs); err != nil {
		select {
		case <-stop:
			return hqd.ErrStopped // aborted by Stop: executed again on Start, not a queue error
		default:
		}
		return fmt.Errorf("%w: %w", ErrDispatchFailed, err)
	}
	q.dispatchID++
	return nil
}
