// Package hsa is an HSA-style runtime over runtime/kmt, shaped after ROCr (ROCR-Runtime 5.2,
// hsa.h): Init opens the device and finds the agents; each agent has memory pools; signals are
// amd_signal_t in fine-grained memory (interrupt signals carry an event mailbox); queues are
// user-mode AQL rings whose packets are published with a release store of the header and a
// doorbell store; LoadCodeObject places a code object (runtime/codeobj) in executable memory and
// returns kernel objects to dispatch; Copy runs on an SDMA queue.
//
// It uses only what a ROCm process uses: the device files, ioctls and mmaps of runtime/kmt. It
// works against the kfdemu mount and, unchanged, against a real /dev/kfd.
//
// Concurrency: a Runtime, its Agents, Pools and Queues are safe for concurrent use. Queue
// submission is multi-producer (write-index reservation by atomic add, as hsa_queue_add_write_index).
// Signals are atomics on shared memory. Lock order: Runtime.mu before copyMu before the kmt
// Device's own locks; Queue and Signal methods take no Runtime lock on their hot paths.
package hsa

import (
	"errors"
	"fmt"
	"sync"

	"github.com/kfdemu/kfdemu/runtime/kmt"
)

// Errors (status codes of hsa.h, as Go errors). Device errors wrap the kmt error and its errno.
var (
	ErrInvalidArgument = errors.New("hsa: invalid argument")  // HSA_STATUS_ERROR_INVALID_ARGUMENT
	ErrOutOfResources  = errors.New("hsa: out of resources")  // HSA_STATUS_ERROR_OUT_OF_RESOURCES
	ErrQueueFull       = errors.New("hsa: queue full")        // no room in the ring before the timeout
	ErrShutDown        = errors.New("hsa: runtime shut down") // HSA_STATUS_ERROR_NOT_INITIALIZED
	ErrIncompatibleISA = errors.New("hsa: code object for another ISA")
	ErrKernelNotFound  = errors.New("hsa: kernel not found")
	ErrInvalidSignal   = errors.New("hsa: invalid signal")    // HSA_STATUS_ERROR_INVALID_SIGNAL
	ErrQueueInactive   = errors.New("hsa: queue is inactive") // the packet processor stopped it
	ErrDeviceGone      = errors.New("hsa: device gone")       // the driver went away
)

// Config says which device to open.
type Config struct {
	// Root is the directory the device files and sysfs live under: "" for kmt's default (the real
	// /dev/kfd, else the kfdemu mount), "/" for the real driver, or a kfdemu mount point.
	Root string
	// XNACK turns on recoverable GPU page faults for the process (ROCr's HSA_XNACK=1:
	// hsaKmtSetXNACKMode(1) at start), so kernels reach any CPU memory through SVM.
	XNACK bool
}

// Runtime is an initialized runtime (hsa_init .. hsa_shut_down).
type Runtime struct {
	d      *kmt.Device
	agents []*Agent

	mu      sync.Mutex
	closed  bool
	sigPage []*kmt.Memory // signal pages (64 amd_signal_t each)
	sigFree []uint64      // free signal slots (addresses)
	sigMem  map[uint64][]byte

	copyMu sync.Mutex
	copier *sdmaCopier
}

// Init opens the device and builds the agents: one CPU agent per CPU node, one GPU agent per GPU
// node (ROCr's Runtime::Load and amd_topology.cpp).
func Init(cfg Config) (*Runtime, error) {
	d, err := kmt.Open(kmt.Config{Root: cfg.Root})
	if err != nil {
		return nil, wrap(err)
	}
	if cfg.XNACK {
		if err := d.SetXNACKMode(true); err != nil {
			d.Close()
			return nil, wrap(err)
		}
	}
	r := &Runtime{d: d, sigMem: map[uint64][]byte{}}
	for _, n := range d.Topology().Nodes {
		if n.IsCPU() {
			r.agents = append(r.agents, newCPUAgent(r, n))
		}
	}
	for _, g := range d.GPUs() {
		r.agents = append(r.agents, newGPUAgent(r, g))
	}
	if len(r.agents) == 0 {
		d.Close()
		return nil, fmt.Errorf("%w: no agent in the topology", ErrInvalidArgument)
	}
	return r, nil
}

// Shutdown destroys everything the runtime made (queues, signals, memory) and closes the device
// (hsa_shut_down). Later calls return ErrShutDown.
func (r *Runtime) Shutdown() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return ErrShutDown
	}
	r.closed = true
	r.mu.Unlock()
	r.copyMu.Lock()
	r.copier = nil
	r.copyMu.Unlock()
	return wrap(r.d.Close())
}

func (r *Runtime) check() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return ErrShutDown
	}
	return nil
}

// Agents lists the agents, CPUs first (hsa_iterate_agents).
func (r *Runtime) Agents() []*Agent { return r.agents }

// GPUs lists the GPU agents.
func (r *Runtime) GPUs() []*Agent {
	var out []*Agent
	for _, a := range r.agents {
		if a.Kind == GPU {
			out = append(out, a)
		}
	}
	return out
}

// SVMSetAttr sets attributes of an SVM range of the process's memory (hsa_amd_svm_attributes_set).
func (r *Runtime) SVMSetAttr(start, size uint64, attrs ...kmt.SVMAttr) error {
	if err := r.check(); err != nil {
		return err
	}
	return wrap(r.d.SVMSetAttr(start, size, attrs...))
}

// Version is the driver interface version (KFD major.minor).
func (r *Runtime) Version() (major, minor uint32) { return r.d.Version() }

// wrap turns a kmt error into a runtime error that still wraps the errno.
func wrap(err error) error {
	switch {
	case err == nil:
		return nil
	case kmt.DeviceGone(err):
		return fmt.Errorf("%w: %w", ErrDeviceGone, err)
	}
	return err
}
