package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/kfdemu/kfdemu/runtime/kmt"
)

// Client processes of kfdemu bench. kfd keys its processes by tgid, so figures about many client
// processes need real processes: the bench re-executes its own binary (kfdemu, or the test binary
// of this package) with benchClientArg as the first argument and benchClientEnv=1 in the
// environment. An init function recognises both before anything else runs (as
// nsexec.MaybeRunChild does for kfdemu exec), so a stray argument alone never triggers it.
//
// Protocol (lines on stdin and stdout): the client opens the mount with runtime/kmt, creates its
// AQL queues and memory and prints "ready"; for each line "barrier K TIMEOUT" (TIMEOUT a Go
// duration) it makes K barrier round trips on its first queue, each waited for as ROCr's blocking
// wait does it (spin briefly, then WAIT_EVENTS), and prints "ok" with the K latencies in ns; at the
// end of stdin it closes the device and exits 0. A failure prints "error MESSAGE" and exits 1.
const (
	benchClientArg = "__bench-client"
	benchClientEnv = "KFDEMU_BENCH_CLIENT"
)

func init() { maybeRunBenchClient() }

func maybeRunBenchClient() {
	if os.Getenv(benchClientEnv) != "1" || len(os.Args) < 2 || os.Args[1] != benchClientArg {
		return
	}
	os.Exit(runBenchClient(os.Args[2:], os.Stdin, os.Stdout))
}

// clientSpec is what one client process holds.
type clientSpec struct {
	queues int // AQL queues
	memMiB int // VRAM allocated and mapped on the client's GPU
	gpu    int // index into the device's GPUs (modulo their number)
}

func (s clientSpec) args(mnt string) []string {
	return []string{benchClientArg, "--mount", mnt, "--queues", strconv.Itoa(s.queues),
		"--mem-mib", strconv.Itoa(s.memMiB), "--gpu", strconv.Itoa(s.gpu)}
}

// barrierSpin is how long a client spins on a completion signal before it blocks in WAIT_EVENTS.
const barrierSpin = 20 * time.Microsecond

func runBenchClient(args []string, in io.Reader, out io.Writer) int {
	fl := flag.NewFlagSet(benchClientArg, flag.ContinueOnError)
	mnt := fl.String("mount", "", "emulator mount")
	var s clientSpec
	fl.IntVar(&s.queues, "queues", 1, "AQL queues")
	fl.IntVar(&s.memMiB, "mem-mib", 0, "MiB of VRAM to allocate and map")
	fl.IntVar(&s.gpu, "gpu", 0, "GPU index")
	if err := fl.Parse(args); err != nil {
		return 2
	}
	fail := func(err error) int {
		fmt.Fprintf(out, "error %v\n", strings.ReplaceAll(err.Error(), "\n", " "))
		return 1
	}
	if s.queues < 1 {
		return fail(fmt.Errorf("--queues %d: at least 1", s.queues))
	}
	d, err := kmt.Open(kmt.Config{Root: *mnt})
	if err != nil {
		return fail(err)
	}
	defer d.Close()
	gpus := d.GPUs()
	if len(gpus) == 0 {
		return fail(fmt.Errorf("no GPU"))
	}
	g := gpus[s.gpu%len(gpus)]
	var qs []*aqlClient
	for range s.queues {
		c := &aqlClient{d: d, g: g}
		if err := c.setupQueue(); err != nil {
			return fail(fmt.Errorf("queue %d: %w", len(qs), err))
		}
		qs = append(qs, c)
	}
	if s.memMiB > 0 {
		m, err := d.AllocVRAM(g, uint64(s.memMiB)<<20, 0)
		if err != nil {
			return fail(fmt.Errorf("%d MiB of VRAM: %w", s.memMiB, err))
		}
		if err := m.Map(); err != nil {
			return fail(fmt.Errorf("mapping %d MiB of VRAM: %w", s.memMiB, err))
		}
	}
	fmt.Fprintln(out, "ready")
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 3 || f[0] != "barrier" {
			return fail(fmt.Errorf("bad command %q", sc.Text()))
		}
		k, err1 := strconv.Atoi(f[1])
		timeout, err2 := time.ParseDuration(f[2])
		if err1 != nil || err2 != nil || k < 1 {
			return fail(fmt.Errorf("bad command %q", sc.Text()))
		}
		var b strings.Builder
		b.WriteString("ok")
		for range k {
			lat, err := qs[0].barrierWait(barrierSpin, timeout)
			if err != nil {
				return fail(err)
			}
			fmt.Fprintf(&b, " %d", lat.Nanoseconds())
		}
		fmt.Fprintln(out, b.String())
	}
	return 0
}

