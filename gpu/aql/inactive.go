package aql

import "errors"

// Queue-inactive codes: the value the CP stores in amd_queue_t.queue_inactive_signal when it takes an
// AQL queue offline. ROCr 5.2.3 AqlQueue::DynamicScratchHandler decodes them: 1 (0x400 for wave32)
// is recoverable (it allocates scratch, fills amd_queue_t's scratch fields and stores 0 to restart
// the queue), 512 returns a single-use scratch allocation (AMD_QUEUE_PROPERTIES_USE_SCRATCH_ONCE),
// anything else is a queue error reported to the queue's error callback.
const (
	QueueInactiveInsufficientScratch           = 1
	QueueInactiveInvalidDim                    = 2   // HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS
	QueueInactiveInvalidGroupMemory            = 4   // HSA_STATUS_ERROR_INVALID_ALLOCATION
	QueueInactiveInvalidCode                   = 8   // HSA_STATUS_ERROR_INVALID_CODE_OBJECT
	QueueInactiveInvalidFormat                 = 32  // HSA_STATUS_ERROR_INVALID_PACKET_FORMAT
	QueueInactiveGroupTooLarge                 = 64  // HSA_STATUS_ERROR_INVALID_ARGUMENT
	QueueInactiveOutOfVGPRs                    = 128 // HSA_STATUS_ERROR_INVALID_ISA
	QueueInactiveVendorFormat                  = 256 // HSA_STATUS_ERROR_INVALID_PACKET_FORMAT
	QueueInactiveScratchReclaim                = 512
	QueueInactiveInsufficientScratchW32        = 0x400
	QueueInactiveMemoryViolation               = 0x20000000 // HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION
	QueueInactiveIllegalInstruction            = 0x40000000 // HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION
	QueueInactiveDebugTrap                     = 0x80000000 // HSA_STATUS_ERROR_EXCEPTION
	QueueInactiveTerminate              uint64 = 1 << 63    // ROCr's own wake-up of its handler (queue destruction, scratch retry)
)

// Queue error classes. The packet processor and the shader model mark their errors with one of these
// (errors.Is); QueueInactiveCode turns a queue error into the code the CP stores.
var (
	ErrInvalidDim         = errors.New("hsa: invalid dispatch dimensions")
	ErrInvalidGroupMemory = errors.New("hsa: invalid group memory")
	ErrInvalidCode        = errors.New("hsa: invalid kernel code")
	ErrInvalidFormat      = errors.New("hsa: invalid packet format")
	ErrVendorFormat       = errors.New("hsa: invalid vendor-specific packet")
	ErrGroupTooLarge      = errors.New("hsa: work-group too large")
	ErrOutOfVGPRs         = errors.New("hsa: out of VGPRs")
	ErrMemoryViolation    = errors.New("hsa: memory violation")
	ErrIllegalInstruction = errors.New("hsa: illegal instruction")
	ErrDebugTrap          = errors.New("hsa: debug trap")
)

// queueInactiveCodes is the one table from error class to queue-inactive code, most specific first:
// an error may carry several classes (a shader fault wrapped in a failed dispatch is a memory
// violation, not an illegal instruction), and the first match wins.
var queueInactiveCodes = [...]struct {
	class error
	code  uint64
}{
	{ErrMemoryViolation, QueueInactiveMemoryViolation},
	{ErrVendorFormat, QueueInactiveVendorFormat},
	{ErrInvalidFormat, QueueInactiveInvalidFormat},
	{ErrInvalidDim, QueueInactiveInvalidDim},
	{ErrInvalidGroupMemory, QueueInactiveInvalidGroupMemory},
	{ErrGroupTooLarge, QueueInactiveGroupTooLarge},
	{ErrOutOfVGPRs, QueueInactiveOutOfVGPRs},
	{ErrInvalidCode, QueueInactiveInvalidCode},
	{ErrDebugTrap, QueueInactiveDebugTrap},
	{ErrIllegalInstruction, QueueInactiveIllegalInstruction},
}

// QueueInactiveCode is the code for a queue error: that of its first class in the table, or
// QueueInactiveInvalidFormat for an error of no class (ROCr reports it as a bad packet).
func QueueInactiveCode(err error) uint64 {
	for _, c := range queueInactiveCodes {
		if errors.Is(err, c.class) {
			return c.code
		}
	}
	return QueueInactiveInvalidFormat
}

// NewError returns a sentinel error with text msg of the given class: errors.Is(e, class) holds
// (the text does not mention the class).
func NewError(msg string, class error) error { return &classError{msg: msg, class: class} }

// Classify returns err marked with class: same text, errors.Is(result, class) holds and the
// result unwraps to err.
func Classify(err error, class error) error { return &classified{err: err, class: class} }

type classError struct {
	msg   string
	class error
}

func (e *classError) Error() string        { return e.msg }
func (e *classError) Is(target error) bool { return target == e.class }

type classified struct {
	err, class error
}

func (e *classified) Error() string        { return e.err.Error() }
func (e *classified) Unwrap() error        { return e.err }
func (e *classified) Is(target error) bool { return target == e.class }
