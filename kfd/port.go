package kfd

import (
	"github.com/kfdemu/kfdemu/topology"
	"sync"

	"github.com/kfdemu/kfdemu/gpu/shader"
	"github.com/kfdemu/kfdemu/mmu"
)

// port is an engine's window on a process's GPU address space on one device (its UTCL1): the
// queue engines and the shader reach memory only through it, translating through the pdd's page
// tables (package mmu). A TLB hit takes no lock shared with other queues; MAP, UNMAP and FREE
// change the tables and wait for the ports (mmu's quiescence) before the memory goes away.
func (p *Process) port(pd *pdd) *mmu.Port { return pd.vm.NewPort() }

// cuPorts lends the work-groups of a queue's dispatches their own Ports (each CU has its own
// UTCL1) while they hold a worker: at most as many exist as work-groups of the queue ran at once.
type cuPorts struct {
	vm     *mmu.VM
	mu     sync.Mutex
	free   []*mmu.Port
	all    []*mmu.Port
	closed bool
}

func (c *cuPorts) Get() shader.Memory {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := len(c.free); n > 0 {
		p := c.free[n-1]
		c.free = c.free[:n-1]
		return p
	}
	p := c.vm.NewPort()
	if c.closed {
		p.Close() // the queue is gone: accesses fail with mmu.ErrClosed
	}
	c.all = append(c.all, p)
	return p
}

func (c *cuPorts) Put(m shader.Memory) {
	c.mu.Lock()
	c.free = append(c.free, m.(*mmu.Port))
	c.mu.Unlock()
}

// close detaches every Port (the queue is released; no dispatch runs any more).
func (c *cuPorts) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for _, p := range c.all {
		p.Close()
	}
	c.all, c.free = nil, nil
}

// shaderDevice returns GPU gpuID's compute units (gpu/shader's CU model), sized from its node.
func (d *Driver) shaderDevice(gpuID uint32) *shader.Device {
	d.mu.Lock()
	defer d.mu.Unlock()
	dev := d.cuDevs[gpuID]
	if dev == nil {
		cfg := shader.DefaultDeviceConfig(1)
		if n := d.sys.NodeByGPUID(gpuID); n != nil {
			cfg.CUs = int(n.ComputeUnits())
			if spc, w := n.Prop(topology.SIMDPerCU), n.Prop(topology.MaxWavesPerSIMD); spc > 0 && w > 0 {
				cfg.WavesPerCU = int(spc * w)
				cfg.VGPRsPerCU = int(spc) * 512 // a 512-row VGPR file per SIMD (gfx9: 256 arch + 256 acc on gfx90a)
			}
			if lds := n.Prop(topology.LDSSizeInKB); lds > 0 {
				cfg.LDSPerCU = int(lds) << 10
			}
			if sae, arrays := n.Prop(topology.SIMDArraysPerEngine), n.Prop(topology.ArrayCount); sae > 0 && arrays >= sae {
				cfg.ShaderEngines, cfg.SHsPerSE = int(arrays/sae), int(sae)
			}
		}
		dev = shader.NewDevice(cfg)
		d.cuDevs[gpuID] = dev
	}
	return dev
}

// engine is where the queue's dispatches run: its GPU's CUs, the CUs its mask allows, its ports
// and, while it holds them, its process's GWS on that GPU.
func (q *queue) engine() shader.Engine {
	return shader.Engine{Device: q.p.d.shaderDevice(q.pd.gpuID), CUs: *q.cus.Load(), Ports: q.ports, GWS: q.gws.Load(),
		Owner: q.p.pasid, Doorbell: q.doorbellID, Trap: q.pd.trap.Load(), Code: &q.pd.code}
}

// sqInterrupt is an SQ interrupt of one of the queue's waves (s_sendmsg(MSG_INTERRUPT)): sent
// from the trap handler it is the debugger's when it takes it (kfd_int_process_v9's
// kfd_set_dbg_ev_from_interrupt), otherwise its 24 data bits go to kfd_signal_event_interrupt.
func (q *queue) sqInterrupt(i shader.Interrupt) {
	if i.Priv && q.p.dbgInterrupt(q.pd, i.Data) {
		return
	}
	q.p.SignalEventInterrupt(i.Data, 24)
}
