package kfd

import (
	"encoding/binary"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kfdemu/kfdemu/kfd/abi"
	"github.com/kfdemu/kfdemu/kfd/svm"
)

// smiOpen issues SMI_EVENTS for gpu as c and returns the installed fd as a file.
func smiOpen(t *testing.T, e *env, c *fdCaller, gpu uint32) *os.File {
	t.Helper()
	a := abi.SMIEventsArgs{GPUID: gpu}
	buf := make([]byte, abi.IOCSize(abi.AMDKFD_IOC_SMI_EVENTS))
	encode(buf, &a)
	if errno := e.f.Ioctl(c, abi.AMDKFD_IOC_SMI_EVENTS, buf); errno != 0 {
		t.Fatalf("SMI_EVENTS: %v", errno)
	}
	decode(buf, &a)
	f := c.files[len(c.files)-1]
	if int(f.Fd()) != int(a.AnonFD) {
		t.Fatalf("anon_fd %d, installed %d", a.AnonFD, f.Fd())
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// smiMask writes the event mask. It applies to every event emitted after the write returns.
func smiMask(t *testing.T, f *os.File, mask uint64) {
	t.Helper()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], mask)
	if n, err := f.Write(b[:]); n != 8 || err != nil {
		t.Fatalf("write mask: %d %v", n, err)
	}
}

// smiRead returns what the fd holds now ("" when empty: EAGAIN, as amdkfd's read).
func smiRead(t *testing.T, f *os.File) string {
	t.Helper()
	b := make([]byte, 4096)
	n, err := syscallRead(f, b)
	if errors.Is(err, syscall.EAGAIN) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b[:n])
}

func syscallRead(f *os.File, b []byte) (int, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, err
	}
	var n int
	var rerr error
	rc.Read(func(fd uintptr) bool { n, rerr = syscall.Read(int(fd), b); return true })
	return n, rerr
}

