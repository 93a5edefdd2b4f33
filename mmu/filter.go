package mmu

import (
	"sync"
	"time"
)

// DefaultFilterWindow is the time within which a second retry fault on the same (PASID, page) is a
// duplicate. amdgpu uses AMDGPU_GMC_FAULT_TIMEOUT, 5000 IH timestamp ticks (amdgpu_gmc.h); kfdemu
// takes the ticks as 10 ns.
const DefaultFilterWindow = 50 * time.Microsecond

// Ring and hash sizes of amdgpu_gmc.h (AMDGPU_GMC_FAULT_RING_ORDER, AMDGPU_GMC_FAULT_HASH_ORDER).
const (
	filterRingOrder = 8
	filterRingSize  = 1 << filterRingOrder
	filterHashOrder = 8
	filterHashSize  = 1 << filterHashOrder
)

type filterEntry struct {
	key  uint64
	ts   int64 // ns since the Filter's epoch, +1 (0 = never used)
	next uint8 // previous entry with the same hash
}

// Filter is amdgpu_gmc_filter_faults: a ring of the last 256 retry faults with a hash over
// (page address << 4 | PASID); a fault is new unless the same key was recorded within the window.
// When all 256 entries are younger than the window the ring is full and every fault is reported
// as a duplicate (the kernel drops it, the hardware replays). One Filter may be shared by the VMs
// of a GPU, as adev->gmc's is. Safe for concurrent use; its mutex is a leaf lock.
type Filter struct {
	mu     sync.Mutex
	window int64
	epoch  time.Time
	ring   [filterRingSize]filterEntry
	hash   [filterHashSize]uint8
	last   uint8 // next ring slot to write (gmc->last_fault)
}

// NewFilter returns a filter with the given duplicate window (DefaultFilterWindow if <= 0).
func NewFilter(window time.Duration) *Filter {
	if window <= 0 {
		window = DefaultFilterWindow
	}
	return &Filter{window: int64(window), epoch: time.Now()}
}

// Window returns the duplicate window.
func (f *Filter) Window() time.Duration { return time.Duration(f.window) }

// faultKey is amdgpu_gmc_fault_key: the page address shifted left by 4, or'ed with the PASID (the
// 12 zero bits of the address leave room for a 16-bit PASID).
func faultKey(va uint64, pasid uint32) uint64 {
	return (va&^pageMask)<<4 | uint64(pasid&0xffff)
}

// hash64 is the kernel's hash_64 (GOLDEN_RATIO_64 multiplicative hash, top bits).
func hash64(v uint64, bits uint) uint64 { return v * 0x61C8864680B583EB >> (64 - bits) }

// Add records a fault on (pasid, va's page) now and reports whether it is new (true) or a
// duplicate within the window (false).
func (f *Filter) Add(pasid uint32, va uint64) bool {
	return f.AddAt(pasid, va, time.Since(f.epoch))
}

// AddAt is Add with an explicit timestamp (time since the filter was created); timestamps must not
// go backwards.
func (f *Filter) AddAt(pasid uint32, va uint64, at time.Duration) bool {
	key := faultKey(va, pasid)
	ts := int64(at) + 1
	f.mu.Lock()
	defer f.mu.Unlock()
	stamp := max(ts, f.window+1) - f.window
	// If we don't have space left in the ring buffer return immediately.
	if f.ring[f.last].ts >= stamp {
		return false
	}
	h := hash64(key, filterHashOrder)
	e := &f.ring[f.hash[h]]
	for e.ts >= stamp {
		if e.key == key {
			return false
		}
		tmp := e.ts
		e = &f.ring[e.next]
		if e.ts >= tmp { // the entry was reused
			break
		}
	}
	e = &f.ring[f.last]
	e.key, e.ts, e.next = key, ts, f.hash[h]
	f.hash[h] = f.last
	f.last++ // wraps at filterRingSize
	return true
}

// Remove forgets (pasid, va's page) so that its next fault is new even within the window
// (amdgpu_gmc_filter_faults_remove, used when a fault must be handled again, e.g. -EAGAIN).
func (f *Filter) Remove(pasid uint32, va uint64) {
	key := faultKey(va, pasid)
	h := hash64(key, filterHashOrder)
	f.mu.Lock()
	defer f.mu.Unlock()
	e := &f.ring[f.hash[h]]
	for range filterRingSize {
		if e.key == key {
			e.key = 0
			return
		}
		tmp := e.ts
		e = &f.ring[e.next]
		if e.ts >= tmp {
			return
		}
	}
}
