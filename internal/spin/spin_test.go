package spin

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/kfdemu/kfdemu/internal/seccomp"
)

// wakeLatency pins a spinning thread and a sleeping one to the same CPU and measures how long the
// sleeper, woken through a pipe, takes to run while the spinner calls yield between looks at a
// flag: the case of a work-group's or a FUSE reader's thread woken on a CPU where a queue polls
// its doorbell.
func wakeLatency(yield func(), spinners, n int) (lat []time.Duration, starved bool, err error) {
	var cpus unix.CPUSet
	if err := unix.SchedGetaffinity(0, &cpus); err != nil {
		return nil, false, fmt.Errorf("sched_getaffinity: %w", err)
	}
	cpu := -1
	for i := 0; i < 1024 && cpu < 0; i++ {
		if cpus.IsSet(i) {
			cpu = i
		}
	}
	var one unix.CPUSet
	one.Set(cpu)
	var pinErr atomic.Pointer[error]
	pin := func() {
		runtime.LockOSThread()
		if err := unix.SchedSetaffinity(0, &one); err != nil {
			err = fmt.Errorf("sched_setaffinity: %w", err)
			pinErr.Store(&err)
		}
	}
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return nil, false, err
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	// A P for each spinner, the sleeper and this goroutine: the test is about the kernel's
	// scheduler, not about Ps.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(spinners + 2))
	var stop atomic.Bool
	var woke atomic.Int64 // the sleeper's time of running, ns since start
	start := time.Now()
	for range spinners {
		spinning := make(chan struct{})
		go func() { // a spinner: never blocks until stop
			pin()
			defer runtime.UnlockOSThread()
			close(spinning)
			for !stop.Load() {
				yield()
			}
		}()
		<-spinning
	}
	got := make(chan struct{})
	go func() { // the sleeper: blocks in read(2), records when it runs
		pin()
		defer runtime.UnlockOSThread()
		var b [1]byte
		for {
			if n, _ := unix.Read(p[0], b[:]); n != 1 || b[0] == 0 {
				return
			}
			woke.Store(int64(time.Since(start)))
			got <- struct{}{}
		}
	}()
	defer func() {
		stop.Store(true)
		unix.Write(p[1], []byte{0})
	}()
	if e := pinErr.Load(); e != nil {
		return nil, false, *e
	}
	lat = make([]time.Duration, 0, n)
	for range n {
		time.Sleep(200 * time.Microsecond) // let the sleeper block again
		sent := time.Since(start)
		unix.Write(p[1], []byte{1})
		select {
		case <-got:
		case <-time.After(time.Second):
			// Starved: spinners that only call runtime.Gosched can keep a woken thread off
			// its CPU for seconds (seen in 2 of 3 runs with 2 of them).
			stop.Store(true)
			<-got
			return lat, true, nil
		}
		lat = append(lat, time.Duration(woke.Load())-sent)
	}
	slices.Sort(lat)
	return lat, false, nil
}

