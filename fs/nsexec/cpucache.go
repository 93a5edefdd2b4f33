package nsexec

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// CPU cache directories for hosts whose kernel exposes none.
//
// libhsakmt 5.2.3 (topology.c, topology_get_cpu_cache_props) fails hsaKmtAcquireSystemProperties
// when no CPU of a CPU node has index directories under /sys/devices/system/node/node<K>/cpu<N>/cache
// ("Fail to get cache info for node 0"): ROCr, rocminfo and kfdtest 5.2.3 then see no agent at all.
// Some VMs' kernels expose none because the hypervisor zeroes the CPUID leaf the kernel reads for
// them (0x8000001D on AMD CPUs with TOPOEXT, 4 on Intel). For such a host the namespace gets, per CPU,
// the directories the kernel derives on an AMD CPU without that leaf: legacy_amd_cpuid4 (formerly
// amd_cpuid4) in arch/x86/kernel/cpu/cacheinfo.c builds L1d, L1i, L2 and L3 from the legacy leaves
// 0x80000005 (ECX L1d, EDX L1i) and 0x80000006 (ECX L2, EDX L3). Only hosts whose CPUs all lack a
// cache directory and whose CPU reports those leaves get anything; the files are the ones
// drivers/base/cacheinfo.c shows (id, level, type, size, coherency_line_size, ways_of_associativity,
// number_of_sets, physical_line_partition, shared_cpu_map, shared_cpu_list).

// CPUDir is the host directory whose cpu<N> entries get cache directories.
const CPUDir = "/sys/devices/system/cpu"

// File is one regular file placed in the upper layer of an overlay: Dir/Name with Data.
type File struct{ Dir, Name, Data string }

// cacheLeaf is one cache as cacheinfo.c describes it.
type cacheLeaf struct {
	level         int
	typ           string // Data, Instruction, Unified
	sizeKB        int
	ways          int // 0: fully associative
	lineSize      int
	linesPerTag   int
	sharedWithAll bool // L3: shared by every CPU of the package; L1 and L2 are private
}

// l2l3Assoc is cacheinfo.c's assocs[] for the 4-bit L2/L3 associativity codes (0xf: fully).
var l2l3Assoc = map[uint32]int{1: 1, 2: 2, 4: 4, 6: 8, 8: 16, 0xa: 32, 0xb: 48, 0xc: 64, 0xd: 96, 0xe: 128, 0xf: 0}

// legacyAMDCaches decodes the legacy AMD cache leaves as legacy_amd_cpuid4 does: L1 from
// 0x80000005 (size KB [31:24], ways [23:16] with 0xff fully associative, lines per tag [15:8],
// line size [7:0]), L2 from 0x80000006 ECX (size KB [31:16], assoc code [15:12], lines per tag
// [11:8], line size [7:0]) and L3 from its EDX (size in 512 KB units [31:18], the same low fields).
// A zero register is a cache the CPU does not report.
func legacyAMDCaches(l1d, l1i, l2, l3 uint32) []cacheLeaf {
	var out []cacheLeaf
	for _, l1 := range []struct {
		v   uint32
		typ string
	}{{l1d, "Data"}, {l1i, "Instruction"}} {
		if l1.v == 0 {
			continue
		}
		ways := int(l1.v >> 16 & 0xff)
		if ways == 0xff {
			ways = 0
		}
		out = append(out, cacheLeaf{1, l1.typ, int(l1.v >> 24), ways, int(l1.v & 0xff), int(l1.v >> 8 & 0xff), false})
	}
	if l2 != 0 {
		if ways, ok := l2l3Assoc[l2>>12&0xf]; ok {
			out = append(out, cacheLeaf{2, "Unified", int(l2 >> 16), ways, int(l2 & 0xff), int(l2 >> 8 & 0xf), false})
		}
	}
	if l3 != 0 {
		if ways, ok := l2l3Assoc[l3>>12&0xf]; ok {
			out = append(out, cacheLeaf{3, "Unified", int(l3>>18) * 512, ways, int(l3 & 0xff), int(l3 >> 8 & 0xf), true})
		}
	}
	return out
}

