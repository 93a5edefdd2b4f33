package main

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/kfdemu/kfdemu/internal/testenv"
	"github.com/kfdemu/kfdemu/topology"
)

// TestTraceLibhsakmt traces Debian's libhsakmt under kfdemu exec and checks the decoded sequence.
func TestTraceLibhsakmt(t *testing.T) {
	bin := buildC(t, "testdata/rocm/hsakmt_test.c", "hsakmt", "/usr/include/hsakmt.h")
	mnt := daemon(t, "mi210")
	kfdemu := testenv.Kfdemu(t)
	out, err := exec.Command(kfdemu, "trace", "--json", "--", kfdemu, "exec", "--mount", mnt, "--", bin, "queues").Output()
	if ee, ok := err.(*exec.ExitError); ok && strings.Contains(string(ee.Stderr), "eBPF tracing unavailable") {
		t.Skipf("skipping: %s", ee.Stderr)
	}
	if err != nil {
		t.Fatalf("trace: %v", err)
	}
	sys, _ := topology.Profile("mi210")
	gpu := uint64(sys.GPUs()[0].GPUID)
	var seq []string
	pids := map[int]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var d struct {
			Pid    int
			Ioctl  string
			Fields map[string]uint64
			Result int64
		}
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		pids[d.Pid] = true
		seq = append(seq, d.Ioctl)
		switch d.Ioctl {
		case "AMDKFD_IOC_GET_VERSION":
			if d.Fields["MajorVersion"] != 1 || d.Fields["MinorVersion"] != 2 {
				t.Errorf("GET_VERSION decoded as %v", d.Fields)
			}
		case "AMDKFD_IOC_ACQUIRE_VM", "AMDKFD_IOC_ALLOC_MEMORY_OF_GPU", "AMDKFD_IOC_CREATE_QUEUE":
			if d.Fields["GPUID"] != gpu || d.Result != 0 {
				t.Errorf("%s: gpu_id %d result %d, want %d", d.Ioctl, d.Fields["GPUID"], d.Result, gpu)
			}
		}
	}
	want := []string{"AMDKFD_IOC_GET_VERSION", "AMDKFD_IOC_GET_PROCESS_APERTURES_NEW", "AMDKFD_IOC_ACQUIRE_VM",
		"AMDKFD_IOC_ALLOC_MEMORY_OF_GPU", "AMDKFD_IOC_MAP_MEMORY_TO_GPU", "AMDKFD_IOC_CREATE_QUEUE",
		"AMDKFD_IOC_CREATE_EVENT", "AMDKFD_IOC_WAIT_EVENTS", "AMDKFD_IOC_DESTROY_QUEUE", "DRM_IOCTL_AMDGPU_INFO"}
	joined := strings.Join(seq, " ")
	for _, w := range want {
		if !strings.Contains(joined, w) {
			t.Errorf("trace lacks %s", w)
		}
	}
	if strings.Index(joined, "AMDKFD_IOC_GET_VERSION") > strings.Index(joined, "AMDKFD_IOC_ACQUIRE_VM") {
		t.Error("GET_VERSION should come before ACQUIRE_VM")
	}
	if len(pids) != 1 {
		t.Errorf("calls from %d processes, want only the test program's", len(pids))
	}
}
