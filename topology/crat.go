package topology

import (
	"encoding/binary"
	"fmt"
)

// build turns a profile into a System the way amdkfd builds its topology: a virtual CRAT for the
// CPU (NUMA) nodes (kfd_create_vcrat_image_cpu), one node per GPU or compute partition
// (kfd_topology_add_device), caches from the per-ASIC cache tables (kfd_fill_cache_non_crat_info),
// IO links GPU<->CPU and XGMI, indirect P2P links (kfd_add_peer_prop / kfd_dev_create_p2p_links).
func build(p *profileSpec, t map[string]*asicSpec) (*System, error) {
	if len(p.CPUs) == 0 || len(p.CPUs) > maxCPUs {
		return nil, fmt.Errorf("topology: profile %q: need 1..%d cpus, have %d", p.Name, maxCPUs, len(p.CPUs))
	}
	s := &System{Name: p.Name, PlatformOEM: p.Platform.OEM, PlatformID: p.Platform.ID,
		PlatformRev: p.Platform.Rev, templates: t, spec: p}
	for i, c := range p.CPUs {
		if c.Cores == 0 || c.Cores > maxCores {
			return nil, fmt.Errorf("topology: profile %q: cpu %d: cores must be 1..%d", p.Name, i, maxCores)
		}
		s.Nodes = append(s.Nodes, cpuNode(i, c))
	}
	for i, g := range p.GPUs {
		a := t[g.ASIC]
		if a == nil {
			return nil, fmt.Errorf("topology: profile %q: gpu %d: unknown asic %q", p.Name, i, g.ASIC)
		}
		if g.CPU < 0 || g.CPU >= len(p.CPUs) {
			return nil, fmt.Errorf("topology: profile %q: gpu %d: cpu %d does not exist", p.Name, i, g.CPU)
		}
		count, parts := max(g.Count, 1), max(g.Partitions, 1)
		if count > maxGPUs || parts > 16 || len(s.Nodes)+count*parts > maxCPUs+maxGPUs {
			return nil, fmt.Errorf("topology: profile %q: too many GPUs", p.Name)
		}
		for c := 0; c < count; c++ {
			inst := g
			inst.LocationID = g.LocationID + uint64(c)*0x100
			for part := 0; part < parts; part++ {
				n, err := s.gpuNode(a, g.ASIC, inst, part, parts)
				if err != nil {
					return nil, fmt.Errorf("topology: profile %q: gpu %d: %w", p.Name, i, err)
				}
				s.Nodes = append(s.Nodes, n)
			}
		}
	}
	s.relink()
	// kfd_topology_add_device increments generation_count once per GPU added at boot.
	s.generation = uint64(len(s.Nodes) - len(p.CPUs))
	return s, nil
}

func cpuNode(id int, c cpuSpec) *Node {
	m := map[string]uint64{
		"cpu_cores_count": c.Cores, "mem_banks_count": 1, "cpu_core_id_base": c.CoreIDBase,
		"max_engine_clk_ccompute": c.ClockMHz,
	}
	return &Node{ID: id, Props: ordered(nodeKeys(false), m), CPU: id,
		MemBanks: []Bank{{ordered(memKeys, map[string]uint64{"heap_type": HeapSystem,
			"size_in_bytes": c.MemBytes, "width": c.MemWidth, "mem_clk_max": c.MemClkMHz})}}}
}

// Properties a template must give for a GPU node to make sense.
var requiredGPU = []string{"simd_count", "simd_per_cu", "array_count", "cu_per_simd_array",
	"wave_front_size", "gfx_target_version", "device_id", "max_waves_per_simd"}

