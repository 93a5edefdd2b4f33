package svm

import (
	"syscall"
	"testing"

	"github.com/kfdemu/kfdemu/kfd/abi"
)

// byteReader hands out fuzz bytes, zero when exhausted.
type byteReader struct {
	b []byte
	i int
}

func (r *byteReader) more() bool { return r.i < len(r.b) }

func (r *byteReader) next() byte {
	if r.i >= len(r.b) {
		return 0
	}
	r.i++
	return r.b[r.i-1]
}

var (
	fuzzLocs  = []uint32{g0, g1, g2, sys, undef, 0x42}
	fuzzGPUs  = []uint32{g0, g1, g2, 0x42}
	fuzzIDs   = []uint32{g0, g1, g2}
	fuzzQuery = []abi.SVMAttribute{
		at(abi.KFD_IOCTL_SVM_ATTR_PREFERRED_LOC, 0), at(abi.KFD_IOCTL_SVM_ATTR_PREFETCH_LOC, 0),
		at(abi.KFD_IOCTL_SVM_ATTR_GRANULARITY, 0), at(abi.KFD_IOCTL_SVM_ATTR_SET_FLAGS, 0),
		at(abi.KFD_IOCTL_SVM_ATTR_CLR_FLAGS, 0), at(abi.KFD_IOCTL_SVM_ATTR_ACCESS, g0),
		at(abi.KFD_IOCTL_SVM_ATTR_ACCESS, g1), at(abi.KFD_IOCTL_SVM_ATTR_ACCESS, g2),
	}
)

func (r *byteReader) attr() abi.SVMAttribute {
	t, v := uint32(r.next()%9), r.next() // type 8 is unknown
	switch t {
	case abi.KFD_IOCTL_SVM_ATTR_PREFERRED_LOC, abi.KFD_IOCTL_SVM_ATTR_PREFETCH_LOC:
		return at(t, fuzzLocs[int(v)%len(fuzzLocs)])
	case abi.KFD_IOCTL_SVM_ATTR_ACCESS, abi.KFD_IOCTL_SVM_ATTR_ACCESS_IN_PLACE, abi.KFD_IOCTL_SVM_ATTR_NO_ACCESS:
		return at(t, fuzzGPUs[int(v)%len(fuzzGPUs)])
	case abi.KFD_IOCTL_SVM_ATTR_GRANULARITY:
		return at(t, uint32(v%70))
	}
	return at(t, uint32(v)|uint32(v)<<24)
}

// expectation is what GET_ATTR must report after a successful SET_ATTR over the same interval.
type expectation struct {
	pref, prefetch, gran *uint32
	setMask, clrMask     uint32
	access               [3]uint32 // 0: not set
}

func expect(attrs []abi.SVMAttribute) expectation {
	var x expectation
	for _, a := range attrs {
		v := a.Value
		switch a.Type {
		case abi.KFD_IOCTL_SVM_ATTR_PREFERRED_LOC:
			x.pref = &v
		case abi.KFD_IOCTL_SVM_ATTR_PREFETCH_LOC:
			x.prefetch = &v
		case abi.KFD_IOCTL_SVM_ATTR_GRANULARITY:
			v = min(v, MaxGranularity)
			x.gran = &v
		case abi.KFD_IOCTL_SVM_ATTR_SET_FLAGS:
			x.setMask |= v
			x.clrMask &^= v
		case abi.KFD_IOCTL_SVM_ATTR_CLR_FLAGS:
			x.clrMask |= v
			x.setMask &^= v
		default:
			for i, id := range fuzzIDs {
				if id == v {
					x.access[i] = a.Type
				}
			}
		}
	}
	return x
}

func (e *env) checkGet(t *testing.T, start, size uint64, x expectation) {
	got, err := e.get(start, size, fuzzQuery...)
	if err != 0 {
		t.Fatalf("GET after SET %#x+%#x: %v", start, size, err)
	}
	if x.pref != nil && got[0].Value != *x.pref {
		t.Fatalf("preferred %#x, set %#x", got[0].Value, *x.pref)
	}
	if x.prefetch != nil && got[1].Value != *x.prefetch {
		t.Fatalf("prefetch %#x, set %#x", got[1].Value, *x.prefetch)
	}
	if x.gran != nil && got[2].Value != *x.gran {
		t.Fatalf("granularity %d, set %d", got[2].Value, *x.gran)
	}
	if got[3].Value&x.setMask != x.setMask || got[4].Value&x.clrMask != x.clrMask {
		t.Fatalf("flags set %#x clr %#x, want set %#x clr %#x", got[3].Value, got[4].Value, x.setMask, x.clrMask)
	}
	for i, ty := range x.access {
		if ty != 0 && got[5+i].Type != ty {
			t.Fatalf("access gpu %d: type %d, set %d", i, got[5+i].Type, ty)
		}
	}
}

