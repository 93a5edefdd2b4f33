package kfd

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/kfdemu/kfdemu/kfd/abi"
	"github.com/kfdemu/kfdemu/kfd/svm"
	"golang.org/x/sys/unix"
)

// SMI events (kfd_smi_events.c, KFD 1.10's profiler events). SMI_EVENTS gives the caller an fd on
// which it writes a 64-bit mask of KFD_SMI_EVENT_MASK_FROM_INDEX bits and reads text lines
// "%x <event fields>\n", one per event of that GPU: its own process's, or every process's when it
// was opened with CAP_SYS_ADMIN and the mask has KFD_SMI_EVENT_ALL_PROCESS. The events emitted are
// the SVM manager's (migrations, retry faults, unmaps from the GPU, queue evictions and restores,
// through svm.Config.OnEvent) and GPU memory faults (VMFAULT); the model has no thermal
// throttling or GPU reset.
//
// The fd is one end of a Unix stream socket whose other end the driver writes and reads; only a
// caller under kfdemu exec's seccomp supervisor can receive it (Installer), others get EOPNOTSUPP.
// Deviations (README): fstat shows a socket, not an anon inode; a read of an empty fd fails with
// EAGAIN as amdkfd's does because the client's end is O_NONBLOCK, which F_GETFL shows; a write of
// fewer than 8 bytes is not refused with EFAULT (the driver waits for the rest of the mask); the
// fifo is the socket's buffer, not amdkfd's 1024-byte kfifo (events are dropped when it is full,
// as there, but later).

// smiClient is kfd_smi_client.
type smiClient struct {
	gpu    uint32
	tgid   int
	suser  bool
	events atomic.Uint64
	conn   *os.File        // the driver's end
	raw    syscall.RawConn // conn's, for the nonblocking reads and writes

	mu   sync.Mutex // guards the mask bytes read from conn: smiServe's and smiEvent's drains
	part [8]byte    // a mask being written
	n    int        // bytes of part received
}

// drain takes every mask byte the client has written so far (a nonblocking read of fd, conn's
// descriptor) and reports whether the client's end is closed. smiEvent drains before it looks at
// the mask, so a mask written before the event is emitted applies to it, as amdkfd's
// kfd_smi_ev_write sets client->events before the write returns.
func (c *smiClient) drain(fd int) (closed bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		k, err := unix.Read(fd, c.part[c.n:])
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return false, err
		case err != nil || k == 0:
			return true, err
		}
		if c.n += k; c.n == len(c.part) {
			c.events.Store(binary.LittleEndian.Uint64(c.part[:]))
			c.n = 0
		}
	}
}

// smiHub holds every client, by GPU.
type smiHub struct {
	mu      sync.Mutex
	clients map[uint32][]*smiClient
	n       atomic.Int32 // clients: emitters return at once when 0
}

// enabled is kfd_smi_ev_enabled: pid 0 events go to every client that enabled them.
func (c *smiClient) enabled(pid int, event uint) bool {
	ev := c.events.Load()
	if pid != 0 && c.tgid != pid && !(c.suser && ev&abi.KFD_SMI_EVENT_MASK_FROM_INDEX(abi.KFD_SMI_EVENT_ALL_PROCESS) != 0) {
		return false
	}
	return ev&abi.KFD_SMI_EVENT_MASK_FROM_INDEX(event) != 0
}

// smiEvent is kfd_smi_event_add: "%x " and the event's fields to every client of gpu that wants
// it, dropped for a client whose socket is full.
func (d *Driver) smiEvent(gpu uint32, pid int, event uint, format string, args ...any) {
	if d.smi.n.Load() == 0 {
		return
	}
	d.smi.mu.Lock()
	clients := d.smi.clients[gpu]
	d.smi.mu.Unlock()
	var msg []byte
	for _, c := range clients {
		c.raw.Control(func(fd uintptr) { c.drain(int(fd)) })
		if !c.enabled(pid, event) {
			continue
		}
		if msg == nil {
			msg = fmt.Appendf(strconv.AppendUint(nil, uint64(event), 16), " "+format, args...)
			if len(msg) > abi.KFD_SMI_EVENT_MSG_SIZE-1 {
				msg = msg[:abi.KFD_SMI_EVENT_MSG_SIZE-1] // snprintf into KFD_SMI_EVENT_MSG_SIZE
			}
		}
		c.raw.Write(func(fd uintptr) bool {
			unix.Write(int(fd), msg) // nonblocking: a full socket drops the event, as a full kfifo does
			return true
		})
	}
}

