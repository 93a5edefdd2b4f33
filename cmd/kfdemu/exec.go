package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/kfdemu/kfdemu/topology"
	"golang.org/x/sys/unix"
)

// runExec implements `kfdemu exec [--mount DIR] [--profile P] -- COMMAND...`: COMMAND runs in a
// private mount namespace in which the standard device and sysfs paths lead to the emulator.
func runExec(args []string) int {
	fl := flag.NewFlagSet("exec", flag.ContinueOnError)
	mount := fl.String("mount", DefaultMount, "kfdemu mount to use; a daemon is started for COMMAND's lifetime if none serves it")
	profile := fl.String("profile", "mi210", "profile for a daemon started by exec (as for serve)")
	fl.Usage = func() {
		fmt.Fprintln(fl.Output(), "usage: kfdemu exec [--mount DIR] [--profile NAME|FILE] -- COMMAND...\n\n"+
			"Runs COMMAND in a private mount namespace where /dev/kfd, /dev/dri/renderD*, /sys/devices/virtual/kfd,\n"+
			"/sys/class/kfd and /sys/module/amdgpu are the emulator's; everything else is the host's, and the\n"+
			"host's namespace is not changed. The exit status is COMMAND's; SIGINT, SIGTERM and SIGHUP reach it.")
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		return 2
	}
	cmdArgs := fl.Args()
	if len(cmdArgs) == 0 {
		fl.Usage()
		return 2
	}
	mnt, err := filepath.Abs(*mount)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kfdemu exec:", err)
		return 2
	}
	self, _ := os.Executable()
	if !served(mnt) {
		daemon := exec.Command(self, "serve", "--mount", mnt, "--profile", *profile, "--log-level", "warn")
		daemon.Stderr = os.Stderr
		if err := daemon.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "kfdemu exec: starting the daemon:", err)
			return 1
		}
		defer func() {
			daemon.Process.Signal(syscall.SIGTERM)
			done := make(chan struct{})
			go func() { daemon.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				daemon.Process.Kill()
			}
		}()
		deadline := time.Now().Add(15 * time.Second)
		for !served(mnt) {
			if time.Now().After(deadline) {
				fmt.Fprintln(os.Stderr, "kfdemu exec: the daemon did not come up at", mnt)
				return 1
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	child := exec.Command(self, append([]string{"__exec-child", mnt, "--"}, cmdArgs...)...)
	child.Stdin, child.Stdout, child.Stderr = os.Stdin, os.Stdout, os.Stderr
	child.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
	if err := child.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "kfdemu exec:", err)
		return 1
	}
	traceForward(child.Process)
	return exitStatusOf(child.Wait())
}

// served reports whether a live daemon serves mnt (a directory read reaches the server; a stat
// could be answered from the kernel's cache of a dead mount).
func served(mnt string) bool {
	_, err := os.ReadDir(filepath.Join(mnt, topologyPath))
	return err == nil
}

// runExecChild runs inside the new mount namespace: it redirects the paths, then execs COMMAND.
func runExecChild(args []string) int {
	if len(args) < 3 || args[1] != "--" {
		return 2
	}
	if err := setupNamespace(args[0]); err != nil {
		fmt.Fprintln(os.Stderr, "kfdemu exec:", err)
		return 1
	}
	path, err := exec.LookPath(args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, "kfdemu exec:", err)
		return 127
	}
	err = syscall.Exec(path, args[2:], os.Environ())
	fmt.Fprintln(os.Stderr, "kfdemu exec:", err)
	return 126
}

// setupNamespace makes the emulator appear at the standard paths of this (private) mount namespace.
// Directories that do not exist on the host (/dev/dri, /sys/devices/virtual/kfd) are created in an
// overlay whose upper layer is a private tmpfs, so nothing of the host changes:
//
//	/dev                  overlay(/dev + tmpfs): kfd and dri/renderD* are symlinks into MNT/dev
//	/sys/devices/virtual  overlay: kfd -> MNT/sys/devices/virtual/kfd
//	/sys/class            overlay: kfd -> MNT/sys/class/kfd
//	/sys/module           overlay: amdgpu -> MNT/sys/module/amdgpu
//
// Mounts below an overlaid directory (/dev/pts, /dev/shm) are moved on top of the overlay.
func setupNamespace(mnt string) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make / private: %w", err)
	}
	scratch, err := os.MkdirTemp("", "kfdemu-ns-")
	if err != nil {
		return err
	}
	if err := unix.Mount("tmpfs", scratch, "tmpfs", 0, "mode=0700"); err != nil {
		return fmt.Errorf("tmpfs: %w", err)
	}
	links := map[string]map[string]string{
		"/dev":                 {"kfd": filepath.Join(mnt, "dev/kfd")},
		"/sys/devices/virtual": {"kfd": filepath.Join(mnt, "sys/devices/virtual/kfd")},
		"/sys/class":           {"kfd": filepath.Join(mnt, "sys/class/kfd")},
		"/sys/module":          {"amdgpu": filepath.Join(mnt, "sys/module/amdgpu")},
	}
	renders, _ := filepath.Glob(filepath.Join(mnt, "dev/dri/renderD*"))
	for _, r := range renders {
		links["/dev"]["dri/"+filepath.Base(r)] = r
	}
	// libhsakmt reads /sys/devices/system/node/node<N> for every CPU node of the topology; a profile
	// with more CPU (NUMA) nodes than the host gets the extra ones as links to the host's node0.
	dirs := []string{"/dev", "/sys/devices/virtual", "/sys/class", "/sys/module"}
	if sys, err := topology.ReadSystem(filepath.Join(mnt, topologyPath)); err == nil {
		nodes := map[string]string{}
		cpus := 0
		for _, n := range sys.Nodes {
			if !n.IsGPU() {
				cpus++
			}
		}
		for i := 0; i < cpus; i++ {
			name := fmt.Sprintf("node%d", i)
			if _, err := os.Stat("/sys/devices/system/node/" + name); err != nil {
				nodes[name] = "node0"
			}
		}
		if len(nodes) > 0 {
			links["/sys/devices/system/node"] = nodes
			dirs = append(dirs, "/sys/devices/system/node")
		}
	}
	for i, dir := range dirs {
		if err := overlayWithLinks(scratch, i, dir, links[dir]); err != nil {
			return err
		}
	}
	return procModules(scratch)
}

