package nsexec

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const sampleMountinfo = `22 27 0:21 / /proc rw,relatime - proc proc rw
24 27 0:6 / /dev rw,relatime - devtmpfs devtmpfs rw,mode=755
25 24 0:23 / /dev/shm rw,relatime - tmpfs tmpfs rw
26 24 0:24 / /dev/pts rw,relatime - devpts devpts rw,mode=600,ptmxmode=000
29 26 0:26 / /dev/pts rw,relatime - devpts devpts rw,mode=600,ptmxmode=000
30 25 0:27 / /dev/shm/inner rw,relatime - tmpfs tmpfs rw
31 24 0:28 / /dev/my\040dir rw,relatime - tmpfs tmpfs rw
32 27 0:29 / /devices rw,relatime - tmpfs tmpfs rw
33 23 0:30 / /sys/class/net/x rw,relatime - tmpfs tmpfs rw
`

func TestSubmounts(t *testing.T) {
	for _, tc := range []struct {
		dir  string
		want []string
	}{
		// Stacked /dev/pts listed once; /dev/shm/inner travels with /dev/shm; /devices is not below /dev.
		{"/dev", []string{"/dev/pts", "/dev/shm", "/dev/my dir"}},
		{"/dev/", []string{"/dev/pts", "/dev/shm", "/dev/my dir"}},
		{"/dev/shm", []string{"/dev/shm/inner"}},
		{"/sys/class", []string{"/sys/class/net/x"}},
		{"/sys/module", nil},
		{"/proc", nil},
	} {
		if got := Submounts(sampleMountinfo, tc.dir); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Submounts(%q) = %q, want %q", tc.dir, got, tc.want)
		}
	}
}

