package kfd

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/kfdemu/kfdemu/gpu/aql"
	"github.com/kfdemu/kfdemu/gpu/shader"
	"github.com/kfdemu/kfdemu/kfd/abi"
	"github.com/kfdemu/kfdemu/topology"
	"golang.org/x/sys/unix"
)

// The debugger interface (KFD 1.13): RUNTIME_ENABLE's handshake and DBG_TRAP (kfd_chardev.c
// kfd_ioctl_runtime_enable and kfd_ioctl_set_debug_trap, kfd_debug.c). A debugger attaches to a
// process it ptrace-attached (or to itself) with DBG_TRAP_ENABLE, giving a file it polls; the
// driver records exceptions at three levels (the process, each device, each queue: kfd_dbg_ev_raise)
// and writes one byte '.' to that file for each raise the debugger subscribed to
// (exception_enable_mask). QUERY_DEBUG_EVENT, QUERY_EXCEPTION_INFO and the snapshots read and clear
// them; SUSPEND/RESUME_QUEUES take queues off the hardware scheduler and back.
//
// Per device, the rules are its family's (gcVersion): per-VMID debug registers with precise memory
// operations (KFD_DBG_TRAP_FLAG_SINGLE_MEM_OP) and nine launch-override exception bits on GC 9.4.2
// (MI210), 9.4.3 (MI300) and 11+, the global trap mask with the address-watch bit only on older
// gfx9 (MI100, Vega10) and gfx10; four address watch points per device everywhere. While a process is
// debugged, s_trap and, with the launch override's address-watch bit, an access its watch points
// match (FLAT, GLOBAL, MUBUF) run its second-level trap handler (gpu/shader/trap.go), whose
// s_sendmsg(MSG_INTERRUPT) from privileged mode reaches dbgInterrupt. The override's math-exception
// bits are kept and reported; the shader model raises no math exceptions.

// maxWatchPoints is MAX_WATCH_ADDRESSES: watch points per device, shared by every process.
const maxWatchPoints = 4

// debugState is the debugger side of kfd_process; under Process.mu.
type debugState struct {
	enabled    bool            // debug_trap_enabled
	debugger   *Process        // debugger_process: nil when the process debugs itself
	ev         *os.File        // dbg_ev_file: the file the debugger polls
	enableMask uint64          // exception_enable_mask
	status     uint64          // exception_status (process exceptions)
	rt         abi.RuntimeInfo // runtime_info
	retry      bool            // is_runtime_retry: an interrupted handshake resumes at its wait
	ack        chan struct{}   // runtime_enable_sema (counting: buffered)
	flags      uint32          // dbg_flags
	held       bool            // the session's reference on the process (kref_get in kfd_dbg_trap_enable)
	stopWatch  func()          // the exit watch of a process created for its debugger
}

// pddDebug is the debugger side of kfd_process_device.
type pddDebug struct {
	status     uint64                      // exception_status
	vmFault    *abi.HSAMemoryExceptionData // vm_fault_exc_data
	override   uint32                      // SPI_GDBG_PER_VMID_CNTL.EXCP_EN (launch trap override)
	replace    bool                        // SPI_GDBG_PER_VMID_CNTL.EXCP_REPLACE
	launchMode uint32                      // spi_dbg_launch_mode
	watch      [maxWatchPoints]watchPoint  // watch_points
}

// watchPoint is one TCP_WATCH register set owned by the process.
type watchPoint struct {
	used       bool
	addr       uint64
	mask, mode uint32
}

// dbgNotifyLocked writes the debugger's byte (kernel_write of '.' to dbg_ev_file). The file is
// the debugger's (a FIFO in kfdtest, nonblocking); a full one drops the byte as a failed
// kernel_write does.
func (p *Process) dbgNotifyLocked() {
	if p.dbg.ev == nil {
		return
	}
	if raw, err := p.dbg.ev.SyscallConn(); err == nil {
		raw.Write(func(fd uintptr) bool {
			// kernel_write(file, ".", 1, &pos) with pos 0: at offset 0 of a seekable file.
			if _, err := unix.Pwrite(int(fd), []byte{'.'}, 0); err == unix.ESPIPE {
				unix.Write(int(fd), []byte{'.'})
			}
			return true
		})
	}
}

// queueList is the process's queues in pqm->queues order: newest first (pqm_create_queue's
// list_add).
func (p *Process) queueList() []*queue {
	qs := make([]*queue, 0, len(p.queues))
	for _, q := range p.queues {
		qs = append(qs, q)
	}
	slices.SortFunc(qs, func(a, b *queue) int { return cmp.Compare(b.seq, a.seq) })
	return qs
}

// dbgRaiseLocked is kfd_dbg_ev_raise: records mask on one level (a device's, else the process's,
// else the queue of pd whose id, for EC_QUEUE_NEW, or doorbell, otherwise, is source) and
// notifies the debugger when it subscribed to any of it. It reports whether it did.
func (p *Process) dbgRaiseLocked(mask uint64, pd *pdd, source uint32, data *abi.HSAMemoryExceptionData) bool {
	if !p.dbg.enabled {
		return false
	}
	switch {
	case mask&abi.KFD_EC_MASK_DEVICE != 0:
		if pd != nil {
			pd.dbg.status |= mask & abi.KFD_EC_MASK_DEVICE
			if mask&abi.KFD_EC_MASK(abi.EC_DEVICE_MEMORY_VIOLATION) != 0 && pd.dbg.vmFault == nil && data != nil {
				d := *data
				pd.dbg.vmFault = &d
			}
		}
	case mask&abi.KFD_EC_MASK_PROCESS != 0:
		p.dbg.status |= mask & abi.KFD_EC_MASK_PROCESS
	default:
		byID := mask&abi.KFD_EC_MASK(abi.EC_QUEUE_NEW) != 0
		for _, q := range p.queueList() {
			if q.pd == pd && (byID && q.id == source || !byID && q.doorbellID == source) {
				q.excStatus |= mask
				break
			}
		}
	}
	if p.dbg.enableMask&mask != 0 {
		p.dbgNotifyLocked()
		return true
	}
	return false
}

