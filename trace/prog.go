package trace

import (
	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// The BPF side is written with cilium/ebpf's assembler, so building kfdemu needs no clang and there is no
// generated object to keep in sync. Three tracepoint programs share three maps:
//
//	pids      hash  tgid -> 1      the traced process tree (seeded by user space, grown by fork)
//	inflight  hash  pid_tgid -> {start ns, fd, cmd, arg}   set at sys_enter_ioctl
//	events    ringbuf              one record per finished kfd/DRM ioctl, layout below
//
// Record layout (little endian), recSize bytes:
//
//	0 start ns | 8 duration ns | 16 pid_tgid | 24 fd | 32 cmd | 40 arg pointer | 48 ret (s64)
//	56 u32 bytes of argument copied | 60 u32 flags | 64 u32 bytes of pointed-to array copied | 68 pad
//	72 argument struct (maxArg bytes, _IOC_SIZE clamped) | 72+maxArg pointed-to array (maxExtra bytes)
//
// The argument is copied at exit, after the driver wrote its outputs; kfd's arguments are _IOWR, so the
// exit copy holds inputs and outputs.
const (
	offStart, offDur, offPidTgid, offFD, offCmd, offArg, offRet = 0, 8, 16, 24, 32, 40, 48
	offSize, offFlags, offExtraLen, offData                     = 56, 60, 64, 72
	maxArg                                                      = 512
	maxExtra                                                    = 512
	offExtra                                                    = offData + maxArg
	recSize                                                     = offExtra + maxExtra

	flagArgFault = 1 << 0 // the argument pointer could not be read

	// Tracepoint context offsets (events/syscalls/sys_{enter,exit}_ioctl/format).
	ctxFD, ctxCmd, ctxArg, ctxRet = 16, 24, 32, 16
	// events/sched/sched_process_fork/format
	ctxChildPid = 20

	iocTypeKFD = 'K' // AMDKFD_IOCTL_BASE
	iocTypeDRM = 'd' // DRM_IOCTL_BASE

	// Arrays worth copying (kfd_ioctl.h): WAIT_EVENTS events_ptr at 0, num_events at 8, 48-byte
	// struct kfd_event_data; MAP/UNMAP device_ids_array_ptr at 8, n_devices at 16, u32 ids.
	cmdWaitEvents, cmdMap, cmdUnmap = 'K'<<8 | 0x0C, 'K'<<8 | 0x18, 'K'<<8 | 0x19
	eventDataSize                   = 48
)

type objects struct {
	pids, inflight, events *ebpf.Map
	enter, exit, fork      *ebpf.Program
}

func mapSpecs() (pids, inflight, events *ebpf.MapSpec) {
	pids = &ebpf.MapSpec{Name: "kfdemu_pids", Type: ebpf.Hash, KeySize: 4, ValueSize: 1, MaxEntries: 4096}
	inflight = &ebpf.MapSpec{Name: "kfdemu_inflight", Type: ebpf.Hash, KeySize: 8, ValueSize: 32, MaxEntries: 8192}
	events = &ebpf.MapSpec{Name: "kfdemu_events", Type: ebpf.RingBuf, MaxEntries: 1 << 22}
	return
}

// forkProg adds a child to pids when its parent's process is traced.
func forkProg(pids *ebpf.Map) asm.Instructions {
	return asm.Instructions{
		asm.Mov.Reg(asm.R6, asm.R1),
		asm.FnGetCurrentPidTgid.Call(),
		asm.RSh.Imm(asm.R0, 32),
		asm.StoreMem(asm.RFP, -4, asm.R0, asm.Word),
		asm.LoadMapPtr(asm.R1, pids.FD()),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, -4),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, "out"),
		asm.LoadMem(asm.R1, asm.R6, ctxChildPid, asm.Word),
		asm.StoreMem(asm.RFP, -8, asm.R1, asm.Word),
		asm.StoreImm(asm.RFP, -12, 1, asm.Byte),
		asm.LoadMapPtr(asm.R1, pids.FD()),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, -8),
		asm.Mov.Reg(asm.R3, asm.RFP),
		asm.Add.Imm(asm.R3, -12),
		asm.Mov.Imm(asm.R4, 0), // BPF_ANY
		asm.FnMapUpdateElem.Call(),
		asm.Mov.Imm(asm.R0, 0).WithSymbol("out"),
		asm.Return(),
	}
}

