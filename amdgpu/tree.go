package amdgpu

import (
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kfdemu/kfdemu/topology"
)

// Layout is the amdgpu sysfs of a system, ready to serve below MNT/sys.
type Layout struct {
	Devices []*Device
	// Roots are the directories below sys/devices, one per PCI root bus (pciDDDD:RR), each holding
	// the bridge chain down to its GPUs' device directories.
	Roots []*topology.Tree
	// DRM is sys/class/drm (cardN and renderD<minor> links, version); Hwmon is sys/class/hwmon.
	DRM, Hwmon *topology.Tree
}

// Config parameterizes Build.
type Config struct {
	// GTTTotal is the GTT manager's size of a GPU (mem_info_gtt_total).
	GTTTotal func(n *topology.Node) uint64
	Source   Source
	Now      func() time.Time // nil: time.Now
}

// Build lays out the amdgpu devices of sys's GPU nodes. Partitions of one PCI device (nodes with
// the same domain and location_id) get one device, that of the first partition's node.
func Build(sys *topology.System, cfg Config) *Layout {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	l := &Layout{}
	seen := map[[2]uint64]bool{}
	hives := map[uint64]int{}
	for _, n := range sys.GPUs() {
		key := [2]uint64{n.Prop(topology.Domain), n.Prop(topology.LocationID)}
		if seen[key] {
			continue
		}
		seen[key] = true
		loc := n.Prop(topology.LocationID)
		d := &Device{
			GPUID: n.GPUID, DeviceID: uint16(n.Prop(topology.DeviceID)), Domain: uint32(n.Prop(topology.Domain)), Bus: uint8(loc >> 8), Dev: uint8(loc >> 3 & 0x1f), Fn: uint8(loc & 7),
			Render: int(n.RenderMinor()), Hwmon: len(l.Devices), NUMA: n.CPU,
			UniqueID: n.Prop(topology.UniqueID), MECFW: n.Prop(topology.FWVersion), SDMAFW: n.Prop(topology.SDMAFWVersion), HiveID: n.Prop(topology.HiveID), P: ProductFor(n),
			VRAMTotal: n.VRAMSize(), VisVRAMTotal: n.VRAMSize(), src: cfg.Source, now: cfg.Now, level: LevelAuto,
		}
		d.Card = max(d.Render-128, 0)
		if cfg.GTTTotal != nil {
			d.GTTTotal = cfg.GTTTotal(n)
		}
		if d.HiveID != 0 {
			d.HivePos = hives[d.HiveID]
			hives[d.HiveID]++
		}
		d.Path = pciPath(d)
		d.at = cfg.Now()
		d.born = d.at
		d.heat = d.P.IdlePowerW * d.P.JunctionCPerW // idle steady state
		l.Devices = append(l.Devices, d)
	}
	roots := map[string]*topology.Tree{}
	for _, d := range l.Devices {
		parts := strings.Split(d.Path, "/")
		r := roots[parts[0]]
		if r == nil {
			r = dir(parts[0])
			roots[parts[0]] = r
			l.Roots = append(l.Roots, r)
		}
		at := r
		for _, p := range parts[1 : len(parts)-1] {
			c := at.Child(p)
			if c == nil {
				c = dir(p)
				at.Children = append(at.Children, c)
			}
			at = c
		}
		at.Children = append(at.Children, l.deviceDir(d))
	}
	sort.Slice(l.Roots, func(i, j int) bool { return l.Roots[i].Name < l.Roots[j].Name })
	l.DRM = dir("drm")
	l.Hwmon = dir("hwmon")
	for _, d := range l.Devices {
		card, rd := "card"+strconv.Itoa(d.Card), "renderD"+strconv.Itoa(d.Render)
		l.DRM.Children = append(l.DRM.Children,
			link(card, "../../devices/"+d.Path+"/drm/"+card), link(rd, "../../devices/"+d.Path+"/drm/"+rd))
		hw := "hwmon" + strconv.Itoa(d.Hwmon)
		l.Hwmon.Children = append(l.Hwmon.Children, link(hw, "../../devices/"+d.Path+"/hwmon/"+hw))
	}
	// drm_sysfs.c: the class attribute "version" ("%s %d.%d.%d %s\n" of CORE_NAME, CORE_MAJOR,
	// CORE_MINOR, CORE_PATCHLEVEL, CORE_DATE).
	l.DRM.Children = append(l.DRM.Children, static("version", "drm 1.1.0 20060810\n"))
	return l
}