// The measurements run in child processes (this test binary again, childEnv naming the yield and
// the number of wake-ups), each with a time limit: spinners that never leave their CPU have kept a
// whole in-process measurement from ending (once in about ten runs of a build whose Yield was
// runtime.Gosched alone).
func TestMain(m *testing.M) {
	if v := os.Getenv(childEnv); v != "" {
		var mode string
		var n int
		if _, err := fmt.Sscanf(v, "%s %d", &mode, &n); err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "%s=%q: want MODE COUNT\n", childEnv, v)
			os.Exit(2)
		}
		yield := Yield
		if strings.HasSuffix(mode, "gosched") {
			yield = runtime.Gosched
		}
		if strings.HasPrefix(mode, "count-") {
			countChild(yield, n)
		}
		lat, starved, err := wakeLatency(yield, 2, n)
		switch {
		case err != nil:
			fmt.Println("cannot pin:", err)
		case starved:
			fmt.Println("starved")
		default:
			fmt.Println(int64(lat[len(lat)/2]), int64(lat[len(lat)*9/10]))
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

const childEnv = "KFDEMU_SPIN_TEST_CHILD"

// childCmd is this test binary run again as the child of mode with count n (TestMain).
func childCmd(ctx context.Context, mode string, n int) *exec.Cmd {
	cmd := exec.CommandContext(ctx, os.Args[0])
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s %d", childEnv, mode, n))
	return cmd
}

// measure runs n wake-ups beside two spinners calling mode's yield ("yield" or "gosched") in a
// child: their p50 and p90, or starved (the sleeper did not run for a second, or the child did not
// end in 20 s). A child that cannot pin its threads skips tb.
func measure(tb testing.TB, mode string, n int) (p50, p90 time.Duration, starved bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := childCmd(ctx, mode, n).Output()
	if ctx.Err() != nil {
		return 0, 0, true
	}
	if err != nil {
		tb.Fatalf("%s child: %v\n%s", mode, err, out)
	}
	var a, b int64
	for _, line := range strings.Split(string(out), "\n") {
		if line == "starved" {
			return 0, 0, true
		}
		if strings.HasPrefix(line, "cannot pin:") {
			tb.Skipf("%s child: %s", mode, line)
		}
		if n, _ := fmt.Sscan(line, &a, &b); n == 2 {
			return time.Duration(a), time.Duration(b), false
		}
	}
	tb.Fatalf("%s child printed no figures:\n%s", mode, out)
	return
}

// TestYieldDoesNotStarveWokenThread: a thread woken on a CPU where two threads spin calling Yield
// runs within a second, each of 200 times. Spinners that only call runtime.Gosched (which returns at
// once when its P has nothing else to run) kept it off its CPU for seconds in 2 of 3 runs on 2 CPUs
// (2026-12-05; in none of 6 the next day: TestYieldCallsSchedYield is what tells the two apart).
// How much sooner than beside Gosched-only spinners it runs is BenchmarkWakeLatency's figure: a
// ratio of two latencies is no pass/fail check on a shared machine (this test asserted p90 below
// 0.6 of Gosched's in one of five tries until go test -count=3 ./... on 2 CPUs saw 0.65-1.13 in all
// five, 2026-12-06).
func TestYieldDoesNotStarveWokenThread(t *testing.T) {
	if _, p90, starved := measure(t, "yield", 200); starved {
		t.Fatal("a thread woken beside spinners that call Yield did not run for a second")
	} else {
		t.Logf("wake-up latency p90 beside 2 spinners calling Yield on its CPU: %v", p90)
	}
}

// BenchmarkWakeLatency: how long a thread woken on a CPU where two threads spin takes to run, the
// spinners calling Yield against calling runtime.Gosched alone (the floor, same run), b.N wake-ups
// each. Measured on 2 CPUs (2026-12-05): p90 22-24 µs beside Yield against 56-71 µs beside Gosched;
// Gosched-only spinners also starved the woken thread for a second in 2 of 3 runs.
//
//	go test -run '^$' -bench WakeLatency -benchtime 200x ./internal/spin
func BenchmarkWakeLatency(b *testing.B) {
	g50, g90, gStarved := measure(b, "gosched", b.N)
	y50, y90, yStarved := measure(b, "yield", b.N)
	if yStarved {
		b.Fatal("a thread woken beside spinners that call Yield did not run for a second")
	}
	b.ReportMetric(float64(y50.Nanoseconds()), "yield-p50-ns")
	b.ReportMetric(float64(y90.Nanoseconds()), "yield-p90-ns")
	if gStarved {
		b.ReportMetric(1, "gosched-starved")
		return
	}
	b.ReportMetric(float64(g50.Nanoseconds()), "gosched-p50-ns")
	b.ReportMetric(float64(g90.Nanoseconds()), "gosched-p90-ns")
	b.ReportMetric(float64(y90)/float64(g90), "p90-yield/gosched")
	b.ReportMetric(0, "ns/op") // the figures are the latencies, not the loop's time
}

// countChild is the child of schedYields: it installs a seccomp filter on its (locked) main
// thread that hands sched_yield(2) to a listener, prints the listener's fd and the thread's id, and once the parent has taken the listener
// and writes a byte, calls yield n times and exits. A goroutine of the same process cannot answer
// the notifications: the stopped thread keeps its P, so a stop-the-world (a GC) waits for it while
// it waits for the stopped answerer.
func countChild(yield func(), n int) {
	runtime.LockOSThread()
	// sched_yield(2) to the listener, the rest allowed. No architecture check: this is a probe of
	// this process's own calls, not a boundary.
	prog := []unix.SockFilter{
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: 0}, // seccomp_data.nr
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: unix.SYS_SCHED_YIELD, Jt: 1},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ALLOW},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_USER_NOTIF},
	}
	l, err := -1, unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
	if err == nil {
		l, err = seccomp.Install(prog)
	}
	if err != nil {
		fmt.Println("cannot filter:", err)
		os.Exit(0)
	}
	fmt.Println(l, unix.Gettid())
	var b [1]byte
	if k, _ := unix.Read(0, b[:]); k != 1 {
		os.Exit(1)
	}
	for range n {
		yield()
	}
	os.Exit(0)
}