// enterProg records the start of a kfd or DRM ioctl of a traced process.
func enterProg(pids, inflight *ebpf.Map) asm.Instructions {
	return asm.Instructions{
		asm.Mov.Reg(asm.R6, asm.R1),
		asm.FnGetCurrentPidTgid.Call(),
		asm.Mov.Reg(asm.R7, asm.R0),
		asm.RSh.Imm(asm.R0, 32),
		asm.StoreMem(asm.RFP, -4, asm.R0, asm.Word),
		asm.LoadMapPtr(asm.R1, pids.FD()),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, -4),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, "out"),
		asm.LoadMem(asm.R1, asm.R6, ctxCmd, asm.DWord),
		asm.Mov.Reg(asm.R2, asm.R1),
		asm.RSh.Imm(asm.R2, 8),
		asm.And.Imm(asm.R2, 0xff),
		asm.JEq.Imm(asm.R2, iocTypeKFD, "keep"),
		asm.JEq.Imm(asm.R2, iocTypeDRM, "keep"),
		asm.Ja.Label("out"),
		// value {start, fd, cmd, arg} at fp-40, key at fp-48
		asm.StoreMem(asm.RFP, -24, asm.R1, asm.DWord).WithSymbol("keep"),
		asm.LoadMem(asm.R1, asm.R6, ctxFD, asm.DWord),
		asm.StoreMem(asm.RFP, -32, asm.R1, asm.DWord),
		asm.LoadMem(asm.R1, asm.R6, ctxArg, asm.DWord),
		asm.StoreMem(asm.RFP, -16, asm.R1, asm.DWord),
		asm.FnKtimeGetNs.Call(),
		asm.StoreMem(asm.RFP, -40, asm.R0, asm.DWord),
		asm.StoreMem(asm.RFP, -48, asm.R7, asm.DWord),
		asm.LoadMapPtr(asm.R1, inflight.FD()),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, -48),
		asm.Mov.Reg(asm.R3, asm.RFP),
		asm.Add.Imm(asm.R3, -40),
		asm.Mov.Imm(asm.R4, 0),
		asm.FnMapUpdateElem.Call(),
		asm.Mov.Imm(asm.R0, 0).WithSymbol("out"),
		asm.Return(),
	}
}

