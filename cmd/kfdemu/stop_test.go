package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kfdemu/kfdemu/gpu/aql"
	"github.com/kfdemu/kfdemu/internal/testenv"
	"github.com/kfdemu/kfdemu/runtime/kmt"
)

// TestStopWhileClientsWait stops the daemon with SIGTERM while a client blocks in WAIT_EVENTS
// (no timeout) and holds a queue whose barrier never completes. The daemon exits 0 within its
// shutdown bound, the wait returns an error (the device is gone: ENODEV or ENOTCONN, as after
// a driver unload), and later calls fail the same way instead of hanging.
func TestStopWhileClientsWait(t *testing.T) {
	testenv.NeedMount(t)
	mnt := filepath.Join(t.TempDir(), "mnt")
	cmd, exited, log := startServe(t, mnt)
	waitServed(t, mnt)
	c, err := newAQLClient(mnt)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// A barrier that waits forever on its own completion signal's neighbour.
	dep := kmt.Word64(c.aq, 0x800+aql.SignalValueOffset)
	dep.Store(1)
	var pkt [aql.PacketSize]byte
	(&aql.BarrierPacket{DepSignal: [5]uint64{c.sigVA - aqlSignalOff + 0x800}}).Encode(pkt[:])
	submitted := make(chan error, 1)
	go func() { submitted <- c.submit(pkt, dep, time.Minute) }()
	defer func() {
		// The submit spins on dep, which nothing decrements now (the daemon is gone, and the
		// client's view of the memory keeps its bytes): end it before Close unmaps that view.
		dep.Store(0)
		<-submitted
	}()
	waitErr := make(chan error, 1)
	go func() {
		_, err := c.ev.Wait(kmt.Infinite)
		waitErr <- err
	}()
	time.Sleep(100 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("serve exited with %v", err)
		}
	case <-time.After(15 * time.Second):
		cmd.Process.Signal(syscall.SIGQUIT) // the goroutine dump goes to log
		time.Sleep(time.Second)
		t.Fatalf("daemon did not stop within 15 s of SIGTERM with a client waiting:\n%s", log.String())
	}
	select {
	case err := <-waitErr:
		if err == nil || !kmt.DeviceGone(err) {
			t.Errorf("WAIT_EVENTS when the daemon stopped: %v, want the device gone (ENODEV/ENOTCONN)", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("WAIT_EVENTS still blocked after the daemon exited")
	}
	if _, err := c.d.AvailableMemory(c.g); err == nil || !kmt.DeviceGone(err) {
		t.Errorf("an ioctl after the daemon stopped: %v, want the device gone", err)
	}
}

// TestInfo runs `kfdemu info` on a mount of the mi210x8 profile: nine agents, the GPUs gfx90a
// with 104 CUs and a VRAM pool, the CPU with its system pools.
func TestInfo(t *testing.T) {
	mnt := daemon(t, "mi210x8")
	out, err := exec.Command(testenv.Kfdemu(t), "info", "--root", mnt).CombinedOutput()
	if err != nil {
		t.Fatalf("info: %v\n%s", err, out)
	}
	s := string(out)
	for _, want := range []string{"KFD interface " + interfaceVersion(), "Agent 9\n", "Device Type:                 GPU", "Name:                        gfx90a",
		"Compute Unit:                104", "Queue Max Size:              131072(0x20000)", "amdgcn-amd-amdhsa--gfx90a",
		"GLOBAL; FLAGS: coarse-grained", "GLOBAL; FLAGS: kernarg", "*** Done ***"} {
		if !strings.Contains(s, want) {
			t.Errorf("info lacks %q:\n%s", want, s)
		}
	}
	if n := strings.Count(s, "Device Type:                 GPU"); n != 8 {
		t.Errorf("%d GPU agents, want 8", n)
	}
}

// TestStopInEveryState: SIGTERM ends `kfdemu serve` within its bound whatever the daemon is doing:
// starting up, idle, with its mount copied into another mount namespace (an `unshare -m` made while
// it runs holds the connection after the unmount), and a second signal ends it at once.
func TestStopInEveryState(t *testing.T) {
	testenv.NeedMount(t)
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("unshare not installed (util-linux)")
	}
	for _, tc := range []struct {
		name    string
		held    bool // another mount namespace holds a copy of the mount
		early   bool // signal before the daemon is up
		signals int
		within  time.Duration
	}{
		{name: "start-up", early: true, signals: 1, within: 15 * time.Second},
		{name: "idle", signals: 1, within: 15 * time.Second},
		{name: "held by another namespace", held: true, signals: 1, within: shutdownTimeout + 5*time.Second},
		{name: "second signal", held: true, signals: 2, within: 3 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mnt := filepath.Join(t.TempDir(), "mnt")
			cmd, exited, log := startServe(t, mnt)
			t.Cleanup(func() { syscall.Unmount(mnt, syscall.MNT_DETACH) })
			if !tc.early {
				waitServed(t, mnt)
			}
			if tc.held {
				holder := exec.Command("unshare", "-m", "--propagation", "private", "sleep", "60")
				if err := holder.Start(); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { holder.Process.Kill(); holder.Wait() })
				time.Sleep(200 * time.Millisecond) // the namespace exists with its copy of the mount
			}
			start := time.Now()
			for range tc.signals {
				cmd.Process.Signal(syscall.SIGTERM)
				time.Sleep(50 * time.Millisecond)
			}
			select {
			case err := <-exited:
				if err != nil && !strings.Contains(err.Error(), "terminated") {
					t.Errorf("serve exited with %v\n%s", err, log.String())
				}
				t.Logf("stopped %v after the signal", time.Since(start).Round(time.Millisecond))
			case <-time.After(tc.within):
				t.Fatalf("daemon still running %v after SIGTERM\n%s", tc.within, log.String())
			}
		})
	}
}

