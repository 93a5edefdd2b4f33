package abi

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

// cStructs maps Go argument types to their C struct names in <linux/kfd_ioctl.h>, with the C names
// of their fields in order. Structs newer than Debian's header (1.11) are listed in newerThanHeader.
var cStructs = []struct {
	goType any
	c      string
	fields []string
}{
	{GetVersionArgs{}, "kfd_ioctl_get_version_args", []string{"major_version", "minor_version"}},
	{CreateQueueArgs{}, "kfd_ioctl_create_queue_args", []string{"ring_base_address", "write_pointer_address",
		"read_pointer_address", "doorbell_offset", "ring_size", "gpu_id", "queue_type", "queue_percentage",
		"queue_priority", "queue_id", "eop_buffer_address", "eop_buffer_size", "ctx_save_restore_address",
		"ctx_save_restore_size", "ctl_stack_size", "", ""}},
	{DestroyQueueArgs{}, "kfd_ioctl_destroy_queue_args", []string{"queue_id", "pad"}},
	{UpdateQueueArgs{}, "kfd_ioctl_update_queue_args", []string{"ring_base_address", "queue_id", "ring_size", "queue_percentage", "queue_priority"}},
	{SetCUMaskArgs{}, "kfd_ioctl_set_cu_mask_args", []string{"queue_id", "num_cu_mask", "cu_mask_ptr"}},
	{GetQueueWaveStateArgs{}, "kfd_ioctl_get_queue_wave_state_args", []string{"ctl_stack_address", "ctl_stack_used_size", "save_area_used_size", "queue_id", "pad"}},
	{SetMemoryPolicyArgs{}, "kfd_ioctl_set_memory_policy_args", []string{"alternate_aperture_base", "alternate_aperture_size", "gpu_id", "default_policy", "alternate_policy", ""}},
	{GetClockCountersArgs{}, "kfd_ioctl_get_clock_counters_args", []string{"gpu_clock_counter", "cpu_clock_counter", "system_clock_counter", "system_clock_freq", "gpu_id", "pad"}},
	{ProcessDeviceApertures{}, "kfd_process_device_apertures", []string{"lds_base", "lds_limit", "scratch_base", "scratch_limit", "gpuvm_base", "gpuvm_limit", "gpu_id", "pad"}},
	{GetProcessAperturesArgs{}, "kfd_ioctl_get_process_apertures_args", []string{"process_apertures", "num_of_nodes", "pad"}},
	{GetProcessAperturesNewArgs{}, "kfd_ioctl_get_process_apertures_new_args", []string{"kfd_process_device_apertures_ptr", "num_of_nodes", "pad"}},
	{CreateEventArgs{}, "kfd_ioctl_create_event_args", []string{"event_page_offset", "event_trigger_data", "event_type", "auto_reset", "node_id", "event_id", "event_slot_index"}},
	{DestroyEventArgs{}, "kfd_ioctl_destroy_event_args", []string{"event_id", "pad"}},
	{SetEventArgs{}, "kfd_ioctl_set_event_args", []string{"event_id", "pad"}},
	{ResetEventArgs{}, "kfd_ioctl_reset_event_args", []string{"event_id", "pad"}},
	{HSAMemoryExceptionData{}, "kfd_hsa_memory_exception_data", []string{"failure", "va", "gpu_id", "ErrorType"}},
	{HSAHWExceptionData{}, "kfd_hsa_hw_exception_data", []string{"reset_type", "reset_cause", "memory_lost", "gpu_id"}},
	{EventData{}, "kfd_event_data", []string{"memory_exception_data", "kfd_event_data_ext", "event_id", "pad"}},
	{WaitEventsArgs{}, "kfd_ioctl_wait_events_args", []string{"events_ptr", "num_events", "wait_for_all", "timeout", "wait_result"}},
	{SetScratchBackingVAArgs{}, "kfd_ioctl_set_scratch_backing_va_args", []string{"va_addr", "gpu_id", "pad"}},
	{GetTileConfigArgs{}, "kfd_ioctl_get_tile_config_args", []string{"tile_config_ptr", "macro_tile_config_ptr", "num_tile_configs", "num_macro_tile_configs", "gpu_id", "gb_addr_config", "num_banks", "num_ranks"}},
	{SetTrapHandlerArgs{}, "kfd_ioctl_set_trap_handler_args", []string{"tba_addr", "tma_addr", "gpu_id", "pad"}},
	{AcquireVMArgs{}, "kfd_ioctl_acquire_vm_args", []string{"drm_fd", "gpu_id"}},
	{AllocMemoryOfGPUArgs{}, "kfd_ioctl_alloc_memory_of_gpu_args", []string{"va_addr", "size", "handle", "mmap_offset", "gpu_id", "flags"}},
	{FreeMemoryOfGPUArgs{}, "kfd_ioctl_free_memory_of_gpu_args", []string{"handle"}},
	{GetAvailableMemoryArgs{}, "kfd_ioctl_get_available_memory_args", []string{"available", "gpu_id", "pad"}},
	{MapMemoryToGPUArgs{}, "kfd_ioctl_map_memory_to_gpu_args", []string{"handle", "device_ids_array_ptr", "n_devices", "n_success"}},
	{AllocQueueGWSArgs{}, "kfd_ioctl_alloc_queue_gws_args", []string{"queue_id", "num_gws", "first_gws", "pad"}},
	{GetDmabufInfoArgs{}, "kfd_ioctl_get_dmabuf_info_args", []string{"size", "metadata_ptr", "metadata_size", "gpu_id", "flags", "dmabuf_fd"}},
	{ImportDmabufArgs{}, "kfd_ioctl_import_dmabuf_args", []string{"va_addr", "handle", "gpu_id", "dmabuf_fd"}},
	{SMIEventsArgs{}, "kfd_ioctl_smi_events_args", []string{"gpuid", "anon_fd"}},
	{SVMArgs{}, "kfd_ioctl_svm_args", []string{"start_addr", "size", "op", "nattr"}},
	{SVMAttribute{}, "kfd_ioctl_svm_attribute", []string{"type", "value"}},
	{SetXnackModeArgs{}, "kfd_ioctl_set_xnack_mode_args", []string{"xnack_enabled"}},
	{CRIUArgs{}, "kfd_ioctl_criu_args", []string{"devices", "bos", "priv_data", "priv_data_size", "num_devices", "num_bos", "num_objects", "pid", "op"}},
}

