// Package nsexec builds the private mount namespace in which `kfdemu exec` runs unmodified ROCm
// programs (libhsakmt, ROCr, rocminfo 5.2.3) against an emulator mount MNT. It models what a host
// with the amdgpu driver loaded looks like to those programs, and nothing else:
//
//	/dev/kfd, /dev/dri/renderD<N>   symlinks to MNT/dev/kfd, MNT/dev/dri/renderD<N>, in an overlay
//	                                over the host's /dev (tmpfs upper layer)
//	/sys/devices/virtual/kfd        bind mount of MNT/sys/devices/virtual/kfd, on a directory of an
//	/sys/class/kfd                  overlay over /sys/devices/virtual, /sys/class, /sys/module
//	/sys/module/amdgpu              (sysfs is read-only and the directories do not exist without
//	                                the driver)
//	/sys/devices/system/node/nodeK  for CPU nodes of the topology the host lacks: links to node0
//	/sys/devices/system/cpu/cpuN/cache  only when the host kernel shows no CPU caches (cpucache.go)
//	/sys/devices/pciDDDD:RR/...     the amdgpu sysfs of the GPUs (PCI device directories),
//	/sys/class/drm, /sys/class/hwmon grafted onto the host's tree (see Layout.graft): an overlay
//	                                on the parent of every entry the host lacks, a bind mount or
//	                                link there; host entries stay visible (same names shadowed)
//	/proc/modules                   the host's list plus an amdgpu line (see ProcModules)
//
// Overlays below /sys take their lower layer from a private bind of the host's sysfs, so nested
// grafts (an overlay inside an overlaid directory) stay within the kernel's stacking depth.
//
// Everything else is the host's. Device files are symlinks, not bind mounts, because the emulator
// answers every lookup of a device file with an inode of the calling process (FUSE passthrough
// needs one backing file per inode): a bind mount would pin the inode looked up at setup time.
//
// The namespace is made by Command: the current binary is re-executed with CLONE_NEWNS (Go's
// forkAndExecInChild also makes "/" MS_REC|MS_PRIVATE in the child, so nothing propagates back to
// the host), the re-executed process calls MaybeRunChild from an init function, which runs Setup
// and then execve(2)s the command, keeping its pid. The host's mount namespace is never changed;
// the scratch directory Setup mounts its tmpfs on is removed again before the command starts.
//
// Why /proc/modules: rocminfo 5.2.3 (rocminfo.cc, CheckInitialState) decides whether the driver is
// loaded with popen("lsmod | grep amdgpu") and fails with "ROCk module is NOT loaded, possibly no
// GPU devices" when that prints nothing; lsmod (kmod, kmod_module_new_from_loaded) lists only
// /proc/modules, then reads /sys/module/<name>/{coresize,refcnt,holders}. Newer rocminfo reads
// /sys/module/amdgpu/initstate ("live"), which the bind of MNT/sys/module/amdgpu provides.
//
// The package holds no locks; Setup must run in a process that is alone in its mount namespace.
package nsexec

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/kfdemu/kfdemu/internal/seccomp"
	"github.com/kfdemu/kfdemu/kfd/abi"
	"golang.org/x/sys/unix"
)

// ChildArg is the first argument of the re-executed binary, ChildEnv marks it in the environment
// (set to "1"); MaybeRunChild looks for both, so a stray argument alone never triggers it.
const (
	ChildArg = "__exec-child"
	ChildEnv = "KFDEMU_NSEXEC_CHILD"
)

// Exit statuses of the child when COMMAND does not run, as env(1) and shells use them.
const (
	ExitSetup       = 125 // the namespace could not be built
	ExitNotExecuted = 126 // COMMAND exists but execve failed
	ExitNotFound    = 127 // COMMAND not found in PATH
)

// Paths inside MNT (and, without the MNT prefix, in the namespace).
const (
	KFDPath        = "dev/kfd"
	DRIPath        = "dev/dri"
	KFDSysPath     = "sys/devices/virtual/kfd"
	ClassPath      = "sys/class/kfd"
	ModulePath     = "sys/module/amdgpu"
	TopologyPath   = "sys/devices/virtual/kfd/kfd/topology"
	GenerationPath = TopologyPath + "/generation_id"
	// StatsPath is the daemon's counters; its first line is "ready 1" once the daemon is fully
	// up (MNT only; the namespace does not expose debugfs).
	StatsPath = "sys/kernel/debug/kfdemu/stats"
)

