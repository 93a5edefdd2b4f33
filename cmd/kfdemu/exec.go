package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kfdemu/kfdemu/fs/nsexec"
)

// The namespace child of `kfdemu exec` is this binary re-executed (fs/nsexec.Command); it is
// recognised here, before main, so that it does not depend on the command table.
func init() { nsexec.MaybeRunChild() }

// Bounded waits of exec: for a daemon it started to serve the mount, and for it to stop.
var (
	daemonStartTimeout = 20 * time.Second
	daemonStopTimeout  = 10 * time.Second
)

// forwardedSignals reach COMMAND when kfdemu exec receives them.
var forwardedSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2}

// runExec implements `kfdemu exec [--mount DIR] [--profile P] -- COMMAND...`: COMMAND runs in a
// private mount namespace in which the standard device and sysfs paths lead to the emulator.
func runExec(args []string) int {
	fl := flag.NewFlagSet("exec", flag.ContinueOnError)
	mount := fl.String("mount", DefaultMount, "kfdemu mount to use; a daemon is started for COMMAND's lifetime if none serves it")
	profile := fl.String("profile", "", "profile of a daemon started by exec (as for serve; default: serve's default)")
	gpuThreads := fl.Int("gpu-threads", 0, "--gpu-threads of a daemon started by exec (as for serve)")
	noSVM := fl.Bool("no-svm", false, "--no-svm of a daemon started by exec (as for serve: KFD interface 1.2, SVM off)")
	nice := fl.Int("nice", defaultNice, "--nice of a daemon started by exec (as for serve)")
	fl.Usage = func() {
		fmt.Fprintln(fl.Output(), "usage: kfdemu exec [--mount DIR] [--profile NAME|FILE] [--gpu-threads N] [--no-svm] [--nice N] -- COMMAND...\n\n"+
			"Runs COMMAND in a private mount namespace where /dev/kfd, /dev/dri/renderD*, /sys/devices/virtual/kfd,\n"+
			"/sys/class/kfd, /sys/module/amdgpu and /proc/modules are the emulator's; everything else is the host's,\n"+
			"and the host's namespace is not changed. The exit status is COMMAND's (128+N if signal N killed it;\n"+
			"125: the namespace could not be built, 126: COMMAND could not run, 127: COMMAND not found).\n"+
			"SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 are forwarded to COMMAND.")
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		return 2
	}
	if fl.NArg() == 0 {
		fl.Usage()
		return 2
	}
	mnt, err := filepath.Abs(*mount)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kfdemu exec:", err)
		return 2
	}
	// A daemon another exec started lives only as long as that exec's command: the command here
	// gets a daemon of its own on a private mount instead (so does one that loses the race for an
	// unserved mount to another exec: both saw it unserved and started daemons, and the other's
	// mounted first).
	release, err := startupLock(mnt)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kfdemu exec:", err)
		return 1
	}
	up := served(mnt)
	private := up && execOwner(mnt) != 0
	if !up {
		stop, err := startDaemon(mnt, *profile, *gpuThreads, *noSVM, *nice)
		switch {
		case errors.Is(err, errLostMount):
			// its daemon's "already mounted" is above: say what happens instead
			fmt.Fprintf(os.Stderr, "kfdemu exec: another kfdemu exec's daemon took %s first; running on a daemon of this command's own\n", mnt)
			private = true
		case err != nil:
			fmt.Fprintln(os.Stderr, "kfdemu exec:", err)
			return 1
		default:
			defer stop()
		}
	}
	release()
	if private {
		dir, err := os.MkdirTemp("", "kfdemu-exec-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "kfdemu exec:", err)
			return 1
		}
		defer os.RemoveAll(dir) // after the daemon has unmounted it (deferred calls run in reverse)
		mnt = filepath.Join(dir, "mnt")
		stop, err := startDaemon(mnt, *profile, *gpuThreads, *noSVM, *nice)
		if err != nil {
			fmt.Fprintln(os.Stderr, "kfdemu exec:", err)
			return 1
		}
		defer stop()
	}
	return execIn(mnt, fl.Args(), os.Stdin, os.Stdout, os.Stderr)
}