func (s *System) gpuNode(a *asicSpec, asic string, g gpuSpec, part, parts int) (*Node, error) {
	for _, k := range requiredGPU {
		if a.Properties[k] == 0 {
			return nil, fmt.Errorf("asic %q: property %s must be non-zero", asic, k)
		}
	}
	// Bounds on the values that size loops and tables (profile files are user input).
	for k, limit := range map[string]uint64{"array_count": 64, "cu_per_simd_array": 32, "simd_per_cu": 16,
		"num_xcc": 16, "wave_front_size": 64} {
		if a.Properties[k] > limit {
			return nil, fmt.Errorf("asic %q: %s %d exceeds %d", asic, k, a.Properties[k], limit)
		}
	}
	if len(a.Caches) > 16 {
		return nil, fmt.Errorf("asic %q: %d cache types, at most 16", asic, len(a.Caches))
	}
	// At most maxCachesPerGPU cache entries per node (MI210 has 217, an MI300X SPX 1300).
	entries := uint64(0)
	for _, c := range a.Caches {
		if c.Count > 64 || c.Count < 0 {
			return nil, fmt.Errorf("asic %q: cache count %d out of range 0..64", asic, c.Count)
		}
		if c.CUShared == 0 {
			entries += uint64(max(c.Count, 1))
		} else {
			entries += a.Properties["array_count"] * ((a.Properties["cu_per_simd_array"] + c.CUShared - 1) / c.CUShared)
		}
	}
	if entries > maxCachesPerGPU {
		return nil, fmt.Errorf("asic %q: %d cache entries per GPU, at most %d", asic, entries, maxCachesPerGPU)
	}
	total := entries
	for _, n := range s.Nodes {
		total += uint64(len(n.Caches))
	}
	if total > maxCachesPerSystem {
		return nil, fmt.Errorf("more than %d cache entries in the system", maxCachesPerSystem)
	}
	m := map[string]uint64{}
	for k, v := range a.Properties {
		m[k] = v
	}
	gpus := 0
	var simdBase uint64 = 0x80001000 // kfd_topology.c: gpu_processor_id_low starts here
	for _, n := range s.Nodes {
		if n.IsGPU() {
			gpus++
			simdBase += n.Prop(ArrayCount) * n.Prop(CUPerSIMDArray)
		}
	}
	if gpus >= maxGPUs {
		return nil, fmt.Errorf("more than %d GPUs", maxGPUs)
	}
	m["simd_id_base"] = simdBase
	m["vendor_id"] = 0x1002
	m["location_id"] = g.LocationID + uint64(part)
	m["domain"] = g.Domain
	m["drm_render_minor"] = 128 + uint64(gpus)
	m["mem_banks_count"] = 1
	m["local_mem_size"] = 0 // no longer reported (kfd_topology.c prints 0)
	if g.Hive != 0 {
		m["hive_id"] = g.HiveID
		if m["hive_id"] == 0 {
			m["hive_id"] = 0x4b4644454d550000 | uint64(g.Hive) // "KFDEMU" + hive number
		}
	} else {
		m["hive_id"] = 0
		m["num_sdma_xgmi_engines"] = 0
	}
	m["unique_id"] = g.UniqueID
	if m["unique_id"] == 0 {
		m["unique_id"] = 0x6b66646500000000 | g.LocationID<<8 | uint64(g.Domain)
	}
	vram := a.VRAMBytes / uint64(parts)
	n := &Node{Name: a.Name, Asic: asic, CPU: g.CPU, Props: ordered(nodeKeys(true), m),
		MemBanks: []Bank{{ordered(memKeys, map[string]uint64{"heap_type": HeapFBPublic,
			"size_in_bytes": vram, "width": a.VRAMWidth, "mem_clk_max": a.VRAMClkMHz})}}}
	n.ID = len(s.Nodes)
	n.Gfx = n.GfxTarget()
	if err := fillCaches(n, a); err != nil {
		return nil, fmt.Errorf("asic %q: %w", asic, err)
	}
	n.Props.Set("caches_count", uint64(len(n.Caches)))
	xccPerPart := max(m["num_xcc"], 1)
	n.GPUID = s.uniqueGPUID(gpuIDHash(m["location_id"], m["domain"], m["device_id"], vram,
		uint64(part)*xccPerPart, xccPerPart))
	return n, nil
}

