package shader

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"
)

// FuzzDecodeStep decodes random instruction words, disassembles them and executes them for a bounded
// number of steps on a small wave: nothing may panic.
func FuzzDecodeStep(f *testing.F) {
	for _, w := range [][]uint32{{0xC0020082, 4}, {0xD1E80200, 0x04020402}, {0xDC508000, 0x067F0004}, {0xBF810000},
		{0xE0501000, 0x80000C04}, {0xD86E1000, 0x1600000D}, {0xD3B02002, 0x1C080502}, {0x7E0202FA, 0xFF0000E4}} {
		b := make([]byte, 12)
		for i, x := range w {
			binary.LittleEndian.PutUint32(b[4*i:], x)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var w []uint32
		for i := 0; i+4 <= len(b) && i < 64; i += 4 {
			w = append(w, binary.LittleEndian.Uint32(b[i:]))
		}
		in, err := Decode(w)
		if err == nil {
			_ = in.String()
			if in.Size > 4*len(w) {
				t.Fatalf("size %d beyond input", in.Size)
			}
		}
		// execute the words as a kernel: descriptor at 0x1000, code at 0x1100, ending with s_endpgm
		build := func() *flatMem {
			m := newMem()
			m.mapRange(0x1000, 0x2000)
			m.mapRange(0x100000, 0x10000)
			var kd [64]byte
			binary.LittleEndian.PutUint64(kd[16:], 0x100)
			binary.LittleEndian.PutUint32(kd[52:], 1|2<<1|1<<7) // private segment, 2 user SGPRs, wg id x
			binary.LittleEndian.PutUint16(kd[56:], 1<<3)        // kernarg ptr
			m.Write(0x1000, kd[:])
			code := append(append([]byte{}, b...), 0, 0, 0x81, 0xbf)
			if len(code) > 0xe00 {
				code = code[:0xe00]
			}
			m.Write(0x1100, code)
			return m
		}
		run := func(m *flatMem, code *CodeCache) (Stats, error) {
			return Dispatch(context.Background(), m, DispatchParams{GridSize: [3]uint32{64, 1, 1}, WorkgroupSize: [3]uint16{64, 1, 1},
				KernelObject: 0x1000, KernargAddress: 0x100000, ScratchBase: 0x100000, ScratchSize: 0x10000,
				GroupSegmentSize: 1024, Apertures: DefaultApertures, MaxWaveInstructions: 200, Engine: Engine{Code: code}})
		}
		m := build()
		st, err := run(m, nil)
		var we *WaveError
		var fe *Fault
		var te *TrapError
		if errors.Is(err, ErrInternal) {
			t.Fatalf("interpreter bug: %v", err)
		}
		if err != nil && !errors.As(err, &we) && !errors.As(err, &fe) && !errors.As(err, &te) && !errors.Is(err, ErrBadDispatch) {
			t.Fatalf("unexpected error type %T: %v", err, err)
		}
		// The same kernel again through a CodeCache, the second time from the kept graph: the same
		// counts, error and memory as the dispatch that decoded for itself (one wave: deterministic).
		cache := &CodeCache{}
		for round := range 2 {
			m2 := build()
			st2, err2 := run(m2, cache)
			if st2 != st || fmt.Sprint(err2) != fmt.Sprint(err) {
				t.Fatalf("round %d with a CodeCache: %+v, %v; without: %+v, %v", round, st2, err2, st, err)
			}
			for va := uint64(0x100000); va < 0x110000; va += 0x1000 {
				var x, y [0x1000]byte
				m.Read(va, x[:])
				m2.Read(va, y[:])
				if x != y {
					t.Fatalf("round %d with a CodeCache: memory at %#x differs", round, va)
				}
			}
		}
	})
}

// FuzzKernelDescriptor dispatches a kernel whose 64-byte descriptor and launch sizes come from the
// input (the code is s_endpgm): every descriptor field a client controls is checked, nothing panics,
// and the only errors are descriptor or dispatch errors.
func FuzzKernelDescriptor(f *testing.F) {
	var kd [64]byte
	binary.LittleEndian.PutUint64(kd[16:], 0x100)
	binary.LittleEndian.PutUint32(kd[52:], 2<<1|1<<7)
	binary.LittleEndian.PutUint16(kd[56:], 1<<3)
	f.Add(kd[:], uint32(256), uint16(64), uint32(0))
	f.Add(make([]byte, 64), uint32(1), uint16(1), uint32(1<<20))
	f.Fuzz(func(t *testing.T, desc []byte, grid uint32, wg uint16, lds uint32) {
		if len(desc) > 256 {
			desc = desc[:256]
		}
		grid %= 1 << 16 // bound the work of one input
		m := newMem()
		m.mapRange(0x1000, 0x1000)
		m.Write(0x1000, desc)
		m.Write(0x1100, []byte{0, 0, 0x81, 0xbf}) // s_endpgm (where an entry offset of 0x100 points)
		_, err := Dispatch(context.Background(), m, DispatchParams{GridSize: [3]uint32{grid, 1, 1}, WorkgroupSize: [3]uint16{wg, 1, 1},
			KernelObject: 0x1000, GroupSegmentSize: lds, Apertures: DefaultApertures, MaxWaveInstructions: 100})
		var we *WaveError
		var fe *Fault
		var te *TrapError
		if errors.Is(err, ErrInternal) {
			t.Fatalf("interpreter bug: %v", err)
		}
		if err != nil && !errors.As(err, &we) && !errors.As(err, &fe) && !errors.As(err, &te) && !errors.Is(err, ErrBadDispatch) &&
			!errors.Is(err, ErrUnimplemented) {
			t.Fatalf("unexpected error type %T: %v", err, err)
		}
	})
}
