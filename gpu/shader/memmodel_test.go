package shader

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kfdemu/kfdemu/internal/testenv"
)

// The memory-model sequences of gfx90a. Every global-memory atomic operation (load, store, atomicrmw,
// cmpxchg) and fence, at every LLVM sync scope and ordering, is compiled from LLVM IR by llc-14 for
// gfx90a; each instruction of each kernel must decode and have a routine; the cache controls LLVM
// emits must be the ones of AMDGPUUsage's "AMDHSA Memory Model Code Sequences GFX90A" table (the
// seed llvm-amdgpu-usage, non-tgsplit mode); and each kernel runs with its result checked.

var mmScopes = []string{"singlethread", "wavefront", "workgroup", "agent", "system"}

type mmCase struct{ op, order, scope string }

func (c mmCase) name() string { return "mm_" + c.op + "_" + c.order + "_" + c.scope }

// acquiring/releasing: the ordering has an acquire/release side for this operation (seq_cst loads
// are acquire, seq_cst stores release, seq_cst read-modify-writes and fences acq_rel).
func (c mmCase) acquiring() bool {
	return c.op != "store" && slices.Contains([]string{"acquire", "acq_rel", "seq_cst"}, c.order)
}

func (c mmCase) releasing() bool {
	return c.op != "load" && slices.Contains([]string{"release", "acq_rel", "seq_cst"}, c.order)
}

// wantCache is the set of cache controls the GFX90A table prescribes for global memory: a system
// release writes the L2 back (buffer_wbl2); an agent or system acquire invalidates the L1
// (buffer_wbinvl1_vol), a system one the L2 too (buffer_invl2); nothing below agent scope.
func (c mmCase) wantCache() []string {
	var w []string
	// One known difference: llc-14 also writes the L2 back before a system-scope acquire fence (its
	// memory legalizer inserts the release part for every fence ordering); the table, written for a
	// later LLVM, has only the wait there. The extra write-back is stronger, never weaker.
	if c.scope == "system" && (c.releasing() || c.op == "fence") {
		w = append(w, "buffer_wbl2")
	}
	if c.scope == "system" && c.acquiring() {
		w = append(w, "buffer_invl2")
	}
	if (c.scope == "agent" || c.scope == "system") && c.acquiring() {
		w = append(w, "buffer_wbinvl1_vol")
	}
	return w
}

func mmCases() []mmCase {
	orders := map[string][]string{
		"load":    {"monotonic", "acquire", "seq_cst"},
		"store":   {"monotonic", "release", "seq_cst"},
		"rmw":     {"monotonic", "acquire", "release", "acq_rel", "seq_cst"},
		"cmpxchg": {"monotonic", "acquire", "release", "acq_rel", "seq_cst"},
		"fence":   {"acquire", "release", "acq_rel", "seq_cst"},
	}
	var cs []mmCase
	for _, op := range []string{"load", "store", "rmw", "cmpxchg", "fence"} {
		for _, o := range orders[op] {
			for _, s := range mmScopes {
				cs = append(cs, mmCase{op, o, s})
			}
		}
	}
	return cs
}

// mmIR is one kernel per case over p (i32 addrspace(1)*): with i the global work-item id,
// load: p[1+i] = atomic load p[0]; store: atomic store 7 to p[0]; rmw: p[1+i] = atomicrmw add p[0], 1;
// cmpxchg: p[1+i] = success of cmpxchg p[0], 0 -> 5; fence: p[1+i] = 9, fence, p[200+i] = 10.
func mmIR(cs []mmCase) string {
	var b strings.Builder
	b.WriteString(`declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
`)
	for _, c := range cs {
		ss := ` syncscope("` + c.scope + `")`
		if c.scope == "system" {
			ss = ""
		}
		fmt.Fprintf(&b, `
define amdgpu_kernel void @%s(i32 addrspace(1)* %%p) {
  %%t = call i32 @llvm.amdgcn.workitem.id.x()
  %%g = call i32 @llvm.amdgcn.workgroup.id.x()
  %%g64 = mul i32 %%g, 64
  %%i = add i32 %%g64, %%t
  %%i1 = add i32 %%i, 1
  %%q = getelementptr i32, i32 addrspace(1)* %%p, i32 %%i1
`, c.name())
		switch c.op {
		case "load":
			fmt.Fprintf(&b, "  %%v = load atomic i32, i32 addrspace(1)* %%p%s %s, align 4\n  store i32 %%v, i32 addrspace(1)* %%q\n", ss, c.order)
		case "store":
			fmt.Fprintf(&b, "  store atomic i32 7, i32 addrspace(1)* %%p%s %s, align 4\n", ss, c.order)
		case "rmw":
			fmt.Fprintf(&b, "  %%v = atomicrmw add i32 addrspace(1)* %%p, i32 1%s %s\n  store i32 %%v, i32 addrspace(1)* %%q\n", ss, c.order)
		case "cmpxchg":
			fail := map[string]string{"monotonic": "monotonic", "acquire": "acquire", "release": "monotonic", "acq_rel": "acquire", "seq_cst": "seq_cst"}[c.order]
			fmt.Fprintf(&b, "  %%r = cmpxchg i32 addrspace(1)* %%p, i32 0, i32 5%s %s %s\n  %%ok = extractvalue { i32, i1 } %%r, 1\n  %%v = zext i1 %%ok to i32\n  store i32 %%v, i32 addrspace(1)* %%q\n", ss, c.order, fail)
		case "fence":
			fmt.Fprintf(&b, "  store i32 9, i32 addrspace(1)* %%q\n  fence%s %s\n  %%j = add i32 %%i, 200\n  %%r2 = getelementptr i32, i32 addrspace(1)* %%p, i32 %%j\n  store i32 10, i32 addrspace(1)* %%r2\n", ss, c.order)
		}
		b.WriteString("  ret void\n}\n")
	}
	return b.String()
}

