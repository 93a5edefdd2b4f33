package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/kfdemu/kfdemu/fs"
	"github.com/kfdemu/kfdemu/gpu/shader"
	"github.com/kfdemu/kfdemu/topology"
	"golang.org/x/sys/unix"
)

// DefaultMount is where serve mounts without --mount.
const DefaultMount = "/run/kfdemu"

// shutdownTimeout bounds the teardown after SIGINT/SIGTERM (unmount, stopping queues).
const shutdownTimeout = 10 * time.Second

type serveFlags struct {
	mount, profile, topologyFrom, logLevel string
	debugFUSE, profileMemory, noSVM        bool
	gpuThreads, execOwner, nice            int
}

func (f *serveFlags) register(fl *flag.FlagSet) {
	fl.StringVar(&f.mount, "mount", DefaultMount, "mount point (created if missing; must be empty)")
	fl.StringVar(&f.profile, "profile", topology.DefaultProfile,
		"device profile: a built-in name ("+strings.Join(topology.Profiles(), ", ")+") or a YAML/JSON file")
	fl.StringVar(&f.topologyFrom, "topology-from", "",
		"serve a captured topology tree (a copy of /sys/class/kfd/kfd/topology) byte for byte instead of a profile")
	fl.StringVar(&f.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	fl.BoolVar(&f.debugFUSE, "debug-fuse", false, "log every FUSE request")
	fl.IntVar(&f.gpuThreads, "gpu-threads", 0, "host threads that run the emulated GPUs' work-groups (0: one per CPU)")
	fl.IntVar(&f.nice, "nice", defaultNice,
		"nice value of the daemon's threads (the emulated GPU's): below the clients' so that a client spinning on a signal does not starve the kernel it waits for; 0 leaves it")
	fl.BoolVar(&f.noSVM, "no-svm", false,
		"report KFD interface 1.2 (SVM off), as a daemon that cannot observe its clients' munmaps does, to run clients' non-SVM paths")
	fl.IntVar(&f.execOwner, "exec-owner", 0,
		"pid of the kfdemu exec that runs this daemon for its command's lifetime (kfdemu exec sets it; other execs then start their own); the daemon stops when that process ends")
	fl.BoolVar(&f.profileMemory, "profile-memory", false,
		"CPU nodes report the profile's system memory instead of this host's (amdkfd reports the host's)")
}

// loadSystem resolves --profile / --topology-from.
func loadSystem(f *serveFlags) (*topology.System, *topology.Tree, error) {
	if f.topologyFrom != "" {
		tree, err := topology.LoadCapture(f.topologyFrom)
		if err != nil {
			return nil, nil, err
		}
		sys, err := topology.ReadSystem(f.topologyFrom)
		return sys, tree, err
	}
	sys, err := topology.Profile(f.profile)
	if err != nil {
		if _, statErr := os.Stat(f.profile); statErr != nil {
			return nil, nil, err
		}
		if sys, err = topology.LoadProfileFile(f.profile); err != nil {
			return nil, nil, err
		}
	}
	if !f.profileMemory {
		// The emulated system memory is this host's: clients size their work by the CPU nodes'
		// banks as on a real system (kfdtest's SVM eviction tests take a third of it).
		sys.SetHostMemory(hostMemory())
	}
	return sys, nil, nil
}

// hostMemory is this host's RAM in bytes (sysinfo totalram, what si_meminfo gives amdkfd); 0 if
// unknown (SetHostMemory then changes nothing).
func hostMemory() uint64 {
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) != nil {
		return 0
	}
	return uint64(si.Totalram) * uint64(si.Unit)
}

func newLogger(level string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: l}))
}

// mountEmulator mounts per the flags; exit code 2 for usage and busy/non-empty mount points.
func mountEmulator(f *serveFlags, log *slog.Logger) (*fs.Server, int, error) {
	sys, capture, err := loadSystem(f)
	if err != nil {
		return nil, 2, err
	}
	if f.gpuThreads < 0 {
		return nil, 2, fmt.Errorf("--gpu-threads %d: must be >= 0", f.gpuThreads)
	}
	if f.nice < -20 || f.nice > 19 {
		return nil, 2, fmt.Errorf("--nice %d: must be in [-20, 19]", f.nice)
	}
	applyNice(f.nice, log)
	shader.SetWorkers(f.gpuThreads)
	reserveSyscallProcs()
	opts := fs.Options{System: sys, Capture: capture, Log: log, Debug: f.debugFUSE, ExecOwner: f.execOwner}
	if capture == nil { // a captured tree is served as topology only
		opts.Device = newDevice(sys, log, !f.noSVM)
	}
	srv, err := fs.Mount(f.mount, opts)
	if err != nil {
		code := 1
		if errors.Is(err, fs.ErrBusy) || errors.Is(err, fs.ErrNotEmpty) {
			code = 2
		}
		return nil, code, err
	}
	return srv, 0, nil
}

