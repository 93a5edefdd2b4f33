package cp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kfdemu/kfdemu/gpu/aql"
	"github.com/kfdemu/kfdemu/gpu/hqd"
)

var errUnmapped = errors.New("unmapped")

// memory is a flat in-memory GPU address space [base, base+len(b)). A large make([]byte) is
// page-aligned by the Go allocator, so aligned VAs give aligned views (word64 checks it anyway).
type memory struct {
	base uint64
	b    []byte
}

func newMemory(base uint64, size int) *memory { return &memory{base: base, b: make([]byte, size)} }

func (m *memory) off(va, n uint64) (uint64, error) {
	if va < m.base || n > uint64(len(m.b)) || va-m.base > uint64(len(m.b))-n {
		return 0, fmt.Errorf("%w: %#x+%d", errUnmapped, va, n)
	}
	return va - m.base, nil
}

func (m *memory) Read(va uint64, p []byte) error {
	o, err := m.off(va, uint64(len(p)))
	if err != nil {
		return err
	}
	wordCopy(m.b[o:o+uint64(len(p))], p, false)
	return nil
}

func (m *memory) Write(va uint64, p []byte) error {
	o, err := m.off(va, uint64(len(p)))
	if err != nil {
		return err
	}
	wordCopy(m.b[o:o+uint64(len(p))], p, true)
	return nil
}

// wordCopy copies buf into mem (store) or mem into buf (of one length) as a GPU and the CPU access
// memory: each aligned 8- or 4-byte word of mem, a slice of memory.b, in one atomic access. So the
// CP's reads and writes of a packet or of the read index in a release do not race the test's atomic
// loads and stores of those words, as the daemon's process_vm_readv/writev do not race a client's.
func wordCopy(mem, buf []byte, store bool) {
	le := binary.LittleEndian
	for i := 0; i < len(mem); {
		if p := word64(mem[i:]); p != nil {
			if store {
				atomic.StoreUint64(p, le.Uint64(buf[i:]))
			} else {
				le.PutUint64(buf[i:], atomic.LoadUint64(p))
			}
			i += 8
		} else if p := word32(mem[i:]); p != nil {
			if store {
				atomic.StoreUint32(p, le.Uint32(buf[i:]))
			} else {
				le.PutUint32(buf[i:], atomic.LoadUint32(p))
			}
			i += 4
		} else {
			if store {
				mem[i] = buf[i]
			} else {
				buf[i] = mem[i]
			}
			i++
		}
	}
}

func (m *memory) Slice(va, n uint64) ([]byte, error) {
	o, err := m.off(va, n)
	if err != nil {
		return nil, err
	}
	return m.b[o : o+n : o+n], nil
}

func (m *memory) Load32(va uint64) (uint32, error) {
	b, err := m.Slice(va, 4)
	if err != nil {
		return 0, err
	}
	return atomic.LoadUint32(word32(b)), nil
}

func (m *memory) Load64(va uint64) (uint64, error) {
	b, err := m.Slice(va, 8)
	if err != nil {
		return 0, err
	}
	return atomic.LoadUint64(word64(b)), nil
}

func (m *memory) Store32(va uint64, v uint32) error {
	b, err := m.Slice(va, 4)
	if err != nil {
		return err
	}
	atomic.StoreUint32(word32(b), v)
	return nil
}

func (m *memory) Store64(va uint64, v uint64) error {
	b, err := m.Slice(va, 8)
	if err != nil {
		return err
	}
	atomic.StoreUint64(word64(b), v)
	return nil
}

func (m *memory) Atomic(va uint64, size int, f func(old uint64) uint64) (uint64, error) {
	b, err := m.Slice(va, uint64(size))
	if err != nil {
		return 0, err
	}
	if size == 4 {
		p := word32(b)
		for {
			o := atomic.LoadUint32(p)
			if atomic.CompareAndSwapUint32(p, o, uint32(f(uint64(o)))) {
				return uint64(o), nil
			}
		}
	}
	p := word64(b)
	for {
		o := atomic.LoadUint64(p)
		if atomic.CompareAndSwapUint64(p, o, f(o)) {
			return o, nil
		}
	}
}

