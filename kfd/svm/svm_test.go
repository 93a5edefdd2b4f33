package svm

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/kfdemu/kfdemu/kfd/abi"
)

const (
	ps    = 4096
	base  = 0x10000000 // start of the main test VMA (page-aligned, 2 MiB aligned)
	g0    = 0x1001     // gpu_id of GPU 0 (hive 7)
	g1    = 0x2002     // GPU 1 (hive 7)
	g2    = 0x3003     // GPU 2 (no hive)
	undef = abi.KFD_IOCTL_SVM_LOCATION_UNDEFINED
	sys   = abi.KFD_IOCTL_SVM_LOCATION_SYSMEM
)

type pte struct{ w, x bool }

type call struct {
	op            string
	gpu           int
	start, npages uint64
	w, x          bool
}

// fakeMapper records calls and keeps a page table per GPU.
type fakeMapper struct {
	calls []call
	pt    map[int]map[uint64]pte
	fail  error
}

func (f *fakeMapper) MapGPU(g int, start, n uint64, w, x bool) error {
	if f.fail != nil {
		return f.fail
	}
	f.calls = append(f.calls, call{"map", g, start, n, w, x})
	if f.pt[g] == nil {
		f.pt[g] = map[uint64]pte{}
	}
	for p := start / ps; p < start/ps+n; p++ {
		f.pt[g][p] = pte{w, x}
	}
	return nil
}

func (f *fakeMapper) UnmapGPU(g int, start, n uint64) error {
	f.calls = append(f.calls, call{"unmap", g, start, n, false, false})
	for p := start / ps; p < start/ps+n; p++ {
		delete(f.pt[g], p)
	}
	return nil
}

func (f *fakeMapper) reset() { f.calls = nil }

