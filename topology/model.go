package topology

import (
	"fmt"
	"sync"
)

// System is the whole topology: what kfd_topology.c keeps in topology_device_list plus the
// system_properties and generation counter. It is safe for concurrent use: readers (rendering, the
// driver's lookups) take mu for reading, hot-plug takes it for writing. Lock order: System.mu is a
// leaf lock; the used-memory hook is called with it held for reading and must not call back.
type System struct {
	mu                                   sync.RWMutex
	Name                                 string // profile name, "" for a parsed tree
	PlatformOEM, PlatformID, PlatformRev uint64
	generation                           uint64
	Nodes                                []*Node
	usedMemory                           func(gpuID uint32, bank int) uint64
	usedNotify                           []func()
	templates                            map[string]*asicSpec // GPU templates usable by AddGPU (from the profile)
	spec                                 *profileSpec
}

// Node is one topology node (kfd_topology_device).
type Node struct {
	ID       int
	Name     string // nodes/N/name: "" for CPUs, lowercased amdgpu_asic_name for GPUs
	GPUID    uint32 // nodes/N/gpu_id: 0 for CPUs
	Props    Props  // nodes/N/properties, kernel order
	MemBanks []Bank
	Caches   []Cache
	IOLinks  []Link
	P2PLinks []Link
	// Asic is the template name ("mi210") of a GPU node; Gfx its target ("gfx90a").
	Asic, Gfx string
	// CPU is the node id of the CPU (NUMA) node a GPU hangs off.
	CPU int
}

// Bank is nodes/N/mem_banks/M.
type Bank struct{ Props Props }

// Cache is nodes/N/caches/C.
type Cache struct {
	Props      Props
	SiblingMap []bool
}

// Link is nodes/N/io_links/L or p2p_links/L.
type Link struct{ Props Props }

// IsGPU reports whether n is a GPU node (it has SIMDs).
func (n *Node) IsGPU() bool { return n.Props.Get("simd_count") > 0 }

// Prop returns the value of a nodes/N/properties key.
func (n *Node) Prop(key NodeKey) uint64 { return n.Props.Get(key.String()) }

// RenderMinor is the node's drm_render_minor.
func (n *Node) RenderMinor() uint32 { return uint32(n.Prop(DRMRenderMinor)) }

// VRAMSize is the sum of the node's frame-buffer heaps (public and private).
func (n *Node) VRAMSize() uint64 {
	var s uint64
	for _, b := range n.MemBanks {
		if t := b.Props.Get("heap_type"); t == HeapFBPublic || t == HeapFBPrivate {
			s += b.Props.Get("size_in_bytes")
		}
	}
	return s
}

// ComputeUnits is simd_count / simd_per_cu.
func (n *Node) ComputeUnits() uint64 {
	if spc := n.Prop(SIMDPerCU); spc > 0 {
		return n.Prop(SIMDCount) / spc
	}
	return 0
}

// GfxTarget derives "gfxXYZ" from gfx_target_version (major*10000 + minor*100 + stepping, with
// minor and stepping printed in hex as LLVM names them: 90010 -> gfx90a).
func (n *Node) GfxTarget() string { return GfxName(n.Prop(GfxTargetVersion)) }

// GfxName formats a gfx_target_version.
func GfxName(v uint64) string {
	if v == 0 {
		return ""
	}
	return fmt.Sprintf("gfx%d%x%x", v/10000, v/100%100, v%100)
}

// Memory heap types (kfd_topology.h HSA_MEM_HEAP_TYPE_*).
const (
	HeapSystem    = 0
	HeapFBPublic  = 1
	HeapFBPrivate = 2
)

// Generation is the current generation_id.
func (s *System) Generation() uint64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.generation
}

// GPUs returns the GPU nodes in node order (a snapshot).
func (s *System) GPUs() []*Node {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var g []*Node
	for _, n := range s.Nodes {
		if n.IsGPU() {
			g = append(g, n)
		}
	}
	return g
}

// NodeByGPUID returns the GPU node with that gpu_id, or nil.
func (s *System) NodeByGPUID(id uint32) *Node {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, n := range s.Nodes {
		if id != 0 && n.GPUID == id {
			return n
		}
	}
	return nil
}

// Snapshot returns the node list under the read lock.
func (s *System) Snapshot() []*Node {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return append([]*Node(nil), s.Nodes...)
}

// SetUsedMemoryFunc installs the source of mem_banks/M/used_memory (the driver's VRAM accounting).
func (s *System) SetUsedMemoryFunc(f func(gpuID uint32, bank int) uint64) {
	s.mu.Lock()
	s.usedMemory = f
	s.mu.Unlock()
}

// OnUsedMemoryChange registers f to be called after the used-memory source reports a change
// (fs drops cached used_memory pages).
func (s *System) OnUsedMemoryChange(f func()) {
	s.mu.Lock()
	s.usedNotify = append(s.usedNotify, f)
	s.mu.Unlock()
}

// UsedMemoryChanged is called by the driver after VRAM allocations change.
func (s *System) UsedMemoryChanged() {
	s.mu.RLock()
	fs := append([]func(){}, s.usedNotify...)
	s.mu.RUnlock()
	for _, f := range fs {
		f()
	}
}

// SetHostMemory makes the CPU nodes' system-memory banks report total bytes, split evenly among
// the CPU nodes (whole pages), as amdkfd reports the host's own memory (kfd_fill_mem_info_for_cpu:
// the NUMA node's managed pages). The emulator's system memory is the host's, and clients size
// their work by it (kfdtest's SVM eviction tests take a third of it). Call before serving.
func (s *System) SetHostMemory(total uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var cpus []*Node
	for _, n := range s.Nodes {
		if !n.IsGPU() {
			cpus = append(cpus, n)
		}
	}
	if len(cpus) == 0 || total == 0 {
		return
	}
	share := total / uint64(len(cpus)) &^ 4095
	for _, n := range cpus {
		for i := range n.MemBanks {
			if n.MemBanks[i].Props.Get("heap_type") == HeapSystem {
				n.MemBanks[i].Props.Set("size_in_bytes", share)
			}
		}
	}
}
