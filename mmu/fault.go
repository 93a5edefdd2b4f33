package mmu

import (
	"errors"
	"fmt"
	"time"

	"github.com/kfdemu/kfdemu/internal/hrtimer"
)

// Sentinel errors.
var (
	ErrAlign    = errors.New("mmu: address or size not page aligned")
	ErrRange    = errors.New("mmu: address range out of bounds")
	ErrInvalid  = errors.New("mmu: invalid argument")
	ErrOverlap  = errors.New("mmu: range overlaps a valid mapping")
	ErrClosed   = errors.New("mmu: closed")
	ErrBacking  = errors.New("mmu: bad backing")
	ErrNoSpace  = errors.New("mmu: physical window exhausted")
	ErrNotFound = errors.New("mmu: not found")
	ErrRemote   = errors.New("mmu: remote memory access failed")
	// ErrFault matches every *FaultError (errors.Is).
	ErrFault = errors.New("mmu: GPU page fault")
)

// Access is the kind of a memory access, as the UTCL2 reports it in the fault status.
type Access uint8

// Access kinds.
const (
	AccessRead Access = iota
	AccessWrite
	AccessExec
	AccessAtomic
	numAccess
)

var accessNames = [numAccess]string{"read", "write", "exec", "atomic"}

func (a Access) String() string {
	if a < numAccess {
		return accessNames[a]
	}
	return fmt.Sprintf("access(%d)", uint8(a))
}

// accessNeed is the PTE permission each access needs: read needs READABLE, write WRITEABLE,
// atomic both, exec EXECUTABLE.
var accessNeed = [numAccess]PTE{
	AccessRead:   PTEValid | PTEReadable,
	AccessWrite:  PTEValid | PTEWriteable,
	AccessExec:   PTEValid | PTEExecutable,
	AccessAtomic: PTEValid | PTEReadable | PTEWriteable,
}

// FaultKind says why a translation failed.
type FaultKind uint8

// Fault kinds. NotPresent and Protection are the translation faults GFX9 reports as retry faults
// when retry (XNACK) is on; the others are always fatal.
const (
	FaultNotPresent FaultKind = iota // no valid PTE
	FaultProtection                  // valid PTE without the permission the access needs
	FaultMisaligned                  // atomic or single-word access not naturally aligned
	FaultNoBacking                   // the PTE's physical address is in no Phys segment
	FaultClosed                      // the VM was closed (process teardown)
)

var faultKindNames = []string{"not-present", "protection", "misaligned", "no-backing", "vm-closed"}

func (k FaultKind) String() string {
	if int(k) < len(faultKindNames) {
		return faultKindNames[k]
	}
	return fmt.Sprintf("fault(%d)", uint8(k))
}

// Fault describes one GPU page fault (what gmc_v9_0_process_interrupt decodes from the IV entry
// and the L2 protection fault status).
type Fault struct {
	VA        uint64
	PASID     uint32
	GPU       uint32
	Access    Access
	Kind      FaultKind
	Retryable bool // a retry fault: the handler is called and may fix the page tables
}

// FaultError is returned by a Port access that ends in a fatal fault.
type FaultError struct{ Fault Fault }

func (e *FaultError) Error() string {
	f := e.Fault
	return fmt.Sprintf("mmu: GPU %d PASID %d: %s fault (%s) at %#x", f.GPU, f.PASID, f.Access, f.Kind, f.VA)
}

// Is makes errors.Is(err, ErrFault) true.
func (e *FaultError) Is(target error) bool { return target == ErrFault }

// Outcome is what became of a fault.
type Outcome uint8

// Outcomes.
const (
	OutcomeFatal     Outcome = iota // returned to the engine as *FaultError
	OutcomeRetry                    // the handler fixed it (or asked for a retry): walked again
	OutcomeCoalesced                // another Port was handling the same page: waited, walked again
	OutcomeFiltered                 // duplicate within the filter window: dropped, replayed later
)

var outcomeNames = []string{"fatal", "retry", "coalesced", "filtered"}

func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return fmt.Sprintf("outcome(%d)", uint8(o))
}

// FaultRecord is one entry of a VM's fault log.
type FaultRecord struct {
	Time    time.Time
	Fault   Fault
	Outcome Outcome
	Retries int // retries the access had made before this fault
}

// faultLogSize bounds the per-VM fault log.
const faultLogSize = 256

func (vm *VM) record(f Fault, o Outcome, retries int) { vm.recordAt(time.Now(), f, o, retries) }

func (vm *VM) recordAt(t time.Time, f Fault, o Outcome, retries int) {
	vm.logMu.Lock()
	vm.log[vm.logN%faultLogSize] = FaultRecord{Time: t, Fault: f, Outcome: o, Retries: retries}
	vm.logN++
	vm.logMu.Unlock()
	switch o {
	case OutcomeFatal:
		vm.fatal.Add(1)
	case OutcomeRetry:
		vm.retries.Add(1)
	}
}

