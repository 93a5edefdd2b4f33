package shader

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"testing"
	"time"
)

// suspendKernel stores its work-group id at out[id] after a 20000-round scalar loop (60K
// instructions per wave); s[0:1] is the kernarg pointer, whose first qword is out.
var suspendKernel = []uint32{
	0xC0060100, 0x00000000, // s_load_dwordx2 s[4:5], s[0:1], 0x0
	0xBE8A00FF, 20000, // s_mov_b32 s10, 20000
	0x808A810A, 0xBF07800A, 0xBF85FFFD, // L: s_sub_u32 s10, s10, 1; s_cmp_lg_u32 s10, 0; s_cbranch_scc1 L
	0xBF8CC07F,             // s_waitcnt lgkmcnt(0)
	0x7E000202, 0x8E038202, // v_mov_b32 v0, s2; s_lshl_b32 s3, s2, 2
	0x7E020203,             // v_mov_b32 v1, s3
	0xDC708000, 0x00040001, // global_store_dword v1, v0, s[4:5]
	0xBF810000, // s_endpgm
}

func suspendSetup(t *testing.T, groups int) (*flatMem, DispatchParams) {
	return suspendSetupOf(t, groups, suspendKernel)
}

func suspendSetupOf(t *testing.T, groups int, code []uint32) (*flatMem, DispatchParams) {
	m, p := miniKernel(t, code)
	const ka, out = 0x8000, 0x10000
	m.mapRange(ka, 0x1000)
	m.mapRange(out, uint64(4*groups+4095)&^4095)
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], out)
	m.Write(ka, b[:])
	p.KernargAddress = ka
	p.GridSize[0] = uint32(64 * groups)
	p.MaxWaveInstructions = 0
	// One CU with room for 4 groups: most groups wait for admission, so suspensions find both
	// resident groups mid-loop and groups not admitted yet.
	p.Device = NewDevice(DeviceConfig{CUs: 1, WavesPerCU: 4, VGPRsPerCU: 4 * 512, LDSPerCU: 64 << 10})
	return m, p
}

func outOf(m *flatMem, groups int) []byte {
	b := make([]byte, 4*groups)
	m.Read(0x10000, b)
	return b
}

// TestSuspendInPlace: a Suspendable dispatch whose context ends is suspended within a bounded
// number of instructions (not at a work-group boundary), runs nothing while suspended, releases
// its CU, and Resume continues it exactly: over many suspensions, the output and the wave
// instruction count equal an uninterrupted run's.
func TestSuspendInPlace(t *testing.T) {
	suspendInPlace(t, 48, suspendKernel, nil, 2*time.Millisecond)
}

// TestSuspendInPlaceShortGroups is TestSuspendInPlace with 8000 work-groups of 308 instructions
// on a device with room for claims (handOver): suspensions find goroutines in the middle of
// their claims, whose groups not yet started must park too.
func TestSuspendInPlaceShortGroups(t *testing.T) {
	code := append([]uint32(nil), suspendKernel...)
	code[3] = 100 // rounds of the loop
	for _, workers := range []int{1, 2} {
		SetWorkers(workers)
		suspendInPlace(t, 8000, code, NewDevice(DefaultDeviceConfig(4)), 200*time.Microsecond)
	}
	SetWorkers(0)
}

