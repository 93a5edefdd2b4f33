package topology

import (
	"fmt"
	"io"
)

// WriteSummary prints a readable summary: one block per node with its kind, name, gfx target,
// compute units, wave size, memory, caches and links.
func WriteSummary(w io.Writer, s *System) error {
	nodes := s.Snapshot()
	fmt.Fprintf(w, "generation %d, %d nodes\n", s.Generation(), len(nodes))
	for _, n := range nodes {
		var mem uint64
		for _, b := range n.MemBanks {
			mem += b.Props.Get("size_in_bytes")
		}
		if n.IsGPU() {
			fmt.Fprintf(w, "node %d  GPU  %-14s %-7s gpu_id %-5d renderD%d  %d CUs  wave%d  VRAM %d MiB  %d caches  %d io_links  %d p2p_links\n",
				n.ID, n.Name, n.GfxTarget(), n.GPUID, n.RenderMinor(), n.ComputeUnits(),
				n.Prop(WaveFrontSize), mem>>20, len(n.Caches), len(n.IOLinks), len(n.P2PLinks))
		} else {
			fmt.Fprintf(w, "node %d  CPU  %d cores  %d MHz  memory %d MiB  %d io_links  %d p2p_links\n",
				n.ID, n.Prop(CPUCoresCount), n.Prop(MaxEngineClkCCompute), mem>>20,
				len(n.IOLinks), len(n.P2PLinks))
		}
	}
	return nil
}

// WriteDot prints the topology as a Graphviz digraph: nodes, IO links (solid, XGMI bold) and P2P
// links (dashed), labelled with their weights.
func WriteDot(w io.Writer, s *System) error {
	fmt.Fprintln(w, "digraph kfd_topology {")
	fmt.Fprintln(w, "  node [shape=box];")
	nodes := s.Snapshot()
	for _, n := range nodes {
		if n.IsGPU() {
			fmt.Fprintf(w, "  n%d [label=\"node %d\\n%s %s\\n%d CUs\"];\n", n.ID, n.ID, n.Name, n.GfxTarget(), n.ComputeUnits())
		} else {
			fmt.Fprintf(w, "  n%d [label=\"node %d\\nCPU %d cores\", shape=ellipse];\n", n.ID, n.ID, n.Prop(CPUCoresCount))
		}
	}
	for _, n := range nodes {
		for _, l := range n.IOLinks {
			style := "solid"
			if l.Props.Get("type") == 11 {
				style = "bold"
			}
			fmt.Fprintf(w, "  n%d -> n%d [style=%s, label=\"%d\"];\n", n.ID, l.Props.Get("node_to"), style, l.Props.Get("weight"))
		}
		for _, l := range n.P2PLinks {
			fmt.Fprintf(w, "  n%d -> n%d [style=dashed, label=\"%d\"];\n", n.ID, l.Props.Get("node_to"), l.Props.Get("weight"))
		}
	}
	_, err := fmt.Fprintln(w, "}")
	return err
}