// Faults returns the most recent faults (at most 256), oldest first.
func (vm *VM) Faults() []FaultRecord {
	vm.logMu.Lock()
	defer vm.logMu.Unlock()
	n := min(vm.logN, faultLogSize)
	out := make([]FaultRecord, 0, n)
	for i := vm.logN - n; i < vm.logN; i++ {
		out = append(out, vm.log[i%faultLogSize])
	}
	return out
}

// newFault is the fault of an access of kind acc at va whose walk found kind: a retry fault when
// retry faults are on and the kind is one the handler may fix.
func (vm *VM) newFault(va uint64, acc Access, kind FaultKind) Fault {
	return Fault{VA: va, PASID: vm.cfg.PASID, GPU: vm.cfg.GPU, Access: acc, Kind: kind,
		Retryable: vm.retry.Load() && (kind == FaultNotPresent || kind == FaultProtection)}
}

type pendingFault struct{ done chan struct{} }

// service runs the retry-fault path for f, called by a Port outside its access section with no
// mmu lock held. It returns whether the access should walk again and whether that walk counts as
// a retry. A fault on a page another Port is already handling waits for that resolution (the
// handler runs once). A duplicate the Filter drops is replayed after the filter window, as the
// UTCL2 replays a retry fault whose interrupt amdgpu_gmc_filter_faults discarded; the replay does
// not count as a retry (after the window the fault is new and reaches the handler).
func (vm *VM) service(f *Fault, retries int) (retry, counted bool) {
	vm.faults.Add(1)
	key := f.VA &^ pageMask
	vm.faultMu.Lock()
	if pf := vm.pending[key]; pf != nil {
		vm.faultMu.Unlock()
		<-pf.done
		vm.record(*f, OutcomeCoalesced, retries)
		return true, true
	}
	if !vm.filter.Add(f.PASID, f.VA) {
		vm.faultMu.Unlock()
		vm.record(*f, OutcomeFiltered, retries)
		hrtimer.Sleep(vm.filter.Window()) // 50 µs: time.Sleep would take 1 ms on an idle daemon
		return true, false
	}
	pf := &pendingFault{done: make(chan struct{})}
	vm.pending[key] = pf
	vm.faultMu.Unlock()

	retry = vm.callHandler(f, key, pf)
	if retry {
		vm.record(*f, OutcomeRetry, retries)
	} else {
		vm.record(*f, OutcomeFatal, retries)
	}
	return retry, true
}

func (vm *VM) callHandler(f *Fault, key uint64, pf *pendingFault) bool {
	defer func() {
		vm.faultMu.Lock()
		delete(vm.pending, key)
		vm.faultMu.Unlock()
		close(pf.done)
	}()
	return vm.cfg.Fault(f)
}

// serviceBatch is service for the first faults of a vectored access (Port.batchFaults), all at
// once: those whose page no access is servicing and that the filter lets through go to
// Config.FaultBatch in one call, in order, each recorded as service records it. The others (a page
// another Port is servicing, a duplicate page of fs, a fault the filter drops) are left to the
// access's own walk, which services them one at a time. It returns the faults it handled (sel),
// their indices in fs (si) and what the handler said of each (ok), reusing the slices' storage.
func (vm *VM) serviceBatch(fs, sel []Fault, si []int, ok []bool) ([]Fault, []int, []bool) {
	sel, si = sel[:0], si[:0]
	pf := &pendingFault{done: make(chan struct{})}
	vm.faultMu.Lock()
	for i := range fs {
		key := fs[i].VA &^ pageMask
		if vm.pending[key] != nil || !vm.filter.Add(fs[i].PASID, fs[i].VA) {
			continue
		}
		vm.pending[key] = pf
		sel, si = append(sel, fs[i]), append(si, i)
	}
	vm.faultMu.Unlock()
	if len(sel) == 0 {
		return sel, si, ok[:0]
	}
	vm.faults.Add(uint64(len(sel)))
	ok = append(ok[:0], make([]bool, len(sel))...)
	func() {
		defer func() {
			vm.faultMu.Lock()
			for _, f := range sel {
				delete(vm.pending, f.VA&^pageMask)
			}
			vm.faultMu.Unlock()
			close(pf.done)
		}()
		vm.cfg.FaultBatch(sel, ok)
	}()
	now := time.Now()
	for k, f := range sel {
		o := OutcomeFatal
		if ok[k] {
			o = OutcomeRetry
		}
		vm.recordAt(now, f, o, 0)
	}
	return sel, si, ok
}
