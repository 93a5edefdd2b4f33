package kmt

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/kfdemu/kfdemu/kfd/abi"
)

// EventType is HSA_EVENTTYPE / KFD_IOC_EVENT_*.
type EventType uint32

const (
	EventSignal            EventType = abi.KFD_IOC_EVENT_SIGNAL
	EventNodeChange        EventType = abi.KFD_IOC_EVENT_NODECHANGE
	EventDeviceStateChange EventType = abi.KFD_IOC_EVENT_DEVICESTATECHANGE
	EventHWException       EventType = abi.KFD_IOC_EVENT_HW_EXCEPTION
	EventSystem            EventType = abi.KFD_IOC_EVENT_SYSTEM_EVENT
	EventDebug             EventType = abi.KFD_IOC_EVENT_DEBUG_EVENT
	EventProfile           EventType = abi.KFD_IOC_EVENT_PROFILE_EVENT
	EventQueue             EventType = abi.KFD_IOC_EVENT_QUEUE_EVENT
	EventMemory            EventType = abi.KFD_IOC_EVENT_MEMORY
)

// eventPageSize is the signal page: KFD_SIGNAL_EVENT_LIMIT slots of 8 bytes.
const eventPageSize = abi.KFD_SIGNAL_EVENT_LIMIT * 8

// Event is a kfd event (hsaKmtCreateEvent). Signal events own slot Slot of the event page;
// MailboxVA (libhsakmt's HWData2) is the GPU address of that slot and TriggerData (HWData3) the
// value the GPU writes there: ROCr puts both in amd_signal_t.event_mailbox_ptr / event_id.
type Event struct {
	d           *Device
	ID          uint32
	Type        EventType
	ManualReset bool
	Slot        uint32
	TriggerData uint32
	MailboxVA   uint64
	destroyed   atomic.Bool
}