// dbgInterrupt is kfd_set_dbg_ev_from_interrupt for an SQ interrupt a trap handler sent
// (privileged s_sendmsg(MSG_INTERRUPT): data is doorbell id | exception mask << 10,
// KFD_DEBUG_DOORBELL_ID and KFD_DEBUG_TRAP_CODE). It reports whether the debugger took it;
// otherwise the interrupt is an ordinary signal-event one.
func (p *Process) dbgInterrupt(pd *pdd, data uint32) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.dbgRaiseLocked(uint64(data&0x7fc00)>>10, pd, data&0x3ff, nil)
}

// dbgActivateLocked is kfd_dbg_trap_activate: the trap handler's debug flag (first-level TMA word
// 2) goes on for every device, so waves that trap enter the second-level handler.
func (p *Process) dbgActivateLocked() {
	for _, pd := range p.pdds {
		pd.debugTrap = true
		pd.updateTrap()
	}
}

// dbgDeactivateLocked is kfd_dbg_trap_deactivate (not unwinding): every queue resumed, watch points
// cleared, launch mode normal, flags cleared, the debug flag off.
func (p *Process) dbgDeactivateLocked() []*queue {
	resumed := p.resumeAllLocked()
	for _, pd := range p.pdds {
		for id := range pd.dbg.watch {
			if pd.dbg.watch[id].used {
				p.d.freeWatch(pd.gpuID, id)
				pd.dbg.watch[id] = watchPoint{}
			}
		}
		pd.dbg.launchMode = abi.KFD_DBG_TRAP_WAVE_LAUNCH_MODE_NORMAL
		pd.dbg.override, pd.dbg.replace = 0, false
		pd.debugTrap = false
		pd.updateTrap()
	}
	p.dbg.flags = 0
	return resumed
}

// dbgDisableLocked is kfd_dbg_trap_disable. It returns the queues to reschedule (resumed) and
// whether the session's process reference is to be dropped, both for the caller to do without
// Process.mu.
func (p *Process) dbgDisableLocked() (resumed []*queue, put bool) {
	if !p.dbg.enabled {
		return nil, false
	}
	switch p.dbg.rt.RuntimeState {
	case abi.DEBUG_RUNTIME_STATE_ENABLED:
		resumed = p.dbgDeactivateLocked()
	case abi.DEBUG_RUNTIME_STATE_DISABLED:
	default:
		p.dbg.rt.RuntimeState = abi.DEBUG_RUNTIME_STATE_ENABLED // reset for a re-attach
	}
	if p.dbg.ev != nil {
		p.dbg.ev.Close()
		p.dbg.ev = nil
	}
	p.dbg.debugger = nil
	p.dbg.enabled = false
	// kfd_dbg_clean_exception_status.
	p.dbg.status = 0
	for _, pd := range p.pdds {
		pd.dbg.status = 0
	}
	for _, q := range p.queues {
		q.excStatus = 0
	}
	put, p.dbg.held = p.dbg.held, false
	if p.dbg.stopWatch != nil {
		p.dbg.stopWatch()
		p.dbg.stopWatch = nil
	}
	return resumed, put
}

// reschedule gives resumed or suspended queues their new runlist parameters; without Process.mu.
func (p *Process) reschedule(qs []*queue) {
	for _, q := range qs {
		p.mu.Lock()
		par := q.params()
		scheduled := q.scheduled
		p.mu.Unlock()
		if scheduled {
			p.d.scheduler(q.pd.gpuID).Update(q, par)
		}
	}
}

// resumeAllLocked is resume_queues(target, 0, NULL): every suspended queue.
func (p *Process) resumeAllLocked() []*queue {
	var qs []*queue
	for _, q := range p.queues {
		if q.suspended {
			q.suspended = false
			qs = append(qs, q)
		}
	}
	return qs
}

// runtimeEnable is kfd_ioctl_runtime_enable (runtime_enable, runtime_disable). With a debugger
// attached, enabling and disabling raise EC_PROCESS_RUNTIME and wait for the debugger's
// SEND_RUNTIME_EVENT of it; a signal ends the wait with EINTR and the next call resumes there.
func runtimeEnable(p *Process, c Caller, a *abi.RuntimeEnableArgs) syscall.Errno {
	p.mu.Lock()
	defer p.mu.Unlock()
	if a.ModeMask&abi.KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK != 0 {
		return p.runtimeEnableLocked(c, a.RDebug, a.ModeMask&abi.KFD_RUNTIME_ENABLE_MODE_TTMP_SAVE_MASK != 0)
	}
	return p.runtimeDisableLocked(c)
}

func (p *Process) runtimeEnableLocked(c Caller, rDebug uint64, ttmp bool) syscall.Errno {
	if !p.dbg.retry {
		if p.dbg.rt.RuntimeState != abi.DEBUG_RUNTIME_STATE_DISABLED {
			return syscall.EBUSY
		}
		if len(p.queues) > 0 {
			return syscall.EEXIST
		}
		p.dbg.rt = abi.RuntimeInfo{RDebug: rDebug, RuntimeState: abi.DEBUG_RUNTIME_STATE_ENABLED}
		if ttmp {
			p.dbg.rt.TTMPSetup = 1
		}
	}
	if !p.dbg.enabled {
		return 0
	}
	if !p.dbg.retry {
		p.dbgActivateLocked()
		p.dbgRaiseLocked(abi.KFD_EC_MASK(abi.EC_PROCESS_RUNTIME), nil, 0, nil)
	}
	return p.runtimeWaitLocked(c)
}

func (p *Process) runtimeDisableLocked(c Caller) syscall.Errno {
	was := p.dbg.rt.RuntimeState == abi.DEBUG_RUNTIME_STATE_ENABLED
	p.dbg.rt.RuntimeState, p.dbg.rt.RDebug = abi.DEBUG_RUNTIME_STATE_DISABLED, 0
	if p.dbg.enabled {
		if was {
			resumed := p.dbgDeactivateLocked()
			p.mu.Unlock()
			p.reschedule(resumed)
			p.mu.Lock()
		}
		if !p.dbg.retry {
			p.dbgRaiseLocked(abi.KFD_EC_MASK(abi.EC_PROCESS_RUNTIME), nil, 0, nil)
		}
		if errno := p.runtimeWaitLocked(c); errno != 0 {
			return errno
		}
	}
	p.dbg.rt.TTMPSetup = 0
	return 0
}

