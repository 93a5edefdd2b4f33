package shader

import (
	"bufio"
	"bytes"
	"debug/elf"
	"encoding/binary"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/kfdemu/kfdemu/internal/testenv"
)

var (
	corpusOnce sync.Once
	corpusPath string
	corpusErr  error
)

// buildCorpus compiles testdata/corpus.cl into a code object once per test process.
func buildCorpus(t testing.TB) string {
	t.Helper()
	testenv.NeedTools(t, "clang-14", "ld.lld-14")
	corpusOnce.Do(func() {
		dir, err := os.MkdirTemp("", "shader-corpus")
		if err != nil {
			corpusErr = err
			return
		}
		corpusPath, corpusErr = testenv.CompileOpenCL("testdata/corpus.cl", dir)
	})
	if corpusErr != nil {
		t.Fatal(corpusErr)
	}
	return corpusPath
}

// textWords returns the .text section as dwords and its address.
func textWords(t testing.TB, path string) ([]uint32, uint64) {
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := f.Section(".text")
	data, err := s.Data()
	if err != nil {
		t.Fatal(err)
	}
	w := make([]uint32, len(data)/4)
	for i := range w {
		w[i] = binary.LittleEndian.Uint32(data[4*i:])
	}
	return w, s.Addr
}

// TestDisasmDifferential disassembles the whole corpus .text with llvm-objdump-14 and with Decode/String
// and compares instruction by instruction.
func TestDisasmDifferential(t *testing.T) {
	path := buildCorpus(t)
	if _, err := exec.LookPath("llvm-objdump-14"); err != nil {
		t.Skip("llvm-objdump-14 not installed")
	}
	out, err := exec.Command("llvm-objdump-14", "-d", "--mcpu=gfx90a", path).Output()
	if err != nil {
		t.Fatal(err)
	}
	type ref struct {
		addr uint64
		text string
	}
	var refs []ref
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		l := sc.Text()
		if !strings.HasPrefix(l, "\t") {
			continue
		}
		i := strings.Index(l, "//")
		if i < 0 {
			continue
		}
		text := strings.Join(strings.Fields(l[:i]), " ")
		var addr uint64
		f := strings.Fields(l[i+2:])
		for _, c := range f[0][:len(f[0])-1] {
			addr = addr*16 + uint64(strings.IndexRune("0123456789ABCDEF", c))
		}
		refs = append(refs, ref{addr, text})
	}
	words, base := textWords(t, path)
	agree := 0
	for _, r := range refs {
		idx := int(r.addr-base) / 4
		in, err := Decode(words[idx:])
		got := ""
		if err != nil {
			got = "error: " + err.Error()
		} else {
			got = strings.Join(strings.Fields(in.String()), " ")
		}
		if got == r.text {
			agree++
		} else {
			t.Errorf("%#x: llvm %q, ours %q", r.addr, r.text, got)
		}
	}
	t.Logf("disassembly agreement: %d/%d instructions", agree, len(refs))
	if len(refs) < 500 {
		t.Fatalf("only %d instructions in the llvm-objdump output", len(refs))
	}
}
