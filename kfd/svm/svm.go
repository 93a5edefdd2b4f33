package svm

import (
	"errors"
	"math/bits"
	"sort"
	"sync"
	"syscall"

	"github.com/kfdemu/kfdemu/kfd/abi"
)

const (
	// MaxGPUs is MAX_GPU_INSTANCE (kfd_priv.h): the width of the per-range GPU bitmaps.
	MaxGPUs = 64
	// DefaultGranularity is svm_range_set_default_attributes' granularity: 2^9 pages.
	DefaultGranularity = 9
	// MaxGranularity caps KFD_IOCTL_SVM_ATTR_GRANULARITY (svm_range_apply_attrs: min(value, 0x3F)).
	MaxGranularity = 0x3F
	// DefaultFlags are the flags of a new range (svm_range_set_default_attributes).
	DefaultFlags = abi.KFD_IOCTL_SVM_FLAG_HOST_ACCESS | abi.KFD_IOCTL_SVM_FLAG_COHERENT

	// svmArgsSize is sizeof(struct kfd_ioctl_svm_args) without the flexible attrs array.
	svmArgsSize = 24
	// svmAttrSize is sizeof(struct kfd_ioctl_svm_attribute).
	svmAttrSize = 8
	// unregisteredAlign is the 2UL << 8 page alignment of svm_range_get_range_boundaries.
	unregisteredAlign = 2 << 8
	defaultLogSize    = 1024
)

// Configuration errors returned by New.
var (
	ErrTooManyGPUs   = errors.New("svm: more GPUs than MAX_GPU_INSTANCE (64)")
	ErrBadGPUID      = errors.New("svm: gpu_id 0, 0xffffffff or duplicate")
	ErrPageSize      = errors.New("svm: page size must be a power of two >= 4096")
	ErrMaxRangePages = errors.New("svm: MaxRangePages must be a power of two")
	ErrNoFindVMA     = errors.New("svm: Config.FindVMA is required")
	ErrNoMapper      = errors.New("svm: Config.Mapper is required")
)

// Mapper is implemented by kfd: GPU page-table operations on client memory. start is a byte
// address and npages a count of pages; both are page aligned. The mapping points at the client's
// own pages at the same virtual address (SVM: GPU VA == CPU VA).
type Mapper interface {
	MapGPU(gpuIndex int, start, npages uint64, writable, executable bool) error
	UnmapGPU(gpuIndex int, start, npages uint64) error
}

// Accounter is the system-wide USERPTR memory limit (amdgpu_amdkfd_reserve_mem_limit /
// amdgpu_amdkfd_unreserve_mem_limit with KFD_IOC_ALLOC_MEM_FLAGS_USERPTR). Ranges are charged
// while XNACK is off.
type Accounter interface {
	Reserve(bytes uint64) bool
	Unreserve(bytes uint64)
}

// GPU is one device of the process, in pdd order (its index is the gpuIndex of Mapper and Fault).
type GPU struct {
	ID        uint32 // user gpu_id
	NoSVM     bool   // !KFD_IS_SVM_API_SUPPORTED: excluded from svms->bitmap_supported
	Hive      uint64 // XGMI hive id; GPUs with the same nonzero Hive are in one hive (svm_nodes_in_same_hive); give partitions of one device the same id
	VRAMBytes uint64 // memory size of the node (KFD_XCP_MEMORY_SIZE) for max_svm_range_pages
}

// VMA is the CPU mapping containing an address, [Start, End) in bytes (vma_lookup).
type VMA struct {
	Start, End  uint64
	Read, Write bool
	Device      bool // VM_IO | VM_PFNMAP | VM_MIXEDMAP: not valid for SVM
	HeapStack   bool // vma_is_initial_heap || vma_is_initial_stack
}

