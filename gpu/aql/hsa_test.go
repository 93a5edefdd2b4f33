package aql

import (
	"bytes"
	"testing"
)

func TestHeader(t *testing.T) {
	for _, c := range []struct {
		typ      uint8
		barrier  bool
		acq, rel uint8
		want     uint16
	}{
		{PacketTypeKernelDispatch, true, FenceScopeSystem, FenceScopeSystem, 0x1502}, // [PSA] §3.1 example
		{PacketTypeBarrierAnd, false, FenceScopeNone, FenceScopeAgent, 0x0803},
		{PacketTypeInvalid, false, 0, 0, 1},
		{PacketTypeBarrierOr, true, FenceScopeAgent, FenceScopeNone, 0x0305},
	} {
		h := MakeHeader(c.typ, c.barrier, c.acq, c.rel)
		if h != c.want {
			t.Errorf("MakeHeader(%d,%v,%d,%d) = %#x, want %#x", c.typ, c.barrier, c.acq, c.rel, h, c.want)
		}
		if PacketType(h) != c.typ || Barrier(h) != c.barrier || AcquireFenceScope(h) != c.acq || ReleaseFenceScope(h) != c.rel {
			t.Errorf("%#x decodes to %d %v %d %d", h, PacketType(h), Barrier(h), AcquireFenceScope(h), ReleaseFenceScope(h))
		}
	}
	if Dimensions(0xfffe) != 2 {
		t.Errorf("Dimensions(0xfffe) = %d", Dimensions(0xfffe))
	}
}

func TestField(t *testing.T) {
	f := RSRC2UserSGPRCount // bits 5:1
	if f.Mask() != 0x3e || f.Get(0xffffffff) != 31 || f.Set(0, 7) != 14 || f.Set(0xffffffff, 0) != 0xffffffc1 {
		t.Errorf("USER_SGPR_COUNT: mask %#x get %d set %#x %#x", f.Mask(), f.Get(0xffffffff), f.Set(0, 7), f.Set(0xffffffff, 0))
	}
	if RSRC1FwdProgress.Mask() != 0x80000000 || QueuePropReserved1.Mask() != 0xffffffe0 {
		t.Error("top-bit masks wrong")
	}
	if f.Set(0, 0xff) != 0x3e {
		t.Error("Set does not truncate to the field width")
	}
}

// TestCodecs round-trips every packet type through its hand-written codec and compares with the
// generic encoding/binary codec, so both agree on the C layout.
func TestCodecs(t *testing.T) {
	raw := make([]byte, 64)
	for i := range raw {
		raw[i] = byte(i*7 + 3)
	}
	type codec interface {
		Decode([]byte) error
		Encode([]byte) error
	}
	for name, p := range map[string]codec{"dispatch": &KernelDispatchPacket{}, "agent": &AgentDispatchPacket{},
		"barrier": &BarrierPacket{}, "barrier-value": &BarrierValuePacket{}, "kd": &KernelDescriptor{}} {
		if err := p.Decode(raw); err != nil {
			t.Fatal(err)
		}
		out := make([]byte, 64)
		if err := p.Encode(out); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out, raw) {
			t.Errorf("%s: round trip differs", name)
		}
		gen := make([]byte, 64)
		if err := Encode(gen, p); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(gen, raw) {
			t.Errorf("%s: encoding/binary layout differs from the hand-written codec", name)
		}
		if p.Decode(raw[:63]) != ErrShort || p.Encode(out[:10]) != ErrShort {
			t.Errorf("%s: short buffer not rejected", name)
		}
	}
	var kd KernelDescriptor
	kd.KernelCodeEntryByteOffset = -256
	if pc, ok := kd.EntryPoint(0x10000); pc != 0xff00 || !ok {
		t.Errorf("EntryPoint = %#x %v", pc, ok)
	}
	kd.KernelCodeEntryByteOffset = 64
	if _, ok := kd.EntryPoint(0x10000); ok {
		t.Error("unaligned entry accepted")
	}
	var q AMDQueue
	if Decode(make([]byte, 255), &q) != ErrShort {
		t.Error("short AMDQueue accepted")
	}
	b := make([]byte, 256)
	b[AMDQueueReadDispatchIDOffset] = 9
	b[AMDQueueWriteDispatchIDOffset] = 11
	if err := Decode(b, &q); err != nil || q.ReadDispatchID != 9 || q.WriteDispatchID != 11 {
		t.Errorf("AMDQueue decode: %v %+v", err, q)
	}
}

func TestCompareSignal(t *testing.T) {
	for _, c := range []struct {
		cond    uint32
		v, w    int64
		met, ok bool
	}{
		{SignalConditionEQ, 0, 0, true, true}, {SignalConditionNE, 0, 0, false, true},
		{SignalConditionLT, -1, 0, true, true}, // signed ([PSA] §2.5)
		{SignalConditionGTE, -1, 0, false, true}, {SignalConditionGTE, 5, 5, true, true}, {4, 0, 0, false, false},
	} {
		met, ok := CompareSignal(c.cond, c.v, c.w)
		if met != c.met || ok != c.ok {
			t.Errorf("CompareSignal(%d,%d,%d) = %v,%v", c.cond, c.v, c.w, met, ok)
		}
	}
}

// FuzzDecode feeds client bytes to every decoder: no panic, and Encode reproduces the input.
func FuzzDecode(f *testing.F) {
	f.Add(make([]byte, 64))
	f.Add(bytes.Repeat([]byte{0xff}, 64))
	f.Add([]byte{2, 0x15, 1, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, p := range []interface {
			Decode([]byte) error
			Encode([]byte) error
		}{&KernelDispatchPacket{}, &AgentDispatchPacket{}, &BarrierPacket{}, &BarrierValuePacket{}, &KernelDescriptor{}} {
			if err := p.Decode(b); err != nil {
				if len(b) >= 64 {
					t.Fatalf("%T: %v", p, err)
				}
				continue
			}
			out := make([]byte, 64)
			p.Encode(out)
			if !bytes.Equal(out, b[:64]) {
				t.Fatalf("%T: round trip differs", p)
			}
		}
		var q AMDQueue
		_ = Decode(b, &q)
		var kc KernelCode
		_ = Decode(b, &kc)
	})
}
