package kmt

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kfdemu/kfdemu/kfd/abi"
	"golang.org/x/sys/unix"
)

// Config selects the device tree to open.
type Config struct {
	// Root is the directory that holds dev/kfd, dev/dri and sys (a kfdemu mount, or "/" for the
	// real driver). Empty: $KFDEMU_ROOT if set, else "/" if /dev/kfd exists, else /run/kfdemu
	// (the default mount of `kfdemu serve`).
	Root string
	// VAReserve is the address space reserved for GPU virtual addresses (the SVM aperture of
	// fmm.c); 0 means DefaultVAReserve.
	VAReserve uint64
}

// DefaultVAReserve is the default size of the reserved GPU VA range: 512 GiB.
const DefaultVAReserve = 512 << 30

// DefaultMountRoot is where `kfdemu serve` mounts by default.
const DefaultMountRoot = "/run/kfdemu"

// ResolveRoot applies Config.Root's defaults.
func ResolveRoot(root string) string {
	if root != "" {
		return root
	}
	if env := os.Getenv("KFDEMU_ROOT"); env != "" {
		return env
	}
	if _, err := os.Stat("/dev/kfd"); err == nil {
		return "/"
	}
	return DefaultMountRoot
}

// GPU is a GPU node the process has opened: its render node, acquired VM and apertures.
type GPU struct {
	Node      *Node
	RenderFD  int
	Apertures abi.ProcessDeviceApertures
	doorbell  *Memory // the process's doorbell page of this GPU, mapped on first queue
}

// ID is the GPU's gpu_id.
func (g *GPU) ID() uint32 { return g.Node.GPUID }

// Device is an open /dev/kfd (hsaKmtOpenKFD + hsaKmtAcquireSystemProperties +
// hsakmt_fmm_init_process_apertures). Methods are safe for concurrent use.
type Device struct {
	root         string
	kfd          int
	major, minor uint32
	topo         *Topology
	gpus         []*GPU
	byID         map[uint32]*GPU
	aperture     region // the reserved GPU VA range, 2 MiB aligned
	reservation  region // the whole mapping that holds it
	va           *vaAllocator
	closed       atomic.Bool

	evMu      sync.Mutex // serializes CREATE_EVENT; protects eventPage and drvPage
	eventPage *Memory
	drvPage   region // the driver's event page (no GPU: KFD_MMAP_TYPE_EVENTS path)

	mu     sync.Mutex // protects the maps below; never held across an ioctl that can block
	mems   map[*Memory]struct{}
	queues map[*Queue]struct{}
	events map[uint32]*Event
}

// Open opens the kfd device under cfg.Root, checks the interface version, reads the topology,
// opens every GPU's render node, reads the apertures, acquires each GPU's VM and reserves the GPU
// virtual address range.
func Open(cfg Config) (*Device, error) {
	root := ResolveRoot(cfg.Root)
	kfdPath := filepath.Join(root, "dev/kfd")
	fd, err := unix.Open(kfdPath, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s", ErrNoDevice, kfdPath)
		}
		return nil, fmt.Errorf("kmt: open %s: %w", kfdPath, err)
	}
	d := &Device{root: root, kfd: fd, byID: map[uint32]*GPU{}, mems: map[*Memory]struct{}{},
		queues: map[*Queue]struct{}{}, events: map[uint32]*Event{}}
	ok := false
	defer func() {
		if !ok {
			d.closeFDs()
		}
	}()
	var v abi.GetVersionArgs
	if err := ioctl(fd, "GET_VERSION", abi.AMDKFD_IOC_GET_VERSION, &v); err != nil {
		return nil, err
	}
	// openclose.c: "the major version must be 1".
	if v.MajorVersion != abi.KFD_IOCTL_MAJOR_VERSION {
		return nil, fmt.Errorf("%w: %d.%d", ErrVersion, v.MajorVersion, v.MinorVersion)
	}
	d.major, d.minor = v.MajorVersion, v.MinorVersion
	if d.topo, err = ReadTopology(filepath.Join(root, TopologyDir)); err != nil {
		return nil, err
	}
	for _, n := range d.topo.GPUs() {
		// topology.c: a GPU node is supported only if its render node opens.
		path := filepath.Join(root, fmt.Sprintf("dev/dri/renderD%d", n.RenderMinor()))
		rfd, err := unix.Open(path, unix.O_RDWR|unix.O_CLOEXEC, 0)
		if err != nil {
			continue
		}
		g := &GPU{Node: n, RenderFD: rfd}
		d.gpus = append(d.gpus, g)
		d.byID[n.GPUID] = g
	}
	if err := d.initApertures(); err != nil {
		return nil, err
	}
	size := cfg.VAReserve
	if size == 0 {
		size = DefaultVAReserve
	}
	size = (size + hugePage - 1) &^ (hugePage - 1)
	base, err := reserve(size + hugePage)
	if err != nil {
		return nil, fmt.Errorf("kmt: reserving %d bytes of GPU VA space: %w", size, err)
	}
	whole := region{base: base, size: size + hugePage}
	// Align the aperture to 2 MiB so that large BOs can be huge-page aligned (fmm.c HSA_MAX_VA_ALIGN).
	skip := (hugePage - whole.va()%hugePage) % hugePage
	d.aperture = whole.sub(skip, size)
	d.reservation = whole
	for _, g := range d.gpus {
		if d.aperture.va() < g.Apertures.GPUVMBase || d.aperture.va()+size-1 > g.Apertures.GPUVMLimit {
			return nil, fmt.Errorf("%w: reserved range %#x+%#x is outside GPU %d's GPUVM aperture [%#x, %#x]",
				ErrNoVA, d.aperture.va(), size, g.ID(), g.Apertures.GPUVMBase, g.Apertures.GPUVMLimit)
		}
	}
	d.va = newVAAllocator(size, pageSize)
	ok = true
	openDevices.Add(1)
	runtime.SetFinalizer(d, func(d *Device) { d.Close() })
	return d, nil
}