// AmdgpuModuleLine is the line /proc/modules shows for a loaded amdgpu (kernel/module/procfs.c
// m_show: name, core size, refcount, users ("-" when none), state, load address; the address is
// 0 for readers without CAP_SYSLOG, kallsyms_show_value).
const AmdgpuModuleLine = "amdgpu 15495168 0 - Live 0x0000000000000000\n"

// Link is one symlink placed in the upper layer of an overlay: Dir/Name -> Target.
type Link struct{ Dir, Name, Target string }

// Bind is one bind mount of Source (in MNT) on Target (a directory created in an overlay).
type Bind struct{ Source, Target string }

// Layout is what Setup does, computed by Plan without side effects.
type Layout struct {
	Mount    string   // MNT, absolute
	Overlays []string // host directories covered by an overlay with a tmpfs upper layer
	Links    []Link
	Files    []File // regular files in an overlay's upper layer (CPU cache directories, cpucache.go)
	Binds    []Bind
	// ProcModules is "bind" when the host has /proc/modules (a copy with amdgpu added is bound over
	// it) and "shadow" when the kernel has no module support (no /proc/modules; procfs can neither
	// get new files nor be an overlay layer): /proc then becomes a tmpfs whose entries are symlinks
	// into a private procfs instance at /proc/.kfdemu-procfs, plus the synthetic modules file.
	ProcModules string
}

// hostRoot is where Plan looks at the host's /dev, /sys and /proc; tests point it elsewhere.
var hostRoot = "/"

func host(p string) string { return filepath.Join(hostRoot, p) }

// Plan computes the layout for the emulator mounted (or faked) at mnt. It fails when mnt does not
// hold a kfd device file and a topology.
func Plan(mnt string) (*Layout, error) {
	mnt, err := filepath.Abs(mnt)
	if err != nil {
		return nil, err
	}
	for _, p := range []string{KFDPath, TopologyPath} {
		if _, err := os.Stat(filepath.Join(mnt, p)); err != nil {
			return nil, fmt.Errorf("%s is not a kfdemu mount: %w", mnt, err)
		}
	}
	l := &Layout{Mount: mnt, Overlays: []string{"/dev"}}
	l.Links = append(l.Links, Link{"/dev", "kfd", filepath.Join(mnt, KFDPath)})
	renders, _ := filepath.Glob(filepath.Join(mnt, DRIPath, "renderD*"))
	sort.Strings(renders)
	for _, r := range renders {
		l.Links = append(l.Links, Link{"/dev", "dri/" + filepath.Base(r), r})
	}
	for _, p := range []string{KFDSysPath, ClassPath, ModulePath} {
		if _, err := os.Stat(filepath.Join(mnt, p)); err != nil {
			continue
		}
		l.addOverlay("/" + filepath.Dir(p))
		l.Binds = append(l.Binds, Bind{filepath.Join(mnt, p), "/" + p})
	}
	// libhsakmt (topology.c, topology_get_cpu_cache_props) reads
	// /sys/devices/system/node/node<K>/cpu<N>/cache/index<I>/* for CPU node K of the topology, and
	// ROCr reads node<K>/meminfo; a profile with more CPU (NUMA) nodes than the host gets the
	// missing ones as links to the host's node0.
	if cpus := cpuNodes(filepath.Join(mnt, TopologyPath)); cpus > 1 {
		if _, err := os.Stat(host("sys/devices/system/node/node0")); err == nil {
			var links []Link
			for k := 1; k < cpus; k++ {
				name := "node" + strconv.Itoa(k)
				if _, err := os.Stat(host("sys/devices/system/node/" + name)); err != nil {
					links = append(links, Link{"/sys/devices/system/node", name, "node0"})
				}
			}
			if len(links) > 0 {
				l.addOverlay("/sys/devices/system/node")
				l.Links = append(l.Links, links...)
			}
		}
	}
	if files := cacheFiles(hostCacheLeaves()); len(files) > 0 {
		l.Overlays = append(l.Overlays, CPUDir)
		l.Files = files
	}
	// The amdgpu DRM sysfs: MNT/sys/devices/pci* (the GPUs' PCI devices), MNT/sys/class/drm and
	// MNT/sys/class/hwmon, grafted onto the host's tree so that none of the host's entries is hidden.
	if ents, err := os.ReadDir(filepath.Join(mnt, "sys/devices")); err == nil {
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), "pci") {
				l.graft(mnt, "sys/devices/"+e.Name())
			}
		}
	}
	for _, p := range []string{"sys/class/drm", "sys/class/hwmon"} {
		if _, err := os.Lstat(filepath.Join(mnt, p)); err == nil {
			l.graft(mnt, p)
		}
	}
	// Parents before children: an overlay's directory may lie inside another overlay.
	sort.SliceStable(l.Overlays, func(i, j int) bool {
		return strings.Count(l.Overlays[i], "/") < strings.Count(l.Overlays[j], "/")
	})
	if _, err := os.Stat(host("proc/modules")); err == nil {
		l.ProcModules = "bind"
	} else {
		l.ProcModules = "shadow"
	}
	return l, nil
}

