package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kfdemu/kfdemu/internal/testenv"
	"github.com/kfdemu/kfdemu/runtime/kmt"
)

// needROCmSMI skips, saying why, unless Debian's rocm-smi (5.2.3, with librocm-smi64-1) is
// installed; scripts/install-deps.sh installs it, so CI runs these tests.
func needROCmSMI(t *testing.T) {
	t.Helper()
	testenv.NeedTools(t, "rocm-smi")
	needNamespaces(t)
}

// smi runs rocm-smi with args under `kfdemu exec` on mnt and returns its output and exit status.
func smi(t *testing.T, mnt string, args ...string) (string, int) {
	t.Helper()
	out, err := runExecCmd(t, mnt, append([]string{"rocm-smi"}, args...)...)
	var ee interface{ ExitCode() int }
	if errors.As(err, &ee) {
		return out, ee.ExitCode()
	}
	if err != nil {
		t.Fatalf("rocm-smi %v: %v\n%s", args, err, out)
	}
	return out, 0
}

// smiValue returns the value of "GPU[gpu]\t\t: label: value" in rocm-smi's output.
func smiValue(t *testing.T, out string, gpu int, label string) string {
	t.Helper()
	re := regexp.MustCompile(`(?m)^GPU\[` + strconv.Itoa(gpu) + `\]\s*: ` + regexp.QuoteMeta(label) + `:\s*(.*?)\s*$`)
	m := re.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no %q for GPU[%d] in:\n%s", label, gpu, out)
	}
	return m[1]
}

// notSupported lists the features rocm-smi reported as RSMI_STATUS_NOT_SUPPORTED for GPU[0].
func notSupported(out string) []string {
	set := map[string]bool{}
	re := regexp.MustCompile(`(?m)^ERROR: 2 GPU\[0\]:\s*(?:(.*?): )?RSMI_STATUS_NOT_SUPPORTED`)
	for _, m := range re.FindAllStringSubmatch(out, -1) {
		set[m[1]] = true
	}
	var l []string
	for k := range set {
		l = append(l, k)
	}
	sort.Strings(l)
	return l
}