// mapped returns the sorted pages (as byte addresses) GPU g has PTEs for.
func (f *fakeMapper) mapped(g int) []uint64 {
	var out []uint64
	for p := range f.pt[g] {
		out = append(out, p*ps)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

type fakeMem struct {
	limit, used uint64
}

func (a *fakeMem) Reserve(b uint64) bool {
	if a.limit != 0 && a.used+b > a.limit {
		return false
	}
	a.used += b
	return true
}

func (a *fakeMem) Unreserve(b uint64) {
	if b > a.used {
		panic(fmt.Sprintf("unreserve %d > used %d", b, a.used))
	}
	a.used -= b
}

type env struct {
	t    testing.TB
	m    *Manager
	mp   *fakeMapper
	mem  *fakeMem
	vmas []VMA
	bos  [][2]uint64 // [start, end)
}

func newEnv(t testing.TB, xnack bool, mod ...func(*Config)) *env {
	e := &env{t: t, mp: &fakeMapper{pt: map[int]map[uint64]pte{}}, mem: &fakeMem{}}
	e.vmas = []VMA{
		{Start: base, End: base + 64<<20, Read: true, Write: true},
		{Start: 0x20000000, End: 0x20000000 + 1<<20, Read: true},                            // read-only
		{Start: 0x30000000, End: 0x30000000 + 1<<20, Read: true, Write: true, Device: true}, // device
		{Start: 0x40000000, End: 0x40000000 + 8<<20, Read: true, Write: true, HeapStack: true},
		{Start: 0x50000000, End: 0x50000000 + 1<<20}, // PROT_NONE
	}
	cfg := Config{
		GPUs: []GPU{
			{ID: g0, Hive: 7, VRAMBytes: 64 << 30},
			{ID: g1, Hive: 7, VRAMBytes: 64 << 30},
			{ID: g2, VRAMBytes: 16 << 30},
		},
		XNACK: xnack,
		FindVMA: func(a uint64) (VMA, bool) {
			for _, v := range e.vmas {
				if a >= v.Start && a < v.End {
					return v, true
				}
			}
			return VMA{}, false
		},
		OverlapsBO: func(s, n uint64) bool {
			for _, b := range e.bos {
				if s < b[1] && b[0] < s+n {
					return true
				}
			}
			return false
		},
		Mapper: e.mp,
		Mem:    e.mem,
	}
	for _, f := range mod {
		f(&cfg)
	}
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.m = m
	return e
}

func at(t, v uint32) abi.SVMAttribute { return abi.SVMAttribute{Type: t, Value: v} }

func (e *env) set(start, size uint64, attrs ...abi.SVMAttribute) syscall.Errno {
	return e.m.Ioctl(abi.KFD_IOCTL_SVM_OP_SET_ATTR, start, size, attrs)
}

func (e *env) mustSet(start, size uint64, attrs ...abi.SVMAttribute) {
	e.t.Helper()
	if err := e.set(start, size, attrs...); err != 0 {
		e.t.Fatalf("SET_ATTR %#x+%#x %v: %v", start, size, attrs, err)
	}
}

func (e *env) get(start, size uint64, attrs ...abi.SVMAttribute) ([]abi.SVMAttribute, syscall.Errno) {
	a := append([]abi.SVMAttribute(nil), attrs...)
	err := e.m.Ioctl(abi.KFD_IOCTL_SVM_OP_GET_ATTR, start, size, a)
	return a, err
}

func (e *env) mustGet(start, size uint64, attrs ...abi.SVMAttribute) []abi.SVMAttribute {
	e.t.Helper()
	a, err := e.get(start, size, attrs...)
	if err != 0 {
		e.t.Fatalf("GET_ATTR %#x+%#x: %v", start, size, err)
	}
	return a
}

// rangeAt returns the range containing addr.
func (e *env) rangeAt(addr uint64) RangeInfo {
	e.t.Helper()
	for _, r := range e.m.Ranges() {
		if addr >= r.Start && addr < r.End {
			return r
		}
	}
	e.t.Fatalf("no range at %#x", addr)
	return RangeInfo{}
}

// bounds returns the ranges as [start, end) pairs.
func (e *env) bounds() [][2]uint64 {
	var out [][2]uint64
	for _, r := range e.m.Ranges() {
		out = append(out, [2]uint64{r.Start, r.End})
	}
	return out
}

func pages(start, n uint64) []uint64 {
	var out []uint64
	for i := uint64(0); i < n; i++ {
		out = append(out, start+i*ps)
	}
	return out
}

func TestNewConfigErrors(t *testing.T) {
	vma := func(uint64) (VMA, bool) { return VMA{}, false }
	mp := &fakeMapper{}
	many := make([]GPU, 65)
	for i := range many {
		many[i].ID = uint32(i + 1)
	}
	for _, tc := range []struct {
		name string
		cfg  Config
		want error
	}{
		{"page size", Config{PageSize: 3000, FindVMA: vma, Mapper: mp}, ErrPageSize},
		{"too many", Config{GPUs: many, FindVMA: vma, Mapper: mp}, ErrTooManyGPUs},
		{"id 0", Config{GPUs: []GPU{{ID: 0}}, FindVMA: vma, Mapper: mp}, ErrBadGPUID},
		{"id undefined", Config{GPUs: []GPU{{ID: undef}}, FindVMA: vma, Mapper: mp}, ErrBadGPUID},
		{"duplicate", Config{GPUs: []GPU{{ID: 5}, {ID: 5}}, FindVMA: vma, Mapper: mp}, ErrBadGPUID},
		{"no vma", Config{Mapper: mp}, ErrNoFindVMA},
		{"no mapper", Config{FindVMA: vma}, ErrNoMapper},
		{"max pages", Config{FindVMA: vma, Mapper: mp, MaxRangePages: 12}, ErrMaxRangePages},
		{"ok", Config{GPUs: many[:64], FindVMA: vma, Mapper: mp}, nil},
	} {
		if _, err := New(tc.cfg); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
}

func TestValidateArgsAndOp(t *testing.T) {
	for _, tc := range []struct {
		usize, nattr uint32
		want         syscall.Errno
	}{
		{24, 0, 0}, {23, 0, syscall.EINVAL}, {32, 1, 0}, {31, 1, syscall.EINVAL},
		{16383, 2044, 0}, {16383, 2045, syscall.EINVAL}, {16383, 0xffffffff, syscall.EINVAL},
	} {
		if got := ValidateArgs(tc.usize, tc.nattr); got != tc.want {
			t.Errorf("ValidateArgs(%d, %d) = %v, want %v", tc.usize, tc.nattr, got, tc.want)
		}
	}
	if !ValidOp(0) || !ValidOp(1) || ValidOp(2) {
		t.Error("ValidOp")
	}
}

func TestMaxRangePages(t *testing.T) {
	for _, tc := range []struct {
		vram []uint64
		want uint64
	}{
		{nil, 0},
		{[]uint64{64 << 30}, 1 << 18},          // 1/32 of 64 GiB is 2 GiB: capped at 1 GiB
		{[]uint64{16 << 30}, 1 << 17},          // 512 MiB
		{[]uint64{12 << 30}, 1 << 16},          // 384 MiB rounded down to 256 MiB
		{[]uint64{0}, 1 << 9},                  // clamped up to 2 MiB
		{[]uint64{64 << 30, 8 << 30}, 1 << 16}, // the minimum
	} {
		if got := MaxRangePages(tc.vram...); got != tc.want {
			t.Errorf("MaxRangePages(%v) = %#x, want %#x", tc.vram, got, tc.want)
		}
	}
}

func TestIoctlErrno(t *testing.T) {
	const op = abi.KFD_IOCTL_SVM_OP_SET_ATTR
	for _, tc := range []struct {
		name        string
		op          uint32
		start, size uint64
		attrs       []abi.SVMAttribute
		want        syscall.Errno
	}{
		{"unaligned start", op, base + 1, ps, nil, syscall.EINVAL},
		{"unaligned size", op, base, ps + 8, nil, syscall.EINVAL},
		{"zero start", op, 0, ps, nil, syscall.EINVAL},
		{"zero size", op, base, 0, nil, syscall.EINVAL},
		{"unknown op", 2, base, ps, nil, syscall.EINVAL},
		{"no attrs", op, base, ps, nil, 0},
		{"unknown attr type", op, base, ps, []abi.SVMAttribute{at(8, 0)}, syscall.EINVAL},
		{"access unknown gpu", op, base, ps, []abi.SVMAttribute{at(abi.KFD_IOCTL_SVM_ATTR_ACCESS, 0x9999)}, syscall.EINVAL},
		{"access sysmem", op, base, ps, []abi.SVMAttribute{at(abi.KFD_IOCTL_SVM_ATTR_ACCESS, sys)}, syscall.EINVAL},
		{"aip unknown gpu", op, base, ps, []abi.SVMAttribute{at(abi.KFD_IOCTL_SVM_ATTR_ACCESS_IN_PLACE, 7)}, syscall.EINVAL},
		{"no access unknown gpu", op, base, ps, []abi.SVMAttribute{at(abi.KFD_IOCTL_SVM_ATTR_NO_ACCESS, 7)}, syscall.EINVAL},
		{"preferred unknown gpu", op, base, ps, []abi.SVMAttribute{at(abi.KFD_IOCTL_SVM_ATTR_PREFERRED_LOC, 7)}, syscall.EINVAL},
		{"preferred undefined", op, base, ps, []abi.SVMAttribute{at(abi.KFD_IOCTL_SVM_ATTR_PREFERRED_LOC, undef)}, 0},
		{"preferred sysmem", op, base, ps, []abi.SVMAttribute{at(abi.KFD_IOCTL_SVM_ATTR_PREFERRED_LOC, sys)}, 0},
		{"prefetch undefined", op, base, ps, []abi.SVMAttribute{at(abi.KFD_IOCTL_SVM_ATTR_PREFETCH_LOC, undef)}, syscall.EINVAL},
		{"prefetch gpu", op, base, ps, []abi.SVMAttribute{at(abi.KFD_IOCTL_SVM_ATTR_PREFETCH_LOC, g1)}, 0},
		{"bad attr after good", op, base, ps, []abi.SVMAttribute{at(abi.KFD_IOCTL_SVM_ATTR_SET_FLAGS, 1), at(99, 0)}, syscall.EINVAL},
		{"attr check before vma check", op, 0x60000000, ps, []abi.SVMAttribute{at(99, 0)}, syscall.EINVAL},
		{"no vma", op, 0x60000000, ps, nil, syscall.EFAULT},
		{"past the vma", op, base + 64<<20 - ps, 2 * ps, nil, syscall.EFAULT},
		{"device vma", op, 0x30000000, ps, nil, syscall.EFAULT},
		{"wraps", op, base, 1<<64 - base, nil, syscall.EFAULT},
		{"bo overlap", op, base + 8*ps, 4 * ps, nil, syscall.EADDRINUSE},
		{"get bo overlap", abi.KFD_IOCTL_SVM_OP_GET_ATTR, base + 8*ps, 4 * ps, nil, syscall.EADDRINUSE},
		{"get no vma", abi.KFD_IOCTL_SVM_OP_GET_ATTR, 0x60000000, ps, nil, syscall.EFAULT},
		{"get vma check before attr check", abi.KFD_IOCTL_SVM_OP_GET_ATTR, 0x60000000, ps, []abi.SVMAttribute{at(99, 0)}, syscall.EFAULT},
		{"get access in place", abi.KFD_IOCTL_SVM_OP_GET_ATTR, base, ps, []abi.SVMAttribute{at(abi.KFD_IOCTL_SVM_ATTR_ACCESS_IN_PLACE, g0)}, syscall.EINVAL},
		{"get no access", abi.KFD_IOCTL_SVM_OP_GET_ATTR, base, ps, []abi.SVMAttribute{at(abi.KFD_IOCTL_SVM_ATTR_NO_ACCESS, g0)}, syscall.EINVAL},
		{"get unknown", abi.KFD_IOCTL_SVM_OP_GET_ATTR, base, ps, []abi.SVMAttribute{at(8, 0)}, syscall.EINVAL},
		{"get access unknown gpu", abi.KFD_IOCTL_SVM_OP_GET_ATTR, base, ps, []abi.SVMAttribute{at(abi.KFD_IOCTL_SVM_ATTR_ACCESS, 5)}, syscall.EINVAL},
		{"prot none vma: attrs apply, mapping fails", op, 0x50000000, ps, []abi.SVMAttribute{at(abi.KFD_IOCTL_SVM_ATTR_ACCESS, g0)}, syscall.EFAULT},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, false)
			e.bos = [][2]uint64{{base + 10*ps, base + 11*ps}}
			a := append([]abi.SVMAttribute(nil), tc.attrs...)
			if got := e.m.Ioctl(tc.op, tc.start, tc.size, a); got != tc.want {
				t.Errorf("errno %v, want %v", got, tc.want)
			}
		})
	}
}

func TestUnsupportedGPU(t *testing.T) {
	e := newEnv(t, true, func(c *Config) { c.GPUs[2].NoSVM = true })
	if err := e.set(base, ps, at(abi.KFD_IOCTL_SVM_ATTR_ACCESS, g2)); err != syscall.EINVAL {
		t.Errorf("ACCESS on a GPU without SVM: %v", err)
	}
	if err := e.set(base, ps, at(abi.KFD_IOCTL_SVM_ATTR_PREFETCH_LOC, g2)); err != syscall.EINVAL {
		t.Errorf("PREFETCH_LOC on a GPU without SVM: %v", err)
	}
	// Unregistered defaults with XNACK on grant ACCESS to supported GPUs only.
	a := e.mustGet(base, ps, at(abi.KFD_IOCTL_SVM_ATTR_ACCESS, g0), at(abi.KFD_IOCTL_SVM_ATTR_ACCESS, g2))
	if a[0].Type != abi.KFD_IOCTL_SVM_ATTR_ACCESS || a[1].Type != abi.KFD_IOCTL_SVM_ATTR_NO_ACCESS {
		t.Errorf("defaults: %v", a)
	}
	if e.m.Fault(2, base, false) {
		t.Error("fault on a GPU without SVM resolved")
	}
	if _, ok := e.m.Counters(g2); ok {
		t.Error("counters for a GPU without SVM (amdkfd creates no counters_<gpuid> for it)")
	}
	if c, ok := e.m.Counters(g0); !ok || c != (Counters{}) {
		t.Errorf("GPU 0's counters %+v, %v", c, ok)
	}
}

