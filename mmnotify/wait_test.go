package mmnotify

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// readerState returns the status of the reader goroutine as runtime.Stack prints it ("IO wait",
// "syscall", "runnable", ...), or "" when it is not found.
func readerState() string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	for _, g := range strings.Split(string(buf), "\n\n") {
		if !strings.Contains(g, "mmnotify.(*Notifier).read(") {
			continue
		}
		head, _, _ := strings.Cut(g, "\n") // goroutine N [state, ...]:
		_, st, _ := strings.Cut(head, "[")
		st, _, _ = strings.Cut(st, "]")
		st, _, _ = strings.Cut(st, ",")
		return st
	}
	return ""
}

// While the ring buffer is empty the reader waits in the netpoller, holding neither a P nor a
// thread ("IO wait"), not in a blocking epoll_wait that keeps its P ("syscall"), and records
// written after it went to sleep still reach the handler.
func TestReaderWaitsInNetpoller(t *testing.T) {
	n := open(t)
	if n.rw == nil {
		t.Fatal("the ring buffer's descriptor could not be polled through the netpoller")
	}
	var s seen
	w, err := n.Watch(unix.Getpid(), s.add)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for round := range 3 {
		var st string
		for i := 0; ; i++ {
			if st = readerState(); st == "IO wait" {
				break
			}
			if i == 500 {
				t.Fatalf("round %d: the idle reader is in state %q, want \"IO wait\"", round, st)
			}
			time.Sleep(2 * time.Millisecond)
		}
		mem, err := unix.Mmap(-1, 0, 4096, unix.PROT_READ, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
		if err != nil {
			t.Fatal(err)
		}
		if err := unix.Munmap(mem); err != nil {
			t.Fatal(err)
		}
		w.Sync()
		if got := s.take(); len(got) == 0 {
			t.Fatalf("round %d: the munmap made while the reader slept was not seen", round)
		}
	}
}