// TestROCmSMI runs Debian's rocm-smi 5.2.3 against the emulator's amdgpu sysfs on one MI210 and on
// eight in two XGMI hives: the commands a user starts with succeed and report the profile's
// product, and VRAM/GTT use follow what a client allocates and frees.
func TestROCmSMI(t *testing.T) {
	needROCmSMI(t)
	for _, tc := range []struct {
		profile string
		gpus    int
	}{{"mi210", 1}, {"mi210x8", 8}} {
		t.Run(tc.profile, func(t *testing.T) {
			mnt := daemon(t, tc.profile)
			// The commands of the issue (one run for the --show flags: rocm-smi prints each
			// section and fails the run if any fails).
			for _, args := range [][]string{nil, {"--showmeminfo", "vram", "gtt", "--showuse", "--showtopo",
				"--showproductname", "--showmemuse", "--showpower", "--showtemp", "--showclocks", "--showbus",
				"--showperflevel", "--showfwinfo", "mec", "sdma"}} {
				out, code := smi(t, mnt, args...)
				// The concise report reads the fan silently: an MI210 is passively cooled and
				// amdgpu has no fan sensor for it, so rocm-smi exits 2 (RSMI_STATUS_NOT_SUPPORTED)
				// without printing an error, as on the real card. The --show run exits 0.
				ok := code == 0 || code == 2 && args == nil
				if !ok || strings.Contains(out, "ERROR") || strings.Contains(out, "Exception") {
					t.Errorf("rocm-smi %v: exit %d\n%s", args, code, out)
				}
				if strings.Count(out, "End of ROCm SMI Log") != 1 {
					t.Errorf("rocm-smi %v did not finish its report:\n%s", args, out)
				}
			}
			out, _ := smi(t, mnt, "--showproductname", "--showbus", "--showtopo")
			for g := range tc.gpus {
				if v := smiValue(t, out, g, "Card series"); v != "Aldebaran/MI200 [Instinct MI210]" {
					t.Errorf("GPU[%d] card series %q", g, v)
				}
				if v := smiValue(t, out, g, "Card model"); v != "0x0c34" {
					t.Errorf("GPU[%d] card model %q", g, v)
				}
			}
			if v := smiValue(t, out, 0, "PCI Bus"); v != "0000:63:00.0" { // location_id 25344 of the fixture
				t.Errorf("GPU[0] PCI bus %q", v)
			}
			if tc.gpus == 8 && (!strings.Contains(out, "XGMI") || !strings.Contains(out, "PCIE")) {
				t.Errorf("--showtopo of two hives shows no XGMI and PCIE links:\n%s", out)
			}
			// --showallinfo: everything the MI210's amdgpu provides is read without error; what
			// it reports as not supported is what the product lacks (docs/drm-sysfs.md).
			out, _ = smi(t, mnt, "--showallinfo")
			for _, bad := range []string{"Exception", "returned 8", "An unknown error"} {
				if strings.Contains(out, bad) {
					t.Errorf("--showallinfo: %q\n%s", bad, out)
				}
			}
			// What amdgpu does not provide for this product or kfdemu does not know of it
			// (docs/drm-sysfs.md): firmware other than MEC and SDMA, OverDrive, power profiles,
			// RAS, energy counters of other generations.
			for _, want := range []string{"MEC", "MEC2", "SDMA", "SDMA2"} {
				for _, ns := range notSupported(out) {
					if ns == want {
						t.Errorf("--showallinfo: %s firmware version not supported", want)
					}
				}
			}
			if v := smiValue(t, out, 0, "VBIOS version"); v != "113-D67301-059" {
				t.Errorf("VBIOS %q", v)
			}
			if v := smiValue(t, out, 0, "Performance Level"); v != "auto" {
				t.Errorf("performance level %q", v)
			}
			t.Logf("--showallinfo not supported on GPU[0]: %q", notSupported(out))

			usage := func() (vram, gtt uint64) {
				out, code := smi(t, mnt, "--showmeminfo", "vram", "gtt")
				if code != 0 {
					t.Fatalf("--showmeminfo: exit %d\n%s", code, out)
				}
				for _, k := range []struct {
					label string
					v     *uint64
				}{{"VRAM", &vram}, {"GTT", &gtt}} {
					v, err := strconv.ParseUint(smiValue(t, out, tc.gpus-1, k.label+" Total Used Memory (B)"), 10, 64)
					if err != nil {
						t.Fatal(err)
					}
					*k.v = v
				}
				return vram, gtt
			}
			vram0, gtt0 := usage()
			d, err := kmt.Open(kmt.Config{Root: mnt})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			g := d.GPUs()[tc.gpus-1] // rocm-smi's GPU[n] is card n: the n-th GPU node
			const vsz, gsz = 512 << 20, 64 << 20
			vm, err := d.AllocVRAM(g, vsz, 0)
			if err != nil {
				t.Fatal(err)
			}
			gm, err := d.AllocGTT(g, gsz, 0)
			if err != nil {
				t.Fatal(err)
			}
			if v, g := usage(); v < vram0+vsz || g < gtt0+gsz {
				t.Errorf("VRAM/GTT used %d/%d while %d/%d MiB are allocated (before: %d/%d)", v, g, vsz>>20, gsz>>20, vram0, gtt0)
			}
			if err := vm.Free(); err != nil {
				t.Fatal(err)
			}
			if err := gm.Free(); err != nil {
				t.Fatal(err)
			}
			if v, g := usage(); v > vram0 || g > gtt0 {
				t.Errorf("VRAM/GTT used %d/%d after the free, %d/%d before the allocation", v, g, vram0, gtt0)
			}
		})
	}
}

