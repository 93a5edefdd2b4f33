package pm4

import (
	"errors"
	"fmt"
	"github.com/kfdemu/kfdemu/gpu/hqd"
	"sync/atomic"
)

// frame is one level of the fetch stack: the ring (depth 0) or an indirect buffer.
type frame struct {
	base uint64 // VA of dword 0
	size uint64 // dwords: the ring size, or ib_size
	pos  uint64 // next dword: the 64-bit read index in the ring, the offset in an IB
	ret  uint64 // IB frames: dwords of the INDIRECT_BUFFER packet to retire in the parent on return
}

// Queue is one PM4 compute queue's packet processor (an HQD of the MEC running a PM4 ring).
type Queue struct {
	hqd.Runner // doorbell, run state, stop and the error state
	cfg        Config
	sizeDw     uint64

	rd         atomic.Uint64 // ring read index, mirrored from frames[0].pos for Status
	wptrSeen   atomic.Uint64 // write pointer as the queue goroutine last loaded it (Status)
	rptr       atomic.Uint32
	depth      atomic.Int32
	packets    atomic.Uint64
	dispatches atomic.Uint64
	interrupts atomic.Uint64

	// Owned by the queue goroutine (and by Stop/Start's happens-before edges between runs).
	frames [maxIBDepth + 1]frame
	sp     int // index of the current frame
	// ring prefetch: dwords [pfLo, pfHi) of the ring (monotonic positions) read at once, all of
	// them below a write pointer already loaded, so published and not rewritten before they are
	// consumed (the CP's prefetcher reads ahead the same way). wLimit is that write pointer.
	pf         [prefetchDwords * 4]byte
	pfLo, pfHi uint64
	wLimit     uint64
	// rptrPending counts packets retired since the read pointer was last written (flushRptr).
	rptrPending int
	intPending  bool   // a RELEASE_MEM asked for an interrupt, sent once it retires (interrupt)
	intCtx      uint32 // its int_ctxid
	chains      int    // IB chains followed since the current ring packet started
	pkt         [packetMaxDwords * 4]byte
	sh          [shRegs]uint32
	uconfig     [uconfigRegs]uint32
	cs          ComputeState
	wr          waitRegMem
	storeVal    uint64
	storeFn     func(uint64) uint64
	dispatchID  uint64 // dispatches completed: the ID of the next (DispatchID)
}

// New validates cfg and returns a stopped queue. The CP's read index is derived the way the HQD
// sees the ring: the dwords pending are (wptr - rptr) mod ring size, with rptr loaded from
// ReadPtrVA (0 for a fresh kfd queue) and wptr from WritePtrVA.
func New(cfg Config) (*Queue, error) {
	switch {
	case cfg.Memory == nil || cfg.Host == nil:
		return nil, fmt.Errorf("%w: Memory and Host are required", ErrConfig)
	case cfg.RingSizeBytes < ringMinBytes || cfg.RingSizeBytes > ringMaxBytes || cfg.RingSizeBytes&(cfg.RingSizeBytes-1) != 0:
		return nil, fmt.Errorf("%w: ring size %d is not a power of two in [%d, %d]", ErrConfig, cfg.RingSizeBytes, ringMinBytes, ringMaxBytes)
	case cfg.RingBase%ringBaseAlign != 0:
		return nil, fmt.Errorf("%w: ring base %#x not %d-byte aligned", ErrConfig, cfg.RingBase, ringBaseAlign)
	case cfg.RingBase+uint64(cfg.RingSizeBytes) < cfg.RingBase:
		return nil, fmt.Errorf("%w: ring wraps the address space", ErrConfig)
	case cfg.ReadPtrVA%rptrAlign != 0 || cfg.WritePtrVA%wptrAlign != 0:
		return nil, fmt.Errorf("%w: read pointer must be 4-byte and write pointer 8-byte aligned", ErrConfig)
	}
	q := &Queue{cfg: cfg, sizeDw: uint64(cfg.RingSizeBytes) / 4}
	// Fail publishes the read pointer before the error reaches the host (runs on the queue's
	// goroutine): a client woken by the error sees where the queue stopped. (Exit publishes it
	// too, but after the state has become StateError: TestQueueErrors saw the old value under -race.)
	q.Init(hqd.Engine{Step: q.step, Idle: q.flushRptr, Exit: q.exit, Fail: func(err error) { _ = q.flushRptr(); q.cfg.Host.QueueError(q, err) },
		Starting: func() { q.pfLo, q.pfHi, q.wLimit = 0, 0, 0 }}) // read the ring and its write pointer afresh after a stop
	q.storeFn = func(uint64) uint64 { return q.storeVal }
	r, err := q.load(cfg.ReadPtrVA, 4, "read pointer")
	if err != nil {
		return nil, err
	}
	if r >= q.sizeDw {
		return nil, fmt.Errorf("%w: read pointer %d outside a ring of %d dwords", ErrConfig, r, q.sizeDw)
	}
	w, err := q.load(cfg.WritePtrVA, 8, "write pointer")
	if err != nil {
		return nil, err
	}
	q.wptrSeen.Store(w)
	rd := w - (w-r)&(q.sizeDw-1)
	q.frames[0] = frame{base: cfg.RingBase, size: q.sizeDw, pos: rd}
	q.rd.Store(rd)
	q.rptr.Store(uint32(r))
	return q, nil
}

