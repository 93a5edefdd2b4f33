// Command agents lists the HSA agents of the device and their memory pools.
//
//	go run ./examples/agents            # the real /dev/kfd, or the mount in $KFDEMU_ROOT
package main

import (
	"fmt"
	"os"

	"github.com/kfdemu/kfdemu/runtime/hsa"
)

func main() {
	r, err := hsa.Init(hsa.Config{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "agents:", err)
		os.Exit(1)
	}
	defer r.Shutdown()
	for _, a := range r.Agents() {
		fmt.Printf("%s agent %q (node %d)", a.Kind, a.Name, a.Node.ID)
		if a.Kind == hsa.GPU {
			fmt.Printf(": %s, %d CUs", a.ISA, a.ComputeUnits())
		}
		fmt.Println()
		for _, p := range a.Pools {
			fmt.Printf("  %-22s %-15s %d MiB\n", p.Name, p.Kind, p.Size>>20)
		}
	}
}
