package pasid

import (
	"sync"
	"testing"
)

func TestAllocFreeReuse(t *testing.T) {
	s := NewSpace()
	a, _ := s.Alloc("a")
	b, _ := s.Alloc("b")
	if a == 0 || b == 0 || a == b {
		t.Fatalf("ids %d %d", a, b)
	}
	if o, ok := s.Lookup(a); !ok || o != "a" {
		t.Fatal("lookup")
	}
	s.Free(a)
	if _, ok := s.Lookup(a); ok || s.InUse() != 1 {
		t.Fatal("free")
	}
	for i := 0; i < 1<<Bits-2; i++ {
		if _, err := s.Alloc(i); err != nil {
			t.Fatalf("alloc %d: %v", i, err)
		}
	}
	if _, err := s.Alloc("x"); err != ErrExhausted {
		t.Fatalf("want exhausted, got %v", err)
	}
	s.Free(b)
	if id, err := s.Alloc("c"); err != nil || id != b {
		t.Fatalf("reuse: %d %v", id, err)
	}
	if _, ok := s.Lookup(0); ok {
		t.Fatal("PASID 0 must stay reserved")
	}
}

func TestConcurrent(t *testing.T) {
	s := NewSpace()
	var wg sync.WaitGroup
	var mu sync.Mutex
	seen := map[uint32]bool{}
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 500; i++ {
				id, err := s.Alloc(i)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				if seen[id] {
					t.Errorf("duplicate %d", id)
				}
				seen[id] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if s.InUse() != 4000 {
		t.Fatalf("in use %d", s.InUse())
	}
}