// runtimeWaitLocked is down_interruptible(&runtime_enable_sema) without Process.mu.
func (p *Process) runtimeWaitLocked(c Caller) syscall.Errno {
	ack := p.dbg.ack
	p.mu.Unlock()
	var errno syscall.Errno
	select {
	case <-ack:
	case <-c.Interrupted():
		errno = syscall.EINTR
	case <-p.gone:
		errno = syscall.ENODEV
	}
	p.mu.Lock()
	p.dbg.retry = errno != 0
	return errno
}

// hwOps are the DBG_TRAP operations that need the runtime enabled (DBG_HW_OP, and SET_FLAGS).
var hwOps = map[uint32]bool{
	abi.KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_OVERRIDE: true, abi.KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_MODE: true,
	abi.KFD_IOC_DBG_TRAP_SUSPEND_QUEUES: true, abi.KFD_IOC_DBG_TRAP_RESUME_QUEUES: true,
	abi.KFD_IOC_DBG_TRAP_SET_NODE_ADDRESS_WATCH: true, abi.KFD_IOC_DBG_TRAP_CLEAR_NODE_ADDRESS_WATCH: true,
	abi.KFD_IOC_DBG_TRAP_SET_FLAGS: true,
}

// dbgTrap is kfd_ioctl_set_debug_trap: the checks in amdkfd's order (the pid, the target process,
// ptrace, debug enabled, runtime enabled for hardware operations, the watch point's GPU), then the
// operation on the target. The union's argument struct is decoded by the operation and encoded
// back whatever the result, as kfd_ioctl copies the whole argument out.
func dbgTrap(p *Process, c Caller, a *abi.DbgTrapArgs) syscall.Errno {
	pid := int(int32(a.Pid))
	if pid <= 0 || !processAlive(pid) {
		return syscall.ESRCH
	}
	d := p.d
	var target *Process
	if a.Op == abi.KFD_IOC_DBG_TRAP_ENABLE && pid != p.tgid && tracerOf(pid) == p.tgid {
		t, err := d.process(pid) // kfd_create_process on behalf of the tracee
		if err != nil {
			return syscall.ENOMEM
		}
		target = t
	} else {
		d.mu.Lock()
		if t := d.procs[pid]; t != nil {
			t.refs++
			target = t
		}
		d.mu.Unlock()
	}
	if target == nil {
		return syscall.ESRCH
	}
	defer d.put(target)
	if target != p && a.Op != abi.KFD_IOC_DBG_TRAP_DISABLE && tracerOf(pid) != p.tgid {
		d.log.Info("DBG_TRAP refused: the target is not ptrace-attached by the caller", "tgid", p.tgid, "target", pid)
		return syscall.EPERM
	}
	target.mu.Lock()
	if target.dead {
		target.mu.Unlock()
		return syscall.ESRCH
	}
	if a.Op != abi.KFD_IOC_DBG_TRAP_ENABLE && !target.dbg.enabled {
		target.mu.Unlock()
		return syscall.EINVAL
	}
	if target.dbg.rt.RuntimeState != abi.DEBUG_RUNTIME_STATE_ENABLED && hwOps[a.Op] {
		target.mu.Unlock()
		return syscall.EPERM
	}
	target.mu.Unlock()
	u := a.Union[:]
	switch a.Op {
	case abi.KFD_IOC_DBG_TRAP_ENABLE:
		return onUnion(u, func(e *abi.DbgTrapEnableArgs) syscall.Errno { return dbgEnable(p, target, c, e) })
	case abi.KFD_IOC_DBG_TRAP_DISABLE:
		target.mu.Lock()
		resumed, put := target.dbgDisableLocked()
		target.mu.Unlock()
		target.reschedule(resumed)
		if put {
			d.put(target)
		}
		return 0
	case abi.KFD_IOC_DBG_TRAP_SEND_RUNTIME_EVENT:
		return onUnion(u, func(e *abi.DbgTrapSendRuntimeEventArgs) syscall.Errno {
			return target.sendToRuntime(e.GPUID, e.QueueID, e.ExceptionMask)
		})
	case abi.KFD_IOC_DBG_TRAP_SET_EXCEPTIONS_ENABLED:
		return onUnion(u, target.setExceptionsEnabled)
	case abi.KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_OVERRIDE:
		return onUnion(u, target.setLaunchOverride)
	case abi.KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_MODE:
		return onUnion(u, target.setLaunchMode)
	case abi.KFD_IOC_DBG_TRAP_SUSPEND_QUEUES:
		return onUnion(u, func(e *abi.DbgTrapSuspendQueuesArgs) syscall.Errno {
			return target.setSuspended(c, true, e.NumQueues, e.ExceptionMask, e.QueueArrayPtr)
		})
	case abi.KFD_IOC_DBG_TRAP_RESUME_QUEUES:
		return onUnion(u, func(e *abi.DbgTrapResumeQueuesArgs) syscall.Errno {
			return target.setSuspended(c, false, e.NumQueues, 0, e.QueueArrayPtr)
		})
	case abi.KFD_IOC_DBG_TRAP_SET_NODE_ADDRESS_WATCH:
		return onUnion(u, target.setWatch)
	case abi.KFD_IOC_DBG_TRAP_CLEAR_NODE_ADDRESS_WATCH:
		return onUnion(u, func(e *abi.DbgTrapClearNodeAddressWatchArgs) syscall.Errno { return target.clearWatch(e.GPUID, e.ID) })
	case abi.KFD_IOC_DBG_TRAP_SET_FLAGS:
		return onUnion(u, func(e *abi.DbgTrapSetFlagsArgs) syscall.Errno { return target.setFlags(&e.Flags) })
	case abi.KFD_IOC_DBG_TRAP_QUERY_DEBUG_EVENT:
		return onUnion(u, target.queryDebugEvent)
	case abi.KFD_IOC_DBG_TRAP_QUERY_EXCEPTION_INFO:
		return onUnion(u, func(e *abi.DbgTrapQueryExceptionInfoArgs) syscall.Errno { return target.queryExceptionInfo(c, e) })
	case abi.KFD_IOC_DBG_TRAP_GET_QUEUE_SNAPSHOT:
		return onUnion(u, func(e *abi.DbgTrapSnapshotArgs) syscall.Errno { return target.queueSnapshot(c, e) })
	case abi.KFD_IOC_DBG_TRAP_GET_DEVICE_SNAPSHOT:
		return onUnion(u, func(e *abi.DbgTrapSnapshotArgs) syscall.Errno { return target.deviceSnapshot(c, e) })
	}
	d.log.Info("DBG_TRAP: invalid op", "tgid", p.tgid, "op", a.Op)
	return syscall.EINVAL
}

