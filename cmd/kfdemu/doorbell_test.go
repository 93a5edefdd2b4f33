package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kfdemu/kfdemu/doorbell"
	"github.com/kfdemu/kfdemu/fs"
	"github.com/kfdemu/kfdemu/internal/testenv"
	"github.com/kfdemu/kfdemu/kfd"
)

// TestDoorbellTouch: with the doorbell watcher's polls set to an hour, an idle queue's doorbell
// is still answered, so only the touch notice (kfd/doorbellarm.go: the doorbell pages punched out
// of the client's page tables, the store's page fault seen through eBPF) can have woken it; and
// while armed the watcher does not poll. Three rounds: the watcher re-arms after each store.
func TestDoorbellTouch(t *testing.T) {
	testenv.NeedMount(t)
	sys, _, err := loadSystem(&serveFlags{profile: "mi210"})
	if err != nil {
		t.Fatal(err)
	}
	d := newDevice(sys, newLogger("warn"), true).(*kfd.Driver)
	if d.InterfaceMinor() != kfd.MinorSVM {
		t.Fatal("no eBPF mm notices as root: the touch notice cannot work")
	}
	if _, err := os.Stat("/sys/kernel/tracing/events/exceptions/page_fault_user"); err != nil {
		t.Skipf("skipping: this kernel has no exceptions/page_fault_user tracepoint (%v)", err)
	}
	d.SetDoorbellTuning(doorbell.Tuning{ArmAfter: 50 * time.Millisecond, DeepAfter: time.Hour, MaxPoll: time.Hour,
		DeepPoll: time.Hour, ArmedPoll: time.Hour})
	mnt := filepath.Join(t.TempDir(), "mnt")
	srv, err := fs.Mount(mnt, fs.Options{System: sys, Log: newLogger("warn"), Device: d})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Unmount()
	c, err := newAQLClient(mnt)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.barrier(5 * time.Second); err != nil {
		t.Fatal(err) // the first store after Watch: the fast phase sees it
	}
	for round := range 3 {
		st := d.Stats()
		arms0, touches0 := st["doorbell_arms"], st["doorbell_touches"]
		deadline := time.Now().Add(10 * time.Second)
		for d.Stats()["doorbell_arms"] == arms0 {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: the watcher never armed: %v", round, d.Stats())
			}
			time.Sleep(10 * time.Millisecond)
		}
		scans := d.Stats()["doorbell_scans"]
		time.Sleep(300 * time.Millisecond)
		if n := d.Stats()["doorbell_scans"] - scans; n > 1 {
			t.Errorf("round %d: %d scans in 300 ms while armed", round, n)
		}
		lat, err := c.barrier(10 * time.Second)
		if err != nil {
			t.Fatalf("round %d: the doorbell after arming was not seen: %v", round, err)
		}
		if st := d.Stats(); st["doorbell_touches"] <= touches0 {
			t.Errorf("round %d: answered without a touch notice: %v", round, st)
		}
		t.Logf("round %d: first doorbell after arming answered in %v", round, lat)
	}
}
