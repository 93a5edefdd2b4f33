package abi

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kfdemu/kfdemu/internal/testenv"
)

// debugStructs are the debugger interface's structs (1.13), newer than Debian's header.
var debugStructs = []struct {
	typ reflect.Type
	c   string
}{
	{reflect.TypeFor[RuntimeEnableArgs](), "kfd_ioctl_runtime_enable_args"},
	{reflect.TypeFor[DbgTrapArgs](), "kfd_ioctl_dbg_trap_args"},
	{reflect.TypeFor[RuntimeInfo](), "kfd_runtime_info"},
	{reflect.TypeFor[DbgTrapEnableArgs](), "kfd_ioctl_dbg_trap_enable_args"},
	{reflect.TypeFor[DbgTrapSendRuntimeEventArgs](), "kfd_ioctl_dbg_trap_send_runtime_event_args"},
	{reflect.TypeFor[DbgTrapSetExceptionsEnabledArgs](), "kfd_ioctl_dbg_trap_set_exceptions_enabled_args"},
	{reflect.TypeFor[DbgTrapSetWaveLaunchOverrideArgs](), "kfd_ioctl_dbg_trap_set_wave_launch_override_args"},
	{reflect.TypeFor[DbgTrapSetWaveLaunchModeArgs](), "kfd_ioctl_dbg_trap_set_wave_launch_mode_args"},
	{reflect.TypeFor[DbgTrapSuspendQueuesArgs](), "kfd_ioctl_dbg_trap_suspend_queues_args"},
	{reflect.TypeFor[DbgTrapResumeQueuesArgs](), "kfd_ioctl_dbg_trap_resume_queues_args"},
	{reflect.TypeFor[DbgTrapSetNodeAddressWatchArgs](), "kfd_ioctl_dbg_trap_set_node_address_watch_args"},
	{reflect.TypeFor[DbgTrapClearNodeAddressWatchArgs](), "kfd_ioctl_dbg_trap_clear_node_address_watch_args"},
	{reflect.TypeFor[DbgTrapSetFlagsArgs](), "kfd_ioctl_dbg_trap_set_flags_args"},
	{reflect.TypeFor[DbgTrapQueryDebugEventArgs](), "kfd_ioctl_dbg_trap_query_debug_event_args"},
	{reflect.TypeFor[DbgTrapQueryExceptionInfoArgs](), "kfd_ioctl_dbg_trap_query_exception_info_args"},
	{reflect.TypeFor[DbgTrapSnapshotArgs](), "kfd_ioctl_dbg_trap_queue_snapshot_args"},
	{reflect.TypeFor[QueueSnapshotEntry](), "kfd_queue_snapshot_entry"},
	{reflect.TypeFor[DbgDeviceInfoEntry](), "kfd_dbg_device_info_entry"},
}