func TestENOMEM(t *testing.T) {
	e := newEnv(t, false)
	e.mem.limit = 8 * ps
	e.mustSet(base, 4*ps)
	if err := e.set(base, 16*ps); err != syscall.ENOMEM {
		t.Fatalf("over the limit: %v", err)
	}
	if e.mem.used != 4*ps || len(e.m.Ranges()) != 1 {
		t.Errorf("failed SET changed state: used %d ranges %v", e.mem.used, e.bounds())
	}
	e.mustSet(base, 8*ps) // the gap of 4 pages still fits
	if e.mem.used != 8*ps {
		t.Errorf("used %d", e.mem.used)
	}
	// With XNACK on nothing is charged.
	x := newEnv(t, true)
	x.mem.limit = ps
	x.mustSet(base, 64*ps)
	if x.mem.used != 0 {
		t.Errorf("xnack on charged %d", x.mem.used)
	}
	// Switching XNACK off charges every range; it fails with ENOMEM and keeps XNACK on.
	if err := x.m.SetXNACK(false); err != syscall.ENOMEM || !x.m.XNACK() || x.mem.used != 0 {
		t.Errorf("SetXNACK(false) over limit: %v xnack=%v used=%d", err, x.m.XNACK(), x.mem.used)
	}
	x.mem.limit = 0
	if err := x.m.SetXNACK(false); err != 0 || x.m.XNACK() || x.mem.used != 64*ps {
		t.Errorf("SetXNACK(false): %v xnack=%v used=%d", err, x.m.XNACK(), x.mem.used)
	}
	if err := x.m.SetXNACK(true); err != 0 || x.mem.used != 0 {
		t.Errorf("SetXNACK(true): %v used=%d", err, x.mem.used)
	}
}

func TestEveryAttribute(t *testing.T) {
	all := []abi.SVMAttribute{
		at(abi.KFD_IOCTL_SVM_ATTR_PREFERRED_LOC, 0), at(abi.KFD_IOCTL_SVM_ATTR_PREFETCH_LOC, 0),
		at(abi.KFD_IOCTL_SVM_ATTR_ACCESS, g0), at(abi.KFD_IOCTL_SVM_ATTR_ACCESS, g1),
		at(abi.KFD_IOCTL_SVM_ATTR_ACCESS, g2), at(abi.KFD_IOCTL_SVM_ATTR_SET_FLAGS, 0),
		at(abi.KFD_IOCTL_SVM_ATTR_CLR_FLAGS, 0), at(abi.KFD_IOCTL_SVM_ATTR_GRANULARITY, 0),
	}
	type result struct {
		pref, prefetch uint32
		access         [3]uint32 // returned types for g0, g1, g2
		set, clr       uint32
		gran           uint32
	}
	const (
		A  = abi.KFD_IOCTL_SVM_ATTR_ACCESS
		IP = abi.KFD_IOCTL_SVM_ATTR_ACCESS_IN_PLACE
		NA = abi.KFD_IOCTL_SVM_ATTR_NO_ACCESS
	)
	def := result{undef, undef, [3]uint32{NA, NA, NA}, DefaultFlags, ^uint32(DefaultFlags), 9}
	for _, tc := range []struct {
		name  string
		xnack bool
		attrs []abi.SVMAttribute
		want  result
	}{
		{"unregistered", false, nil, def},
		{"unregistered xnack", true, nil, result{undef, undef, [3]uint32{A, A, A}, DefaultFlags, ^uint32(DefaultFlags), 9}},
		{"registered defaults", false, []abi.SVMAttribute{}, def},
		{"preferred gpu", false, []abi.SVMAttribute{at(abi.KFD_IOCTL_SVM_ATTR_PREFERRED_LOC, g1)},
			result{g1, undef, def.access, def.set, def.clr, 9}},
		{"preferred sysmem", false, []abi.SVMAttribute{at(abi.KFD_IOCTL_SVM_ATTR_PREFERRED_LOC, sys)},
			result{sys, undef, def.access, def.set, def.clr, 9}},
		{"prefetch gpu", false, []abi.SVMAttribute{at(abi.KFD_IOCTL_SVM_ATTR_PREFETCH_LOC, g2)},
			result{undef, g2, def.access, def.set, def.clr, 9}},
		{"prefetch sysmem", false, []abi.SVMAttribute{at(abi.KFD_IOCTL_SVM_ATTR_PREFETCH_LOC, sys)},
			result{undef, sys, def.access, def.set, def.clr, 9}},
		{"access", false, []abi.SVMAttribute{at(A, g0), at(IP, g1)},
			result{undef, undef, [3]uint32{A, IP, NA}, def.set, def.clr, 9}},
		{"access last wins", false, []abi.SVMAttribute{at(A, g0), at(IP, g0), at(IP, g2), at(NA, g2)},
			result{undef, undef, [3]uint32{IP, NA, NA}, def.set, def.clr, 9}},
		{"no access under xnack", true, []abi.SVMAttribute{at(NA, g1)},
			result{undef, undef, [3]uint32{A, NA, A}, def.set, def.clr, 9}},
		{"set flags", false, []abi.SVMAttribute{at(abi.KFD_IOCTL_SVM_ATTR_SET_FLAGS, abi.KFD_IOCTL_SVM_FLAG_GPU_RO|abi.KFD_IOCTL_SVM_FLAG_GPU_EXEC)},
			result{undef, undef, def.access, DefaultFlags | 0x18, ^uint32(DefaultFlags | 0x18), 9}},
		{"clr flags", false, []abi.SVMAttribute{at(abi.KFD_IOCTL_SVM_ATTR_CLR_FLAGS, abi.KFD_IOCTL_SVM_FLAG_COHERENT)},
			result{undef, undef, def.access, 1, ^uint32(1), 9}},
		{"set then clr", false, []abi.SVMAttribute{at(abi.KFD_IOCTL_SVM_ATTR_SET_FLAGS, 0xff), at(abi.KFD_IOCTL_SVM_ATTR_CLR_FLAGS, 0x0f)},
			result{undef, undef, def.access, 0xf0, ^uint32(0xf0), 9}},
		{"unknown flag bits are kept", false, []abi.SVMAttribute{at(abi.KFD_IOCTL_SVM_ATTR_SET_FLAGS, 0x80000000)},
			result{undef, undef, def.access, DefaultFlags | 0x80000000, ^uint32(DefaultFlags | 0x80000000), 9}},
		{"granularity", false, []abi.SVMAttribute{at(abi.KFD_IOCTL_SVM_ATTR_GRANULARITY, 0)},
			result{undef, undef, def.access, def.set, def.clr, 0}},
		{"granularity capped", false, []abi.SVMAttribute{at(abi.KFD_IOCTL_SVM_ATTR_GRANULARITY, 1000)},
			result{undef, undef, def.access, def.set, def.clr, 0x3f}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.xnack)
			if tc.attrs != nil {
				e.mustSet(base, 16*ps, tc.attrs...)
			}
			a := e.mustGet(base, 16*ps, all...)
			got := result{a[0].Value, a[1].Value, [3]uint32{a[2].Type, a[3].Type, a[4].Type}, a[5].Value, a[6].Value, a[7].Value}
			if got != tc.want {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
			// ACCESS queries keep their gpu_id in value.
			if a[2].Value != g0 || a[3].Value != g1 || a[4].Value != g2 {
				t.Errorf("access values changed: %v", a[2:5])
			}
		})
	}
}

