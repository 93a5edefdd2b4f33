package amdgpu

import "github.com/kfdemu/kfdemu/topology"

// Product is what amdgpu shows of one GPU model in sysfs beyond the KFD topology: PCI identity, the
// SMU's DPM tables, power limits, and the parameters of kfdemu's power and thermal model. The
// sources of every value of the built-in products are listed in docs/drm-sysfs.md.
type Product struct {
	Name                    string // marketing name (pci.ids / amdgpu.ids)
	SubsysVendor, SubsysDev uint16
	Revision                uint8
	Class                   uint32 // PCI class code (0x038000: display controller, other)
	VBIOS                   string // vbios_version (atom_context->vbios_pn)
	LinkSpeed               string // current_link_speed/max_link_speed, pci-sysfs PCIE_SPEED2STR
	LinkWidth               int
	// SCLK is fine-grained: [min, max] MHz (aldebaran shows two levels, three when the current
	// clock lies between them). MCLK, FCLK and SOCCLK are DPM tables in MHz, lowest first.
	SCLK                   [2]uint32
	MCLK, FCLK, SOCCLK     []uint32
	IdleMCLK, IdleFCLK     int // the level the SMU holds in "auto" while idle
	IdleSOCCLK             int
	VddGfxMV               [2]uint32 // model: GFX rail voltage (mV) at the SCLK ends (in0_input)
	PowerCapW              uint32    // power1_cap_default = power1_cap_max (TDP)
	IdlePowerW, BusyPowerW float64   // model: package power idle and with the engines busy
	// Thermal model (see Device.temps): ambient, junction rise per watt, time constant, and the
	// edge and memory rises as fractions of the junction rise.
	AmbientC, JunctionCPerW, TauSeconds, EdgeFrac, MemFrac float64
	// XGMISegment is gmc.xgmi.node_segment_size: xgmi_device_id = physical node id * segment.
	XGMISegment uint64
}

// MI210 is the AMD Instinct MI210 (Aldebaran, PCI 1002:740f rev 02, subsystem 1002:0c34).
var MI210 = Product{
	Name: "AMD Instinct MI210", SubsysVendor: 0x1002, SubsysDev: 0x0c34, Revision: 0x02, Class: 0x038000,
	VBIOS: "113-D67301-059", LinkSpeed: "16.0 GT/s PCIe", LinkWidth: 16,
	SCLK: [2]uint32{500, 1700}, MCLK: []uint32{400, 700, 1200, 1600}, FCLK: []uint32{400},
	SOCCLK: []uint32{666, 857, 1000, 1090, 1333}, IdleMCLK: 3, IdleFCLK: 0, IdleSOCCLK: 3,
	VddGfxMV: [2]uint32{700, 850}, PowerCapW: 300, IdlePowerW: 42, BusyPowerW: 280,
	AmbientC: 30, JunctionCPerW: 0.2, TauSeconds: 20, EdgeFrac: 0.8, MemFrac: 0.9,
	XGMISegment: 64 << 30,
}

// products by PCI device id.
var products = map[uint64]*Product{0x740f: &MI210}

// ProductFor returns the product of GPU node n: a built-in one by device id, else one derived
// from the node's properties (clocks from max_engine_clk_fcompute and the VRAM bank's
// mem_clk_max; generic identity and model parameters, documented as such).
func ProductFor(n *topology.Node) *Product {
	if p := products[n.Prop(topology.DeviceID)]; p != nil {
		return p
	}
	p := MI210
	p.Name, p.SubsysVendor, p.SubsysDev, p.Revision, p.VBIOS = "", 0x1002, uint16(n.Prop(topology.DeviceID)), 0, ""
	p.SCLK = [2]uint32{500, max(uint32(n.Prop(topology.MaxEngineClkFCompute)), 500)}
	mclk := uint32(0)
	for _, b := range n.MemBanks {
		if t := b.Props.Get("heap_type"); t == topology.HeapFBPublic || t == topology.HeapFBPrivate {
			mclk = uint32(b.Props.Get("mem_clk_max"))
		}
	}
	if mclk == 0 {
		mclk = 1000
	}
	p.MCLK, p.IdleMCLK = []uint32{mclk}, 0
	p.FCLK, p.SOCCLK, p.IdleSOCCLK = []uint32{400}, []uint32{1000}, 0
	return &p
}