// Tag returns Config.Tag.
func (q *Queue) Tag() any { return q.cfg.Tag }

// Config returns the queue's configuration.
func (q *Queue) Config() Config { return q.cfg }

// DispatchID identifies the dispatch being executed; valid during Host.Dispatch. It is the number
// of dispatches the queue completed before it, so a dispatch abandoned by Stop and executed again
// after Start has the same ID (the host keys its context save by it).
func (q *Queue) DispatchID() uint64 { return q.dispatchID }

// Register returns an SH or UCONFIG register of this queue's register file (absolute dword
// offset). It reads queue-goroutine state: call it only from Host methods (for example for
// COMPUTE_STATIC_THREAD_MGMT_SE* during Dispatch) or while the queue is stopped.
func (q *Queue) Register(reg uint32) (uint32, bool) {
	p := q.reg(reg)
	if p == nil {
		return 0, false
	}
	return *p, true
}

// Status returns a snapshot for debugfs.
func (q *Queue) Status() Status {
	s := Status{State: q.State(), ReadPtr: q.rptr.Load(), ReadIndex: q.rd.Load(), RingBase: q.cfg.RingBase,
		RingSizeBytes: q.cfg.RingSizeBytes, Depth: int(q.depth.Load()), Packets: q.packets.Load(),
		Dispatches: q.dispatches.Load(), Interrupts: q.interrupts.Load(), Scans: q.Scans(), Err: q.Err()}
	s.WritePtr = q.wptrSeen.Load() // Memory is the queue goroutine's alone
	return s
}

// exit publishes how far a stopped or failed queue got (a fault here has nowhere to go).
func (q *Queue) exit() { _ = q.flushRptr() }

// load atomically loads a 4- or 8-byte word shared with the client.
func (q *Queue) load(va uint64, size int, op string) (uint64, error) {
	v, err := q.cfg.Memory.Atomic(va, size, nil) // a load: never written back
	if err != nil {
		return 0, &FaultError{VA: va, Op: op, Err: err}
	}
	return v, nil
}

// store atomically stores a 4- or 8-byte word (a release: everything before it is visible).
func (q *Queue) store(va uint64, size int, v uint64, op string) error {
	q.storeVal = v
	if _, err := q.cfg.Memory.Atomic(va, size, q.storeFn); err != nil {
		return &FaultError{VA: va, Op: op, Err: err}
	}
	return nil
}

// dwordVA is the address of dword i of frame f (the ring wraps).
func (q *Queue) dwordVA(f *frame, i uint64) uint64 {
	if f == &q.frames[0] {
		return f.base + (i&(q.sizeDw-1))*4
	}
	return f.base + i*4
}

