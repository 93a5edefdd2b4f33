package kmt

import (
	"errors"
	"testing"
)

func TestParseProperties(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    map[string]uint64
		text    map[string]string
		wantErr bool
	}{
		{"node", "cpu_cores_count 0\nsimd_count 416\nunique_id 1801979520617338022\n",
			map[string]uint64{"cpu_cores_count": 0, "simd_count": 416, "unique_id": 1801979520617338022}, nil, false},
		{"cache sibling map", "level 1\nsibling_map 1,0,0\n", map[string]uint64{"level": 1}, map[string]string{"sibling_map": "1,0,0"}, false},
		{"blank lines", "\n\na 1\n\n", map[string]uint64{"a": 1}, nil, false},
		{"no value", "a\n", nil, nil, true},
		{"duplicate", "a 1\na 2\n", nil, nil, true},
		{"u64 max", "a 18446744073709551615\n", map[string]uint64{"a": 1<<64 - 1}, nil, false},
		{"overflow is text", "a 18446744073709551616\n", nil, map[string]string{"a": "18446744073709551616"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := ParseProperties([]byte(tt.in))
			if tt.wantErr {
				if !errors.Is(err, ErrSyntax) {
					t.Fatalf("err = %v, want ErrSyntax", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Values) != len(tt.want) || len(p.Text) != len(tt.text) {
				t.Fatalf("got %v %v, want %v %v", p.Values, p.Text, tt.want, tt.text)
			}
			for k, v := range tt.want {
				if p.Get(k) != v || !p.Has(k) {
					t.Errorf("%s = %d, want %d", k, p.Get(k), v)
				}
			}
			for k, v := range tt.text {
				if p.Text[k] != v {
					t.Errorf("%s = %q, want %q", k, p.Text[k], v)
				}
			}
		})
	}
}

func FuzzParseProperties(f *testing.F) {
	f.Add([]byte("cpu_cores_count 0\nsimd_count 416\n"))
	f.Add([]byte("sibling_map 1,0,0,0\nlevel 2\n"))
	f.Add([]byte("a\n"))
	f.Add([]byte("a 1\na 1\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ParseProperties(b)
		if err != nil {
			return
		}
		if len(p.Order) != len(p.Values)+len(p.Text) {
			t.Fatalf("order %d, values %d, text %d", len(p.Order), len(p.Values), len(p.Text))
		}
		for _, k := range p.Order {
			if !p.Has(k) {
				t.Fatalf("key %q in order but not stored", k)
			}
		}
	})
}

func TestVAAllocator(t *testing.T) {
	a := newVAAllocator(1<<20, 4096)
	type step struct {
		alloc      bool
		size, algn uint64
		release    int // index of an earlier allocation to release
		wantOff    uint64
		wantErr    error
	}
	steps := []step{
		{alloc: true, size: 4096, algn: 4096, wantOff: 0},
		{alloc: true, size: 8192, algn: 4096, wantOff: 8192},            // after the guard page
		{alloc: true, size: 4096, algn: 65536, wantOff: 65536},          // aligned
		{alloc: true, size: 1 << 20, algn: 4096, wantErr: ErrNoVA},      // too big
		{alloc: true, size: 0, algn: 4096, wantErr: ErrInvalidArgument}, // empty
		{release: 1},
		{alloc: true, size: 8192, algn: 4096, wantOff: 8192}, // reuses the hole
		{release: 0},
		{release: 2},
		{release: 6},
		{alloc: true, size: 1<<20 - 4096, algn: 4096, wantOff: 0}, // everything coalesced again
	}
	offs := map[int]uint64{}
	for i, s := range steps {
		if !s.alloc {
			if err := a.release(offs[s.release]); err != nil {
				t.Fatalf("step %d: release: %v", i, err)
			}
			continue
		}
		off, err := a.alloc(s.size, s.algn)
		if s.wantErr != nil {
			if !errors.Is(err, s.wantErr) {
				t.Fatalf("step %d: err %v, want %v", i, err, s.wantErr)
			}
			continue
		}
		if err != nil || off != s.wantOff {
			t.Fatalf("step %d: alloc = %#x, %v; want %#x", i, off, err, s.wantOff)
		}
		offs[i] = off
	}
	if err := a.release(12345); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("release of an unknown offset: %v", err)
	}
}

// TestCWSRSizes checks queues.c's arithmetic for an MI210 node (104 CUs, gfx90a).
func TestCWSRSizes(t *testing.T) {
	props, _ := ParseProperties([]byte("simd_count 416\nsimd_per_cu 4\ngfx_target_version 90010\narray_count 8\nsimd_arrays_per_engine 1\nnum_xcc 1\n"))
	c, ok := CWSRSizes(&Node{Props: props})
	// wave_num = min(104*40, 8/1*512) = 4096; ctl = 4096*8+8 (+40 header) -> 36864 page-aligned;
	// wg = 104*(0x80000+0x4000+0x10000+0x1000) = 63471616; debug = 4096*32.
	if !ok || c.CtlStackSize != 36864 || c.CtxSize != 36864+63471616 || c.DebugSize != 131072 || c.AllocSize != 36864+63471616+131072 {
		t.Errorf("CWSRSizes = %+v %v", c, ok)
	}
	cpu, _ := ParseProperties([]byte("simd_count 0\ncpu_cores_count 4\n"))
	if _, ok := CWSRSizes(&Node{Props: cpu}); ok {
		t.Error("a CPU node needs no context save area")
	}
}

func TestGfxName(t *testing.T) {
	for v, want := range map[string]string{"90010": "gfx90a", "90402": "gfx942", "100300": "gfx1030", "90000": "gfx900", "0": ""} {
		p, _ := ParseProperties([]byte("gfx_target_version " + v + "\n"))
		if got := (&Node{Props: p}).GfxName(); got != want {
			t.Errorf("%s: %q, want %q", v, got, want)
		}
	}
}
