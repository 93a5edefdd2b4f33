package topology

import (
	"fmt"
	"strconv"
	"strings"
)

// Prop is one "key value" line of a sysfs properties file.
type Prop struct {
	Key string
	Val uint64
}

// Props is an ordered property list: the order is the kernel's print order.
type Props []Prop

// Get returns the value of key, or 0.
func (p Props) Get(key string) uint64 {
	for _, kv := range p {
		if kv.Key == key {
			return kv.Val
		}
	}
	return 0
}

// Has reports whether key is present.
func (p Props) Has(key string) bool {
	for _, kv := range p {
		if kv.Key == key {
			return true
		}
	}
	return false
}

// Set replaces the value of key, appending it when absent.
func (p *Props) Set(key string, v uint64) {
	for i := range *p {
		if (*p)[i].Key == key {
			(*p)[i].Val = v
			return
		}
	}
	*p = append(*p, Prop{key, v})
}

// render prints the properties as kfd_topology.c does: sysfs_show_32bit_prop / sysfs_show_64bit_prop
// both print "%s %u\n" / "%s %llu\n", so every value is decimal unsigned.
func (p Props) render() []byte {
	var b strings.Builder
	for _, kv := range p {
		b.WriteString(kv.Key)
		b.WriteByte(' ')
		b.WriteString(strconv.FormatUint(kv.Val, 10))
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// ParseProperties parses a properties file ("key value" lines). Lines that are not of that form are
// an error; sibling_map (a cache's comma list) is returned separately.
func ParseProperties(data []byte) (Props, []bool, error) {
	var p Props
	var sib []bool
	for i, line := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		if line == "" {
			continue
		}
		key, val, ok := strings.Cut(line, " ")
		if !ok || key == "" {
			return nil, nil, fmt.Errorf("topology: line %d: %q is not \"key value\"", i+1, line)
		}
		if key == "sibling_map" {
			for _, f := range strings.Split(val, ",") {
				switch f {
				case "0":
					sib = append(sib, false)
				case "1":
					sib = append(sib, true)
				default:
					return nil, nil, fmt.Errorf("topology: line %d: bad sibling_map entry %q", i+1, f)
				}
			}
			continue
		}
		v, err := strconv.ParseUint(val, 10, 64)
		if err != nil {
			return nil, nil, fmt.Errorf("topology: line %d: %v", i+1, err)
		}
		p = append(p, Prop{key, v})
	}
	return p, sib, nil
}

// Key orders, from kfd_topology.c (mem_show, kfd_cache_show, iolink_show) as of Linux 6.10: the same
// order the captured trees in shared/fixtures/topology have. Node keys: keys.go.
var (
	memKeys   = []string{"heap_type", "size_in_bytes", "flags", "width", "mem_clk_max"}
	cacheKeys = []string{"processor_id_low", "level", "size", "cache_line_size", "cache_lines_per_tag",
		"association", "latency", "type"}
	linkKeys = []string{"type", "version_major", "version_minor", "node_from", "node_to", "weight",
		"min_latency", "max_latency", "min_bandwidth", "max_bandwidth", "recommended_transfer_size",
		"recommended_sdma_engine_id_mask", "flags"}
)

// ordered builds Props in the given key order from a map; keys missing from m are 0.
func ordered(keys []string, m map[string]uint64) Props {
	p := make(Props, 0, len(keys))
	for _, k := range keys {
		p = append(p, Prop{k, m[k]})
	}
	return p
}