// TestROCmSMISetPerfLevel: rocm-smi --setperflevel writes power_dpm_force_performance_level and the
// clocks follow; a write amdgpu refuses gets its errno.
func TestROCmSMISetPerfLevel(t *testing.T) {
	needROCmSMI(t)
	mnt := daemon(t, "mi210")
	dev := filepath.Join(mnt, "sys/class/drm/card0/device")
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dev, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if out, code := smi(t, mnt, "--setperflevel", "high"); code != 0 || !strings.Contains(out, "Performance level set to high") {
		t.Fatalf("--setperflevel high: exit %d\n%s", code, out)
	}
	if got := read("power_dpm_force_performance_level"); got != "high\n" {
		t.Errorf("performance level %q after --setperflevel high", got)
	}
	if got := read("pp_dpm_sclk"); got != "0: 500Mhz \n1: 1700Mhz *\n" {
		t.Errorf("pp_dpm_sclk at high: %q", got)
	}
	if out, code := smi(t, mnt, "--showperflevel"); code != 0 || smiValue(t, out, 0, "Performance Level") != "high" {
		t.Errorf("--showperflevel after high: exit %d\n%s", code, out)
	}
	write := func(name, v string) error {
		f, err := os.OpenFile(filepath.Join(dev, name), os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = f.WriteString(v)
		return err
	}
	for _, tc := range []struct {
		file, value string
		want        error
	}{
		{"power_dpm_force_performance_level", "turbo\n", syscall.EINVAL},        // not a level
		{"power_dpm_force_performance_level", "profile_exit\n", syscall.EINVAL}, // not in a profile level
		{"pp_dpm_sclk", "1\n", syscall.EINVAL},                                  // forcing needs manual
		{"power_dpm_force_performance_level", "manual\n", nil},
		{"pp_dpm_mclk", "7\n", syscall.EINVAL}, // no level 7
		{"pp_dpm_mclk", "0\n", nil},
		{"vendor", "0x1234\n", syscall.EACCES}, // read-only attribute
	} {
		if err := write(tc.file, tc.value); !errors.Is(err, tc.want) && !(err == nil && tc.want == nil) {
			t.Errorf("write %q to %s: %v, want %v", tc.value, tc.file, err, tc.want)
		}
	}
	if got := read("pp_dpm_mclk"); got != "0: 400Mhz *\n1: 700Mhz \n2: 1200Mhz \n3: 1600Mhz \n" {
		t.Errorf("pp_dpm_mclk forced to level 0: %q", got)
	}
	if out, code := smi(t, mnt, "--resetclocks"); !strings.Contains(out, "Performance level reset to auto") {
		t.Errorf("--resetclocks: exit %d\n%s", code, out)
	}
	if got := read("power_dpm_force_performance_level"); got != "auto\n" {
		t.Errorf("performance level %q after --resetclocks", got)
	}
}

// TestDRMSysfsBusy runs a long kernel on GPU 0 and watches the amdgpu sysfs: gpu_busy_percent,
// the GFX clock, power and the junction temperature rise while it runs; afterwards the busy share
// falls back to 0.
func TestDRMSysfsBusy(t *testing.T) {
	testenv.NeedTools(t, "clang-14", "ld.lld-14")
	mnt := daemon(t, "mi210")
	dev := filepath.Join(mnt, "sys/class/drm/card0/device")
	num := func(p string) int {
		b, err := os.ReadFile(filepath.Join(dev, p))
		if err != nil {
			t.Fatal(err)
		}
		v, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			t.Fatalf("%s: %q", p, b)
		}
		return v
	}
	idlePower, idleTemp := num("hwmon/hwmon0/power1_average"), num("hwmon/hwmon0/temp2_input")
	if b := num("gpu_busy_percent"); b != 0 {
		t.Fatalf("gpu_busy_percent %d before any work", b)
	}
	done := make(chan error, 1)
	// Kernels for at least two of the busy meter's windows (1 s): one 16 Mi element vadd takes
	// about 0.5 s since the AVX2 lane kernels, too short for the meter to show more than half busy.
	go func() { _, err := interpRate(mnt, 1<<24, interpPlan{Busy: 2500 * time.Millisecond}); done <- err }()
	var maxBusy, maxClk, maxPower, maxTemp int
	for running := true; running; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			running = false
		case <-time.After(100 * time.Millisecond):
		}
		maxBusy = max(maxBusy, num("gpu_busy_percent"))
		maxClk = max(maxClk, num("hwmon/hwmon0/freq1_input")/1000000)
		maxPower = max(maxPower, num("hwmon/hwmon0/power1_average"))
		maxTemp = max(maxTemp, num("hwmon/hwmon0/temp2_input"))
	}
	t.Logf("while busy: gpu_busy_percent up to %d, sclk up to %d MHz, power up to %d µW (idle %d), junction up to %d m°C (idle %d)",
		maxBusy, maxClk, maxPower, idlePower, maxTemp, idleTemp)
	if maxBusy < 50 {
		t.Errorf("gpu_busy_percent peaked at %d while a kernel ran", maxBusy)
	}
	if maxClk <= 500 || maxPower <= idlePower || maxTemp <= idleTemp {
		t.Errorf("clock %d MHz, power %d µW (idle %d), temperature %d (idle %d): did not follow the load",
			maxClk, maxPower, idlePower, maxTemp, idleTemp)
	}
	time.Sleep(1200 * time.Millisecond) // one BusyWindow of idleness
	if b := num("gpu_busy_percent"); b != 0 {
		t.Errorf("gpu_busy_percent %d a window after the work ended", b)
	}
}

