package relstore

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// Message passing, the order release stores exist for: a reader that sees the flag sees every
// word stored before it (x86-TSO keeps stores in order; the assembly call keeps the compiler from
// moving them). Two goroutines, 20000 rounds.
func TestMessagePassing(t *testing.T) {
	var data [8]atomic.Uint64
	var flag atomic.Uint32
	var ack atomic.Uint32
	const rounds = 20000
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for r := uint32(1); r <= rounds; r++ {
			for ack.Load() != r-1 {
				runtime.Gosched()
			}
			for i := range data {
				Store64(&data[i], uint64(r)*8+uint64(i))
			}
			Store32(&flag, r)
		}
	}()
	for r := uint32(1); r <= rounds; r++ {
		for flag.Load() != r {
			runtime.Gosched()
		}
		for i := range data {
			if v := data[i].Load(); v != uint64(r)*8+uint64(i) {
				t.Fatalf("round %d: word %d is %d after the flag", r, i, v)
			}
		}
		ack.Store(r)
	}
	wg.Wait()
}

func TestStores(t *testing.T) {
	var a atomic.Uint32
	var b atomic.Uint64
	Store32(&a, 0xdeadbeef)
	Store64(&b, 0x0123456789abcdef)
	if a.Load() != 0xdeadbeef || b.Load() != 0x0123456789abcdef {
		t.Fatalf("stored %#x %#x", a.Load(), b.Load())
	}
}