// fetch copies n dwords starting at dword pos of the current frame into q.pkt[4*at:].
func (q *Queue) fetch(f *frame, pos, n uint64, at int) error {
	dst := q.pkt[4*at : 4*(uint64(at)+n)]
	op := "indirect buffer"
	if q.sp == 0 {
		op = "ring"
		if q.prefetched(pos, n, dst) {
			return nil
		}
		off := pos & (q.sizeDw - 1)
		if first := q.sizeDw - off; first < n { // the packet wraps the ring end
			if err := q.cfg.Memory.Read(f.base+off*4, dst[:4*first]); err != nil {
				return &FaultError{VA: f.base + off*4, Op: op, Err: err}
			}
			if err := q.cfg.Memory.Read(f.base, dst[4*first:]); err != nil {
				return &FaultError{VA: f.base, Op: op, Err: err}
			}
			return nil
		}
	}
	va := q.dwordVA(f, pos)
	if err := q.cfg.Memory.Read(va, dst); err != nil {
		return &FaultError{VA: va, Op: op, Err: err}
	}
	return nil
}

// loadWptr loads the ring's write pointer into q.wLimit, checking it against the read index of
// ring frame f.
func (q *Queue) loadWptr(f *frame) error {
	w, err := q.load(q.cfg.WritePtrVA, 8, "write pointer")
	if err != nil {
		return err
	}
	q.wptrSeen.Store(w)
	if w < f.pos || w-f.pos > q.sizeDw {
		return fmt.Errorf("%w: write pointer %d, read index %d, ring of %d dwords", ErrWritePointer, w, f.pos, q.sizeDw)
	}
	q.wLimit = w
	return nil
}

// prefetchDwords is how far ahead the ring is read in one access (16 KiB).
const prefetchDwords = 4096

// prefetched serves n ring dwords at pos from the prefetch buffer, refilling it from pos up to the
// loaded write pointer, the ring's end or the buffer's size, whichever comes first: one memory
// access per many packets (on userptr memory each access is a process_vm_readv). False when the
// dwords are not there (not published yet, or crossing the ring end): fetch reads them directly.
func (q *Queue) prefetched(pos, n uint64, dst []byte) bool {
	if pos < q.pfLo || pos+n > q.pfHi {
		off := pos & (q.sizeDw - 1)
		cnt := min(q.wLimit-pos, q.sizeDw-off, prefetchDwords)
		if q.wLimit <= pos || cnt < n {
			return false
		}
		if err := q.cfg.Memory.Read(q.frames[0].base+off*4, q.pf[:4*cnt]); err != nil {
			q.pfLo, q.pfHi = 0, 0
			return false // fetch reads again and reports the fault at its own address
		}
		q.pfLo, q.pfHi = pos, pos+cnt
	}
	copy(dst, q.pf[4*(pos-q.pfLo):4*(pos-q.pfLo+n)])
	return true
}

// packetDwords returns the size in dwords of the packet whose header is h.
func packetDwords(h uint32) (uint64, error) {
	switch h >> 30 {
	case PacketType2:
		return 1, nil
	case PacketType3:
		count := h >> 16 & 0x3FFF
		if count == CountOneDwordNOP && h>>8&0xFF == OpNOP {
			return 1, nil
		}
		return uint64(count) + 2, nil
	case PacketType0:
		return 0, fmt.Errorf("%w: type-0 register packet on a compute queue", ErrUnsupported)
	}
	return 0, fmt.Errorf("%w: type-1 packet", ErrMalformed)
}

