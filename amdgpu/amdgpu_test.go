package amdgpu

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kfdemu/kfdemu/topology"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// clock is a settable time source.
type clock struct{ t time.Time }

func (c *clock) now() time.Time           { return c.t }
func (c *clock) add(d time.Duration)      { c.t = c.t.Add(d) }
func newClock() *clock                    { return &clock{time.Unix(1_700_000_000, 0)} }
func (c *clock) meter() *Meter            { return NewMeter(c.now) }
func (s *fakeSource) Usage(uint32) Usage  { return s.u }
func (s *fakeSource) Meter(uint32) *Meter { return s.m }

type fakeSource struct {
	u Usage
	m *Meter
}

func TestMeter(t *testing.T) {
	c := newClock()
	m := c.meter()
	end := m.Begin()
	c.add(300 * time.Millisecond)
	end2 := m.Begin() // a second engine overlapping: counted once
	c.add(100 * time.Millisecond)
	end()
	c.add(100 * time.Millisecond)
	end2()
	end2() // End is idempotent
	c.add(500 * time.Millisecond)
	if got := m.Total(); got != 500*time.Millisecond {
		t.Errorf("Total %v, want 500ms", got)
	}
	if got := m.Share(time.Second); got < 0.49 || got > 0.51 {
		t.Errorf("Share(1s) %v, want 0.5", got)
	}
	if got := m.Share(500 * time.Millisecond); got != 0 {
		t.Errorf("Share of the idle last 500ms %v, want 0", got)
	}
	end = m.Begin()
	c.add(250 * time.Millisecond)
	if got := m.Share(500 * time.Millisecond); got < 0.49 || got > 0.51 {
		t.Errorf("Share with an open busy period %v, want 0.5", got)
	}
	end()
	c.add(10 * time.Second)
	if got := m.Share(time.Second); got != 0 {
		t.Errorf("Share after 10 s idle %v (stale slots counted)", got)
	}
}

func mi210(t *testing.T, profile string) (*Layout, *clock, *fakeSource) {
	t.Helper()
	sys, err := topology.Profile(profile)
	if err != nil {
		t.Fatal(err)
	}
	c := newClock()
	src := &fakeSource{m: c.meter()}
	l := Build(sys, Config{GTTTotal: func(*topology.Node) uint64 { return 135089991680 }, Source: src, Now: c.now})
	return l, c, src
}

func find(tr *topology.Tree, p string) *topology.Tree {
	for _, part := range strings.Split(p, "/") {
		if tr = tr.Child(part); tr == nil {
			return nil
		}
	}
	return tr
}

// flatten renders a tree as "path: content" lines (links as "path -> target") in path order.
func flatten(prefix string, tr *topology.Tree, out map[string]string) {
	p := prefix + "/" + tr.Name
	switch tr.Kind {
	case topology.Symlink:
		out[p] = "-> " + tr.Target
	case topology.File:
		if tr.Name == "gpu_metrics" {
			out[p] = fmt.Sprintf("<%d bytes>", len(tr.Content()))
		} else {
			out[p] = fmt.Sprintf("%q", tr.Content())
		}
	default:
		for _, c := range tr.Children {
			flatten(p, c, out)
		}
	}
}

func golden(t *testing.T, name string, m map[string]string) {
	t.Helper()
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b bytes.Buffer
	for _, k := range keys {
		fmt.Fprintf(&b, "%s %s\n", k, m[k])
	}
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, b.Bytes(), 0644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Errorf("%s differs from the golden file (go test -update to rewrite after checking):\n%s", name, b.String())
	}
}

// TestGolden compares the whole idle sysfs of the mi210 and mi210x8 profiles with golden files.
func TestGolden(t *testing.T) {
	for _, p := range []string{"mi210", "mi210x8"} {
		l, _, _ := mi210(t, p)
		m := map[string]string{}
		for _, r := range l.Roots {
			flatten("sys/devices", r, m)
		}
		flatten("sys/class", l.DRM, m)
		flatten("sys/class", l.Hwmon, m)
		golden(t, p+".golden", m)
	}
}

