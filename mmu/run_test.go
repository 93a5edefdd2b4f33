package mmu

import (
	"math/rand/v2"
	"testing"
)

// TestRunsMatchEntries runs one random sequence of Map, Remap, Update and Unmap (system and VRAM
// memory, whole and partial page-table blocks, 2 MiB leaves split by partial changes) on a VM that
// holds uniform PTBs as runs and on one that never does, and compares every leaf of the touched
// space and the counters after each step.
func TestRunsMatchEntries(t *testing.T) {
	const span = 16 << 20 // 4096 pages, 8 PTBs
	const va0 = 0x40000000
	r := rand.New(rand.NewPCG(3, 4))
	ph := NewPhys()
	sysPA, err := ph.AllocSystem(span, Backing{Remote: &fakeRemote{}})
	if err != nil {
		t.Fatal(err)
	}
	vramPA, _ := vram(t, ph, span)
	runs, flat := NewVM(ph, Config{PASID: 1}), NewVM(ph, Config{PASID: 2})
	flat.noRuns = true
	var sawRun bool
	for step := 0; step < 3000; step++ {
		// page-table-block aligned most of the time, so whole PTBs and 2 MiB leaves occur
		pages := uint64(1 + r.IntN(1024))
		vpn := uint64(r.IntN(span>>pageShift - int(pages) + 1))
		if r.IntN(3) != 0 {
			vpn &^= entries - 1
			if r.IntN(2) == 0 {
				pages = (pages + entries - 1) &^ (entries - 1)
			}
			if r.IntN(4) == 0 {
				vpn &^= hugePages - 1
				pages = hugePages
			}
			if vpn+pages > span>>pageShift {
				pages = span>>pageShift - vpn
			}
		}
		va, size := va0+vpn<<pageShift, pages<<pageShift
		pa, flags := sysPA+vpn<<pageShift, rw|PTESystem|PTESnooped
		if r.IntN(2) == 0 {
			pa, flags = vramPA+vpn<<pageShift, rw
		}
		var op string
		var e1, e2 error
		switch r.IntN(4) {
		case 0:
			op, e1, e2 = "Map", runs.Map(va, size, pa, flags), flat.Map(va, size, pa, flags)
		case 1:
			op, e1, e2 = "Remap", runs.Remap(va, size, pa, flags), flat.Remap(va, size, pa, flags)
		case 2:
			op, e1, e2 = "Update", runs.Update(va, size, 0, PTEWriteable), flat.Update(va, size, 0, PTEWriteable)
			if r.IntN(2) == 0 {
				op, e1, e2 = "Update", runs.Update(va, size, PTEWriteable, 0), flat.Update(va, size, PTEWriteable, 0)
			}
		default:
			op, e1, e2 = "Unmap", runs.Unmap(va, size), flat.Unmap(va, size)
		}
		if (e1 == nil) != (e2 == nil) {
			t.Fatalf("step %d: %s(%#x, %#x): %v with runs, %v without", step, op, va, size, e1, e2)
		}
		for v := uint64(va0); v < va0+span; v += pageSize {
			p1, s1, ok1 := runs.Walk(v)
			p2, s2, ok2 := flat.Walk(v)
			if p1 != p2 || s1 != s2 || ok1 != ok2 {
				t.Fatalf("step %d after %s(%#x, %#x): va %#x: %#x/%#x/%v with runs, %#x/%#x/%v without",
					step, op, va, size, v, uint64(p1), s1, ok1, uint64(p2), s2, ok2)
			}
		}
		st1, st2 := runs.Stats(), flat.Stats()
		if st1.PTEs4K != st2.PTEs4K || st1.PDEs2M != st2.PDEs2M || st1.Tables != st2.Tables {
			t.Fatalf("step %d after %s: stats %+v with runs, %+v without", step, op, st1, st2)
		}
		runs.mu.RLock()
		sawRun = sawRun || hasRun(runs.root)
		runs.mu.RUnlock()
	}
	if !sawRun {
		t.Fatal("no PTB was ever held as a run: the test does not exercise runs")
	}
}

func hasRun(t *table) bool {
	if t == nil {
		return false
	}
	if t.e == nil {
		return true
	}
	if t.child != nil {
		for _, c := range t.child {
			if hasRun(c) {
				return true
			}
		}
	}
	return false
}
