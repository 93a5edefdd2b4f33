package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// The interpreter's figures per wall-clock second depend on how much CPU the host gives the VM: on
// the 2-core CI VM a hypervisor running other guests took 50-60 % of our vCPUs' time in some runs
// (/proc/stat's steal column), and the same binary measured 5 M wave-instructions/s in one hour and
// 20-38 M in another. So each interpreter run also measures the process's own CPU time
// (getrusage: every thread, the in-process daemon's workers included; steal is not in it) and
// the machine's stolen share over the same interval: wave-instructions per CPU-second is the rate
// per core the VM's neighbours do not change, and busy (CPU-seconds per wall-second) says how
// many cores the run kept working.

// cpuSample is the process's CPU time and the machine's CPU time counters at one moment.
type cpuSample struct {
	at          time.Time
	proc        time.Duration
	steal, all  uint64 // /proc/stat "cpu" line: stolen ticks, all ticks
	haveMachine bool
}

// cpuUse is what happened between two samples.
type cpuUse struct {
	Wall, CPU time.Duration
	// Steal is the share of all CPUs' time the hypervisor gave to others (0..1), -1 if unknown.
	Steal float64
}

// add is u and v together: their wall and CPU times summed, the stolen share weighted by wall
// time (unknown if either is).
func (u cpuUse) add(v cpuUse) cpuUse {
	if u.Wall == 0 && u.CPU == 0 {
		return v
	}
	s := -1.0
	if u.Steal >= 0 && v.Steal >= 0 && u.Wall+v.Wall > 0 {
		s = (u.Steal*u.Wall.Seconds() + v.Steal*v.Wall.Seconds()) / (u.Wall + v.Wall).Seconds()
	}
	return cpuUse{Wall: u.Wall + v.Wall, CPU: u.CPU + v.CPU, Steal: s}
}

// Busy is the CPUs the process kept working on average: CPU-seconds per wall-second.
func (u cpuUse) Busy() float64 {
	if u.Wall <= 0 {
		return 0
	}
	return u.CPU.Seconds() / u.Wall.Seconds()
}

// stealNote says how much of the machine's time was stolen, for a figure's note.
func (u cpuUse) stealNote() string {
	if u.Steal < 0 {
		return "stolen time unknown"
	}
	return fmt.Sprintf("%.0f %% of the machine's CPU time stolen by the hypervisor", 100*u.Steal)
}

func sampleCPU() cpuSample {
	s := cpuSample{at: time.Now()}
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) == nil {
		s.proc = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	if b, err := os.ReadFile("/proc/stat"); err == nil {
		s.steal, s.all, s.haveMachine = parseProcStat(b)
	}
	return s
}

// parseProcStat reads the first line of /proc/stat, "cpu user nice system idle iowait irq softirq
// steal guest guest_nice" (proc(5)), and returns the steal ticks and the sum of the first eight
// columns (guest time is already counted in user and nice).
func parseProcStat(b []byte) (steal, all uint64, ok bool) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	if !sc.Scan() {
		return 0, 0, false
	}
	f := bytes.Fields(sc.Bytes())
	if len(f) < 9 || string(f[0]) != "cpu" {
		return 0, 0, false
	}
	for i := 1; i <= 8; i++ {
		v, err := strconv.ParseUint(string(f[i]), 10, 64)
		if err != nil {
			return 0, 0, false
		}
		all += v
		if i == 8 {
			steal = v
		}
	}
	return steal, all, true
}

// since returns the use from s to now.
func (s cpuSample) since() cpuUse {
	e := sampleCPU()
	u := cpuUse{Wall: e.at.Sub(s.at), CPU: e.proc - s.proc, Steal: -1}
	if s.haveMachine && e.haveMachine && e.all > s.all {
		u.Steal = float64(e.steal-s.steal) / float64(e.all-s.all)
	}
	return u
}