func TestMemoryModelGFX90A(t *testing.T) {
	testenv.NeedTools(t, "llc-14", "ld.lld-14")
	cs := mmCases()
	dir := t.TempDir()
	ll, obj, co := filepath.Join(dir, "mm.ll"), filepath.Join(dir, "mm.o"), filepath.Join(dir, "mm.co")
	if err := os.WriteFile(ll, []byte(mmIR(cs)), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("llc-14", "-mtriple=amdgcn-amd-amdhsa", "-mcpu=gfx90a", "-O2", "-filetype=obj", ll, "-o", obj).CombinedOutput(); err != nil {
		t.Fatalf("llc-14: %v\n%s", err, out)
	}
	if out, err := exec.Command("ld.lld-14", "-shared", obj, "-o", co).CombinedOutput(); err != nil {
		t.Fatalf("ld.lld-14: %v\n%s", err, out)
	}
	code := mmKernelCode(t, co)
	l := loadPath(t, co)
	const n = 128
	for _, c := range cs {
		words, ok := code[c.name()]
		if !ok {
			t.Fatalf("%s: no code", c.name())
		}
		var cache []string
		for off := 0; off < len(words); {
			in, err := Decode(words[off:])
			if err != nil {
				t.Fatalf("%s+%#x: %08x does not decode: %v", c.name(), 4*off, words[off], err)
			}
			if resolve(&in) == nil {
				t.Errorf("%s+%#x: %s has no routine", c.name(), 4*off, in.String())
			}
			if nm := in.Info.Name; strings.HasPrefix(nm, "buffer_") && !strings.Contains(nm, "load") && !strings.Contains(nm, "store") && !strings.Contains(nm, "atomic") {
				cache = append(cache, nm)
			}
			off += in.Size / 4
		}
		if want := c.wantCache(); !slices.Equal(cache, want) {
			t.Errorf("%s: cache controls %v, the GFX90A table says %v", c.name(), cache, want)
		}
		t.Run(c.name(), func(t *testing.T) { mmRun(t, l, c, n) })
	}
}

// mmKernelCode returns each kernel's instruction words (its symbol's extent in .text).
func mmKernelCode(t *testing.T, path string) map[string][]uint32 {
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	text := f.Section(".text")
	data, err := text.Data()
	if err != nil {
		t.Fatal(err)
	}
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]uint32{}
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Value < text.Addr || s.Value+s.Size > text.Addr+text.Size {
			continue
		}
		b := data[s.Value-text.Addr : s.Value-text.Addr+s.Size]
		w := make([]uint32, len(b)/4)
		for i := range w {
			w[i] = binary.LittleEndian.Uint32(b[4*i:])
		}
		out[s.Name] = w
	}
	return out
}

func mmRun(t *testing.T, l *loaded, c mmCase, n int) {
	mem0 := make([]uint32, 512)
	if c.op == "load" {
		mem0[0] = 42
	}
	p := l.put(mem0)
	l.run(t, c.name(), [3]uint32{uint32(n), 1, 1}, [3]uint16{64, 1, 1}, args(p))
	got := make([]uint32, 512)
	l.get(p, got)
	switch c.op {
	case "load":
		for i := 0; i < n; i++ {
			if got[1+i] != 42 {
				t.Fatalf("lane %d loaded %d, want 42", i, got[1+i])
			}
		}
	case "store":
		if got[0] != 7 {
			t.Fatalf("p[0] = %d, want 7", got[0])
		}
	case "rmw":
		olds := slices.Clone(got[1 : 1+n])
		slices.Sort(olds)
		for i, v := range olds {
			if v != uint32(i) {
				t.Fatalf("returned values %v are not 0..%d", olds, n-1)
			}
		}
		if got[0] != uint32(n) {
			t.Fatalf("p[0] = %d, want %d", got[0], n)
		}
	case "cmpxchg":
		wins := 0
		for _, v := range got[1 : 1+n] {
			wins += int(v)
		}
		if got[0] != 5 || wins != 1 {
			t.Fatalf("p[0] = %d with %d successful exchanges, want 5 and 1", got[0], wins)
		}
	case "fence":
		for i := 0; i < n; i++ {
			if got[1+i] != 9 || got[200+i] != 10 {
				t.Fatalf("lane %d: %d %d, want 9 10", i, got[1+i], got[200+i])
			}
		}
	}
}