// fillCaches follows kfd_fill_cache_non_crat_info: level-1 caches are created per group of
// cu_shared CUs in every shader array when at least one CU of the group is active; caches with
// cu_shared 0 (L2, L3) are one per device (Count of them, e.g. one L2 per XCC). processor_id_low
// advances by cu_shared per group, starting at simd_id_base.
func fillCaches(n *Node, a *asicSpec) error {
	arrays, perArray := n.Prop(ArrayCount), n.Prop(CUPerSIMDArray)
	total := a.ActiveCUs
	if total == 0 {
		total = arrays * perArray
	}
	if total > arrays*perArray || total*n.Prop(SIMDPerCU) != n.Prop(SIMDCount) {
		return fmt.Errorf("simd_count %d != active CUs %d * simd_per_cu %d (at most %d CUs)",
			n.Prop(SIMDCount), total, n.Prop(SIMDPerCU), arrays*perArray)
	}
	// Harvested CUs are spread over the arrays: the first total%arrays arrays have one more.
	activeIn := func(arr uint64) uint64 {
		act := total / arrays
		if arr < total%arrays {
			act++
		}
		return act
	}
	base := n.Prop(SIMDIDBase)
	for _, c := range a.Caches {
		props := func(id uint64) Props {
			return ordered(cacheKeys, map[string]uint64{"processor_id_low": id, "level": c.Level,
				"size": c.SizeKB, "cache_line_size": c.Line, "cache_lines_per_tag": 1, "type": c.Type})
		}
		if c.CUShared == 0 {
			for i := 0; i < max(c.Count, 1); i++ {
				sib := make([]bool, siblingBits)
				for j := uint64(0); j < total && j < siblingBits; j++ {
					sib[j] = true
				}
				n.Caches = append(n.Caches, Cache{props(base), sib})
			}
			continue
		}
		id := base
		for arr := uint64(0); arr < arrays; arr++ {
			act := activeIn(arr)
			for k := uint64(0); k < perArray; k += c.CUShared {
				sib := make([]bool, siblingBits)
				used := false
				for j := uint64(0); j < c.CUShared && k+j < perArray; j++ {
					if k+j < act {
						sib[j] = true
						used = true
					}
				}
				if used {
					n.Caches = append(n.Caches, Cache{props(id), sib})
				}
				id += c.CUShared
			}
		}
	}
	return nil
}

// Cache-entry limits keep a hostile profile from making the rendered tree huge: an MI210 has 217
// entries, an MI300X SPX about 1300, the 63-partition MI300X CPX capture 5040.
const (
	maxCachesPerGPU    = 2048
	maxCachesPerSystem = 16384
)

// siblingBits is the printed length of sibling_map: CRAT_SIBLINGMAP_SIZE (32) bytes of bits, as the
// captured trees show.
const siblingBits = 256

// gpuIDHash is kfd_generate_gpu_id: crc16 over eight u32 words {devfn, subsystem vendor |
// subsystem device << 16, domain, device, bus, local_mem_size lo, hi, first XCC | XCC count << 16}.
func gpuIDHash(location, domain, device, mem, firstXCC, nXCC uint64) uint32 {
	words := []uint32{uint32(location & 0xff), uint32(0x1002 | device<<16), uint32(domain),
		uint32(device), uint32(location >> 8 & 0xff), uint32(mem), uint32(mem >> 32),
		uint32(firstXCC | nXCC<<16)}
	buf := make([]byte, 4*len(words))
	for i, w := range words {
		binary.LittleEndian.PutUint32(buf[4*i:], w)
	}
	return uint32(crc16(0, buf))
}

// crc16 is lib/crc16.c: CRC-16 with polynomial x^16+x^15+x^2+1 (0x8005, bit-reversed 0xA001).
func crc16(crc uint16, b []byte) uint16 {
	for _, c := range b {
		crc ^= uint16(c)
		for i := 0; i < 8; i++ {
			if crc&1 != 0 {
				crc = crc>>1 ^ 0xA001
			} else {
				crc >>= 1
			}
		}
	}
	return crc
}