func (m *memory) word64(va uint64) *uint64 {
	b, err := m.Slice(va, 8)
	if err != nil {
		panic(err)
	}
	return word64(b)
}

func (m *memory) word32(va uint64) *uint32 {
	b, err := m.Slice(va, 4)
	if err != nil {
		panic(err)
	}
	return word32(b)
}

// fakeHost records what the packet processor reports.
type fakeHost struct {
	mu         sync.Mutex
	events     []uint64
	errs       map[*Queue][]error
	dispatches []aql.KernelDispatchPacket
	dispatch   func(q *Queue, p *aql.KernelDispatchPacket) error
	keepCode   bool // QueueError returns false: the CP stores no queue-inactive code
}

func (h *fakeHost) RaiseEvent(q *Queue, id uint64) {
	h.mu.Lock()
	h.events = append(h.events, id)
	h.mu.Unlock()
}

func (h *fakeHost) Dispatch(q *Queue, p *aql.KernelDispatchPacket) error {
	h.mu.Lock()
	h.dispatches = append(h.dispatches, *p)
	fn := h.dispatch
	h.mu.Unlock()
	if fn != nil {
		return fn(q, p)
	}
	return nil
}

func (h *fakeHost) QueueError(q *Queue, err error) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.errs == nil {
		h.errs = map[*Queue][]error{}
	}
	h.errs[q] = append(h.errs[q], err)
	return !h.keepCode
}

func (h *fakeHost) queueErrors(q *Queue) []error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]error(nil), h.errs[q]...)
}

// Address map of the test memory.
const (
	memBase    = 0x7f0000000000
	memSize    = 4 << 20
	ringArea   = memBase            // 16 rings of 0x10000 bytes (1024 packets)
	indexArea  = memBase + 0x100000 // 64 bytes per queue: read index @0, write index @8
	signalArea = memBase + 0x200000 // amd_signal_t array
	mailboxVA  = memBase + 0x3ff000 // an event slot
	signalMax  = (0x3ff000 - 0x200000) / 64
)

type env struct {
	t    testing.TB
	m    *memory
	vec  bool           // aqlQueue's memory moves pieces in one access (vecTestMemory, as mmu.Port)
	vm   *vecTestMemory // the last aqlQueue's, with vec
	bell *atomic.Uint64 // aqlQueue's doorbell word (Config.Doorbell), if set
	host *fakeHost
	nsig atomic.Int64
	nq   int
}

func newEnv(t testing.TB) *env {
	return &env{t: t, m: newMemory(memBase, memSize), host: &fakeHost{}}
}

// signal allocates an amd_signal_t of kind USER with value v and returns its handle.
func (e *env) signal(v int64) uint64 {
	n := e.nsig.Add(1) - 1
	if n >= signalMax {
		e.t.Fatal("out of test signals")
	}
	h := uint64(signalArea + n*64)
	atomic.StoreUint64(e.m.word64(h), aql.SignalKindUser)
	atomic.StoreUint64(e.m.word64(h+aql.SignalValueOffset), uint64(v))
	return h
}

func (e *env) value(h uint64) int64 {
	return int64(atomic.LoadUint64(e.m.word64(h + aql.SignalValueOffset)))
}

func (e *env) set(h uint64, v int64) {
	atomic.StoreUint64(e.m.word64(h+aql.SignalValueOffset), uint64(v))
}

// tq is a queue plus a single producer writing its ring the way ROCr does.
type tq struct {
	*Queue
	e          *env
	base       uint64
	size       uint32
	rdVA, wrVA uint64
	wr         uint64
}

type qopt struct {
	size    uint32
	group   *Group
	maxPoll time.Duration
	noStart bool
	noPoll  bool           // only kicks and Group.Wake re-check barriers
	adder   bool           // the memory has AtomicAdd and AtomicAddTail (as mmu.Port)
	bell    *atomic.Uint64 // the doorbell word Config.Doorbell reads (nil: a doorbell always at 0)
}