// benchProc is a running client process, seen from the bench.
type benchProc struct {
	cmd *exec.Cmd
	in  *os.File // the client's stdin (write end)
	out *os.File // its stdout (read end), pollable: reads take deadlines
	r   *bufio.Reader
}

// startClient starts a client process on mnt. Stdout and stdin are plain pipes, so the bench
// process runs no goroutine per client (its goroutine count stays the daemon's).
func startClient(mnt string, s clientSpec) (*benchProc, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	cmd := exec.Command(self, s.args(mnt)...)
	cmd.Env = append(os.Environ(), benchClientEnv+"=1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, os.Stderr
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, err
	}
	return &benchProc{cmd: cmd, in: inW, out: outR, r: bufio.NewReader(outR)}, nil
}

// line reads the client's next line, waiting until deadline.
func (p *benchProc) line(deadline time.Time) (string, error) {
	p.out.SetReadDeadline(deadline)
	l, err := p.r.ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("client %d: %w", p.cmd.Process.Pid, err)
	}
	l = strings.TrimSuffix(l, "\n")
	if msg, ok := strings.CutPrefix(l, "error "); ok {
		return "", fmt.Errorf("client %d: %s", p.cmd.Process.Pid, msg)
	}
	return l, nil
}

// ready waits for the client's "ready".
func (p *benchProc) ready(deadline time.Time) error {
	l, err := p.line(deadline)
	if err == nil && l != "ready" {
		err = fmt.Errorf("client %d: %q instead of ready", p.cmd.Process.Pid, l)
	}
	return err
}

// send asks the client for k round trips; result reads their latencies back.
func (p *benchProc) send(k int, timeout time.Duration) error {
	_, err := fmt.Fprintf(p.in, "barrier %d %v\n", k, timeout)
	return err
}

func (p *benchProc) result(deadline time.Time) ([]time.Duration, error) {
	l, err := p.line(deadline)
	if err != nil {
		return nil, err
	}
	f := strings.Fields(l)
	if len(f) == 0 || f[0] != "ok" {
		return nil, fmt.Errorf("client %d: %q", p.cmd.Process.Pid, l)
	}
	var ds []time.Duration
	for _, s := range f[1:] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("client %d: %q", p.cmd.Process.Pid, l)
		}
		ds = append(ds, time.Duration(n))
	}
	return ds, nil
}

// stop closes the client's stdin (if stopClients has not) and waits for it to exit, killing it
// after timeout.
func (p *benchProc) stop(timeout time.Duration) error {
	p.in.Close() // a second Close only returns an error
	t := time.AfterFunc(timeout, func() { p.cmd.Process.Kill() })
	err := p.cmd.Wait()
	killed := !t.Stop()
	p.out.Close()
	if killed {
		return fmt.Errorf("client %d did not exit within %v of its stdin closing", p.cmd.Process.Pid, timeout)
	}
	if err != nil {
		return fmt.Errorf("client %d: %w", p.cmd.Process.Pid, err)
	}
	return nil
}

// startClients starts n clients (client i on GPU i) and waits until every one is ready; on error
// the ones started are stopped.
func startClients(mnt string, n int, s clientSpec, timeout time.Duration) ([]*benchProc, error) {
	var ps []*benchProc
	fail := func(err error) ([]*benchProc, error) {
		stopClients(ps, 10*time.Second)
		return nil, err
	}
	for i := range n {
		c := s
		c.gpu = s.gpu + i
		p, err := startClient(mnt, c)
		if err != nil {
			return fail(err)
		}
		ps = append(ps, p)
	}
	deadline := time.Now().Add(timeout)
	for _, p := range ps {
		if err := p.ready(deadline); err != nil {
			return fail(err)
		}
	}
	return ps, nil
}

// stopClients stops every client; it returns the first error.
func stopClients(ps []*benchProc, timeout time.Duration) error {
	for _, p := range ps {
		p.in.Close()
	}
	var first error
	for _, p := range ps {
		if err := p.stop(timeout); err != nil && first == nil {
			first = err
		}
	}
	return first
}