func TestUnescapeMountinfo(t *testing.T) {
	for in, want := range map[string]string{
		`/a\040b`:   "/a b",
		`/tab\011x`: "/tab\tx",
		`/back\134`: `/back\`,
		`/plain`:    "/plain",
		`/short\04`: `/short\04`,
		`/bad\09x`:  `/bad\09x`,
		`\`:         `\`,
	} {
		if got := unescapeMountinfo(in); got != want {
			t.Errorf("unescapeMountinfo(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestWithAmdgpu(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", AmdgpuModuleLine},
		{"snd 1 0 - Live 0x0\n", "snd 1 0 - Live 0x0\n" + AmdgpuModuleLine},
		{"snd 1 0 - Live 0x0", "snd 1 0 - Live 0x0\n" + AmdgpuModuleLine},
		{"amdgpu 9 1 - Live 0x0\n", "amdgpu 9 1 - Live 0x0\n"},
		// A module whose name merely starts with amdgpu is a different module.
		{"amdgpu_x 9 1 - Live 0x0\n", "amdgpu_x 9 1 - Live 0x0\n" + AmdgpuModuleLine},
	} {
		if got := string(WithAmdgpu([]byte(tc.in))); got != tc.want {
			t.Errorf("WithAmdgpu(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// fakeMount builds MNT with a kfd file, two render nodes and a topology of two CPU nodes and one
// GPU node.
func fakeMount(t *testing.T) string {
	t.Helper()
	mnt := t.TempDir()
	files := map[string]string{
		KFDPath:                              "",
		DRIPath + "/renderD128":              "",
		DRIPath + "/renderD129":              "",
		GenerationPath:                       "1\n",
		TopologyPath + "/nodes/0/properties": "cpu_cores_count 8\nsimd_count 0\n",
		TopologyPath + "/nodes/1/properties": "cpu_cores_count 8\nsimd_count 0\n",
		TopologyPath + "/nodes/2/properties": "cpu_cores_count 0\nsimd_count 416\n",
		ModulePath + "/initstate":            "live\n",
	}
	for p, c := range files {
		p = filepath.Join(mnt, p)
		if err := os.MkdirAll(filepath.Dir(p), 0755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0644); err != nil {
			t.Fatal(err)
		}
	}
	return mnt
}

func TestPlan(t *testing.T) {
	mnt := fakeMount(t)
	for _, tc := range []struct {
		name      string
		hostFiles []string
		overlays  []string
		nodeLinks []Link
		procMods  string
	}{
		{"host with one NUMA node and /proc/modules",
			[]string{"sys/devices/system/node/node0/x", "proc/modules"},
			[]string{"/dev", "/sys/module", "/sys/devices/virtual", "/sys/devices/system/node"},
			[]Link{{"/sys/devices/system/node", "node1", "node0"}}, "bind"},
		{"host with two NUMA nodes, no module support",
			[]string{"sys/devices/system/node/node0/x", "sys/devices/system/node/node1/x"},
			[]string{"/dev", "/sys/module", "/sys/devices/virtual"}, nil, "shadow"},
		{"host without NUMA sysfs",
			nil, []string{"/dev", "/sys/module", "/sys/devices/virtual"}, nil, "shadow"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for _, f := range tc.hostFiles {
				p := filepath.Join(root, f)
				os.MkdirAll(filepath.Dir(p), 0755)
				os.WriteFile(p, nil, 0644)
			}
			old := hostRoot
			hostRoot = root
			defer func() { hostRoot = old }()
			l, err := Plan(mnt)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(l.Overlays, tc.overlays) {
				t.Errorf("overlays %q, want %q", l.Overlays, tc.overlays)
			}
			wantLinks := append([]Link{
				{"/dev", "kfd", filepath.Join(mnt, KFDPath)},
				{"/dev", "dri/renderD128", filepath.Join(mnt, DRIPath, "renderD128")},
				{"/dev", "dri/renderD129", filepath.Join(mnt, DRIPath, "renderD129")},
			}, tc.nodeLinks...)
			if !reflect.DeepEqual(l.Links, wantLinks) {
				t.Errorf("links %v, want %v", l.Links, wantLinks)
			}
			// No sys/class/kfd in this fake: only what exists is bound.
			wantBinds := []Bind{
				{filepath.Join(mnt, KFDSysPath), "/" + KFDSysPath},
				{filepath.Join(mnt, ModulePath), "/" + ModulePath},
			}
			if !reflect.DeepEqual(l.Binds, wantBinds) {
				t.Errorf("binds %v, want %v", l.Binds, wantBinds)
			}
			if l.ProcModules != tc.procMods {
				t.Errorf("ProcModules %q, want %q", l.ProcModules, tc.procMods)
			}
		})
	}
}

func TestPlanRejectsNonMount(t *testing.T) {
	dir := t.TempDir()
	if _, err := Plan(dir); err == nil || !strings.Contains(err.Error(), "not a kfdemu mount") {
		t.Fatalf("Plan(empty dir) = %v, want a not-a-mount error", err)
	}
}

func TestCommandRejectsEmpty(t *testing.T) {
	if _, err := Command(t.TempDir(), nil); err == nil {
		t.Fatal("Command with no argv succeeded")
	}
}

func TestRunChildRefusesHostNamespace(t *testing.T) {
	// Without ChildEnv (and in the test's own namespace) RunChild must not touch any mount.
	os.Unsetenv(ChildEnv)
	if got := RunChild([]string{fakeMount(t), "--", "true"}); got != ExitSetup {
		t.Fatalf("RunChild outside a private namespace = %d, want %d", got, ExitSetup)
	}
	if got := RunChild([]string{"x", "true"}); got != ExitSetup {
		t.Fatalf("RunChild with bad arguments = %d, want %d", got, ExitSetup)
	}
}

func FuzzSubmounts(f *testing.F) {
	f.Add(sampleMountinfo, "/dev")
	f.Add("1 2 3 4 /a\\040b x\n", "/a")
	f.Add("", "/")
	f.Fuzz(func(t *testing.T, info, dir string) {
		for _, mp := range Submounts(info, dir) {
			if !strings.HasPrefix(mp, filepath.Clean(dir)+"/") {
				t.Fatalf("Submounts(%q) returned %q outside the directory", dir, mp)
			}
		}
	})
}

// TestPlanGraftsDRM: the amdgpu sysfs of a mount is grafted onto the host's /sys without hiding a
// host entry: a root bus the host lacks is bound on an overlay of /sys/devices; under a root bus
// the host has, the graft descends and binds only what the host lacks; class links are added next
// to the host's (a same-named host link is shadowed); parents' overlays come first.
func TestPlanGraftsDRM(t *testing.T) {
	mnt := fakeMount(t)
	for _, d := range []string{"sys/devices/pci0000:60/0000:60:03.1/0000:63:00.0", "sys/devices/pci0000:00/0000:00:03.1/0000:03:00.0",
		"sys/devices/pci0000:00/0000:00:01.0/own", "sys/class/hwmon"} {
		os.MkdirAll(filepath.Join(mnt, d), 0755)
	}
	os.MkdirAll(filepath.Join(mnt, "sys/class/drm"), 0755)
	for name, target := range map[string]string{"card0": "../../devices/pci0000:60/x/drm/card0", "card2": "../../devices/pci0000:00/y/drm/card2"} {
		os.Symlink(target, filepath.Join(mnt, "sys/class/drm", name))
	}
	os.Symlink("../../devices/pci0000:60/z/hwmon/hwmon0", filepath.Join(mnt, "sys/class/hwmon/hwmon0"))
	os.WriteFile(filepath.Join(mnt, "sys/class/drm/version"), []byte("drm 1.1.0 20060810\n"), 0444)

	root := t.TempDir()
	for _, d := range []string{"sys/devices/pci0000:00/0000:00:01.0", "sys/class/drm/card0", "sys/devices/virtual", "proc"} {
		os.MkdirAll(filepath.Join(root, d), 0755)
	}
	old := hostRoot
	hostRoot = root
	defer func() { hostRoot = old }()
	l, err := Plan(mnt)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/dev", "/sys/module", "/sys/devices", "/sys/class", "/sys/devices/virtual",
		"/sys/devices/pci0000:00", "/sys/class/drm", "/sys/devices/pci0000:00/0000:00:01.0"}
	if !reflect.DeepEqual(l.Overlays, want) {
		t.Errorf("overlays %q, want %q", l.Overlays, want)
	}
	has := func(b Bind) bool {
		for _, x := range l.Binds {
			if x == b {
				return true
			}
		}
		return false
	}
	for _, p := range []string{"sys/devices/pci0000:60", "sys/devices/pci0000:00/0000:00:03.1",
		"sys/devices/pci0000:00/0000:00:01.0/own", "sys/class/hwmon", "sys/class/drm/version"} {
		if !has(Bind{filepath.Join(mnt, p), "/" + p}) {
			t.Errorf("no bind of %s in %v", p, l.Binds)
		}
	}
	for _, b := range l.Binds {
		if b.Target == "/sys/devices/pci0000:00" || b.Target == "/sys/devices/pci0000:00/0000:00:01.0" || b.Target == "/sys/class/drm" {
			t.Errorf("host directory %s hidden by a bind", b.Target)
		}
	}
	links := map[string]string{}
	for _, ln := range l.Links {
		links[ln.Dir+"/"+ln.Name] = ln.Target
	}
	if links["/sys/class/drm/card0"] != "../../devices/pci0000:60/x/drm/card0" || links["/sys/class/drm/card2"] != "../../devices/pci0000:00/y/drm/card2" {
		t.Errorf("class/drm links %v", links)
	}
}

func TestOvlEscape(t *testing.T) {
	if got := ovlEscape(`/a/pci0000:00,b\c`); got != `/a/pci0000\:00\,b\\c` {
		t.Errorf("ovlEscape: %q", got)
	}
}