// cpuMask is the kernel's cpumap text (bitmap_print_to_pagebuf, "%*pb"): 32-bit hex words, most
// significant first, joined by commas, for cpus 0..n-1 of which those in set are set.
func cpuMask(set []int, n int) string {
	words := make([]uint32, (n+31)/32)
	for _, c := range set {
		words[c/32] |= 1 << (c % 32)
	}
	parts := make([]string, len(words))
	for i, w := range words {
		parts[len(words)-1-i] = fmt.Sprintf("%08x", w)
	}
	return strings.Join(parts, ",")
}

// cpuList is the kernel's cpulist text ("%*pbl"): ranges a-b joined by commas.
func cpuList(set []int) string {
	var parts []string
	for i := 0; i < len(set); {
		j := i
		for j+1 < len(set) && set[j+1] == set[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(set[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", set[i], set[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

var cpuDirRE = regexp.MustCompile(`^cpu[0-9]+$`)

// cacheFiles returns the cache directories to add under CPUDir for the host's CPUs with caches
// leaves, or nil when any host CPU already has a cache directory or leaves is empty.
func cacheFiles(leaves []cacheLeaf) []File {
	if len(leaves) == 0 {
		return nil
	}
	ents, err := os.ReadDir(host(CPUDir))
	if err != nil {
		return nil
	}
	var cpus []int
	for _, e := range ents {
		if !cpuDirRE.MatchString(e.Name()) {
			continue
		}
		if _, err := os.Stat(filepath.Join(host(CPUDir), e.Name(), "cache")); err == nil {
			return nil
		}
		n, _ := strconv.Atoi(e.Name()[3:])
		cpus = append(cpus, n)
	}
	if len(cpus) == 0 {
		return nil
	}
	sort.Ints(cpus)
	max := cpus[len(cpus)-1] + 1
	var files []File
	for _, c := range cpus {
		for i, l := range leaves {
			shared := []int{c}
			id := c
			if l.sharedWithAll {
				shared, id = cpus, 0
			}
			sets, ways := 0, l.ways
			if ways == 0 { // fully associative: one set of every line
				ways = l.sizeKB * 1024 / max1(l.lineSize)
			}
			sets = l.sizeKB * 1024 / max1(l.lineSize) / max1(ways)
			dir := fmt.Sprintf("cpu%d/cache/index%d", c, i)
			for name, v := range map[string]string{
				"id":                      strconv.Itoa(id),
				"level":                   strconv.Itoa(l.level),
				"type":                    l.typ,
				"size":                    strconv.Itoa(l.sizeKB) + "K",
				"coherency_line_size":     strconv.Itoa(l.lineSize),
				"ways_of_associativity":   strconv.Itoa(l.ways),
				"number_of_sets":          strconv.Itoa(sets),
				"physical_line_partition": strconv.Itoa(l.linesPerTag),
				"shared_cpu_map":          cpuMask(shared, max),
				"shared_cpu_list":         cpuList(shared),
			} {
				files = append(files, File{CPUDir, dir + "/" + name, v + "\n"})
			}
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	return files
}

func max1(v int) int {
	if v < 1 {
		return 1
	}
	return v
}

// hostCacheLeaves reads the legacy leaves of this CPU (nothing unless the CPU implements them).
func hostCacheLeaves() []cacheLeaf {
	if maxExt, _, _, _ := cpuid(0x80000000, 0); maxExt < 0x80000006 {
		return nil
	}
	_, _, l1d, l1i := cpuid(0x80000005, 0)
	_, _, l2, l3 := cpuid(0x80000006, 0)
	return legacyAMDCaches(l1d, l1i, l2, l3)
}