// Config describes the process.
type Config struct {
	GPUs     []GPU
	XNACK    bool   // retry faults enabled (p->xnack_enabled); changed later with SetXNACK
	PageSize uint64 // PAGE_SIZE; 0 means 4096
	// FindVMA returns the CPU mapping containing addr (from /proc/pid/maps).
	FindVMA func(addr uint64) (VMA, bool)
	// OverlapsBO reports whether [start, start+size) overlaps a GPUVM mapping of a kfd BO
	// (svm_range_check_vm) or, for the fault path, a userptr BO (svm_range_check_vm_userptr).
	// nil: no BOs.
	OverlapsBO func(start, size uint64) bool
	Mapper     Mapper
	Mem        Accounter // nil: no limit
	// MaxRangePages is max_svm_range_pages; 0 computes it from the GPUs' VRAMBytes
	// (MaxRangePages). amdkfd takes the minimum over every device of the system.
	MaxRangePages uint64
	LogSize       int // events kept by Log; 0 means 1024
	// OnEvent, when set, sees every event as it is recorded (the SMI profiler events of
	// kfd_smi_events.c), with the Manager's lock held: it must not block or call the Manager.
	OnEvent func(Event)
}

// ValidOp reports whether op is KFD_IOCTL_SVM_OP_SET_ATTR or GET_ATTR. For any other op amdkfd's
// svm_ioctl returns the positive value EINVAL, which ioctl(2) passes to the caller as its result.
func ValidOp(op uint32) bool {
	return op == abi.KFD_IOCTL_SVM_OP_SET_ATTR || op == abi.KFD_IOCTL_SVM_OP_GET_ATTR
}

// ValidateArgs is kfd_ioctl_svm_validate: the ioctl argument of usize bytes (_IOC_SIZE of the
// command) must hold the header and nattr attributes, else EINVAL.
func ValidateArgs(usize uint32, nattr uint32) syscall.Errno {
	if uint64(usize) < svmArgsSize+svmAttrSize*uint64(nattr) {
		return syscall.EINVAL
	}
	return 0
}

// MaxRangePages is svm_range_set_max_pages: per device 1/32 of its memory in pages, clamped to
// [2 MiB, 1 GiB] worth of 4 KiB pages and rounded down to a power of two; the minimum over the
// devices.
func MaxRangePages(vramBytes ...uint64) uint64 {
	var m uint64
	for _, v := range vramBytes {
		p := min(max(v>>17, 1<<9), 1<<18)
		p = 1 << (63 - bits.LeadingZeros64(p))
		if m == 0 || p < m {
			m = p
		}
	}
	return m
}

// Manager is the svm_range_list of one process.
type Manager struct {
	mu        sync.Mutex
	cfg       Config
	shift     uint
	ids       []uint32
	hive      []uint64
	supported uint64 // svms->bitmap_supported
	xnack     bool
	maxPages  uint64
	ranges    []*rng // sorted by start, disjoint
	restore   []*rng // evicted ranges svm_range_restore_work maps again
	log       []Event
	logNext   int
	logFull   bool
	counters  []Counters // by GPU index
	closed    bool
}

// New returns the range list of a process (svm_range_list_init).
func New(cfg Config) (*Manager, error) {
	if cfg.PageSize == 0 {
		cfg.PageSize = 4096
	}
	if cfg.PageSize < 4096 || cfg.PageSize&(cfg.PageSize-1) != 0 {
		return nil, ErrPageSize
	}
	if len(cfg.GPUs) > MaxGPUs {
		return nil, ErrTooManyGPUs
	}
	if cfg.FindVMA == nil {
		return nil, ErrNoFindVMA
	}
	if cfg.Mapper == nil {
		return nil, ErrNoMapper
	}
	if cfg.MaxRangePages&(cfg.MaxRangePages-1) != 0 {
		return nil, ErrMaxRangePages
	}
	m := &Manager{cfg: cfg, shift: uint(bits.TrailingZeros64(cfg.PageSize)), xnack: cfg.XNACK}
	vram := make([]uint64, 0, len(cfg.GPUs))
	for i, g := range cfg.GPUs {
		if g.ID == 0 || g.ID == abi.KFD_IOCTL_SVM_LOCATION_UNDEFINED {
			return nil, ErrBadGPUID
		}
		for _, id := range m.ids {
			if id == g.ID {
				return nil, ErrBadGPUID
			}
		}
		m.ids = append(m.ids, g.ID)
		m.hive = append(m.hive, g.Hive)
		if !g.NoSVM {
			m.supported |= 1 << i
		}
		vram = append(vram, g.VRAMBytes)
	}
	m.maxPages = cfg.MaxRangePages
	if m.maxPages == 0 {
		m.maxPages = MaxRangePages(vram...)
	}
	n := cfg.LogSize
	if n <= 0 {
		n = defaultLogSize
	}
	m.log = make([]Event, n)
	m.counters = make([]Counters, len(m.ids))
	return m, nil
}