// TestTop: `kfdemu top` shows every GPU of the mount with the figures of its amdgpu sysfs, and
// follows an allocation.
func TestTop(t *testing.T) {
	mnt := daemon(t, "mi210x8")
	top := func() string {
		out, err := exec.Command(testenv.Kfdemu(t), "top", "--root", mnt, "-n", "1").CombinedOutput()
		if err != nil {
			t.Fatalf("kfdemu top: %v\n%s", err, out)
		}
		return string(out)
	}
	out := top()
	for _, want := range []string{"card0  0000:63:00.0", "card7  0000:a3:00.0", "0.00/63.98 GiB", "500Mhz", "1600Mhz", "42W", "38C", "auto"} {
		if !strings.Contains(out, want) {
			t.Errorf("top lacks %q:\n%s", want, out)
		}
	}
	d, err := kmt.Open(kmt.Config{Root: mnt})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	m, err := d.AllocVRAM(d.GPUs()[0], 1<<30, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Free()
	if out := top(); !strings.Contains(out, "card0  0000:63:00.0         1.00/63.98 GiB") {
		t.Errorf("top does not show the 1 GiB allocated on card0:\n%s", out)
	}
	if out, err := exec.Command(testenv.Kfdemu(t), "top", "--root", t.TempDir(), "-n", "1").CombinedOutput(); err == nil {
		t.Errorf("top on a directory without GPUs succeeded:\n%s", out)
	}
}

// TestDRMHotplug: a hot-plugged GPU gets its card, render node, hwmon and PCI device directory (on a
// new root bus connection), the existing GPU keeps its state, and unplugging removes them again.
func TestDRMHotplug(t *testing.T) {
	mnt := daemon(t, "mi210")
	bin := testenv.Kfdemu(t)
	card0 := filepath.Join(mnt, "sys/class/drm/card0/device")
	if err := os.WriteFile(filepath.Join(card0, "power_dpm_force_performance_level"), []byte("high\n"), 0); err != nil {
		t.Fatal(err)
	}
	// The sys connection's listings are cached by the kernel (fs/noopendir.go): sys/devices, listed
	// before the hot-plug, must list the new root bus after it and not after the unplug.
	devices := func() []string { return testenv.DirNames(t, filepath.Join(mnt, "sys/devices")) }
	if slices.Contains(devices(), "pci0000:80") {
		t.Fatalf("sys/devices before the hot-plug: %v", devices())
	}
	if out, err := exec.Command(bin, "gpu", "--mount", mnt, "add", "mi100").CombinedOutput(); err != nil {
		t.Fatalf("gpu add: %v %s", err, out)
	}
	if !slices.Contains(devices(), "pci0000:80") {
		t.Errorf("sys/devices after the hot-plug: %v", devices())
	}
	dev := filepath.Join(mnt, "sys/class/drm/card1/device")
	if b, err := os.ReadFile(filepath.Join(dev, "device")); err != nil || string(b) != "0x738c\n" {
		t.Errorf("card1/device/device after adding an MI100: %q %v", b, err)
	}
	// location_id 0x8000: bus 0x80, the root bus itself (no bridge in between).
	if target, err := filepath.EvalSymlinks(dev); err != nil || !strings.HasSuffix(target, "/sys/devices/pci0000:80/0000:80:00.0") {
		t.Errorf("card1's device directory %q: %v", target, err)
	}
	if _, err := exec.LookPath("rocm-smi"); err == nil {
		out, code := smi(t, mnt, "--showbus")
		if code != 0 || smiValue(t, out, 1, "PCI Bus") != "0000:80:00.0" {
			t.Errorf("rocm-smi --showbus after the hot-plug: exit %d\n%s", code, out)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(mnt, "sys/class/hwmon/hwmon1/name")); string(b) != "amdgpu\n" {
		t.Errorf("hwmon1/name %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(card0, "power_dpm_force_performance_level")); string(b) != "high\n" {
		t.Errorf("card0's performance level %q after the hot-plug, want high (kept)", b)
	}
	if out, err := exec.Command(bin, "gpu", "--mount", mnt, "remove", "2").CombinedOutput(); err != nil {
		t.Fatalf("gpu remove: %v %s", err, out)
	}
	if _, err := os.Lstat(filepath.Join(mnt, "sys/class/drm/card1")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("card1 after unplug: %v", err)
	}
	if _, err := os.Stat(filepath.Join(mnt, "sys/devices/pci0000:80")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("root bus pci0000:80 after unplug: %v", err)
	}
	if slices.Contains(devices(), "pci0000:80") {
		t.Errorf("sys/devices after the unplug: %v", devices())
	}
	if b, _ := os.ReadFile(filepath.Join(card0, "vendor")); string(b) != "0x1002\n" {
		t.Errorf("card0 after unplugging card1: vendor %q", b)
	}
}
