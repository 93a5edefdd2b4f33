package amdgpu

import (
	"encoding/binary"
	"math"
	"strconv"
	"strings"
	"time"
)

// MetricsSize is sizeof(struct gpu_metrics_v1_3) (kgd_pp_interface.h).
const MetricsSize = 120

// Offsets of the gpu_metrics_v1_3 fields kfdemu fills (kgd_pp_interface.h; natural alignment:
// energy_accumulator at 24, throttle_status at 68, firmware_timestamp at 96).
const (
	mHeader             = 0  // metrics_table_header: structure_size u16, format_revision u8, content_revision u8
	mTempEdge           = 4  // u16 temperature_edge .. temperature_vrmem: six u16, °C
	mAvgGfxActivity     = 16 // u16 %
	mAvgUmcActivity     = 18 // u16 %
	mAvgMMActivity      = 20 // u16 %
	mAvgSocketPower     = 22 // u16 W
	mEnergyAcc          = 24 // u64, 15.259 µJ units
	mSystemClock        = 32 // u64 ns
	mAvgGfxclk          = 40 // seven u16 average clocks (gfx, soc, uclk, vclk0, dclk0, vclk1, dclk1), MHz
	mCurGfxclk          = 54 // seven u16 current clocks, MHz
	mThrottleStatus     = 68 // u32
	mFanSpeed           = 72 // u16
	mPcieWidth          = 74 // u16 lanes
	mPcieSpeed          = 76 // u16 0.1 GT/s
	mGfxActivityAcc     = 80 // u32
	mMemActivityAcc     = 84 // u32
	mTempHBM            = 88 // four u16 °C
	mFirmwareTimestamp  = 96 // u64, 10 ns
	mVoltageSoc         = 104
	mIndepThrottleState = 112 // u64
)

// energyUnit is the energy accumulator's unit in joules (15.259 µJ, 2^-16 J).
const energyUnit = 1.0 / 65536

// Metrics renders gpu_metrics as aldebaran_get_gpu_metrics fills gpu_metrics_v1_3: fields the
// SMU does not report stay 0xff (smu_cmn_init_soft_gpu_metrics), clocks of the media engines are 0
// (idle), activity accumulators count busy percent per millisecond (the PMFW adds the activity
// percentage every 1 ms sample).
func (d *Device) Metrics() []byte {
	b := make([]byte, MetricsSize)
	for i := range b {
		b[i] = 0xff
	}
	le := binary.LittleEndian
	le.PutUint16(b[mHeader:], MetricsSize)
	b[mHeader+2], b[mHeader+3] = 1, 3
	e, j, m := d.Temps()
	d.mu.Lock()
	joules := d.energy
	d.mu.Unlock()
	for i, t := range []int{e, j, m, j, j, m} { // edge, hotspot, mem, vrgfx, vrsoc, vrmem
		le.PutUint16(b[mTempEdge+2*i:], uint16(t/1000))
	}
	busy := uint16(d.BusyPercent())
	le.PutUint16(b[mAvgGfxActivity:], busy)
	le.PutUint16(b[mAvgUmcActivity:], busy)
	le.PutUint16(b[mAvgMMActivity:], 0)
	le.PutUint16(b[mAvgSocketPower:], uint16(d.Power()/1e6))
	le.PutUint64(b[mEnergyAcc:], uint64(joules/energyUnit))
	now := d.now()
	le.PutUint64(b[mSystemClock:], uint64(now.Sub(d.born).Nanoseconds()))
	clocks := []uint32{d.Clock(SCLK), d.Clock(SOCCLK), d.Clock(MCLK), 0, 0, 0, 0}
	for i, c := range clocks {
		le.PutUint16(b[mAvgGfxclk+2*i:], uint16(c))
		le.PutUint16(b[mCurGfxclk+2*i:], uint16(c))
	}
	le.PutUint32(b[mThrottleStatus:], 0)
	le.PutUint16(b[mFanSpeed:], 0)
	le.PutUint16(b[mPcieWidth:], uint16(d.P.LinkWidth))
	le.PutUint16(b[mPcieSpeed:], uint16(math.Round(linkGTs(d.P.LinkSpeed)*10)))
	var busyTotal time.Duration
	if mt := d.meter(); mt != nil {
		busyTotal = mt.Total()
	}
	le.PutUint32(b[mGfxActivityAcc:], uint32(busyTotal.Milliseconds()*100))
	le.PutUint32(b[mMemActivityAcc:], uint32(busyTotal.Milliseconds()*100))
	for i := range 4 {
		le.PutUint16(b[mTempHBM+2*i:], uint16(m/1000))
	}
	le.PutUint64(b[mFirmwareTimestamp:], uint64(now.Sub(d.born).Nanoseconds()/10))
	le.PutUint64(b[mIndepThrottleState:], 0)
	return b
}

// linkGTs parses "16.0 GT/s PCIe".
func linkGTs(s string) float64 {
	f, _ := strconv.ParseFloat(strings.Fields(s + " 0")[0], 64)
	return f
}