// graft plans MNT/rel to appear at /rel keeping the host's entries: where the host lacks /rel, an
// overlay on its parent gets it (a link for a symlink, a bind mount for a directory or file); where
// the host has a directory of that name, the graft descends into MNT's children; a host entry that
// is not a directory is shadowed (same as a host render node of the same name).
func (l *Layout) graft(mnt, rel string) {
	src := filepath.Join(mnt, rel)
	st, err := os.Lstat(src)
	if err != nil {
		return
	}
	parent, name := "/"+filepath.Dir(rel), filepath.Base(rel)
	hst, herr := os.Stat(host(rel))
	switch {
	case herr == nil && hst.IsDir() && st.IsDir():
		ents, err := os.ReadDir(src)
		if err != nil {
			return
		}
		for _, e := range ents {
			l.graft(mnt, rel+"/"+e.Name())
		}
	case st.Mode()&fs.ModeSymlink != 0:
		target, err := os.Readlink(src)
		if err != nil {
			return
		}
		l.addOverlay(parent)
		l.Links = append(l.Links, Link{parent, name, target})
	case herr == nil && !st.IsDir() && !hst.IsDir():
		l.Binds = append(l.Binds, Bind{src, "/" + rel}) // a file bound over the host's file
	default:
		l.addOverlay(parent)
		l.Binds = append(l.Binds, Bind{src, "/" + rel})
	}
}

func (l *Layout) addOverlay(dir string) {
	for _, o := range l.Overlays {
		if o == dir {
			return
		}
	}
	l.Overlays = append(l.Overlays, dir)
}

// cpuNodes counts the nodes of a topology directory whose properties show no SIMDs (CPU nodes,
// kfd_topology.c: simd_count is 0 for CPU-only nodes).
func cpuNodes(topo string) int {
	ents, err := os.ReadDir(filepath.Join(topo, "nodes"))
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(topo, "nodes", e.Name(), "properties"))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) == 2 && f[0] == "simd_count" && f[1] == "0" {
				n++
			}
		}
	}
	return n
}

