package hsa_test

import (
	"fmt"
	"time"

	"github.com/kfdemu/kfdemu/runtime/hsa"
)

// Listing the agents and their pools. With the default Config the runtime opens the real
// /dev/kfd, or the kfdemu mount named by $KFDEMU_ROOT (here: the mi210 profile).
func ExampleInit() {
	r, err := hsa.Init(hsa.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Shutdown()
	for _, a := range r.GPUs() {
		fmt.Printf("%s: %s, %d compute units, wavefront %d\n", a.Kind, a.ISA, a.ComputeUnits(), a.WavefrontSize())
		for _, p := range a.Pools {
			fmt.Printf("  pool %s (%s)\n", p.Name, p.Kind)
		}
	}
	// Output:
	// GPU: amdgcn-amd-amdhsa--gfx90a, 104 compute units, wavefront 64
	//   pool GPU local (VRAM) (coarse-grained)
}

// A barrier-AND packet that waits for a signal the CPU releases, completing another signal.
func ExampleQueue_SubmitBarrierAnd() {
	r, err := hsa.Init(hsa.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Shutdown()
	q, err := r.GPUs()[0].CreateQueue(64, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer q.Destroy()
	gate, _ := r.NewSignal(1, false)
	done, _ := r.NewSignal(1, true)
	if _, err := q.SubmitBarrierAnd([]*hsa.Signal{gate}, done); err != nil {
		fmt.Println(err)
		return
	}
	_, completed, _ := done.Wait(hsa.Eq, 0, 10*time.Millisecond)
	fmt.Println("completed before the gate opened:", completed)
	gate.Store(0, hsa.Release)
	_, completed, _ = done.Wait(hsa.Eq, 0, 5*time.Second)
	fmt.Println("completed after:", completed, "read index", q.ReadIndex())
	// Output:
	// completed before the gate opened: false
	// completed after: true read index 1
}

// Signal arithmetic and a wait with a timeout.
func ExampleSignal() {
	r, err := hsa.Init(hsa.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Shutdown()
	s, _ := r.NewSignal(3, false)
	defer s.Destroy()
	s.Sub(1, hsa.Release)
	fmt.Println(s.Load(hsa.Acquire), s.CAS(2, 7, hsa.AcquireRelease), s.Load(hsa.Relaxed))
	v, ok, _ := s.Wait(hsa.Lt, 5, time.Millisecond)
	fmt.Println(v, ok)
	// Output:
	// 2 2 7
	// 7 false
}