// bootNS is ktime_get_boottime_ns.
func bootNS() int64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts)
	return ts.Nano()
}

// smiEvents is kfd_ioctl_smi_events with kfd_smi_event_open.
func smiEvents(p *Process, c Caller, a *abi.SMIEventsArgs) syscall.Errno {
	p.mu.Lock()
	pd := p.pdds[a.GPUID]
	p.mu.Unlock()
	if pd == nil {
		return syscall.EINVAL
	}
	in, ok := c.(Installer)
	if !ok {
		return syscall.EOPNOTSUPP
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		return syscall.ENOMEM
	}
	mine, theirs := os.NewFile(uintptr(fds[0]), "smi"), os.NewFile(uintptr(fds[1]), "smi-client")
	defer theirs.Close()
	raw, err := mine.SyscallConn()
	if err != nil {
		mine.Close()
		return syscall.ENOMEM
	}
	fd, err := in.InstallFile(theirs, false) // anon_inode_getfd(..., O_RDWR): no O_CLOEXEC
	if err != nil {
		mine.Close()
		if errors.Is(err, ErrNoInstall) {
			p.d.log.Info("SMI_EVENTS refused: a FUSE reply cannot install an fd; run the client under kfdemu exec", "tgid", p.tgid)
			return syscall.EOPNOTSUPP
		}
		p.d.log.Warn("SMI fd not installed", "tgid", p.tgid, "err", err)
		return syscall.EMFILE
	}
	cl := &smiClient{gpu: a.GPUID, tgid: p.tgid, suser: capSysAdmin(p.tgid), conn: mine, raw: raw}
	d := p.d
	d.smi.mu.Lock()
	if d.smi.clients == nil {
		d.smi.clients = map[uint32][]*smiClient{}
	}
	d.smi.clients[a.GPUID] = append(d.smi.clients[a.GPUID], cl)
	d.smi.n.Add(1)
	d.smi.mu.Unlock()
	go d.smiServe(cl)
	a.AnonFD = uint32(fd)
	return 0
}

// smiServe takes the masks the client writes (kfd_smi_ev_write: the first 8 bytes of a write) and
// drops the client when every fd of its end is closed.
func (d *Driver) smiServe(c *smiClient) {
	c.raw.Read(func(fd uintptr) bool {
		closed, _ := c.drain(int(fd))
		return closed // false: the poller waits until the client writes or closes
	})
	d.smi.mu.Lock()
	l := d.smi.clients[c.gpu]
	for i, x := range l {
		if x == c {
			d.smi.clients[c.gpu] = append(l[:i:i], l[i+1:]...)
			d.smi.n.Add(-1)
			break
		}
	}
	d.smi.mu.Unlock()
	c.conn.Close()
}

// closeSMI ends every client (driver shutdown).
func (d *Driver) closeSMI() {
	d.smi.mu.Lock()
	defer d.smi.mu.Unlock()
	for _, l := range d.smi.clients {
		for _, c := range l {
			c.conn.Close()
		}
	}
}

// capSysAdmin is capable(CAP_SYS_ADMIN) of process tgid: bit 21 of CapEff in /proc/PID/status.
func capSysAdmin(tgid int) bool {
	caps, err := strconv.ParseUint(procStatus(tgid, "CapEff"), 16, 64)
	return err == nil && caps&(1<<unix.CAP_SYS_ADMIN) != 0
}

