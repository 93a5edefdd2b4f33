package fs

import (
	"os"
	"path/filepath"
	"testing"
)

// TestAmdgpuParameters reads /sys/module/amdgpu/parameters through the mount: kfdtest reads emu_mode
// and cwsr_enable there (KFDTestUtil.cpp is_emulator, KFDCWSRTest.cpp), with amdgpu's defaults and
// param_get_int/param_get_bool text.
func TestAmdgpuParameters(t *testing.T) {
	mnt, _ := mountDriver(t, "mi210")
	dir := filepath.Join(mnt, "sys/module/amdgpu/parameters")
	for name, want := range map[string]string{
		"emu_mode": "0\n", "cwsr_enable": "1\n", "noretry": "-1\n", "sched_policy": "0\n",
		"hws_gws_support": "N\n", "queue_preemption_timeout_ms": "9000\n",
	} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(b) != want {
			t.Errorf("%s = %q, %v; want %q", name, b, err, want)
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) != len(amdgpuParams) {
		t.Errorf("parameters/ lists %d entries (%v), want %d", len(ents), err, len(amdgpuParams))
	}
	if err := os.WriteFile(filepath.Join(dir, "emu_mode"), []byte("1\n"), 0); err == nil {
		t.Error("writing emu_mode succeeded on the read-only sys connection")
	}
}