// onUnion runs fn on the operation's argument struct decoded from the union u, and encodes it back
// whatever fn returned (kfd_ioctl copies the whole argument out).
func onUnion[A any](u []byte, fn func(*A) syscall.Errno) syscall.Errno {
	var a A
	decode(u, &a)
	errno := fn(&a)
	encode(u, &a)
	return errno
}

// setExceptionsEnabled is kfd_dbg_set_enabled_debug_exception_mask: the debugger is told at once
// when an exception it now subscribes to is pending anywhere in the process.
func (p *Process) setExceptionsEnabled(e *abi.DbgTrapSetExceptionsEnabledArgs) syscall.Errno {
	p.mu.Lock()
	defer p.mu.Unlock()
	found := p.dbg.status
	for _, q := range p.queues {
		found |= q.excStatus
	}
	for _, pd := range p.pdds {
		found |= pd.dbg.status
	}
	if e.ExceptionMask&found != 0 {
		p.dbgNotifyLocked()
	}
	p.dbg.enableMask = e.ExceptionMask
	return 0
}

// setLaunchMode is kfd_dbg_trap_set_wave_launch_mode: NORMAL, HALT or DEBUG (the ioctl passes the
// mode as a uint8_t), kept per device (new waves launch running: README).
func (p *Process) setLaunchMode(e *abi.DbgTrapSetWaveLaunchModeArgs) syscall.Errno {
	mode := e.LaunchMode & 0xff
	if mode != abi.KFD_DBG_TRAP_WAVE_LAUNCH_MODE_NORMAL && mode != abi.KFD_DBG_TRAP_WAVE_LAUNCH_MODE_HALT &&
		mode != abi.KFD_DBG_TRAP_WAVE_LAUNCH_MODE_DEBUG {
		return syscall.EINVAL
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, pd := range p.pdds {
		pd.dbg.launchMode = mode
	}
	return 0
}

// dbgEnable is kfd_dbg_trap_enable with the ioctl's debugger_process and exception_enable_mask.
func dbgEnable(p, target *Process, c Caller, e *abi.DbgTrapEnableArgs) syscall.Errno {
	target.mu.Lock()
	if target != p {
		target.dbg.debugger = p
	}
	if target.dbg.enabled {
		target.mu.Unlock()
		return syscall.EALREADY
	}
	target.mu.Unlock()
	f, err := c.GetFD(int(int32(e.DbgFD)))
	if err != nil {
		return syscall.EBADF
	}
	target.mu.Lock()
	if target.dead || target.dbg.enabled {
		target.mu.Unlock()
		f.Close()
		if target.dead {
			return syscall.ESRCH
		}
		return syscall.EALREADY
	}
	if mc, ok := c.(MountChecker); ok && mc.OnMount(f) {
		// A file of this mount (libhsakmt's hsaKmtDbgEnable passes the kfd fd itself): amdkfd's
		// kernel_write to /dev/kfd fails silently, and the daemon is not to write to its own files.
		f.Close()
		f = nil
	}
	target.dbg.ev = f
	if target.dbg.rt.RuntimeState == abi.DEBUG_RUNTIME_STATE_ENABLED {
		target.dbgActivateLocked()
	}
	target.dbg.enabled, target.dbg.held = true, true
	target.d.mu.Lock()
	target.refs++ // the session's reference
	target.d.mu.Unlock()
	if target.dbg.stopWatch == nil {
		target.dbg.stopWatch = target.d.watchExit(target)
	}
	info := target.dbg.rt
	target.mu.Unlock()
	var b [16]byte
	encode(b[:], &info)
	n := min(int(e.RInfoSize), len(b))
	e.RInfoSize = uint32(len(b))
	if n > 0 && c.WriteMemory(e.RInfoPtr, b[:n]) != nil {
		target.mu.Lock()
		var resumed []*queue
		if target.dbg.rt.RuntimeState == abi.DEBUG_RUNTIME_STATE_ENABLED {
			resumed = target.dbgDeactivateLocked()
		}
		target.mu.Unlock()
		target.reschedule(resumed)
		return syscall.EFAULT // debug_trap_enabled stays set, as in kfd_dbg_trap_enable
	}
	target.mu.Lock()
	target.dbg.enableMask = e.ExceptionMask
	target.mu.Unlock()
	target.d.log.Info("debugger attached", "target", target.tgid, "debugger", p.tgid)
	return 0
}

// sendToRuntime is kfd_dbg_send_exception_to_runtime: a held memory violation goes to the
// runtime's memory events, EC_PROCESS_RUNTIME acknowledges the runtime's enable or disable, and
// other exceptions go to the queue's runtime error payload (kfd_send_exception_to_runtime).
func (p *Process) sendToRuntime(gpuID, queueID uint32, mask uint64) syscall.Errno {
	if mask&abi.KFD_EC_MASK(abi.EC_DEVICE_MEMORY_VIOLATION) != 0 {
		p.mu.Lock()
		pd := p.pdds[gpuID]
		var data abi.HSAMemoryExceptionData
		if pd != nil && pd.dbg.vmFault != nil {
			data = *pd.dbg.vmFault
		}
		p.mu.Unlock()
		if pd == nil {
			return syscall.ENODEV
		}
		p.signalMemoryException(data)
		mask &^= abi.KFD_EC_MASK(abi.EC_DEVICE_MEMORY_VIOLATION)
	}
	if mask&abi.KFD_EC_MASK(abi.EC_PROCESS_RUNTIME) != 0 {
		select {
		case p.dbg.ack <- struct{}{}:
		default: // the count is bounded by the channel; a runtime waits for one at a time
		}
		mask &^= abi.KFD_EC_MASK(abi.EC_PROCESS_RUNTIME)
	}
	if mask != 0 {
		p.queueErrorToRuntime(queueID, mask)
	}
	return 0
}

// queueErrorToRuntime is kfd_send_exception_to_runtime: the queue's context-save area header
// names the runtime's error payload and event (kfd_context_save_area_header err_payload_addr,
// err_event_id); the payload gets the exceptions OR-ed in and the event is set. A queue that does
// not exist, or a header the GPU cannot read, is ignored as there.
func (p *Process) queueErrorToRuntime(queueID uint32, mask uint64) {
	p.mu.Lock()
	q := p.queues[queueID]
	p.mu.Unlock()
	if q == nil || q.args.CtxSaveRestoreAddress == 0 {
		return
	}
	// A window of its own: q.mem is the CP's (an mmu.Port is one goroutine's at a time), and the
	// callers are the CP's queue error and any thread's DBG_TRAP SEND_RUNTIME_EVENT, at once.
	m := q.pd.vm.NewPort()
	defer m.Close()
	var hdr [40]byte
	if m.Read(q.args.CtxSaveRestoreAddress, hdr[:]) != nil {
		return
	}
	payload := binary.LittleEndian.Uint64(hdr[24:])
	event := binary.LittleEndian.Uint32(hdr[32:])
	if payload != 0 { // OR-ed in atomically: two reports at once both land
		m.Atomic(payload, 8, func(old uint64) uint64 { return old | mask })
	}
	p.mu.Lock()
	if ev := p.events[event]; ev != nil {
		p.signalLocked(ev)
	}
	p.mu.Unlock()
}

// gcVersion is the device's GC IP version as KFD_GC_VERSION compares it (major<<16 | minor<<8 |
// stepping), from its gfx_target_version (gfx90a's 90010 is GC 9.4.2, gfx908's 90008 9.4.1,
// gfx94x's 9040x 9.4.3, gfx900's 90000 9.0.1; gfx950 and gfx10 on carry the GC version).
func gcVersion(gfx uint64) uint32 {
	major, minor, step := uint32(gfx/10000), uint32(gfx/100%100), uint32(gfx%100)
	if major == 9 {
		switch gfx {
		case 90010: // gfx90a
			return 9<<16 | 4<<8 | 2
		case 90008: // gfx908
			return 9<<16 | 4<<8 | 1
		case 90000: // gfx900
			return 9<<16 | 0<<8 | 1
		case 90400, 90401, 90402: // gfx940, gfx941, gfx942
			return 9<<16 | 4<<8 | 3
		}
	}
	return major<<16 | minor<<8 | step
}

// perVMIDDebug is kfd_dbg_is_per_vmid_supported: GC 9.4.2, 9.4.3, 9.4.4, 9.5.0 and 11 onwards
// have per-VMID debug registers (SPI_GDBG_PER_VMID_CNTL); older parts one global trap mask.
func perVMIDDebug(pd *pdd) bool {
	gc := gcVersion(pd.node.Prop(topology.GfxTargetVersion))
	switch gc {
	case 9<<16 | 4<<8 | 2, 9<<16 | 4<<8 | 3, 9<<16 | 4<<8 | 4, 9<<16 | 5<<8:
		return true
	}
	return gc >= 11<<16
}

// overrideRules is the device's validate_trap_override_request: the exception bits its launch
// override can set and the errno of a mode it refuses (kgd_gfx_v9/v10: the address-watch bit
// only, OR only (the global SPI_GDBG_TRAP_MASK), EINVAL; per-VMID parts
// (kgd_aldebaran/gc_9_4_3/v11): nine exception bits, OR or REPLACE, EPERM; GC 11.0.4 and later add
// trap on wave start and end).
func overrideRules(pd *pdd, mode uint32) (supported uint32, errno syscall.Errno) {
	const nine = abi.KFD_DBG_TRAP_MASK_FP_INVALID | abi.KFD_DBG_TRAP_MASK_FP_INPUT_DENORMAL |
		abi.KFD_DBG_TRAP_MASK_FP_DIVIDE_BY_ZERO | abi.KFD_DBG_TRAP_MASK_FP_OVERFLOW |
		abi.KFD_DBG_TRAP_MASK_FP_UNDERFLOW | abi.KFD_DBG_TRAP_MASK_FP_INEXACT |
		abi.KFD_DBG_TRAP_MASK_INT_DIVIDE_BY_ZERO | abi.KFD_DBG_TRAP_MASK_DBG_ADDRESS_WATCH |
		abi.KFD_DBG_TRAP_MASK_DBG_MEMORY_VIOLATION
	if !perVMIDDebug(pd) {
		if mode != abi.KFD_DBG_TRAP_OVERRIDE_OR {
			return abi.KFD_DBG_TRAP_MASK_DBG_ADDRESS_WATCH, syscall.EINVAL
		}
		return abi.KFD_DBG_TRAP_MASK_DBG_ADDRESS_WATCH, 0
	}
	supported = nine
	if gcVersion(pd.node.Prop(topology.GfxTargetVersion)) >= 11<<16|0<<8|4 {
		supported |= abi.KFD_DBG_TRAP_MASK_TRAP_ON_WAVE_START | abi.KFD_DBG_TRAP_MASK_TRAP_ON_WAVE_END
	}
	if mode != abi.KFD_DBG_TRAP_OVERRIDE_OR && mode != abi.KFD_DBG_TRAP_OVERRIDE_REPLACE {
		return supported, syscall.EPERM
	}
	return supported, 0
}

// setLaunchOverride is kfd_dbg_trap_set_wave_launch_override: every device validates the request
// (kfd_dbg_validate_trap_override_request: the supported bits ANDed, the first refusal returned;
// EACCES for a requested bit no device supports), then the trap mask becomes (bits & request) |
// (previous & ~request) in the override register, which keeps the nine exception bits
// (SPI_GDBG_PER_VMID_CNTL.EXCP_EN; the global SPI_GDBG_TRAP_MASK has the same field). The previous
// mask and the supported one are returned in enable_mask and support_request_mask.
func (p *Process) setLaunchOverride(e *abi.DbgTrapSetWaveLaunchOverrideArgs) syscall.Errno {
	request := e.SupportRequestMask
	p.mu.Lock()
	defer p.mu.Unlock()
	pdds := p.sortedPDDs()
	sup := uint32(0xffffffff)
	for _, pd := range pdds {
		s, errno := overrideRules(pd, e.OverrideMode)
		sup &= s
		if errno != 0 {
			e.SupportRequestMask = sup
			return errno
		}
	}
	e.SupportRequestMask = sup
	if request&^sup != 0 {
		return syscall.EACCES
	}
	for _, pd := range pdds {
		prev := pd.dbg.override
		pd.dbg.override = (e.EnableMask&request | prev&^request) & 0x1ff
		pd.dbg.replace = e.OverrideMode == abi.KFD_DBG_TRAP_OVERRIDE_REPLACE
		pd.updateTrap()
		e.EnableMask = prev
	}
	return 0
}

// setFlags is kfd_dbg_trap_set_flags: SINGLE_MEM_OP (precise memory operations) needs every device
// to be per-VMID (else EACCES, the previous flags returned); the previous flags come back in flags.
func (p *Process) setFlags(flags *uint32) syscall.Errno {
	p.mu.Lock()
	defer p.mu.Unlock()
	prev := p.dbg.flags
	for _, pd := range p.pdds {
		if !perVMIDDebug(pd) && *flags&abi.KFD_DBG_TRAP_FLAG_SINGLE_MEM_OP != 0 {
			*flags = prev
			return syscall.EACCES
		}
	}
	p.dbg.flags = *flags & abi.KFD_DBG_TRAP_FLAG_SINGLE_MEM_OP
	*flags = prev
	return 0
}

// setSuspended is suspend_queues (suspend) and resume_queues: the listed queues leave the
// hardware scheduler (their dispatches saved as a preemption saves them) or return to it. Each id
// comes back flagged INVALID (no such queue; for a suspend also a new one whose EC_QUEUE_NEW is
// pending) or clean; a suspend clears clear from the queues it took. The result, the syscall's
// return value, is the number of queues suspended (already suspended ones count) or resumed.
func (p *Process) setSuspended(c Caller, suspend bool, n uint32, clear, ptr uint64) syscall.Errno {
	ids, errno := readQueueIDs(c, n, ptr)
	if errno != 0 {
		return errno
	}
	p.mu.Lock()
	var changed []*queue
	total := 0
	for i := range ids {
		ids[i] |= abi.KFD_DBG_QUEUE_INVALID_MASK
	}
	for _, q := range p.queueList() {
		for i := range ids {
			if ids[i]&^abi.KFD_DBG_QUEUE_INVALID_MASK != q.id {
				continue
			}
			if suspend && !q.suspended && q.excStatus&abi.KFD_EC_MASK(abi.EC_QUEUE_NEW) != 0 {
				break // suspend_single_queue's -EBUSY: stays INVALID
			}
			if q.suspended != suspend {
				q.suspended = suspend
				changed = append(changed, q)
			}
			ids[i] &^= abi.KFD_DBG_QUEUE_INVALID_MASK
			if suspend {
				q.excStatus &^= clear
			}
			total++
			break
		}
	}
	p.mu.Unlock()
	p.reschedule(changed)
	if errno := writeQueueIDs(c, ids, ptr); errno != 0 {
		p.d.log.Info("DBG_TRAP: queue array not written back", "tgid", p.tgid, "suspend", suspend)
	}
	setReturn(c, total)
	return 0
}

// maxQueueIDs bounds a queue array: get_queue_ids' kzalloc fails above KMALLOC_MAX_SIZE.
const maxQueueIDs = 4 << 20 / 4

func readQueueIDs(c Caller, n uint32, ptr uint64) ([]uint32, syscall.Errno) {
	if ptr == 0 || n == 0 {
		return nil, 0
	}
	if n > maxQueueIDs {
		return nil, syscall.ENOMEM
	}
	b := make([]byte, 4*int(n))
	if c.ReadMemory(ptr, b) != nil {
		return nil, syscall.EFAULT
	}
	ids := make([]uint32, n)
	for i := range ids {
		ids[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return ids, 0
}

func writeQueueIDs(c Caller, ids []uint32, ptr uint64) syscall.Errno {
	if len(ids) == 0 {
		return 0
	}
	b := make([]byte, 4*len(ids))
	for i, id := range ids {
		binary.LittleEndian.PutUint32(b[4*i:], id)
	}
	if c.WriteMemory(ptr, b) != nil {
		return syscall.EFAULT
	}
	return 0
}

// setReturn gives the syscall a positive result where the caller can carry one (Returner).
func setReturn(c Caller, n int) {
	if r, ok := c.(Returner); ok {
		r.SetReturn(int32(n))
	}
}

// setWatch is kfd_dbg_trap_set_dev_address_watch: the lowest watch point free on the device
// (shared by every process), ENOMEM when none is.
func (p *Process) setWatch(e *abi.DbgTrapSetNodeAddressWatchArgs) syscall.Errno {
	p.mu.Lock()
	defer p.mu.Unlock()
	pd := p.pdds[e.GPUID]
	if pd == nil {
		return syscall.ENODEV
	}
	id, ok := p.d.allocWatch(pd.gpuID)
	if !ok {
		return syscall.ENOMEM
	}
	pd.dbg.watch[id] = watchPoint{used: true, addr: e.Address, mask: e.Mask, mode: e.Mode}
	pd.updateTrap()
	e.ID = uint32(id)
	return 0
}

// clearWatch is kfd_dbg_trap_clear_dev_address_watch.
func (p *Process) clearWatch(gpuID, id uint32) syscall.Errno {
	p.mu.Lock()
	defer p.mu.Unlock()
	pd := p.pdds[gpuID]
	if pd == nil {
		return syscall.ENODEV
	}
	if id >= maxWatchPoints || !pd.dbg.watch[id].used {
		return syscall.EINVAL
	}
	pd.dbg.watch[id] = watchPoint{}
	pd.updateTrap()
	p.d.freeWatch(gpuID, int(id))
	return 0
}

// allocWatch and freeWatch keep each device's watch point ids (dev->alloc_watch_ids).
func (d *Driver) allocWatch(gpuID uint32) (int, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.watchIDs == nil {
		d.watchIDs = map[uint32]uint8{}
	}
	for id := 0; id < maxWatchPoints; id++ {
		if d.watchIDs[gpuID]&(1<<id) == 0 {
			d.watchIDs[gpuID] |= 1 << id
			return id, true
		}
	}
	return 0, false
}

func (d *Driver) freeWatch(gpuID uint32, id int) {
	d.mu.Lock()
	d.watchIDs[gpuID] &^= 1 << id
	d.mu.Unlock()
}

// queryDebugEvent is kfd_dbg_ev_query_debug_event: the first queue, else device, else the process
// with an enabled exception pending; its whole status is returned and the clear mask cleared.
func (p *Process) queryDebugEvent(e *abi.DbgTrapQueryDebugEventArgs) syscall.Errno {
	clear := e.ExceptionMask
	*e = abi.DbgTrapQueryDebugEventArgs{}
	p.mu.Lock()
	defer p.mu.Unlock()
	en := p.dbg.enableMask
	found := false
	for _, q := range p.queueList() {
		if en&q.excStatus != 0 {
			e.ExceptionMask, e.QueueID, e.GPUID = q.excStatus, q.id, q.pd.gpuID
			q.excStatus &^= clear
			found = true
			break
		}
	}
	if !found {
		for _, pd := range p.sortedPDDs() {
			if en&pd.dbg.status != 0 {
				e.ExceptionMask, e.GPUID = pd.dbg.status, pd.gpuID
				pd.dbg.status &^= clear
				found = true
				break
			}
		}
	}
	if !found && en&p.dbg.status != 0 {
		e.ExceptionMask = p.dbg.status
		p.dbg.status &^= clear
	}
	if e.ExceptionMask == 0 {
		return syscall.EAGAIN
	}
	return 0
}

// queryExceptionInfo is kfd_dbg_trap_query_exception_info. A device memory violation's data is the
// 32-byte kfd_hsa_memory_exception_data (amdkfd keeps it but never sets its size, so it copies
// none: the emulator gives what the interface describes).
func (p *Process) queryExceptionInfo(c Caller, e *abi.DbgTrapQueryExceptionInfoArgs) syscall.Errno {
	if e.InfoPtr == 0 {
		return syscall.EINVAL
	}
	code := uint(e.ExceptionCode)
	if code == 0 || code >= 64 {
		return syscall.EINVAL
	}
	bit := abi.KFD_EC_MASK(code)
	var info []byte
	p.mu.Lock()
	var status *uint64
	switch {
	case bit&abi.KFD_EC_MASK_QUEUE != 0:
		q := p.queues[e.SourceID]
		if q == nil {
			p.mu.Unlock()
			return syscall.EINVAL
		}
		status = &q.excStatus
	case bit&abi.KFD_EC_MASK_DEVICE != 0:
		pd := p.pdds[e.SourceID]
		if pd == nil {
			p.mu.Unlock()
			return syscall.EINVAL
		}
		status = &pd.dbg.status
		if *status&bit != 0 && code == abi.EC_DEVICE_MEMORY_VIOLATION && pd.dbg.vmFault != nil {
			info = make([]byte, 32)
			encode(info, pd.dbg.vmFault)
			if e.ClearException != 0 {
				pd.dbg.vmFault = nil
			}
		}
	case bit&abi.KFD_EC_MASK_PROCESS != 0:
		status = &p.dbg.status
		if *status&bit != 0 && code == abi.EC_PROCESS_RUNTIME {
			info = make([]byte, 16)
			encode(info, &p.dbg.rt)
		}
	default:
		p.mu.Unlock()
		return syscall.EINVAL
	}
	if *status&bit == 0 {
		p.mu.Unlock()
		return syscall.ENODATA
	}
	if e.ClearException != 0 {
		*status &^= bit
	}
	p.mu.Unlock()
	if n := min(int(e.InfoSize), len(info)); n > 0 && c.WriteMemory(e.InfoPtr, info[:n]) != nil {
		return syscall.EFAULT
	}
	e.InfoSize = uint32(len(info))
	return 0
}

// queueSnapshot is pqm_get_queue_snapshot: num_queues comes back as the number of queues, the
// buffer gets min(its count, that) entries of min(entry_size, 64) bytes, entry_size apart.
func (p *Process) queueSnapshot(c Caller, e *abi.DbgTrapSnapshotArgs) syscall.Errno {
	want, stride := int(e.NumEntries), int(e.EntrySize)
	e.NumEntries = 0
	if stride == 0 {
		return syscall.EINVAL
	}
	size := min(stride, 64)
	e.EntrySize = uint32(size)
	p.mu.Lock()
	qs := p.queueList()
	var buf []byte
	for i, q := range qs {
		if i < want {
			ent := abi.QueueSnapshotEntry{ExceptionStatus: q.excStatus, RingBaseAddress: q.args.RingBaseAddress,
				WritePointerAddress: q.args.WritePointerAddress, ReadPointerAddress: q.args.ReadPointerAddress,
				CtxSaveRestoreAddress: q.args.CtxSaveRestoreAddress, QueueID: q.id, GPUID: q.pd.gpuID,
				RingSize: q.args.RingSize, QueueType: q.args.QueueType, CtxSaveRestoreAreaSize: q.args.CtxSaveRestoreSize}
			q.excStatus &^= e.ExceptionMask
			b := make([]byte, 64)
			encode(b, &ent)
			buf = append(buf, b[:size]...)
		}
	}
	p.mu.Unlock()
	e.NumEntries = uint32(len(qs))
	for i := 0; i*size < len(buf); i++ {
		if c.WriteMemory(e.SnapshotBufPtr+uint64(i*stride), buf[i*size:(i+1)*size]) != nil {
			return syscall.EFAULT
		}
	}
	return 0
}

// deviceSnapshot is kfd_dbg_trap_device_snapshot.
func (p *Process) deviceSnapshot(c Caller, e *abi.DbgTrapSnapshotArgs) syscall.Errno {
	if e.SnapshotBufPtr == 0 {
		return syscall.EINVAL
	}
	stride := int(e.EntrySize)
	size := min(stride, 120)
	p.mu.Lock()
	pdds := p.sortedPDDs()
	n := min(int(e.NumEntries), len(pdds))
	e.NumEntries, e.EntrySize = uint32(len(pdds)), uint32(size)
	var buf []byte
	for _, pd := range pdds[:n] {
		nd := pd.node
		ap := apertures(pd)
		ent := abi.DbgDeviceInfoEntry{ExceptionStatus: pd.dbg.status, LDSBase: ap.LDSBase, LDSLimit: ap.LDSLimit,
			ScratchBase: ap.ScratchBase, ScratchLimit: ap.ScratchLimit, GPUVMBase: ap.GPUVMBase, GPUVMLimit: ap.GPUVMLimit,
			GPUID: pd.gpuID, LocationID: uint32(nd.Prop(topology.LocationID)), VendorID: uint32(nd.Prop(topology.VendorID)),
			DeviceID: uint32(nd.Prop(topology.DeviceID)), FWVersion: uint32(nd.Prop(topology.FWVersion)),
			GfxTargetVersion: uint32(nd.Prop(topology.GfxTargetVersion)), SIMDCount: uint32(nd.Prop(topology.SIMDCount)),
			MaxWavesPerSIMD: uint32(nd.Prop(topology.MaxWavesPerSIMD)), ArrayCount: uint32(nd.Prop(topology.ArrayCount)),
			SIMDArraysPerEngine: uint32(nd.Prop(topology.SIMDArraysPerEngine)), NumXCC: uint32(nd.Prop(topology.NumXCC)),
			Capability: uint32(nd.Prop(topology.Capability)), DebugProp: uint32(nd.Prop(topology.DebugProp))}
		if e.ExceptionMask != 0 {
			pd.dbg.status &^= e.ExceptionMask
		}
		b := make([]byte, 120)
		encode(b, &ent)
		buf = append(buf, b[:size]...)
	}
	p.mu.Unlock()
	for i := 0; i < n && size > 0; i++ {
		if c.WriteMemory(e.SnapshotBufPtr+uint64(i*stride), buf[i*size:(i+1)*size]) != nil {
			return syscall.EFAULT
		}
	}
	return 0
}

// processAlive is find_get_pid + get_task_mm: the pid exists and is not a zombie.
func processAlive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && b[i+2] != 'Z' && b[i+2] != 'X'
}

// procStatus returns the value of key in /proc/PID/status ("" when absent).
func procStatus(pid int, key string) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return ""
	}
	for _, l := range bytes.Split(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(l, []byte(key+":")); ok {
			return strings.TrimSpace(string(v))
		}
	}
	return ""
}