// amdgpuModuleLine is how /proc/modules lists a loaded amdgpu (kernel/module/procfs.c m_show:
// name, size, refcount, users, state, address).
const amdgpuModuleLine = "amdgpu 15495168 0 - Live 0x0000000000000000\n"

// procModules makes /proc/modules list amdgpu, as rocminfo checks it with libkmod
// (kmod_module_new_from_loaded) before starting. With a host /proc/modules, a copy with amdgpu added
// is bind-mounted over it. A kernel built without modules has no /proc/modules, and procfs can
// neither be overlaid nor get new files: /proc then becomes a private tmpfs whose entries are
// symlinks into a private procfs instance (self and thread-self resolve per process through it),
// plus the synthetic modules file. Entries of processes started after setup are reachable through
// /proc/self and /proc/.kfdemu-procfs/<pid> but not listed at /proc/<pid> (README, deviations).
func procModules(scratch string) error {
	mods := filepath.Join(scratch, "modules")
	host, err := os.ReadFile("/proc/modules")
	if err == nil {
		if !strings.Contains("\n"+string(host), "\namdgpu ") {
			host = append(host, amdgpuModuleLine...)
		}
		if err := os.WriteFile(mods, host, 0444); err != nil {
			return err
		}
		return unix.Mount(mods, "/proc/modules", "", unix.MS_BIND, "")
	}
	real := filepath.Join(scratch, "procfs")
	os.MkdirAll(real, 0555)
	if err := unix.Mount("proc", real, "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("private procfs: %w", err)
	}
	if err := unix.Mount("tmpfs", "/proc", "tmpfs", 0, "mode=0555"); err != nil {
		return fmt.Errorf("tmpfs on /proc: %w", err)
	}
	const inner = "/proc/.kfdemu-procfs"
	os.Mkdir(inner, 0555)
	if err := unix.Mount(real, inner, "", unix.MS_MOVE, ""); err != nil {
		return fmt.Errorf("moving procfs: %w", err)
	}
	ents, err := os.ReadDir(inner)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if err := os.Symlink(filepath.Join(inner, e.Name()), filepath.Join("/proc", e.Name())); err != nil {
			return err
		}
	}
	return os.WriteFile("/proc/modules", []byte(amdgpuModuleLine), 0444)
}

func overlayWithLinks(scratch string, i int, dir string, links map[string]string) error {
	upper := filepath.Join(scratch, fmt.Sprint(i), "upper")
	work := filepath.Join(scratch, fmt.Sprint(i), "work")
	for _, d := range []string{upper, work} {
		if err := os.MkdirAll(d, 0755); err != nil {
			return err
		}
	}
	for name, target := range links {
		p := filepath.Join(upper, name)
		os.MkdirAll(filepath.Dir(p), 0755)
		if err := os.Symlink(target, p); err != nil {
			return err
		}
	}
	// Keep the submounts of dir: bind them aside, mount the overlay, move them back.
	subs := submounts(dir)
	aside := make([]string, len(subs))
	for j, s := range subs {
		aside[j] = filepath.Join(scratch, fmt.Sprintf("sub-%d-%d", i, j))
		os.MkdirAll(aside[j], 0755)
		if err := unix.Mount(s, aside[j], "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			aside[j] = ""
		}
	}
	opts := fmt.Sprintf("lowerdir=%s,upperdir=%s,workdir=%s", dir, upper, work)
	if err := unix.Mount("overlay", dir, "overlay", 0, opts); err != nil {
		return fmt.Errorf("overlay on %s: %w", dir, err)
	}
	for j, s := range subs {
		if aside[j] == "" {
			continue
		}
		if err := unix.Mount(aside[j], s, "", unix.MS_MOVE, ""); err != nil {
			return fmt.Errorf("restoring %s: %w", s, err)
		}
	}
	return nil
}

// submounts lists the mount points strictly below dir, outermost first.
func submounts(dir string) []string {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		mp := f[4]
		if strings.HasPrefix(mp, dir+"/") && !seen[mp] {
			// Only direct children are moved; deeper mounts travel with them (MS_REC bind).
			rel := strings.TrimPrefix(mp, dir+"/")
			parentCovered := false
			for _, o := range out {
				if strings.HasPrefix(mp, o+"/") {
					parentCovered = true
				}
			}
			if !parentCovered && !strings.Contains(rel, "\x00") {
				out = append(out, mp)
				seen[mp] = true
			}
		}
	}
	return out
}