func TestGetAggregation(t *testing.T) {
	pref := at(abi.KFD_IOCTL_SVM_ATTR_PREFERRED_LOC, 0)
	prefetch := at(abi.KFD_IOCTL_SVM_ATTR_PREFETCH_LOC, 0)
	flags := at(abi.KFD_IOCTL_SVM_ATTR_SET_FLAGS, 0)
	clr := at(abi.KFD_IOCTL_SVM_ATTR_CLR_FLAGS, 0)
	gran := at(abi.KFD_IOCTL_SVM_ATTR_GRANULARITY, 0)
	acc := func(id uint32) abi.SVMAttribute { return at(abi.KFD_IOCTL_SVM_ATTR_ACCESS, id) }
	A, IP, NA := uint32(abi.KFD_IOCTL_SVM_ATTR_ACCESS), uint32(abi.KFD_IOCTL_SVM_ATTR_ACCESS_IN_PLACE), uint32(abi.KFD_IOCTL_SVM_ATTR_NO_ACCESS)
	type seg struct {
		page, n uint64
		attrs   []abi.SVMAttribute
	}
	for _, tc := range []struct {
		name  string
		segs  []seg
		query abi.SVMAttribute
		want  abi.SVMAttribute
	}{
		{"preferred agree", []seg{{0, 4, []abi.SVMAttribute{at(0, g0)}}, {4, 4, []abi.SVMAttribute{at(0, g0), at(7, 3)}}}, pref, at(0, g0)},
		{"preferred differ", []seg{{0, 4, []abi.SVMAttribute{at(0, g0)}}, {4, 4, []abi.SVMAttribute{at(0, g1)}}}, pref, at(0, undef)},
		{"preferred one undefined", []seg{{0, 4, []abi.SVMAttribute{at(0, g0)}}, {4, 4, []abi.SVMAttribute{at(7, 3)}}}, pref, at(0, undef)},
		{"preferred undefined first", []seg{{0, 4, []abi.SVMAttribute{at(7, 3)}}, {4, 4, []abi.SVMAttribute{at(0, g0)}}}, pref, at(0, undef)},
		{"prefetch differ", []seg{{0, 4, []abi.SVMAttribute{at(1, sys)}}, {4, 4, []abi.SVMAttribute{at(1, g2)}}}, prefetch, at(1, undef)},
		{"prefetch agree", []seg{{0, 4, []abi.SVMAttribute{at(1, g2)}}, {4, 4, []abi.SVMAttribute{at(1, g2), at(7, 2)}}}, prefetch, at(1, g2)},
		{"flags intersection", []seg{{0, 4, []abi.SVMAttribute{at(5, 0x18)}}, {4, 4, []abi.SVMAttribute{at(5, 0x30)}}}, flags, at(5, DefaultFlags|0x10)},
		{"clr flags complement of union", []seg{{0, 4, []abi.SVMAttribute{at(5, 0x18)}}, {4, 4, []abi.SVMAttribute{at(5, 0x30)}}}, clr, at(6, ^uint32(DefaultFlags|0x38))},
		{"granularity min", []seg{{0, 4, []abi.SVMAttribute{at(7, 5)}}, {4, 4, []abi.SVMAttribute{at(7, 2)}}}, gran, at(7, 2)},
		{"access all ranges", []seg{{0, 4, []abi.SVMAttribute{at(2, g0)}}, {4, 4, []abi.SVMAttribute{at(2, g0), at(7, 1)}}}, acc(g0), at(A, g0)},
		{"access one range", []seg{{0, 4, []abi.SVMAttribute{at(2, g0)}}, {4, 4, []abi.SVMAttribute{at(7, 1)}}}, acc(g0), at(NA, g0)},
		{"access vs in place", []seg{{0, 4, []abi.SVMAttribute{at(2, g0)}}, {4, 4, []abi.SVMAttribute{at(3, g0)}}}, acc(g0), at(NA, g0)},
		{"in place all ranges", []seg{{0, 4, []abi.SVMAttribute{at(3, g1)}}, {4, 4, []abi.SVMAttribute{at(3, g1), at(7, 1)}}}, acc(g1), at(IP, g1)},
		{"gap ignored", []seg{{0, 4, []abi.SVMAttribute{at(0, g2), at(2, g2)}}, {12, 4, []abi.SVMAttribute{at(0, g2), at(2, g2)}}}, pref, at(0, g2)},
		{"gap ignored access", []seg{{0, 4, []abi.SVMAttribute{at(0, g2), at(2, g2)}}, {12, 4, []abi.SVMAttribute{at(0, g2), at(2, g2)}}}, acc(g2), at(A, g2)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, false)
			for _, s := range tc.segs {
				e.mustSet(base+s.page*ps, s.n*ps, s.attrs...)
			}
			if n := len(e.m.Ranges()); n != len(tc.segs) {
				t.Fatalf("%d ranges: %v", n, e.bounds())
			}
			a := e.mustGet(base, 16*ps, tc.query)
			if a[0] != tc.want {
				t.Errorf("got %+v, want %+v", a[0], tc.want)
			}
		})
	}
	// GET fails on a bad gpu_id after filling the attributes before it; the caller copies out.
	e := newEnv(t, false)
	e.mustSet(base, ps, at(0, g1))
	a, err := e.get(base, ps, pref, acc(0x777), flags)
	if err != syscall.EINVAL || a[0] != at(0, g1) || a[2] != flags {
		t.Errorf("partial fill: %v %v", err, a)
	}
}

func TestSplit(t *testing.T) {
	e := newEnv(t, false)
	e.mustSet(base, 8*ps, at(abi.KFD_IOCTL_SVM_ATTR_PREFERRED_LOC, g0))
	e.mustSet(base+2*ps, 4*ps, at(abi.KFD_IOCTL_SVM_ATTR_PREFERRED_LOC, g1))
	want := [][2]uint64{{base, base + 2*ps}, {base + 2*ps, base + 6*ps}, {base + 6*ps, base + 8*ps}}
	if got := e.bounds(); !reflect.DeepEqual(got, want) {
		t.Fatalf("split: %#v", got)
	}
	rs := e.m.Ranges()
	if rs[0].PreferredLoc != g0 || rs[1].PreferredLoc != g1 || rs[2].PreferredLoc != g0 {
		t.Errorf("attrs after split: %+v", rs)
	}
	// Spanning two ranges and gaps: the gaps get new ranges with default attributes plus the
	// update; the overlapped ranges are split at the boundary.
	e.mustSet(base+7*ps, 4*ps, at(abi.KFD_IOCTL_SVM_ATTR_GRANULARITY, 3))
	want = append(want[:2], [2]uint64{base + 6*ps, base + 7*ps}, [2]uint64{base + 7*ps, base + 8*ps}, [2]uint64{base + 8*ps, base + 11*ps})
	if got := e.bounds(); !reflect.DeepEqual(got, want) {
		t.Fatalf("spanning: %#v", got)
	}
	rs = e.m.Ranges()
	if rs[3].PreferredLoc != g0 || rs[3].Granularity != 3 || rs[4].PreferredLoc != undef || rs[4].Granularity != 3 || rs[2].Granularity != 9 {
		t.Errorf("attrs: %+v", rs)
	}
	// Setting an attribute a range already has still splits it when the range is not mapped
	// (svm_range_add checks mapped_to_gpu); ranges are never merged back.
	e.mustSet(base+ps, ps, at(abi.KFD_IOCTL_SVM_ATTR_PREFERRED_LOC, g0))
	if n := len(e.m.Ranges()); n != 6 {
		t.Errorf("same attrs on an unmapped range: %d ranges %v", n, e.bounds())
	}
}

