package svm

import (
	"errors"
	"math/bits"
	"syscall"

	"github.com/kfdemu/kfdemu/kfd/abi"
)

// Fault is svm_range_restore_pages for a recoverable (XNACK retry) fault of GPU gpuIndex at va.
// It reports whether the faulting page is now mapped on that GPU; false means the fault becomes a
// VM fault (XNACK off, no CPU mapping, VMA permission, no access for the GPU, mapping failure).
func (m *Manager) Fault(gpuIndex int, va uint64, write bool) (resolved bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.fault(gpuIndex, va, write)
}

// FaultBatch is Fault for several faults of one GPU in order (the pages of one wave access), under
// one lock: resolved[i] is what Fault(gpuIndex, vas[i], write) would return.
func (m *Manager) FaultBatch(gpuIndex int, vas []uint64, write bool, resolved []bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, va := range vas {
		resolved[i] = m.fault(gpuIndex, va, write)
	}
}

func (m *Manager) fault(gpuIndex int, va uint64, write bool) (resolved bool) {
	if m.closed || !m.xnack || gpuIndex < 0 || gpuIndex >= len(m.ids) ||
		m.supported&(1<<gpuIndex) == 0 {
		return false
	}
	pg := va >> m.shift
	ev := Event{Kind: EventFault, GPU: gpuIndex, Addr: pg << m.shift, Write: write}
	defer func() {
		ev.Resolved = resolved
		m.record(ev)
	}()
	r := m.find(pg)
	if r == nil {
		if r = m.createUnregistered(pg); r == nil {
			return false
		}
	}
	v, _, _, ok := m.vmaAt(pg)
	if !ok || !v.Read || (write && !v.Write) { // stale fault, or svm_fault_allowed -> EPERM
		return false
	}
	best := m.bestRestoreLocation(r, gpuIndex)
	if best < 0 { // -EACCES
		return false
	}
	size := uint64(1) << r.granularity
	s := max(pg&^(size-1), r.start)
	l := min((pg+size)&^(size-1)-1, r.last)
	ev.Start, ev.Size = s<<m.shift, (l-s+1)<<m.shift
	if r.actual != 0 || best != 0 {
		ev.Migrated = true
		if best != 0 {
			m.migrateToVRAM(r, uint32(best), s, l, TriggerPageFaultGPU)
		} else {
			m.migrateToRAM(r, s, l, TriggerPageFaultGPU)
		}
	}
	e := m.validateAndMap(r, s, l, gpuIndex)
	m.runRestore()
	return e == 0
}

// createUnregistered is svm_range_create_unregistered_range with svm_range_get_range_boundaries.
func (m *Manager) createUnregistered(pg uint64) *rng {
	v, vs, ve, ok := m.vmaAt(pg)
	if !ok {
		return nil
	}
	start := max(vs, pg&^(unregisteredAlign-1))
	end := min(ve, (pg+unregisteredAlign)&^(unregisteredAlign-1)) // exclusive
	// pg is in no range: the first range ending after pg starts after it.
	i := m.first(pg)
	if i < len(m.ranges) {
		end = min(end, m.ranges[i].start)
	}
	if i > 0 {
		start = max(start, m.ranges[i-1].last+1)
	}
	if m.overlapsBO(start, end-start) {
		if m.overlapsBO(pg, 1) {
			return nil
		}
		start, end = pg, pg+1 // one page range if the 2 MiB range overlaps a BO
	}
	r := m.newRange(start, end-1) // XNACK is on: no USERPTR charge
	if v.HeapStack {
		r.preferred = abi.KFD_IOCTL_SVM_LOCATION_SYSMEM
	}
	m.ranges = append(m.ranges, nil)
	copy(m.ranges[i+1:], m.ranges[i:])
	m.ranges[i] = r
	return r
}

