package doorbell

import (
	"errors"
	"fmt"
	"sync"
)

const (
	// PerProcess is KFD_MAX_NUM_OF_QUEUES_PER_PROCESS: doorbells in one process slice.
	PerProcess = 1024
	// Size is the size of one doorbell on GFX9+ (kfd->device_info.doorbell_size).
	Size = 8
	// SliceBytes is kfd_doorbell_process_slice on GFX9+: 1024 doorbells of 8 bytes.
	SliceBytes = PerProcess * Size
	// MirrorOffset is KFD_QUEUE_DOORBELL_MIRROR_OFFSET: the second half of a slice mirrors the
	// routing of the first.
	MirrorOffset = 512
)

// Errors.
var (
	ErrNoDoorbell = errors.New("doorbell: no free doorbell in the process slice")
	ErrInUse      = errors.New("doorbell: doorbell already in use")
	ErrBadEngine  = errors.New("doorbell: SDMA engine or queue out of range")
)

// Layout is the SOC15 doorbell assignment of a device family: the non-CP range (SDMA, IH, VCN)
// compute queues must avoid, and the first doorbell of each SDMA engine.
type Layout struct {
	FirstNonCP, LastNonCP uint32
	SDMAEngine            []uint32
}

// Vega20 is vega20_doorbell_index_init (amdgpu_doorbell.h AMDGPU_VEGA20_DOORBELL_*), used by
// Vega20, Arcturus (gfx908), Aldebaran (gfx90a) and GFX 9.4.3 (gfx942): sDMA engines at 0x100 +
// 0xA*i, non-CP 0x100..0x18F (FIRST_NON_CP = sDMA_ENGINE0, LAST_NON_CP = VCE_RING6_7).
var Vega20 = Layout{FirstNonCP: 0x100, LastNonCP: 0x18f,
	SDMAEngine: []uint32{0x100, 0x10a, 0x114, 0x11e, 0x128, 0x132, 0x13c, 0x146}}

// Vega10 is vega10_doorbell_index_init (AMDGPU_DOORBELL64_*): sDMA engines 0xF0 and 0xF2,
// non-CP 0xF0..0xFF.
var Vega10 = Layout{FirstNonCP: 0xf0, LastNonCP: 0xff, SDMAEngine: []uint32{0xf0, 0xf2}}

// Navi10 is navi10_doorbell_index_init (AMDGPU_NAVI10_DOORBELL_*), used by gfx10.3: sDMA engines
// at 0x100 + 0xA*i, non-CP 0x100..0x18F.
var Navi10 = Layout{FirstNonCP: 0x100, LastNonCP: 0x18f, SDMAEngine: []uint32{0x100, 0x10a, 0x114, 0x11e}}

// LayoutFor returns the layout of a gfx target ("gfx90a", ...).
func LayoutFor(gfx string) Layout {
	switch {
	case gfx == "gfx900" || gfx == "gfx902" || gfx == "gfx904":
		return Vega10
	case len(gfx) >= 5 && gfx[:5] == "gfx10", len(gfx) >= 5 && gfx[:5] == "gfx11":
		return Navi10
	}
	return Vega20
}

// Slice is the doorbell bitmap of one process on one device (qcm_process_device.doorbell_bitmap).
type Slice struct {
	mu       sync.Mutex
	layout   Layout
	reserved [PerProcess / 64]uint64
	used     [PerProcess / 64]uint64
}

// NewSlice returns a slice with the layout's non-CP ids reserved (init_doorbell_bitmap).
func NewSlice(l Layout) *Slice {
	s := &Slice{layout: l}
	for i := uint32(0); i < PerProcess/2; i++ {
		if i >= l.FirstNonCP && i <= l.LastNonCP {
			s.reserved[i/64] |= 1 << (i % 64)
			j := i + MirrorOffset
			s.reserved[j/64] |= 1 << (j % 64)
		}
	}
	return s
}

func bit(b *[PerProcess / 64]uint64, i uint32) bool { return b[i/64]&(1<<(i%64)) != 0 }

// AllocCP takes the lowest free doorbell id outside the reserved ranges (allocate_doorbell for
// compute queues: find_first_zero_bit over the bitmap).
func (s *Slice) AllocCP() (uint32, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := uint32(0); i < PerProcess; i++ {
		if !bit(&s.reserved, i) && !bit(&s.used, i) {
			s.used[i/64] |= 1 << (i % 64)
			return i, nil
		}
	}
	return 0, ErrNoDoorbell
}

// AllocSDMA takes the fixed doorbell of SDMA queue q of engine e (allocate_doorbell, SOC15:
// idx_offset[engine] + (queue & 1) * MIRROR_OFFSET + (queue >> 1)).
func (s *Slice) AllocSDMA(engine, queue uint32) (uint32, error) {
	if int(engine) >= len(s.layout.SDMAEngine) || queue >= 2*MirrorOffset {
		return 0, fmt.Errorf("%w: engine %d queue %d", ErrBadEngine, engine, queue)
	}
	id := s.layout.SDMAEngine[engine] + (queue&1)*MirrorOffset + queue>>1
	if id >= PerProcess {
		return 0, fmt.Errorf("%w: doorbell %#x", ErrBadEngine, id)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if bit(&s.used, id) {
		return 0, ErrInUse
	}
	s.used[id/64] |= 1 << (id % 64)
	return id, nil
}

// Free releases a doorbell id.
func (s *Slice) Free(id uint32) {
	if id >= PerProcess {
		return
	}
	s.mu.Lock()
	s.used[id/64] &^= 1 << (id % 64)
	s.mu.Unlock()
}

// InUse counts the allocated doorbells.
func (s *Slice) InUse() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, w := range s.used {
		for ; w != 0; w &= w - 1 {
			n++
		}
	}
	return n
}

// Reserved reports whether id lies in a non-CP range.
func (s *Slice) Reserved(id uint32) bool { return id < PerProcess && bit(&s.reserved, id) }