func (e *env) checkInvariants(t *testing.T) {
	rs := e.m.Ranges()
	var total uint64
	for i, r := range rs {
		if r.Start >= r.End || r.Start%ps != 0 || r.End%ps != 0 {
			t.Fatalf("range %d bounds %#x-%#x", i, r.Start, r.End)
		}
		if i > 0 && rs[i-1].End > r.Start {
			t.Fatalf("ranges %d and %d overlap or are unsorted: %#x-%#x %#x-%#x", i-1, i, rs[i-1].Start, rs[i-1].End, r.Start, r.End)
		}
		if r.Granularity > MaxGranularity {
			t.Fatalf("granularity %d", r.Granularity)
		}
		for a := r.Start; a < r.End; a += ps {
			// SET_ATTR refuses device VMAs; a retry fault there creates a range that cannot map.
			if _, ok := e.m.cfg.FindVMA(a); !ok {
				t.Fatalf("range %#x-%#x covers %#x outside a VMA", r.Start, r.End, a)
			}
		}
		total += r.End - r.Start
	}
	want := total
	if e.m.XNACK() {
		want = 0
	}
	if e.mem.used != want {
		t.Fatalf("USERPTR charge %d, want %d (xnack %v)", e.mem.used, want, e.m.XNACK())
	}
	// Every PTE lies in a range that records the GPU as mapped.
	for g, pt := range e.mp.pt {
		for p := range pt {
			a := p * ps
			found := false
			for _, r := range rs {
				if a >= r.Start && a < r.End {
					for _, id := range r.Mapped {
						found = found || id == fuzzIDs[g]
					}
				}
			}
			if !found {
				t.Fatalf("gpu %d PTE at %#x outside a range mapped on it", g, a)
			}
		}
	}
}

func FuzzSVM(f *testing.F) {
	f.Add([]byte{0, 0, 0, 16, 2, 2, 0, 7, 3})
	f.Add([]byte{1, 0, 4, 32, 3, 7, 2, 2, 1, 1, 0, 3, 0, 8, 0, 3, 1, 9, 1, 3, 2, 12, 0})
	f.Add([]byte{0, 1, 10, 20, 2, 1, 0, 2, 2, 0, 20, 4, 0, 4, 12, 4, 0, 5, 1, 0, 1, 0, 6, 100})
	f.Add([]byte{1, 3, 0, 5, 0, 3, 1, 7, 0, 5, 0, 0, 250, 30, 1, 2, 0, 3, 2, 9, 1})
	f.Add([]byte{0, 0, 200, 60, 4, 5, 255, 6, 15, 7, 1, 1, 0, 0, 230, 40, 1, 4, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		e := newEnv(t, data[0]&1 != 0, func(c *Config) { c.MaxRangePages = 64; c.LogSize = 16 })
		e.vmas = []VMA{
			{Start: base, End: base + 256*ps, Read: true, Write: true},
			{Start: base + 256*ps, End: base + 288*ps, Read: true},
			{Start: base + 288*ps, End: base + 304*ps},
			{Start: base + 304*ps, End: base + 320*ps, Read: true, Write: true, Device: true},
		}
		e.bos = [][2]uint64{{base + 200*ps, base + 204*ps}}
		rd := &byteReader{b: data[1:]}
		for ops := 0; ops < 48 && rd.more(); ops++ {
			op := rd.next() % 6
			start := base + uint64(rd.next())*ps + uint64(rd.next()%2)*256*ps
			size := uint64(rd.next()%64+1) * ps
			switch op {
			case 0, 1:
				attrs := make([]abi.SVMAttribute, rd.next()%5)
				for i := range attrs {
					attrs[i] = rd.attr()
				}
				if e.set(start, size, attrs...) == 0 {
					e.checkGet(t, start, size, expect(attrs))
				}
			case 2:
				q := []abi.SVMAttribute{rd.attr(), rd.attr()}
				if err := e.m.Ioctl(abi.KFD_IOCTL_SVM_OP_GET_ATTR, start, size, q); err != 0 &&
					err != syscall.EINVAL && err != syscall.EFAULT && err != syscall.EADDRINUSE {
					t.Fatalf("GET errno %v", err)
				}
			case 3:
				e.m.Fault(int(rd.next()%4), start+uint64(rd.next()), rd.next()&1 != 0)
			case 4:
				e.m.Munmap(start, size)
				for g, pt := range e.mp.pt {
					for p := range pt {
						if a := p * ps; a >= start && a < start+size {
							t.Fatalf("gpu %d PTE at %#x after munmap %#x+%#x", g, a, start, size)
						}
					}
				}
			case 5:
				e.m.SetXNACK(rd.next()&1 != 0)
			}
			e.checkInvariants(t)
		}
		e.m.Close()
		if e.mem.used != 0 {
			t.Fatalf("USERPTR charge %d after Close", e.mem.used)
		}
	})
}
