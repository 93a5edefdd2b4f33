package nsexec

import (
	"os"
	"path/filepath"
	"testing"
)

// The legacy leaves of the AMD EPYC VM this was written on (its kernel shows no CPU caches):
// 0x80000005 ECX/EDX, 0x80000006 ECX/EDX.
const (
	vmL1d = 0x300c0140 // 48 KB, 12 ways, 1 line per tag, 64-byte lines
	vmL1i = 0x20080140 // 32 KB, 8 ways
	vmL2  = 0x04006140 // 1024 KB, code 6 = 8 ways
	vmL3  = 0x0fe09140 // code 9: "see leaf 0x8000001D", no legacy description
)

func TestLegacyAMDCaches(t *testing.T) {
	got := legacyAMDCaches(vmL1d, vmL1i, vmL2, vmL3)
	want := []cacheLeaf{
		{1, "Data", 48, 12, 64, 1, false},
		{1, "Instruction", 32, 8, 64, 1, false},
		{2, "Unified", 1024, 8, 64, 1, false},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("leaf %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	// An L3 with a table code (16 ways, 32 MB), fully associative L1, nothing reported.
	l := legacyAMDCaches(0x40ff0140, 0, 0, 0x01008140)
	if len(l) != 2 || l[0].ways != 0 || l[1] != (cacheLeaf{3, "Unified", 32768, 16, 64, 1, true}) {
		t.Errorf("got %+v", l)
	}
	if l := legacyAMDCaches(0, 0, 0, 0); l != nil {
		t.Errorf("no leaves: got %+v", l)
	}
}

func TestCacheFiles(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"cpu0", "cpu1", "cpufreq", "cpuidle"} {
		os.MkdirAll(filepath.Join(root, CPUDir, d), 0755)
	}
	old := hostRoot
	hostRoot = root
	defer func() { hostRoot = old }()
	leaves := append(legacyAMDCaches(vmL1d, vmL1i, vmL2, 0), cacheLeaf{3, "Unified", 32768, 16, 64, 1, true})
	files := cacheFiles(leaves)
	got := map[string]string{}
	for _, f := range files {
		if f.Dir != CPUDir {
			t.Fatalf("file %+v outside %s", f, CPUDir)
		}
		got[f.Name] = f.Data
	}
	if len(got) != 2*4*10 {
		t.Errorf("%d files, want 80", len(got))
	}
	for name, want := range map[string]string{
		"cpu1/cache/index0/type":                    "Data\n",
		"cpu1/cache/index0/size":                    "48K\n",
		"cpu1/cache/index0/ways_of_associativity":   "12\n",
		"cpu1/cache/index0/number_of_sets":          "64\n",
		"cpu1/cache/index1/type":                    "Instruction\n",
		"cpu1/cache/index2/level":                   "2\n",
		"cpu1/cache/index2/size":                    "1024K\n",
		"cpu1/cache/index2/shared_cpu_map":          "00000002\n",
		"cpu1/cache/index2/shared_cpu_list":         "1\n",
		"cpu1/cache/index2/id":                      "1\n",
		"cpu1/cache/index3/shared_cpu_list":         "0-1\n",
		"cpu1/cache/index3/shared_cpu_map":          "00000003\n",
		"cpu0/cache/index3/id":                      "0\n",
		"cpu0/cache/index1/coherency_line_size":     "64\n",
		"cpu0/cache/index1/physical_line_partition": "1\n",
	} {
		if got[name] != want {
			t.Errorf("%s = %q, want %q", name, got[name], want)
		}
	}
	// A host whose kernel shows caches keeps its own.
	os.MkdirAll(filepath.Join(root, CPUDir, "cpu1", "cache"), 0755)
	if f := cacheFiles(leaves); f != nil {
		t.Errorf("host with cache directories: got %d files", len(f))
	}
}

func TestCPUMaskAndList(t *testing.T) {
	if got := cpuMask([]int{0, 33}, 40); got != "00000002,00000001" {
		t.Errorf("cpuMask = %q", got)
	}
	if got := cpuList([]int{0, 1, 2, 5, 7, 8}); got != "0-2,5,7-8" {
		t.Errorf("cpuList = %q", got)
	}
}