// Setup applies l to the current mount namespace, which must be private to this process (see
// Command). On error the namespace may be half built; the caller must not run the command then.
func Setup(l *Layout) (err error) {
	// Nothing done below may reach the host: make every mount a slave (Go already made them
	// private when it unshared; this covers callers that unshared themselves).
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_SLAVE, ""); err != nil {
		return fmt.Errorf("make / rslave: %w", err)
	}
	scratch, err := os.MkdirTemp("", "kfdemu-ns-")
	if err != nil {
		return err
	}
	// The directory exists on the host's filesystem: detach the tmpfs from it and remove it again.
	// The overlays hold their own references to the upper and work directories.
	defer func() {
		unix.Unmount(scratch, unix.MNT_DETACH)
		os.Remove(scratch)
	}()
	if err := unix.Mount("tmpfs", scratch, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755"); err != nil {
		return fmt.Errorf("tmpfs on %s: %w", scratch, err)
	}
	// Overlays below /sys take their lower layer from a plain bind of the host's sysfs, not from
	// the path (which may already lie inside another overlay): every overlay then stacks on sysfs
	// directly, within the kernel's stacking depth of 2 however deep the grafts nest.
	hostSys := filepath.Join(scratch, "hostsys")
	if err := os.Mkdir(hostSys, 0755); err != nil {
		return err
	}
	if err := unix.Mount("/sys", hostSys, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("bind /sys: %w", err)
	}
	for i, dir := range l.Overlays {
		upper := filepath.Join(scratch, strconv.Itoa(i), "upper")
		for _, ln := range l.Links {
			if ln.Dir != dir {
				continue
			}
			p := filepath.Join(upper, ln.Name)
			if err := os.MkdirAll(filepath.Dir(p), 0755); err != nil {
				return err
			}
			if err := os.Symlink(ln.Target, p); err != nil {
				return err
			}
		}
		for _, f := range l.Files {
			if f.Dir != dir {
				continue
			}
			p := filepath.Join(upper, f.Name)
			if err := os.MkdirAll(filepath.Dir(p), 0755); err != nil {
				return err
			}
			if err := os.WriteFile(p, []byte(f.Data), 0444); err != nil {
				return err
			}
		}
		for _, b := range l.Binds {
			if filepath.Dir(b.Target) != dir {
				continue
			}
			p := filepath.Join(upper, filepath.Base(b.Target))
			if st, err := os.Stat(b.Source); err == nil && !st.IsDir() {
				err = os.WriteFile(p, nil, 0444) // mount point of a file bind
				if err != nil {
					return err
				}
			} else if err := os.MkdirAll(p, 0755); err != nil {
				return err
			}
		}
		lower := dir
		if rest, ok := strings.CutPrefix(dir, "/sys/"); ok {
			lower = filepath.Join(hostSys, rest)
		}
		if err := overlay(scratch, i, dir, lower); err != nil {
			return err
		}
	}
	for _, b := range l.Binds {
		if err := unix.Mount(b.Source, b.Target, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("bind %s on %s: %w", b.Source, b.Target, err)
		}
	}
	switch l.ProcModules {
	case "bind":
		return bindProcModules(scratch)
	case "shadow":
		return shadowProc(scratch)
	}
	return nil
}

// overlay mounts overlay(lower, upper scratch/i/upper) on dir and keeps the mounts below dir
// (e.g. /dev/pts, /dev/shm) on top of it: they are bound aside first and moved back after.
func overlay(scratch string, i int, dir, lower string) error {
	base := filepath.Join(scratch, strconv.Itoa(i))
	upper, work := filepath.Join(base, "upper"), filepath.Join(base, "work")
	for _, d := range []string{upper, work} {
		if err := os.MkdirAll(d, 0755); err != nil {
			return err
		}
	}
	subs := Submounts(mountinfo(), dir)
	aside := make([]string, len(subs))
	for j, s := range subs {
		aside[j] = filepath.Join(base, "sub"+strconv.Itoa(j))
		if err := os.Mkdir(aside[j], 0755); err != nil {
			return err
		}
		if err := unix.Mount(s, aside[j], "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("keeping %s: %w", s, err)
		}
	}
	opts := "lowerdir=" + ovlEscape(lower) + ",upperdir=" + ovlEscape(upper) + ",workdir=" + ovlEscape(work)
	if err := unix.Mount("overlay", dir, "overlay", 0, opts); err != nil {
		return fmt.Errorf("overlay on %s: %w", dir, err)
	}
	for j, s := range subs {
		if err := unix.Mount(aside[j], s, "", unix.MS_MOVE, ""); err != nil {
			return fmt.Errorf("restoring %s: %w", s, err)
		}
	}
	return nil
}

