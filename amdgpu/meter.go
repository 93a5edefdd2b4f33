package amdgpu

import (
	"sync"
	"time"
)

// Meter measures how long a GPU's engines run work: Begin when an engine starts a piece of work
// (a kernel dispatch), End when it finishes. Several engines may be busy at once; the GPU is busy
// while at least one is. It keeps the cumulative busy time exactly and the busy time of recent
// slots of SlotLen, so the share of any window up to Slots*SlotLen is known without a ticking
// goroutine: everything is computed when an engine changes state or a reader asks (the SMU's
// activity counters are read the same way by amdgpu, on demand).
type Meter struct {
	mu     sync.Mutex
	active int
	since  time.Time     // start of the current busy period (active > 0)
	total  time.Duration // busy time of closed periods
	slot   [Slots]time.Duration
	epoch  [Slots]int64 // absolute slot number each entry holds
	now    func() time.Time
}

// Slot geometry: 40 slots of 50 ms keep 2 s of history at 50 ms resolution.
const (
	Slots   = 40
	SlotLen = 50 * time.Millisecond
)

// NewMeter returns an idle meter; now (nil: time.Now) is its clock.
func NewMeter(now func() time.Time) *Meter {
	if now == nil {
		now = time.Now
	}
	return &Meter{now: now}
}

// Begin marks an engine busy and returns the matching End (call it exactly once).
func (m *Meter) Begin() (end func()) {
	m.mu.Lock()
	if m.active == 0 {
		m.since = m.now()
	}
	m.active++
	m.mu.Unlock()
	var once sync.Once
	return func() { once.Do(m.end) }
}

func (m *Meter) end() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.active--
	if m.active == 0 {
		t := m.now()
		m.add(m.since, t)
		m.total += t.Sub(m.since)
	}
}

// add spreads the busy period [a, b) over the slots it covers (under mu).
func (m *Meter) add(a, b time.Time) {
	for a.Before(b) {
		k := a.UnixNano() / int64(SlotLen)
		slotEnd := time.Unix(0, (k+1)*int64(SlotLen))
		e := b
		if slotEnd.Before(e) {
			e = slotEnd
		}
		i := k % Slots
		if m.epoch[i] != k {
			m.epoch[i], m.slot[i] = k, 0
		}
		m.slot[i] += e.Sub(a)
		a = e
	}
}

// Total is the cumulative busy time up to now.
func (m *Meter) Total() time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.total
	if m.active > 0 {
		t += m.now().Sub(m.since)
	}
	return t
}

// Share is the fraction (0..1) of the window w (at most Slots*SlotLen) ending now in which the
// GPU was busy. Slots partly inside the window count in proportion.
func (m *Meter) Share(w time.Duration) float64 {
	if w <= 0 {
		return 0
	}
	w = min(w, Slots*SlotLen)
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	start := now.Add(-w)
	var busy time.Duration
	for k := start.UnixNano() / int64(SlotLen); k <= now.UnixNano()/int64(SlotLen); k++ {
		i := k % Slots
		if m.epoch[i] != k || m.slot[i] == 0 {
			continue
		}
		s0, s1 := time.Unix(0, k*int64(SlotLen)), time.Unix(0, (k+1)*int64(SlotLen))
		in := minTime(s1, now).Sub(maxTime(s0, start))
		busy += time.Duration(float64(m.slot[i]) * float64(in) / float64(SlotLen))
	}
	if m.active > 0 {
		busy += now.Sub(maxTime(m.since, start))
	}
	return min(max(float64(busy)/float64(w), 0), 1)
}

// Active reports whether an engine is busy now.
func (m *Meter) Active() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.active > 0
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
