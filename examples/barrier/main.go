// Command barrier measures the round trip of a barrier-AND packet on the first GPU: publish the
// packet, ring the doorbell, wait for its completion signal.
package main

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/kfdemu/kfdemu/runtime/hsa"
)

func main() {
	n := flag.Int("n", 1000, "round trips")
	flag.Parse()
	r, err := hsa.Init(hsa.Config{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "barrier:", err)
		os.Exit(1)
	}
	defer r.Shutdown()
	q, err := r.GPUs()[0].CreateQueue(256, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "barrier:", err)
		os.Exit(1)
	}
	defer q.Destroy()
	s, err := r.NewSignal(0, false)
	if err != nil {
		fmt.Fprintln(os.Stderr, "barrier:", err)
		os.Exit(1)
	}
	defer s.Destroy()
	lat := make([]time.Duration, *n)
	for i := range lat {
		start := time.Now()
		s.Store(1, hsa.Relaxed)
		if _, err := q.SubmitBarrierAnd(nil, s); err != nil {
			fmt.Fprintln(os.Stderr, "barrier:", err)
			os.Exit(1)
		}
		if _, ok, err := s.Wait(hsa.Eq, 0, 5*time.Second); !ok || err != nil {
			fmt.Fprintln(os.Stderr, "barrier: packet did not complete:", err)
			os.Exit(1)
		}
		lat[i] = time.Since(start)
	}
	slices.Sort(lat)
	fmt.Printf("%d barrier packets: p50 %v, p99 %v\n", *n, lat[len(lat)/2], lat[len(lat)*99/100])
}
