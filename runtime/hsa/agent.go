package hsa

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"

	"github.com/kfdemu/kfdemu/runtime/kmt"
)

// AgentKind is HSA_DEVICE_TYPE_CPU or _GPU.
type AgentKind int

// Agent kinds.
const (
	CPU AgentKind = iota
	GPU
)

func (k AgentKind) String() string {
	if k == GPU {
		return "GPU"
	}
	return "CPU"
}

// Queue size limits of a GPU agent (ROCr: HSA_AGENT_INFO_QUEUE_MIN_SIZE / MAX_SIZE in packets).
const (
	QueueMinSize = 64
	QueueMaxSize = 1 << 17
)

// Agent is a CPU or GPU agent (hsa_agent_t).
type Agent struct {
	r      *Runtime
	Kind   AgentKind
	Node   *kmt.Node
	Name   string // GPU: the processor ("gfx90a"); CPU: the node's marketing name
	ISA    string // GPU: "amdgcn-amd-amdhsa--gfx90a"
	Pools  []*Pool
	gpu    *kmt.GPU
	system *Pool // fine-grained system memory usable by this agent
}

func newCPUAgent(r *Runtime, n *kmt.Node) *Agent {
	a := &Agent{r: r, Kind: CPU, Node: n, Name: n.Name}
	if a.Name == "" {
		a.Name = cpuModelName() // libhsakmt's topology_parse_cpuinfo
	}
	if a.Name == "" {
		a.Name = fmt.Sprintf("CPU node %d", n.ID)
	}
	size := n.HeapSize(0) // HSA_HEAPTYPE_SYSTEM
	a.Pools = []*Pool{
		{agent: a, Kind: FineGrained, Size: size, Name: "system fine-grained"},
		{agent: a, Kind: Kernarg, Size: size, Name: "system kernarg"},
		{agent: a, Kind: CoarseGrained, Size: size, Name: "system coarse-grained"},
	}
	return a
}

func newGPUAgent(r *Runtime, g *kmt.GPU) *Agent {
	a := &Agent{r: r, Kind: GPU, Node: g.Node, Name: g.Node.GfxName(), gpu: g}
	a.ISA = "amdgcn-amd-amdhsa--" + a.Name
	a.Pools = []*Pool{{agent: a, Kind: CoarseGrained, Size: g.Node.HeapSize(1, 2), Name: "GPU local (VRAM)"}}
	a.system = &Pool{agent: a, Kind: FineGrained, Name: "system fine-grained", system: true}
	return a
}

// cpuModelName is the first "model name" of /proc/cpuinfo.
func cpuModelName() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// ComputeUnits is the number of CUs (HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT).
func (a *Agent) ComputeUnits() uint32 { return a.Node.ComputeUnits() }

// WavefrontSize is 64 on GFX9 (HSA_AGENT_INFO_WAVEFRONT_SIZE).
func (a *Agent) WavefrontSize() uint32 {
	if w := a.Node.Props.Get("wave_front_size"); w != 0 {
		return uint32(w)
	}
	return 64
}

// GPUID is the kfd gpu_id (0 for CPU agents).
func (a *Agent) GPUID() uint32 { return a.Node.GPUID }

func (a *Agent) String() string {
	return fmt.Sprintf("%s agent %s (node %d)", a.Kind, a.Name, a.Node.ID)
}

// PoolKind is the kind of a memory pool (ROCr's region flags).
type PoolKind int

// Pool kinds.
const (
	CoarseGrained PoolKind = iota // coherent at dispatch boundaries (VRAM; host memory without COHERENT)
	FineGrained                   // coherent while kernels run (host memory, COHERENT)
	Kernarg                       // fine-grained host memory for kernel arguments
)

func (k PoolKind) String() string {
	return [...]string{"coarse-grained", "fine-grained", "kernarg"}[k]
}

// Pool is a memory pool of an agent (hsa_amd_memory_pool_t).
type Pool struct {
	agent  *Agent
	Kind   PoolKind
	Name   string
	Size   uint64 // bytes the pool covers (0: unknown)
	system bool   // a GPU agent's view of system memory
}

// Agent is the pool's owner.
func (p *Pool) Agent() *Agent { return p.agent }

// Buffer is memory from a pool, mapped to every GPU agent (system memory) or to its GPU (VRAM).
type Buffer struct {
	VA   uint64
	Size uint64
	Pool *Pool
	mem  *kmt.Memory
}

// Bytes is the CPU view of the buffer (VRAM too: the emulated GPUs have a large BAR).
func (b *Buffer) Bytes() []byte { return b.mem.Bytes() }

// Free releases the buffer (hsa_amd_memory_pool_free).
func (b *Buffer) Free() error { return wrap(b.mem.Free()) }

// Allocate allocates size bytes from the pool (hsa_amd_memory_pool_allocate). VRAM goes to the
// pool's GPU; system memory is GTT of the first GPU (ROCr allocates system memory through a GPU
// node too), mapped to every GPU. An allocation the driver cannot satisfy is ErrOutOfResources
// wrapping ENOMEM.
func (p *Pool) Allocate(size uint64) (*Buffer, error) {
	r := p.agent.r
	if err := r.check(); err != nil {
		return nil, err
	}
	if size == 0 {
		return nil, fmt.Errorf("%w: size 0", ErrInvalidArgument)
	}
	gpus := r.d.GPUs()
	if len(gpus) == 0 {
		return nil, fmt.Errorf("%w: no GPU to allocate through", ErrInvalidArgument)
	}
	var m *kmt.Memory
	var err error
	switch {
	case p.agent.Kind == GPU && !p.system:
		m, err = r.d.AllocVRAM(p.agent.gpu, size, kmt.Executable|kmt.HostAccess) // large BAR: CPU-visible
	case p.Kind == CoarseGrained:
		m, err = r.d.AllocGTT(gpus[0], size, kmt.Executable)
	default:
		m, err = r.d.AllocGTT(gpus[0], size, kmt.Coherent|kmt.Executable)
	}
	if err != nil {
		if errors.Is(err, syscall.ENOMEM) {
			return nil, fmt.Errorf("%w: %d bytes from %s: %w", ErrOutOfResources, size, p.Name, err)
		}
		return nil, wrap(err)
	}
	targets := []*kmt.GPU{}
	if p.agent.Kind == GPU && !p.system {
		targets = append(targets, p.agent.gpu)
	} else {
		targets = gpus
	}
	if err := m.Map(targets...); err != nil {
		m.Free()
		return nil, wrap(err)
	}
	return &Buffer{VA: m.VA, Size: m.Size, Pool: p, mem: m}, nil
}

// SystemPool is the fine-grained system memory pool a GPU agent can reach (for signals, rings
// and host-visible data).
func (a *Agent) SystemPool() *Pool {
	if a.Kind == GPU {
		return a.system
	}
	return a.Pools[0]
}

// KernargPool is the pool for kernel arguments (a CPU agent's kernarg pool; for a GPU agent the
// same memory).
func (r *Runtime) KernargPool() *Pool {
	for _, a := range r.agents {
		for _, p := range a.Pools {
			if p.Kind == Kernarg {
				return p
			}
		}
	}
	return r.GPUs()[0].system
}
