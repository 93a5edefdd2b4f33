package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/kfdemu/kfdemu/topology"
)

const topologyPath = "sys/devices/virtual/kfd/kfd/topology"

func runTopo(args []string) int {
	fl := flag.NewFlagSet("topo", flag.ContinueOnError)
	mount := fl.String("mount", "", "read the topology of this kfdemu mount (default: /run/kfdemu if mounted)")
	profile := fl.String("profile", "", "render a built-in profile or profile file instead of reading a mount")
	sysfs := fl.String("sysfs", "", "read any topology directory (e.g. /sys/class/kfd/kfd/topology or a capture)")
	dot := fl.Bool("dot", false, "print Graphviz instead of text")
	fl.Usage = func() {
		fmt.Fprintln(fl.Output(), "usage: kfdemu topo [--mount DIR | --profile NAME | --sysfs DIR] [--dot]")
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		return 2
	}
	var sys *topology.System
	var err error
	switch {
	case *profile != "":
		sys, _, err = loadSystem(&serveFlags{profile: *profile})
	case *sysfs != "":
		sys, err = topology.ReadSystem(*sysfs)
	default:
		m := *mount
		if m == "" {
			m = DefaultMount
		}
		sys, err = topology.ReadSystem(filepath.Join(m, topologyPath))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "kfdemu topo:", err)
		return 1
	}
	if *dot {
		err = topology.WriteDot(os.Stdout, sys)
	} else {
		err = topology.WriteSummary(os.Stdout, sys)
	}
	if err != nil {
		return 1
	}
	return 0
}

func runGPU(args []string) int {
	fl := flag.NewFlagSet("gpu", flag.ContinueOnError)
	mount := fl.String("mount", DefaultMount, "kfdemu mount to hot-plug")
	fl.Usage = func() {
		fmt.Fprintln(fl.Output(), "usage: kfdemu gpu [--mount DIR] add TEMPLATE | remove NODE\n\n"+
			"Hot-plugs a GPU (TEMPLATE: mi210, mi100, mi300x, mi300x-cpx, vega10, rx6800) or removes GPU node NODE;\n"+
			"generation_id increments as on the real driver. Writes MNT/sys/kernel/debug/kfdemu/hotplug.")
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		return 2
	}
	a := fl.Args()
	if len(a) != 2 || (a[0] != "add" && a[0] != "remove") {
		fl.Usage()
		return 2
	}
	if a[0] == "remove" {
		if _, err := strconv.Atoi(a[1]); err != nil {
			fmt.Fprintln(os.Stderr, "kfdemu gpu: NODE must be a number")
			return 2
		}
	}
	ctl := filepath.Join(*mount, "sys/kernel/debug/kfdemu/hotplug")
	if err := os.WriteFile(ctl, []byte(a[0]+" "+a[1]+"\n"), 0); err != nil {
		fmt.Fprintf(os.Stderr, "kfdemu gpu: %v (see the daemon's log for the reason)\n", err)
		return 1
	}
	return 0
}

func runProfiles(args []string) int {
	for _, n := range topology.Profiles() {
		sys, err := topology.Profile(n)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		g := sys.GPUs()
		desc := ""
		if len(g) > 0 {
			desc = fmt.Sprintf("%d x %s %s", len(g), g[0].Name, g[0].GfxTarget())
		}
		def := ""
		if n == topology.DefaultProfile {
			def = " (default)"
		}
		fmt.Printf("%-11s %d nodes, %s%s\n", n, len(sys.Nodes), desc, def)
	}
	return 0
}