// tracerOf is ptrace_parent of pid's leader as a process: the tgid of its tracer, 0 when it is
// not traced. (amdkfd compares the tracer task with the calling thread; the daemon knows the
// caller's process, so any thread of the tracer's process passes.)
func tracerOf(pid int) int {
	t, _ := strconv.Atoi(procStatus(pid, "TracerPid"))
	if t == 0 {
		return 0
	}
	tg, _ := strconv.Atoi(procStatus(t, "Tgid"))
	return tg
}

// watchExit tears p down when its process exits, for a process created on behalf of its debugger
// (no file of the fs layer watches it; for one that has files, the fs layer's own exit watch gets
// there first and this finds it gone). The returned function stops watching.
func (d *Driver) watchExit(p *Process) func() {
	pfd, err := unix.PidfdOpen(p.tgid, unix.PIDFD_NONBLOCK)
	if err != nil {
		return func() {}
	}
	f := os.NewFile(uintptr(pfd), "pidfd")
	raw, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return func() {}
	}
	go func() {
		exited := false
		raw.Read(func(fd uintptr) bool {
			n, _ := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, 0)
			exited = n > 0
			return exited
		})
		if !exited {
			return
		}
		d.mu.Lock()
		same := d.procs[p.tgid] == p // not a new process that took the tgid since
		d.mu.Unlock()
		if same {
			d.ProcessExited(p.tgid)
		}
	}()
	return func() { f.Close() }
}