// startupLock serializes, among the execs of one network namespace, the steps from "is mnt
// served?" to "the daemon started for it serves": without it two execs started together both
// found mnt unserved, both daemons passed their "already mounted" check, and the second stacked
// its mount on the first's, so that one command ran on the other's daemon and lost /dev/kfd when
// that command ended. The lock is an abstract unix socket named after the mount: bound by one
// process at a time, released when closed or when the process dies, nothing on disk.
func startupLock(mnt string) (release func(), err error) {
	h := fnv.New64a()
	h.Write([]byte(mnt))
	name := fmt.Sprintf("@kfdemu-exec-%016x", h.Sum64())
	deadline := time.Now().Add(daemonStartTimeout)
	for {
		l, err := net.Listen("unix", name)
		if err == nil {
			return func() { l.Close() }, nil
		}
		if !errors.Is(err, syscall.EADDRINUSE) || time.Now().After(deadline) {
			return nil, fmt.Errorf("waiting for another kfdemu exec starting a daemon for %s: %w", mnt, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// errLostMount: the daemon exec started found the mount taken by another daemon.
var errLostMount = errors.New("another daemon mounted first")

// execOwner returns the exec_owner line of the stats of the daemon serving mnt: the pid of the
// kfdemu exec that runs it for its command's lifetime, 0 for a daemon of its own (kfdemu serve)
// or if unknown.
func execOwner(mnt string) int {
	b, err := os.ReadFile(filepath.Join(mnt, nsexec.StatsPath))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "exec_owner "); ok {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	return 0
}

// served reports whether something serves a kfd topology at mnt: the topology directory can be
// listed and generation_id read. The listing is what detects a dead daemon: a directory read goes
// to the FUSE server (ENOTCONN when it is gone), while the sysfs files of a kfdemu mount are
// opened without a server round trip and read from the kernel's page cache.
func served(mnt string) bool {
	if _, err := os.ReadDir(filepath.Join(mnt, nsexec.TopologyPath)); err != nil {
		return false
	}
	if _, err := os.ReadFile(filepath.Join(mnt, nsexec.GenerationPath)); err != nil {
		return false
	}
	// The daemon reports "ready 1" once it has finished every request it makes to its own mounts
	// during startup (fs.Server.ready).
	b, err := os.ReadFile(filepath.Join(mnt, nsexec.StatsPath))
	return err == nil && bytes.HasPrefix(b, []byte("ready 1\n"))
}

// startDaemon runs `kfdemu serve --mount mnt [--profile p]` as a child, waits (bounded) until it
// serves, and returns the function that stops it with SIGTERM (SIGKILL after daemonStopTimeout).
func startDaemon(mnt, profile string, gpuThreads int, noSVM bool, nice int) (stop func(), err error) {
	self, err := os.Executable()
	if err != nil {
		self = os.Args[0]
	}
	args := []string{"serve", "--mount", mnt, "--log-level", "warn", "--exec-owner", fmt.Sprint(os.Getpid())}
	if profile != "" {
		args = append(args, "--profile", profile)
	}
	if gpuThreads != 0 {
		args = append(args, "--gpu-threads", fmt.Sprint(gpuThreads))
	}
	if noSVM {
		args = append(args, "--no-svm")
	}
	if nice != defaultNice {
		args = append(args, "--nice", fmt.Sprint(nice))
	}
	d := exec.Command(self, args...)
	d.Stdout, d.Stderr = os.Stderr, os.Stderr
	if err := d.Start(); err != nil {
		return nil, fmt.Errorf("starting the daemon: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- d.Wait() }()
	stop = func() {
		d.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(daemonStopTimeout):
			d.Process.Kill()
			<-exited
		}
	}
	deadline := time.Now().Add(daemonStartTimeout)
	for !served(mnt) {
		select {
		case err := <-exited:
			return nil, fmt.Errorf("the daemon for %s exited before serving: %v", mnt, err)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			stop()
			return nil, fmt.Errorf("the daemon did not serve %s within %v", mnt, daemonStartTimeout)
		}
	}
	if execOwner(mnt) != os.Getpid() { // another's daemon serves mnt: ours fails (busy) or is stopped
		stop()
		return nil, errLostMount
	}
	return stop, nil
}

// execIn runs argv in the emulator's namespace for mnt with the given stdio, forwards signals to
// it while it runs and returns its exit status in the shell's convention.
func execIn(mnt string, argv []string, stdin, stdout, stderr *os.File) int {
	cmd, err := nsexec.Command(mnt, argv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kfdemu exec:", err)
		return 2
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	// Registered before the start so that no signal falls between start and forwarding.
	sig := make(chan os.Signal, 8)
	signal.Notify(sig, forwardedSignals...)
	defer signal.Stop(sig)
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "kfdemu exec:", err)
		return 1
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for {
		select {
		case s := <-sig:
			cmd.Process.Signal(s)
		case err := <-done:
			return waitStatus(err)
		}
	}
}

// waitStatus turns cmd.Wait's result into a shell-style exit status (128+N for signal N).
func waitStatus(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	if err != nil {
		return 1
	}
	return 0
}

// runExecChild is the namespace side when reached through the command table (`kfdemu
// __exec-child MNT -- COMMAND...`); init normally catches it first.
func runExecChild(args []string) int { return nsexec.RunChild(args) }