// step executes (or finishes) one packet at the top of the fetch stack. It returns false when the
// ring has nothing complete to execute.
func (q *Queue) step(stop <-chan struct{}) (bool, error) {
	f := &q.frames[q.sp]
	var avail uint64
	if q.sp == 0 {
		// The write pointer is loaded again only once the packets it published are consumed
		// (or one is incomplete, below): on userptr memory each load is a process_vm_readv.
		if q.wLimit <= f.pos {
			if err := q.loadWptr(f); err != nil {
				return false, err
			}
			if q.wLimit == f.pos {
				return false, nil
			}
		}
		avail = q.wLimit - f.pos
	} else {
		if f.pos >= f.size { // end of this IB: the INDIRECT_BUFFER packet in the parent completes
			ret := f.ret
			q.sp--
			q.depth.Store(int32(q.sp))
			return true, q.retire(ret)
		}
		avail = f.size - f.pos
	}
	va := q.dwordVA(f, f.pos)
	if err := q.fetch(f, f.pos, 1, 0); err != nil {
		return false, q.packetErr(va, 0, err)
	}
	h := le32(q.pkt[:])
	n, err := packetDwords(h)
	if err != nil {
		return false, q.packetErr(va, h, err)
	}
	if n > avail {
		if q.sp == 0 && n <= q.sizeDw {
			if err := q.loadWptr(f); err != nil { // more may have been published since
				return false, err
			}
			if q.wLimit-f.pos > avail {
				return true, nil // it has: step again
			}
			return false, nil // the client has not written the whole packet yet
		}
		return false, q.packetErr(va, h, fmt.Errorf("%w: %d-dword packet, %d dwords left (ring size or IB end)", ErrMalformed, n, avail))
	}
	if n > 1 && !(h>>30 == PacketType3 && h>>8&0xFF == OpNOP) { // a NOP's body is never read
		if err := q.fetch(f, f.pos+1, n-1, 1); err != nil {
			return false, q.packetErr(va, h, err)
		}
	}
	retire, err := q.exec(stop, h, n)
	if err != nil {
		if errors.Is(err, hqd.ErrStopped) {
			return false, err
		}
		return false, q.packetErr(va, h, err)
	}
	if retire {
		if err := q.retire(n); err != nil {
			return true, err
		}
	}
	return true, q.interrupt()
}

// interrupt sends the interrupt a RELEASE_MEM asked for, after the packet retired and with the
// read pointer written past it: the CP raises the end-of-pipe interrupt once it has consumed the
// packet, and a host woken by the event finds the ring space freed (kfdtest
// KFDQMTest.QueueLatency places its next two packets by the read pointer as soon as the event
// fires; with the pointer still at the RELEASE_MEM it found 7 dwords of the 8 it needed).
func (q *Queue) interrupt() error {
	if !q.intPending {
		return nil
	}
	q.intPending = false
	q.interrupts.Add(1)
	if err := q.flushRptr(); err != nil {
		return err
	}
	q.cfg.Host.Interrupt(q, q.intCtx)
	return nil
}

// retire advances the current frame past an n-dword packet; in the ring it publishes the read
// pointer (dwords, wrapping at the ring size: kfdtest PM4Queue::Rptr/RptrWhenConsumed).
func (q *Queue) retire(n uint64) error {
	f := &q.frames[q.sp]
	f.pos += n
	if q.sp != 0 {
		return nil
	}
	q.chains = 0
	q.rd.Store(f.pos)
	q.packets.Add(1)
	if q.rptrPending++; q.rptrPending >= rptrBatch {
		return q.flushRptr()
	}
	return nil
}

// rptrBatch bounds how many retired packets the read pointer in memory may lag behind.
const rptrBatch = 64

// flushRptr writes the read pointer back (dwords, wrapping at the ring size: kfdtest
// PM4Queue::Rptr/RptrWhenConsumed). Like the CP's rptr report it is not written per packet: it is
// written every rptrBatch packets and whenever the queue goes idle, blocks (WAIT_REG_MEM), runs a
// dispatch, interrupts the host or stops, so a client waiting for consumption always sees it.
func (q *Queue) flushRptr() error {
	if q.rptrPending == 0 {
		return nil
	}
	q.rptrPending = 0
	r := uint32(q.frames[0].pos & (q.sizeDw - 1))
	if err := q.store(q.cfg.ReadPtrVA, 4, uint64(r), "read pointer"); err != nil {
		return err
	}
	q.rptr.Store(r)
	return nil
}

func (q *Queue) packetErr(va uint64, h uint32, err error) error {
	return &PacketError{ReadIndex: q.frames[0].pos, Depth: q.sp, VA: va, Header: h, Err: err}
}

// wait blocks on the pending WAIT_REG_MEM (q.wr) until it holds, it fails, or the queue is
// stopped (hqd.Runner.Wait: re-checked on every kick and on a bounded backoff; nothing spins). The
// read pointer is published first: a client waiting for consumption sees it.
func (q *Queue) wait(stop <-chan struct{}) error {
	if ok, err := q.waitSatisfied(); ok || err != nil {
		return err
	}
	if err := q.flushRptr(); err != nil {
		return err
	}
	return q.Wait(stop, q.waitSatisfied)
}

func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}