// CreateEvent creates an event (hsaKmtCreateEvent). On the first signal event of a process with a
// GPU the thunk allocates the event page in GTT memory, maps it to every GPU and passes its handle
// (events.c, dGPU path); without a GPU the driver's own page is mapped from /dev/kfd.
func (d *Device) CreateEvent(t EventType, manualReset, signaled bool) (*Event, error) {
	if err := d.check(); err != nil {
		return nil, err
	}
	a := abi.CreateEventArgs{EventType: uint32(t)}
	if !manualReset {
		a.AutoReset = 1
	}
	// libhsakmt serializes event creation (and the one-time page allocation) with a mutex.
	d.evMu.Lock()
	defer d.evMu.Unlock()
	newPage := false
	if (t == EventSignal || t == EventDebug) && d.eventPage == nil && !d.drvPage.valid() && len(d.gpus) > 0 {
		page, err := d.AllocGTT(d.gpus[0], eventPageSize, Uncached|Coherent)
		if err != nil {
			return nil, err
		}
		if err := page.Map(d.gpus...); err != nil {
			page.Free()
			return nil, err
		}
		d.eventPage, newPage = page, true
		a.EventPageOffset = page.Handle
	}
	if err := ioctl(d.kfd, "CREATE_EVENT", abi.AMDKFD_IOC_CREATE_EVENT, &a); err != nil {
		if newPage {
			d.eventPage.Free()
			d.eventPage = nil
		}
		return nil, err
	}
	e := &Event{d: d, ID: a.EventID, Type: t, ManualReset: manualReset, Slot: a.EventSlotIndex, TriggerData: a.EventTriggerData}
	if t == EventSignal || t == EventDebug {
		switch {
		case d.eventPage != nil:
			e.MailboxVA = d.eventPage.VA + 8*uint64(e.Slot)
		default:
			if !d.drvPage.valid() && a.EventPageOffset != 0 {
				r, err := mmapShared(d.kfd, int64(a.EventPageOffset), eventPageSize)
				if err != nil {
					return nil, fmt.Errorf("kmt: mmap of the driver's event page: %w", err)
				}
				d.drvPage = r
			}
			if d.drvPage.valid() {
				e.MailboxVA = d.drvPage.va() + 8*uint64(e.Slot)
			}
		}
	}
	d.mu.Lock()
	d.events[e.ID] = e
	d.mu.Unlock()
	if signaled && t != EventSystem {
		sa := abi.SetEventArgs{EventID: e.ID}
		if err := ioctl(d.kfd, "SET_EVENT", abi.AMDKFD_IOC_SET_EVENT, &sa); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// Destroy destroys the event.
func (e *Event) Destroy() error {
	if e.destroyed.Swap(true) {
		return ErrEventDestroyed
	}
	if err := e.d.check(); err != nil {
		return err
	}
	a := abi.DestroyEventArgs{EventID: e.ID}
	err := ioctl(e.d.kfd, "DESTROY_EVENT", abi.AMDKFD_IOC_DESTROY_EVENT, &a)
	e.d.mu.Lock()
	delete(e.d.events, e.ID)
	e.d.mu.Unlock()
	return err
}

// Set signals the event (SET_EVENT).
func (e *Event) Set() error {
	if e.destroyed.Load() {
		return ErrEventDestroyed
	}
	if err := e.d.check(); err != nil {
		return err
	}
	a := abi.SetEventArgs{EventID: e.ID}
	return ioctl(e.d.kfd, "SET_EVENT", abi.AMDKFD_IOC_SET_EVENT, &a)
}

// Reset unsignals the event (RESET_EVENT).
func (e *Event) Reset() error {
	if e.destroyed.Load() {
		return ErrEventDestroyed
	}
	if err := e.d.check(); err != nil {
		return err
	}
	a := abi.ResetEventArgs{EventID: e.ID}
	return ioctl(e.d.kfd, "RESET_EVENT", abi.AMDKFD_IOC_RESET_EVENT, &a)
}

// EventData is what WAIT_EVENTS copied back for one event.
type EventData struct {
	Event *Event
	// Memory is set for a memory exception event that fired (kfd_hsa_memory_exception_data).
	Memory *abi.HSAMemoryExceptionData
	// HW is set for a hardware exception event that fired (kfd_hsa_hw_exception_data).
	HW *abi.HSAHWExceptionData
}

// Infinite is the timeout that never expires.
const Infinite time.Duration = -1

// timeoutMS converts a wait timeout to WAIT_EVENTS milliseconds (0xffffffff = forever).
func timeoutMS(d time.Duration) uint32 {
	if d < 0 {
		return 0xffffffff
	}
	ms := (d + time.Millisecond - 1) / time.Millisecond
	if ms >= 0xffffffff {
		return 0xfffffffe
	}
	return uint32(ms)
}

// Wait waits for e (hsaKmtWaitOnEvent). It reports whether the event was signalled before the
// timeout (0 polls, Infinite waits forever).
func (e *Event) Wait(timeout time.Duration) (bool, error) {
	ok, _, err := e.d.WaitEvents([]*Event{e}, true, timeout)
	return ok, err
}

// WaitEvents waits for any or all of evs (hsaKmtWaitOnMultipleEvents). completed is false on
// timeout. data has one entry per event, with the exception data of those that carry it.
func (d *Device) WaitEvents(evs []*Event, all bool, timeout time.Duration) (completed bool, data []EventData, err error) {
	if err := d.check(); err != nil {
		return false, nil, err
	}
	if len(evs) == 0 {
		return false, nil, fmt.Errorf("%w: no events", ErrInvalidArgument)
	}
	raw := make([]abi.EventData, len(evs))
	for i, e := range evs {
		if e == nil || e.destroyed.Load() {
			return false, nil, ErrEventDestroyed
		}
		raw[i].EventID = e.ID
	}
	var pin runtime.Pinner
	a := abi.WaitEventsArgs{EventsPtr: addrOf(raw, &pin), NumEvents: uint32(len(raw)), Timeout: timeoutMS(timeout)}
	if all {
		a.WaitForAll = 1
	}
	err = ioctl(d.kfd, "WAIT_EVENTS", abi.AMDKFD_IOC_WAIT_EVENTS, &a)
	pin.Unpin()
	if err != nil {
		return false, nil, err
	}
	if a.WaitResult == abi.KFD_IOC_WAIT_RESULT_FAIL {
		return false, nil, fmt.Errorf("kmt: AMDKFD_IOC_WAIT_EVENTS: wait_result FAIL")
	}
	data = make([]EventData, len(evs))
	for i, e := range evs {
		data[i].Event = e
		u := raw[i].Union[:]
		switch e.Type {
		case EventMemory:
			m := abi.HSAMemoryExceptionData{VA: binary.LittleEndian.Uint64(u[16:]),
				GPUID: binary.LittleEndian.Uint32(u[24:]), ErrorType: binary.LittleEndian.Uint32(u[28:])}
			m.Failure.NotPresent, m.Failure.ReadOnly = binary.LittleEndian.Uint32(u[0:]), binary.LittleEndian.Uint32(u[4:])
			m.Failure.NoExecute, m.Failure.Imprecise = binary.LittleEndian.Uint32(u[8:]), binary.LittleEndian.Uint32(u[12:])
			if m.GPUID != 0 {
				data[i].Memory = &m
			}
		case EventHWException:
			h := abi.HSAHWExceptionData{ResetType: binary.LittleEndian.Uint32(u[0:]), ResetCause: binary.LittleEndian.Uint32(u[4:]),
				MemoryLost: binary.LittleEndian.Uint32(u[8:]), GPUID: binary.LittleEndian.Uint32(u[12:])}
			if h.GPUID != 0 {
				data[i].HW = &h
			}
		}
	}
	return a.WaitResult == abi.KFD_IOC_WAIT_RESULT_COMPLETE, data, nil
}
