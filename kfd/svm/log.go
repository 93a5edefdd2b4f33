package svm

import "github.com/kfdemu/kfdemu/kfd/abi"

// EventKind is what an Event records.
type EventKind uint8

const (
	EventFault   EventKind = iota + 1 // a retry fault reached svm_range_restore_pages
	EventMigrate                      // pages changed location (svm_migrate_*)
	EventUnmap                        // GPU page-table entries removed
	EventEvict                        // queues quiesced, the range is mapped again (svm_range_evict, XNACK off or GPU_ALWAYS_MAPPED)
)

func (k EventKind) String() string {
	switch k {
	case EventFault:
		return "fault"
	case EventMigrate:
		return "migrate"
	case EventUnmap:
		return "unmap"
	case EventEvict:
		return "evict"
	}
	return "unknown"
}

// Trigger is why a migration or unmap happened. The first values are the kernel's
// KFD_MIGRATE_TRIGGERS and KFD_SVM_UNMAP_TRIGGERS (kfd_ioctl.h) under one type.
type Trigger uint8

const (
	TriggerPrefetch         Trigger = iota // KFD_MIGRATE_TRIGGER_PREFETCH
	TriggerPageFaultGPU                    // KFD_MIGRATE_TRIGGER_PAGEFAULT_GPU
	TriggerMMUNotifyMigrate                // KFD_SVM_UNMAP_TRIGGER_MMU_NOTIFY_MIGRATE
	TriggerUnmapFromCPU                    // KFD_SVM_UNMAP_TRIGGER_UNMAP_FROM_CPU
	TriggerNoAccess                        // kfdemu: NO_ACCESS unmaps at once (doc.go)
)

func (t Trigger) String() string {
	switch t {
	case TriggerPrefetch:
		return "prefetch"
	case TriggerPageFaultGPU:
		return "pagefault-gpu"
	case TriggerMMUNotifyMigrate:
		return "mmu-notify-migrate"
	case TriggerUnmapFromCPU:
		return "unmap-from-cpu"
	case TriggerNoAccess:
		return "no-access"
	}
	return "unknown"
}

// Event is one entry of the debug log. Addresses and sizes are in bytes.
type Event struct {
	Kind     EventKind
	Trigger  Trigger // EventMigrate, EventUnmap, EventEvict
	GPU      int     // gpu index: faulting, unmapped, or migration source/target; -1 if none
	Addr     uint64  // EventFault: the faulting page
	Start    uint64  // the chunk mapped (EventFault), moved, unmapped or evicted
	Size     uint64
	From, To uint32 // EventMigrate: locations (0 system memory, else gpu_id)
	// EventMigrate: the range's prefetch and preferred locations (KFD_SMI_EVENT_MIGRATE_START).
	Prefetch, Preferred uint32
	Write               bool // EventFault
	Migrated            bool // EventFault: a migration was attempted
	Resolved            bool // EventFault
}

// record appends to the ring and counts faults and migrated pages (Counters). Caller holds m.mu.
func (m *Manager) record(e Event) {
	switch e.Kind {
	case EventFault:
		if e.GPU >= 0 && e.GPU < len(m.counters) {
			m.counters[e.GPU].Faults++
		}
	case EventMigrate:
		pages := e.Size >> m.shift
		if i := m.gpuIdx(e.To); e.To != abi.KFD_IOCTL_SVM_LOCATION_SYSMEM && i >= 0 {
			m.counters[i].PageIn += pages
		}
		if i := m.gpuIdx(e.From); e.From != abi.KFD_IOCTL_SVM_LOCATION_SYSMEM && i >= 0 {
			m.counters[i].PageOut += pages
		}
	}
	if m.cfg.OnEvent != nil {
		m.cfg.OnEvent(e)
	}
	m.log[m.logNext] = e
	m.logNext++
	if m.logNext == len(m.log) {
		m.logNext, m.logFull = 0, true
	}
}

// Log returns the most recent events (at most Config.LogSize), oldest first.
func (m *Manager) Log() []Event {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.logFull {
		return append([]Event(nil), m.log[:m.logNext]...)
	}
	out := make([]Event, 0, len(m.log))
	out = append(out, m.log[m.logNext:]...)
	return append(out, m.log[:m.logNext]...)
}