// dbgTeardown ends the process's own debug session and those it holds as a debugger
// (kfd_process_notifier_release_internal); called by teardown without Process.mu, it takes what
// it needs.
func (p *Process) dbgTeardown() {
	p.mu.Lock()
	_, put := p.dbgDisableLocked()
	p.mu.Unlock()
	if put {
		p.d.put(p)
	}
	p.d.mu.Lock()
	var targets []*Process
	for _, t := range p.d.procs {
		if t != p {
			targets = append(targets, t)
		}
	}
	p.d.mu.Unlock()
	for _, t := range targets {
		t.mu.Lock()
		var resumed []*queue
		put := false
		if t.dbg.enabled && t.dbg.debugger == p {
			resumed, put = t.dbgDisableLocked()
		}
		t.mu.Unlock()
		t.reschedule(resumed)
		if put {
			p.d.put(t)
		}
	}
}

// waveException is the exception mask the trap handler reports for a queue error, 0 for none.
func waveException(err error) uint64 {
	var te *shader.TrapError
	switch {
	case errors.As(err, &te) && te.Code == 2:
		return abi.KFD_EC_MASK(abi.EC_QUEUE_WAVE_ABORT)
	case errors.As(err, &te):
		return abi.KFD_EC_MASK(abi.EC_QUEUE_WAVE_TRAP)
	case aql.QueueInactiveCode(err) == aql.QueueInactiveIllegalInstruction:
		return abi.KFD_EC_MASK(abi.EC_QUEUE_WAVE_ILLEGAL_INSTRUCTION)
	}
	return 0
}

