package hsa

import (
	"fmt"

	"github.com/kfdemu/kfdemu/runtime/codeobj"
	"github.com/kfdemu/kfdemu/runtime/kmt"
)

// Executable is a code object loaded for one GPU agent (hsa_executable_t with one loaded code
// object): its image in executable memory mapped on that GPU.
type Executable struct {
	Agent   *Agent
	Object  *codeobj.Object
	Base    uint64
	kernels map[string]*Kernel
	mem     *kmt.Memory
}

// Kernel is a kernel ready to dispatch (the kernel object is its descriptor's address).
type Kernel struct {
	Name               string
	Object             uint64 // kernel descriptor address (hsa_executable_symbol KERNEL_OBJECT)
	KernargSize        uint32
	KernargAlign       uint32
	GroupSegmentSize   uint32
	PrivateSegmentSize uint32
	Args               []codeobj.Arg
}

// LoadCodeObject loads a code object for agent (hsa_code_object_reader + hsa_executable_load +
// freeze): the object's ISA must be the agent's; the image, relocated for its load address, is
// copied into executable system memory mapped on the agent.
func (a *Agent) LoadCodeObject(b []byte) (*Executable, error) {
	r := a.r
	if err := r.check(); err != nil {
		return nil, err
	}
	if a.Kind != GPU {
		return nil, fmt.Errorf("%w: code objects load on GPU agents", ErrInvalidArgument)
	}
	o, err := codeobj.Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidArgument, err)
	}
	if o.Processor != a.Name {
		return nil, fmt.Errorf("%w: object for %s, agent is %s", ErrIncompatibleISA, o.Processor, a.Name)
	}
	m, err := r.d.AllocGTT(a.gpu, o.Size, kmt.Executable)
	if err != nil {
		return nil, wrap(err)
	}
	copy(m.Bytes(), o.Image(m.VA))
	if err := m.Map(); err != nil {
		m.Free()
		return nil, wrap(err)
	}
	e := &Executable{Agent: a, Object: o, Base: m.VA, mem: m, kernels: map[string]*Kernel{}}
	for _, k := range o.Kernels {
		e.kernels[k.Name] = &Kernel{Name: k.Name, Object: m.VA + k.DescriptorOffset, KernargSize: k.KernargSegmentSize,
			KernargAlign: k.KernargSegmentAlign, GroupSegmentSize: k.GroupSegmentSize, PrivateSegmentSize: k.PrivateSegmentSize,
			Args: k.Args}
	}
	return e, nil
}

// Kernel returns the named kernel (hsa_executable_get_symbol_by_name).
func (e *Executable) Kernel(name string) (*Kernel, error) {
	k, ok := e.kernels[name]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrKernelNotFound, name)
	}
	return k, nil
}

// Destroy unloads the executable (hsa_executable_destroy).
func (e *Executable) Destroy() error { return wrap(e.mem.Free()) }
