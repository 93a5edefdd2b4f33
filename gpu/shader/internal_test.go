package shader

import (
	"errors"
	"strings"
	"testing"
)

// panicMem panics on a write at va: a bug below an instruction's routine.
type panicMem struct {
	*flatMem
	va uint64
}

func (m *panicMem) Write(va uint64, p []byte) error {
	if va == m.va {
		panicInMemory()
	}
	return m.flatMem.Write(va, p)
}

//go:noinline
func panicInMemory() { panic("test: memory bug") }

// TestInternalErrorStack: a panic inside an instruction stops the wave with ErrInternal, and the
// error carries the goroutine's stack at the panic (the daemon logs it: the panic value alone
// rarely names the routine).
func TestInternalErrorStack(t *testing.T) {
	code := asm(t, `
	s_mov_b32 s8, 0xcccc
	s_store_dword s8, s[0:1], 0x40
	s_endpgm
`)
	old := asmMemory
	asmMemory = func(m *flatMem) Memory { return &panicMem{flatMem: m, va: asmOut + 0x40} }
	defer func() { asmMemory = old }()
	_, _, err := runAsm(t, code, 1, 0, nil)
	var we *WaveError
	if !errors.Is(err, ErrInternal) || !errors.As(err, &we) {
		t.Fatalf("dispatch: %v, want a WaveError with ErrInternal", err)
	}
	if !strings.Contains(err.Error(), "test: memory bug") || !strings.Contains(we.Inst, "s_store_dword") {
		t.Errorf("error %q: want the panic value and the instruction", err)
	}
	if !strings.Contains(string(we.Stack), "panicInMemory") {
		t.Errorf("stack does not name the panicking function:\n%s", we.Stack)
	}
}
