package main

import (
	"encoding/binary"
	"errors"
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

// demoQueue drives the emulated GPU the way ROCr does, through runtime/kmt: GTT memory for the
// ring and an amd_queue_t, an AQL queue, a signal event, one barrier-AND packet published with a
// doorbell store (no syscall) and the completion seen both in memory and through WAIT_EVENTS.
func demoQueue(mnt string) error {
	d, err := kmt.Open(kmt.Config{Root: mnt})
	if err != nil {
		return err
	}
	defer d.Close()
	g := d.GPUs()[0]
	ring, err := d.AllocGTT(g, 4096, kmt.Coherent)
	if err != nil {
		return err
	}
	amdq, err := d.AllocGTT(g, 4096, kmt.Coherent)
	if err != nil {
		return err
	}
	for _, m := range []*kmt.Memory{ring, amdq} {
		if err := m.Map(); err != nil {
			return err
		}
	}
	q, err := d.CreateQueue(kmt.QueueSpec{GPU: g, Type: kmt.QueueComputeAQL, RingVA: ring.VA, RingSize: 4096,
		ReadPtrVA: amdq.VA + hsa.AMDQueueReadDispatchIDOffset, WritePtrVA: amdq.VA + hsa.AMDQueueWriteDispatchIDOffset})
	if err != nil {
		return err
	}
	defer q.Destroy()
	ev, err := d.CreateEvent(kmt.EventSignal, false, false)
	if err != nil {
		return err
	}
	defer ev.Destroy()
	const sig = 0x400 // an amd_signal_t in the amd_queue_t page, past the structure
	b, rb := amdq.Bytes(), ring.Bytes()
	kmt.Word64(b, sig+hsa.SignalValueOffset).Store(1)
	kmt.Word64(b, sig+hsa.SignalMailboxOffset).Store(ev.MailboxVA)
	kmt.Word32(b, sig+hsa.SignalEventIDOffset).Store(ev.TriggerData)
	var pkt [hsa.PacketSize]byte
	(&hsa.BarrierPacket{CompletionSignal: amdq.VA + sig}).Encode(pkt[:])
	copy(rb[4:hsa.PacketSize], pkt[4:])
	start := time.Now()
	kmt.Word64(b, hsa.AMDQueueWriteDispatchIDOffset).Store(1)
	kmt.Word32(rb, 0).Store(uint32(hsa.MakeHeader(hsa.PacketTypeBarrierAnd, true, hsa.FenceScopeSystem, hsa.FenceScopeSystem)))
	q.RingDoorbell(0)
	for kmt.Word64(b, sig+hsa.SignalValueOffset).Load() != 0 {
		if time.Since(start) > 5*time.Second {
			return errors.New("the barrier packet did not complete in 5 s")
		}
		runtime.Gosched()
	}
	lat := time.Since(start)
	ok, err := ev.Wait(time.Second)
	if err != nil || !ok {
		return fmt.Errorf("completion event: %v %v", ok, err)
	}
	fmt.Printf("\nAQL queue %d on gpu_id %d: barrier-AND packet + doorbell store -> completion signal 0 after %v, event %d signalled\n",
		q.ID, g.ID(), lat.Round(time.Microsecond), ev.ID)
	return nil
}
