package sdma

import (
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/kfdemu/kfdemu/gpu/hqd"
	"sync/atomic"
)

// Memory is the queue's view of the process's GPU address space. Atomic is a read-modify-write of
// a naturally aligned 4- or 8-byte word (f == nil: a load).
type Memory interface {
	Read(va uint64, p []byte) error
	Write(va uint64, p []byte) error
	Atomic(va uint64, size int, f func(old uint64) uint64) (uint64, error)
}

// Host receives what the engine reports; it is called from the queue goroutine only.
type Host interface {
	// Interrupt is a TRAP packet: contextID is its 28-bit int_context, which the IH entry
	// carries and kfd_int_process_v9.c passes to kfd_signal_event_interrupt (an event id).
	Interrupt(q *Queue, contextID uint32)
	// Timestamp is the 64-bit GPU clock (TIMESTAMP GET / GET_GLOBAL).
	Timestamp() uint64
	// QueueError reports the queue's first and only error; the queue has stopped.
	QueueError(q *Queue, err error)
}

// Config describes one SDMA queue (kfd CREATE_QUEUE with an SDMA type).
type Config struct {
	RingBase      uint64 // 256-byte aligned
	RingSizeBytes uint32 // power of two, 256 bytes .. 4 MiB
	ReadPtrVA     uint64 // 64-bit byte index written by the engine; 8-byte aligned
	WritePtrVA    uint64 // 64-bit byte index written by the client; 8-byte aligned
	Memory        Memory
	Host          Host
	Tag           any
	// WideCopyCount: COPY_LINEAR's count field is 30 bits (count_ext in ROCr's sdma_registers.h),
	// as on the SDMA of gfx90a and of gfx1030 and later, where ROCr 6.2.4 sends copies of up to
	// 2^30 - 1 bytes in one packet (GpuAgent::CreateBlitSdma copy_size_overrides); else 22 bits.
	WideCopyCount bool
}

// Errors. A queue error wraps one of the sentinels in a *PacketError.
var (
	ErrConfig      = errors.New("sdma: invalid queue configuration")
	ErrMalformed   = errors.New("sdma: malformed packet")
	ErrUnsupported = errors.New("sdma: packet not modelled")
	ErrWritePtr    = errors.New("sdma: write pointer behind the read pointer or more than a ring ahead")
	ErrFault       = errors.New("sdma: memory fault")
)

// FaultError is a Memory error of the engine.
type FaultError struct {
	VA  uint64
	Op  string
	Err error
}

func (e *FaultError) Error() string {
	return fmt.Sprintf("sdma: fault at %#x (%s): %v", e.VA, e.Op, e.Err)
}
func (e *FaultError) Unwrap() error        { return e.Err }
func (e *FaultError) Is(target error) bool { return target == ErrFault }

// PacketError locates a queue error.
type PacketError struct {
	Index  uint64 // byte index of the packet (read pointer value)
	Header uint32
	Err    error
}

func (e *PacketError) Error() string {
	return fmt.Sprintf("sdma: packet at byte %d (header %#08x): %v", e.Index, e.Header, e.Err)
}
func (e *PacketError) Unwrap() error { return e.Err }

// Status is a snapshot for debugfs.
type Status struct {
	State                 hqd.State // StateBlocked: a POLL_REGMEM waits
	ReadIndex, WriteIndex uint64
	Packets, Bytes        uint64 // packets retired; bytes copied or filled
	Err                   error
}

const (
	ringMinBytes = 256
	ringMaxBytes = 4 << 20
	chunk        = 64 << 10 // copy buffer
	maxPacketDw  = 1 + MaxNOPCount
)

// Queue is one SDMA ring (an RLC queue of an SDMA engine).
type Queue struct {
	hqd.Runner // doorbell, run state, stop and the error state
	cfg        Config
	size       uint64

	// owned by the queue goroutine
	rd  uint64
	buf []byte // copy and fill buffer (chunk bytes)
	dw  [16]uint32
	// a TRAP asked for an interrupt with context trapCtx (28 bits), sent once it retires (interrupt)
	trap    bool
	trapCtx uint32

	rdPub, wrPub   atomic.Uint64
	packets, bytes atomic.Uint64
}