// Structs that grew after 1.11: CREATE_QUEUE gained sdma_engine_id and pad in 1.15 (88 -> 96
// bytes); the driver's size rules accept both (kfd_ioctl copies min(usize, ksize)).
var grownSince111 = map[string]uint64{"kfd_ioctl_create_queue_args": 88}

// TestAgainstCHeader compiles a C program against Debian's <linux/kfd_ioctl.h> and <linux/kfd_sysfs.h>
// and compares every size, field offset, command number and sysfs constant with the Go side.
func TestAgainstCHeader(t *testing.T) {
	if _, err := os.Stat("/usr/include/linux/kfd_ioctl.h"); err != nil {
		t.Skip("linux-libc-dev's kfd_ioctl.h is not installed (scripts/install-deps.sh installs it)")
	}
	cc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not installed")
	}
	dir := t.TempDir()
	// kfd_ioctl.h includes <drm/drm.h>, which Debian ships in libdrm-dev under /usr/include/libdrm.
	inc := filepath.Join(dir, "inc")
	os.MkdirAll(inc, 0755)
	os.Symlink("/usr/include/libdrm", filepath.Join(inc, "drm"))
	var c strings.Builder
	c.WriteString("#include <stdio.h>\n#include <stddef.h>\n#include <linux/kfd_ioctl.h>\n#include <linux/kfd_sysfs.h>\nint main(void){\n")
	for _, s := range cStructs {
		fmt.Fprintf(&c, "printf(\"size %s %%zu\\n\", sizeof(struct %s));\n", s.c, s.c)
		for _, f := range s.fields {
			if f != "" {
				fmt.Fprintf(&c, "printf(\"off %s.%s %%zu\\n\", offsetof(struct %s, %s));\n", s.c, f, s.c, f)
			}
		}
	}
	header, _ := os.ReadFile("/usr/include/linux/kfd_ioctl.h")
	for _, io := range Ioctls {
		if strings.Contains(string(header), "AMDKFD_IOC_"+io.Name+"\t") || strings.Contains(string(header), "AMDKFD_IOC_"+io.Name+" ") {
			fmt.Fprintf(&c, "printf(\"cmd %s %%lu\\n\", (unsigned long)AMDKFD_IOC_%s);\n", io.Name, io.Name)
		}
	}
	for _, name := range sysfsNames(t) {
		fmt.Fprintf(&c, "printf(\"const %s %%lld\\n\", (long long)(%s));\n", name, name)
	}
	c.WriteString("return 0;}\n")
	src := filepath.Join(dir, "abi.c")
	os.WriteFile(src, []byte(c.String()), 0644)
	out, err := exec.Command(cc, "-I", inc, "-o", filepath.Join(dir, "abi"), src).CombinedOutput()
	if err != nil {
		t.Fatalf("compile: %v\n%s", err, out)
	}
	out, err = exec.Command(filepath.Join(dir, "abi")).Output()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]uint64{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(l)
		v, _ := strconv.ParseInt(f[2], 10, 64)
		got[f[0]+" "+f[1]] = uint64(v)
	}
	checked := 0
	for _, s := range cStructs {
		typ := reflect.TypeOf(s.goType)
		if want := got["size "+s.c]; grownSince111[s.c] != 0 {
			// The struct grew after Debian's 1.11 header: the old size must be a prefix.
			if want != grownSince111[s.c] {
				t.Errorf("%s: C size %d, expected the 1.11 size %d", s.c, want, grownSince111[s.c])
			}
		} else if uint64(typ.Size()) != want {
			t.Errorf("%s: Go size %d, C %d", s.c, typ.Size(), want)
		}
		if typ.NumField() != len(s.fields) && s.c != "kfd_ioctl_criu_args" {
			t.Errorf("%s: %d Go fields, %d listed", s.c, typ.NumField(), len(s.fields))
		}
		for i, f := range s.fields {
			if f == "" {
				continue
			}
			if want, gotOff := got["off "+s.c+"."+f], uint64(typ.Field(i).Offset); want != gotOff {
				t.Errorf("%s.%s: Go offset %d (%s), C %d", s.c, f, gotOff, typ.Field(i).Name, want)
			}
			checked++
		}
	}
	for _, io := range Ioctls {
		if want, ok := got["cmd "+io.Name]; ok {
			cmd := io.Cmd
			for _, s := range cStructs {
				if old := grownSince111[s.c]; old != 0 && IOCSize(cmd) == uint32(reflect.TypeOf(s.goType).Size()) && io.Name == "CREATE_QUEUE" {
					cmd = cmd&^(IOCSizeMask<<16) | uint32(old)<<16
				}
			}
			if uint64(cmd) != want {
				t.Errorf("AMDKFD_IOC_%s: Go %#x, C %#x", io.Name, io.Cmd, want)
			}
			checked++
		}
	}
	for name, v := range sysfsValues {
		if got["const "+name] != v {
			t.Errorf("%s: Go %#x, C %#x", name, v, got["const "+name])
		}
		checked++
	}
	t.Logf("%d sizes, offsets, commands and constants agree with the C headers", checked)
}

