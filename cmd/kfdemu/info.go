package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/kfdemu/kfdemu/runtime/hsa"
)

// runInfo prints a rocminfo-style report of a device built only on runtime/hsa: the agents, their
// ISA, compute units, queue limits and memory pools.
func runInfo(args []string) int {
	fl := flag.NewFlagSet("info", flag.ContinueOnError)
	root := fl.String("root", "", "device root: a kfdemu mount, / for the real driver (default: $KFDEMU_ROOT, /dev/kfd, /run/kfdemu)")
	fl.Usage = func() {
		fmt.Fprintln(fl.Output(), "usage: kfdemu info [--root DIR]\n\nPrints the HSA agents of the device (rocminfo's report), "+
			"using the Go runtime (runtime/hsa).")
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		return 2
	}
	r, err := hsa.Init(hsa.Config{Root: *root})
	if err != nil {
		fmt.Fprintln(os.Stderr, "kfdemu info:", err)
		return 1
	}
	defer r.Shutdown()
	printInfo(os.Stdout, r)
	return 0
}

func printInfo(w io.Writer, r *hsa.Runtime) {
	major, minor := r.Version()
	fmt.Fprintf(w, "Runtime: kfdemu runtime/hsa, KFD interface %d.%d\n", major, minor)
	for i, a := range r.Agents() {
		fmt.Fprintf(w, "\n*******\nAgent %d\n*******\n", i+1)
		fmt.Fprintf(w, "  %-28s %s\n", "Name:", a.Name)
		fmt.Fprintf(w, "  %-28s %s\n", "Device Type:", a.Kind)
		fmt.Fprintf(w, "  %-28s %d\n", "Node:", a.Node.ID)
		if a.Kind == hsa.GPU {
			fmt.Fprintf(w, "  %-28s %d\n", "GPU ID:", a.GPUID())
			fmt.Fprintf(w, "  %-28s %d\n", "Compute Unit:", a.ComputeUnits())
			fmt.Fprintf(w, "  %-28s %d\n", "Wavefront Size:", a.WavefrontSize())
			fmt.Fprintf(w, "  %-28s %d(%#x)\n", "Queue Min Size:", hsa.QueueMinSize, hsa.QueueMinSize)
			fmt.Fprintf(w, "  %-28s %d(%#x)\n", "Queue Max Size:", hsa.QueueMaxSize, hsa.QueueMaxSize)
			fmt.Fprintf(w, "  %-28s %s\n", "Queue Type:", "MULTI")
		} else {
			fmt.Fprintf(w, "  %-28s %d\n", "Compute Unit:", a.Node.Props.Get("cpu_cores_count"))
		}
		fmt.Fprintf(w, "  Pool Info:\n")
		for j, p := range a.Pools {
			fmt.Fprintf(w, "    Pool %d\n", j+1)
			fmt.Fprintf(w, "      %-26s GLOBAL; FLAGS: %s\n", "Segment:", p.Kind)
			fmt.Fprintf(w, "      %-26s %d(%#x) KB\n", "Size:", p.Size/1024, p.Size/1024)
			fmt.Fprintf(w, "      %-26s %s\n", "Name:", p.Name)
		}
		if a.Kind == hsa.GPU {
			fmt.Fprintf(w, "  ISA Info:\n    ISA 1\n      %-26s %s\n", "Name:", a.ISA)
		}
	}
	fmt.Fprintln(w, "*** Done ***")
}
