package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/kfdemu/kfdemu/gpu/aql"
	"github.com/kfdemu/kfdemu/internal/relstore"
	"github.com/kfdemu/kfdemu/runtime/kmt"
	"github.com/kfdemu/kfdemu/topology"
	"golang.org/x/sys/unix"
)

// runDemo is the README's first command: mount the default profile in a temporary directory, read it
// back through the mount like a ROCm tool would, talk to dev/kfd, unmount.
func runDemo(args []string) int {
	fl := flag.NewFlagSet("demo", flag.ContinueOnError)
	var f serveFlags
	f.register(fl)
	fl.Lookup("mount").DefValue = "a new temporary directory"
	f.mount = ""
	fl.Usage = func() {
		fmt.Fprintln(fl.Output(), "usage: kfdemu demo [--profile NAME|FILE]\n\nMounts the emulator in a temporary directory, "+
			"prints what a client sees through the mount, and unmounts.")
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		return 2
	}
	if f.mount == "" {
		dir, err := os.MkdirTemp("", "kfdemu-demo-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "kfdemu demo:", err)
			return 1
		}
		defer os.Remove(dir)
		f.mount = dir
	}
	// A closed stdout (kfdemu demo | head) must not kill the demo before it unmounts.
	signal.Ignore(syscall.SIGPIPE)
	log := newLogger("warn")
	srv, code, err := mountEmulator(&f, log)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kfdemu demo:", err)
		if os.Geteuid() != 0 {
			fmt.Fprintln(os.Stderr, "kfdemu demo: mounting needs root (or CAP_SYS_ADMIN) and /dev/fuse")
		}
		return code
	}
	defer srv.Unmount()
	m := f.mount
	fmt.Printf("kfdemu mounted at %s (profile %s)\n\n", m, f.profile)
	topo := filepath.Join(m, topologyPath)
	sys, err := topology.ReadSystem(topo)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kfdemu demo: reading the topology through the mount:", err)
		return 1
	}
	fmt.Printf("$ kfdemu topo --mount %s\n", m)
	topology.WriteSummary(os.Stdout, sys)
	for _, p := range []string{"sys/module/amdgpu/initstate", "sys/class/kfd/kfd/topology/nodes/1/name"} {
		data, err := os.ReadFile(filepath.Join(m, p))
		fmt.Printf("\n$ cat %s\n%s", filepath.Join(m, p), data)
		if err != nil {
			fmt.Println(err)
		}
	}
	kfdPath := filepath.Join(m, "dev/kfd")
	fd, err := unix.Open(kfdPath, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		fmt.Printf("\n%s: %v (this build serves the topology only)\n", kfdPath, err)
		return 0
	}
	defer unix.Close(fd)
	// AMDKFD_IOC_GET_VERSION = _IOR('K', 0x01, struct kfd_ioctl_get_version_args {u32 major, minor}).
	var v [8]byte
	_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), 0x80084B01, uintptr(unsafe.Pointer(&v)))
	if e != 0 {
		fmt.Printf("\nAMDKFD_IOC_GET_VERSION: %v\n", e)
		return 1
	}
	fmt.Printf("\nopen(%s) + AMDKFD_IOC_GET_VERSION -> %d.%d\n", kfdPath,
		binary.LittleEndian.Uint32(v[0:]), binary.LittleEndian.Uint32(v[4:]))
	if err := demoQueue(m); err != nil {
		fmt.Fprintln(os.Stderr, "kfdemu demo: AQL queue:", err)
		return 1
	}
	return 0
}

// aqlClient is an AQL queue set up the way ROCr lays one out, through runtime/kmt: a 4 KiB ring
// BO, an amd_queue_t page holding the read/write dispatch ids and, past the structure, one
// amd_signal_t whose event mailbox is a signal event's slot.
type aqlClient struct {
	d        *kmt.Device
	g        *kmt.GPU
	q        *kmt.Queue
	ev       *kmt.Event
	ring, aq []byte
	mems     []*kmt.Memory
	own      bool // the client opened d (Close closes it)
	sigVA    uint64
	pkt      [aql.PacketSize]byte
	hdr      uint32
}

const aqlSignalOff = 0x400