func TestSameAttrsMappedRangeUntouched(t *testing.T) {
	e := newEnv(t, false)
	e.mustSet(base, 8*ps, at(abi.KFD_IOCTL_SVM_ATTR_ACCESS, g0))
	e.mp.reset()
	e.mustSet(base+2*ps, 2*ps, at(abi.KFD_IOCTL_SVM_ATTR_ACCESS, g0), at(abi.KFD_IOCTL_SVM_ATTR_SET_FLAGS, DefaultFlags))
	if n := len(e.m.Ranges()); n != 1 || len(e.mp.calls) != 0 {
		t.Errorf("mapped range with the same attributes: %v, calls %v", e.bounds(), e.mp.calls)
	}
	// A prefetch is never "the same".
	e.mustSet(base+2*ps, 2*ps, at(abi.KFD_IOCTL_SVM_ATTR_PREFETCH_LOC, sys))
	if n := len(e.m.Ranges()); n != 3 {
		t.Errorf("prefetch did not split: %v", e.bounds())
	}
}

func TestMaxRangePagesSplit(t *testing.T) {
	e := newEnv(t, false, func(c *Config) { c.MaxRangePages = 16 })
	e.mustSet(base+8*ps, 40*ps)
	want := [][2]uint64{{base + 8*ps, base + 16*ps}, {base + 16*ps, base + 32*ps}, {base + 32*ps, base + 48*ps}}
	if got := e.bounds(); !reflect.DeepEqual(got, want) {
		t.Errorf("%#v", got)
	}
}

func TestUnalignedSplitRemaps(t *testing.T) {
	e := newEnv(t, false)
	e.mustSet(base, 16*ps, at(abi.KFD_IOCTL_SVM_ATTR_ACCESS, g0), at(abi.KFD_IOCTL_SVM_ATTR_GRANULARITY, 2))
	e.mp.reset()
	// Split at page 4 (aligned to 2^2) and page 10 (not aligned): the tail is remapped.
	e.mustSet(base+4*ps, 6*ps, at(abi.KFD_IOCTL_SVM_ATTR_ACCESS, g1))
	want := []call{
		{"map", 0, base + 4*ps, 6, true, false},
		{"map", 1, base + 4*ps, 6, true, false},
		{"map", 0, base + 10*ps, 6, true, false},
	}
	if !reflect.DeepEqual(e.mp.calls, want) {
		t.Errorf("calls %+v", e.mp.calls)
	}
}

func TestXnackOffEagerMapping(t *testing.T) {
	e := newEnv(t, false)
	e.mustSet(base, 4*ps, at(abi.KFD_IOCTL_SVM_ATTR_ACCESS, g0), at(abi.KFD_IOCTL_SVM_ATTR_ACCESS_IN_PLACE, g2))
	want := []call{{"map", 0, base, 4, true, false}, {"map", 2, base, 4, true, false}}
	if !reflect.DeepEqual(e.mp.calls, want) {
		t.Fatalf("eager map: %+v", e.mp.calls)
	}
	steps := []struct {
		name  string
		attrs []abi.SVMAttribute
		want  []call
	}{
		{"gpu ro", []abi.SVMAttribute{at(abi.KFD_IOCTL_SVM_ATTR_SET_FLAGS, abi.KFD_IOCTL_SVM_FLAG_GPU_RO)},
			[]call{{"map", 0, base, 4, false, false}, {"map", 2, base, 4, false, false}}},
		{"exec, rw", []abi.SVMAttribute{at(abi.KFD_IOCTL_SVM_ATTR_CLR_FLAGS, abi.KFD_IOCTL_SVM_FLAG_GPU_RO), at(abi.KFD_IOCTL_SVM_ATTR_SET_FLAGS, abi.KFD_IOCTL_SVM_FLAG_GPU_EXEC)},
			[]call{{"map", 0, base, 4, true, true}, {"map", 2, base, 4, true, true}}},
		{"no access unmaps", []abi.SVMAttribute{at(abi.KFD_IOCTL_SVM_ATTR_NO_ACCESS, g2)},
			[]call{{"unmap", 2, base, 4, false, false}, {"map", 0, base, 4, true, true}}},
		{"preferred only: no mapping", []abi.SVMAttribute{at(abi.KFD_IOCTL_SVM_ATTR_PREFERRED_LOC, g1)}, nil},
	}
	for _, s := range steps {
		e.mp.reset()
		e.mustSet(base, 4*ps, s.attrs...)
		if !reflect.DeepEqual(e.mp.calls, s.want) {
			t.Errorf("%s: %+v", s.name, e.mp.calls)
		}
	}
	if got := e.mp.mapped(2); len(got) != 0 {
		t.Errorf("gpu 2 still mapped: %#x", got)
	}
	if e.m.Fault(0, base, false) {
		t.Error("fault resolved with XNACK off")
	}
	// A read-only VMA gives read-only PTEs.
	e.mp.reset()
	e.mustSet(0x20000000, 2*ps, at(abi.KFD_IOCTL_SVM_ATTR_ACCESS, g1))
	if want := []call{{"map", 1, 0x20000000, 2, false, false}}; !reflect.DeepEqual(e.mp.calls, want) {
		t.Errorf("read-only vma: %+v", e.mp.calls)
	}
	// GPU_ALWAYS_MAPPED is a flag change: it remaps like any other flag.
	e.mp.reset()
	e.mustSet(base, 4*ps, at(abi.KFD_IOCTL_SVM_ATTR_SET_FLAGS, abi.KFD_IOCTL_SVM_FLAG_GPU_ALWAYS_MAPPED))
	if len(e.mp.calls) != 1 {
		t.Errorf("always mapped: %+v", e.mp.calls)
	}
}

func TestXnackOnFault(t *testing.T) {
	e := newEnv(t, true)
	e.mustSet(base, 32*ps, at(abi.KFD_IOCTL_SVM_ATTR_GRANULARITY, 2), at(abi.KFD_IOCTL_SVM_ATTR_NO_ACCESS, g2),
		at(abi.KFD_IOCTL_SVM_ATTR_PREFERRED_LOC, sys))
	if len(e.mp.calls) != 0 {
		t.Fatalf("XNACK on mapped eagerly: %+v", e.mp.calls)
	}
	if !e.m.Fault(0, base+5*ps+123, true) {
		t.Fatal("fault not resolved")
	}
	if got, want := e.mp.mapped(0), pages(base+4*ps, 4); !reflect.DeepEqual(got, want) {
		t.Errorf("granularity chunk: %#x", got)
	}
	if len(e.mp.mapped(1)) != 0 {
		t.Error("another GPU mapped by a fault")
	}
	// GPU 2 has NO_ACCESS, but PREFERRED_LOC SYSMEM makes svm_range_best_restore_location
	// return system memory before looking at access.
	if !e.m.Fault(2, base, false) {
		t.Error("sysmem-preferred fault from a GPU without access not resolved")
	}
	e.mustSet(base, 32*ps, at(abi.KFD_IOCTL_SVM_ATTR_PREFERRED_LOC, undef))
	if e.m.Fault(2, base+16*ps, false) {
		t.Error("fault from a GPU without access resolved")
	}
	// Granularity larger than the range: the chunk is clipped to the range.
	e.mustSet(base+32*ps, 3*ps, at(abi.KFD_IOCTL_SVM_ATTR_GRANULARITY, 9), at(abi.KFD_IOCTL_SVM_ATTR_PREFERRED_LOC, sys))
	e.mp.reset()
	if !e.m.Fault(1, base+33*ps, false) {
		t.Fatal("fault not resolved")
	}
	if want := []call{{"map", 1, base + 32*ps, 3, true, false}}; !reflect.DeepEqual(e.mp.calls, want) {
		t.Errorf("clipped chunk: %+v", e.mp.calls)
	}
	// Read-only VMA: a write fault is not allowed, a read fault maps read-only.
	e.mustSet(0x20000000, 4*ps, at(abi.KFD_IOCTL_SVM_ATTR_PREFERRED_LOC, sys))
	if e.m.Fault(0, 0x20000000, true) {
		t.Error("write fault on a read-only VMA resolved")
	}
	e.mp.reset()
	if !e.m.Fault(0, 0x20000000, false) || e.mp.calls[0].w {
		t.Errorf("read fault on a read-only VMA: %+v", e.mp.calls)
	}
	if e.m.Fault(-1, base, false) || e.m.Fault(3, base, false) {
		t.Error("bad gpu index resolved")
	}
}

