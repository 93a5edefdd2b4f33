package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"

	"github.com/kfdemu/kfdemu/trace"
)

// runTrace implements `kfdemu trace [--json] [-p PID | -- COMMAND...]`.
func runTrace(args []string) int {
	fs := flag.NewFlagSet("trace", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: kfdemu trace [--json] [-p PID | -- COMMAND...]\n\n"+
			"Decodes every kfd and amdgpu render-node ioctl of a process tree with eBPF (real driver or kfdemu).\n"+
			"One line per call: time, pid (pid/tid for a process's other threads), ioctl name, decoded fields,\n"+
			"result or errno, duration.")
		fs.PrintDefaults()
	}
	asJSON := fs.Bool("json", false, "print one JSON object per call")
	pid := fs.Int("p", 0, "trace the running process PID and its future children")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cmdArgs := fs.Args()
	if (*pid == 0) == (len(cmdArgs) == 0) {
		fmt.Fprintln(os.Stderr, "kfdemu trace: give exactly one of -p PID or -- COMMAND...")
		return 2
	}
	tr, err := trace.Open(trace.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "kfdemu trace:", err)
		return 1
	}
	defer tr.Close()

	done := make(chan int, 1)
	if *pid != 0 {
		if err := tr.Add(*pid); err != nil {
			fmt.Fprintln(os.Stderr, "kfdemu trace:", err)
			return 1
		}
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
		go func() { <-sig; done <- 0 }()
	} else {
		// The child is this binary in trace-child mode: it waits on a pipe until its pid is in the
		// tracer's map, then execs COMMAND, so no ioctl of COMMAND escapes the trace.
		r, w, err := os.Pipe()
		if err != nil {
			fmt.Fprintln(os.Stderr, "kfdemu trace:", err)
			return 1
		}
		self, _ := os.Executable()
		c := exec.Command(self, append([]string{"__trace-child", "--"}, cmdArgs...)...)
		c.Stdin, c.Stdout, c.Stderr = os.Stdin, os.Stdout, os.Stderr
		c.ExtraFiles = []*os.File{r}
		if err := c.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "kfdemu trace:", err)
			return 1
		}
		r.Close()
		if err := tr.Add(c.Process.Pid); err != nil {
			c.Process.Kill()
			fmt.Fprintln(os.Stderr, "kfdemu trace:", err)
			return 1
		}
		w.Write([]byte{1})
		w.Close()
		traceForward(c.Process)
		go func() { done <- exitStatusOf(c.Wait()) }()
	}

	calls := make(chan trace.Call, 256)
	go func() {
		for {
			c, err := tr.Read()
			if err != nil {
				close(calls)
				return
			}
			calls <- c
		}
	}()
	enc := json.NewEncoder(os.Stdout)
	print := func(c trace.Call) {
		if *asJSON {
			enc.Encode(trace.Decode(c))
		} else {
			fmt.Println(trace.Format(c))
		}
	}
	for {
		select {
		case c, ok := <-calls:
			if !ok {
				return 1
			}
			print(c)
		case status := <-done:
			// Drain what the kernel already queued, then stop.
			tr.Close()
			for c := range calls {
				print(c)
			}
			return status
		}
	}
}

// runTraceChild is the hidden `__trace-child -- COMMAND...` mode used by runTrace.
func runTraceChild(args []string) int {
	if len(args) < 2 || args[0] != "--" {
		return 2
	}
	sync := os.NewFile(3, "sync")
	if _, err := io.ReadFull(sync, make([]byte, 1)); err != nil {
		return 1
	}
	sync.Close()
	path, err := exec.LookPath(args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "kfdemu trace:", err)
		return 127
	}
	err = syscall.Exec(path, args[1:], os.Environ())
	fmt.Fprintln(os.Stderr, "kfdemu trace: exec:", err)
	return 126
}

// traceForward passes SIGINT, SIGTERM and SIGHUP to p.
func traceForward(p *os.Process) {
	sig := make(chan os.Signal, 4)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		for s := range sig {
			p.Signal(s)
		}
	}()
}

// exitStatusOf turns exec's Wait result into a shell-style exit status.
func exitStatusOf(err error) int {
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