const (
	pageSize = 4096
	hugePage = 2 << 20
)

func (d *Device) initApertures() error {
	if len(d.gpus) == 0 {
		return nil
	}
	// fmm.c: GET_PROCESS_APERTURES_NEW with num_of_nodes = number of GPUs.
	aps := make([]abi.ProcessDeviceApertures, len(d.gpus))
	var pin runtime.Pinner
	a := abi.GetProcessAperturesNewArgs{KFDProcessDeviceAperturesPtr: addrOf(aps, &pin), NumOfNodes: uint32(len(aps))}
	err := ioctl(d.kfd, "GET_PROCESS_APERTURES_NEW", abi.AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, &a)
	pin.Unpin()
	if err != nil {
		return err
	}
	for _, ap := range aps[:a.NumOfNodes] {
		if g := d.byID[ap.GPUID]; g != nil {
			g.Apertures = ap
		}
	}
	for _, g := range d.gpus {
		if g.Apertures.GPUID == 0 {
			return fmt.Errorf("kmt: GET_PROCESS_APERTURES_NEW returned no apertures for gpu_id %d", g.ID())
		}
		// fmm.c: acquire the GPU's VM with its render node (amdgpu_amdkfd_gpuvm_acquire_process_vm).
		av := abi.AcquireVMArgs{DRMFD: uint32(g.RenderFD), GPUID: g.ID()}
		if err := ioctl(d.kfd, "ACQUIRE_VM", abi.AMDKFD_IOC_ACQUIRE_VM, &av); err != nil {
			return err
		}
	}
	return nil
}

// Root is the directory the device was opened under.
func (d *Device) Root() string { return d.root }

// Version is the interface version GET_VERSION reported.
func (d *Device) Version() (major, minor uint32) { return d.major, d.minor }

// Topology is the snapshot taken at Open.
func (d *Device) Topology() *Topology { return d.topo }

// GPUs lists the opened GPUs in node order.
func (d *Device) GPUs() []*GPU { return d.gpus }

// GPU returns the opened GPU with gpu_id id.
func (d *Device) GPU(id uint32) (*GPU, error) {
	if g := d.byID[id]; g != nil {
		return g, nil
	}
	return nil, fmt.Errorf("%w: gpu_id %d", ErrNoNode, id)
}

// GPUByNode returns the opened GPU of topology node id.
func (d *Device) GPUByNode(id uint32) (*GPU, error) {
	for _, g := range d.gpus {
		if g.Node.ID == id {
			return g, nil
		}
	}
	return nil, fmt.Errorf("%w: node %d is not an opened GPU", ErrNotGPU, id)
}

// FD is the /dev/kfd file descriptor (for tools that issue ioctls of their own).
func (d *Device) FD() int { return d.kfd }

func (d *Device) check() error {
	if d.closed.Load() {
		return ErrClosed
	}
	return nil
}

// Close destroys the process's queues and events, frees its memory and closes the device files.
// The driver would release everything when the file closes; doing it here keeps the address
// space reservation consistent.
func (d *Device) Close() error {
	if d.closed.Swap(true) {
		return nil
	}
	runtime.SetFinalizer(d, nil)
	d.mu.Lock()
	qs := make([]*Queue, 0, len(d.queues))
	for q := range d.queues {
		qs = append(qs, q)
	}
	d.mu.Unlock()
	for _, q := range qs {
		q.destroy()
	}
	d.mu.Lock()
	ms := make([]*Memory, 0, len(d.mems))
	for m := range d.mems {
		ms = append(ms, m)
	}
	d.mu.Unlock()
	for _, m := range ms {
		m.release()
	}
	d.closeFDs()
	if openDevices.Add(-1) == 0 {
		d.waitReleased() // the process's last Device: the driver process goes away
	}
	return nil
}

// openDevices counts this process's open Devices (they share one driver process).
var openDevices atomic.Int32

// waitReleased makes Close synchronous on a kfdemu mount, as it is with amdkfd: FUSE tells the
// daemon that the last file is closed only after close(2) has returned, so a Device opened right
// after Close could otherwise meet this one's driver process (its signal page, its memory). It
// waits (at most 5 s) until the daemon's debugfs process table no longer lists this process. On a
// real /dev/kfd there is no such table and it returns at once.
func (d *Device) waitReleased() {
	path := filepath.Join(d.root, "sys/kernel/debug/kfd/processes")
	me := strconv.Itoa(os.Getpid())
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, err := os.ReadFile(path)
		if err != nil {
			return
		}
		listed := false
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Fields(l); len(f) > 0 && f[0] == me {
				listed = true
			}
		}
		if !listed || time.Now().After(deadline) {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

func (d *Device) closeFDs() {
	for _, g := range d.gpus {
		unix.Close(g.RenderFD)
	}
	if d.drvPage.valid() {
		unmapAll(d.drvPage.base, d.drvPage.size)
	}
	unix.Close(d.kfd)
	if d.reservation.valid() {
		unmapAll(d.reservation.base, d.reservation.size)
	}
}