func TestFaultUnregistered(t *testing.T) {
	e := newEnv(t, true)
	e.mustSet(base+0x200000+8*ps, 4*ps) // a registered neighbour inside the next 2 MiB block
	// A fault in the first 2 MiB block of the VMA creates a 2 MiB range.
	if !e.m.Fault(0, base+0x1000*3, false) {
		t.Fatal("unregistered fault not resolved")
	}
	rs := e.m.Ranges()
	if rs[0].Start != base || rs[0].End != base+0x200000 || !reflect.DeepEqual(rs[0].Access, []uint32{g0, g1, g2}) {
		t.Errorf("unregistered range: %+v", rs[0])
	}
	// Clipped by the neighbour.
	if !e.m.Fault(1, base+0x200000, false) {
		t.Fatal("fault not resolved")
	}
	if b := e.bounds()[1]; b != [2]uint64{base + 0x200000, base + 0x200000 + 8*ps} {
		t.Errorf("clipped by the next range: %#x", b)
	}
	// Clipped by the VMA end.
	e.vmas = append(e.vmas, VMA{Start: 0x70001000, End: 0x70003000, Read: true, Write: true})
	if !e.m.Fault(0, 0x70002000, false) {
		t.Fatal("fault not resolved")
	}
	if r := e.rangeAt(0x70002000); r.Start != 0x70001000 || r.End != 0x70003000 {
		t.Errorf("clipped by the VMA: %#x-%#x", r.Start, r.End)
	}
	// Heap and stack prefer system memory.
	if !e.m.Fault(0, 0x40000000, false) {
		t.Fatal("heap fault not resolved")
	}
	if r := e.rangeAt(0x40000000); r.PreferredLoc != sys || r.Start != 0x40000000 || r.End != 0x40200000 {
		t.Errorf("heap range preferred %#x", r.PreferredLoc)
	}
	// No VMA: not resolved, no range.
	n := len(e.m.Ranges())
	if e.m.Fault(0, 0x66600000, false) || len(e.m.Ranges()) != n {
		t.Error("fault without a VMA")
	}
	// Near a BO: one page; on the BO: nothing.
	e.bos = [][2]uint64{{base + 0x400000, base + 0x400000 + ps}}
	if !e.m.Fault(0, base+0x400000+5*ps, false) {
		t.Fatal("fault next to a BO not resolved")
	}
	if r := e.rangeAt(base + 0x400000 + 5*ps); r.Start != base+0x400000+5*ps || r.End != base+0x400000+6*ps {
		t.Errorf("range next to a BO: %#x-%#x", r.Start, r.End)
	}
	if e.m.Fault(0, base+0x400000, false) {
		t.Error("fault on a BO resolved")
	}
	// XNACK off: faults are never recovered and create nothing.
	e.m.SetXNACK(false)
	n = len(e.m.Ranges())
	if e.m.Fault(0, base+0x800000, false) || len(e.m.Ranges()) != n {
		t.Error("XNACK off fault")
	}
}

func TestFaultMigration(t *testing.T) {
	e := newEnv(t, true)
	e.mustSet(base, 8*ps, at(abi.KFD_IOCTL_SVM_ATTR_GRANULARITY, 2))
	// GPU 0 has ACCESS (XNACK default): best location is GPU 0: the chunk "migrates" to it.
	if !e.m.Fault(0, base, false) {
		t.Fatal("fault")
	}
	r := e.m.Ranges()[0]
	if r.ActualLoc != g0 || r.VRAMPages != 4 {
		t.Errorf("after fault: actual %#x vram %d", r.ActualLoc, r.VRAMPages)
	}
	// GPU 2 (no hive) faults on the same chunk: all VRAM pages go back to system memory first,
	// the chunk moves to GPU 2, and the migration unmaps GPU 0 over the pages that moved.
	e.mp.reset()
	if !e.m.Fault(2, base+ps, false) {
		t.Fatal("fault")
	}
	// svm_migrate_vram_to_vram sends the whole range to RAM: the invalidation covers it all.
	want := []call{{"unmap", 0, base, 8, false, false}, {"map", 2, base, 4, true, false}}
	if !reflect.DeepEqual(e.mp.calls, want) {
		t.Errorf("calls %+v", e.mp.calls)
	}
	var migs []Event
	for _, ev := range e.m.Log() {
		if ev.Kind == EventMigrate {
			migs = append(migs, ev)
		}
	}
	wantMigs := []Event{
		{Kind: EventMigrate, Trigger: TriggerPageFaultGPU, GPU: 0, Start: base, Size: 4 * ps, From: sys, To: g0, Prefetch: undef, Preferred: undef},
		{Kind: EventMigrate, Trigger: TriggerPageFaultGPU, GPU: 0, Start: base, Size: 4 * ps, From: g0, To: sys, Prefetch: undef, Preferred: undef},
		{Kind: EventMigrate, Trigger: TriggerPageFaultGPU, GPU: 2, Start: base, Size: 4 * ps, From: sys, To: g2, Prefetch: undef, Preferred: undef},
	}
	if !reflect.DeepEqual(migs, wantMigs) {
		t.Errorf("migrations %+v", migs)
	}
	if r := e.m.Ranges()[0]; r.ActualLoc != g2 {
		t.Errorf("actual %#x", r.ActualLoc)
	}
	// GET_ATTR never reports the actual location.
	if a := e.mustGet(base, 8*ps, at(abi.KFD_IOCTL_SVM_ATTR_PREFETCH_LOC, 0)); a[0].Value != undef {
		t.Errorf("prefetch %#x", a[0].Value)
	}
	// A fault event per fault.
	var faults int
	for _, ev := range e.m.Log() {
		if ev.Kind == EventFault && ev.Resolved && ev.Migrated {
			faults++
		}
	}
	if faults != 2 {
		t.Errorf("%d fault events", faults)
	}
	// proc/<pid>/counters_<gpuid>: a fault each, 4 pages into GPU 0 and out again, 4 into GPU 2.
	for _, c := range []struct {
		id   uint32
		want Counters
	}{{g0, Counters{Faults: 1, PageIn: 4, PageOut: 4}}, {g1, Counters{}}, {g2, Counters{Faults: 1, PageIn: 4}}} {
		if got, ok := e.m.Counters(c.id); !ok || got != c.want {
			t.Errorf("counters of %#x: %+v (%v), want %+v", c.id, got, ok, c.want)
		}
	}
}