// formats are amdgpu's printf formats of each attribute (amdgpu_pm.c, amdgpu_device.c,
// pci-sysfs.c, hwmon), as regular expressions the whole file must match.
var formats = map[string]string{
	"vendor": `0x[0-9a-f]{4}\n`, "device": `0x[0-9a-f]{4}\n`, "subsystem_vendor": `0x[0-9a-f]{4}\n`,
	"subsystem_device": `0x[0-9a-f]{4}\n`, "revision": `0x[0-9a-f]{2}\n`, "class": `0x[0-9a-f]{6}\n`,
	"numa_node": `-?\d+\n`, "unique_id": `[0-9a-f]{16}\n`, "pcie_replay_count": `\d+\n`,
	"current_link_speed": `(2\.5|5\.0|8\.0|16\.0|32\.0|64\.0) GT/s PCIe\n`, "max_link_speed": `(2\.5|5\.0|8\.0|16\.0|32\.0|64\.0) GT/s PCIe\n`,
	"current_link_width": `\d+\n`, "max_link_width": `\d+\n`,
	"mem_info_vram_total": `\d+\n`, "mem_info_vram_used": `\d+\n`, "mem_info_vis_vram_total": `\d+\n`,
	"mem_info_vis_vram_used": `\d+\n`, "mem_info_gtt_total": `\d+\n`, "mem_info_gtt_used": `\d+\n`,
	"gpu_busy_percent": `\d+\n`, "mem_busy_percent": `\d+\n`,
	"power_dpm_force_performance_level": `(auto|low|high|manual|profile_standard|profile_min_sclk|profile_min_mclk|profile_peak|perf_determinism)\n`,
	"pp_dpm_sclk":                       `(\d+: \d+Mhz (\*)?\n)+`, "pp_dpm_mclk": `(\d+: \d+Mhz (\*)?\n)+`,
	"pp_dpm_fclk": `(\d+: \d+Mhz (\*)?\n)+`, "pp_dpm_socclk": `(\d+: \d+Mhz (\*)?\n)+`,
	"vbios_version": `[0-9A-Z-]*\n`, "xgmi_device_id": `\d+\n`, "xgmi_error": `\d+\n`,
	"name": `amdgpu\n`, "temp1_input": `\d+\n`, "temp2_input": `\d+\n`, "temp3_input": `\d+\n`,
	"temp1_label": `edge\n`, "temp2_label": `junction\n`, "temp3_label": `mem\n`,
	"power1_average": `\d+\n`, "power1_cap": `\d+\n`, "power1_cap_max": `\d+\n`, "power1_cap_min": `\d+\n`,
	"power1_cap_default": `\d+\n`, "in0_input": `\d+\n`, "in0_label": `vddgfx\n`,
	"freq1_input": `\d+\n`, "freq1_label": `sclk\n`, "freq2_input": `\d+\n`, "freq2_label": `mclk\n`,
	"xgmi_hive_id": `\d+\n`, "mec_fw_version": `0x[0-9a-f]{8}\n`, "mec2_fw_version": `0x[0-9a-f]{8}\n`,
	"sdma_fw_version": `0x[0-9a-f]{8}\n`, "sdma2_fw_version": `0x[0-9a-f]{8}\n`,
	"dev": `226:\d+\n`, "uevent": `([A-Z_]+=\S+\n)+`, "version": `drm 1\.1\.0 20060810\n`,
}

// TestFormats checks every file against amdgpu's format, idle and busy, at every performance level.
func TestFormats(t *testing.T) {
	l, c, src := mi210(t, "mi210x8")
	src.u = Usage{VRAM: 1 << 30, VisVRAM: 1 << 30, GTT: 1 << 20}
	check := func(when string) {
		var walk func(tr *topology.Tree)
		walk = func(tr *topology.Tree) {
			switch tr.Kind {
			case topology.Dir:
				for _, ch := range tr.Children {
					walk(ch)
				}
			case topology.File:
				if tr.Name == "gpu_metrics" {
					return
				}
				f, ok := formats[tr.Name]
				if !ok {
					t.Errorf("%s: no format known", tr.Name)
					return
				}
				if got := tr.Content(); !regexp.MustCompile(`\A` + f + `\z`).Match(got) {
					t.Errorf("%s (%s): %q does not match amdgpu's format %q", tr.Name, when, got, f)
				}
			}
		}
		for _, r := range l.Roots {
			walk(r)
		}
	}
	check("idle")
	end := src.m.Begin()
	c.add(300 * time.Millisecond)
	check("busy")
	for _, lvl := range []string{"low", "high", "manual", "profile_peak", "profile_min_sclk", "perf_determinism"} {
		if e := l.Devices[0].SetLevel([]byte(lvl + "\n")); e != 0 {
			t.Errorf("SetLevel(%s): %v", lvl, e)
		}
		check(lvl)
	}
	end()
}

