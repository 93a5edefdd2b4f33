package mmnotify

import (
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The test process arms itself on one page of a shared memfd mapping, punches the pages out (as
// package kfd does to a doorbell slice) and stores: a store to the other page brings no notice, a
// store to the armed page brings exactly one.
func TestTouch(t *testing.T) {
	n := open(t)
	if n.armed == nil {
		if _, err := os.Stat("/sys/kernel/tracing/events/exceptions/page_fault_user"); err != nil {
			t.Skipf("skipped: this kernel has no exceptions/page_fault_user tracepoint: %v", n.touchErr)
		}
		t.Fatalf("touch notices unavailable although the tracepoint exists: %v", n.touchErr)
	}
	w, err := n.Watch(os.Getpid(), func(uint64, uint64) {})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	const ps = 4096
	fd, err := unix.MemfdCreate("touch", unix.MFD_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if err := unix.Ftruncate(fd, 2*ps); err != nil {
		t.Fatal(err)
	}
	mem, err := unix.Mmap(fd, 0, 2*ps, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(mem)
	mem[0], mem[ps] = 1, 1 // mapped: stores do not fault
	base := uint64(uintptrOf(mem))
	notices := make(chan struct{}, 4)
	arm := func() {
		if err := w.ArmTouch([][2]uint64{{base, base + ps}}, func() { notices <- struct{}{} }); err != nil {
			t.Fatal(err)
		}
	}
	punch := func() {
		if err := unix.Fallocate(fd, unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, 0, 2*ps); err != nil {
			t.Fatal(err)
		}
	}
	none := func(what string) {
		select {
		case <-notices:
			t.Errorf("%s: a notice", what)
		case <-time.After(100 * time.Millisecond):
		}
	}
	arm()
	mem[0] = 2 // still mapped: no fault
	none("store to the armed page before the punch")
	punch()
	mem[ps] = 2 // faults, outside the range
	none("fault outside the armed range")
	if !w.Armed() {
		t.Fatal("disarmed by a fault outside the range")
	}
	mem[100] = 3 // faults in the range
	select {
	case <-notices:
	case <-time.After(5 * time.Second):
		t.Fatal("no notice for the fault in the armed range")
	}
	if w.Armed() {
		t.Error("still armed after the notice")
	}
	punch()
	mem[0] = 4
	none("a second fault without arming again")

	arm()
	w.Disarm()
	punch()
	mem[0] = 5
	none("a fault after Disarm")
}