func TestPrefetch(t *testing.T) {
	e := newEnv(t, false)
	e.mustSet(base, 8*ps, at(abi.KFD_IOCTL_SVM_ATTR_ACCESS, g0))
	e.mp.reset()
	e.mustSet(base, 8*ps, at(abi.KFD_IOCTL_SVM_ATTR_PREFETCH_LOC, g0))
	log := e.m.Log()
	want := []Event{
		{Kind: EventMigrate, Trigger: TriggerPrefetch, GPU: 0, Start: base, Size: 8 * ps, From: sys, To: g0, Prefetch: g0, Preferred: undef},
		{Kind: EventEvict, Trigger: TriggerMMUNotifyMigrate, GPU: -1, Start: base, Size: 8 * ps},
	}
	if !reflect.DeepEqual(log, want) {
		t.Errorf("log %+v", log)
	}
	// The mapping is restored and still points at the client's pages.
	if want := []call{{"map", 0, base, 8, true, false}}; !reflect.DeepEqual(e.mp.calls, want) {
		t.Errorf("calls %+v", e.mp.calls)
	}
	a := e.mustGet(base, 8*ps, at(abi.KFD_IOCTL_SVM_ATTR_PREFETCH_LOC, 0))
	if a[0].Value != g0 {
		t.Errorf("prefetch loc %#x", a[0].Value)
	}
	if r := e.m.Ranges()[0]; r.ActualLoc != g0 || r.VRAMPages != 8 {
		t.Errorf("range %+v", r)
	}
	// Prefetching again moves nothing.
	e.mustSet(base, 8*ps, at(abi.KFD_IOCTL_SVM_ATTR_PREFETCH_LOC, g0))
	if n := len(e.m.Log()); n != 2 {
		t.Errorf("second prefetch logged: %+v", e.m.Log())
	}
	// Back to system memory.
	e.mustSet(base, 8*ps, at(abi.KFD_IOCTL_SVM_ATTR_PREFETCH_LOC, sys))
	if r := e.m.Ranges()[0]; r.ActualLoc != 0 || r.VRAMPages != 0 {
		t.Errorf("range %+v", r)
	}
	if l := e.m.Log(); l[len(l)-2].From != g0 || l[len(l)-2].To != sys || l[len(l)-2].Size != 8*ps {
		t.Errorf("log %+v", l)
	}
	// A GPU outside the target's hive with access: svm_range_best_prefetch_location picks
	// system memory, nothing moves.
	f := newEnv(t, false)
	f.mustSet(base, 4*ps, at(abi.KFD_IOCTL_SVM_ATTR_ACCESS, g0), at(abi.KFD_IOCTL_SVM_ATTR_ACCESS, g2),
		at(abi.KFD_IOCTL_SVM_ATTR_PREFETCH_LOC, g0))
	if r := f.m.Ranges()[0]; r.ActualLoc != 0 || len(f.m.Log()) != 0 {
		t.Errorf("prefetch across hives: %+v %+v", r, f.m.Log())
	}
	// Same hive: it moves.
	f.mustSet(base+4*ps, 4*ps, at(abi.KFD_IOCTL_SVM_ATTR_ACCESS, g0), at(abi.KFD_IOCTL_SVM_ATTR_ACCESS, g1),
		at(abi.KFD_IOCTL_SVM_ATTR_PREFETCH_LOC, g1))
	if r := f.m.Ranges()[1]; r.ActualLoc != g1 {
		t.Errorf("prefetch within a hive: %+v", r)
	}
}

func TestPrefetchXnackOn(t *testing.T) {
	e := newEnv(t, true)
	e.mustSet(base, 8*ps, at(abi.KFD_IOCTL_SVM_ATTR_GRANULARITY, 1))
	for _, g := range []int{0, 1} {
		if !e.m.Fault(g, base+6*ps, false) {
			t.Fatal("fault")
		}
	}
	e.mp.reset()
	// Prefetch to GPU 2: the chunk GPU 1 holds goes back to RAM (unmapping GPUs 0 and 1 there),
	// then everything moves to GPU 2 (unmapping again) and GPU 2, which has ACCESS and holds the
	// data, is mapped.
	e.mustSet(base, 8*ps, at(abi.KFD_IOCTL_SVM_ATTR_PREFETCH_LOC, g2))
	if got, want := e.mp.mapped(2), pages(base, 8); !reflect.DeepEqual(got, want) {
		t.Errorf("gpu 2 mapped %#x", got)
	}
	if len(e.mp.mapped(0)) != 0 || len(e.mp.mapped(1)) != 0 {
		t.Errorf("gpus 0/1 still mapped: %#x %#x", e.mp.mapped(0), e.mp.mapped(1))
	}
}

func TestMunmap(t *testing.T) {
	e := newEnv(t, false)
	e.mustSet(base, 8*ps, at(abi.KFD_IOCTL_SVM_ATTR_ACCESS, g0), at(abi.KFD_IOCTL_SVM_ATTR_ACCESS, g1))
	e.mustSet(base+8*ps, 8*ps, at(abi.KFD_IOCTL_SVM_ATTR_PREFERRED_LOC, g1)) // not mapped
	if e.mem.used != 16*ps {
		t.Fatalf("used %d", e.mem.used)
	}
	e.mp.reset()
	e.m.Munmap(base+2*ps, 8*ps)
	want := []call{{"unmap", 0, base + 2*ps, 6, false, false}, {"unmap", 1, base + 2*ps, 6, false, false}}
	if !reflect.DeepEqual(e.mp.calls, want) {
		t.Errorf("calls %+v", e.mp.calls)
	}
	wantB := [][2]uint64{{base, base + 2*ps}, {base + 10*ps, base + 16*ps}}
	if got := e.bounds(); !reflect.DeepEqual(got, wantB) {
		t.Errorf("ranges %#v", got)
	}
	if got := e.mp.mapped(0); !reflect.DeepEqual(got, pages(base, 2)) {
		t.Errorf("gpu 0 %#x", got)
	}
	if rs := e.m.Ranges(); rs[1].PreferredLoc != g1 || !rs[0].MappedToGPU {
		t.Errorf("pieces %+v", rs)
	}
	if e.mem.used != 8*ps {
		t.Errorf("used %d", e.mem.used)
	}
	var unmaps int
	for _, ev := range e.m.Log() {
		if ev.Kind == EventUnmap && ev.Trigger == TriggerUnmapFromCPU {
			unmaps++
		}
	}
	if unmaps != 2 {
		t.Errorf("%d unmap events", unmaps)
	}
	// Whole range: it disappears and its mapping flag is cleared.
	e.m.Munmap(base, 2*ps)
	e.m.Munmap(base+10*ps, 1<<20)
	if len(e.m.Ranges()) != 0 || e.mem.used != 0 || len(e.mp.mapped(0)) != 0 {
		t.Errorf("after full munmap: %v used %d", e.bounds(), e.mem.used)
	}
	e.m.Munmap(base, 0)
	e.m.Munmap(^uint64(0)-ps, 2*ps) // wraps: clipped
}

func TestMapperError(t *testing.T) {
	e := newEnv(t, false)
	e.mp.fail = syscall.EIO
	if err := e.set(base, ps, at(abi.KFD_IOCTL_SVM_ATTR_ACCESS, g0)); err != syscall.EIO {
		t.Errorf("errno passthrough: %v", err)
	}
	e.mp.fail = errors.New("no page table memory")
	if err := e.set(base, ps, at(abi.KFD_IOCTL_SVM_ATTR_ACCESS, g1)); err != syscall.ENOMEM {
		t.Errorf("other error: %v", err)
	}
	// The attributes were applied anyway (amdkfd does not roll back).
	a := e.mustGet(base, ps, at(abi.KFD_IOCTL_SVM_ATTR_ACCESS, g1))
	if a[0].Type != abi.KFD_IOCTL_SVM_ATTR_ACCESS {
		t.Errorf("%v", a)
	}
}

