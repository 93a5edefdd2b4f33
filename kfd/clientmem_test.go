package kfd

import (
	"bytes"
	"os"
	"testing"
	"unsafe"
)

// clientMemory moves a client's pages with process_vm_readv/writev; the packet processor's accesses
// (a few pieces each) allocate nothing: their iovecs stay on the stack. A wave's many runs take the
// heap path. Both move the right bytes (this process stands in for the client).
func TestClientMemoryVec(t *testing.T) {
	c := clientMemory(os.Getpid())
	// On the heap (clientMemTestKeep): a stack that grows moves, and the raw addresses would be stale.
	src := heapBytes("0123456789abcdefghijklmnopqrstuvwxyz")
	dst := heapBytes(string(make([]byte, len(src))))
	addr := func(b []byte, i int) uint64 { return uint64(uintptr(unsafe.Pointer(&b[i]))) }
	bufs := [][]byte{dst[:4], dst[4:12], dst[12:]}
	addrs := []uint64{addr(src, 0), addr(src, 4), addr(src, 12)}
	if n, err := c.ReadV(bufs, addrs); n != 3 || err != nil || !bytes.Equal(dst, src) {
		t.Fatalf("ReadV: %d, %v, %q", n, err, dst)
	}
	if a := testing.AllocsPerRun(100, func() { c.ReadV(bufs, addrs) }); a != 0 {
		t.Errorf("ReadV of 3 pieces: %v allocations per call, want 0", a)
	}
	w := heapBytes("ZYXWVUTSRQPONMLKJIHGFEDCBA9876543210")
	wb := [][]byte{w[:4], w[4:12], w[12:]}
	if a := testing.AllocsPerRun(100, func() { c.WriteV(wb, addrs) }); a != 0 {
		t.Errorf("WriteV of 3 pieces: %v allocations per call, want 0", a)
	}
	if !bytes.Equal(src, w) {
		t.Fatalf("WriteV: %q", src)
	}
	// Many pieces (above the stack arrays): one byte each, reversed.
	many := make([][]byte, 30)
	manyAddrs := make([]uint64, 30)
	out := heapBytes(string(make([]byte, 30)))
	for i := range many {
		many[i], manyAddrs[i] = out[i:i+1], addr(w, 29-i)
	}
	if n, err := c.ReadV(many, manyAddrs); n != 30 || err != nil {
		t.Fatalf("ReadV of 30 pieces: %d, %v", n, err)
	}
	for i := range out {
		if out[i] != w[29-i] {
			t.Fatalf("piece %d: %q, want %q", i, out[i], w[29-i])
		}
	}
}

var clientMemTestKeep [][]byte

func heapBytes(s string) []byte {
	b := []byte(s)
	clientMemTestKeep = append(clientMemTestKeep, b)
	return b
}