// debugValues are the debugger interface's constants, by their C expressions.
var debugValues = map[string]uint64{
	"DEBUG_RUNTIME_STATE_DISABLED": DEBUG_RUNTIME_STATE_DISABLED, "DEBUG_RUNTIME_STATE_ENABLED": DEBUG_RUNTIME_STATE_ENABLED,
	"DEBUG_RUNTIME_STATE_ENABLED_BUSY": DEBUG_RUNTIME_STATE_ENABLED_BUSY, "DEBUG_RUNTIME_STATE_ENABLED_ERROR": DEBUG_RUNTIME_STATE_ENABLED_ERROR,
	"KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK": KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK, "KFD_RUNTIME_ENABLE_MODE_TTMP_SAVE_MASK": KFD_RUNTIME_ENABLE_MODE_TTMP_SAVE_MASK,
	"KFD_RUNTIME_ENABLE_CAPS_SUPPORTS_CORE_DUMP_MASK": KFD_RUNTIME_ENABLE_CAPS_SUPPORTS_CORE_DUMP_MASK,
	"KFD_IOC_DBG_TRAP_ENABLE":                         KFD_IOC_DBG_TRAP_ENABLE, "KFD_IOC_DBG_TRAP_DISABLE": KFD_IOC_DBG_TRAP_DISABLE,
	"KFD_IOC_DBG_TRAP_SEND_RUNTIME_EVENT": KFD_IOC_DBG_TRAP_SEND_RUNTIME_EVENT, "KFD_IOC_DBG_TRAP_SET_EXCEPTIONS_ENABLED": KFD_IOC_DBG_TRAP_SET_EXCEPTIONS_ENABLED,
	"KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_OVERRIDE": KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_OVERRIDE, "KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_MODE": KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_MODE,
	"KFD_IOC_DBG_TRAP_SUSPEND_QUEUES": KFD_IOC_DBG_TRAP_SUSPEND_QUEUES, "KFD_IOC_DBG_TRAP_RESUME_QUEUES": KFD_IOC_DBG_TRAP_RESUME_QUEUES,
	"KFD_IOC_DBG_TRAP_SET_NODE_ADDRESS_WATCH": KFD_IOC_DBG_TRAP_SET_NODE_ADDRESS_WATCH, "KFD_IOC_DBG_TRAP_CLEAR_NODE_ADDRESS_WATCH": KFD_IOC_DBG_TRAP_CLEAR_NODE_ADDRESS_WATCH,
	"KFD_IOC_DBG_TRAP_SET_FLAGS": KFD_IOC_DBG_TRAP_SET_FLAGS, "KFD_IOC_DBG_TRAP_QUERY_DEBUG_EVENT": KFD_IOC_DBG_TRAP_QUERY_DEBUG_EVENT,
	"KFD_IOC_DBG_TRAP_QUERY_EXCEPTION_INFO": KFD_IOC_DBG_TRAP_QUERY_EXCEPTION_INFO, "KFD_IOC_DBG_TRAP_GET_QUEUE_SNAPSHOT": KFD_IOC_DBG_TRAP_GET_QUEUE_SNAPSHOT,
	"KFD_IOC_DBG_TRAP_GET_DEVICE_SNAPSHOT": KFD_IOC_DBG_TRAP_GET_DEVICE_SNAPSHOT,
	"KFD_DBG_TRAP_OVERRIDE_OR":             KFD_DBG_TRAP_OVERRIDE_OR, "KFD_DBG_TRAP_OVERRIDE_REPLACE": KFD_DBG_TRAP_OVERRIDE_REPLACE,
	"KFD_DBG_TRAP_MASK_FP_INVALID": KFD_DBG_TRAP_MASK_FP_INVALID, "KFD_DBG_TRAP_MASK_FP_INPUT_DENORMAL": KFD_DBG_TRAP_MASK_FP_INPUT_DENORMAL,
	"KFD_DBG_TRAP_MASK_FP_DIVIDE_BY_ZERO": KFD_DBG_TRAP_MASK_FP_DIVIDE_BY_ZERO, "KFD_DBG_TRAP_MASK_FP_OVERFLOW": KFD_DBG_TRAP_MASK_FP_OVERFLOW,
	"KFD_DBG_TRAP_MASK_FP_UNDERFLOW": KFD_DBG_TRAP_MASK_FP_UNDERFLOW, "KFD_DBG_TRAP_MASK_FP_INEXACT": KFD_DBG_TRAP_MASK_FP_INEXACT,
	"KFD_DBG_TRAP_MASK_INT_DIVIDE_BY_ZERO": KFD_DBG_TRAP_MASK_INT_DIVIDE_BY_ZERO, "KFD_DBG_TRAP_MASK_DBG_ADDRESS_WATCH": KFD_DBG_TRAP_MASK_DBG_ADDRESS_WATCH,
	"KFD_DBG_TRAP_MASK_DBG_MEMORY_VIOLATION":         KFD_DBG_TRAP_MASK_DBG_MEMORY_VIOLATION,
	"(unsigned)KFD_DBG_TRAP_MASK_TRAP_ON_WAVE_START": KFD_DBG_TRAP_MASK_TRAP_ON_WAVE_START, "(unsigned)KFD_DBG_TRAP_MASK_TRAP_ON_WAVE_END": KFD_DBG_TRAP_MASK_TRAP_ON_WAVE_END,
	"KFD_DBG_TRAP_WAVE_LAUNCH_MODE_NORMAL": KFD_DBG_TRAP_WAVE_LAUNCH_MODE_NORMAL, "KFD_DBG_TRAP_WAVE_LAUNCH_MODE_HALT": KFD_DBG_TRAP_WAVE_LAUNCH_MODE_HALT,
	"KFD_DBG_TRAP_WAVE_LAUNCH_MODE_DEBUG":  KFD_DBG_TRAP_WAVE_LAUNCH_MODE_DEBUG,
	"KFD_DBG_TRAP_ADDRESS_WATCH_MODE_READ": KFD_DBG_TRAP_ADDRESS_WATCH_MODE_READ, "KFD_DBG_TRAP_ADDRESS_WATCH_MODE_NONREAD": KFD_DBG_TRAP_ADDRESS_WATCH_MODE_NONREAD,
	"KFD_DBG_TRAP_ADDRESS_WATCH_MODE_ATOMIC": KFD_DBG_TRAP_ADDRESS_WATCH_MODE_ATOMIC, "KFD_DBG_TRAP_ADDRESS_WATCH_MODE_ALL": KFD_DBG_TRAP_ADDRESS_WATCH_MODE_ALL,
	"KFD_DBG_TRAP_FLAG_SINGLE_MEM_OP": KFD_DBG_TRAP_FLAG_SINGLE_MEM_OP,
	"KFD_DBG_QUEUE_ERROR_MASK":        KFD_DBG_QUEUE_ERROR_MASK, "(unsigned)KFD_DBG_QUEUE_INVALID_MASK": KFD_DBG_QUEUE_INVALID_MASK,
	"KFD_EC_MASK_QUEUE": KFD_EC_MASK_QUEUE, "KFD_EC_MASK_DEVICE": KFD_EC_MASK_DEVICE, "KFD_EC_MASK_PROCESS": KFD_EC_MASK_PROCESS,
	"EC_MAX": EC_MAX,
}

