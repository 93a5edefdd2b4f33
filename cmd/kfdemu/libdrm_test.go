package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kfdemu/kfdemu/kfd/drm"
	"github.com/kfdemu/kfdemu/topology"
)

// TestLibdrmThroughMount runs Debian's libdrm_amdgpu (amdgpu_device_initialize,
// amdgpu_query_gpu_info, heap/firmware/HW-IP queries) on every render node of a mount and compares
// what it reports with the profile's GPU.
func TestLibdrmThroughMount(t *testing.T) {
	if _, err := os.Stat("/usr/include/libdrm/amdgpu.h"); err != nil {
		t.Skip("skipping: libdrm-dev is not installed (scripts/install-deps.sh installs it)")
	}
	bin := filepath.Join(t.TempDir(), "harness")
	if out, err := exec.Command("gcc", "-Wall", "-o", bin, "../../kfd/drm/testdata/harness.c", "-ldrm_amdgpu", "-ldrm").CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	for _, profile := range []string{"mi210", "mi210x8"} {
		t.Run(profile, func(t *testing.T) {
			mnt := daemon(t, profile)
			sys, _ := topology.Profile(profile)
			for _, n := range sys.GPUs() {
				node := filepath.Join(mnt, "dev/dri/renderD"+strconv.Itoa(int(n.RenderMinor())))
				out, err := exec.Command(bin, node).CombinedOutput()
				if err != nil {
					t.Fatalf("%s: %v\n%s", node, err, out)
				}
				kv := map[string]string{}
				for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
					if k, v, ok := strings.Cut(l, "="); ok {
						kv[k] = v
					}
				}
				if kv["drm_version"] != "3.57" || kv["query_gpu_info"] != "0" || kv["gb_addr_cfg"] == "0x0" {
					t.Errorf("%s: unexpected result %v", node, kv)
				}
				for _, k := range []string{"heap_vram", "heap_gtt", "fw_mec", "hw_ip_compute"} {
					if !strings.HasPrefix(kv[k], "0 ") {
						t.Errorf("%s: %s failed: %q", node, k, kv[k])
					}
				}
				di := drm.NewDevice(drm.InfoFromNode(sys, n), nil).DevInfo()
				for k, want := range map[string]string{
					"asic_id":           "0x" + strconv.FormatUint(uint64(di.DeviceID), 16),
					"family_id":         strconv.Itoa(int(di.Family)),
					"cu_active_number":  strconv.Itoa(int(n.ComputeUnits())),
					"chip_external_rev": "0x" + strconv.FormatUint(uint64(di.ExternalRev), 16),
				} {
					if kv[k] != want {
						t.Errorf("%s: %s = %q, want %q", node, k, kv[k], want)
					}
				}
			}
			noLeaks(t, mnt)
		})
	}
}

// TestLibdrmCSThroughMount runs testdata/cs.c of kfd/drm: what kfdtest's KFDEvictTest does with
// libdrm_amdgpu (a large VRAM object, a context, a mapped GTT page, a BO list, 100 SDMA NOP
// submissions each waited for, teardown), plus an SDMA WRITE_LINEAR IB checked through the CPU
// mapping; several clients at once, and nothing may be left behind.
func TestLibdrmCSThroughMount(t *testing.T) {
	if _, err := os.Stat("/usr/include/libdrm/amdgpu.h"); err != nil {
		t.Skip("skipping: libdrm-dev is not installed (scripts/install-deps.sh installs it)")
	}
	bin := filepath.Join(t.TempDir(), "cs")
	if out, err := exec.Command("gcc", "-Wall", "-o", bin, "../../kfd/drm/testdata/cs.c", "-ldrm_amdgpu", "-ldrm").CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	mnt := daemon(t, "mi210")
	sys, _ := topology.Profile("mi210")
	node := filepath.Join(mnt, "dev/dri/renderD"+strconv.Itoa(int(sys.GPUs()[0].RenderMinor())))
	const clients = 3
	outs := make(chan string, clients)
	for range clients {
		go func() {
			out, err := exec.Command(bin, node).CombinedOutput()
			if err != nil {
				outs <- "error=" + err.Error() + "\n" + string(out)
				return
			}
			outs <- string(out)
		}()
	}
	for range clients {
		out := <-outs
		kv := map[string]string{}
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			if k, v, ok := strings.Cut(l, "="); ok {
				kv[k] = v
			}
		}
		for k, want := range map[string]string{"last_seq": "100", "all_expired": "1", "write_expired": "1",
			"written": "0xdeadbeef 0x0badf00d", "reset_state": "0", "bo_free_vram": "0"} {
			if kv[k] != want {
				t.Errorf("%s = %q, want %q\n%s", k, kv[k], want, out)
			}
		}
	}
	noLeaks(t, mnt)
}
