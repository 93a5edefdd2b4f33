// Command kfdemu is the kfdemu CLI: the daemon (serve), the launcher for unmodified programs (exec),
// topology tools (topo, gpu, profiles), the tracer (trace) and the demo that the README starts with.
package main

import (
	"fmt"
	"os"
	"sort"
)

type command struct {
	run  func(args []string) int
	help string
}

var commands = map[string]command{
	"serve":    {runServe, "mount the emulator and serve it until stopped"},
	"topo":     {runTopo, "print the topology of a mount or a profile (text or Graphviz)"},
	"gpu":      {runGPU, "hot-plug: gpu add TEMPLATE | gpu remove NODE"},
	"profiles": {runProfiles, "list the built-in device profiles"},
	"demo":     {runDemo, "mount the default profile in a temporary directory and show it working"},
	"bench":    {runBench, "take every tracked figure against its floor on a temporary mount"},
	"trace":    {runTrace, "decode every kfd/amdgpu ioctl of a command with eBPF"},
	"exec":     {runExec, "run a command with the emulator at /dev/kfd, /sys/... (private mount namespace)"},
	"info":     {runInfo, "print the HSA agents, pools and ISAs of a device (rocminfo-style, Go runtime)"},
	"top":      {runTop, "show each GPU's live figures (VRAM, GTT, busy %, clocks, power, temperature), refreshed"},
}

// hidden commands used internally (re-exec helpers); the bench's client processes
// (benchclient.go) and kfdemu exec's namespace child (nsexec.MaybeRunChild) are caught earlier, by
// init functions, so that the test binary can re-execute itself too
var hidden = map[string]func([]string) int{
	"__trace-child": runTraceChild,
	"__exec-child":  runExecChild,
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: kfdemu COMMAND [flags] (kfdemu COMMAND -h for the flags)")
	var names []string
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(os.Stderr, "  %-9s %s\n", n, commands[n].help)
	}
}

func main() {
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	name := os.Args[1]
	if f, ok := hidden[name]; ok {
		os.Exit(f(os.Args[2:]))
	}
	c, ok := commands[name]
	if !ok {
		if name != "-h" && name != "--help" && name != "help" {
			fmt.Fprintf(os.Stderr, "kfdemu: unknown command %q\n", name)
		}
		usage()
		os.Exit(2)
	}
	os.Exit(c.run(os.Args[2:]))
}
