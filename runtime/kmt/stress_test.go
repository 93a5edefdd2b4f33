package kmt

import (
	"bufio"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/kfdemu/kfdemu/gpu/aql"
	"github.com/kfdemu/kfdemu/kfd/abi"
	"github.com/kfdemu/kfdemu/runtime/internal/rttest"
	"golang.org/x/sys/unix"
)

// maxHeld bounds the BOs a helper holds at once: without it a 10-minute soak piled up 16 k
// BOs (2.2 GB) per helper.
const maxHeld = 1024

// stressEnv carries "ROOT SEED MILLISECONDS" to a helper process of TestStressAndCrash.
const stressEnv = "KMT_TEST_STRESS"

// stressHelper uses the device at random for a while: memory of every kind allocated, mapped,
// unmapped and freed, queues created and destroyed, barriers that must complete, malformed packets
// that stop their queue, events set and waited on, SVM ranges, and ioctls the driver must refuse
// with EINVAL. It prints "ready" once the device is open and "ok N" with the number of barriers
// completed; any unexpected result is an error (exit 1).
func stressHelper(arg string) int {
	f := strings.Fields(arg)
	if len(f) != 3 {
		return 2
	}
	seed, _ := strconv.ParseUint(f[1], 10, 64)
	ms, _ := strconv.Atoi(f[2])
	rng := rand.New(rand.NewPCG(seed, 7))
	fail := func(format string, a ...any) int {
		fmt.Fprintf(os.Stderr, "stress helper %d: "+format+"\n", append([]any{seed}, a...)...)
		return 1
	}
	d, err := Open(Config{Root: f[0]})
	if err != nil {
		return fail("open: %v", err)
	}
	defer d.Close()
	g := d.GPUs()[0]
	sig, err := d.AllocGTT(g, 4096, Coherent)
	if err == nil {
		err = sig.Map()
	}
	if err != nil {
		return fail("signal page: %v", err)
	}
	fmt.Println("ready")
	var mems []*Memory
	var rings []*aqlRing
	var events []*Event
	completed := 0
	deadline := time.Now().Add(time.Duration(ms) * time.Millisecond)
	for time.Now().Before(deadline) {
		switch op := rng.IntN(9); op {
		case 0: // allocate memory of some kind and size, maybe mapped
			if len(mems) >= maxHeld { // a soak churns; it does not pile up gigabytes
				i := rng.IntN(len(mems))
				if err := mems[i].Free(); err != nil {
					return fail("free: %v", err)
				}
				mems = append(mems[:i], mems[i+1:]...)
			}
			size := uint64(1+rng.IntN(64)) * 4096
			var m *Memory
			switch rng.IntN(3) {
			case 0:
				m, err = d.AllocGTT(g, size, Coherent)
			case 1:
				m, err = d.AllocVRAM(g, size, 0)
			default:
				m, err = d.RegisterUserptr(g, size, 0)
			}
			if err != nil {
				var held uint64
				for _, m := range mems {
					held += m.Size
				}
				st, _ := rttest.Stats(f[0])
				return fail("alloc of %d bytes: %v (this helper holds %d BOs of %d bytes; the daemon: %d BOs, %d processes)",
					size, err, len(mems), held, st["bos"], st["processes"])
			}
			if rng.IntN(2) == 0 {
				if err := m.Map(); err != nil {
					return fail("map: %v", err)
				}
			}
			mems = append(mems, m)
		case 1: // free or unmap some memory
			if len(mems) == 0 {
				continue
			}
			i := rng.IntN(len(mems))
			if rng.IntN(2) == 0 {
				if err := mems[i].Free(); err != nil {
					return fail("free: %v", err)
				}
				mems = append(mems[:i], mems[i+1:]...)
			} else if err := mems[i].Unmap(); err != nil {
				return fail("unmap: %v", err)
			}
		case 2: // a new queue
			if len(rings) >= 4 {
				continue
			}
			r, err := newRing(d, g)
			if err != nil {
				return fail("queue: %v", err)
			}
			rings = append(rings, r)
		case 3: // destroy a queue, maybe with a blocked barrier in it
			if len(rings) == 0 {
				continue
			}
			i := rng.IntN(len(rings))
			r := rings[i]
			if rng.IntN(2) == 0 {
				Word64(sig.Bytes(), 64*63+aql.SignalValueOffset).Store(1) // never signalled
				r.submit(aql.PacketTypeBarrierAnd, aql.BarrierPacket{DepSignal: [5]uint64{sig.VA + 64*63}})
			}
			if err := r.q.Destroy(); err != nil {
				return fail("destroy queue: %v", err)
			}
			r.ring.Free()
			r.amdq.Free()
			rings = append(rings[:i], rings[i+1:]...)
		case 4: // a barrier that must complete
			if len(rings) == 0 {
				continue
			}
			i := rng.IntN(len(rings))
			r := rings[i]
			s := Word64(sig.Bytes(), 64*i+aql.SignalValueOffset)
			s.Store(1)
			r.submit(aql.PacketTypeBarrierAnd, aql.BarrierPacket{CompletionSignal: sig.VA + uint64(64*i)})
			start := time.Now()
			for s.Load() != 0 {
				if time.Since(start) > 5*time.Second {
					q, _ := os.ReadFile(f[0] + "/sys/kernel/debug/kfd/queues")
					return fail("barrier on queue %d never completed: signal %d, read index %d, write index %d, doorbell %d\nqueues:\n%s",
						r.q.ID, s.Load(), r.readIndex(), Word64(r.amdq.Bytes(), aql.AMDQueueWriteDispatchIDOffset).Load(), r.q.Doorbell().Load(), q)
				}
				time.Sleep(50 * time.Microsecond)
			}
			completed++
		case 5: // a malformed packet stops its queue; then it is destroyed
			if len(rings) == 0 {
				continue
			}
			i := rng.IntN(len(rings))
			r := rings[i]
			r.submit(7, aql.BarrierPacket{})
			time.Sleep(time.Millisecond)
			r.q.Destroy()
			r.ring.Free()
			r.amdq.Free()
			rings = append(rings[:i], rings[i+1:]...)
		case 6: // events
			if len(events) < 8 {
				e, err := d.CreateEvent(EventSignal, rng.IntN(2) == 0, false)
				if err != nil {
					return fail("create event: %v", err)
				}
				events = append(events, e)
			}
			e := events[rng.IntN(len(events))]
			if rng.IntN(2) == 0 {
				e.Set()
			}
			if _, err := e.Wait(time.Duration(rng.IntN(3)) * 5 * time.Millisecond); err != nil {
				return fail("wait: %v", err)
			}
			if rng.IntN(4) == 0 {
				e.Destroy()
				events = slices.DeleteFunc(events, func(x *Event) bool { return x == e })
			}
		case 7: // ioctls the driver must refuse
			calls := []struct {
				name string
				cmd  uint32
				arg  any
			}{
				{"FREE", abi.AMDKFD_IOC_FREE_MEMORY_OF_GPU, &abi.FreeMemoryOfGPUArgs{Handle: uint64(g.ID())<<32 | 0xfffff}},
				{"DESTROY_QUEUE", abi.AMDKFD_IOC_DESTROY_QUEUE, &abi.DestroyQueueArgs{QueueID: 1000 + uint32(rng.IntN(20))}},
				{"ALLOC", abi.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &abi.AllocMemoryOfGPUArgs{VAAddr: 1 << 40, Size: 4096, GPUID: g.ID(), Flags: abi.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE}}, // no domain
				{"SET_EVENT", abi.AMDKFD_IOC_SET_EVENT, &abi.SetEventArgs{EventID: 4000 + uint32(rng.IntN(90))}},
				{"CREATE_QUEUE", abi.AMDKFD_IOC_CREATE_QUEUE, &abi.CreateQueueArgs{GPUID: g.ID(), RingSize: 3000, QueuePercentage: 100}},
			}
			c := calls[rng.IntN(len(calls))]
			var err error
			switch a := c.arg.(type) {
			case *abi.FreeMemoryOfGPUArgs:
				err = ioctl(d.kfd, c.name, c.cmd, a)
			case *abi.DestroyQueueArgs:
				err = ioctl(d.kfd, c.name, c.cmd, a)
			case *abi.AllocMemoryOfGPUArgs:
				err = ioctl(d.kfd, c.name, c.cmd, a)
			case *abi.SetEventArgs:
				err = ioctl(d.kfd, c.name, c.cmd, a)
			case *abi.CreateQueueArgs:
				err = ioctl(d.kfd, c.name, c.cmd, a)
			}
			if !errors.Is(err, syscall.EINVAL) {
				return fail("%s with a bad argument: %v, want EINVAL", c.name, err)
			}
		case 8: // an SVM range over fresh client memory (GPU-mapped at once: XNACK is off),
			// then unmapped by the CPU without telling the driver
			mem, err := unix.Mmap(-1, 0, 1<<16, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
			if err != nil {
				return fail("mmap: %v", err)
			}
			va := uint64(uintptr(unsafe.Pointer(&mem[0])))
			if err := d.SVMSetAttr(va, 1<<16, SVMAttr{abi.KFD_IOCTL_SVM_ATTR_ACCESS, g.ID()}); err != nil {
				return fail("SVM: %v", err)
			}
			unix.Munmap(mem)
		}
	}
	fmt.Println("ok", completed)
	return 0
}

// TestStressAndCrash runs six client processes that use the device at random for two seconds;
// three are killed with SIGKILL at random moments (mid-allocation, mid-wait, with queues holding
// blocked barriers). The others must finish their work, and afterwards the daemon must hold
// nothing of any of them: no process, PASID, BO, queue, event, memfd, watched doorbell, physical
// segment or page table.
func TestStressAndCrash(t *testing.T) {
	root := rttest.Root(t)
	const helpers, killed = 6, 3
	// KFDEMU_SOAK (a Go duration, e.g. 10m) runs the soak variant: the same for that long.
	ms := 2000
	if d, err := time.ParseDuration(os.Getenv("KFDEMU_SOAK")); err == nil && d > 0 {
		ms = int(d / time.Millisecond)
		t.Logf("soak: %v", d)
		// The helpers run for d, then the daemon's state is checked: go test's -timeout (10m by
		// default) must leave room for that, or the run dies in the alarm's panic mid-soak.
		if dl, ok := t.Deadline(); ok && time.Until(dl) < d+time.Minute {
			t.Fatalf("KFDEMU_SOAK=%v needs a -timeout a minute longer than the soak (%v left)", d, time.Until(dl).Round(time.Second))
		}
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	type proc struct {
		cmd  *exec.Cmd
		out  *bufio.Reader
		kill bool
	}
	var ps []*proc
	for i := range helpers {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s %d %d", stressEnv, root, seed+uint64(i), ms))
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		p := &proc{cmd: cmd, out: bufio.NewReader(out), kill: i < killed}
		ps = append(ps, p)
		t.Cleanup(func() { cmd.Process.Kill() })
	}
	for i, p := range ps {
		if line, err := p.out.ReadString('\n'); err != nil || line != "ready\n" {
			t.Fatalf("helper %d: %q %v", i, line, err)
		}
	}
	for _, p := range ps[:killed] {
		time.AfterFunc(time.Duration(50+rng.IntN(ms-100))*time.Millisecond, func() { p.cmd.Process.Signal(syscall.SIGKILL) })
	}
	for i, p := range ps {
		rest, _ := p.out.ReadString('\n')
		err := p.cmd.Wait()
		switch {
		case p.kill:
			// killed, or finished before its moment came
		case err != nil || !strings.HasPrefix(rest, "ok "):
			t.Errorf("helper %d (not killed): %v, %q", i, err, rest)
		default:
			t.Logf("helper %d: %s", i, strings.TrimSpace(rest))
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := rttest.Stats(root)
		if err != nil {
			t.Fatal(err)
		}
		clean := true
		for _, k := range []string{"processes", "pasids", "bos", "queues", "events", "memfds", "doorbells_watched",
			"gpu_memory_segments", "page_table_bytes"} {
			if st[k] != 0 {
				clean = false
			}
		}
		if clean {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the daemon still holds resources of exited clients: %v", st)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// And it still serves.
	d := open(t, root)
	q, ring, amdq := aqlQueue(t, d, d.GPUs()[0])
	r := aqlRing{q, ring, amdq}
	s := Word64(amdq.Bytes(), 0x400+aql.SignalValueOffset)
	s.Store(1)
	r.submit(aql.PacketTypeBarrierAnd, aql.BarrierPacket{CompletionSignal: amdq.VA + 0x400})
	waitUntil(t, "a barrier after the stress", func() bool { return s.Load() == 0 })
}