// schedYields runs n calls of mode's yield ("count-yield": Yield, "count-gosched": runtime.Gosched)
// in a child process whose calling thread's sched_yield(2) calls go to a seccomp listener this
// process takes (pidfd_getfd), and returns how many of that thread's calls it saw (each let through).
func schedYields(t *testing.T, mode string, n int) int {
	cmd := childCmd(context.Background(), mode, n)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("%s child: %v", mode, err)
	}
	if strings.HasPrefix(line, "cannot filter:") {
		t.Skipf("%s child: %s", mode, line)
	}
	var fd, tid int
	if _, err := fmt.Sscan(line, &fd, &tid); err != nil {
		t.Fatalf("%s child printed %q: %v", mode, line, err)
	}
	pidfd, err := unix.PidfdOpen(cmd.Process.Pid, 0)
	if err != nil {
		t.Skip("pidfd_open:", err)
	}
	defer unix.Close(pidfd)
	l, err := unix.PidfdGetfd(pidfd, fd, 0)
	if err != nil {
		t.Skip("pidfd_getfd of the child's listener:", err)
	}
	defer unix.Close(l)
	if _, err := in.Write([]byte{1}); err != nil {
		t.Fatal(err)
	}
	seen := 0
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		fds := []unix.PollFd{{Fd: int32(l), Events: unix.POLLIN}}
		if k, err := unix.Poll(fds, 100); k != 1 {
			if err != nil && err != unix.EINTR {
				t.Fatal("poll:", err)
			}
			continue
		}
		if fds[0].Revents&unix.POLLIN == 0 { // POLLHUP: the child's filtered thread is gone
			if err := cmd.Wait(); err != nil {
				t.Fatalf("%s child: %v", mode, err)
			}
			return seen
		}
		nt, err := seccomp.Recv(l)
		if err != nil {
			continue // ENOENT: the caller went away
		}
		if int(nt.Pid) == tid {
			seen++
		}
		if err := seccomp.Continue(l, nt.ID); err != nil && err != unix.ENOENT {
			t.Fatal("SECCOMP_IOCTL_NOTIF_SEND:", err)
		}
	}
	t.Fatalf("%s child: not done in 20 s (%d sched_yield calls seen)", mode, seen)
	return 0
}

// TestYieldCallsSchedYield: Yield makes the sched_yield(2) call that lets a woken thread have the
// CPU (BenchmarkWakeLatency measures the effect); runtime.Gosched alone makes none.
func TestYieldCallsSchedYield(t *testing.T) {
	const n = 100
	y, g := schedYields(t, "count-yield", n), schedYields(t, "count-gosched", n)
	t.Logf("sched_yield calls of the thread: %d in %d calls of Yield, %d in %d of runtime.Gosched", y, n, g, n)
	if y < n {
		t.Errorf("%d calls of Yield made %d sched_yield calls", n, y)
	}
	if g >= n {
		t.Errorf("%d calls of runtime.Gosched made %d sched_yield calls: the count does not tell Yield from Gosched", n, g)
	}
}
