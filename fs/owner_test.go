package fs

import (
	"os"
	"os/exec"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// TestOwnerThread: every thread of the owner is recognised (leader or not), a thread of another
// process is not, and neither is anything once the owner has exited (its pid may be reused).
func TestOwnerThread(t *testing.T) {
	pid := os.Getpid()
	fd := ownerPidfd(pid)
	if fd < 0 {
		t.Skip("no pidfd_open")
	}
	defer unix.Close(fd)
	if !ownerThread(fd, pid, uint32(pid)) {
		t.Error("the owner's leader thread not recognised")
	}
	tids, done := make(chan int), make(chan struct{})
	defer close(done)
	tid := pid
	for range 100 { // a thread other than the leader (the goroutine may land on the main thread)
		go func() {
			runtime.LockOSThread() // the thread stays this goroutine's until it returns
			tids <- unix.Gettid()
			<-done
		}()
		if tid = <-tids; tid != pid {
			break
		}
	}
	if tid == pid || !ownerThread(fd, pid, uint32(tid)) {
		t.Errorf("thread %d of the owner %d not recognised", tid, pid)
	}
	if ownerThread(-1, pid, uint32(pid)) {
		t.Error("recognised without a pidfd")
	}

	cmd := exec.Command("sleep", "5")
	if err := cmd.Start(); err != nil {
		t.Skip(err)
	}
	other := cmd.Process.Pid
	ofd := ownerPidfd(other)
	if ownerThread(fd, pid, uint32(other)) {
		t.Errorf("process %d taken for a thread of %d", other, pid)
	}
	if !ownerThread(ofd, other, uint32(other)) {
		t.Errorf("the other process's own thread not recognised")
	}
	cmd.Process.Kill()
	cmd.Wait() // reaped: its pid is free for reuse
	if ownerThread(ofd, other, uint32(other)) {
		t.Error("an exited owner still recognised")
	}
	unix.Close(ofd)
}