// ecNames are the exception codes, checked one by one.
var ecNames = map[string]uint64{
	"EC_NONE": EC_NONE, "EC_QUEUE_WAVE_ABORT": EC_QUEUE_WAVE_ABORT, "EC_QUEUE_WAVE_TRAP": EC_QUEUE_WAVE_TRAP,
	"EC_QUEUE_WAVE_MATH_ERROR": EC_QUEUE_WAVE_MATH_ERROR, "EC_QUEUE_WAVE_ILLEGAL_INSTRUCTION": EC_QUEUE_WAVE_ILLEGAL_INSTRUCTION,
	"EC_QUEUE_WAVE_MEMORY_VIOLATION": EC_QUEUE_WAVE_MEMORY_VIOLATION, "EC_QUEUE_WAVE_APERTURE_VIOLATION": EC_QUEUE_WAVE_APERTURE_VIOLATION,
	"EC_QUEUE_PACKET_DISPATCH_DIM_INVALID":                EC_QUEUE_PACKET_DISPATCH_DIM_INVALID,
	"EC_QUEUE_PACKET_DISPATCH_GROUP_SEGMENT_SIZE_INVALID": EC_QUEUE_PACKET_DISPATCH_GROUP_SEGMENT_SIZE_INVALID,
	"EC_QUEUE_PACKET_DISPATCH_CODE_INVALID":               EC_QUEUE_PACKET_DISPATCH_CODE_INVALID,
	"EC_QUEUE_PACKET_RESERVED":                            EC_QUEUE_PACKET_RESERVED, "EC_QUEUE_PACKET_UNSUPPORTED": EC_QUEUE_PACKET_UNSUPPORTED,
	"EC_QUEUE_PACKET_DISPATCH_WORK_GROUP_SIZE_INVALID": EC_QUEUE_PACKET_DISPATCH_WORK_GROUP_SIZE_INVALID,
	"EC_QUEUE_PACKET_DISPATCH_REGISTER_INVALID":        EC_QUEUE_PACKET_DISPATCH_REGISTER_INVALID,
	"EC_QUEUE_PACKET_VENDOR_UNSUPPORTED":               EC_QUEUE_PACKET_VENDOR_UNSUPPORTED,
	"EC_QUEUE_PREEMPTION_ERROR":                        EC_QUEUE_PREEMPTION_ERROR, "EC_QUEUE_NEW": EC_QUEUE_NEW,
	"EC_DEVICE_QUEUE_DELETE": EC_DEVICE_QUEUE_DELETE, "EC_DEVICE_MEMORY_VIOLATION": EC_DEVICE_MEMORY_VIOLATION,
	"EC_DEVICE_RAS_ERROR": EC_DEVICE_RAS_ERROR, "EC_DEVICE_FATAL_HALT": EC_DEVICE_FATAL_HALT, "EC_DEVICE_NEW": EC_DEVICE_NEW,
	"EC_PROCESS_RUNTIME": EC_PROCESS_RUNTIME, "EC_PROCESS_DEVICE_REMOVE": EC_PROCESS_DEVICE_REMOVE,
}

