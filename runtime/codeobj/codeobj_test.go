package codeobj

import (
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// compile builds src (OpenCL C) for gfx90a with clang-14 and ld.lld-14.
func compile(t testing.TB, src string) []byte {
	t.Helper()
	for _, tool := range []string{"clang-14", "ld.lld-14"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("skipping: %s not installed (Debian package from scripts/install-deps.sh)", tool)
		}
	}
	dir := t.TempDir()
	cl, obj, co := filepath.Join(dir, "k.cl"), filepath.Join(dir, "k.o"), filepath.Join(dir, "k.co")
	if err := os.WriteFile(cl, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("clang-14", "-target", "amdgcn-amd-amdhsa", "-mcpu=gfx90a", "-nogpulib", "-O2",
		"-cl-std=CL2.0", "-c", cl, "-o", obj).CombinedOutput(); err != nil {
		t.Fatalf("clang-14: %v\n%s", err, out)
	}
	if out, err := exec.Command("ld.lld-14", "-shared", obj, "-o", co).CombinedOutput(); err != nil {
		t.Fatalf("ld.lld-14: %v\n%s", err, out)
	}
	b, err := os.ReadFile(co)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Two kernels, one with a global variable whose address is taken: a relocation.
const twoKernels = `
global int table[4] = {1, 2, 3, 4};
global int *global ptab = table;
kernel void scale(global float *a, float f) { a[__builtin_amdgcn_workitem_id_x()] *= f; }
kernel void lookup(global int *out) { out[0] = ptab[2]; }
`

func TestParse(t *testing.T) {
	o, err := Parse(compile(t, twoKernels))
	if err != nil {
		t.Fatal(err)
	}
	if o.Processor != "gfx90a" || o.ABI < 2 || len(o.Version) == 0 || o.Target == "" {
		t.Errorf("processor %q abi %d version %v target %q", o.Processor, o.ABI, o.Version, o.Target)
	}
	if len(o.Kernels) != 2 || o.Kernels[0].Name != "lookup" || o.Kernels[1].Name != "scale" {
		t.Fatalf("kernels %+v", o.Kernels)
	}
	s, _ := o.Kernel("scale")
	if s.KernargSegmentSize < 12 || len(s.Args) < 2 || s.Args[0].ValueKind != "global_buffer" || s.Args[1].Offset != 8 ||
		s.Args[1].Size != 4 || s.DescriptorOffset%64 != 0 || s.DescriptorOffset == 0 {
		t.Errorf("scale: %+v", s)
	}
	// The image at two bases differs exactly at the relocated words.
	a, b := o.Image(0x100000), o.Image(0x200000)
	if len(a) != int(o.Size) || o.Size%4096 != 0 {
		t.Fatalf("image of %d bytes, size %d", len(a), o.Size)
	}
	if len(o.relocs) == 0 {
		t.Fatal("no relocation in an object that takes a global's address")
	}
	for _, r := range o.relocs {
		va, vb := binary.LittleEndian.Uint64(a[r.off:]), binary.LittleEndian.Uint64(b[r.off:])
		if vb-va != 0x100000 {
			t.Errorf("relocated word at %#x: %#x at base 1 MiB, %#x at 2 MiB", r.off, va, vb)
		}
	}
}

func TestParseRejects(t *testing.T) {
	for name, b := range map[string][]byte{
		"empty":   nil,
		"not elf": []byte("hello, world, this is not an ELF file at all"),
		"host":    mustRead(t, "/proc/self/exe"),
	} {
		if _, err := Parse(b); !errors.Is(err, ErrFormat) {
			t.Errorf("%s: %v, want ErrFormat", name, err)
		}
	}
}

func mustRead(t *testing.T, p string) []byte {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b[:min(len(b), 1<<16)]
}

// FuzzParse: no input makes Parse panic, and what it accepts lays out without panicking.
func FuzzParse(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("\x7fELF\x02\x01\x01\x40\x02"))
	if _, err := exec.LookPath("clang-14"); err == nil {
		b := compile(f, twoKernels)
		f.Add(b)
		c := append([]byte(nil), b...)
		c[48] = 0x30 // gfx908
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := Parse(b)
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error without ErrFormat: %v", err)
			}
			return
		}
		if img := o.Image(1 << 32); uint64(len(img)) != o.Size {
			t.Fatalf("image %d bytes, size %d", len(img), o.Size)
		}
	})
}
