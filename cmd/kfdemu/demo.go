package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"unsafe"

	"github.com/kfdemu/kfdemu/topology"
	"golang.org/x/sys/unix"
)

// runDemo is the README's first command: mount the default profile in a temporary directory, read it
// back through the mount like a ROCm tool would, talk to dev/kfd, unmount.
func runDemo(args []string) int {
	fl := flag.NewFlagSet("demo", flag.ContinueOnError)
	var f serveFlags
	f.register(fl)
	fl.Lookup("mount").DefValue = "a new temporary directory"
	f.mount = ""
	fl.Usage = func() {
		fmt.Fprintln(fl.Output(), "usage: kfdemu demo [--profile NAME|FILE]\n\nMounts the emulator in a temporary directory, "+
			"prints what a client sees through the mount, and unmounts.")
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		return 2
	}
	if f.mount == "" {
		dir, err := os.MkdirTemp("", "kfdemu-demo-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "kfdemu demo:", err)
			return 1
		}
		defer os.Remove(dir)
		f.mount = dir
	}
	log := newLogger("warn")
	srv, code, err := mountEmulator(&f, log)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kfdemu demo:", err)
		if os.Geteuid() != 0 {
			fmt.Fprintln(os.Stderr, "kfdemu demo: mounting needs root (or CAP_SYS_ADMIN) and /dev/fuse")
		}
		return code
	}
	defer srv.Unmount()
	m := f.mount
	fmt.Printf("kfdemu mounted at %s (profile %s)\n\n", m, f.profile)
	topo := filepath.Join(m, topologyPath)
	sys, err := topology.ReadSystem(topo)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kfdemu demo: reading the topology through the mount:", err)
		return 1
	}
	fmt.Printf("$ kfdemu topo --mount %s\n", m)
	topology.WriteSummary(os.Stdout, sys)
	for _, p := range []string{"sys/module/amdgpu/initstate", "sys/class/kfd/kfd/topology/nodes/1/name"} {
		data, err := os.ReadFile(filepath.Join(m, p))
		fmt.Printf("\n$ cat %s\n%s", filepath.Join(m, p), data)
		if err != nil {
			fmt.Println(err)
		}
	}
	kfdPath := filepath.Join(m, "dev/kfd")
	fd, err := unix.Open(kfdPath, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		fmt.Printf("\n%s: %v (this build serves the topology only)\n", kfdPath, err)
		return 0
	}
	defer unix.Close(fd)
	// AMDKFD_IOC_GET_VERSION = _IOR('K', 0x01, struct kfd_ioctl_get_version_args {u32 major, minor}).
	var v [8]byte
	_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), 0x80084B01, uintptr(unsafe.Pointer(&v)))
	if e != 0 {
		fmt.Printf("\nAMDKFD_IOC_GET_VERSION: %v\n", e)
		return 1
	}
	fmt.Printf("\nopen(%s) + AMDKFD_IOC_GET_VERSION -> %d.%d\n", kfdPath,
		binary.LittleEndian.Uint32(v[0:]), binary.LittleEndian.Uint32(v[4:]))
	return 0
}
