package shader

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

// lentMem is a port of checkedPorts: every access checks that the port is lent and that no other
// access of it is in progress (an mmu.Port is one goroutine's at a time).
type lentMem struct {
	*flatMem
	pool *checkedPorts
	lent atomic.Bool
	busy atomic.Int32
}

func (m *lentMem) enter() {
	if !m.lent.Load() {
		m.pool.fail("access through a port not lent")
	}
	if m.busy.Add(1) != 1 {
		m.pool.fail("two accesses of one port at once")
	}
}

func (m *lentMem) leave() { m.busy.Add(-1) }

func (m *lentMem) Read(va uint64, p []byte) error {
	m.enter()
	defer m.leave()
	return m.flatMem.Read(va, p)
}

func (m *lentMem) Write(va uint64, p []byte) error {
	m.enter()
	defer m.leave()
	return m.flatMem.Write(va, p)
}

func (m *lentMem) Atomic(va uint64, size int, f func(uint64) uint64) (uint64, error) {
	m.enter()
	defer m.leave()
	return m.flatMem.Atomic(va, size, f)
}

func (m *lentMem) AtomicAdd(va uint64, size int, d uint64) (uint64, error) {
	m.enter()
	defer m.leave()
	return m.flatMem.Atomic(va, size, func(o uint64) uint64 { return o + d })
}

// cpMem is a dispatch's own memory (kfd: the queue's port, the CP's): the work-groups never
// access it, they have ports of their own; adds counts the atomic adds made through it.
type cpMem struct {
	*flatMem
	adds atomic.Int64
}

func (m *cpMem) AtomicAdd(va uint64, size int, d uint64) (uint64, error) {
	m.adds.Add(1)
	return m.flatMem.Atomic(va, size, func(o uint64) uint64 { return o + d })
}

// checkedPorts is a PortPool that records a port given back twice or used by two work-groups.
type checkedPorts struct {
	mem  *flatMem
	mu   sync.Mutex
	free []*lentMem
	errs []string
}

func (c *checkedPorts) fail(s string) {
	c.mu.Lock()
	if len(c.errs) < 10 {
		c.errs = append(c.errs, s)
	}
	c.mu.Unlock()
}

func (c *checkedPorts) Get() Memory {
	c.mu.Lock()
	var m *lentMem
	if n := len(c.free); n > 0 {
		m = c.free[n-1]
		c.free = c.free[:n-1]
	} else {
		m = &lentMem{flatMem: c.mem, pool: c}
	}
	c.mu.Unlock()
	if m.lent.Swap(true) {
		c.fail("a port lent twice")
	}
	return m
}

func (c *checkedPorts) Put(mem Memory) {
	m := mem.(*lentMem)
	if !m.lent.Swap(false) {
		c.fail("a port given back twice")
	}
	c.mu.Lock()
	c.free = append(c.free, m)
	c.mu.Unlock()
}

// TestPortsOwnedByOneGroup: a work-group's port is its own while it holds a worker, through the
// hand-overs of short work-groups (the token and port of one ended passed to the next), yields and
// sleeps, with several dispatches at once, for every kind of access (atomic adds have a path of
// their own, AtomicAdder). Seen in the daemon: every work-group's global atomic add and sub went
// through the dispatch's memory, the queue's own mmu.Port, at once (the race detector on
// multi_gpu_atomics; once on ROCr 6.2.4 an interpreter panic inside the Port's TLB, which ROCr
// reported as an illegal instruction).
func TestPortsOwnedByOneGroup(t *testing.T) {
	code := asm(t, `
	s_load_dwordx2 s[4:5], s[0:1], 0x0
	s_mov_b32 s6, 20
	v_mov_b32 v1, 0
	v_mov_b32 v2, 1
	s_waitcnt lgkmcnt(0)
loop:
	global_atomic_add v1, v2, s[4:5]
	s_sleep 1
	global_atomic_add v1, v2, s[4:5] offset:8
	s_sub_u32 s6, s6, 1
	s_cmp_eq_u32 s6, 0
	s_cbranch_scc0 loop
	s_endpgm
`)
	defer SetWorkers(Workers())
	SetWorkers(2)
	const dispatches, groups, rounds = 4, 16, 30
	var wg sync.WaitGroup
	errc := make(chan error, dispatches)
	for k := 0; k < dispatches; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m, p := miniKernel(t, code)
			m.mapRange(asmOut, 0x2000)
			var ka [8]byte
			binary.LittleEndian.PutUint64(ka[:], asmOut+0x100)
			m.Write(asmOut, ka[:])
			p.KernargAddress = asmOut
			p.GridSize, p.WorkgroupSize = [3]uint32{64 * groups, 1, 1}, [3]uint16{64, 1, 1}
			p.MaxWaveInstructions = 0
			ports := &checkedPorts{mem: m}
			cp := &cpMem{flatMem: m}
			p.Engine = Engine{Ports: ports, Code: &CodeCache{}}
			for r := 0; r < rounds; r++ {
				if _, err := Dispatch(context.Background(), cp, p); err != nil {
					errc <- err
					return
				}
			}
			var b [16]byte
			m.Read(asmOut+0x100, b[:])
			want := uint32(rounds * groups * 64 * 20)
			if a, c := binary.LittleEndian.Uint32(b[:]), binary.LittleEndian.Uint32(b[8:]); a != want || c != want {
				errc <- fmt.Errorf("counters %d and %d, want %d", a, c, want)
			}
			if n := cp.adds.Load(); n != 0 {
				errc <- fmt.Errorf("dispatch %d: %d atomic adds through the dispatch's own memory", k, n)
			}
			ports.mu.Lock()
			for _, e := range ports.errs {
				errc <- fmt.Errorf("dispatch %d: %s", k, e)
			}
			ports.mu.Unlock()
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
}