// startServe starts `kfdemu serve` on mnt with the flags extra (after the defaults, so they win;
// killed at cleanup); exited receives its exit, log its stderr.
func startServe(t *testing.T, mnt string, extra ...string) (*exec.Cmd, <-chan error, *lockedBuffer) {
	t.Helper()
	cmd := exec.Command(testenv.Kfdemu(t), append([]string{"serve", "--mount", mnt, "--log-level", "error"}, extra...)...)
	log := &lockedBuffer{}
	cmd.Stderr = log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill() })
	return cmd, exited, log
}

// waitServed waits until the daemon serves mnt.
func waitServed(t *testing.T, mnt string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !served(mnt) {
		if time.Now().After(deadline) {
			t.Fatal("daemon did not come up")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestStopWhenExecOwnerEnds: a daemon started with --exec-owner stops, unmounting, when that
// process ends however it ends (a `kfdemu exec` or a test binary killed with SIGKILL left its
// daemon serving for good), and at once when the owner has already ended at start-up.
func TestStopWhenExecOwnerEnds(t *testing.T) {
	testenv.NeedMount(t)
	for _, early := range []bool{false, true} {
		owner := exec.Command("sleep", "60")
		if err := owner.Start(); err != nil {
			t.Fatal(err)
		}
		if early {
			owner.Process.Kill()
			owner.Wait()
		}
		mnt := filepath.Join(t.TempDir(), "mnt")
		_, exited, log := startServe(t, mnt, "--log-level", "info", "--exec-owner", fmt.Sprint(owner.Process.Pid))
		t.Cleanup(func() { syscall.Unmount(mnt, syscall.MNT_DETACH) })
		if !early {
			waitServed(t, mnt)
			owner.Process.Kill() // SIGKILL: the owner runs no cleanup
			owner.Wait()
		}
		select {
		case err := <-exited:
			if err != nil {
				t.Fatalf("early %v: serve exited with %v\n%s", early, err, log.String())
			}
		case <-time.After(15 * time.Second):
			t.Fatalf("early %v: daemon still running 15 s after its exec owner ended\n%s", early, log.String())
		}
		if b, _ := os.ReadFile("/proc/self/mounts"); strings.Contains(string(b), mnt) {
			t.Fatalf("early %v: %s still mounted after the daemon stopped\n%s", early, mnt, log.String())
		}
		if !strings.Contains(log.String(), "the exec owner ended") {
			t.Errorf("early %v: no log line for the owner's end:\n%s", early, log.String())
		}
	}
}