// bestRestoreLocation is svm_range_best_restore_location: -1 means the GPU has no access.
func (m *Manager) bestRestoreLocation(r *rng, gi int) int64 {
	id := m.ids[gi]
	if r.preferred == id || r.preferred == abi.KFD_IOCTL_SVM_LOCATION_SYSMEM {
		return int64(r.preferred)
	}
	if r.preferred != abi.KFD_IOCTL_SVM_LOCATION_UNDEFINED {
		if pi := m.gpuIdx(r.preferred); pi >= 0 && m.sameHive(gi, pi) {
			return int64(r.preferred)
		}
	}
	if r.access&(1<<gi) != 0 {
		return int64(id)
	}
	if r.aip&(1<<gi) != 0 {
		if r.actual == 0 {
			return 0
		}
		if ai := m.gpuIdx(r.actual); ai >= 0 && m.sameHive(gi, ai) {
			return int64(r.actual)
		}
		return 0
	}
	return -1
}

// bestPrefetchLocation is svm_range_best_prefetch_location.
func (m *Manager) bestPrefetchLocation(r *rng) uint32 {
	best := r.prefetch
	if best == abi.KFD_IOCTL_SVM_LOCATION_SYSMEM || best == abi.KFD_IOCTL_SVM_LOCATION_UNDEFINED {
		return best
	}
	bi := m.gpuIdx(best)
	if bi < 0 {
		return 0
	}
	bm := r.access | r.aip
	if m.xnack {
		bm = r.aip
	}
	for ; bm != 0; bm &= bm - 1 {
		if gi := bits.TrailingZeros64(bm); gi != bi && !m.sameHive(gi, bi) {
			return 0
		}
	}
	return best
}

// triggerMigration is svm_range_trigger_migration; it reports whether a migration ran.
func (m *Manager) triggerMigration(r *rng) bool {
	best := m.bestPrefetchLocation(r)
	if best == abi.KFD_IOCTL_SVM_LOCATION_UNDEFINED || (best == 0 && r.actual == 0) {
		return false
	}
	if best == 0 {
		m.migrateToRAM(r, r.start, r.last, TriggerPrefetch)
	} else {
		m.migrateToVRAM(r, best, r.start, r.last, TriggerPrefetch)
	}
	return true
}

// migrateToVRAM is svm_migrate_to_vram over [s, l]: from another GPU the whole range goes through
// system memory first (svm_migrate_vram_to_vram). The data stays in client memory (doc.go).
func (m *Manager) migrateToVRAM(r *rng, loc uint32, s, l uint64, t Trigger) {
	if r.actual != 0 && r.actual != loc {
		m.migrateToRAM(r, r.start, r.last, t)
	}
	if n := r.vram.add(s, l); n > 0 {
		m.record(Event{Kind: EventMigrate, Trigger: t, GPU: m.gpuIdx(loc), Start: s << m.shift,
			Size: n << m.shift, From: abi.KFD_IOCTL_SVM_LOCATION_SYSMEM, To: loc, Prefetch: r.prefetch, Preferred: r.preferred})
		m.invalidate(r, s, l)
	}
	r.actual = loc
}

// migrateToRAM is svm_migrate_vram_to_ram over [s, l].
func (m *Manager) migrateToRAM(r *rng, s, l uint64, t Trigger) {
	if n := r.vram.remove(s, l); n > 0 {
		m.record(Event{Kind: EventMigrate, Trigger: t, GPU: m.gpuIdx(r.actual), Start: s << m.shift,
			Size: n << m.shift, From: r.actual, To: abi.KFD_IOCTL_SVM_LOCATION_SYSMEM, Prefetch: r.prefetch, Preferred: r.preferred})
		m.invalidate(r, s, l)
	}
	if len(r.vram) == 0 {
		r.actual = 0
	}
}

// invalidate is svm_range_evict for the MMU_NOTIFY_MIGRATE invalidation of [s, l].
func (m *Manager) invalidate(r *rng, s, l uint64) {
	if !m.xnack || r.flags&abi.KFD_IOCTL_SVM_FLAG_GPU_ALWAYS_MAPPED != 0 {
		if !r.mappedToGPU {
			return
		}
		// Queues are quiesced and svm_range_restore_work maps the range again.
		m.record(Event{Kind: EventEvict, Trigger: TriggerMMUNotifyMigrate, GPU: -1,
			Start: s << m.shift, Size: (l - s + 1) << m.shift})
		for _, x := range m.restore {
			if x == r {
				return
			}
		}
		m.restore = append(m.restore, r)
		return
	}
	m.unmapFromGPUs(r, s, l, TriggerMMUNotifyMigrate)
}

