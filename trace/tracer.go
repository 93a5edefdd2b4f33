package trace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/ringbuf"
	"github.com/cilium/ebpf/rlimit"
	"github.com/kfdemu/kfdemu/internal/tracefs"
	"golang.org/x/sys/unix"
)

// Call is one finished ioctl of a traced process.
type Call struct {
	Start    time.Duration // CLOCK_MONOTONIC at entry
	Duration time.Duration
	Pid, Tid int
	FD       int
	Cmd      uint32
	ArgPtr   uint64
	Ret      int64  // >= 0 result, < 0 -errno
	Arg      []byte // the argument struct as it was at exit (nil if unreadable)
	Extra    []byte // pointed-to array (WAIT_EVENTS events, MAP/UNMAP device ids)
	Device   string // what the fd refers to (path), "" if it could not be resolved
}

// Errno returns the call's errno, or 0.
func (c *Call) Errno() unix.Errno {
	if c.Ret < 0 {
		return unix.Errno(-c.Ret)
	}
	return 0
}

// Options configure a Tracer.
type Options struct {
	// AllFDs keeps calls on any fd with a kfd ('K') or DRM ('d') ioctl type; by default only calls on
	// /dev/kfd, render nodes and kfdemu mounts are kept. Tests use it with ordinary files.
	AllFDs bool
}

// Tracer holds the loaded programs and their attachments.
type Tracer struct {
	opts  Options
	obj   objects
	links []link.Link
	rd    *ringbuf.Reader
	paths map[[2]int]string // (pid, fd) -> device path last resolved (Read's goroutine only)
}

// ErrUnavailable wraps every reason the kernel refuses the tracer.
var ErrUnavailable = errors.New("trace: eBPF tracing unavailable")

func unavailable(what string, err error) error {
	hint := "kfdemu trace needs root (CAP_BPF, CAP_PERFMON and CAP_SYS_ADMIN), a kernel with BPF ring buffers (>= 5.8) " +
		"and the syscalls tracepoints (CONFIG_FTRACE_SYSCALLS), and tracefs mounted or mountable at /sys/kernel/tracing"
	return fmt.Errorf("%w: %s: %v (%s)", ErrUnavailable, what, err, hint)
}

// Open loads and attaches the programs. Processes are traced once added with Add; their children
// (fork, clone) are added by the kernel side.
func Open(opts Options) (*Tracer, error) {
	if err := tracefs.Ensure("sys_enter_ioctl"); err != nil {
		return nil, unavailable("tracefs", err)
	}
	if err := rlimit.RemoveMemlock(); err != nil {
		return nil, unavailable("raise RLIMIT_MEMLOCK", err)
	}
	t := &Tracer{opts: opts}
	ok := false
	defer func() {
		if !ok {
			t.Close()
		}
	}()
	ps, is, es := mapSpecs()
	var err error
	if t.obj.pids, err = ebpf.NewMap(ps); err != nil {
		return nil, unavailable("create map", err)
	}
	if t.obj.inflight, err = ebpf.NewMap(is); err != nil {
		return nil, unavailable("create map", err)
	}
	if t.obj.events, err = ebpf.NewMap(es); err != nil {
		return nil, unavailable("create ring buffer", err)
	}
	if t.obj.fork, err = newProg("kfdemu_fork", forkProg(t.obj.pids)); err != nil {
		return nil, err
	}
	if t.obj.enter, err = newProg("kfdemu_enter", enterProg(t.obj.pids, t.obj.inflight)); err != nil {
		return nil, err
	}
	if t.obj.exit, err = newProg("kfdemu_exit", exitProg(t.obj.inflight, t.obj.events)); err != nil {
		return nil, err
	}
	for _, a := range []struct {
		group, name string
		prog        *ebpf.Program
	}{
		{"sched", "sched_process_fork", t.obj.fork},
		{"syscalls", "sys_enter_ioctl", t.obj.enter},
		{"syscalls", "sys_exit_ioctl", t.obj.exit},
	} {
		l, err := link.Tracepoint(a.group, a.name, a.prog, nil)
		if err != nil {
			return nil, unavailable("attach tracepoint "+a.group+"/"+a.name, err)
		}
		t.links = append(t.links, l)
	}
	if t.rd, err = ringbuf.NewReader(t.obj.events); err != nil {
		return nil, unavailable("open ring buffer", err)
	}
	ok = true
	return t, nil
}

