package amdgpu

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Usage is the memory the driver has allocated on one GPU (the TTM managers' usage amdgpu reports
// in mem_info_*_used).
type Usage struct{ VRAM, VisVRAM, GTT uint64 }

// Source is the driver behind the figures: what it allocated on a GPU and the busy meter of the
// GPU's engines. A nil Source reports an idle GPU with nothing allocated.
type Source interface {
	Usage(gpuID uint32) Usage
	Meter(gpuID uint32) *Meter
}

// Performance levels: the text of power_dpm_force_performance_level (amdgpu_pm.c,
// amdgpu_get_power_dpm_force_performance_level) and the words its store accepts.
const (
	LevelAuto            = "auto"
	LevelLow             = "low"
	LevelHigh            = "high"
	LevelManual          = "manual"
	LevelProfileStandard = "profile_standard"
	LevelProfileMinSclk  = "profile_min_sclk"
	LevelProfileMinMclk  = "profile_min_mclk"
	LevelProfilePeak     = "profile_peak"
	LevelPerfDeterminism = "perf_determinism"
)

// BusyWindow is the window gpu_busy_percent, mem_busy_percent, power1_average and the auto clocks
// average over (the SMU's activity average; see docs/drm-sysfs.md).
const BusyWindow = time.Second

// Clock domains with a pp_dpm_* file.
const (
	SCLK = iota
	MCLK
	FCLK
	SOCCLK
	numClocks
)

var clockFiles = [numClocks]string{"pp_dpm_sclk", "pp_dpm_mclk", "pp_dpm_fclk", "pp_dpm_socclk"}

// Device is the amdgpu view of one GPU node: its PCI device directory, DRM minors, hwmon, and the
// state a writer can change (performance level, forced clock levels, power cap).
type Device struct {
	GPUID                   uint32
	DeviceID                uint16 // PCI device id (the node's device_id)
	Domain                  uint32
	Bus, Dev, Fn            uint8
	Path                    string // below sys/devices: pciDDDD:RR/<bridges>/<BDF>
	Card, Render, Hwmon     int    // cardN, renderD<minor>, hwmonN
	NUMA                    int
	UniqueID, HiveID        uint64
	MECFW, SDMAFW           uint64 // firmware versions of the node (fw_version, sdma_fw_version)
	HivePos                 int    // physical node id within the hive
	P                       *Product
	VRAMTotal, VisVRAMTotal uint64
	GTTTotal                uint64

	src Source
	now func() time.Time

	mu     sync.Mutex
	level  string
	masks  [numClocks]uint32 // manual: forced levels (bit i = level i); 0 = all
	capW   uint32
	heat   float64 // junction temperature above ambient, °C
	at     time.Time
	busyAt time.Duration
	energy float64 // joules since the device appeared (gpu_metrics energy_accumulator)
	born   time.Time
}

// BDF is the PCI address "DDDD:BB:DD.F".
func (d *Device) BDF() string {
	return fmt.Sprintf("%04x:%02x:%02x.%x", d.Domain, d.Bus, d.Dev, d.Fn)
}

func (d *Device) meter() *Meter {
	if d.src == nil {
		return nil
	}
	return d.src.Meter(d.GPUID)
}

func (d *Device) share(w time.Duration) float64 {
	if m := d.meter(); m != nil {
		return m.Share(w)
	}
	return 0
}

func (d *Device) usage() Usage {
	if d.src == nil {
		return Usage{}
	}
	return d.src.Usage(d.GPUID)
}

// Level is the current performance level.
func (d *Device) Level() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.level
}