// pciPath places a GPU below a root bus the way an EPYC host with Instinct cards does: root bus
// RR = bus & 0xe0, a root port RR:03.1 (GPP bridge), the card's PCIe switch (upstream and
// downstream ports on the two buses below the GPU's) and the GPU. Shorter chains when the GPU's
// bus leaves no room for them.
func pciPath(d *Device) string {
	root := d.Bus & 0xe0
	bdf := func(bus, dev, fn uint8) string { return fmt.Sprintf("%04x:%02x:%02x.%x", d.Domain, bus, dev, fn) }
	p := []string{fmt.Sprintf("pci%04x:%02x", d.Domain, root)}
	if d.Bus > root {
		p = append(p, bdf(root, 3, 1))
		if d.Bus >= root+3 {
			p = append(p, bdf(d.Bus-2, 0, 0), bdf(d.Bus-1, 0, 0))
		}
	}
	return strings.Join(append(p, d.BDF()), "/")
}

func dir(name string, children ...*topology.Tree) *topology.Tree {
	return &topology.Tree{Name: name, Kind: topology.Dir, Mode: 0755, Children: children}
}

func link(name, target string) *topology.Tree {
	return &topology.Tree{Name: name, Kind: topology.Symlink, Mode: 0777, Target: target}
}

func static(name, text string) *topology.Tree {
	b := []byte(text)
	return &topology.Tree{Name: name, Kind: topology.File, Mode: 0444, Content: func() []byte { return b }}
}

func live(name string, f func() string) *topology.Tree {
	return &topology.Tree{Name: name, Kind: topology.File, Mode: 0444, Dynamic: true, Content: func() []byte { return []byte(f()) }}
}

func rw(name string, f func() string, store func([]byte) syscall.Errno) *topology.Tree {
	t := live(name, f)
	t.Mode, t.Store = 0644, store
	return t
}

func u64(v uint64) string { return strconv.FormatUint(v, 10) + "\n" }

