package hsa

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// TestAgainstROCrHeaders compiles C against Debian's ROCr headers and compares sizes, field offsets
// and constants with the Go types.
func TestAgainstROCrHeaders(t *testing.T) {
	if _, err := os.Stat("/usr/include/hsa/amd_hsa_queue.h"); err != nil {
		t.Skip("skipping: libhsa-runtime-dev is not installed (scripts/install-deps.sh installs it)")
	}
	structs := []struct {
		goType any
		c      string
		fields []string
	}{
		{KernelDispatchPacket{}, "hsa_kernel_dispatch_packet_t", []string{"header", "setup", "workgroup_size_x", "workgroup_size_y",
			"workgroup_size_z", "reserved0", "grid_size_x", "grid_size_y", "grid_size_z", "private_segment_size",
			"group_segment_size", "kernel_object", "kernarg_address", "reserved2", "completion_signal"}},
		{AgentDispatchPacket{}, "hsa_agent_dispatch_packet_t", []string{"header", "type", "reserved0", "return_address", "arg", "reserved2", "completion_signal"}},
		{BarrierPacket{}, "hsa_barrier_and_packet_t", []string{"header", "reserved0", "reserved1", "dep_signal", "reserved2", "completion_signal"}},
		{BarrierPacket{}, "hsa_barrier_or_packet_t", []string{"header", "reserved0", "reserved1", "dep_signal", "reserved2", "completion_signal"}},
		{Signal{}, "amd_signal_t", []string{"kind", "value", "event_mailbox_ptr", "event_id", "reserved1", "start_ts", "end_ts", "queue_ptr", "reserved3"}},
		{Queue{}, "hsa_queue_t", []string{"type", "features", "base_address", "doorbell_signal", "size", "reserved1", "id"}},
		{AMDQueue{}, "amd_queue_t", []string{"hsa_queue", "reserved1", "write_dispatch_id", "group_segment_aperture_base_hi",
			"private_segment_aperture_base_hi", "max_cu_id", "max_wave_id", "max_legacy_doorbell_dispatch_id_plus_1",
			"legacy_doorbell_lock", "reserved2", "read_dispatch_id", "read_dispatch_id_field_base_byte_offset",
			"compute_tmpring_size", "scratch_resource_descriptor", "scratch_backing_memory_location",
			"scratch_backing_memory_byte_size", "scratch_wave64_lane_byte_size", "queue_properties", "reserved3",
			"queue_inactive_signal", "reserved4"}},
	}
	consts := map[string]int64{
		"HSA_PACKET_TYPE_VENDOR_SPECIFIC": PacketTypeVendorSpecific, "HSA_PACKET_TYPE_INVALID": PacketTypeInvalid,
		"HSA_PACKET_TYPE_KERNEL_DISPATCH": PacketTypeKernelDispatch, "HSA_PACKET_TYPE_BARRIER_AND": PacketTypeBarrierAnd,
		"HSA_PACKET_TYPE_AGENT_DISPATCH": PacketTypeAgentDispatch, "HSA_PACKET_TYPE_BARRIER_OR": PacketTypeBarrierOr,
		"HSA_PACKET_HEADER_TYPE": HeaderType, "HSA_PACKET_HEADER_BARRIER": HeaderBarrier,
		"HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE": HeaderAcquireFenceScope, "HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE": HeaderReleaseFenceScope,
		"HSA_PACKET_HEADER_WIDTH_TYPE": HeaderWidthType, "HSA_FENCE_SCOPE_SYSTEM": FenceScopeSystem, "HSA_FENCE_SCOPE_AGENT": FenceScopeAgent,
		"AMD_SIGNAL_KIND_USER": SignalKindUser, "AMD_SIGNAL_KIND_DOORBELL": SignalKindDoorbell,
		"AMD_SIGNAL_KIND_LEGACY_DOORBELL": SignalKindLegacyDoorbell,
	}
	var c strings.Builder
	c.WriteString("#include <stdio.h>\n#include <stddef.h>\n#include <hsa/hsa.h>\n#include <hsa/amd_hsa_queue.h>\n#include <hsa/amd_hsa_signal.h>\nint main(void){\n")
	for _, s := range structs {
		fmt.Fprintf(&c, "printf(\"size %s %%zu\\n\", sizeof(%s));\n", s.c, s.c)
		for _, f := range s.fields {
			fmt.Fprintf(&c, "printf(\"off %s.%s %%zu\\n\", offsetof(%s, %s));\n", s.c, f, s.c, f)
		}
	}
	for name := range consts {
		fmt.Fprintf(&c, "printf(\"const %s %%lld\\n\", (long long)(%s));\n", name, name)
	}
	c.WriteString("return 0;}\n")
	dir := t.TempDir()
	src := filepath.Join(dir, "hsa.c")
	os.WriteFile(src, []byte(c.String()), 0644)
	if out, err := exec.Command("gcc", "-DAMD_INTERNAL_BUILD", "-o", filepath.Join(dir, "hsa"), src).CombinedOutput(); err != nil {
		t.Fatalf("compile: %v\n%s", err, out)
	}
	out, err := exec.Command(filepath.Join(dir, "hsa")).Output()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(l)
		v, _ := strconv.ParseInt(f[2], 10, 64)
		got[f[0]+" "+f[1]] = v
	}
	n := 0
	for _, s := range structs {
		typ := reflect.TypeOf(s.goType)
		if int64(typ.Size()) != got["size "+s.c] {
			t.Errorf("%s: Go size %d, C %d", s.c, typ.Size(), got["size "+s.c])
		}
		if typ.NumField() != len(s.fields) {
			t.Fatalf("%s: %d Go fields, %d C fields listed", s.c, typ.NumField(), len(s.fields))
		}
		for i, f := range s.fields {
			if off := int64(typ.Field(i).Offset); off != got["off "+s.c+"."+f] {
				t.Errorf("%s.%s: Go offset %d, C %d", s.c, f, off, got["off "+s.c+"."+f])
			}
			n++
		}
	}
	for name, v := range consts {
		if got["const "+name] != v {
			t.Errorf("%s: Go %d, C %d", name, v, got["const "+name])
		}
		n++
	}
	if SignalValueOffset != int(got["off amd_signal_t.value"]) || SignalMailboxOffset != int(got["off amd_signal_t.event_mailbox_ptr"]) ||
		SignalEventIDOffset != int(got["off amd_signal_t.event_id"]) {
		t.Error("signal offsets differ from amd_signal_t")
	}
	t.Logf("%d offsets and constants agree with ROCr's headers", n)
}