// TestSMIEvents: an SMI client of a GPU gets the enabled events of its own process in
// kfd_smi_events.c's formats, not another process's (no CAP_SYS_ADMIN with ALL_PROCESS here:
// fake processes have no /proc entry), nothing for events it did not enable or for another GPU,
// and is dropped when its fd closes.
func TestSMIEvents(t *testing.T) {
	e := newEnv(t, "mi210x8")
	e.acquire(e.gpu)
	if errno := e.do(abi.AMDKFD_IOC_SMI_EVENTS, &abi.SMIEventsArgs{GPUID: e.gpu}); errno != syscall.EOPNOTSUPP {
		t.Fatalf("SMI_EVENTS without an installer: %v", errno)
	}
	if errno := e.do(abi.AMDKFD_IOC_SMI_EVENTS, &abi.SMIEventsArgs{GPUID: 7}); errno != syscall.EINVAL {
		t.Fatalf("SMI_EVENTS of no GPU: %v", errno)
	}
	c := newFDCaller(e.c, e.d)
	f := smiOpen(t, e, c, e.gpu)
	if got := smiRead(t, f); got != "" {
		t.Fatalf("a new client reads %q", got)
	}
	all := abi.KFD_SMI_EVENT_MASK_FROM_INDEX(abi.KFD_SMI_EVENT_ALL_PROCESS) - 1 | abi.KFD_SMI_EVENT_MASK_FROM_INDEX(abi.KFD_SMI_EVENT_ALL_PROCESS)
	smiMask(t, f, all)
	other := e.sys.GPUs()[1].GPUID
	ev := e.d.svmSMI(e.c.tgid, []uint32{e.gpu, other})
	ev(svm.Event{Kind: svm.EventMigrate, Trigger: svm.TriggerPrefetch, GPU: 0, Start: 0x7f1234560000, Size: 16 << 10,
		From: 0, To: e.gpu, Prefetch: e.gpu, Preferred: abi.KFD_IOCTL_SVM_LOCATION_UNDEFINED})
	ev(svm.Event{Kind: svm.EventFault, GPU: 0, Addr: 0x7f1234561000, Write: true, Migrated: true, Resolved: true})
	ev(svm.Event{Kind: svm.EventUnmap, Trigger: svm.TriggerUnmapFromCPU, GPU: 0, Start: 0x7f1234560000, Size: 8 << 10})
	ev(svm.Event{Kind: svm.EventUnmap, Trigger: svm.TriggerUnmapFromCPU, GPU: 1, Start: 0x7f1234560000, Size: 8 << 10}) // other GPU
	e.d.smiEvent(e.gpu, fakeTgid+1, abi.KFD_SMI_EVENT_QUEUE_RESTORE, "%d -%d %x\n", 5, fakeTgid+1, e.gpu)               // other process
	e.d.smiVMFault(e.gpu, e.c.tgid)
	got := smiRead(t, f)
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	pid := e.c.tgid
	want := []string{
		"5 %d -%d @7f1234560(4) 0->%x %x:ffffffff 0",
		"6 %d -%d @7f1234560(4) 0->%x 0",
		"7 %d -%d @7f1234561(%x) W",
		"8 %d -%d @7f1234561(%x) M",
		"b %d -%d @7f1234560(2) %x 2",
		"1 %x:",
	}
	if len(lines) != len(want) {
		t.Fatalf("read %q", got)
	}
	for i, l := range lines {
		f := strings.Fields(l)
		w := strings.Fields(want[i])
		if len(f) != len(w) || f[0] != w[0] {
			t.Errorf("line %d: %q, want the form %q", i, l, want[i])
			continue
		}
		switch f[0] {
		case "1":
			if !strings.HasPrefix(l, "1 "+strings.TrimPrefix(hexVA(uint64(pid)), "0x")+":") {
				t.Errorf("VMFAULT line %q", l)
			}
		default:
			if f[2] != "-"+itoa(uint32(pid)) || !strings.HasPrefix(f[3], "@7f123456") {
				t.Errorf("line %q: pid or address", l)
			}
		}
		if f[0] == "5" && (f[4] != "0->"+strings.TrimPrefix(hexVA(uint64(e.gpu)), "0x") || f[5] != strings.TrimPrefix(hexVA(uint64(e.gpu)), "0x")+":ffffffff" || f[6] != "0") {
			t.Errorf("MIGRATE_START %q", l)
		}
		if f[0] == "b" && (f[3] != "@7f1234560(2)" || f[5] != "2") {
			t.Errorf("UNMAP_FROM_GPU %q", l)
		}
	}
	// Only the enabled events.
	smiMask(t, f, abi.KFD_SMI_EVENT_MASK_FROM_INDEX(abi.KFD_SMI_EVENT_QUEUE_RESTORE))
	ev(svm.Event{Kind: svm.EventEvict, GPU: -1, Start: 0x7f1234560000, Size: 4096})
	if got := smiRead(t, f); !strings.HasPrefix(got, "a ") || strings.Count(got, "\n") != 1 || !strings.HasSuffix(got, " "+strings.TrimPrefix(hexVA(uint64(e.gpu)), "0x")+"\n") {
		t.Errorf("with QUEUE_RESTORE only: %q", got)
	}
	// Closing the fd drops the client.
	f.Close()
	for deadline := time.Now().Add(5 * time.Second); e.d.Stats()["smi_clients"] != 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("client not dropped after close")
		}
	}
}

// TestSMIMaskIsSynchronous: a mask applies to the events emitted as soon as its write returns
// (kfd_smi_ev_write sets client->events before returning; kfdtest's HMMProfilingEvent writes the
// mask and prefetches at once), also when it arrives in pieces, and a cleared mask stops them.
func TestSMIMaskIsSynchronous(t *testing.T) {
	e := newEnv(t, "mi210")
	e.acquire(e.gpu)
	f := smiOpen(t, e, newFDCaller(e.c, e.d), e.gpu)
	restore := abi.KFD_SMI_EVENT_MASK_FROM_INDEX(abi.KFD_SMI_EVENT_QUEUE_RESTORE)
	emit := func() {
		e.d.smiEvent(e.gpu, e.c.tgid, abi.KFD_SMI_EVENT_QUEUE_RESTORE, "%d -%d %x\n", 5, e.c.tgid, e.gpu)
	}
	for i := 0; i < 200; i++ {
		smiMask(t, f, restore)
		emit()
		if got := smiRead(t, f); !strings.HasPrefix(got, "a 5 ") {
			t.Fatalf("round %d: event after the mask write: %q", i, got)
		}
		smiMask(t, f, 0)
		emit()
		if got := smiRead(t, f); got != "" {
			t.Fatalf("round %d: event after clearing the mask: %q", i, got)
		}
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], restore)
	f.Write(b[:3])
	emit()
	if got := smiRead(t, f); got != "" {
		t.Fatalf("event with 3 of 8 mask bytes written: %q", got)
	}
	f.Write(b[3:])
	emit()
	if got := smiRead(t, f); !strings.HasPrefix(got, "a 5 ") {
		t.Fatalf("event after the mask's last bytes: %q", got)
	}
}