// Counters are one GPU's SVM counters, kfd's proc/<pid>/counters_<gpuid>: retry faults that
// reached svm_range_restore_pages (pdd->faults, svm_range_count_fault) and pages migrated into and
// out of its VRAM (pdd->page_in in svm_migrate_vma_to_vram, page_out in svm_migrate_vma_to_ram).
type Counters struct{ Faults, PageIn, PageOut uint64 }

// Counters returns gpuID's counters; ok is false for a GPU without SVM support, which has no
// counters directory (kfd_procfs_add_sysfs_counters walks svms->bitmap_supported).
func (m *Manager) Counters(gpuID uint32) (c Counters, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	i := m.gpuIdx(gpuID)
	if i < 0 || m.supported&(1<<i) == 0 {
		return Counters{}, false
	}
	return m.counters[i], true
}

// rng is struct svm_range. start and last are page numbers, inclusive.
type rng struct {
	start, last uint64
	preferred   uint32
	prefetch    uint32
	actual      uint32 // actual_loc: 0 (system memory) or the gpu_id holding vram
	granularity uint8
	flags       uint32
	access      uint64 // bitmap_access
	aip         uint64 // bitmap_aip
	mappedToGPU bool
	mapped      uint64 // GPUs this package has mapped some page of the range on
	vram        pageSet
	queueRefs   int32 // queue_refcount: queues using the range as their CWSR area
}

func (m *Manager) newRange(start, last uint64) *rng {
	r := &rng{
		start: start, last: last,
		preferred:   abi.KFD_IOCTL_SVM_LOCATION_UNDEFINED,
		prefetch:    abi.KFD_IOCTL_SVM_LOCATION_UNDEFINED,
		granularity: DefaultGranularity,
		flags:       DefaultFlags,
	}
	if m.xnack {
		r.access = m.supported
	}
	return r
}

// piece returns a copy of r restricted to [s, l] (svm_range_clone + svm_range_split_adjust).
func (r *rng) piece(s, l uint64) *rng {
	c := *r
	c.start, c.last = s, l
	c.vram = r.vram.clip(s, l)
	return &c
}

func (r *rng) npages() uint64 { return r.last - r.start + 1 }

func (m *Manager) gpuIdx(id uint32) int {
	for i, x := range m.ids {
		if x == id {
			return i
		}
	}
	return -1
}

// sameHive is svm_nodes_in_same_hive on gpu indices.
func (m *Manager) sameHive(a, b int) bool {
	return a == b || (m.hive[a] != 0 && m.hive[a] == m.hive[b])
}

// vmaAt returns the VMA containing page pg as page bounds [s, e).
func (m *Manager) vmaAt(pg uint64) (v VMA, s, e uint64, ok bool) {
	addr := pg << m.shift
	v, ok = m.cfg.FindVMA(addr)
	if !ok || v.Start > addr || v.End <= addr {
		return VMA{}, 0, 0, false
	}
	ps := m.cfg.PageSize
	return v, v.Start >> m.shift, (v.End-1)/ps + 1, true
}

func (m *Manager) overlapsBO(s, n uint64) bool {
	return m.cfg.OverlapsBO != nil && m.cfg.OverlapsBO(s<<m.shift, n<<m.shift)
}

// first returns the index of the first range with last >= pg.
func (m *Manager) first(pg uint64) int {
	return sort.Search(len(m.ranges), func(i int) bool { return m.ranges[i].last >= pg })
}

// find is svm_range_from_addr.
func (m *Manager) find(pg uint64) *rng {
	if i := m.first(pg); i < len(m.ranges) && m.ranges[i].start <= pg {
		return m.ranges[i]
	}
	return nil
}