// ovlEscape escapes a path for overlayfs options: ':' separates lower layers and ',' options, so
// both (and the escape character) take a backslash (fs/overlayfs/params.c ovl_unescape). PCI
// directories (pci0000:00) have colons.
func ovlEscape(p string) string {
	return strings.NewReplacer(`\`, `\\`, ":", `\:`, ",", `\,`).Replace(p)
}

func mountinfo() string {
	b, _ := os.ReadFile("/proc/self/mountinfo")
	return string(b)
}

// Submounts lists the mount points strictly below dir in a /proc/self/mountinfo text, outermost
// first and only those not below another listed one (a recursive bind carries those along).
// Mount points are decoded from mountinfo's octal escapes (\040 for a space, fs/proc_namespace.c
// mangle).
func Submounts(info, dir string) []string {
	dir = filepath.Clean(dir)
	var all []string
	seen := map[string]bool{}
	for _, line := range strings.Split(info, "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		mp := unescapeMountinfo(f[4])
		if strings.HasPrefix(mp, dir+"/") && !seen[mp] {
			seen[mp] = true
			all = append(all, mp)
		}
	}
	sort.Slice(all, func(i, j int) bool { return len(all[i]) < len(all[j]) || len(all[i]) == len(all[j]) && all[i] < all[j] })
	var out []string
	for _, mp := range all {
		covered := false
		for _, o := range out {
			if strings.HasPrefix(mp, o+"/") {
				covered = true
				break
			}
		}
		if !covered {
			out = append(out, mp)
		}
	}
	return out
}

func unescapeMountinfo(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// WithAmdgpu returns a /proc/modules text with amdgpu listed (unchanged if it already is).
func WithAmdgpu(modules []byte) []byte {
	for _, line := range strings.Split(string(modules), "\n") {
		if strings.HasPrefix(line, "amdgpu ") {
			return modules
		}
	}
	out := append([]byte(nil), modules...)
	if len(out) > 0 && out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	return append(out, AmdgpuModuleLine...)
}

// bindProcModules binds a copy of the host's /proc/modules with amdgpu added over it. The copy
// lives in the scratch tmpfs; the bind keeps it alive after the scratch is detached.
func bindProcModules(scratch string) error {
	host, err := os.ReadFile("/proc/modules")
	if err != nil {
		return err
	}
	p := filepath.Join(scratch, "modules")
	if err := os.WriteFile(p, WithAmdgpu(host), 0444); err != nil {
		return err
	}
	if err := unix.Mount(p, "/proc/modules", "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("bind /proc/modules: %w", err)
	}
	return nil
}

// ProcfsDir is where the private procfs instance is reachable when /proc is shadowed.
const ProcfsDir = "/proc/.kfdemu-procfs"

// shadowProc replaces /proc by a tmpfs of symlinks into a private procfs instance plus a modules
// file. self and thread-self resolve per process through the procfs instance; /proc/<pid> of
// processes started after setup is reachable as ProcfsDir/<pid> and through /proc/self but is not
// listed at /proc/<pid> (the command's own pid is: it is this process's).
func shadowProc(scratch string) error {
	inst := filepath.Join(scratch, "procfs")
	if err := os.Mkdir(inst, 0555); err != nil {
		return err
	}
	if err := unix.Mount("proc", inst, "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("private procfs: %w", err)
	}
	if err := unix.Mount("tmpfs", "/proc", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=0555"); err != nil {
		return fmt.Errorf("tmpfs on /proc: %w", err)
	}
	if err := os.Mkdir(ProcfsDir, 0555); err != nil {
		return err
	}
	if err := unix.Mount(inst, ProcfsDir, "", unix.MS_MOVE, ""); err != nil {
		return fmt.Errorf("moving procfs: %w", err)
	}
	ents, err := os.ReadDir(ProcfsDir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if e.Name() == "modules" {
			continue
		}
		if err := os.Symlink(filepath.Join(ProcfsDir, e.Name()), filepath.Join("/proc", e.Name())); err != nil {
			return err
		}
	}
	if err := os.WriteFile("/proc/modules", []byte(AmdgpuModuleLine), 0444); err != nil {
		return err
	}
	// Read-only like procfs: nothing in the namespace adds files to /proc.
	return unix.Mount("", "/proc", "", unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "")
}

// Command returns a command running argv in a new mount namespace laid out for the emulator at
// mnt. The current binary is re-executed; it must call MaybeRunChild before anything else (from an
// init function of package main). Path lookup of argv[0] happens inside the namespace.
func Command(mnt string, argv []string) (*exec.Cmd, error) {
	if len(argv) == 0 {
		return nil, errors.New("nsexec: no command")
	}
	mnt, err := filepath.Abs(mnt)
	if err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, append([]string{ChildArg, mnt, "--"}, argv...)...)
	cmd.Env = append(os.Environ(), ChildEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
	return cmd, nil
}

// MaybeRunChild runs the namespace side of Command when this process is one, and never returns
// then; otherwise it returns at once.
func MaybeRunChild() {
	if os.Getenv(ChildEnv) != "1" || len(os.Args) < 2 || os.Args[1] != ChildArg {
		return
	}
	os.Exit(RunChild(os.Args[2:]))
}

// privateNamespace reports whether this process's mount namespace differs from its parent's and
// ChildEnv marks it as started by Command.
func privateNamespace() bool {
	if os.Getenv(ChildEnv) != "1" {
		return false
	}
	self, err1 := os.Readlink("/proc/self/ns/mnt")
	parent, err2 := os.Readlink("/proc/" + strconv.Itoa(os.Getppid()) + "/ns/mnt")
	return err1 == nil && err2 == nil && self != parent
}

// RunChild takes [MNT, "--", COMMAND...], builds the namespace and execs COMMAND with ChildEnv
// removed from its environment. It returns only on failure, with ExitSetup, ExitNotFound or
// ExitNotExecuted.
func RunChild(args []string) int {
	if len(args) < 3 || args[1] != "--" {
		fmt.Fprintln(os.Stderr, "kfdemu exec: bad namespace child arguments")
		return ExitSetup
	}
	// Never build the layout in the parent's namespace (a stray `kfdemu __exec-child` run by hand
	// would otherwise overlay the host's /dev).
	if !privateNamespace() {
		fmt.Fprintln(os.Stderr, "kfdemu exec: the namespace child is not in a mount namespace of its own")
		return ExitSetup
	}
	l, err := Plan(args[0])
	if err == nil {
		err = Setup(l)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "kfdemu exec: preparing the namespace:", err)
		return ExitSetup
	}
	os.Unsetenv(ChildEnv)
	path, err := exec.LookPath(args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, "kfdemu exec:", err)
		if errors.Is(err, fs.ErrPermission) {
			return ExitNotExecuted // found but not executable, as sh reports it
		}
		return ExitNotFound
	}
	// The filter is per thread until the exec, which keeps it for the command and its descendants.
	runtime.LockOSThread()
	if err := superviseSelf(args[0]); err != nil {
		fmt.Fprintln(os.Stderr, "kfdemu exec: warning: ioctls that return a file descriptor (dma-buf export) will fail:", err)
	}
	err = syscall.Exec(path, args[2:], os.Environ())
	fmt.Fprintln(os.Stderr, "kfdemu exec:", args[2]+":", err)
	if errors.Is(err, syscall.ENOENT) {
		return ExitNotFound
	}
	return ExitNotExecuted
}

// SupervisePath is the daemon's control file that takes a seccomp listener (fs/supervise.go).
const SupervisePath = "sys/kernel/debug/kfdemu/supervise"

// superviseSelf installs the seccomp filter that stops the fd-returning ioctls (abi.FDIoctls) on
// the calling thread and hands its listener to the daemon serving mnt, which answers them. A
// mount without the control file (an older daemon, a static tree) gets no filter and no warning:
// a daemon answers those ioctls EOPNOTSUPP then, with a log line of its own.
func superviseSelf(mnt string) error {
	ctl, err := os.OpenFile(filepath.Join(mnt, SupervisePath), os.O_WRONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // a mount that offers no supervision (a static tree, an older daemon): say nothing
	}
	if err != nil {
		return err
	}
	defer ctl.Close()
	l, err := seccomp.InstallIoctlFilter(abi.FDIoctls())
	if err != nil {
		return fmt.Errorf("seccomp filter: %w", err)
	}
	defer unix.Close(l)
	if _, err := ctl.WriteString(strconv.Itoa(l) + "\n"); err != nil {
		return fmt.Errorf("handing the listener to the daemon: %w", err)
	}
	return nil
}
