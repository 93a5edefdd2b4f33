// Command dispatch loads a code object and runs its vadd kernel (c[i] = a[i] + b[i], the kernel
// of cmd/kfdemu/testdata/rocm/vadd.cl) on the first GPU, then checks the result.
//
//	clang-14 -target amdgcn-amd-amdhsa -mcpu=gfx90a -nogpulib -O2 -cl-std=CL2.0 -c vadd.cl -o vadd.o
//	ld.lld-14 -shared vadd.o -o vadd.co
//	go run ./examples/dispatch vadd.co
package main

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"time"

	"github.com/kfdemu/kfdemu/runtime/hsa"
)

func fail(err error) {
	fmt.Fprintln(os.Stderr, "dispatch:", err)
	os.Exit(1)
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: dispatch CODE_OBJECT")
		os.Exit(2)
	}
	co, err := os.ReadFile(os.Args[1])
	if err != nil {
		fail(err)
	}
	r, err := hsa.Init(hsa.Config{})
	if err != nil {
		fail(err)
	}
	defer r.Shutdown()
	g := r.GPUs()[0]
	exe, err := g.LoadCodeObject(co)
	if err != nil {
		fail(err)
	}
	defer exe.Destroy()
	k, err := exe.Kernel("vadd")
	if err != nil {
		fail(err)
	}
	const n = 4096
	buf, err := g.SystemPool().Allocate(3 * 4 * n)
	if err != nil {
		fail(err)
	}
	defer buf.Free()
	b := buf.Bytes()
	for i := range n {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(i)))
		binary.LittleEndian.PutUint32(b[4*n+4*i:], math.Float32bits(1.5))
	}
	args, err := r.KernargPool().Allocate(uint64(k.KernargSize))
	if err != nil {
		fail(err)
	}
	defer args.Free()
	a := args.Bytes()
	binary.LittleEndian.PutUint64(a[0:], buf.VA)
	binary.LittleEndian.PutUint64(a[8:], buf.VA+4*n)
	binary.LittleEndian.PutUint64(a[16:], buf.VA+8*n)
	binary.LittleEndian.PutUint32(a[24:], n)
	q, err := g.CreateQueue(64, nil)
	if err != nil {
		fail(err)
	}
	defer q.Destroy()
	done, err := r.NewSignal(1, true)
	if err != nil {
		fail(err)
	}
	defer done.Destroy()
	if _, err := q.SubmitDispatch(hsa.Dispatch{Kernel: k, Grid: [3]uint32{n}, Workgroup: [3]uint16{256}, Kernarg: args.VA, Completion: done}); err != nil {
		fail(err)
	}
	if _, ok, err := done.Wait(hsa.Eq, 0, 30*time.Second); !ok || err != nil {
		fail(fmt.Errorf("kernel did not complete: %v %v", err, q.Err()))
	}
	for i := range n {
		if c := math.Float32frombits(binary.LittleEndian.Uint32(b[8*n+4*i:])); c != float32(i)+1.5 {
			fail(fmt.Errorf("c[%d] = %v, want %v", i, c, float32(i)+1.5))
		}
	}
	fmt.Printf("vadd over %d elements on %s: ok\n", n, g.ISA)
}
