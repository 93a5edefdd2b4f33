package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"syscall"
	"time"
	"unsafe"

	"github.com/kfdemu/kfdemu/gpu/hsa"
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
	sigVA    uint64
	pkt      [hsa.PacketSize]byte
	hdr      uint32
}

const aqlSignalOff = 0x400

func newAQLClient(mnt string) (*aqlClient, error) {
	d, err := kmt.Open(kmt.Config{Root: mnt})
	if err != nil {
		return nil, err
	}
	c := &aqlClient{d: d, g: d.GPUs()[0]}
	fail := func(err error) (*aqlClient, error) { d.Close(); return nil, err }
	ring, err := d.AllocGTT(c.g, 4096, kmt.Coherent)
	if err != nil {
		return fail(err)
	}
	amdq, err := d.AllocGTT(c.g, 4096, kmt.Coherent)
	if err != nil {
		return fail(err)
	}
	for _, m := range []*kmt.Memory{ring, amdq} {
		if err := m.Map(); err != nil {
			return fail(err)
		}
	}
	if c.q, err = d.CreateQueue(kmt.QueueSpec{GPU: c.g, Type: kmt.QueueComputeAQL, RingVA: ring.VA, RingSize: 4096,
		ReadPtrVA: amdq.VA + hsa.AMDQueueReadDispatchIDOffset, WritePtrVA: amdq.VA + hsa.AMDQueueWriteDispatchIDOffset}); err != nil {
		return fail(err)
	}
	if c.ev, err = d.CreateEvent(kmt.EventSignal, false, false); err != nil {
		return fail(err)
	}
	c.ring, c.aq, c.sigVA = ring.Bytes(), amdq.Bytes(), amdq.VA+aqlSignalOff
	kmt.Word64(c.aq, aqlSignalOff+hsa.SignalMailboxOffset).Store(c.ev.MailboxVA)
	kmt.Word32(c.aq, aqlSignalOff+hsa.SignalEventIDOffset).Store(c.ev.TriggerData)
	(&hsa.BarrierPacket{CompletionSignal: c.sigVA}).Encode(c.pkt[:])
	c.hdr = uint32(hsa.MakeHeader(hsa.PacketTypeBarrierAnd, true, hsa.FenceScopeSystem, hsa.FenceScopeSystem))
	return c, nil
}

func (c *aqlClient) Close() { c.d.Close() } // destroys the queue, event and memory

// barrier submits one barrier-AND packet with the doorbell and spins until its completion signal
// drops to 0; it returns the time from the first store to the completion.
func (c *aqlClient) barrier(timeout time.Duration) (time.Duration, error) {
	start := time.Now()
	idx := kmt.Word64(c.aq, hsa.AMDQueueWriteDispatchIDOffset).Load()
	slot := c.ring[64*(idx%64) : 64*(idx%64)+64]
	copy(slot[4:], c.pkt[4:])
	sig := kmt.Word64(c.aq, aqlSignalOff+hsa.SignalValueOffset)
	sig.Store(1)
	kmt.Word32(slot, 0).Store(c.hdr)
	kmt.Word64(c.aq, hsa.AMDQueueWriteDispatchIDOffset).Store(idx + 1)
	c.q.RingDoorbell(idx)
	for sig.Load() != 0 {
		if time.Since(start) > timeout {
			return 0, fmt.Errorf("barrier packet %d did not complete in %v", idx, timeout)
		}
		runtime.Gosched()
	}
	return time.Since(start), nil
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
