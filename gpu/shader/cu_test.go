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

// TestDeviceMove: a work-group handing its room to the next one (handOver) moves it to the next CU
// in round-robin order, leaves the owner's resident waves as they were, and, when nothing fits,
// gives the room back and uncounts the waves; a dispatcher waiting for room is woken. A claim of
// several groups places as many as fit and counts the owner's waves for each one after the first.
func TestDeviceMove(t *testing.T) {
	d := NewDevice(DeviceConfig{CUs: 2, WavesPerCU: 4, VGPRsPerCU: 1 << 20, LDSPerCU: 1 << 20})
	n := groupNeed{waves: 4, vgprs: 8, owner: 7}
	a, _ := d.reserve(nil, n)
	b, _ := d.reserve(nil, n)
	if a != 0 || b != 1 || d.ResidentWaves(7) != 8 {
		t.Fatalf("reserve: CUs %d, %d, %d waves", a, b, d.ResidentWaves(7))
	}
	other := groupNeed{waves: 4, vgprs: 8, owner: 9}
	cu, freed := d.reserve(nil, other)
	if cu >= 0 || freed == nil {
		t.Fatalf("a full device placed a group on CU %d", cu)
	}
	move := func(from int, allowed []int) int {
		cus := []int{-2}
		if d.moveClaim([]int{from}, allowed, n, cus) == 0 {
			return -1
		}
		return cus[0]
	}
	if got := move(a, nil); got != 0 { // round robin: CU 1 is full, CU 0 is the one freed
		t.Errorf("move to CU %d, want 0", got)
	}
	select {
	case <-freed:
	default:
		t.Error("a waiting dispatcher was not woken by the room a move freed")
	}
	if g, w := d.Resident(); g != 2 || w != 8 || d.ResidentWaves(7) != 8 {
		t.Errorf("after a move: %d groups, %d waves, %d of the owner's", g, w, d.ResidentWaves(7))
	}
	if got := move(b, []int{5}); got != -1 { // no CU of the mask exists: nothing fits
		t.Errorf("move with no CU: %d", got)
	}
	if g, w := d.Resident(); g != 1 || w != 4 || d.ResidentWaves(7) != 4 {
		t.Errorf("after a failed move: %d groups, %d waves, %d of the owner's", g, w, d.ResidentWaves(7))
	}
	// A claim of 5 groups of 2 waves from the one group, on CU 0, of a fresh device: CU 0 and
	// CU 1 take two each; the owner's waves go from 2 to 8 (the first group in the ended one's
	// place, then 2 for each other).
	half := groupNeed{waves: 2, vgprs: 8, owner: 7}
	d2 := NewDevice(DeviceConfig{CUs: 2, WavesPerCU: 4, VGPRsPerCU: 1 << 20, LDSPerCU: 1 << 20})
	c0, _ := d2.reserve(nil, half)
	cus := make([]int, 5)
	if got := d2.moveClaim([]int{c0}, nil, half, cus); got != 4 || d2.ResidentWaves(7) != 8 {
		t.Errorf("claim of 5 where 4 fit: placed %d, %d waves of the owner's, want 4, 8", got, d2.ResidentWaves(7))
	}
	if g, w := d2.Resident(); g != 4 || w != 8 {
		t.Errorf("after a claim: %d groups, %d waves, want 4, 8", g, w)
	}
	d2.releaseAll(cus[:4], half)
	if g, w := d2.Resident(); g != 0 || w != 0 || d2.ResidentWaves(7) != 0 {
		t.Errorf("after releasing the claim: %d groups, %d waves, %d of the owner's", g, w, d2.ResidentWaves(7))
	}
}

// TestHWIDLocation: s_getreg HW_REG_HW_ID gives each wave the place of the CU its group runs on,
// numbered as amdkfd's CU mask maps bits to the chip (bit i: SE i mod SEs, SH (i/SEs) mod SHs, CU
// i/(SEs*SHs)), and the wave's index in its group in WAVE_ID; HIP's __smid reads CU_ID and SE_ID.
func TestHWIDLocation(t *testing.T) {
	code := asm(t, `
	s_getreg_b32 s3, hwreg(HW_REG_HW_ID)
	s_lshl_b32 s4, s2, 9
	v_lshlrev_b32 v1, 2, v0
	v_add_u32 v1, s4, v1
	v_mov_b32 v2, s3
	global_store_dword v1, v2, s[0:1]
	s_endpgm`)
	dev := NewDevice(DeviceConfig{CUs: 12, ShaderEngines: 3, SHsPerSE: 2})
	const groups = 24
	cuOf := make([]int, groups)
	b := func() []byte {
		m, _, err := runAsm(t, code, 64, 0, func(m *flatMem, p *DispatchParams) {
			m.mapRange(asmOut, 512*groups)
			p.GridSize = [3]uint32{128 * groups, 1, 1}
			p.WorkgroupSize = [3]uint16{128, 1, 1} // two waves per group
			p.Device = dev
			p.GroupDone = func(g uint64, cu int) { cuOf[g] = cu }
		})
		if err != nil {
			t.Fatal(err)
		}
		out := make([]byte, 512*groups)
		m.Read(asmOut, out)
		return out
	}()
	seen := map[uint32]bool{}
	for g := range groups {
		cu := cuOf[g]
		se, sh, id := uint32(cu%3), uint32(cu/3%2), uint32(cu/6)
		for item := 0; item < 128; item++ { // waves 0 and 1 of the group
			o := 512*g + 4*item
			v := uint32(b[o]) | uint32(b[o+1])<<8 | uint32(b[o+2])<<16 | uint32(b[o+3])<<24
			if v&0xf != uint32(item/64) || v>>8&0xf != id || v>>12&1 != sh || v>>13&7 != se {
				t.Fatalf("group %d on CU %d, item %d: HW_ID %#x, want wave %d, CU_ID %d, SH %d, SE %d", g, cu, item, v,
					item/64, id, sh, se)
			}
			seen[v] = true
		}
	}
	if len(seen) < 2 {
		t.Errorf("%d groups all reported one place: %v", groups, seen)
	}
}

// TestClaimSize: a claim is claimWaves waves' worth of short groups, at most maxClaim of them, and
// at most a 1/(2 x workers) share of the groups not yet admitted, so a dispatch's tail spreads
// over the workers.
func TestClaimSize(t *testing.T) {
	for _, c := range []struct {
		waves   int
		left    uint64
		workers int
		want    uint64
	}{
		{4, 1 << 20, 2, claimWaves / 4}, // vadd's 4-wave groups, a long dispatch
		{1, 1 << 20, 2, maxClaim},       // one-wave groups: bounded by maxClaim
		{4, 100, 2, 25},                 // a quarter of what is left with 2 workers
		{4, 100, 4, 13},                 // an eighth with 4, rounded up
		{4, 3, 2, 1},                    // the tail: one group at a time
		{4, 1, 2, 1},
		{16, 1 << 20, 1, claimWaves / 16},
		{5, 1 << 20, 2, (claimWaves + 4) / 5}, // rounded up to at least claimWaves waves
		{4, 1 << 20, 0, claimWaves / 4},       // no workers reported: taken as 1
	} {
		if got := claimSize(c.waves, c.left, c.workers); got != c.want {
			t.Errorf("claimSize(%d waves, %d left, %d workers) = %d, want %d", c.waves, c.left, c.workers, got, c.want)
		}
	}
}