// deviceDir is the PCI device directory of d with the attributes amdgpu (amdgpu_device.c,
// amdgpu_pm.c, amdgpu_xgmi.c), the PCI core (pci-sysfs.c) and hwmon create.
func (l *Layout) deviceDir(d *Device) *topology.Tree {
	p := d.P
	id := fmt.Sprintf("%04X:%04X", 0x1002, d.devID())
	t := dir(d.BDF(),
		// pci-sysfs.c: "0x%04x\n" ids, "0x%02x\n" revision, "0x%06x\n" class, "%d\n" numa_node.
		static("vendor", "0x1002\n"),
		static("device", fmt.Sprintf("0x%04x\n", d.devID())),
		static("subsystem_vendor", fmt.Sprintf("0x%04x\n", p.SubsysVendor)),
		static("subsystem_device", fmt.Sprintf("0x%04x\n", p.SubsysDev)),
		static("revision", fmt.Sprintf("0x%02x\n", p.Revision)),
		static("class", fmt.Sprintf("0x%06x\n", p.Class)),
		static("numa_node", strconv.Itoa(d.NUMA)+"\n"),
		static("current_link_speed", p.LinkSpeed+"\n"),
		static("current_link_width", strconv.Itoa(p.LinkWidth)+"\n"),
		static("max_link_speed", p.LinkSpeed+"\n"),
		static("max_link_width", strconv.Itoa(p.LinkWidth)+"\n"),
		static("uevent", fmt.Sprintf("DRIVER=amdgpu\nPCI_CLASS=%X\nPCI_ID=%s\nPCI_SUBSYS_ID=%04X:%04X\nPCI_SLOT_NAME=%s\nMODALIAS=pci:v00001002d%08Xsv%08Xsd%08Xbc%02Xsc%02Xi%02X\n",
			p.Class, id, p.SubsysVendor, p.SubsysDev, d.BDF(), d.devID(), p.SubsysVendor, p.SubsysDev, p.Class>>16, p.Class>>8&0xff, p.Class&0xff)),
		// amdgpu_pm.c unique_id_show: "%016llx\n"; amdgpu_device.c pcie_replay_count: "%llu\n".
		static("unique_id", fmt.Sprintf("%016x\n", d.UniqueID)),
		static("pcie_replay_count", "0\n"),
		// amdgpu_mem_info_*_show: "%llu\n" of the TTM managers' sizes and usage.
		static("mem_info_vram_total", u64(d.VRAMTotal)),
		static("mem_info_vis_vram_total", u64(d.VisVRAMTotal)),
		static("mem_info_gtt_total", u64(d.GTTTotal)),
		live("mem_info_vram_used", func() string { return u64(d.usage().VRAM) }),
		live("mem_info_vis_vram_used", func() string { return u64(d.usage().VisVRAM) }),
		live("mem_info_gtt_used", func() string { return u64(d.usage().GTT) }),
		// amdgpu_get_gpu_busy_percent / mem_busy_percent: "%d\n" of the SMU's activity average.
		live("gpu_busy_percent", func() string { return strconv.Itoa(d.BusyPercent()) + "\n" }),
		live("mem_busy_percent", func() string { return strconv.Itoa(d.BusyPercent()) + "\n" }),
		rw("power_dpm_force_performance_level", func() string { return d.Level() + "\n" }, d.SetLevel),
		// amdgpu_get_gpu_metrics: the SMU's metrics table as a binary gpu_metrics_v1_3 (aldebaran).
		live("gpu_metrics", func() string { return string(d.Metrics()) }),
	)
	// amdgpu_ucode.c FW_VERSION_ATTR: fw_version/<block>_fw_version, "0x%08x\n". The MEC and
	// SDMA versions are the node's (kfd_topology.c reports the same fw_version and
	// sdma_fw_version); versions of other blocks are unknown to the profile and not shown.
	fw := dir("fw_version")
	for _, f := range []struct {
		name string
		v    uint64
	}{{"mec", d.MECFW}, {"mec2", d.MECFW}, {"sdma", d.SDMAFW}, {"sdma2", d.SDMAFW}} {
		if f.v != 0 {
			fw.Children = append(fw.Children, static(f.name+"_fw_version", fmt.Sprintf("0x%08x\n", f.v)))
		}
	}
	t.Children = append(t.Children, fw)
	// amdgpu_atombios.c vbios_version: "%s\n" of the VBIOS part number, empty when the VBIOS
	// has none; always present (rocm_smi_lib 5.2.3 counts a card as an AMD GPU only with it).
	t.Children = append(t.Children, static("vbios_version", p.VBIOS+"\n"))
	for c := range numClocks {
		t.Children = append(t.Children, rw(clockFiles[c], func() string { return string(d.DPM(c)) },
			func(b []byte) syscall.Errno { return d.SetClockMask(c, b) }))
	}
	card, rd := "card"+strconv.Itoa(d.Card), "renderD"+strconv.Itoa(d.Render)
	up := strings.Repeat("../", strings.Count(d.Path, "/")+4) // from drm/<minor> to sys/
	minorDir := func(name string, minor int) *topology.Tree {
		// drm_sysfs.c: the minor's device (class drm, major 226) with dev, uevent and the device link.
		return dir(name, static("dev", fmt.Sprintf("226:%d\n", minor)),
			static("uevent", fmt.Sprintf("MAJOR=226\nMINOR=%d\nDEVNAME=dri/%s\nDEVTYPE=drm_minor\n", minor, name)),
			link("device", "../../../"+d.BDF()), link("subsystem", up+"class/drm"))
	}
	t.Children = append(t.Children, dir("drm", minorDir(card, d.Card), minorDir(rd, d.Render)))
	t.Children = append(t.Children, dir("hwmon", d.hwmonDir()))
	if d.HiveID != 0 {
		t.Children = append(t.Children,
			// amdgpu_xgmi.c amdgpu_xgmi_show_device_id: "%llu\n" of gmc.xgmi.node_id.
			static("xgmi_device_id", u64(uint64(d.HivePos)*p.XGMISegment)),
			static("xgmi_error", "0\n"), l.hiveEntry(d))
	}
	return t
}