// Ioctl applies one AMDKFD_IOC_SVM call (kfd_ioctl_svm + svm_ioctl) over [start, start+size) in
// bytes. attrs were read from client memory by the caller; GET_ATTR rewrites them in place (type
// and value), also when it fails part way, and kfd_ioctl copies the argument back in either case.
// The result is the errno amdkfd returns; see ValidOp for unknown ops.
func (m *Manager) Ioctl(op uint32, start, size uint64, attrs []abi.SVMAttribute) syscall.Errno {
	mask := m.cfg.PageSize - 1
	if start&mask != 0 || size&mask != 0 || start == 0 || size == 0 {
		return syscall.EINVAL
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return syscall.ESRCH
	}
	s, n := start>>m.shift, size>>m.shift
	switch op {
	case abi.KFD_IOCTL_SVM_OP_SET_ATTR:
		return m.setAttr(s, n, attrs)
	case abi.KFD_IOCTL_SVM_OP_GET_ATTR:
		return m.getAttr(s, n, attrs)
	}
	return syscall.EINVAL
}

// checkAttr is svm_range_check_attr.
func (m *Manager) checkAttr(attrs []abi.SVMAttribute) syscall.Errno {
	for _, a := range attrs {
		gi, v := MaxGPUs, a.Value
		switch a.Type {
		case abi.KFD_IOCTL_SVM_ATTR_PREFERRED_LOC:
			if v != abi.KFD_IOCTL_SVM_LOCATION_SYSMEM && v != abi.KFD_IOCTL_SVM_LOCATION_UNDEFINED {
				gi = m.gpuIdx(v)
			}
		case abi.KFD_IOCTL_SVM_ATTR_PREFETCH_LOC:
			if v != abi.KFD_IOCTL_SVM_LOCATION_SYSMEM {
				gi = m.gpuIdx(v)
			}
		case abi.KFD_IOCTL_SVM_ATTR_ACCESS, abi.KFD_IOCTL_SVM_ATTR_ACCESS_IN_PLACE,
			abi.KFD_IOCTL_SVM_ATTR_NO_ACCESS:
			gi = m.gpuIdx(v)
		case abi.KFD_IOCTL_SVM_ATTR_SET_FLAGS, abi.KFD_IOCTL_SVM_ATTR_CLR_FLAGS,
			abi.KFD_IOCTL_SVM_ATTR_GRANULARITY:
		default:
			return syscall.EINVAL
		}
		if gi < 0 || (gi < MaxGPUs && m.supported&(1<<gi) == 0) {
			return syscall.EINVAL
		}
	}
	return 0
}

// isValid is svm_range_is_valid: every page in a non-device VMA, no BO mapping in the interval.
func (m *Manager) isValid(s, n uint64) syscall.Errno {
	end := s + n
	if end > 1<<(64-m.shift) { // beyond the address space: no VMA there
		return syscall.EFAULT
	}
	for pg := s; pg < end; {
		v, _, e, ok := m.vmaAt(pg)
		if !ok || v.Device {
			return syscall.EFAULT
		}
		pg = min(end, e)
	}
	if m.overlapsBO(s, n) {
		return syscall.EADDRINUSE
	}
	return 0
}

// splitNew is svm_range_split_new: new ranges over [s, l] cut at max_svm_range_pages boundaries.
func (m *Manager) splitNew(s, l uint64) []*rng {
	var out []*rng
	for s <= l {
		e := l
		if mp := m.maxPages; mp > 0 {
			e = min(e, (s+mp)&^(mp-1)-1)
		}
		out = append(out, m.newRange(s, e))
		s = e + 1
	}
	return out
}

