package abi

import (
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// nested are the structs of <linux/kfd_ioctl.h> that are not ioctl arguments themselves: members
// of argument structs and the arrays arguments point to. The argument structs come from Ioctls.
var nested = []struct {
	typ reflect.Type
	c   string
}{
	{reflect.TypeFor[ProcessDeviceApertures](), "kfd_process_device_apertures"},
	{reflect.TypeFor[MemoryExceptionFailure](), "kfd_memory_exception_failure"},
	{reflect.TypeFor[HSAMemoryExceptionData](), "kfd_hsa_memory_exception_data"},
	{reflect.TypeFor[HSAHWExceptionData](), "kfd_hsa_hw_exception_data"},
	{reflect.TypeFor[EventData](), "kfd_event_data"},
	{reflect.TypeFor[SVMAttribute](), "kfd_ioctl_svm_attribute"},
}

// cStruct is a Go type with its C struct name and the C names of its fields in order (from the c
// tags; "" for a field the C side has no name for).
type cStruct struct {
	typ    reflect.Type
	c      string
	fields []string
}

// cStructs lists the argument structs of Ioctls and then the nested ones. Every field must carry
// a c tag.
func cStructs(t *testing.T) []cStruct {
	var out []cStruct
	add := func(typ reflect.Type, c string) {
		s := cStruct{typ: typ, c: c}
		for i := 0; i < typ.NumField(); i++ {
			name, ok := typ.Field(i).Tag.Lookup("c")
			if !ok {
				t.Errorf("%s.%s has no c tag", typ.Name(), typ.Field(i).Name)
			}
			s.fields = append(s.fields, name)
		}
		out = append(out, s)
	}
	for _, io := range Ioctls {
		add(io.Arg, io.C)
	}
	for _, n := range nested {
		add(n.typ, n.c)
	}
	return out
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
	header, _ := os.ReadFile("/usr/include/linux/kfd_ioctl.h")
	// Structs newer than the header (1.12+: EXPORT_DMABUF, RUNTIME_ENABLE, DBG_TRAP) are left out.
	var structs []cStruct
	for _, s := range cStructs(t) {
		if strings.Contains(string(header), "struct "+s.c+" {") {
			structs = append(structs, s)
		} else {
			t.Logf("struct %s: newer than the header, not compared", s.c)
		}
	}
	var c strings.Builder
	c.WriteString("#include <stdio.h>\n#include <stddef.h>\n#include <linux/kfd_ioctl.h>\n#include <linux/kfd_sysfs.h>\nint main(void){\n")
	for _, s := range structs {
		fmt.Fprintf(&c, "printf(\"size %s %%zu\\n\", sizeof(struct %s));\n", s.c, s.c)
		for _, f := range s.fields {
			if f != "" {
				fmt.Fprintf(&c, "printf(\"off %s.%s %%zu\\n\", offsetof(struct %s, %s));\n", s.c, f, s.c, f)
			}
		}
	}
	for _, io := range Ioctls {
		if strings.Contains(string(header), "AMDKFD_IOC_"+io.Name+"\t") || strings.Contains(string(header), "AMDKFD_IOC_"+io.Name+" ") {
			fmt.Fprintf(&c, "printf(\"cmd %s %%lu\\n\", (unsigned long)AMDKFD_IOC_%s);\n", io.Name, io.Name)
		}
	}
	for _, name := range sysfsNames(t) {
		fmt.Fprintf(&c, "printf(\"const %s %%lld\\n\", (long long)(%s));\n", name, name)
	}
	c.WriteString("return 0;}\n")
	got := runCValues(t, cc, c.String(), "-I", inc)
	checked := 0
	for _, s := range structs {
		typ := s.typ
		if want := got["size "+s.c]; grownSince111[s.c] != 0 {
			// The struct grew after Debian's 1.11 header: the old size must be a prefix.
			if want != grownSince111[s.c] {
				t.Errorf("%s: C size %d, expected the 1.11 size %d", s.c, want, grownSince111[s.c])
			}
		} else if uint64(typ.Size()) != want {
			t.Errorf("%s: Go size %d, C %d", s.c, typ.Size(), want)
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
			if old := grownSince111[io.C]; old != 0 {
				cmd = cmd&^(IOCSizeMask<<16) | uint32(old)<<16
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
}

// TestIoctlTable checks the table's own invariants: numbers consecutive from AMDKFD_COMMAND_START
// to AMDKFD_COMMAND_END, command words that encode them, argument structs without implicit
// padding (their encoding/binary size is their memory size, the command's size), and IoctlOf.
func TestIoctlTable(t *testing.T) {
	if len(Ioctls) != AMDKFD_COMMAND_END-AMDKFD_COMMAND_START {
		t.Errorf("%d entries for [%#x, %#x)", len(Ioctls), AMDKFD_COMMAND_START, AMDKFD_COMMAND_END)
	}
	for i, io := range Ioctls {
		if io.Nr != AMDKFD_COMMAND_START+uint32(i) || IOCNr(io.Cmd) != io.Nr || IOCType(io.Cmd) != 'K' {
			t.Errorf("%s: table entry inconsistent", io.Name)
		}
		if n := binary.Size(reflect.New(io.Arg).Interface()); n != int(IOCSize(io.Cmd)) || n != int(io.Arg.Size()) {
			t.Errorf("%s: binary size %d, memory size %d, command size %d", io.Name, n, io.Arg.Size(), IOCSize(io.Cmd))
		}
		if got, ok := IoctlOf(io.Nr); !ok || got.Name != io.Name {
			t.Errorf("IoctlOf(%#x) = %v, %v", io.Nr, got.Name, ok)
		}
	}
	for _, nr := range []uint32{0, AMDKFD_COMMAND_END, 0x7f, 0x82, 0x84, 0x85, AMDKFD_COMMAND_END_2, 0xff} {
		if _, ok := IoctlOf(nr); ok {
			t.Errorf("IoctlOf(%#x) found an entry", nr)
		}
	}
	// The out-of-tree commands: in their range, ascending, the command words Debian's libhsakmt
	// 5.2.3 (libhsakmt.so.1.0.6) loads before its ioctl calls (fmm_register_shared_memory,
	// fmm_share_memory, hsaKmtProcessVMRead/Write), which are also those of ROCT 6.2.4's header
	// (debug_c_test.go).
	want := map[string]uint32{"IPC_IMPORT_HANDLE": 0xc0304b80, "IPC_EXPORT_HANDLE": 0xc0204b81, "CROSS_MEMORY_COPY": 0xc0304b83}
	last := uint32(0)
	for _, io := range OutOfTreeIoctls {
		if io.Nr < AMDKFD_COMMAND_START_2 || io.Nr >= AMDKFD_COMMAND_END_2 || io.Nr <= last || IOCNr(io.Cmd) != io.Nr || IOCType(io.Cmd) != 'K' {
			t.Errorf("%s: out-of-tree entry inconsistent", io.Name)
		}
		last = io.Nr
		if n := binary.Size(reflect.New(io.Arg).Interface()); n != int(IOCSize(io.Cmd)) || n != int(io.Arg.Size()) {
			t.Errorf("%s: binary size %d, memory size %d, command size %d", io.Name, n, io.Arg.Size(), IOCSize(io.Cmd))
		}
		if io.Cmd != want[io.Name] {
			t.Errorf("AMDKFD_IOC_%s = %#x, libhsakmt 5.2.3 sends %#x", io.Name, io.Cmd, want[io.Name])
		}
		if got, ok := IoctlOf(io.Nr); !ok || got.Name != io.Name {
			t.Errorf("IoctlOf(%#x) = %v, %v", io.Nr, got.Name, ok)
		}
	}
	if len(OutOfTreeIoctls) != len(want) {
		t.Errorf("%d out-of-tree commands", len(OutOfTreeIoctls))
	}
}