func (d *Device) devID() uint16 { return d.DeviceID }

// hwmonDir is hwmon/hwmonN as amdgpu_pm.c's hwmon attributes show it on a dGPU without a fan
// (Instinct cards are passively cooled): temperatures in millidegrees with their labels, power in
// microwatts, clocks in Hz.
func (d *Device) hwmonDir() *topology.Tree {
	temp := func(i int) func() string {
		return func() string {
			e, j, m := d.Temps()
			return strconv.Itoa([]int{e, j, m}[i]) + "\n"
		}
	}
	capMax := uint64(d.P.PowerCapW) * 1e6
	return dir("hwmon"+strconv.Itoa(d.Hwmon),
		static("name", "amdgpu\n"),
		live("temp1_input", temp(0)), static("temp1_label", "edge\n"),
		live("temp2_input", temp(1)), static("temp2_label", "junction\n"),
		live("temp3_input", temp(2)), static("temp3_label", "mem\n"),
		live("power1_average", func() string { return u64(d.Power()) }),
		rw("power1_cap", func() string { return u64(d.PowerCap()) }, d.SetPowerCap),
		static("power1_cap_max", u64(capMax)),
		static("power1_cap_min", "0\n"),
		static("power1_cap_default", u64(capMax)),
		// in0 (vddgfx) is what rocm_smi_lib 5.2.3 requires of every amdgpu hwmon: its Monitor
		// discovery throws when in0_label is missing.
		live("in0_input", func() string { return strconv.Itoa(d.VddGfx()) + "\n" }), static("in0_label", "vddgfx\n"),
		live("freq1_input", func() string { return u64(uint64(d.Clock(SCLK)) * 1e6) }), static("freq1_label", "sclk\n"),
		live("freq2_input", func() string { return u64(uint64(d.Clock(MCLK)) * 1e6) }), static("freq2_label", "mclk\n"),
		link("device", "../../../"+d.BDF()),
	)
}

// hiveEntry is xgmi_hive_info (amdgpu_xgmi_sysfs_add_dev_info): a directory under the hive's first
// device holding xgmi_hive_id ("%llu\n") and a link nodeK to each member (K from 1, in join order);
// the other members link xgmi_hive_info to it.
func (l *Layout) hiveEntry(d *Device) *topology.Tree {
	var first *Device
	var members []*Device
	for _, o := range l.Devices {
		if o.HiveID == d.HiveID {
			if first == nil {
				first = o
			}
			members = append(members, o)
		}
	}
	if first != d {
		return link("xgmi_hive_info", rel(d.Path, first.Path+"/xgmi_hive_info"))
	}
	h := dir("xgmi_hive_info", static("xgmi_hive_id", u64(d.HiveID)))
	for i, m := range members {
		h.Children = append(h.Children, link("node"+strconv.Itoa(i+1), rel(d.Path+"/xgmi_hive_info", m.Path)))
	}
	return h
}

// rel is the target of a link placed in directory from pointing to path to (both below
// sys/devices), as kernfs_get_target_path builds it: up to the nearest ancestor of to's parent,
// then down to to.
func rel(from, to string) string {
	f, t := strings.Split(path.Clean(from), "/"), strings.Split(path.Clean(to), "/")
	i := 0
	for i < len(f) && i < len(t)-1 && f[i] == t[i] {
		i++
	}
	return strings.Repeat("../", len(f)-i) + strings.Join(t[i:], "/")
}
