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

// Usage is the VRAM and GTT the driver has allocated on GPU gpuID: ALLOC_MEMORY_OF_GPU BOs of
// every process, plus the pages of SVM ranges that live in that GPU's VRAM (svm_migrate_ram_to_vram
// allocates them from the same TTM VRAM manager amdgpu's mem_info_vram_used reports). All of VRAM
// is CPU-visible (large BAR), so visible VRAM usage is VRAM usage.
func (d *Driver) Usage(gpuID uint32) amdgpu.Usage {
	var svmVRAM uint64
	for _, p := range d.sortedProcs() {
		p.mu.Lock()
		m := p.svm
		p.mu.Unlock()
		if m == nil {
			continue
		}
		for _, r := range m.Ranges() {
			if r.ActualLoc == gpuID {
				svmVRAM += r.VRAMPages * pageSize // svm.Config.PageSize is left at its 4096 default
			}
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	v := d.vramUsed[gpuID] + svmVRAM
	return amdgpu.Usage{VRAM: v, VisVRAM: v, GTT: d.gttUsed[gpuID]}
}

// busy marks GPU gpuID's engines busy until the returned function is called.
func (d *Driver) busy(gpuID uint32) func() { return d.Meter(gpuID).Begin() }