// sameAttrs is svm_range_is_same_attrs.
func (m *Manager) sameAttrs(r *rng, attrs []abi.SVMAttribute) bool {
	for _, a := range attrs {
		switch a.Type {
		case abi.KFD_IOCTL_SVM_ATTR_PREFERRED_LOC:
			if r.preferred != a.Value {
				return false
			}
		case abi.KFD_IOCTL_SVM_ATTR_PREFETCH_LOC:
			return false // a prefetch always triggers a migration
		case abi.KFD_IOCTL_SVM_ATTR_ACCESS:
			if r.access&(1<<m.gpuIdx(a.Value)) == 0 {
				return false
			}
		case abi.KFD_IOCTL_SVM_ATTR_ACCESS_IN_PLACE:
			if r.aip&(1<<m.gpuIdx(a.Value)) == 0 {
				return false
			}
		case abi.KFD_IOCTL_SVM_ATTR_NO_ACCESS:
			if (r.access|r.aip)&(1<<m.gpuIdx(a.Value)) != 0 {
				return false
			}
		case abi.KFD_IOCTL_SVM_ATTR_SET_FLAGS:
			if r.flags&a.Value != a.Value {
				return false
			}
		case abi.KFD_IOCTL_SVM_ATTR_CLR_FLAGS:
			if r.flags&a.Value != 0 {
				return false
			}
		case abi.KFD_IOCTL_SVM_ATTR_GRANULARITY:
			if uint32(r.granularity) != a.Value {
				return false
			}
		}
	}
	return true
}

// applyAttrs is svm_range_apply_attrs.
func (m *Manager) applyAttrs(r *rng, attrs []abi.SVMAttribute, updateMapping *bool) {
	for _, a := range attrs {
		switch a.Type {
		case abi.KFD_IOCTL_SVM_ATTR_PREFERRED_LOC:
			r.preferred = a.Value
		case abi.KFD_IOCTL_SVM_ATTR_PREFETCH_LOC:
			r.prefetch = a.Value
		case abi.KFD_IOCTL_SVM_ATTR_ACCESS, abi.KFD_IOCTL_SVM_ATTR_ACCESS_IN_PLACE,
			abi.KFD_IOCTL_SVM_ATTR_NO_ACCESS:
			if !m.xnack {
				*updateMapping = true
			}
			bit := uint64(1) << m.gpuIdx(a.Value)
			r.access &^= bit
			r.aip &^= bit
			switch a.Type {
			case abi.KFD_IOCTL_SVM_ATTR_ACCESS:
				r.access |= bit
			case abi.KFD_IOCTL_SVM_ATTR_ACCESS_IN_PLACE:
				r.aip |= bit
			}
		case abi.KFD_IOCTL_SVM_ATTR_SET_FLAGS:
			*updateMapping = true
			r.flags |= a.Value
		case abi.KFD_IOCTL_SVM_ATTR_CLR_FLAGS:
			*updateMapping = true
			r.flags &^= a.Value
		case abi.KFD_IOCTL_SVM_ATTR_GRANULARITY:
			r.granularity = uint8(min(a.Value, MaxGranularity))
		}
	}
}

func aligned(pg uint64, granularity uint8) bool { return pg&(1<<granularity-1) == 0 }

