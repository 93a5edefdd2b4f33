package main

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// runBench mounts a profile in a temporary directory and measures what a client pays, each figure
// against a floor measured in the same run: the AQL barrier round trip (doorbell store to
// completion signal, p50/p99) against a no-op ioctl through FUSE (GET_VERSION).
func runBench(args []string) int {
	fl := flag.NewFlagSet("bench", flag.ContinueOnError)
	var f serveFlags
	f.register(fl)
	n := fl.Int("n", 5000, "iterations per figure")
	fl.Usage = func() {
		fmt.Fprintln(fl.Output(), "usage: kfdemu bench [--profile NAME|FILE] [-n N]\n\nMounts the emulator in a temporary "+
			"directory and prints figures with the floor each is compared to, measured in the same run.")
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		return 2
	}
	if *n < 100 {
		fmt.Fprintln(os.Stderr, "kfdemu bench: -n must be at least 100")
		return 2
	}
	dir, err := os.MkdirTemp("", "kfdemu-bench-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "kfdemu bench:", err)
		return 1
	}
	defer os.Remove(dir)
	f.mount = dir
	srv, code, err := mountEmulator(&f, newLogger("warn"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "kfdemu bench:", err)
		return code
	}
	defer srv.Unmount()
	c, err := newAQLClient(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kfdemu bench:", err)
		return 1
	}
	defer c.Close()
	// Floor: GET_VERSION, _IOR('K', 0x01, 8 bytes), the cheapest request a client can make.
	var v [8]byte
	floor := make([]time.Duration, *n)
	for i := range floor {
		start := time.Now()
		if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(c.d.FD()), 0x80084B01, uintptr(unsafe.Pointer(&v))); e != 0 {
			fmt.Fprintln(os.Stderr, "kfdemu bench: GET_VERSION:", e)
			return 1
		}
		floor[i] = time.Since(start)
	}
	rt := make([]time.Duration, *n)
	for i := range rt {
		if rt[i], err = c.barrier(5 * time.Second); err != nil {
			fmt.Fprintln(os.Stderr, "kfdemu bench:", err)
			return 1
		}
	}
	pf50, pf99 := percentiles(floor)
	pa50, pa99 := percentiles(rt)
	fmt.Printf("profile %s, %d iterations each\n\n", f.profile, *n)
	fmt.Printf("%-44s %12s %12s %8s\n", "figure", "p50", "p99", "p50/floor")
	fmt.Printf("%-44s %12v %12v %8s\n", "floor: no-op ioctl (GET_VERSION) through FUSE", pf50, pf99, "1")
	fmt.Printf("%-44s %12v %12v %8.3f\n", "AQL barrier round trip (doorbell -> signal)", pa50, pa99, float64(pa50)/float64(pf50))
	return 0
}

func percentiles(d []time.Duration) (p50, p99 time.Duration) {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2], s[len(s)*99/100]
}