// runRestore is svm_range_restore_work: evicted ranges are validated and mapped again.
func (m *Manager) runRestore() {
	for _, r := range m.restore {
		if m.find(r.start) == r {
			m.validateAndMap(r, r.start, r.last, -1)
		}
	}
	m.restore = m.restore[:0]
}

// unmapFromGPUs is svm_range_unmap_from_gpus over [s, l].
// amdkfd skips ranges with mapped_to_gpu false; this skips ranges without PTEs, which also
// covers a mapping that failed part way (mapped_to_gpu still false, some PTEs written).
func (m *Manager) unmapFromGPUs(r *rng, s, l uint64, t Trigger) {
	whole := s == r.start && l == r.last
	if whole {
		r.mappedToGPU = false
	}
	if r.mapped == 0 {
		return
	}
	for bm := r.mapped; bm != 0; bm &= bm - 1 {
		gi := bits.TrailingZeros64(bm)
		_ = m.cfg.Mapper.UnmapGPU(gi, s<<m.shift, l-s+1) // the notifier cannot fail
		m.record(Event{Kind: EventUnmap, Trigger: t, GPU: gi, Start: s << m.shift, Size: (l - s + 1) << m.shift})
	}
	if whole {
		r.mapped = 0
	}
}

// unmapGPUs unmaps the whole range from the GPUs in bm (NO_ACCESS; see doc.go).
func (m *Manager) unmapGPUs(r *rng, bm uint64, t Trigger) {
	for ; bm != 0; bm &= bm - 1 {
		gi := bits.TrailingZeros64(bm)
		_ = m.cfg.Mapper.UnmapGPU(gi, r.start<<m.shift, r.npages())
		r.mapped &^= 1 << gi
		m.record(Event{Kind: EventUnmap, Trigger: t, GPU: gi, Start: r.start << m.shift, Size: r.npages() << m.shift})
	}
}

// validateAndMap is svm_range_validate_and_map over [s, l]; gi < 0 is MAX_GPU_INSTANCE (the GPUs
// are chosen from the range's attributes).
func (m *Manager) validateAndMap(r *rng, s, l uint64, gi int) syscall.Errno {
	var bm uint64
	switch {
	case gi >= 0:
		bm = 1 << gi
	case m.xnack:
		bm = r.aip
		if r.actual != 0 {
			if ai := m.gpuIdx(r.actual); ai >= 0 && r.access&(1<<ai) != 0 {
				bm |= 1 << ai
			}
		}
		if bm == 0 && (r.mappedToGPU || r.flags&abi.KFD_IOCTL_SVM_FLAG_GPU_ALWAYS_MAPPED != 0) {
			bm = r.access
		}
	default:
		bm = r.access | r.aip
	}
	if bm == 0 {
		return 0
	}
	holder := -1 // the GPU whose VRAM holds pages: peers outside its hive cannot map them
	if r.actual != 0 {
		holder = m.gpuIdx(r.actual)
	}
	exec := r.flags&abi.KFD_IOCTL_SVM_FLAG_GPU_EXEC != 0
	for pg := s; pg <= l; {
		v, _, e, ok := m.vmaAt(pg)
		if !ok || !v.Read || v.Device { // vma_lookup fails, or hmm_range_fault refuses the VMA
			return syscall.EFAULT
		}
		next := min(e, l+1)
		writable := v.Write && r.flags&abi.KFD_IOCTL_SVM_FLAG_GPU_RO == 0
		for b := bm; b != 0; b &= b - 1 {
			g := bits.TrailingZeros64(b)
			if holder >= 0 && !m.sameHive(g, holder) {
				continue
			}
			if err := m.cfg.Mapper.MapGPU(g, pg<<m.shift, next-pg, writable, exec); err != nil {
				return errnoOf(err)
			}
			r.mapped |= 1 << g
		}
		pg = next
	}
	r.mappedToGPU = true
	return 0
}

// errnoOf passes a syscall.Errno from the Mapper through; other errors are ENOMEM, the usual
// failure of amdgpu_vm_update_range.
func errnoOf(err error) syscall.Errno {
	var e syscall.Errno
	if errors.As(err, &e) && e != 0 {
		return e
	}
	return syscall.ENOMEM
}
