package topology

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestShellScript runs scripts/kfd-topology.sh with dash and busybox sh on every fixture and every
// profile's rendered tree, and checks each output line against the parsed model.
func TestShellScript(t *testing.T) {
	roots := captureRoots(t)
	for _, name := range Profiles() {
		s, _ := Profile(name)
		dir := filepath.Join(t.TempDir(), "topology")
		if err := WriteTree(dir, s.Tree()); err != nil {
			t.Fatal(err)
		}
		roots["profile "+name] = dir
	}
	script, _ := filepath.Abs("../scripts/kfd-topology.sh")
	ran := 0
	for _, shell := range [][]string{{"dash"}, {"busybox", "sh"}} {
		if _, err := exec.LookPath(shell[0]); err != nil {
			t.Logf("%s not installed: not run with it", shell[0])
			continue
		}
		for name, root := range roots {
			out, err := exec.Command(shell[0], append(shell[1:], script, root)...).CombinedOutput()
			if err != nil {
				t.Fatalf("%v on %s: %v\n%s", shell, name, err, out)
			}
			sys, err := ReadSystem(root)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")[1:]
			if len(lines) != len(sys.Nodes) {
				t.Fatalf("%v on %s: %d lines for %d nodes", shell, name, len(lines), len(sys.Nodes))
			}
			for i, l := range lines {
				f := strings.Fields(l)
				n := sys.Nodes[i]
				want := n.Prop(CPUCoresCount)
				kind := "CPU"
				if n.IsGPU() {
					want, kind = n.ComputeUnits(), "GPU"
				}
				cus, _ := strconv.ParseUint(f[len(f)-5], 10, 64)
				vram, _ := strconv.ParseUint(f[len(f)-3], 10, 64)
				if f[0] != strconv.Itoa(n.ID) || f[1] != kind || cus != want ||
					(n.GfxTarget() != "" && !strings.Contains(l, n.GfxTarget())) ||
					(n.IsGPU() && vram != n.VRAMSize()>>20) {
					t.Errorf("%v on %s: line %q does not match node %d", shell, name, l, n.ID)
				}
			}
			ran++
		}
	}
	if ran == 0 {
		t.Skip("neither dash nor busybox is installed")
	}
}