func sysfsNames(t *testing.T) []string {
	var n []string
	for k := range sysfsValues {
		n = append(n, k)
	}
	return n
}

// Ioctls newer than Debian's header: their command words as computed from the 1.18 layout in the
// reference (shared/reference/kfd-abi-and-peers.md section 1.2).
func TestNewerCommands(t *testing.T) {
	for name, want := range map[string]uint32{
		"EXPORT_DMABUF": 0xc0104b24, "RUNTIME_ENABLE": 0xc0104b25, "DBG_TRAP": 0xc0204b26,
		"SVM": 0xc0184b20, "CREATE_QUEUE": 0xc0604b02, "SET_MEMORY_POLICY": 0x40204b04,
		"GET_PROCESS_APERTURES": 0x81904b06, "WAIT_EVENTS": 0xc0184b0c, "CRIU_OP": 0xc0384b22,
	} {
		found := false
		for _, io := range Ioctls {
			if io.Name == name {
				found = true
				if io.Cmd != want {
					t.Errorf("%s: %#x, reference %#x", name, io.Cmd, want)
				}
			}
		}
		if !found {
			t.Errorf("%s missing", name)
		}
	}
	for i, io := range Ioctls {
		if IOCNr(io.Cmd) != io.Nr || IOCType(io.Cmd) != 'K' || (i > 0 && io.Nr != Ioctls[i-1].Nr+1) {
			t.Errorf("%s: table entry inconsistent", io.Name)
		}
	}
}