// New validates cfg and returns a stopped queue; the read index starts at the value at ReadPtrVA.
func New(cfg Config) (*Queue, error) {
	switch {
	case cfg.Memory == nil || cfg.Host == nil:
		return nil, fmt.Errorf("%w: Memory and Host are required", ErrConfig)
	case cfg.RingSizeBytes < ringMinBytes || cfg.RingSizeBytes > ringMaxBytes || cfg.RingSizeBytes&(cfg.RingSizeBytes-1) != 0:
		return nil, fmt.Errorf("%w: ring size %d", ErrConfig, cfg.RingSizeBytes)
	case cfg.RingBase%256 != 0 || cfg.ReadPtrVA%8 != 0 || cfg.WritePtrVA%8 != 0:
		return nil, fmt.Errorf("%w: misaligned ring or pointers", ErrConfig)
	}
	q := &Queue{cfg: cfg, size: uint64(cfg.RingSizeBytes), buf: make([]byte, chunk)}
	q.Init(hqd.Engine{Step: q.next, Fail: func(err error) { q.cfg.Host.QueueError(q, err) }})
	r, err := cfg.Memory.Atomic(cfg.ReadPtrVA, 8, nil)
	if err != nil {
		return nil, &FaultError{VA: cfg.ReadPtrVA, Op: "read pointer", Err: err}
	}
	q.rd = r
	q.rdPub.Store(r)
	return q, nil
}

// Tag returns Config.Tag.
func (q *Queue) Tag() any { return q.cfg.Tag }

// Status returns a snapshot.
func (q *Queue) Status() Status {
	return Status{State: q.State(), ReadIndex: q.rdPub.Load(), WriteIndex: q.wrPub.Load(), Packets: q.packets.Load(),
		Bytes: q.bytes.Load(), Err: q.Err()}
}

// next executes the packet at the read index (hqd.Engine.Step): false when the ring is empty or
// the packet is not completely written yet.
func (q *Queue) next(stop <-chan struct{}) (bool, error) {
	w, err := q.cfg.Memory.Atomic(q.cfg.WritePtrVA, 8, nil)
	if err != nil {
		return false, &FaultError{VA: q.cfg.WritePtrVA, Op: "write pointer", Err: err}
	}
	q.wrPub.Store(w)
	if w == q.rd {
		return false, nil
	}
	if w < q.rd || w-q.rd > q.size || w%4 != 0 {
		return false, fmt.Errorf("%w: read %d write %d ring %d", ErrWritePtr, q.rd, w, q.size)
	}
	n, ok, err := q.step(stop, w-q.rd)
	if err != nil {
		return false, &PacketError{Index: q.rd, Header: q.dw[0], Err: err}
	}
	if !ok {
		return false, nil // a partial packet: wait for a kick
	}
	q.rd += 4 * n
	if _, err := q.cfg.Memory.Atomic(q.cfg.ReadPtrVA, 8, q.storeRd); err != nil {
		return false, &FaultError{VA: q.cfg.ReadPtrVA, Op: "read pointer", Err: err}
	}
	q.rdPub.Store(q.rd)
	q.packets.Add(1)
	q.interrupt()
	return true, nil
}

// interrupt sends the interrupt a TRAP asked for, after the packet retired and the read pointer
// passed it: the engine consumes the packet before its interrupt, and a host woken by the event
// places its next packets by that pointer (kfdtest's Wait4PacketConsumption with an event; see
// gpu/cp/pm4 Queue.interrupt for the PM4 case a CI run caught).
func (q *Queue) interrupt() {
	if q.trap {
		q.trap = false
		q.cfg.Host.Interrupt(q, q.trapCtx)
	}
}

func (q *Queue) storeRd(uint64) uint64 { return q.rd }

// fetch loads n dwords of the packet at the read index into q.dw (n <= len(q.dw)).
func (q *Queue) fetch(n int) error {
	var b [4 * 16]byte
	for i := 0; i < n; {
		off := (q.rd + 4*uint64(i)) % q.size
		m := min(uint64(n-i), (q.size-off)/4)
		va := q.cfg.RingBase + off
		if err := q.cfg.Memory.Read(va, b[:4*m]); err != nil {
			return &FaultError{VA: va, Op: "ring", Err: err}
		}
		for j := uint64(0); j < m; j++ {
			q.dw[i+int(j)] = binary.LittleEndian.Uint32(b[4*j:])
		}
		i += int(m)
	}
	return nil
}