// setAttr is svm_range_set_attr with svm_range_add.
func (m *Manager) setAttr(s, n uint64, attrs []abi.SVMAttribute) syscall.Errno {
	if e := m.checkAttr(attrs); e != 0 {
		return e
	}
	if e := m.isValid(s, n); e != 0 {
		return e
	}
	last := s + n - 1
	var update, remap, created []*rng
	i := m.first(s)
	next := make([]*rng, 0, len(m.ranges)+4)
	next = append(next, m.ranges[:i]...)
	cur := s
	for ; i < len(m.ranges) && m.ranges[i].start <= last; i++ {
		r := m.ranges[i]
		if r.start > cur { // the gap before r
			gap := m.splitNew(cur, r.start-1)
			next = append(next, gap...)
			created = append(created, gap...)
			update = append(update, gap...)
		}
		cur = min(r.last, last) + 1
		switch {
		case m.sameAttrs(r, attrs) && r.mappedToGPU:
			next = append(next, r) // nothing to do
		case r.start < s || r.last > last:
			// Clone, split off the parts outside [s, last] (svm_range_split_head/tail);
			// a split point not aligned to the granularity remaps the outer piece.
			c := r.piece(max(r.start, s), min(r.last, last))
			if r.start < s {
				head := r.piece(r.start, s-1)
				next = append(next, head)
				if !aligned(s, r.granularity) {
					remap = append(remap, head)
				}
			}
			next = append(next, c)
			update = append(update, c)
			if r.last > last {
				tail := r.piece(last+1, r.last)
				next = append(next, tail)
				if !aligned(last+1, r.granularity) {
					remap = append(remap, tail)
				}
			}
		default:
			next = append(next, r)
			update = append(update, r)
		}
	}
	if cur <= last {
		gap := m.splitNew(cur, last)
		next = append(next, gap...)
		created = append(created, gap...)
		update = append(update, gap...)
	}
	next = append(next, m.ranges[i:]...)
	if !m.xnack && m.cfg.Mem != nil { // svm_range_new(..., update_mem_usage=true)
		var reserved uint64
		for _, r := range created {
			b := r.npages() << m.shift
			if !m.cfg.Mem.Reserve(b) {
				if reserved > 0 {
					m.cfg.Mem.Unreserve(reserved)
				}
				return syscall.ENOMEM
			}
			reserved += b
		}
	}
	// update is in address order; the kernel's lists (built with list_add) are in another order,
	// which only changes the order of page-table updates.
	m.ranges = next
	updateMapping := false
	for _, r := range update {
		before := r.access | r.aip
		m.applyAttrs(r, attrs, &updateMapping)
		if lost := before &^ (r.access | r.aip) & r.mapped; lost != 0 {
			m.unmapGPUs(r, lost, TriggerNoAccess)
		}
	}
	var ret syscall.Errno
	for _, r := range update {
		migrated := m.triggerMigration(r)
		if migrated && (!m.xnack || r.flags&abi.KFD_IOCTL_SVM_FLAG_GPU_ALWAYS_MAPPED != 0) && r.mappedToGPU {
			continue // the eviction's restore work maps the range again
		}
		if !migrated && !updateMapping {
			continue
		}
		if e := m.validateAndMap(r, r.start, r.last, -1); e != 0 {
			ret = e
		}
	}
	for _, r := range remap {
		if e := m.validateAndMap(r, r.start, r.last, -1); e != 0 {
			ret = e
		}
	}
	m.runRestore()
	return ret
}

// getAttr is svm_range_get_attr.
func (m *Manager) getAttr(s, n uint64, attrs []abi.SVMAttribute) syscall.Errno {
	if e := m.isValid(s, n); e != 0 {
		return e
	}
	var getPreferred, getPrefetch, getAccess, getFlags, getGranularity bool
	for _, a := range attrs {
		switch a.Type {
		case abi.KFD_IOCTL_SVM_ATTR_PREFERRED_LOC:
			getPreferred = true
		case abi.KFD_IOCTL_SVM_ATTR_PREFETCH_LOC:
			getPrefetch = true
		case abi.KFD_IOCTL_SVM_ATTR_ACCESS:
			getAccess = true
		case abi.KFD_IOCTL_SVM_ATTR_SET_FLAGS, abi.KFD_IOCTL_SVM_ATTR_CLR_FLAGS:
			getFlags = true
		case abi.KFD_IOCTL_SVM_ATTR_GRANULARITY:
			getGranularity = true
		default: // ACCESS_IN_PLACE, NO_ACCESS and unknown types
			return syscall.EINVAL
		}
	}
	last := s + n - 1
	location := uint32(abi.KFD_IOCTL_SVM_LOCATION_UNDEFINED)
	prefetch := uint32(abi.KFD_IOCTL_SVM_LOCATION_UNDEFINED)
	granularity := uint8(0xff)
	flagsAnd, flagsOr := uint32(0xffffffff), uint32(0)
	var access, aip uint64
	i := m.first(s)
	if i == len(m.ranges) || m.ranges[i].start > last {
		granularity = DefaultGranularity
		flagsAnd, flagsOr = DefaultFlags, DefaultFlags
		if m.xnack {
			access = m.supported
		}
	} else {
		access, aip = m.supported, m.supported
		for ; i < len(m.ranges) && m.ranges[i].start <= last; i++ {
			r := m.ranges[i]
			if getPreferred {
				if r.preferred == abi.KFD_IOCTL_SVM_LOCATION_UNDEFINED ||
					(location != abi.KFD_IOCTL_SVM_LOCATION_UNDEFINED && location != r.preferred) {
					location = abi.KFD_IOCTL_SVM_LOCATION_UNDEFINED
					getPreferred = false
				} else {
					location = r.preferred
				}
			}
			if getPrefetch {
				if r.prefetch == abi.KFD_IOCTL_SVM_LOCATION_UNDEFINED ||
					(prefetch != abi.KFD_IOCTL_SVM_LOCATION_UNDEFINED && prefetch != r.prefetch) {
					prefetch = abi.KFD_IOCTL_SVM_LOCATION_UNDEFINED
					getPrefetch = false
				} else {
					prefetch = r.prefetch
				}
			}
			if getAccess {
				access &= r.access
				aip &= r.aip
			}
			if getFlags {
				flagsAnd &= r.flags
				flagsOr |= r.flags
			}
			if getGranularity && r.granularity < granularity {
				granularity = r.granularity
			}
		}
	}
	for i := range attrs {
		a := &attrs[i]
		switch a.Type {
		case abi.KFD_IOCTL_SVM_ATTR_PREFERRED_LOC:
			a.Value = location
		case abi.KFD_IOCTL_SVM_ATTR_PREFETCH_LOC:
			a.Value = prefetch
		case abi.KFD_IOCTL_SVM_ATTR_ACCESS:
			gi := m.gpuIdx(a.Value)
			if gi < 0 {
				return syscall.EINVAL
			}
			switch {
			case access&(1<<gi) != 0:
				a.Type = abi.KFD_IOCTL_SVM_ATTR_ACCESS
			case aip&(1<<gi) != 0:
				a.Type = abi.KFD_IOCTL_SVM_ATTR_ACCESS_IN_PLACE
			default:
				a.Type = abi.KFD_IOCTL_SVM_ATTR_NO_ACCESS
			}
		case abi.KFD_IOCTL_SVM_ATTR_SET_FLAGS:
			a.Value = flagsAnd
		case abi.KFD_IOCTL_SVM_ATTR_CLR_FLAGS:
			a.Value = ^flagsOr
		case abi.KFD_IOCTL_SVM_ATTR_GRANULARITY:
			a.Value = uint32(granularity)
		}
	}
	return 0
}

