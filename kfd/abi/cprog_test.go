package abi

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// runCValues compiles src (a C program printing one "KEY VALUE" line per value, KEY possibly with
// spaces, VALUE a decimal integer) with gcc and ccArgs, runs it and returns the values by key,
// negative ones as their two's complement. The header tests of this package share it.
func runCValues(t *testing.T, cc, src string, ccArgs ...string) map[string]uint64 {
	t.Helper()
	dir := t.TempDir()
	file, bin := filepath.Join(dir, "abi.c"), filepath.Join(dir, "abi")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(cc, append(append(ccArgs, "-o", bin), file)...).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]uint64{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		i := strings.LastIndexByte(l, ' ')
		if i < 0 {
			t.Fatalf("bad line %q", l)
		}
		v, err := strconv.ParseUint(l[i+1:], 10, 64)
		if err != nil {
			n, err := strconv.ParseInt(l[i+1:], 10, 64)
			if err != nil {
				t.Fatalf("bad line %q", l)
			}
			v = uint64(n)
		}
		got[l[:i]] = v
	}
	return got
}