// ringVA is the address of dword i of the current packet.
func (q *Queue) ringVA(i uint64) uint64 { return q.cfg.RingBase + (q.rd+4*i)%q.size }

// step executes the packet at the read index with avail bytes written. It returns the packet's
// dword count and ok; ok is false for a packet not completely written yet. A POLL_REGMEM whose
// condition does not hold waits (hqd.Runner.Wait); a stop abandons it at its packet.
func (q *Queue) step(stop <-chan struct{}, avail uint64) (n uint64, ok bool, err error) {
	if err := q.fetch(1); err != nil {
		return 0, false, err
	}
	h := q.dw[0]
	op, sub := h&0xff, h>>8&0xff
	switch op {
	case OpNOP:
		n = 1 + uint64(h>>16&MaxNOPCount)
	case OpCopy:
		switch {
		case sub == SubCopyLinearSubWindow:
			n = 13
		case sub != SubCopyLinear:
			return 0, false, fmt.Errorf("%w: COPY sub-opcode %d", ErrUnsupported, sub)
		case h&copyBroadcastBit != 0:
			n = 9
		default:
			n = 7
		}
	case OpWrite:
		if sub != SubWriteLinear {
			return 0, false, fmt.Errorf("%w: WRITE sub-opcode %d", ErrUnsupported, sub)
		}
		if avail < 16 {
			return 1, false, nil
		}
		if err := q.fetch(4); err != nil {
			return 0, false, err
		}
		n = 4 + uint64(q.dw[3]&(MaxWriteDwords-1)) + 1
	case OpFence:
		n = 4
	case OpTrap:
		n = 2
	case OpPollRegMem:
		if sub != SubPollRegMem {
			return 0, false, fmt.Errorf("%w: POLL_REGMEM sub-opcode %d", ErrUnsupported, sub)
		}
		n = 6
	case OpAtomic:
		n = 8
	case OpConstFill:
		if sub != SubConstFill {
			return 0, false, fmt.Errorf("%w: CONSTANT_FILL sub-opcode %d", ErrUnsupported, sub)
		}
		n = 5
	case OpTimestamp:
		if sub > SubTimestampGetGlobal {
			return 0, false, fmt.Errorf("%w: TIMESTAMP sub-opcode %d", ErrUnsupported, sub)
		}
		n = 3
	default:
		return 0, false, fmt.Errorf("%w: opcode %d", ErrUnsupported, op)
	}
	if 4*n > avail {
		if 4*n > q.size {
			return 0, false, fmt.Errorf("%w: %d-dword packet in a %d-byte ring", ErrMalformed, n, q.size)
		}
		return n, false, nil
	}
	if op != OpNOP && op != OpWrite {
		if err := q.fetch(int(n)); err != nil {
			return 0, false, err
		}
	}
	m := q.cfg.Memory
	addr := func(i int) uint64 { return uint64(q.dw[i]) | uint64(q.dw[i+1])<<32 }
	if (op == OpCopy || op == OpConstFill) && q.buf == nil {
		q.buf = make([]byte, chunk) // an IB's queue gets its copy buffer when it first needs it
	}
	switch op {
	case OpCopy:
		if sub == SubCopyLinearSubWindow {
			if err := q.copySubWindow(); err != nil {
				return 0, false, err
			}
			break
		}
		mask := uint32(MaxCopyBytes - 1)
		if q.cfg.WideCopyCount {
			mask = 1<<30 - 1
		}
		cnt := uint64(q.dw[1]&mask) + 1
		src, dst := addr(3), addr(5)
		for off := uint64(0); off < cnt; off += chunk {
			l := min(chunk, cnt-off)
			if err := m.Read(src+off, q.buf[:l]); err != nil {
				return 0, false, &FaultError{VA: src + off, Op: "copy source", Err: err}
			}
			if err := m.Write(dst+off, q.buf[:l]); err != nil {
				return 0, false, &FaultError{VA: dst + off, Op: "copy destination", Err: err}
			}
			if n == 9 {
				if err := m.Write(addr(7)+off, q.buf[:l]); err != nil {
					return 0, false, &FaultError{VA: addr(7) + off, Op: "copy destination", Err: err}
				}
			}
		}
		q.bytes.Add(cnt)
	case OpWrite:
		dst := addr(1)
		var b [4]byte
		for i := uint64(0); i < n-4; i++ {
			va := q.ringVA(4 + i)
			if err := m.Read(va, b[:]); err != nil {
				return 0, false, &FaultError{VA: va, Op: "ring", Err: err}
			}
			if err := m.Write(dst+4*i, b[:]); err != nil {
				return 0, false, &FaultError{VA: dst + 4*i, Op: "write", Err: err}
			}
		}
	case OpFence:
		v := q.dw[3]
		if _, err := m.Atomic(addr(1), 4, func(uint64) uint64 { return uint64(v) }); err != nil {
			return 0, false, &FaultError{VA: addr(1), Op: "fence", Err: err}
		}
	case OpTrap: // sent once the packet retires (interrupt)
		q.trap, q.trapCtx = true, q.dw[1]&0x0fffffff
	case OpPollRegMem:
		if PollFunc(h>>28&7) == PollAlways {
			break // "always": passes at once, whatever it would read
		}
		if h&pollMemBit == 0 {
			if h&pollHDPFlushBit != 0 {
				break // HDP flush: host-visible memory is always coherent here
			}
			return 0, false, fmt.Errorf("%w: POLL_REGMEM on a register", ErrUnsupported)
		}
		va, fn, ref, mask := addr(1), PollFunc(h>>28&7), q.dw[3], q.dw[4]
		if err := q.Wait(stop, func() (bool, error) {
			v, err := m.Atomic(va, 4, nil)
			if err != nil {
				return false, &FaultError{VA: va, Op: "poll", Err: err}
			}
			return compare(fn, uint32(v)&mask, ref), nil
		}); err != nil {
			return 0, false, err
		}
	case OpAtomic:
		if err := q.atomic(h, addr(1), addr(3), addr(5)); err != nil {
			return 0, false, err
		}
	case OpConstFill:
		if err := q.fill(h, addr(1), q.dw[3], uint64(q.dw[4]&(MaxFillBytes-1))+1); err != nil {
			return 0, false, err
		}
	case OpTimestamp:
		if sub != SubTimestampSet {
			t := q.cfg.Host.Timestamp()
			if _, err := m.Atomic(addr(1), 8, func(uint64) uint64 { return t }); err != nil {
				return 0, false, &FaultError{VA: addr(1), Op: "timestamp", Err: err}
			}
		}
	}
	return n, true, nil
}