func newAQLClient(mnt string) (*aqlClient, error) {
	d, err := kmt.Open(kmt.Config{Root: mnt})
	if err != nil {
		return nil, err
	}
	c := &aqlClient{d: d, g: d.GPUs()[0], own: true}
	if err := c.setupQueue(); err != nil {
		d.Close()
		return nil, err
	}
	return c, nil
}

// newQueueClient is another queue of the same process (one kmt.Device per process, as one
// libhsakmt instance per process).
func newQueueClient(d *kmt.Device) (*aqlClient, error) {
	c := &aqlClient{d: d, g: d.GPUs()[0]}
	if err := c.setupQueue(); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// setupQueue creates the client's AQL queue on its first GPU, laid out as ROCr lays it out, and a
// completion signal in the amd_queue_t page whose mailbox is a signal event's slot.
func (c *aqlClient) setupQueue() error {
	d := c.d
	ring, err := d.AllocGTT(c.g, 4096, kmt.Coherent)
	if err != nil {
		return err
	}
	c.mems = append(c.mems, ring)
	amdq, err := d.AllocGTT(c.g, 4096, kmt.Coherent)
	if err != nil {
		return err
	}
	c.mems = append(c.mems, amdq)
	for _, m := range []*kmt.Memory{ring, amdq} {
		if err := m.Map(); err != nil {
			return err
		}
	}
	kmt.InvalidateRing(ring.Bytes())
	if c.q, err = d.CreateQueue(kmt.QueueSpec{GPU: c.g, Type: kmt.QueueComputeAQL, RingVA: ring.VA, RingSize: 4096,
		ReadPtrVA: amdq.VA + aql.AMDQueueReadDispatchIDOffset, WritePtrVA: amdq.VA + aql.AMDQueueWriteDispatchIDOffset}); err != nil {
		return err
	}
	if c.ev, err = d.CreateEvent(kmt.EventSignal, false, false); err != nil {
		return err
	}
	c.ring, c.aq, c.sigVA = ring.Bytes(), amdq.Bytes(), amdq.VA+aqlSignalOff
	kmt.Word64(c.aq, aqlSignalOff+aql.SignalMailboxOffset).Store(c.ev.MailboxVA)
	kmt.Word32(c.aq, aqlSignalOff+aql.SignalEventIDOffset).Store(c.ev.TriggerData)
	(&aql.BarrierPacket{CompletionSignal: c.sigVA}).Encode(c.pkt[:])
	c.hdr = uint32(aql.MakeHeader(aql.PacketTypeBarrierAnd, true, aql.FenceScopeSystem, aql.FenceScopeSystem))
	return nil
}

// Close destroys the queue, event and memory (closing the device if the client opened it).
func (c *aqlClient) Close() {
	if c.own {
		c.d.Close()
		return
	}
	if c.q != nil {
		c.q.Destroy()
	}
	if c.ev != nil {
		c.ev.Destroy()
	}
	for _, m := range c.mems {
		m.Free()
	}
}

// barrier submits one barrier-AND packet with the doorbell and spins until its completion signal
// drops to 0; it returns the time from the first store to the completion.
func (c *aqlClient) barrier(timeout time.Duration) (time.Duration, error) {
	start := time.Now()
	sig := kmt.Word64(c.aq, aqlSignalOff+aql.SignalValueOffset)
	relstore.Store64(sig, 1) // hsa_signal_store_relaxed
	if err := c.submit(c.pkt, sig, timeout); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

// barrierTo is barrier with the completion signal at sigVA, whose value word the client sees as
// value (set to non-zero by the caller).
func (c *aqlClient) barrierTo(sigVA uint64, value *atomic.Uint64, timeout time.Duration) error {
	var pkt [aql.PacketSize]byte
	(&aql.BarrierPacket{CompletionSignal: sigVA}).Encode(pkt[:])
	return c.submit(pkt, value, timeout)
}

// publish writes pkt into the next ring slot (header last), publishes the write index and rings
// the doorbell; it returns the packet's index.
func (c *aqlClient) publish(pkt [aql.PacketSize]byte) uint64 {
	idx := kmt.Word64(c.aq, aql.AMDQueueWriteDispatchIDOffset).Load()
	slot := c.ring[64*(idx%64) : 64*(idx%64)+64]
	copy(slot[4:], pkt[4:])
	relstore.Store32(kmt.Word32(slot, 0), c.hdr) // release stores, as ROCr publishes a packet
	relstore.Store64(kmt.Word64(c.aq, aql.AMDQueueWriteDispatchIDOffset), idx+1)
	c.q.RingDoorbell(idx)
	return idx
}

// barrierWait is barrier with the wait ROCr makes by default (a blocking wait): spin for spin,
// then sleep in WAIT_EVENTS on the signal's event until the value drops. Many client processes
// on few cores must not spin: they would take the CPUs from the daemon that answers them.
func (c *aqlClient) barrierWait(spin, timeout time.Duration) (time.Duration, error) {
	start := time.Now()
	sig := kmt.Word64(c.aq, aqlSignalOff+aql.SignalValueOffset)
	sig.Store(1)
	idx := c.publish(c.pkt)
	if err := c.wait(sig, start, spin, timeout); err != nil {
		return 0, fmt.Errorf("barrier packet %d: %w", idx, err)
	}
	return time.Since(start), nil
}

// wait waits until the client's completion signal sig drops to 0: it spins until spin after
// start, then sleeps in WAIT_EVENTS on the signal's event.
func (c *aqlClient) wait(sig *atomic.Uint64, start time.Time, spin, timeout time.Duration) error {
	for sig.Load() != 0 {
		el := time.Since(start)
		if el > timeout {
			return fmt.Errorf("no completion in %v", timeout)
		}
		if el < spin {
			clientYield()
			continue
		}
		// The event is auto-reset: a completion seen while spinning leaves it set, and this wait
		// returns at once; the loop looks at the value again.
		if _, err := c.ev.Wait(min(timeout-el, time.Second)); err != nil {
			return err
		}
	}
	return nil
}

func (c *aqlClient) submit(pkt [aql.PacketSize]byte, sig *atomic.Uint64, timeout time.Duration) error {
	start := time.Now()
	idx := c.publish(pkt)
	// Spin as ROCr's active wait does, and as the bench's ping-pong floor (pingPong) does: a look at
	// the signal, with a yield (and the timeout's clock) only every 4096 looks. A yield at every
	// look put the client inside the scheduler when the signal changed.
	for k := 1; sig.Load() != 0; k++ {
		if k%4096 != 0 {
			continue
		}
		if time.Since(start) > timeout {
			return fmt.Errorf("barrier packet %d did not complete in %v", idx, timeout)
		}
		clientYield()
	}
	return nil
}

// clientYield is the yield of the bench's in-process client while it spins: sched_yield(2)
// (ROCr's os::YieldThread), so the client keeps its P as a client thread of its own process keeps
// its CPU (ROCr's InterruptSignal::WaitRelaxed spins without any yield in the active state). A
// runtime.Gosched here let the Go scheduler put the client and the queue's goroutine (which yields
// with Gosched while it polls its doorbell, gpu/hqd) on one P, each then waiting for the other's
// yield: a barrier round trip of about 5 µs instead of 0.4 µs for as long as 10-20 ms, seen in one
// kfdemu bench run of six and in go test BenchmarkBarrierRoundTrip; a client in another process
// cannot share the daemon's Ps. With a single P the client must let the queue's goroutine run:
// Gosched.
func clientYield() {
	if runtime.GOMAXPROCS(0) == 1 {
		runtime.Gosched()
		return
	}
	unix.Syscall(unix.SYS_SCHED_YIELD, 0, 0, 0)
}

// demoQueue drives the emulated GPU the way ROCr does: one barrier-AND packet published with a
// doorbell store (no syscall), the completion seen in memory and through WAIT_EVENTS.
func demoQueue(mnt string) error {
	c, err := newAQLClient(mnt)
	if err != nil {
		return err
	}
	defer c.Close()
	lat, err := c.barrier(5 * time.Second)
	if err != nil {
		return err
	}
	ok, err := c.ev.Wait(time.Second)
	if err != nil || !ok {
		return fmt.Errorf("completion event: %v %v", ok, err)
	}
	fmt.Printf("\nAQL queue %d on gpu_id %d: barrier-AND packet + doorbell store -> completion signal 0 after %v, event %d signalled\n",
		c.q.ID, c.g.ID(), lat.Round(time.Microsecond), c.ev.ID)
	return nil
}
