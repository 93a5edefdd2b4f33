package fs

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kfdemu/kfdemu/internal/testenv"
	"github.com/kfdemu/kfdemu/kfd"
	"github.com/kfdemu/kfdemu/topology"
)

// TestWaitBesideUnmount: Wait and Unmount run at once, as in kfdemu serve when a signal comes
// during start-up, and Wait returns. Wait used to read the server list that Unmount clears (a
// data race the race detector reported in a kfdtest run; Wait after the clear would index an empty
// list).
func TestWaitBesideUnmount(t *testing.T) {
	testenv.NeedMount(t)
	sys, err := topology.Profile("mi210")
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	for i := 0; i < 3; i++ {
		srv, err := Mount(filepath.Join(t.TempDir(), "mnt"), Options{System: sys, Device: kfd.New(sys, log), Log: log})
		if err != nil {
			t.Fatal(err)
		}
		waited := make(chan struct{})
		unmounted := make(chan error, 1)
		go func() { unmounted <- srv.Unmount() }()
		if i > 0 { // the other order too: Wait after the lists are gone
			<-unmounted
			unmounted <- nil
		}
		go func() { srv.Wait(); close(waited) }()
		if err := <-unmounted; err != nil {
			t.Errorf("unmount: %v", err)
		}
		select {
		case <-waited:
		case <-time.After(10 * time.Second):
			t.Fatal("Wait did not return after Unmount")
		}
	}
}