func compare(f PollFunc, v, ref uint32) bool {
	switch f {
	case PollAlways:
		return true
	case PollLess:
		return v < ref
	case PollLessEqual:
		return v <= ref
	case PollEqual:
		return v == ref
	case PollNotEqual:
		return v != ref
	case PollGreaterEqual:
		return v >= ref
	case PollGreater:
		return v > ref
	}
	return false
}

// atomic executes an ATOMIC packet: the TC opcode in header bits 31:25 (0x40 set: no return).
func (q *Queue) atomic(h uint32, va, src, cmp uint64) error {
	op := h >> 25 & 0x3f
	size := 4
	if op >= 0x20 {
		size, op = 8, op-0x20
	}
	mask := uint64(1)<<(8*size) - 1
	if size == 8 {
		mask = ^uint64(0)
	}
	src, cmp = src&mask, cmp&mask
	sext := func(v uint64) int64 {
		if size == 4 {
			return int64(int32(v))
		}
		return int64(v)
	}
	var f func(old uint64) uint64
	switch op {
	case AtomicSwap32:
		f = func(uint64) uint64 { return src }
	case AtomicCmpSwap32:
		f = func(o uint64) uint64 {
			if o == cmp {
				return src
			}
			return o
		}
	case AtomicAdd32:
		f = func(o uint64) uint64 { return (o + src) & mask }
	case AtomicSub32:
		f = func(o uint64) uint64 { return (o - src) & mask }
	case AtomicSMin32:
		f = func(o uint64) uint64 { return uint64(min(sext(o), sext(src))) & mask }
	case AtomicUMin32:
		f = func(o uint64) uint64 { return min(o, src) }
	case AtomicSMax32:
		f = func(o uint64) uint64 { return uint64(max(sext(o), sext(src))) & mask }
	case AtomicUMax32:
		f = func(o uint64) uint64 { return max(o, src) }
	case AtomicAnd32:
		f = func(o uint64) uint64 { return o & src }
	case AtomicOr32:
		f = func(o uint64) uint64 { return o | src }
	case AtomicXor32:
		f = func(o uint64) uint64 { return o ^ src }
	case AtomicInc32: // TC inc: old >= src ? 0 : old + 1
		f = func(o uint64) uint64 {
			if o >= src {
				return 0
			}
			return o + 1
		}
	case AtomicDec32: // TC dec: old == 0 || old > src ? src : old - 1
		f = func(o uint64) uint64 {
			if o == 0 || o > src {
				return src
			}
			return o - 1
		}
	default:
		return fmt.Errorf("%w: ATOMIC operation %#x", ErrUnsupported, h>>25)
	}
	if va%uint64(size) != 0 {
		return fmt.Errorf("%w: misaligned %d-byte ATOMIC at %#x", ErrMalformed, size, va)
	}
	if _, err := q.cfg.Memory.Atomic(va, size, f); err != nil {
		return &FaultError{VA: va, Op: "atomic", Err: err}
	}
	return nil
}