// uniqueGPUID makes the id non-zero and unique as kfd_generate_gpu_id does (it retries with the
// next value on a collision).
func (s *System) uniqueGPUID(id uint32) uint32 {
	for {
		id &= 0xffff
		if id == 0 {
			id = 1
		}
		clash := false
		for _, n := range s.Nodes {
			if n.GPUID == id {
				clash = true
			}
		}
		if !clash {
			return id
		}
		id++
	}
}

// relink rebuilds every node's IO and P2P links and the counts that go with them.
func (s *System) relink() {
	link := func(typ uint64, from, to *Node, l linkSpec, flags uint64) Link {
		return Link{ordered(linkKeys, map[string]uint64{"type": typ, "node_from": uint64(from.ID),
			"node_to": uint64(to.ID), "weight": l.Weight, "min_bandwidth": l.MinBW, "max_bandwidth": l.MaxBW,
			"recommended_sdma_engine_id_mask": l.SDMAMask, "flags": flags})}
	}
	const (
		typeHT, typePCIe, typeXGMI              = 1, 2, 11 // kfd_topology.h: CRAT_IOLINK_TYPE_* as sysfs shows them
		weightCPU, weightPeerCPU, weightPeerGPU = 32, 52, 72
	)
	var cpus, gpus []*Node
	for _, n := range s.Nodes {
		n.IOLinks, n.P2PLinks = nil, nil
		if n.IsGPU() {
			gpus = append(gpus, n)
		} else {
			cpus = append(cpus, n)
		}
	}
	tmpl := func(n *Node) *asicSpec { return s.templates[n.Asic] }
	for _, c := range cpus {
		for _, o := range cpus {
			if o != c {
				c.IOLinks = append(c.IOLinks, link(typeHT, c, o, linkSpec{Weight: weightCPU}, 0))
			}
		}
		for _, g := range gpus {
			pc := tmpl(g).PCIe
			if g.CPU == c.ID {
				c.IOLinks = append(c.IOLinks, link(typePCIe, c, g, pc, pc.ToCPUFlags))
			} else {
				c.P2PLinks = append(c.P2PLinks, link(typePCIe, c, g, linkSpec{Weight: weightPeerCPU}, pc.ToCPUFlags))
			}
		}
	}
	for _, g := range gpus {
		a := tmpl(g)
		g.IOLinks = append(g.IOLinks, link(typePCIe, g, s.Nodes[g.CPU], a.PCIe, a.PCIe.Flags))
		hive := g.Prop(HiveID)
		for _, o := range gpus {
			if o == g {
				continue
			}
			if hive != 0 && o.Prop(HiveID) == hive {
				l := a.XGMI
				if o.Prop(UniqueID) == g.Prop(UniqueID) && o.Prop(LocationID)>>8 == g.Prop(LocationID)>>8 {
					l = a.XGMIPartition
				}
				g.IOLinks = append(g.IOLinks, link(typeXGMI, g, o, l, l.Flags))
			}
		}
		for _, c := range cpus {
			if c.ID != g.CPU {
				g.P2PLinks = append(g.P2PLinks, link(typePCIe, g, c, linkSpec{Weight: weightPeerCPU}, a.PCIe.Flags))
			}
		}
		for _, o := range gpus {
			if o != g && (hive == 0 || o.Prop(HiveID) != hive) {
				// The captured 8-GPU tree carries the SDMA mask on GPU->GPU peer links only from
				// GPUs of a higher CPU node to those of a lower one; reproduced as captured.
				l := linkSpec{Weight: weightPeerGPU}
				if g.CPU > o.CPU {
					l.SDMAMask = a.PCIe.SDMAMask
				}
				g.P2PLinks = append(g.P2PLinks, link(typePCIe, g, o, l, a.PCIe.ToCPUFlags))
			}
		}
	}
	for _, n := range s.Nodes {
		n.Props.Set("io_links_count", uint64(len(n.IOLinks)))
		n.Props.Set("p2p_links_count", uint64(len(n.P2PLinks)))
		n.Props.Set("mem_banks_count", uint64(len(n.MemBanks)))
		n.Props.Set("caches_count", uint64(len(n.Caches)))
	}
}