// syscallProcs is how many Ps the daemon keeps beyond one per CPU (shader.HostThreads). go-fuse's
// readers wait for the kernel's next request in a blocking read(2) of /dev/fuse (fuse/fusefd.go),
// and a goroutine in a blocking system call keeps its P until sysmon retakes it, up to 10 ms later
// once sysmon has backed off for lack of work (runtime/proc.go: sysmon, retake). With GOMAXPROCS
// at the CPU count, a reader waiting in read(2) and a busy worker left no P for the second worker,
// the queue's goroutine or a timer: the steady-state vadd of BenchmarkInterpreter on 2 worker
// threads kept 1.69 to 1.77 of 2 CPUs busy, with holes of 10 to 20 ms where both CPUs idled while
// goroutines were runnable, until sysmon woke (perf sched timehist against the runtime trace of the
// same run); with one P more, 1.82 to 1.84 (two more: 1.82 to 1.88, and the GET_VERSION round trip
// 1.3x its no-op floor instead of 1.1x, the spare Ps waking threads that compete for the CPUs).
// The worker pool is not raised: work-groups still run on one thread per CPU.
const syscallProcs = 1

// reserveSyscallProcs raises GOMAXPROCS to shader.HostThreads + syscallProcs (never lowers it).
// It runs before fs.Mount, whose go-fuse server sizes its reader count from GOMAXPROCS.
func reserveSyscallProcs() {
	if want := shader.HostThreads() + syscallProcs; runtime.GOMAXPROCS(0) < want {
		runtime.GOMAXPROCS(want)
	}
}

func runServe(args []string) int {
	fl := flag.NewFlagSet("serve", flag.ContinueOnError)
	var f serveFlags
	f.register(fl)
	fl.Usage = func() {
		fmt.Fprintln(fl.Output(), "usage: kfdemu serve [--mount DIR] [--profile NAME|FILE] [--topology-from DIR]\n\n"+
			"Mounts the emulator (sysfs topology, /dev/kfd, render nodes, debugfs view) at DIR and serves it in\n"+
			"the foreground until SIGINT or SIGTERM, then unmounts. Needs root (or CAP_SYS_ADMIN) and /dev/fuse.\n"+
			"A directory that is already mounted or not empty is refused (exit code 2); a stale mount left by a\n"+
			"killed daemon is detached and reused.")
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		return 2
	}
	log := newLogger(f.logLevel)
	// Signals are taken before mounting: one that arrives during start-up stops the daemon right
	// after the mount instead of killing it with the mount left behind.
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	srv, code, err := mountEmulator(&f, log)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kfdemu serve:", err)
		return code
	}
	ownerGone := make(chan struct{}) // closed when the exec owner ends: a first signal, never a second
	if f.execOwner != 0 {
		watchOwner(f.execOwner, ownerGone, log)
	}
	stopped := make(chan struct{})
	go func() {
		select {
		case s := <-sig:
			log.Info("stopping", "signal", s.String())
		case <-ownerGone:
			log.Info("stopping: the exec owner ended", "pid", f.execOwner)
		}
		done := make(chan struct{})
		go func() {
			if err := srv.Unmount(); err != nil {
				log.Error("unmount", "err", err)
			}
			close(done)
		}()
		// Shutdown always ends: a second signal, or a teardown that outlives shutdownTimeout,
		// exits at once; the exit closes /dev/fuse, which aborts the connections (clients then get
		// ENOTCONN).
		select {
		case <-done:
		case s := <-sig:
			log.Warn("second signal: exiting without waiting for the teardown", "signal", s.String())
		case <-time.After(shutdownTimeout):
			log.Warn("teardown did not finish: exiting", "after", shutdownTimeout)
		}
		close(stopped)
	}()
	served := make(chan struct{})
	go func() { srv.Wait(); close(served) }()
	// A client that still holds files keeps a lazily detached mount's connection alive, and with
	// it the serve loops: once Unmount has torn the driver down, exit; closing /dev/fuse aborts
	// the connection and the client's calls fail with ENOTCONN.
	select {
	case <-served:
	case <-stopped:
	}
	log.Info("unmounted", "dir", f.mount)
	return 0
}

// watchOwner closes gone, which stops the daemon as a first SIGTERM does, when process pid ends:
// a `kfdemu exec` (or a test binary) killed without its cleanup, by SIGKILL or a time-out, would
// otherwise leave its daemon serving its mount for good. The end is seen through a pidfd
// (pidfd_open, Linux 5.3), readable once the process has ended; without one the daemon outlives
// its owner and says so.
func watchOwner(pid int, gone chan<- struct{}, log *slog.Logger) {
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		close(gone) // ended before the daemon was up
		return
	}
	if err != nil {
		log.Info("cannot watch the exec owner: the daemon outlives it", "pid", pid, "err", err)
		return
	}
	go func() {
		defer unix.Close(fd)
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for {
			if n, err := unix.Poll(fds, -1); n > 0 || (err != nil && !errors.Is(err, unix.EINTR)) {
				break
			}
		}
		close(gone)
	}()
}