func TestCloseAndLog(t *testing.T) {
	e := newEnv(t, true, func(c *Config) { c.LogSize = 3 })
	e.mustSet(base, 4*ps, at(abi.KFD_IOCTL_SVM_ATTR_PREFERRED_LOC, sys))
	for i := uint64(0); i < 5; i++ {
		e.m.Fault(0, base+(i%4)*ps, false)
	}
	l := e.m.Log()
	if len(l) != 3 || l[0].Addr != base+2*ps || l[1].Addr != base+3*ps || l[2].Addr != base || !l[2].Resolved {
		t.Errorf("ring %+v", l)
	}
	e.m.SetXNACK(false)
	e.m.Close()
	if e.mem.used != 0 {
		t.Errorf("used %d after close", e.mem.used)
	}
	if err := e.set(base, ps); err != syscall.ESRCH {
		t.Errorf("after close: %v", err)
	}
	if e.m.Fault(0, base, false) || len(e.m.Ranges()) != 0 {
		t.Error("after close")
	}
	e.m.Munmap(base, ps)
	e.m.Close()
}

func TestPageSet(t *testing.T) {
	var p pageSet
	steps := []struct {
		op   string
		s, l uint64
		n    uint64
		want pageSet
	}{
		{"add", 10, 19, 10, pageSet{{10, 19}}},
		{"add", 30, 39, 10, pageSet{{10, 19}, {30, 39}}},
		{"add", 20, 29, 10, pageSet{{10, 39}}}, // adjacent on both sides: merged
		{"add", 5, 12, 5, pageSet{{5, 39}}},
		{"remove", 15, 24, 10, pageSet{{5, 14}, {25, 39}}},
		{"remove", 0, 5, 1, pageSet{{6, 14}, {25, 39}}},
		{"add", 50, 50, 1, pageSet{{6, 14}, {25, 39}, {50, 50}}},
		{"remove", 100, 200, 0, pageSet{{6, 14}, {25, 39}, {50, 50}}},
		{"add", 0, 100, 101 - 25, pageSet{{0, 100}}},
		{"remove", 0, 100, 101, pageSet{}},
	}
	for i, s := range steps {
		var n uint64
		if s.op == "add" {
			n = p.add(s.s, s.l)
		} else {
			n = p.remove(s.s, s.l)
		}
		if n != s.n || len(p) != len(s.want) || (len(p) > 0 && !reflect.DeepEqual(p, s.want)) {
			t.Fatalf("step %d %s [%d,%d]: n=%d set=%v, want n=%d set=%v", i, s.op, s.s, s.l, n, p, s.n, s.want)
		}
	}
	p = pageSet{{0, 9}, {20, 29}}
	if c := p.clip(5, 24); !reflect.DeepEqual(c, pageSet{{5, 9}, {20, 24}}) || c.count() != 10 {
		t.Errorf("clip %v", c)
	}
}

func TestRace(t *testing.T) {
	e := newEnv(t, true)
	e.mustSet(base, 64*ps, at(abi.KFD_IOCTL_SVM_ATTR_GRANULARITY, 1))
	done := make(chan struct{})
	for g := 0; g < 3; g++ {
		go func(g int) {
			defer func() { done <- struct{}{} }()
			for i := uint64(0); i < 200; i++ {
				e.m.Fault(g, base+(i%64)*ps, i%2 == 0)
				if g == 0 && i%50 == 0 {
					e.m.Ioctl(abi.KFD_IOCTL_SVM_OP_SET_ATTR, base, 8*ps, []abi.SVMAttribute{at(abi.KFD_IOCTL_SVM_ATTR_PREFETCH_LOC, g1)})
					_ = e.m.Ranges()
					_ = e.m.Log()
				}
			}
		}(g)
	}
	for i := 0; i < 3; i++ {
		<-done
	}
}

// kfd_queue_buffer_svm_get: a context-save area in SVM ranges must be mapped to the GPU with access
// and GPU_ALWAYS_MAPPED over its whole size, across range boundaries.
func TestQueueBufferGet(t *testing.T) {
	e := newEnv(t, false)
	always := at(abi.KFD_IOCTL_SVM_ATTR_SET_FLAGS, abi.KFD_IOCTL_SVM_FLAG_GPU_ALWAYS_MAPPED)
	if e.m.QueueBufferGet(g0, base, 8*ps) {
		t.Fatal("unregistered memory accepted")
	}
	e.mustSet(base, 8*ps, at(abi.KFD_IOCTL_SVM_ATTR_ACCESS, g0))
	if e.m.QueueBufferGet(g0, base, 8*ps) {
		t.Fatal("range without GPU_ALWAYS_MAPPED accepted")
	}
	e.mustSet(base, 8*ps, always)
	if e.m.QueueBufferGet(g1, base, 8*ps) {
		t.Fatal("range accepted for a GPU without access")
	}
	if e.m.QueueBufferGet(g0, base, 9*ps) {
		t.Fatal("area longer than the ranges accepted")
	}
	// split in two ranges (different preferred location on the second half): still one area
	e.mustSet(base+4*ps, 4*ps, at(abi.KFD_IOCTL_SVM_ATTR_PREFERRED_LOC, g0))
	if !e.m.QueueBufferGet(g0, base, 8*ps) {
		t.Fatal("area over two qualifying ranges refused")
	}
	for _, r := range e.m.ranges {
		if r.queueRefs != 1 {
			t.Fatalf("range %#x-%#x: queue refs %d, want 1", r.start, r.last, r.queueRefs)
		}
	}
	e.m.QueueBufferPut(base, 8*ps)
	e.m.QueueBufferPut(base, 8*ps) // extra puts do not underflow
	for _, r := range e.m.ranges {
		if r.queueRefs != 0 {
			t.Fatalf("range %#x-%#x: queue refs %d after put, want 0", r.start, r.last, r.queueRefs)
		}
	}
	if e.m.QueueBufferGet(0x12345, base, 8*ps) {
		t.Fatal("unknown gpu accepted")
	}
}

// FaultBatch answers and records as Fault called for each fault in order: two managers given the
// same faults (resolved, refused, unregistered, a read-only VMA, a second fault on one chunk) end
// with the same results, page tables, ranges and event logs.
func TestFaultBatchIsFaultInOrder(t *testing.T) {
	setup := func() *env {
		e := newEnv(t, true)
		e.mustSet(base, 32*ps, at(abi.KFD_IOCTL_SVM_ATTR_GRANULARITY, 1), at(abi.KFD_IOCTL_SVM_ATTR_PREFERRED_LOC, sys))
		e.mustSet(0x20000000, 4*ps, at(abi.KFD_IOCTL_SVM_ATTR_PREFERRED_LOC, sys))
		return e
	}
	vas := []uint64{base + 3*ps, base + 2*ps, base + 9*ps + 5, 0x66600000, base + 40*ps, base + 2*ps, base + 0x210000}
	for _, write := range []bool{false, true} {
		one, batch := setup(), setup()
		want := make([]bool, len(vas))
		for i, va := range vas {
			want[i] = one.m.Fault(1, va, write)
		}
		if n := strings.Count(fmt.Sprint(want), "true"); n < 2 || n == len(vas) {
			t.Fatalf("write %v: Fault resolved %v: the case needs both outcomes", write, want)
		}
		got := make([]bool, len(vas))
		batch.m.FaultBatch(1, vas, write, got)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("write %v: FaultBatch %v, Fault %v", write, got, want)
		}
		if !reflect.DeepEqual(batch.mp.calls, one.mp.calls) || !reflect.DeepEqual(batch.m.Ranges(), one.m.Ranges()) {
			t.Errorf("write %v: mapper calls %+v vs %+v", write, batch.mp.calls, one.mp.calls)
		}
		if !reflect.DeepEqual(batch.m.Log(), one.m.Log()) {
			t.Errorf("write %v: events differ:\n%+v\n%+v", write, batch.m.Log(), one.m.Log())
		}
	}
	// The read-only VMA refuses writes and resolves reads in a batch as well.
	e := setup()
	got := make([]bool, 2)
	e.m.FaultBatch(0, []uint64{0x20000000, 0x20001000}, true, got)
	if got[0] || got[1] {
		t.Errorf("write faults on a read-only VMA: %v", got)
	}
}