// outOfTreeStructs are the argument structs of OutOfTreeIoctls and kfd_memory_range.
func outOfTreeStructs() []struct {
	typ reflect.Type
	c   string
} {
	l := []struct {
		typ reflect.Type
		c   string
	}{{reflect.TypeFor[MemoryRange](), "kfd_memory_range"}}
	for _, io := range OutOfTreeIoctls {
		l = append(l, struct {
			typ reflect.Type
			c   string
		}{io.Arg, io.C})
	}
	return l
}

// TestAgainstROCTHeader compiles a C program against the kfd_ioctl.h (1.16) that libhsakmt 6.2.4
// ships (taken from ../shared/kfdtest's tarball) and compares the debugger interface's sizes,
// field offsets, command words and constants with the Go side.
func TestAgainstROCTHeader(t *testing.T) {
	tarball := testenv.Shared(t, "kfdtest/roct-6.2.4.tar.gz")
	cc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not installed")
	}
	dir := t.TempDir()
	if out, err := exec.Command("tar", "-xzf", tarball, "-C", dir, "roct-6.2.4/include/hsakmt/linux/kfd_ioctl.h").CombinedOutput(); err != nil {
		t.Fatalf("tar: %v\n%s", err, out)
	}
	inc := filepath.Join(dir, "inc")
	os.MkdirAll(filepath.Join(inc, "linux"), 0755)
	os.Symlink("/usr/include/libdrm", filepath.Join(inc, "libdrm"))
	os.Symlink("/usr/include/libdrm", filepath.Join(inc, "drm"))
	os.Rename(filepath.Join(dir, "roct-6.2.4/include/hsakmt/linux/kfd_ioctl.h"), filepath.Join(inc, "linux", "kfd_ioctl.h"))
	var c strings.Builder
	c.WriteString("#include <stdio.h>\n#include <stddef.h>\n#include \"linux/kfd_ioctl.h\"\nint main(void){\n")
	for _, s := range debugStructs {
		fmt.Fprintf(&c, "printf(\"size %s %%zu\\n\", sizeof(struct %s));\n", s.c, s.c)
		for i := 0; i < s.typ.NumField(); i++ {
			if f := s.typ.Field(i).Tag.Get("c"); f != "" {
				fmt.Fprintf(&c, "printf(\"off %s.%s %%zu\\n\", offsetof(struct %s, %s));\n", s.c, f, s.c, f)
			}
		}
	}
	for _, s := range outOfTreeStructs() {
		fmt.Fprintf(&c, "printf(\"size %s %%zu\\n\", sizeof(struct %s));\n", s.c, s.c)
		for i := 0; i < s.typ.NumField(); i++ {
			if f := s.typ.Field(i).Tag.Get("c"); f != "" {
				fmt.Fprintf(&c, "printf(\"off %s.%s %%zu\\n\", offsetof(struct %s, %s));\n", s.c, f, s.c, f)
			}
		}
	}
	for _, io := range OutOfTreeIoctls {
		fmt.Fprintf(&c, "printf(\"cmd %s %%lu\\n\", (unsigned long)AMDKFD_IOC_%s);\n", io.Name, io.Name)
	}
	fmt.Fprintf(&c, "printf(\"const KFD_CROSS_MEMORY_RW_BIT %%llu\\n\", (unsigned long long)KFD_CROSS_MEMORY_RW_BIT);\n")
	fmt.Fprintf(&c, "printf(\"const AMDKFD_COMMAND_START_2 %%llu\\n\", (unsigned long long)AMDKFD_COMMAND_START_2);\n")
	fmt.Fprintf(&c, "printf(\"const AMDKFD_COMMAND_END_2 %%llu\\n\", (unsigned long long)AMDKFD_COMMAND_END_2);\n")
	fmt.Fprintf(&c, "printf(\"size kfd_ioctl_dbg_trap_device_snapshot_args %%zu\\n\", sizeof(struct kfd_ioctl_dbg_trap_device_snapshot_args));\n")
	fmt.Fprintf(&c, "printf(\"off kfd_ioctl_dbg_trap_device_snapshot_args.num_devices %%zu\\n\", offsetof(struct kfd_ioctl_dbg_trap_device_snapshot_args, num_devices));\n")
	for _, name := range []string{"RUNTIME_ENABLE", "DBG_TRAP"} {
		fmt.Fprintf(&c, "printf(\"cmd %s %%lu\\n\", (unsigned long)AMDKFD_IOC_%s);\n", name, name)
	}
	consts := map[string]uint64{}
	for k, v := range debugValues {
		consts[k] = v
	}
	for k, v := range ecNames {
		consts[k] = v
		if v != EC_NONE {
			consts["KFD_EC_MASK("+k+")"] = KFD_EC_MASK(uint(v))
		}
	}
	for k := range consts {
		fmt.Fprintf(&c, "printf(\"const %%s %%llu\\n\", %q, (unsigned long long)(%s));\n", k, k)
	}
	c.WriteString("return 0;}\n")
	got := runCValues(t, cc, c.String(), "-I", inc)
	checked := 0
	check := func(key string, want uint64) {
		t.Helper()
		if g, ok := got[key]; !ok || g != want {
			t.Errorf("%s: C %d (present %v), Go %d", key, g, ok, want)
		}
		checked++
	}
	for _, s := range debugStructs {
		check("size "+s.c, uint64(s.typ.Size()))
		for i := 0; i < s.typ.NumField(); i++ {
			if f := s.typ.Field(i).Tag.Get("c"); f != "" {
				check("off "+s.c+"."+f, uint64(s.typ.Field(i).Offset))
			}
		}
	}
	check("size kfd_ioctl_dbg_trap_device_snapshot_args", uint64(reflect.TypeFor[DbgTrapSnapshotArgs]().Size()))
	check("off kfd_ioctl_dbg_trap_device_snapshot_args.num_devices", 16)
	for _, io := range Ioctls {
		if io.Name == "RUNTIME_ENABLE" || io.Name == "DBG_TRAP" {
			check("cmd "+io.Name, uint64(io.Cmd))
		}
	}
	for k, v := range consts {
		check("const "+k, v)
	}
	for _, s := range outOfTreeStructs() {
		check("size "+s.c, uint64(s.typ.Size()))
		for i := 0; i < s.typ.NumField(); i++ {
			if f := s.typ.Field(i).Tag.Get("c"); f != "" {
				check("off "+s.c+"."+f, uint64(s.typ.Field(i).Offset))
			}
		}
	}
	for _, io := range OutOfTreeIoctls {
		check("cmd "+io.Name, uint64(io.Cmd))
	}
	check("const KFD_CROSS_MEMORY_RW_BIT", KFD_CROSS_MEMORY_RW_BIT)
	check("const AMDKFD_COMMAND_START_2", AMDKFD_COMMAND_START_2)
	check("const AMDKFD_COMMAND_END_2", AMDKFD_COMMAND_END_2)
	t.Logf("%d sizes, offsets, commands and constants agree with libhsakmt 6.2.4's kfd_ioctl.h", checked)
}