// svmSMI turns the SVM manager's events of process tgid (GPUs by index in gpus) into SMI events,
// with kfd_smi_events.c's formats (Linux 6.x; pages and page counts in hex, node ids as gpu_id).
func (d *Driver) svmSMI(tgid int, gpus []uint32) func(svm.Event) {
	const shift = 12
	gpuAt := func(i int) uint32 {
		if i >= 0 && i < len(gpus) {
			return gpus[i]
		}
		return 0
	}
	return func(e svm.Event) {
		if d.smi.n.Load() == 0 {
			return
		}
		now := bootNS()
		switch e.Kind {
		case svm.EventFault:
			rw, mu := byte('R'), byte('U')
			if e.Write {
				rw = 'W'
			}
			if e.Migrated {
				mu = 'M'
			}
			g := gpuAt(e.GPU)
			d.smiEvent(g, tgid, abi.KFD_SMI_EVENT_PAGE_FAULT_START, "%d -%d @%x(%x) %c\n", now, tgid, e.Addr>>shift, g, rw)
			d.smiEvent(g, tgid, abi.KFD_SMI_EVENT_PAGE_FAULT_END, "%d -%d @%x(%x) %c\n", bootNS(), tgid, e.Addr>>shift, g, mu)
		case svm.EventMigrate:
			trig := abi.KFD_MIGRATE_TRIGGER_TTM_EVICTION
			switch e.Trigger {
			case svm.TriggerPrefetch:
				trig = abi.KFD_MIGRATE_TRIGGER_PREFETCH
			case svm.TriggerPageFaultGPU:
				trig = abi.KFD_MIGRATE_TRIGGER_PAGEFAULT_GPU
			}
			g := gpuAt(e.GPU)
			d.smiEvent(g, tgid, abi.KFD_SMI_EVENT_MIGRATE_START, "%d -%d @%x(%x) %x->%x %x:%x %d\n", now, tgid,
				e.Start>>shift, e.Size>>shift, e.From, e.To, e.Prefetch, e.Preferred, trig)
			d.smiEvent(g, tgid, abi.KFD_SMI_EVENT_MIGRATE_END, "%d -%d @%x(%x) %x->%x %d\n", bootNS(), tgid,
				e.Start>>shift, e.Size>>shift, e.From, e.To, trig)
		case svm.EventUnmap:
			trig := abi.KFD_SVM_UNMAP_TRIGGER_MMU_NOTIFY // NO_ACCESS (kfdemu unmaps at once) and others
			switch e.Trigger {
			case svm.TriggerMMUNotifyMigrate:
				trig = abi.KFD_SVM_UNMAP_TRIGGER_MMU_NOTIFY_MIGRATE
			case svm.TriggerUnmapFromCPU:
				trig = abi.KFD_SVM_UNMAP_TRIGGER_UNMAP_FROM_CPU
			}
			g := gpuAt(e.GPU)
			d.smiEvent(g, tgid, abi.KFD_SMI_EVENT_UNMAP_FROM_GPU, "%d -%d @%x(%x) %x %d\n", now, tgid,
				e.Start>>shift, e.Size>>shift, g, trig)
		case svm.EventEvict:
			// kfd_process_evict_queues, then svm_range_restore_work's restore, on every GPU.
			for _, g := range gpus {
				d.smiEvent(g, tgid, abi.KFD_SMI_EVENT_QUEUE_EVICTION, "%d -%d %x %d\n", now, tgid, g, abi.KFD_QUEUE_EVICTION_TRIGGER_SVM)
			}
			for _, g := range gpus {
				d.smiEvent(g, tgid, abi.KFD_SMI_EVENT_QUEUE_RESTORE, "%d -%d %x\n", bootNS(), tgid, g)
			}
		}
	}
}

// smiVMFault is kfd_smi_event_update_vmfault: "pid:task name" to every client of the GPU.
func (d *Driver) smiVMFault(gpu uint32, tgid int) {
	if d.smi.n.Load() == 0 {
		return
	}
	comm, _ := os.ReadFile("/proc/" + strconv.Itoa(tgid) + "/comm")
	d.smiEvent(gpu, 0, abi.KFD_SMI_EVENT_VMFAULT, "%x:%s\n", tgid, strings.TrimSpace(string(comm)))
}
