package kfd

import "github.com/kfdemu/kfdemu/amdgpu"

// Activity: the figures amdgpu's sysfs reports per GPU (package amdgpu renders them): memory the
// driver allocated on the GPU and the busy meter of its engines. The meters are started by the
// engines (a kernel dispatch on an AQL or PM4 queue) and read lazily; nothing ticks.

var _ amdgpu.Source = (*Driver)(nil)

// Meter returns GPU gpuID's busy meter (created on first use).
func (d *Driver) Meter(gpuID uint32) *amdgpu.Meter {
	d.mu.Lock()
	defer d.mu.Unlock()
	m := d.meters[gpuID]
	if m == nil {
		m = amdgpu.NewMeter(nil)
		d.meters[gpuID] = m
	}
	return m
}

// Usage is the VRAM and GTT the driver has allocated on GPU gpuID (ALLOC_MEMORY_OF_GPU BOs of
// every process; amdgpu's TTM managers count the same). All of VRAM is CPU-visible (large BAR),
// so visible VRAM usage is VRAM usage.
func (d *Driver) Usage(gpuID uint32) amdgpu.Usage {
	d.mu.Lock()
	defer d.mu.Unlock()
	return amdgpu.Usage{VRAM: d.vramUsed[gpuID], VisVRAM: d.vramUsed[gpuID], GTT: d.gttUsed[gpuID]}
}

// busy marks GPU gpuID's engines busy until the returned function is called.
func (d *Driver) busy(gpuID uint32) func() { return d.Meter(gpuID).Begin() }
