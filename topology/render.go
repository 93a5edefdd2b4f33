package topology

import (
	"strconv"
	"strings"
)

func file(name string, data []byte) *Tree {
	return &Tree{Name: name, Kind: File, Mode: 0444, Content: func() []byte { return data }}
}

func dir(name string, children ...*Tree) *Tree {
	return &Tree{Name: name, Kind: Dir, Mode: 0755, Children: children} // kobject directories are 0755
}

// Tree renders the topology directory as kfd_topology.c does (kfd_build_sysfs_node_tree): the
// directory named "topology" holding generation_id, system_properties and nodes/. Static files carry
// their bytes; generation_id and GPU used_memory are Dynamic and re-read on every call.
func (s *System) Tree() *Tree {
	s.mu.RLock()
	defer s.mu.RUnlock()
	sys := Props{{"platform_oem", s.PlatformOEM}, {"platform_id", s.PlatformID}, {"platform_rev", s.PlatformRev}}
	gen := &Tree{Name: "generation_id", Kind: File, Mode: 0444, Dynamic: true, Content: func() []byte {
		return []byte(strconv.FormatUint(s.Generation(), 10) + "\n")
	}}
	nodes := dir("nodes")
	for _, n := range s.Nodes {
		nodes.Children = append(nodes.Children, s.renderNode(n))
	}
	return dir("topology", gen, file("system_properties", sys.render()), nodes)
}

func (s *System) renderNode(n *Node) *Tree {
	banks, caches, io, p2p := dir("mem_banks"), dir("caches"), dir("io_links"), dir("p2p_links")
	for i, b := range n.MemBanks {
		d := dir(strconv.Itoa(i), file("properties", b.Props.render()))
		if n.IsGPU() {
			gpuID, bank := n.GPUID, i
			d.Children = append(d.Children, &Tree{Name: "used_memory", Kind: File, Mode: 0444, Dynamic: true,
				Content: func() []byte { return []byte(strconv.FormatUint(s.used(gpuID, bank), 10) + "\n") }})
		}
		banks.Children = append(banks.Children, d)
	}
	for i, c := range n.Caches {
		caches.Children = append(caches.Children, dir(strconv.Itoa(i), file("properties", c.render())))
	}
	for i, l := range n.IOLinks {
		io.Children = append(io.Children, dir(strconv.Itoa(i), file("properties", l.Props.render())))
	}
	for i, l := range n.P2PLinks {
		p2p.Children = append(p2p.Children, dir(strconv.Itoa(i), file("properties", l.Props.render())))
	}
	return dir(strconv.Itoa(n.ID),
		file("gpu_id", []byte(strconv.FormatUint(uint64(n.GPUID), 10)+"\n")),
		file("name", []byte(n.Name+"\n")),
		file("properties", n.Props.render()),
		banks, caches, io, p2p, dir("perf"))
}

func (s *System) used(gpuID uint32, bank int) uint64 {
	s.mu.RLock()
	f := s.usedMemory
	s.mu.RUnlock()
	if f == nil {
		return 0
	}
	return f(gpuID, bank)
}

// render prints a cache's properties then its sibling map as kfd_cache_show does: "sibling_map "
// followed by "0," or "1," per bit, the last comma replaced by a newline.
func (c Cache) render() []byte {
	var b strings.Builder
	b.Write(c.Props.render())
	b.WriteString("sibling_map ")
	for _, bit := range c.SiblingMap {
		if bit {
			b.WriteString("1,")
		} else {
			b.WriteString("0,")
		}
	}
	out := []byte(b.String())
	out[len(out)-1] = '\n'
	return out
}