// SetLevel is the store of power_dpm_force_performance_level (amdgpu_set_power_dpm_force_
// performance_level: the first word is compared with strncmp, anything else is -EINVAL;
// amdgpu_dpm_force_performance_level: profile_exit outside a profile level is -EINVAL, and
// leaving a profile level returns to auto as smu_enable_umd_pstate does).
func (d *Device) SetLevel(buf []byte) syscall.Errno {
	s := string(buf)
	var lvl string
	for _, w := range []string{LevelLow, LevelHigh, LevelAuto, LevelManual, "profile_exit", LevelProfileStandard,
		LevelProfileMinSclk, LevelProfileMinMclk, LevelProfilePeak, LevelPerfDeterminism} {
		if strings.HasPrefix(s, w) {
			lvl = w
			break
		}
	}
	if lvl == "" {
		return syscall.EINVAL
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.advance()
	if lvl == "profile_exit" {
		if !strings.HasPrefix(d.level, "profile_") {
			return syscall.EINVAL
		}
		lvl = LevelAuto
	}
	d.level = lvl
	if lvl != LevelManual {
		d.masks = [numClocks]uint32{}
	}
	return 0
}

// SetClockMask is the store of pp_dpm_sclk/mclk/fclk/socclk (amdgpu_read_mask: space-separated
// level numbers, each kstrtol base 0 and below 32; smu_force_ppclk_levels: -EINVAL unless the
// level is manual; aldebaran_force_clk_levels: a level beyond the table is -EINVAL).
func (d *Device) SetClockMask(clk int, buf []byte) syscall.Errno {
	var mask uint32
	for _, f := range strings.Fields(string(buf)) {
		v, err := strconv.ParseInt(f, 0, 64)
		if err != nil || v < 0 || v >= 32 {
			return syscall.EINVAL
		}
		mask |= 1 << v
	}
	if mask == 0 {
		return syscall.EINVAL
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.level != LevelManual {
		return syscall.EINVAL
	}
	if n := len(d.table(clk)); mask>>n != 0 {
		return syscall.EINVAL
	}
	d.advance()
	d.masks[clk] = mask
	return 0
}

// SetPowerCap is the store of hwmon power1_cap (amdgpu_hwmon_set_power_cap: microwatts, kstrtou32,
// above power1_cap_max -EINVAL; the SMU takes watts).
func (d *Device) SetPowerCap(buf []byte) syscall.Errno {
	v, err := strconv.ParseUint(strings.TrimSpace(string(buf)), 10, 32)
	if err != nil {
		return syscall.EINVAL
	}
	if v > uint64(d.P.PowerCapW)*1e6 {
		return syscall.EINVAL
	}
	d.mu.Lock()
	d.capW = uint32(v / 1e6)
	d.mu.Unlock()
	return 0
}

// table is the level table of a clock domain as pp_dpm_* lists it (sclk: its two ends).
func (d *Device) table(clk int) []uint32 {
	switch clk {
	case SCLK:
		return d.P.SCLK[:]
	case MCLK:
		return d.P.MCLK
	case FCLK:
		return d.P.FCLK
	}
	return d.P.SOCCLK
}

func (d *Device) idleLevel(clk int) int {
	switch clk {
	case MCLK:
		return d.P.IdleMCLK
	case FCLK:
		return d.P.IdleFCLK
	case SOCCLK:
		return d.P.IdleSOCCLK
	}
	return 0
}

// Clock is the current frequency (MHz) of a domain: the SMU's choice for the performance level and
// the engines' activity. In auto the GFX clock scales between its ends with the busy share of the
// last BusyWindow and the other domains leave their idle level for the top one while work runs;
// low and profile_min_* hold the lowest level, high, profile_peak and perf_determinism the highest;
// manual runs at the highest forced level while busy and the lowest while idle.
func (d *Device) Clock(clk int) uint32 {
	d.mu.Lock()
	level, mask := d.level, d.masks[clk]
	d.mu.Unlock()
	t := d.table(clk)
	top := len(t) - 1
	share := d.share(BusyWindow)
	busy := share > 0
	switch {
	case level == LevelLow || level == LevelProfileMinSclk && clk == SCLK || level == LevelProfileMinMclk && clk == MCLK:
		return t[0]
	case level == LevelHigh || level == LevelProfilePeak || level == LevelPerfDeterminism:
		return t[top]
	case level == LevelManual && mask != 0:
		lo, hi := 0, top
		for lo < top && mask&(1<<lo) == 0 {
			lo++
		}
		for hi > 0 && mask&(1<<hi) == 0 {
			hi--
		}
		if busy {
			return t[hi]
		}
		return t[lo]
	case clk == SCLK:
		return t[0] + uint32(math.Round(share*float64(t[top]-t[0])))
	case busy:
		return t[top]
	}
	return t[min(d.idleLevel(clk), top)]
}

// power is the package power (W) for a busy share, within the cap.
func (d *Device) power(share float64) float64 {
	p := d.P.IdlePowerW + share*(d.P.BusyPowerW-d.P.IdlePowerW)
	if d.capW != 0 {
		p = min(p, float64(d.capW))
	}
	return p
}

// advance moves the thermal model to now (under mu): a first-order model, the junction rise above
// ambient relaxing towards power x JunctionCPerW with time constant TauSeconds, the power being
// that of the busy share since the last step. Called on every read; nothing runs in between.
func (d *Device) advance() {
	now := d.now()
	var total time.Duration
	if m := d.meter(); m != nil {
		total = m.Total()
	}
	dt := now.Sub(d.at).Seconds()
	if dt <= 0 {
		return
	}
	share := min(max((total-d.busyAt).Seconds()/dt, 0), 1)
	p := d.power(share)
	d.energy += p * dt
	ss := p * d.P.JunctionCPerW
	d.heat = ss + (d.heat-ss)*math.Exp(-dt/d.P.TauSeconds)
	d.at, d.busyAt = now, total
}

// Temps returns the edge, junction and memory temperatures in millidegrees Celsius.
func (d *Device) Temps() (edge, junction, mem int) {
	d.mu.Lock()
	d.advance()
	h := d.heat
	d.mu.Unlock()
	a := d.P.AmbientC
	milli := func(c float64) int { return int(math.Round(c)) * 1000 } // the SMU reports whole degrees
	return milli(a + d.P.EdgeFrac*h), milli(a + h), milli(a + d.P.MemFrac*h)
}

// Power is the average package power of the last BusyWindow in microwatts (power1_average).
func (d *Device) Power() uint64 {
	s := d.share(BusyWindow)
	d.mu.Lock()
	defer d.mu.Unlock()
	return uint64(math.Round(d.power(s))) * 1e6 // the SMU reports whole watts
}

// BusyPercent is gpu_busy_percent: the share of the last BusyWindow the engines ran work.
func (d *Device) BusyPercent() int { return int(math.Round(100 * d.share(BusyWindow))) }

// Memory returns the driver's usage of this GPU.
func (d *Device) Memory() Usage { return d.usage() }

// PowerCap is power1_cap in microwatts.
func (d *Device) PowerCap() uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.capW != 0 {
		return uint64(d.capW) * 1e6
	}
	return uint64(d.P.PowerCapW) * 1e6
}

// DPM renders pp_dpm_* as aldebaran_emit_clk_levels does: "%d: %uMhz %s\n" per level with "*" on
// the current one; a single-level table marks its only level; the fine-grained GFX clock shows its
// two ends, or three lines with the current clock as level 1 when it lies strictly between them.
func (d *Device) DPM(clk int) []byte {
	t := d.table(clk)
	cur := d.Clock(clk)
	var b strings.Builder
	if clk == SCLK && cur > t[0] && cur < t[1] {
		for i, f := range []uint32{t[0], cur, t[1]} {
			fmt.Fprintf(&b, "%d: %dMhz %s\n", i, f, map[bool]string{true: "*"}[i == 1])
		}
		return []byte(b.String())
	}
	for i, f := range t {
		mark := ""
		if len(t) == 1 || sameLevel(f, cur) {
			mark = "*"
		}
		fmt.Fprintf(&b, "%d: %dMhz %s\n", i, f, mark)
	}
	return []byte(b.String())
}

// sameLevel is aldebaran_freqs_in_same_level (EPSILON 1 MHz).
func sameLevel(a, b uint32) bool { return a <= b+1 && b <= a+1 }

// VddGfx is the GFX rail voltage in mV (in0_input): the model moves it linearly between
// Product.VddGfxMV ends with the GFX clock between its ends (voltage follows frequency on the DPM
// curve).
func (d *Device) VddGfx() int {
	f, t := d.Clock(SCLK), d.P.SCLK
	x := 0.0
	if t[1] > t[0] {
		x = float64(f-t[0]) / float64(t[1]-t[0])
	}
	v := d.P.VddGfxMV
	return int(math.Round(float64(v[0]) + x*float64(v[1]-v[0])))
}

// Adopt takes over the state of old, the same PCI device before a re-layout (hot-plug of another
// GPU): performance level, forced levels, power cap and the thermal and energy state.
func (d *Device) Adopt(old *Device) {
	old.mu.Lock()
	level, masks, capW, heat, at, busyAt, energy, born := old.level, old.masks, old.capW, old.heat, old.at, old.busyAt, old.energy, old.born
	old.mu.Unlock()
	d.mu.Lock()
	d.level, d.masks, d.capW, d.heat, d.at, d.busyAt, d.energy, d.born = level, masks, capW, heat, at, busyAt, energy, born
	d.mu.Unlock()
}