// vecTestMemory is memory with ReadV and WriteV, as the daemon's mmu.Port: pieces in order, each
// within one page (a piece that is not fails the test), counted.
type vecTestMemory struct {
	*memory
	t             testing.TB
	reads, writes atomic.Int64
	afters        atomic.Int64  // AtomicAddTailAfter calls
	load32s       atomic.Int64  // Load32 calls (the CP reads a packet's header with one)
	failWrite     atomic.Uint64 // a VA whose writes (WriteV pieces, AtomicAddTailAfter's word) fault; 0: none
}

// errInjected is the fault failWrite injects.
var errInjected = errors.New("injected write fault")

func (m *vecTestMemory) Load32(va uint64) (uint32, error) {
	m.load32s.Add(1)
	return m.memory.Load32(va)
}

// AtomicAddTailAfter is mmu.Port's: the pieces in order, then the 64-bit add and the bytes after
// the word.
func (m *vecTestMemory) AtomicAddTailAfter(vas []uint64, bufs [][]byte, va, d uint64, tail []byte) (uint64, int, error) {
	m.afters.Add(1)
	if n, err := m.vec(vas, bufs, m.write); err != nil {
		return 0, n, err
	}
	if f := m.failWrite.Load(); f != 0 && f == va {
		return 0, len(vas), errInjected
	}
	old, err := adderMemory{m.memory}.AtomicAddTail(va, d, tail)
	return old, len(vas), err
}

func (m *vecTestMemory) ReadV(vas []uint64, bufs [][]byte) (int, error) {
	m.reads.Add(1)
	return m.vec(vas, bufs, m.Read)
}

func (m *vecTestMemory) WriteV(vas []uint64, bufs [][]byte) (int, error) {
	m.writes.Add(1)
	return m.vec(vas, bufs, m.write)
}

func (m *vecTestMemory) write(va uint64, b []byte) error {
	if f := m.failWrite.Load(); f != 0 && f >= va && f < va+uint64(len(b)) {
		return errInjected
	}
	return m.Write(va, b)
}

func (m *vecTestMemory) vec(vas []uint64, bufs [][]byte, f func(uint64, []byte) error) (int, error) {
	for i, va := range vas {
		if n := uint64(len(bufs[i])); n > 0 && va/pageSize != (va+n-1)/pageSize {
			m.t.Errorf("piece %#x+%d crosses a page", va, n)
		}
		if err := f(va, bufs[i]); err != nil {
			return i, err
		}
	}
	return len(vas), nil
}

// withVecMemory runs test on plain memory and on vecTestMemory; with it the queue must have
// used ReadV, and WriteV or AtomicAddTailAfter.
func withVecMemory(t *testing.T, test func(t *testing.T, vec bool)) {
	t.Run("plain", func(t *testing.T) { test(t, false) })
	t.Run("vectored", func(t *testing.T) { test(t, true) })
}

// adderMemory is memory with AtomicAdd and AtomicAddTail, as the daemon's mmu.Port.
type adderMemory struct{ *memory }

func (m adderMemory) AtomicAdd(va uint64, size int, d uint64) (uint64, error) {
	b, err := m.Slice(va, uint64(size))
	if err != nil {
		return 0, err
	}
	if size == 4 {
		return uint64(atomic.AddUint32(word32(b), uint32(d)) - uint32(d)), nil
	}
	return atomic.AddUint64(word64(b), d) - d, nil
}

// AtomicAddTail is mmu.Port's: the 64-bit add, then the bytes after the word.
func (m adderMemory) AtomicAddTail(va uint64, d uint64, tail []byte) (uint64, error) {
	old, err := m.AtomicAdd(va, 8, d)
	if err != nil {
		return 0, err
	}
	return old, m.Read(va+8, tail)
}

