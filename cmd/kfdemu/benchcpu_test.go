package main

import "testing"

func TestParseProcStat(t *testing.T) {
	for _, c := range []struct {
		in         string
		steal, all uint64
		ok         bool
	}{
		// proc(5): user nice system idle iowait irq softirq steal guest guest_nice
		{"cpu  3151608 16006 700026 5954709 17479 0 20364 717710 0 0\ncpu0 1 2 3 4 5 6 7 8 9 10\n", 717710, 3151608 + 16006 + 700026 + 5954709 + 17479 + 0 + 20364 + 717710, true},
		{"cpu  1 2 3 4 5 6 7 8 100 100\n", 8, 36, true}, // guest time is in user and nice already
		{"cpu  1 2 3 4 5 6 7\n", 0, 0, false},           // before Linux 2.6.11: no steal column
		{"cpu0 1 2 3 4 5 6 7 8\n", 0, 0, false},
		{"cpu  1 2 3 4 5 6 7 x\n", 0, 0, false},
		{"", 0, 0, false},
	} {
		steal, all, ok := parseProcStat([]byte(c.in))
		if steal != c.steal || all != c.all || ok != c.ok {
			t.Errorf("parseProcStat(%q) = %d, %d, %v; want %d, %d, %v", c.in, steal, all, ok, c.steal, c.all, c.ok)
		}
	}
	u := sampleCPU().since()
	if u.Steal < -1 || u.Steal > 1 || u.CPU < 0 || u.Wall < 0 {
		t.Errorf("cpu use over nothing: %+v", u)
	}
}