// fill executes CONSTANT_FILL: cnt bytes of the 1<<fillsize-byte element of value.
func (q *Queue) fill(h uint32, dst uint64, value uint32, cnt uint64) error {
	es := uint64(1) << (h >> 30 & 3)
	if es > 4 || cnt%es != 0 {
		return fmt.Errorf("%w: CONSTANT_FILL of %d bytes in %d-byte elements", ErrMalformed, cnt, es)
	}
	var e [4]byte
	binary.LittleEndian.PutUint32(e[:], value)
	l := min(chunk, cnt)
	for i := uint64(0); i < l; i++ {
		q.buf[i] = e[i%es]
	}
	for off := uint64(0); off < cnt; off += chunk {
		n := min(chunk, cnt-off)
		if err := q.cfg.Memory.Write(dst+off, q.buf[:n]); err != nil {
			return &FaultError{VA: dst + off, Op: "fill", Err: err}
		}
	}
	q.bytes.Add(cnt)
	return nil
}

// copySubWindow executes COPY_LINEAR_SUB_WINDOW (q.dw holds its 13 dwords): a rectangle of
// (rect_x+1) x (rect_y+1) x (rect_z+1) elements of 1<<element bytes, each row a linear run, from
// base + ((x + y*pitch + z*slice_pitch) << element) on either side; pitches are stored minus one
// (ROCr BuildCopyRectCommand, sdma_registers.h SDMA_PKT_COPY_LINEAR_RECT).
func (q *Queue) copySubWindow() error {
	d := q.dw[:13]
	es := uint(d[0] >> 29 & 7)
	if es > 4 {
		return fmt.Errorf("%w: COPY_LINEAR_SUB_WINDOW element size %d", ErrUnsupported, es)
	}
	type side struct{ base, x, y, z, pitch, slice uint64 }
	decode := func(i int) side {
		return side{base: uint64(d[i]) | uint64(d[i+1])<<32,
			x: uint64(d[i+2] & 0x3fff), y: uint64(d[i+2] >> 16 & 0x3fff),
			z: uint64(d[i+3] & 0x7ff), pitch: uint64(d[i+3]>>13) + 1, slice: uint64(d[i+4]&(1<<28-1)) + 1}
	}
	src, dst := decode(1), decode(6)
	w := uint64(d[11]&0x3fff) + 1
	h := uint64(d[11]>>16&0x3fff) + 1
	depth := uint64(d[12]&0x7ff) + 1
	at := func(s side, y, z uint64) uint64 {
		return s.base + (s.x+(s.y+y)*s.pitch+(s.z+z)*s.slice)<<es
	}
	row := w << es
	m := q.cfg.Memory
	for z := uint64(0); z < depth; z++ {
		for y := uint64(0); y < h; y++ {
			s, t := at(src, y, z), at(dst, y, z)
			for off := uint64(0); off < row; off += chunk {
				l := min(chunk, row-off)
				if err := m.Read(s+off, q.buf[:l]); err != nil {
					return &FaultError{VA: s + off, Op: "copy source", Err: err}
				}
				if err := m.Write(t+off, q.buf[:l]); err != nil {
					return &FaultError{VA: t + off, Op: "copy destination", Err: err}
				}
			}
			q.bytes.Add(row)
		}
	}
	return nil
}