func (e *env) queue(o qopt) *tq {
	if o.size == 0 {
		o.size = 64
	}
	i := e.nq
	e.nq++
	t := &tq{e: e, base: ringArea + uint64(i)*0x10000, size: o.size,
		rdVA: indexArea + uint64(i)*64, wrVA: indexArea + uint64(i)*64 + 8}
	// ROCr initialises every header to INVALID (PSA-2.8-Q17).
	for s := uint64(0); s < uint64(o.size); s++ {
		atomic.StoreUint32(e.m.word32(t.base+s*64), aql.PacketTypeInvalid)
	}
	var mem Memory = e.m
	if o.adder {
		mem = adderMemory{e.m}
	}
	bell := func() uint64 { return 0 }
	if o.bell != nil {
		bell = o.bell.Load
	}
	q, err := New(Config{RingBase: t.base, RingSize: o.size, ReadIndexVA: t.rdVA, WriteIndexVA: t.wrVA,
		Memory: mem, Host: e.host, Group: o.group, MaxPoll: o.maxPoll, Doorbell: bell})
	if err != nil {
		e.t.Fatal(err)
	}
	t.Queue = q
	if o.noPoll {
		q.SetMinPoll(24 * time.Hour)
	}
	if !o.noStart {
		if err := q.Start(); err != nil {
			e.t.Fatal(err)
		}
	}
	e.t.Cleanup(q.Stop)
	return t
}

func (t *tq) readIndex() uint64 { return atomic.LoadUint64(t.e.m.word64(t.rdVA)) }

// reserve allocates the next packet ID (PSA-2.8-Q01), waiting while the ring is full (PSA-2.8-I06).
func (t *tq) reserve() uint64 {
	id := t.wr
	deadline := time.Now().Add(10 * time.Second)
	for id >= t.readIndex()+uint64(t.size) {
		if time.Now().After(deadline) {
			t.e.t.Fatalf("ring full: read index stuck at %d (state %v)", t.readIndex(), t.State())
		}
		runtime.Gosched()
	}
	t.wr++
	atomic.StoreUint64(t.e.m.word64(t.wrVA), t.wr)
	return id
}

// write stores the packet body and then publishes the first 32 bits with one atomic store
// (PSA-2.8-Q02, Q20).
func (t *tq) write(id uint64, pkt []byte) {
	slot := t.base + id%uint64(t.size)*64
	if err := t.e.m.Write(slot+4, pkt[4:64]); err != nil {
		t.e.t.Fatal(err)
	}
	atomic.StoreUint32(t.e.m.word32(slot), binary.LittleEndian.Uint32(pkt))
}

// submit reserves, writes and rings the doorbell.
func (t *tq) submit(pkt []byte) uint64 {
	id := t.reserve()
	t.write(id, pkt)
	t.Kick()
	return id
}

func barrier(typ uint8, barrierBit bool, completion uint64, deps ...uint64) []byte {
	var p aql.BarrierPacket
	p.Header = aql.MakeHeader(typ, barrierBit, aql.FenceScopeSystem, aql.FenceScopeSystem)
	copy(p.DepSignal[:], deps)
	p.CompletionSignal = completion
	b := make([]byte, 64)
	p.Encode(b)
	return b
}

func dispatchPacket(p aql.KernelDispatchPacket) []byte {
	b := make([]byte, 64)
	p.Encode(b)
	return b
}

func validDispatch(completion uint64) aql.KernelDispatchPacket {
	return aql.KernelDispatchPacket{
		Header: aql.MakeHeader(aql.PacketTypeKernelDispatch, true, aql.FenceScopeSystem, aql.FenceScopeSystem),
		Setup:  1, WorkgroupSizeX: 64, WorkgroupSizeY: 1, WorkgroupSizeZ: 1, GridSizeX: 256, GridSizeY: 1, GridSizeZ: 1,
		PrivateSegmentSize: 16, GroupSegmentSize: 1024, KernelObject: 0x7f0000001000, KernargAddress: 0x7f0000002000,
		CompletionSignal: completion,
	}
}

// waitFor polls cond; the timeout is a hang guard only.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Microsecond)
	}
}

// settle kicks q and waits until the queue has scanned since the kick and is no longer active.
func settle(t testing.TB, q *tq) {
	t.Helper()
	w := q.Status().Scans
	q.Kick()
	waitFor(t, "queue to scan", func() bool {
		s := q.Status()
		return s.Scans > w || s.State == hqd.StateBlocked || s.State == hqd.StateError
	})
}
