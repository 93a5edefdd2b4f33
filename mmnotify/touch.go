package mmnotify

import (
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
)

// Touch notices: the doorbell watcher's way to sleep without polling (package doorbell). The
// client rings a doorbell with a plain store, which no FUSE server or syscall sees; but a store to
// a page the client's page tables do not map faults, and the x86 exceptions:page_fault_user
// tracepoint sees the fault before it is handled. ArmTouch asks for one notice: the next user page
// fault of the process at an address in one of the given ranges emits a record (kindTouch) and
// disarms itself, and the reader goroutine calls the function ArmTouch was given. Making the pages
// fault is the caller's part (package kfd punches them out of the memfd behind them, which unmaps
// them from every process, and restores their contents).
//
// A notice arrives while the faulting store has not yet been made: a caller must look for the
// store for a while after the notice, not once. Faults outside the ranges cost the kernel one hash
// lookup per fault of an armed process; other processes' faults one lookup that misses.

const (
	kindTouch    = 7 // exceptions/page_fault_user in an armed range: address
	touchRanges  = 4 // ranges per armed process (more are merged into their hull)
	faultAddrOff = 8 // address in the page_fault_user context (events/exceptions/page_fault_user/format)
)

// openTouch attaches the page-fault program. It is optional: without it (another architecture,
// a kernel without the tracepoint) ArmTouch reports why.
func (n *Notifier) openTouch() error {
	var err error
	n.armed, err = ebpf.NewMap(&ebpf.MapSpec{Name: "kfdemu_mmt", Type: ebpf.Hash, KeySize: 4, ValueSize: 16 * touchRanges,
		MaxEntries: watchedEntries})
	if err != nil {
		return fmt.Errorf("create map: %w", err)
	}
	p, err := ebpf.NewProgram(&ebpf.ProgramSpec{Name: "kfdemu_mmtouch", Type: ebpf.TracePoint, License: "GPL",
		Instructions: touchProg(n.armed, n.events)})
	if err != nil {
		return fmt.Errorf("load program: %w", err)
	}
	n.progs = append(n.progs, p)
	l, err := link.Tracepoint("exceptions", "page_fault_user", p, nil)
	if err != nil {
		return fmt.Errorf("attach tracepoint exceptions/page_fault_user: %w", err)
	}
	n.links = append(n.links, l)
	return nil
}

// touchProg: for an armed tgid whose fault address lies in one of its ranges, delete the entry
// (one notice per arming) and emit {tgid, tid, kindTouch, address}. A full ring loses the notice;
// the caller's slow poll covers that.
func touchProg(armed, events *ebpf.Map) asm.Instructions {
	in := append(lookupTgid(armed),
		asm.LoadMem(asm.R8, asm.R6, faultAddrOff, asm.DWord),
	)
	for i := range touchRanges {
		next := fmt.Sprint("next", i)
		in = append(in,
			asm.LoadMem(asm.R1, asm.R0, int16(16*i), asm.DWord),
			asm.JGT.Reg(asm.R1, asm.R8, next), // addr < lo
			asm.LoadMem(asm.R1, asm.R0, int16(16*i+8), asm.DWord),
			asm.JGT.Reg(asm.R1, asm.R8, "hit"), // addr < hi
			asm.Mov.Imm(asm.R1, 0).WithSymbol(next),
		)
	}
	in = append(in,
		asm.Ja.Label("out"),
		asm.LoadMapPtr(asm.R1, armed.FD()).WithSymbol("hit"),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, -4),
		asm.FnMapDeleteElem.Call(),
		asm.LoadMapPtr(asm.R1, events.FD()),
		asm.Mov.Imm(asm.R2, recSize),
		asm.Mov.Imm(asm.R3, 0),
		asm.FnRingbufReserve.Call(),
		asm.JEq.Imm(asm.R0, 0, "out"),
		asm.Mov.Reg(asm.R1, asm.R7),
		asm.RSh.Imm(asm.R1, 32),
		asm.StoreMem(asm.R0, 0, asm.R1, asm.Word),
		asm.StoreMem(asm.R0, 4, asm.R7, asm.Word),
		asm.StoreImm(asm.R0, 8, kindTouch, asm.Word),
		asm.StoreImm(asm.R0, 12, 0, asm.Word),
		asm.StoreMem(asm.R0, 16, asm.R8, asm.DWord),
	)
	in = append(in, asm.Mov.Imm(asm.R1, 0))
	for i := 1; i < maxArgs; i++ {
		in = append(in, asm.StoreMem(asm.R0, int16(16+8*i), asm.R1, asm.DWord))
	}
	return append(in,
		asm.Mov.Reg(asm.R1, asm.R0),
		asm.Mov.Imm(asm.R2, 0),
		asm.FnRingbufSubmit.Call(),
		asm.Mov.Imm(asm.R0, 0).WithSymbol("out"),
		asm.Return(),
	)
}

// TouchAvailable reports whether ArmTouch can work (the page-fault tracepoint is attached).
func (n *Notifier) TouchAvailable() bool { return n.armed != nil }

// ArmTouch asks for one call of fn (from the reader goroutine, with no lock held) at the next
// user page fault of the process in one of ranges ([start, end) pairs; nil means anywhere). A
// second ArmTouch replaces the first. fn must not block and must not call Sync.
func (w *Watch) ArmTouch(ranges [][2]uint64, fn func()) error {
	n := w.n
	if n.armed == nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, n.touchErr)
	}
	var v [2 * touchRanges]uint64
	switch {
	case len(ranges) == 0:
		v[0], v[1] = 0, ^uint64(0)
	case len(ranges) <= touchRanges:
		for i, r := range ranges {
			v[2*i], v[2*i+1] = r[0], r[1]
		}
	default: // their hull: more notices than needed, none missed
		v[0], v[1] = ranges[0][0], ranges[0][1]
		for _, r := range ranges[1:] {
			v[0], v[1] = min(v[0], r[0]), max(v[1], r[1])
		}
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.procs[w.tgid] != w.p {
		return fmt.Errorf("mmnotify: arm %d: watch stopped", w.tgid)
	}
	w.p.touch = fn
	if err := n.armed.Put(w.tgid, v); err != nil {
		return fmt.Errorf("mmnotify: arm %d: %w", w.tgid, err)
	}
	return nil
}

// Armed reports whether the process's last ArmTouch is still waiting for its fault.
func (w *Watch) Armed() bool {
	if w.n.armed == nil {
		return false
	}
	var v [2 * touchRanges]uint64
	return w.n.armed.Lookup(w.tgid, &v) == nil
}

// Disarm cancels a pending ArmTouch.
func (w *Watch) Disarm() {
	if w.n.armed != nil {
		w.n.armed.Delete(w.tgid)
	}
}
