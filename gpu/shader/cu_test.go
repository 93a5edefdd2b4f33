package shader

import (
	"context"
	"testing"
	"time"
)

// TestResidentWavesByOwner: a dispatch's resident waves count against its Engine.Owner while they
// run, and against no other owner; none are left when it ends (kfd's cu_occupancy reads them).
func TestResidentWavesByOwner(t *testing.T) {
	dev := NewDevice(DefaultDeviceConfig(4))
	l := loadCO(t, "testdata/concurrency.cl")
	flag, out := l.alloc(4), l.alloc(4)
	kd := l.syms["wait_last.kd"]
	ka := l.alloc(256)
	l.mem.Write(ka, args(flag, out))
	grid := [3]uint32{64, 1, 1} // one group of one wave: group 0 spins until the host sets the flag
	pkt := l.packet(grid, [3]uint16{64, 1, 1}, kd, ka)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := Dispatch(ctx, l.mem, DispatchParams{GridSize: grid, WorkgroupSize: [3]uint16{64, 1, 1},
			KernelObject: kd, KernargAddress: ka, DispatchPacket: pkt, Apertures: DefaultApertures,
			Engine: Engine{Device: dev, Owner: 7}})
		done <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for dev.ResidentWaves(7) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no wave of owner 7 became resident")
		}
		time.Sleep(time.Millisecond)
	}
	if n := dev.ResidentWaves(8); n != 0 {
		t.Errorf("owner 8 has %d resident waves", n)
	}
	if w := dev.ResidentWaves(7); w != 1 {
		t.Errorf("owner 7: %d resident waves, want 1", w)
	}
	l.mem.Write(flag, []byte{1, 0, 0, 0})
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := dev.ResidentWaves(7); n != 0 {
		t.Errorf("owner 7 has %d resident waves after the dispatch", n)
	}
	if dev.WavesPerCU() != 32 {
		t.Errorf("gfx90a wave slots per CU %d, want 32", dev.WavesPerCU())
	}
}