// exitProg emits one record for an ioctl recorded by enterProg.
func exitProg(inflight, events *ebpf.Map) asm.Instructions {
	return asm.Instructions{
		asm.Mov.Reg(asm.R6, asm.R1),
		asm.FnGetCurrentPidTgid.Call(),
		asm.Mov.Reg(asm.R7, asm.R0),
		asm.StoreMem(asm.RFP, -8, asm.R0, asm.DWord),
		asm.LoadMapPtr(asm.R1, inflight.FD()),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, -8),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, "out"),
		asm.Mov.Reg(asm.R8, asm.R0),
		asm.LoadMapPtr(asm.R1, events.FD()),
		asm.Mov.Imm(asm.R2, recSize),
		asm.Mov.Imm(asm.R3, 0),
		asm.FnRingbufReserve.Call(),
		asm.JEq.Imm(asm.R0, 0, "del"),
		asm.Mov.Reg(asm.R9, asm.R0),
		// header
		asm.LoadMem(asm.R1, asm.R8, 0, asm.DWord),
		asm.StoreMem(asm.R9, offStart, asm.R1, asm.DWord),
		asm.FnKtimeGetNs.Call(),
		asm.LoadMem(asm.R1, asm.R8, 0, asm.DWord),
		asm.Sub.Reg(asm.R0, asm.R1),
		asm.StoreMem(asm.R9, offDur, asm.R0, asm.DWord),
		asm.StoreMem(asm.R9, offPidTgid, asm.R7, asm.DWord),
		asm.LoadMem(asm.R1, asm.R8, 8, asm.DWord),
		asm.StoreMem(asm.R9, offFD, asm.R1, asm.DWord),
		asm.LoadMem(asm.R1, asm.R8, 16, asm.DWord),
		asm.StoreMem(asm.R9, offCmd, asm.R1, asm.DWord),
		asm.LoadMem(asm.R1, asm.R8, 24, asm.DWord),
		asm.StoreMem(asm.R9, offArg, asm.R1, asm.DWord),
		asm.LoadMem(asm.R1, asm.R6, ctxRet, asm.DWord),
		asm.StoreMem(asm.R9, offRet, asm.R1, asm.DWord),
		asm.StoreImm(asm.R9, offFlags, 0, asm.Word),
		asm.StoreImm(asm.R9, offExtraLen, 0, asm.Word),
		// argument struct: _IOC_SIZE(cmd) clamped to maxArg
		asm.LoadMem(asm.R2, asm.R8, 16, asm.DWord),
		asm.RSh.Imm(asm.R2, 16),
		asm.And.Imm(asm.R2, 0x3fff),
		asm.JLE.Imm(asm.R2, maxArg, "sized"),
		asm.Mov.Imm(asm.R2, maxArg),
		asm.StoreMem(asm.R9, offSize, asm.R2, asm.Word).WithSymbol("sized"),
		asm.Mov.Reg(asm.R1, asm.R9),
		asm.Add.Imm(asm.R1, offData),
		asm.LoadMem(asm.R3, asm.R8, 24, asm.DWord),
		asm.FnProbeReadUser.Call(),
		asm.JEq.Imm(asm.R0, 0, "extra"),
		asm.StoreImm(asm.R9, offFlags, flagArgFault, asm.Word),
		asm.StoreImm(asm.R9, offSize, 0, asm.Word),
		asm.Ja.Label("submit"),
		// pointed-to arrays
		asm.LoadMem(asm.R1, asm.R8, 16, asm.DWord).WithSymbol("extra"),
		asm.And.Imm(asm.R1, 0xffff),
		asm.JEq.Imm(asm.R1, cmdWaitEvents, "wait"),
		asm.JEq.Imm(asm.R1, cmdMap, "map"),
		asm.JEq.Imm(asm.R1, cmdUnmap, "map"),
		asm.Ja.Label("submit"),
		asm.LoadMem(asm.R3, asm.R9, offData+0, asm.DWord).WithSymbol("wait"),
		asm.LoadMem(asm.R2, asm.R9, offData+8, asm.Word),
		asm.JLE.Imm(asm.R2, maxExtra/eventDataSize, "wait_n"),
		asm.Mov.Imm(asm.R2, maxExtra/eventDataSize),
		asm.Mul.Imm(asm.R2, eventDataSize).WithSymbol("wait_n"),
		asm.Ja.Label("copy"),
		asm.LoadMem(asm.R3, asm.R9, offData+8, asm.DWord).WithSymbol("map"),
		asm.LoadMem(asm.R2, asm.R9, offData+16, asm.Word),
		asm.JLE.Imm(asm.R2, maxExtra/4, "map_n"),
		asm.Mov.Imm(asm.R2, maxExtra/4),
		asm.Mul.Imm(asm.R2, 4).WithSymbol("map_n"),
		asm.StoreMem(asm.R9, offExtraLen, asm.R2, asm.Word).WithSymbol("copy"),
		asm.Mov.Reg(asm.R1, asm.R9),
		asm.Add.Imm(asm.R1, offExtra),
		asm.FnProbeReadUser.Call(),
		asm.JEq.Imm(asm.R0, 0, "submit"),
		asm.StoreImm(asm.R9, offExtraLen, 0, asm.Word),
		asm.Mov.Reg(asm.R1, asm.R9).WithSymbol("submit"),
		asm.Mov.Imm(asm.R2, 0),
		asm.FnRingbufSubmit.Call(),
		asm.LoadMapPtr(asm.R1, inflight.FD()).WithSymbol("del"),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, -8),
		asm.FnMapDeleteElem.Call(),
		asm.Mov.Imm(asm.R0, 0).WithSymbol("out"),
		asm.Return(),
	}
}
