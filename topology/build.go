package topology

import (
	"embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Profiles are data: profiles/<name>.yaml describes a whole system, profiles/asics.yaml the GPU
// templates it refers to. The schema is documented in docs/profiles.md.

//go:embed profiles/*.yaml
var profileFS embed.FS

type profileSpec struct {
	Name        string `yaml:"name" json:"name"`
	Description string `yaml:"description" json:"description"`
	Platform    struct {
		OEM uint64 `yaml:"oem" json:"oem"`
		ID  uint64 `yaml:"id" json:"id"`
		Rev uint64 `yaml:"rev" json:"rev"`
	} `yaml:"platform" json:"platform"`
	CPUs []cpuSpec `yaml:"cpus" json:"cpus"`
	GPUs []gpuSpec `yaml:"gpus" json:"gpus"`
	// ASICs adds or overrides GPU templates for this profile.
	ASICs map[string]*asicSpec `yaml:"asics" json:"asics"`
}

type cpuSpec struct {
	Cores      uint64 `yaml:"cores" json:"cores"`
	CoreIDBase uint64 `yaml:"core_id_base" json:"core_id_base"`
	ClockMHz   uint64 `yaml:"clock_mhz" json:"clock_mhz"`
	MemBytes   uint64 `yaml:"mem_bytes" json:"mem_bytes"`
	MemWidth   uint64 `yaml:"mem_width" json:"mem_width"`
	MemClkMHz  uint64 `yaml:"mem_clk_mhz" json:"mem_clk_mhz"`
}

type gpuSpec struct {
	ASIC string `yaml:"asic" json:"asic"`
	CPU  int    `yaml:"cpu" json:"cpu"` // index into cpus
	// Count expands one entry into several GPUs (location ids then step by 0x100 from LocationID).
	Count      int    `yaml:"count" json:"count"`
	LocationID uint64 `yaml:"location_id" json:"location_id"`
	Domain     uint64 `yaml:"domain" json:"domain"`
	// Hive groups GPUs in one XGMI hive: same non-zero Hive = same hive; HiveID is its hive_id
	// (derived from the hive number when 0).
	Hive     int    `yaml:"hive" json:"hive"`
	HiveID   uint64 `yaml:"hive_id" json:"hive_id"`
	UniqueID uint64 `yaml:"unique_id" json:"unique_id"`
	// Partitions > 1 makes one node per compute partition (CPX); partitions of one device share
	// location/unique id and link with the partition link parameters.
	Partitions int `yaml:"partitions" json:"partitions"`
}

type linkSpec struct {
	Weight     uint64 `yaml:"weight" json:"weight"`
	MinBW      uint64 `yaml:"min_bandwidth" json:"min_bandwidth"`
	MaxBW      uint64 `yaml:"max_bandwidth" json:"max_bandwidth"`
	SDMAMask   uint64 `yaml:"sdma_mask" json:"sdma_mask"`
	Flags      uint64 `yaml:"flags" json:"flags"`
	ToCPUFlags uint64 `yaml:"to_cpu_flags" json:"to_cpu_flags"`
}

type cacheSpec struct {
	Level    uint64 `yaml:"level" json:"level"`
	SizeKB   uint64 `yaml:"size_kb" json:"size_kb"`
	Line     uint64 `yaml:"line" json:"line"`
	Type     uint64 `yaml:"type" json:"type"`           // HSA_CACHE_TYPE_* bits: 1 data, 2 instruction, 8 HSA CU
	CUShared uint64 `yaml:"cu_shared" json:"cu_shared"` // CUs per cache; 0 = per device
	Count    int    `yaml:"count" json:"count"`         // caches per device when CUShared is 0 (default 1)
}

type asicSpec struct {
	Name       string            `yaml:"name" json:"name"` // nodes/N/name
	Properties map[string]uint64 `yaml:"properties" json:"properties"`
	VRAMBytes  uint64            `yaml:"vram_bytes" json:"vram_bytes"`
	VRAMWidth  uint64            `yaml:"vram_width" json:"vram_width"`
	VRAMClkMHz uint64            `yaml:"vram_clk_mhz" json:"vram_clk_mhz"`
	// ActiveCUs: CUs enabled on the device (array_count*cu_per_simd_array minus harvested ones);
	// simd_count must equal ActiveCUs*simd_per_cu. 0 means none harvested.
	ActiveCUs     uint64      `yaml:"active_cus" json:"active_cus"`
	Caches        []cacheSpec `yaml:"caches" json:"caches"`
	PCIe          linkSpec    `yaml:"pcie" json:"pcie"`
	XGMI          linkSpec    `yaml:"xgmi" json:"xgmi"`
	XGMIPartition linkSpec    `yaml:"xgmi_partition" json:"xgmi_partition"`
}

// Profiles lists the built-in profile names.
func Profiles() []string {
	ents, _ := profileFS.ReadDir("profiles")
	var names []string
	for _, e := range ents {
		if n := strings.TrimSuffix(e.Name(), ".yaml"); n != "asics" {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// DefaultProfile is the profile serve uses without --profile.
const DefaultProfile = "mi210"

// Profile builds a built-in profile.
func Profile(name string) (*System, error) {
	data, err := profileFS.ReadFile("profiles/" + name + ".yaml")
	if err != nil || name == "asics" {
		return nil, fmt.Errorf("topology: unknown profile %q (known: %s)", name, strings.Join(Profiles(), ", "))
	}
	return parseProfile(data, false)
}

// LoadProfileFile builds a profile from a YAML or JSON file (by extension; YAML otherwise).
func LoadProfileFile(path string) (*System, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s, err := parseProfile(data, strings.EqualFold(filepath.Ext(path), ".json"))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

func asicTemplates() (map[string]*asicSpec, error) {
	data, err := profileFS.ReadFile("profiles/asics.yaml")
	if err != nil {
		return nil, err
	}
	m := map[string]*asicSpec{}
	if err := yaml.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("topology: asics.yaml: %w", err)
	}
	return m, nil
}

// Limits on profile sizes: kfd supports at most 64 GPUs per system in libhsakmt's node arrays and
// render minors 128..255 leave room for 128.
const (
	maxCPUs  = 16
	maxGPUs  = 128
	maxCores = 4096
)

func parseProfile(data []byte, isJSON bool) (*System, error) {
	var p profileSpec
	var err error
	if isJSON {
		err = json.Unmarshal(data, &p)
	} else {
		err = yaml.Unmarshal(data, &p)
	}
	if err != nil {
		return nil, fmt.Errorf("topology: profile: %w", err)
	}
	t, err := asicTemplates()
	if err != nil {
		return nil, err
	}
	for k, v := range p.ASICs {
		if v == nil {
			return nil, fmt.Errorf("topology: profile: asic %q is empty", k)
		}
		t[k] = v
	}
	return build(&p, t)
}
