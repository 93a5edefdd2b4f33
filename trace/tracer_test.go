package trace

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// AMDKFD_IOC_GET_VERSION = _IOR('K', 0x01, struct kfd_ioctl_get_version_args) (kfd_ioctl.h).
const getVersion = 0x80084B01

// TestMain doubles as the traced child: it waits for a byte on stdin, then issues ioctls.
func TestMain(m *testing.M) {
	if os.Getenv("TRACE_TEST_CHILD") != "" {
		io.ReadFull(os.Stdin, make([]byte, 1))
		f, err := os.CreateTemp("", "trace-child")
		if err != nil {
			os.Exit(3)
		}
		os.Remove(f.Name()) // the open fd stays usable
		for i := 0; i < 3; i++ {
			var arg [8]byte
			unix.Syscall(unix.SYS_IOCTL, f.Fd(), getVersion, uintptr(unsafePointer(&arg)))
		}
		unix.Syscall(unix.SYS_IOCTL, f.Fd(), 0x5401 /* TCGETS: not kfd/DRM */, 0)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func openOrSkip(t *testing.T, opts Options) *Tracer {
	t.Helper()
	tr, err := Open(opts)
	if errors.Is(err, ErrUnavailable) {
		t.Skipf("eBPF not available here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	return tr
}

func startChild(t *testing.T) (*exec.Cmd, io.WriteCloser) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "TRACE_TEST_CHILD=1")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, in
}

func TestTraceChildOnly(t *testing.T) {
	tr := openOrSkip(t, Options{AllFDs: true})
	traced, goTraced := startChild(t)
	other, goOther := startChild(t) // never added: nothing of it may appear
	if err := tr.Add(traced.Process.Pid); err != nil {
		t.Fatal(err)
	}
	goOther.Write([]byte{1})
	if err := other.Wait(); err != nil {
		t.Fatal(err)
	}
	goTraced.Write([]byte{1})
	if err := traced.Wait(); err != nil {
		t.Fatal(err)
	}
	var got []Call
	for len(got) < 3 {
		tr.SetDeadline(time.Now().Add(5 * time.Second))
		c, err := tr.Read()
		if err != nil {
			t.Fatalf("after %d calls: %v", len(got), err)
		}
		got = append(got, c)
	}
	for _, c := range got {
		if c.Pid != traced.Process.Pid {
			t.Errorf("call from pid %d, want only %d", c.Pid, traced.Process.Pid)
		}
		if c.Cmd != getVersion || c.Errno() != unix.ENOTTY || len(c.Arg) != 8 {
			t.Errorf("got %s", fmt.Sprintf("cmd %#x ret %d arg %d bytes", c.Cmd, c.Ret, len(c.Arg)))
		}
	}
	// No fourth record: TCGETS is neither kfd nor DRM, and the other child was not traced.
	tr.SetDeadline(time.Now().Add(300 * time.Millisecond))
	if c, err := tr.Read(); err == nil {
		t.Errorf("unexpected record: pid %d cmd %#x", c.Pid, c.Cmd)
	}
}

func TestPathFilter(t *testing.T) {
	for p, want := range map[string]bool{
		"/dev/kfd": true, "/run/kfdemu/dev/kfd": true, "/dev/dri/renderD128": true,
		"/run/kfdemu/dev/dri/renderD129": true, "/tmp/x": false, "": false, "/dev/dri/card0": false,
	} {
		if got := isGPUDevice(p); got != want {
			t.Errorf("isGPUDevice(%q) = %v", p, got)
		}
	}
}

func FuzzParseRecord(f *testing.F) {
	f.Add(make([]byte, recSize))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := parseRecord(b)
		if err == nil && (len(c.Arg) > maxArg || len(c.Extra) > maxExtra) {
			t.Fatal("oversized copy")
		}
	})
}

func TestDescribe(t *testing.T) {
	arg := make([]byte, 8)
	arg[0], arg[4] = 1, 2
	name, keys, vals, ok := describeABI(getVersion, arg)
	if !ok || name != "AMDKFD_IOC_GET_VERSION" || len(keys) != 2 || keys[0] != "MajorVersion" || vals[0] != 1 || vals[1] != 2 {
		t.Fatalf("%s %v %v", name, keys, vals)
	}
	line := Format(Call{Cmd: getVersion, Arg: arg, Ret: 0, Pid: 7, Tid: 7})
	if !strings.Contains(line, "AMDKFD_IOC_GET_VERSION") || !strings.Contains(line, "MinorVersion=0x2") || !strings.Contains(line, " 7 ") {
		t.Errorf("format: %s", line)
	}
	if line := Format(Call{Cmd: getVersion, Arg: arg, Pid: 7, Tid: 9}); !strings.Contains(line, " 7/9 ") {
		t.Errorf("a second thread's call: %s", line)
	}
	if d := Decode(Call{Cmd: 0xc0184b18, Arg: make([]byte, 24), Ret: -22}); d.Ioctl != "AMDKFD_IOC_MAP_MEMORY_TO_GPU" || d.Errno == "" {
		t.Errorf("decode %+v", d)
	}
	mapIDs := []byte{0xb0, 0x18, 0, 0, 7, 0, 0, 0}
	if d := Decode(Call{Cmd: 0xc0184b18, Arg: make([]byte, 24), Extra: mapIDs}); d.ArrayOf != "device_ids" || len(d.Array) != 2 || d.Array[0] != 6320 || d.Array[1] != 7 {
		t.Errorf("MAP device ids: %s %v", d.ArrayOf, d.Array)
	}
	ev := make([]byte, 96)
	ev[40], ev[88] = 5, 9
	if d := Decode(Call{Cmd: 0xc0184b0c, Arg: make([]byte, 24), Extra: ev}); d.ArrayOf != "event_ids" || len(d.Array) != 2 || d.Array[0] != 5 || d.Array[1] != 9 {
		t.Errorf("WAIT_EVENTS event ids: %s %v", d.ArrayOf, d.Array)
	}
	if line := Format(Call{Cmd: 0xc0184b18, Arg: make([]byte, 24), Extra: mapIDs}); !strings.Contains(line, "device_ids=[6320 7]") {
		t.Errorf("format: %s", line)
	}
}

// TestFDPathDeleted: a device file whose dentry another process's lookup unhashed is still named
// by its path (kfdemu's per-process inodes make /proc show " (deleted)").
func TestFDPathDeleted(t *testing.T) {
	p := filepath.Join(t.TempDir(), "dev", "kfd")
	os.MkdirAll(filepath.Dir(p), 0o755)
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	os.Remove(p)
	if got := fdPath(os.Getpid(), int(f.Fd())); got != p || !isGPUDevice(got) {
		t.Errorf("fdPath of an unlinked device file: %q, want %q", got, p)
	}
}
