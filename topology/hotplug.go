package topology

import "fmt"

// AddGPU hot-plugs one GPU built from template (an ASIC name of asics.yaml or of the profile) on
// the first CPU node, as amdgpu probing a new device does: the node gets the next id, a new gpu_id
// and render minor, links are rebuilt and generation_id increments (kfd_topology_add_device).
func (s *System) AddGPU(template string) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.templates == nil {
		t, err := asicTemplates()
		if err != nil {
			return 0, err
		}
		s.templates = t
	}
	a := s.templates[template]
	if a == nil {
		return 0, fmt.Errorf("topology: unknown GPU template %q", template)
	}
	cpu := -1
	for _, n := range s.Nodes {
		if !n.IsGPU() {
			cpu = n.ID
			break
		}
	}
	if cpu < 0 {
		return 0, fmt.Errorf("topology: no CPU node to attach a GPU to")
	}
	loc := uint64(0x8000)
	for _, n := range s.Nodes {
		if l := n.Prop(LocationID); l >= loc {
			loc = l&^0xff + 0x100
		}
	}
	n, err := s.gpuNode(a, template, gpuSpec{ASIC: template, CPU: cpu, LocationID: loc}, 0, 1)
	if err != nil {
		return 0, err
	}
	if n.RenderMinor() > 255 {
		return 0, fmt.Errorf("topology: no render minor left")
	}
	s.Nodes = append(s.Nodes, n)
	s.relink()
	s.generation++
	return n.ID, nil
}

// RemoveGPU hot-unplugs GPU node id (kfd_topology_remove_device): later nodes are renumbered, links
// rebuilt, generation_id increments.
func (s *System) RemoveGPU(id int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if id < 0 || id >= len(s.Nodes) || !s.Nodes[id].IsGPU() {
		return fmt.Errorf("topology: node %d is not a GPU node", id)
	}
	if s.templates == nil || s.templates[s.Nodes[id].Asic] == nil {
		return fmt.Errorf("topology: node %d comes from a captured tree and cannot be re-linked", id)
	}
	s.Nodes = append(s.Nodes[:id], s.Nodes[id+1:]...)
	for i, n := range s.Nodes {
		n.ID = i
		if n.CPU > id {
			n.CPU-- // CPU nodes precede GPUs, so this never happens for built profiles
		}
	}
	s.relink()
	s.generation++
	return nil
}