// QueueBufferGet is kfd_queue_buffer_svm_get: [addr, addr+size) is usable as a queue's
// context-save area on gpuID when every page is in ranges that are mapped to a GPU, grant the GPU
// ACCESS or ACCESS_IN_PLACE and carry GPU_ALWAYS_MAPPED (libhsakmt 1.11+ registers the area so).
// Those ranges are then referenced until QueueBufferPut. False otherwise (EINVAL for the caller).
func (m *Manager) QueueBufferGet(gpuID uint32, addr, size uint64) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	gi := m.gpuIdx(gpuID)
	if m.closed || gi < 0 || size == 0 {
		return false
	}
	pg, n := addr>>m.shift, size>>m.shift
	var got []*rng
	for n > 0 {
		r := m.find(pg)
		if r == nil || !r.mappedToGPU || (r.access|r.aip)&(1<<gi) == 0 ||
			r.flags&abi.KFD_IOCTL_SVM_FLAG_GPU_ALWAYS_MAPPED == 0 {
			return false
		}
		got = append(got, r)
		k := r.last - pg + 1
		if k >= n {
			break
		}
		n -= k
		pg += k
	}
	for _, r := range got {
		r.queueRefs++
	}
	return true
}

// QueueBufferPut is kfd_queue_buffer_svm_put: drops the references QueueBufferGet took on the
// ranges over [addr, addr+size) (ranges split since then each drop one).
func (m *Manager) QueueBufferPut(addr, size uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if size == 0 {
		return
	}
	s, l := addr>>m.shift, (addr+size-1)>>m.shift
	for i := m.first(s); i < len(m.ranges) && m.ranges[i].start <= l; i++ {
		if m.ranges[i].queueRefs > 0 {
			m.ranges[i].queueRefs--
		}
	}
}