func newProg(name string, insns asm.Instructions) (*ebpf.Program, error) {
	p, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Name: name, Type: ebpf.TracePoint, License: "GPL", Instructions: insns,
	})
	if err != nil {
		return nil, unavailable("load program "+name, err)
	}
	return p, nil
}

// Add traces process pid (its tgid) and, from then on, the children it creates.
func (t *Tracer) Add(pid int) error {
	return t.obj.pids.Put(uint32(pid), uint8(1))
}

// Close detaches everything; a blocked Read returns ErrClosed.
func (t *Tracer) Close() error {
	if t.rd != nil {
		t.rd.Close()
	}
	for _, l := range t.links {
		l.Close()
	}
	for _, p := range []*ebpf.Program{t.obj.fork, t.obj.enter, t.obj.exit} {
		if p != nil {
			p.Close()
		}
	}
	for _, m := range []*ebpf.Map{t.obj.pids, t.obj.inflight, t.obj.events} {
		if m != nil {
			m.Close()
		}
	}
	return nil
}

// ErrClosed is returned by Read after Close.
var ErrClosed = ringbuf.ErrClosed

// SetDeadline makes a blocked Read return os.ErrDeadlineExceeded at t.
func (t *Tracer) SetDeadline(d time.Time) { t.rd.SetDeadline(d) }

// Read returns the next kept call, blocking until one arrives.
func (t *Tracer) Read() (Call, error) {
	for {
		rec, err := t.rd.Read()
		if err != nil {
			return Call{}, err
		}
		c, err := parseRecord(rec.RawSample)
		if err != nil {
			continue
		}
		// The fd is resolved when the record is read, which can be after the process closed it
		// or exited: fall back to the path it had before, then to the ioctl type ('K' is
		// amdkfd's, 'd' DRM's) so a short-lived client's calls are not lost.
		key := [2]int{c.Pid, c.FD}
		if c.Device = fdPath(c.Pid, c.FD); c.Device != "" {
			if t.paths == nil {
				t.paths = map[[2]int]string{}
			}
			t.paths[key] = c.Device
		} else {
			c.Device = t.paths[key]
		}
		if t.opts.AllFDs || isGPUDevice(c.Device) || c.Device == "" && gpuIoctlType(c.Cmd) {
			return c, nil
		}
	}
}

func parseRecord(b []byte) (Call, error) {
	if len(b) < recSize {
		return Call{}, fmt.Errorf("trace: short record (%d bytes)", len(b))
	}
	le := binary.LittleEndian
	pt := le.Uint64(b[offPidTgid:])
	c := Call{
		Start:    time.Duration(le.Uint64(b[offStart:])),
		Duration: time.Duration(le.Uint64(b[offDur:])),
		Pid:      int(pt >> 32),
		Tid:      int(uint32(pt)),
		FD:       int(int32(le.Uint64(b[offFD:]))),
		Cmd:      uint32(le.Uint64(b[offCmd:])),
		ArgPtr:   le.Uint64(b[offArg:]),
		Ret:      int64(le.Uint64(b[offRet:])),
	}
	if n := le.Uint32(b[offSize:]); le.Uint32(b[offFlags:])&flagArgFault == 0 && n <= maxArg {
		c.Arg = append([]byte(nil), b[offData:offData+int(n)]...)
	}
	if n := le.Uint32(b[offExtraLen:]); n > 0 && n <= maxExtra {
		c.Extra = append([]byte(nil), b[offExtra:offExtra+int(n)]...)
	}
	return c, nil
}

// fdPath resolves what a traced fd refers to. The record is read right after the call returns, so the
// fd is normally still open; a process that closed it already yields "".
func fdPath(pid, fd int) string {
	p, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%d", pid, fd))
	if err != nil {
		return ""
	}
	// kfdemu gives each process its own inode for a device name, so another process's lookup
	// unhashes the dentry an open file holds and /proc shows it as deleted.
	return strings.TrimSuffix(p, " (deleted)")
}

// gpuIoctlType reports whether cmd is of amdkfd's ('K') or DRM's ('d') ioctl type.
func gpuIoctlType(cmd uint32) bool { t := cmd >> 8 & 0xff; return t == 'K' || t == 'd' }

// isGPUDevice keeps the real device nodes and kfdemu's (MNT/dev/kfd, MNT/dev/dri/renderD*).
func isGPUDevice(path string) bool {
	return strings.HasSuffix(path, "/dev/kfd") || strings.Contains(path, "/dev/dri/renderD")
}