// waveExceptionToRuntime is the runtime's trap handler's report of a wave exception as KFD 1.13
// delivers it: the handler's interrupt (m0 = doorbell | EC mask << 10) reaches
// kfd_set_dbg_ev_from_interrupt, which, with no debugger taking it and the runtime enabled, puts
// the exception in the queue's error payload and sets the runtime's event
// (kfd_send_exception_to_runtime). The model stands in for ROCr's handler (gpu/shader TrapError):
// llvm.trap is EC_QUEUE_WAVE_ABORT, other trap codes EC_QUEUE_WAVE_TRAP, an illegal instruction
// EC_QUEUE_WAVE_ILLEGAL_INSTRUCTION. ROCr 6.2.4 at 1.13 learns of them this way only.
// The class is the one the queue-inactive code takes (aql.QueueInactiveCode, most specific
// first): a failed dispatch is an illegal instruction only when nothing more specific holds. A
// GPUVM fault is no wave exception: the memory controller's interrupt reports it
// (raiseMemoryException).
func (q *queue) waveExceptionToRuntime(err error) {
	mask := waveException(err)
	if mask == 0 {
		return
	}
	p := q.p
	p.mu.Lock()
	if p.dbgRaiseLocked(mask, q.pd, q.doorbellID, nil) || p.dbg.rt.RuntimeState != abi.DEBUG_RUNTIME_STATE_ENABLED {
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	p.queueErrorToRuntime(q.id, mask)
}
