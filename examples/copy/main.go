// Command copy moves data between system memory and the first GPU's VRAM with the SDMA engine and
// checks it.
package main

import (
	"bytes"
	"fmt"
	"os"
	"time"

	"github.com/kfdemu/kfdemu/runtime/hsa"
)

func main() {
	const size = 16 << 20
	r, err := hsa.Init(hsa.Config{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "copy:", err)
		os.Exit(1)
	}
	defer r.Shutdown()
	g := r.GPUs()[0]
	host, err := g.SystemPool().Allocate(2 * size)
	if err != nil {
		fmt.Fprintln(os.Stderr, "copy:", err)
		os.Exit(1)
	}
	defer host.Free()
	vram, err := g.Pools[0].Allocate(size)
	if err != nil {
		fmt.Fprintln(os.Stderr, "copy:", err)
		os.Exit(1)
	}
	defer vram.Free()
	h := host.Bytes()
	for i := range size {
		h[i] = byte(i * 7)
	}
	start := time.Now()
	if err := r.Copy(vram.VA, host.VA, size); err != nil { // host -> VRAM
		fmt.Fprintln(os.Stderr, "copy:", err)
		os.Exit(1)
	}
	if err := r.Copy(host.VA+size, vram.VA, size); err != nil { // VRAM -> host
		fmt.Fprintln(os.Stderr, "copy:", err)
		os.Exit(1)
	}
	el := time.Since(start)
	if !bytes.Equal(h[:size], h[size:]) {
		fmt.Fprintln(os.Stderr, "copy: data differs after the round trip")
		os.Exit(1)
	}
	fmt.Printf("copied %d MiB to VRAM and back with SDMA in %v: ok\n", size>>20, el.Round(time.Millisecond))
}
