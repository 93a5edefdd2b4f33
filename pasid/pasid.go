// Package pasid models the PASID space: 16-bit process address-space ids (0 reserved) that tag a
// process's GPU page tables and route its interrupts (faults, signals) back to it, as amdgpu_ids.c
// allocates them. Safe for concurrent use; one mutex, a leaf lock.
package pasid

import (
	"errors"
	"sync"
)

// Bits is the PASID width amdgpu uses (AMDGPU_PASID_BITS 16).
const Bits = 16

// ErrExhausted is returned when every PASID is in use.
var ErrExhausted = errors.New("pasid: no free PASID")

// Space allocates PASIDs 1..2^Bits-1 and maps them to their owner.
type Space struct {
	mu    sync.Mutex
	next  uint32
	owner map[uint32]any
}

// NewSpace returns an empty PASID space.
func NewSpace() *Space { return &Space{next: 1, owner: map[uint32]any{}} }

// Alloc reserves a PASID for owner. It hands out ids cyclically, so a freed id is reused only after
// the others, which keeps stale interrupts from reaching a new owner quickly.
func (s *Space) Alloc(owner any) (uint32, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	const n = 1<<Bits - 1
	for i := 0; i < n; i++ {
		id := s.next
		s.next = s.next%n + 1
		if _, used := s.owner[id]; !used {
			s.owner[id] = owner
			return id, nil
		}
	}
	return 0, ErrExhausted
}

// Free releases id; freeing an unused id is a no-op.
func (s *Space) Free(id uint32) {
	s.mu.Lock()
	delete(s.owner, id)
	s.mu.Unlock()
}

// Lookup returns the owner of id (for the hardware model's interrupt and fault routing).
func (s *Space) Lookup(id uint32) (any, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.owner[id]
	return o, ok
}

// InUse is the number of allocated PASIDs.
func (s *Space) InUse() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.owner)
}