// Munmap is svm_range_unmap_from_cpu for [start, start+size) in bytes: the client unmapped CPU
// memory (MMU_NOTIFY_UNMAP). GPUs are unmapped, ranges split, the unmapped parts dropped.
func (m *Manager) Munmap(start, size uint64) {
	if size == 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	end := start + size - 1
	if end < start {
		end = ^uint64(0)
	}
	s, last := start>>m.shift, end>>m.shift
	i := m.first(s)
	next := make([]*rng, 0, len(m.ranges)+1)
	next = append(next, m.ranges[:i]...)
	var freed uint64
	for ; i < len(m.ranges) && m.ranges[i].start <= last; i++ {
		r := m.ranges[i]
		a, b := max(s, r.start), min(last, r.last)
		m.unmapFromGPUs(r, a, b, TriggerUnmapFromCPU)
		if r.start < a {
			next = append(next, r.piece(r.start, a-1))
		}
		if r.last > b {
			next = append(next, r.piece(b+1, r.last))
		}
		freed += b - a + 1
	}
	next = append(next, m.ranges[i:]...)
	m.ranges = next
	if freed > 0 && !m.xnack && m.cfg.Mem != nil { // svm_range_free(prange, do_unmap=true)
		m.cfg.Mem.Unreserve(freed << m.shift)
	}
}

// SetXNACK is the SVM part of kfd_ioctl_set_xnack_mode (svm_range_switch_xnack_reserve_mem):
// ranges are charged to the USERPTR limit when XNACK goes off (ENOMEM and no change if they do
// not fit) and uncharged when it goes on. Attributes and mappings of existing ranges do not
// change. The caller checks EBUSY (queues exist) and EPERM (a GPU without XNACK) first.
func (m *Manager) SetXNACK(on bool) syscall.Errno {
	m.mu.Lock()
	defer m.mu.Unlock()
	if on == m.xnack {
		return 0
	}
	if m.cfg.Mem != nil && !m.closed {
		if on {
			for _, r := range m.ranges {
				m.cfg.Mem.Unreserve(r.npages() << m.shift)
			}
		} else {
			var reserved uint64
			for _, r := range m.ranges {
				b := r.npages() << m.shift
				if !m.cfg.Mem.Reserve(b) {
					if reserved > 0 {
						m.cfg.Mem.Unreserve(reserved)
					}
					return syscall.ENOMEM
				}
				reserved += b
			}
		}
	}
	m.xnack = on
	return 0
}

// XNACK reports whether retry faults are enabled.
func (m *Manager) XNACK() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.xnack
}

// Close is svm_range_list_fini: every range is freed and its USERPTR charge returned. GPU page
// tables are not touched (they are torn down with the process's VMs). Later calls do nothing
// (Ioctl returns ESRCH, Fault false).
func (m *Manager) Close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	if !m.xnack && m.cfg.Mem != nil {
		var total uint64
		for _, r := range m.ranges {
			total += r.npages() << m.shift
		}
		if total > 0 {
			m.cfg.Mem.Unreserve(total)
		}
	}
	m.ranges, m.restore, m.closed = nil, nil, true
}

// RangeInfo describes one range for debugfs.
type RangeInfo struct {
	Start, End    uint64 // bytes, [Start, End)
	PreferredLoc  uint32
	PrefetchLoc   uint32
	ActualLoc     uint32 // 0: system memory, else the gpu_id the data would live on
	VRAMPages     uint64
	Granularity   uint8
	Flags         uint32
	Access        []uint32 // gpu_ids with ACCESS
	AccessInPlace []uint32 // gpu_ids with ACCESS_IN_PLACE
	Mapped        []uint32 // gpu_ids with GPU page-table entries for some page of the range
	MappedToGPU   bool     // prange->mapped_to_gpu
}

func (m *Manager) idList(bm uint64) []uint32 {
	var out []uint32
	for ; bm != 0; bm &= bm - 1 {
		out = append(out, m.ids[bits.TrailingZeros64(bm)])
	}
	return out
}

// Ranges returns the ranges in address order.
func (m *Manager) Ranges() []RangeInfo {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]RangeInfo, len(m.ranges))
	for i, r := range m.ranges {
		out[i] = RangeInfo{
			Start: r.start << m.shift, End: (r.last + 1) << m.shift,
			PreferredLoc: r.preferred, PrefetchLoc: r.prefetch, ActualLoc: r.actual,
			VRAMPages: r.vram.count(), Granularity: r.granularity, Flags: r.flags,
			Access: m.idList(r.access), AccessInPlace: m.idList(r.aip), Mapped: m.idList(r.mapped),
			MappedToGPU: r.mappedToGPU,
		}
	}
	return out
}