func suspendInPlace(t *testing.T, groups int, code []uint32, dev *Device, every time.Duration) {
	ref, p := suspendSetupOf(t, groups, code)
	if dev != nil {
		p.Device = dev
	}
	want, err := Dispatch(context.Background(), ref, p)
	if err != nil {
		t.Fatal(err)
	}
	for g := range groups {
		if v := binary.LittleEndian.Uint32(outOf(ref, groups)[4*g:]); v != uint32(g) {
			t.Fatalf("reference out[%d] = %d", g, v)
		}
	}

	m, p := suspendSetupOf(t, groups, code)
	if dev != nil {
		p.Device = dev
	}
	p.Suspendable = true
	var total Stats
	suspensions, boundaries := 0, 0
	var s *Suspended
	for {
		ctx, cancel := context.WithTimeout(context.Background(), every)
		var st Stats
		if s == nil {
			st, err = Dispatch(ctx, m, p)
		} else {
			st, err = Resume(ctx, s, nil)
		}
		cancel()
		total.WaveInstructions += st.WaveInstructions
		total.Groups += st.Groups
		var se *SuspendedError
		var pe *PreemptedError
		if errors.As(err, &pe) && !pe.MidGroup {
			// Every resident group ended before it could park: the dispatch stopped at a
			// work-group boundary, and goes on from there as the CP restarts it (kfd's
			// preemptState.save).
			p.StartGroup, s = pe.NextGroup, nil
			boundaries++
			continue
		}
		if !errors.As(err, &se) {
			break
		}
		suspensions++
		s = se.S
		if g, w := p.Device.Resident(); g != 0 || w != 0 {
			t.Fatalf("suspended dispatch holds %d groups / %d waves of CU room", g, w)
		}
		if w, h := threadWant.Load(), threadHeld.Load(); w != 0 || h != 0 {
			t.Fatalf("suspended dispatch: %d goroutines counted as wanting a host thread, %d tokens as held (threads.go)", w, h)
		}
		before := outOf(m, groups)
		time.Sleep(time.Millisecond)
		if !bytes.Equal(before, outOf(m, groups)) {
			t.Fatal("a suspended dispatch stored to memory")
		}
	}
	if err != nil {
		t.Fatalf("resumed dispatch: %v", err)
	}
	if w, h := threadWant.Load(), threadHeld.Load(); w != 0 || h != 0 {
		t.Fatalf("after the dispatch: %d goroutines counted as wanting a host thread, %d tokens as held", w, h)
	}
	if suspensions < 2 {
		t.Fatalf("only %d suspensions: the test did not exercise them", suspensions)
	}
	if !bytes.Equal(outOf(m, groups), outOf(ref, groups)) || total.WaveInstructions != want.WaveInstructions || total.Groups != uint64(groups) {
		t.Errorf("after %d suspensions: %d instructions (uninterrupted %d), %d groups, output equal %v", suspensions,
			total.WaveInstructions, want.WaveInstructions, total.Groups, bytes.Equal(outOf(m, groups), outOf(ref, groups)))
	}
	t.Logf("%d suspensions, %d stops at a work-group boundary, %d wave instructions", suspensions, boundaries, total.WaveInstructions)
}

// TestSuspendedAbort: Abort ends a suspended dispatch and frees what it held; Kill during a Resume
// stops it inside its groups as without suspension.
func TestSuspendedAbort(t *testing.T) {
	m, p := suspendSetup(t, 16)
	p.Suspendable = true
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	_, err := Dispatch(ctx, m, p)
	var se *SuspendedError
	if !errors.As(err, &se) {
		t.Fatalf("not suspended: %v", err)
	}
	se.S.Abort()
	if g, w := p.Device.Resident(); g != 0 || w != 0 {
		t.Fatalf("after Abort: %d groups / %d waves resident", g, w)
	}

	_, err = Dispatch(ctx, m, p) // ctx already ended: suspended before anything ran
	if !errors.As(err, &se) {
		t.Fatalf("not suspended: %v", err)
	}
	kill := make(chan struct{})
	close(kill)
	_, err = Resume(context.Background(), se.S, kill)
	var pe *PreemptedError
	if !errors.As(err, &pe) {
		t.Fatalf("killed resume: %v", err)
	}
}

// TestKillWhileSuspending: a kill that arrives while a suspension is under way (groups parking,
// others waiting for the one worker, which another dispatch also wants) ends the dispatch and
// frees its CU. It covers the path of the take() fix (a killed group waiting for a worker must
// not try to park again: its suspension channel stays closed, so it spun there), but it did not
// reproduce that hang, which needs the scheduling of a real run: kfdtest 6.2.4
// KFDCWSRTest.InterruptRestore (2 runs in 12 hung in DESTROY_QUEUE before, 0 in 20 after; CI
// runs it from the expected list).
func TestKillWhileSuspending(t *testing.T) {
	defer SetWorkers(Workers())
	SetWorkers(1)
	for i := range 40 {
		busyM, busy := suspendSetup(t, 64) // holds the one worker, yielding it at quanta
		busyDone := make(chan struct{})
		go func() { Dispatch(context.Background(), busyM, busy); close(busyDone) }()
		m, p := suspendSetup(t, 16)
		p.Suspendable = true
		kill := make(chan struct{})
		p.Kill = kill
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := Dispatch(ctx, m, p)
			done <- err
		}()
		time.Sleep(time.Duration(i%4) * 200 * time.Microsecond)
		cancel()
		time.Sleep(time.Duration(i%3) * 100 * time.Microsecond)
		close(kill)
		select {
		case err := <-done:
			var se *SuspendedError
			if errors.As(err, &se) {
				se.S.Abort()
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("run %d: the dispatch did not end after kill during a suspension", i)
		}
		if g, w := p.Device.Resident(); g != 0 || w != 0 {
			t.Fatalf("run %d: %d groups / %d waves still resident", i, g, w)
		}
		<-busyDone
	}
}
