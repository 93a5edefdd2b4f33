package shader

import (
	"fmt"
	"math/rand"
	"os/exec"
	"sort"
	"strings"
	"testing"
)

// TestMIMGDisasmAgainstLLVM decodes random MIMG encodings of every gfx90a image opcode (random DMASK,
// modifiers, registers, AGPR data) and compares our text with llvm-mc-14 --disassemble (the MC
// disassembler llvm-objdump-14 uses) on the same bytes.
func TestMIMGDisasmAgainstLLVM(t *testing.T) {
	if _, err := exec.LookPath("llvm-mc-14"); err != nil {
		t.Skip("skipping: llvm-mc-14 not installed (Debian package from scripts/install-deps.sh)")
	}
	rng := rand.New(rand.NewSource(1))
	var ops []uint16
	for op := range tabMIMG {
		ops = append(ops, op)
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i] < ops[j] })
	var words [][2]uint32
	var ours []string
	// The encoding of the failing ROCr blit instruction first.
	cand := [][2]uint32{{0xf0205f00, 0x00020004}}
	for _, op := range ops {
		for i := 0; i < 16; i++ {
			w0 := uint32(0x3c)<<26 | uint32(op)<<18 | rng.Uint32()&(1<<25|1<<17|1<<16|1<<15|1<<14|1<<13|1<<12|0xf<<8)
			w1 := uint32(rng.Intn(24)) << 16 // s[0:7] .. s[92:99]
			if tabMIMG[op].Name == "image_sample" {
				w1 |= uint32(rng.Intn(25)) << 21
			}
			w1 |= uint32(rng.Intn(200))<<8 | uint32(rng.Intn(250)) | rng.Uint32()&(1<<31)
			cand = append(cand, [2]uint32{w0, w1})
		}
	}
	for _, c := range cand {
		in, err := Decode([]uint32{c[0], c[1]})
		if err != nil {
			continue // an invalid DMASK/D16 pair (mimgVData 0)
		}
		words = append(words, c)
		ours = append(ours, in.String())
	}
	if len(words) < 150 {
		t.Fatalf("only %d decodable samples", len(words))
	}
	var input strings.Builder
	for _, w := range words {
		for _, x := range w {
			fmt.Fprintf(&input, "0x%02x 0x%02x 0x%02x 0x%02x ", x&0xff, x>>8&0xff, x>>16&0xff, x>>24)
		}
		input.WriteString("\n")
	}
	cmd := exec.Command("llvm-mc-14", "--disassemble", "-arch=amdgcn", "-mcpu=gfx90a")
	cmd.Stdin = strings.NewReader(input.String())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("llvm-mc-14: %v\n%s", err, out)
	}
	var theirs []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "\t") && strings.TrimSpace(l) != ".text" {
			theirs = append(theirs, strings.Join(strings.Fields(l), " "))
		}
		if strings.Contains(l, "warning") {
			t.Errorf("llvm-mc-14 rejects an encoding we accept: %s", l)
		}
	}
	if len(theirs) != len(ours) {
		t.Fatalf("llvm-mc printed %d instructions for %d", len(theirs), len(ours))
	}
	for i := range ours {
		if ours[i] != theirs[i] {
			t.Errorf("%08x %08x: llvm %q, ours %q", words[i][0], words[i][1], theirs[i], ours[i])
		}
	}
	if ours[0] != "image_store v[0:3], v4, s[8:15] dmask:0xf unorm da" {
		t.Errorf("issue encoding: %q", ours[0])
	}
}