func TestDPM(t *testing.T) {
	l, c, src := mi210(t, "mi210")
	d := l.Devices[0]
	for _, tc := range []struct {
		name string
		clk  int
		prep func()
		want string
	}{
		{"idle sclk", SCLK, func() {}, "0: 500Mhz *\n1: 1700Mhz \n"},
		{"idle mclk", MCLK, func() {}, "0: 400Mhz \n1: 700Mhz \n2: 1200Mhz \n3: 1600Mhz *\n"},
		{"idle socclk", SOCCLK, func() {}, "0: 666Mhz \n1: 857Mhz \n2: 1000Mhz \n3: 1090Mhz *\n4: 1333Mhz \n"},
		{"fclk (one level)", FCLK, func() {}, "0: 400Mhz *\n"},
		// A quarter of the window busy: 500 + 0.25*1200 = 800 MHz, shown as the middle line.
		{"busy sclk", SCLK, func() { e := src.m.Begin(); c.add(250 * time.Millisecond); e(); c.add(750 * time.Millisecond) },
			"0: 500Mhz \n1: 800Mhz *\n2: 1700Mhz \n"},
		{"high", SCLK, func() { d.SetLevel([]byte("high")) }, "0: 500Mhz \n1: 1700Mhz *\n"},
		{"low mclk", MCLK, func() { d.SetLevel([]byte("low")) }, "0: 400Mhz *\n1: 700Mhz \n2: 1200Mhz \n3: 1600Mhz \n"},
	} {
		tc.prep()
		if got := string(d.DPM(tc.clk)); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestStores checks the writes amdgpu accepts and the errno of those it refuses.
func TestStores(t *testing.T) {
	l, _, _ := mi210(t, "mi210")
	d := l.Devices[0]
	for _, tc := range []struct {
		op, in string
		want   syscall.Errno
		level  string
	}{
		{"level", "turbo", syscall.EINVAL, "auto"},
		{"level", "", syscall.EINVAL, "auto"},
		{"level", "profile_exit", syscall.EINVAL, "auto"}, // not in a profile level
		{"sclk", "1", syscall.EINVAL, "auto"},             // forcing levels needs manual
		{"level", "high\n", 0, "high"},
		{"level", "profile_peak", 0, "profile_peak"},
		{"level", "profile_exit\n", 0, "auto"},
		{"level", "manual", 0, "manual"},
		{"sclk", "2", syscall.EINVAL, "manual"}, // sclk has levels 0 and 1
		{"sclk", "x", syscall.EINVAL, "manual"},
		{"sclk", "", syscall.EINVAL, "manual"},
		{"mclk", "0 3", 0, "manual"},
		{"mclk", "0x1", 0, "manual"}, // kstrtol base 0
		{"cap", "400000000", syscall.EINVAL, "manual"},
		{"cap", "-1", syscall.EINVAL, "manual"},
		{"cap", "250000000", 0, "manual"},
	} {
		var got syscall.Errno
		switch tc.op {
		case "level":
			got = d.SetLevel([]byte(tc.in))
		case "sclk":
			got = d.SetClockMask(SCLK, []byte(tc.in))
		case "mclk":
			got = d.SetClockMask(MCLK, []byte(tc.in))
		case "cap":
			got = d.SetPowerCap([]byte(tc.in))
		}
		if got != tc.want || d.Level() != tc.level {
			t.Errorf("%s %q: errno %v level %s, want %v %s", tc.op, tc.in, got, d.Level(), tc.want, tc.level)
		}
	}
	if d.PowerCap() != 250000000 {
		t.Errorf("power cap %d after writing 250 W", d.PowerCap())
	}
	// The last mask written is level 1 only ("0x1": kstrtol base 0).
	if got := string(d.DPM(MCLK)); got != "0: 400Mhz \n1: 700Mhz *\n2: 1200Mhz \n3: 1600Mhz \n" {
		t.Errorf("mclk forced to level 1 while idle: %q", got)
	}
}

// TestThermal: under load power and temperatures rise towards the steady state, then decay.
func TestThermal(t *testing.T) {
	l, c, src := mi210(t, "mi210")
	d := l.Devices[0]
	e0, j0, m0 := d.Temps()
	if j0 != 38000 || e0 != 37000 || m0 != 38000 {
		t.Errorf("idle temperatures %d %d %d, want 37000 38000 38000 (30 + 42 W x 0.2 x fractions)", e0, j0, m0)
	}
	if p := d.Power(); p != 42000000 {
		t.Errorf("idle power %d µW", p)
	}
	end := src.m.Begin()
	var last int
	for i := range 10 {
		c.add(10 * time.Second)
		_, j, _ := d.Temps()
		if j <= last && i > 0 && j < 85000 {
			t.Errorf("junction not rising under load: %d after %d", j, last)
		}
		last = j
	}
	if p := d.Power(); p != 280000000 {
		t.Errorf("busy power %d µW", p)
	}
	// Steady state: 30 + 280 W x 0.2 = 86 °C; after 100 s (5 time constants) within a degree.
	if last < 85000 || last > 86000 {
		t.Errorf("junction after 100 s busy: %d", last)
	}
	end()
	c.add(100 * time.Second)
	if _, j, _ := d.Temps(); j > 39000 {
		t.Errorf("junction 100 s after the load: %d", j)
	}
}

// TestMetrics checks gpu_metrics_v1_3's header and the fields rocm_smi_lib reads.
func TestMetrics(t *testing.T) {
	l, c, src := mi210(t, "mi210")
	d := l.Devices[0]
	e := src.m.Begin()
	c.add(500 * time.Millisecond)
	e()
	c.add(500 * time.Millisecond)
	b := d.Metrics()
	edge, _, _ := d.Temps()
	le := binary.LittleEndian
	if len(b) != MetricsSize || le.Uint16(b) != MetricsSize || b[2] != 1 || b[3] != 3 {
		t.Fatalf("header: size %d, % x", len(b), b[:4])
	}
	for _, f := range []struct {
		name string
		off  int
		want uint64
		size int
	}{
		{"temperature_edge", 4, uint64(edge / 1000), 2}, {"average_gfx_activity", mAvgGfxActivity, 50, 2},
		{"average_socket_power", mAvgSocketPower, 161, 2}, // 42 + 0.5 x 238
		{"current_gfxclk", mCurGfxclk, 1100, 2}, {"current_uclk", mCurGfxclk + 4, 1600, 2},
		{"pcie_link_width", mPcieWidth, 16, 2}, {"pcie_link_speed", mPcieSpeed, 160, 2},
		{"gfx_activity_acc", mGfxActivityAcc, 50000, 4}, {"voltage_soc", mVoltageSoc, 0xffff, 2},
	} {
		var got uint64
		if f.size == 2 {
			got = uint64(le.Uint16(b[f.off:]))
		} else {
			got = uint64(le.Uint32(b[f.off:]))
		}
		if got != f.want {
			t.Errorf("%s = %d, want %d", f.name, got, f.want)
		}
	}
}

// TestLayout checks the PCI placement, the links rocm_smi_lib follows and the hive links.
func TestLayout(t *testing.T) {
	l, _, _ := mi210(t, "mi210x8")
	if len(l.Devices) != 8 || len(l.Roots) != 8 {
		t.Fatalf("%d devices under %d root buses", len(l.Devices), len(l.Roots))
	}
	d := l.Devices[0]
	if d.Path != "pci0000:60/0000:60:03.1/0000:61:00.0/0000:62:00.0/0000:63:00.0" {
		t.Errorf("GPU 0 at %s", d.Path)
	}
	if c := find(l.DRM, "card0"); c == nil || c.Target != "../../devices/"+d.Path+"/drm/card0" {
		t.Errorf("class/drm/card0: %+v", c)
	}
	root := l.Roots[3] // pci0000:60
	dev := find(root, "0000:60:03.1/0000:61:00.0/0000:62:00.0/0000:63:00.0")
	if dev == nil {
		t.Fatal("device directory missing")
	}
	if ln := find(dev, "drm/card0/device"); ln == nil || ln.Target != "../../../0000:63:00.0" {
		t.Errorf("drm/card0/device: %+v", ln)
	}
	if ln := find(dev, "xgmi_hive_info/node1"); ln == nil || ln.Target != "../../0000:63:00.0" {
		t.Errorf("xgmi_hive_info/node1: %+v", ln)
	}
	if ln := find(dev, "xgmi_hive_info/node2"); ln == nil || !strings.HasSuffix(ln.Target, "pci0000:40/0000:40:03.1/0000:41:00.0/0000:42:00.0/0000:43:00.0") {
		t.Errorf("xgmi_hive_info/node2: %+v", ln)
	}
	other := find(l.Roots[2], "0000:40:03.1/0000:41:00.0/0000:42:00.0/0000:43:00.0/xgmi_hive_info")
	if other == nil || other.Kind != topology.Symlink || !strings.HasSuffix(other.Target, "0000:63:00.0/xgmi_hive_info") {
		t.Errorf("second member's xgmi_hive_info: %+v", other)
	}
	if got := string(find(dev, "xgmi_hive_info/xgmi_hive_id").Content()); got != "12609507387757274807\n" {
		t.Errorf("xgmi_hive_id %q (the fixture's hive_id)", got)
	}
}
