package topology

import (
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"github.com/kfdemu/kfdemu/internal/testenv"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the current rendering")

// fixture is a captured tree of ../shared/fixtures/topology (testenv.Shared: skipped in a lone clone).
func fixture(t testing.TB, rel string) string {
	return testenv.Shared(t, filepath.Join("fixtures/topology", rel))
}

// flatten renders a Tree as path -> content (directories as "<dir>").
func flatten(t *Tree) map[string]string {
	out := map[string]string{}
	var walk func(prefix string, t *Tree)
	walk = func(prefix string, t *Tree) {
		p := prefix + t.Name
		switch t.Kind {
		case File:
			out[p] = string(t.Content())
		case Dir:
			out[p+"/"] = "<dir>"
			for _, c := range t.Children {
				walk(p+"/", c)
			}
		}
	}
	walk("", t)
	return out
}

// readDisk reads a directory the same way.
func readDisk(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.Walk(root, func(path string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(filepath.Dir(root), path)
		rel = filepath.Join("topology", strings.TrimPrefix(rel, filepath.Base(root)))
		if fi.IsDir() {
			out[rel+"/"] = "<dir>"
			return nil
		}
		b, err := os.ReadFile(path)
		out[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func captureRoots(t *testing.T) map[string]string {
	roots := map[string]string{
		"topo-mi210-xgmi-pcie": fixture(t, "topo-mi210-xgmi-pcie"),
		"topo-mi300-cpx":       fixture(t, "topo-mi300-cpx/topology"),
		"topology-parsing":     fixture(t, "topology-parsing/topology"),
	}
	for _, r := range roots {
		if _, err := os.Stat(r); err != nil {
			t.Fatalf("fixture missing: %v", err)
		}
	}
	return roots
}

func TestCaptureRoundTrip(t *testing.T) {
	for name, root := range captureRoots(t) {
		tree, err := LoadCapture(root)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, want := flatten(tree), readDisk(t, root)
		if len(got) != len(want) {
			t.Errorf("%s: %d entries served, %d captured", name, len(got), len(want))
		}
		for p, w := range want {
			if got[p] != w {
				t.Errorf("%s: %s differs", name, p)
			}
		}
	}
}

// TestGolden compares each profile's rendering with testdata/golden/<profile>.txt.gz: every entry
// as "== path" followed by its content, in serving order (gzip keeps the 6 MB of text small).
func TestGolden(t *testing.T) {
	for _, name := range Profiles() {
		s, err := Profile(name)
		if err != nil {
			t.Fatal(err)
		}
		got := goldenText(s.Tree())
		path := filepath.Join("testdata/golden", name+".txt.gz")
		if *update {
			var buf bytes.Buffer
			zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
			zw.ModTime = time.Time{}
			zw.Write([]byte(got))
			zw.Close()
			os.MkdirAll("testdata/golden", 0755)
			if err := os.WriteFile(path, buf.Bytes(), 0644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatalf("%v (run go test -update)", err)
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		want, err := io.ReadAll(zr)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if got != string(want) {
			gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
			for i := 0; i < len(gl) && i < len(wl); i++ {
				if gl[i] != wl[i] {
					t.Errorf("%s: line %d: got %q, golden %q", name, i+1, gl[i], wl[i])
					break
				}
			}
			t.Errorf("%s: rendering differs from golden (%d vs %d lines)", name, len(gl), len(wl))
		}
	}
}

func goldenText(t *Tree) string {
	var b strings.Builder
	var walk func(prefix string, t *Tree)
	walk = func(prefix string, t *Tree) {
		p := prefix + t.Name
		switch t.Kind {
		case File:
			fmt.Fprintf(&b, "== %s %o\n%s", p, t.Mode, t.Content())
		case Symlink:
			fmt.Fprintf(&b, "== %s -> %s\n", p, t.Target)
		case Dir:
			fmt.Fprintf(&b, "== %s/ %o\n", p, t.Mode)
			for _, c := range t.Children {
				walk(p+"/", c)
			}
		}
	}
	walk("", t)
	return b.String()
}

// Fields of a GPU node that differ between machines or positions in a system, so the profile cannot
// and should not reproduce them from a different capture.
var perMachine = map[string]bool{
	"location_id": true, "domain": true, "unique_id": true, "hive_id": true, "drm_render_minor": true,
	"io_links_count": true, "p2p_links_count": true, "simd_id_base": true, "num_sdma_xgmi_engines": true,
}

func TestMI210MatchesCapture(t *testing.T) {
	capt, err := ReadSystem(fixture(t, "topo-mi210-xgmi-pcie"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Profile("mi210")
	if err != nil {
		t.Fatal(err)
	}
	got, want := s.GPUs()[0].Props, capt.Nodes[2].Props
	if len(got) != len(want) {
		t.Fatalf("%d keys, capture has %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Key != want[i].Key {
			t.Fatalf("key %d is %s, capture has %s", i, got[i].Key, want[i].Key)
		}
		if !perMachine[want[i].Key] && got[i].Val != want[i].Val {
			t.Errorf("%s = %d, capture has %d", want[i].Key, got[i].Val, want[i].Val)
		}
	}
}

// mi210x8 reproduces the captured 8-GPU tree: every properties file that the capture has (node
// properties and all links) is equal, except simd_id_base... none: all compared.
func TestMI210x8MatchesCapture(t *testing.T) {
	root := fixture(t, "topo-mi210-xgmi-pcie")
	s, err := Profile("mi210x8")
	if err != nil {
		t.Fatal(err)
	}
	got, want := flatten(s.Tree()), readDisk(t, root)
	// The capture holds only nodes/*/properties and links; mem_banks, caches, gpu_id and name
	// were not captured. Its CPU nodes differ in nothing we model; its GPU nodes' cpu memory
	// sizes are not in these files.
	diffs := 0
	for p, w := range want {
		if strings.HasSuffix(p, "/") {
			continue
		}
		if got[p] != w {
			diffs++
			t.Errorf("%s differs:\n%s\ncapture:\n%s", p, got[p], w)
		}
	}
	if diffs == 0 {
		t.Logf("all %d captured files reproduced", len(want))
	}
}

func TestInvariants(t *testing.T) {
	for _, name := range Profiles() {
		s, err := Profile(name)
		if err != nil {
			t.Fatal(err)
		}
		ids, minors := map[uint32]bool{}, map[uint32]bool{}
		for i, n := range s.Nodes {
			if n.ID != i {
				t.Errorf("%s: node %d has id %d", name, i, n.ID)
			}
			counts := map[NodeKey]int{MemBanksCount: len(n.MemBanks), CachesCount: len(n.Caches),
				IOLinksCount: len(n.IOLinks), P2PLinksCount: len(n.P2PLinks)}
			for k, v := range counts {
				if n.Prop(k) != uint64(v) {
					t.Errorf("%s node %d: %s %d but %d entries", name, i, k, n.Prop(k), v)
				}
			}
			for _, l := range append(append([]Link(nil), n.IOLinks...), n.P2PLinks...) {
				if l.Props.Get("node_from") != uint64(i) || l.Props.Get("node_to") >= uint64(len(s.Nodes)) {
					t.Errorf("%s node %d: bad link %v", name, i, l.Props)
				}
			}
			if !n.IsGPU() {
				if n.GPUID != 0 {
					t.Errorf("%s: CPU node %d has gpu_id", name, i)
				}
				continue
			}
			if n.GPUID == 0 || ids[n.GPUID] {
				t.Errorf("%s: node %d gpu_id %d zero or duplicate", name, i, n.GPUID)
			}
			ids[n.GPUID] = true
			m := n.RenderMinor()
			if m < 128 || m > 255 || minors[m] {
				t.Errorf("%s: node %d render minor %d", name, i, m)
			}
			minors[m] = true
			if n.GfxTarget() == "" || n.VRAMSize() == 0 {
				t.Errorf("%s: node %d gfx %q vram %d", name, i, n.GfxTarget(), n.VRAMSize())
			}
		}
	}
}

func TestGfxName(t *testing.T) {
	for v, want := range map[uint64]string{90010: "gfx90a", 90008: "gfx908", 90402: "gfx942",
		90000: "gfx900", 100300: "gfx1030", 110000: "gfx1100", 0: ""} {
		if got := GfxName(v); got != want {
			t.Errorf("GfxName(%d) = %q, want %q", v, got, want)
		}
	}
}

func TestCRC16(t *testing.T) {
	// lib/crc16.c is CRC-16/ARC: check value of "123456789" is 0xBB3D.
	if got := crc16(0, []byte("123456789")); got != 0xBB3D {
		t.Fatalf("crc16 = %#x", got)
	}
}

func TestHotplug(t *testing.T) {
	s, _ := Profile("mi210")
	gen := s.Generation()
	id, err := s.AddGPU("mi100")
	if err != nil {
		t.Fatal(err)
	}
	if s.Generation() != gen+1 || len(s.GPUs()) != 2 || s.Nodes[id].GfxTarget() != "gfx908" {
		t.Fatalf("after add: gen %d gpus %d", s.Generation(), len(s.GPUs()))
	}
	tree := flatten(s.Tree())
	if tree["topology/nodes/2/name"] != "arcturus\n" || tree["topology/generation_id"] != fmt.Sprintf("%d\n", gen+1) {
		t.Errorf("rendered tree not updated")
	}
	if s.Nodes[0].Prop(IOLinksCount) != 2 {
		t.Errorf("CPU node not linked to the new GPU")
	}
	if err := s.RemoveGPU(0); err == nil {
		t.Error("removing a CPU node succeeded")
	}
	if _, err := s.AddGPU("nope"); err == nil {
		t.Error("unknown template accepted")
	}
	if err := s.RemoveGPU(1); err != nil {
		t.Fatal(err)
	}
	if s.Generation() != gen+2 || len(s.Nodes) != 2 || s.Nodes[1].Name != "arcturus" {
		t.Fatalf("after remove: gen %d nodes %d", s.Generation(), len(s.Nodes))
	}
}

func TestUsedMemory(t *testing.T) {
	s, _ := Profile("mi210")
	g := s.GPUs()[0]
	s.SetUsedMemoryFunc(func(id uint32, bank int) uint64 {
		if id == g.GPUID && bank == 0 {
			return 4096
		}
		return 0
	})
	if got := flatten(s.Tree())["topology/nodes/1/mem_banks/0/used_memory"]; got != "4096\n" {
		t.Fatalf("used_memory = %q", got)
	}
}

func TestReadSystemFixtures(t *testing.T) {
	for name, root := range captureRoots(t) {
		s, err := ReadSystem(root)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(s.GPUs()) == 0 {
			t.Errorf("%s: no GPUs parsed", name)
		}
	}
	s, _ := ReadSystem(fixture(t, "topo-mi300-cpx/topology"))
	if len(s.Nodes) != 65 || len(s.GPUs()) != 63 || s.GPUs()[0].GfxTarget() != "gfx942" {
		t.Errorf("mi300 cpx: %d nodes %d gpus", len(s.Nodes), len(s.GPUs()))
	}
}

func TestProfileFileErrors(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"nocpu.yaml":   "name: x\ngpus: [{asic: mi210}]\n",
		"badasic.yaml": "name: x\ncpus: [{cores: 4}]\ngpus: [{asic: nope}]\n",
		"badcpu.yaml":  "name: x\ncpus: [{cores: 4}]\ngpus: [{asic: mi210, cpu: 3}]\n",
		"bad.json":     "{",
		"huge.yaml":    "name: x\ncpus: [{cores: 4}]\ngpus: [{asic: mi210, count: 100000}]\n",
	} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0644)
		if _, err := LoadProfileFile(p); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
	p := filepath.Join(dir, "ok.json")
	os.WriteFile(p, []byte(`{"name":"j","cpus":[{"cores":8,"mem_bytes":1024}],"gpus":[{"asic":"vega10","count":2}]}`), 0644)
	s, err := LoadProfileFile(p)
	if err != nil || len(s.GPUs()) != 2 {
		t.Fatalf("json profile: %v", err)
	}
}

func FuzzProfile(f *testing.F) {
	for _, n := range Profiles() {
		b, _ := profileFS.ReadFile("profiles/" + n + ".yaml")
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := parseProfile(data, false)
		if err == nil {
			var buf bytes.Buffer
			WriteSummary(&buf, s)
			flatten(s.Tree())
		}
	})
}

func FuzzParseProperties(f *testing.F) {
	f.Add([]byte("cpu_cores_count 0\nsimd_count 416\n"))
	f.Add([]byte("level 1\nsibling_map 1,0,1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, sib, err := ParseProperties(data)
		if err != nil {
			return
		}
		// Re-rendering what parsed must parse to the same values.
		p2, _, err := ParseProperties(p.render())
		if err != nil || len(p2) != len(p) {
			t.Fatalf("round trip: %v", err)
		}
		_ = sib
	})
}

func TestSetHostMemory(t *testing.T) {
	s, err := Profile("mi210x8")
	if err != nil {
		t.Fatal(err)
	}
	s.SetHostMemory(24<<30 + 123)
	cpus := 0
	for _, n := range s.Nodes {
		if n.IsGPU() {
			if n.VRAMSize() == 0 {
				t.Errorf("node %d: VRAM changed to 0", n.ID)
			}
			continue
		}
		cpus++
		if got := n.MemBanks[0].Props.Get("size_in_bytes"); got != 12<<30 {
			t.Errorf("cpu node %d: size_in_bytes %d, want %d", n.ID, got, uint64(12<<30))
		}
	}
	if cpus != 2 {
		t.Fatalf("mi210x8 has %d cpu nodes, want 2", cpus)
	}
}

// TestNodeKeysMatchRendering: the typed keys are the rendered keys, in order, for CPU and GPU
// nodes of every profile (the table in keys.go is the one the driver reads and the renderer prints).
func TestNodeKeysMatchRendering(t *testing.T) {
	for _, name := range Profiles() {
		s, err := Profile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range s.Nodes {
			want := nodeKeys(n.IsGPU())
			if len(n.Props) != len(want) {
				t.Fatalf("%s node %d: %d properties, %d keys", name, n.ID, len(n.Props), len(want))
			}
			for i, p := range n.Props {
				if p.Key != want[i] {
					t.Errorf("%s node %d: property %d is %q, key table says %q", name, n.ID, i, p.Key, want[i])
				}
			}
		}
	}
	for k := NodeKey(0); k < numNodeKeys; k++ {
		if k.String() == "" {
			t.Errorf("key %d has no name", k)
		}
	}
}
