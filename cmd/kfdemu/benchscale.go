package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"time"

	"github.com/kfdemu/kfdemu/fs/nsexec"
)

// Scale figures (kfdemu bench --scale N, TestScale): N client processes (re-executions of this
// binary, benchclient.go), each with one AQL queue and scaleMemMiB of VRAM allocated and mapped
// on GPU i mod the GPU count, all make barrier round trips at once; the daemon's RSS and goroutine
// count are taken before the clients, with them and after they exit, and the daemon must then
// hold nothing (stats file: 0 processes, bos, pasids, queues).

const (
	scaleMemMiB       = 64
	scaleSetupTimeout = 5 * time.Minute // N processes opening the device and setting up
	scaleRTTimeout    = time.Minute     // one barrier round trip
	scaleAloneRounds  = 200             // round trips of the floor's lone client (at least)
)

// scaleLeakKeys are the stats-file counters that must be 0 once every client has exited.
var scaleLeakKeys = []string{"processes", "bos", "pasids", "queues"}

// scaleResult is what runScale measured.
type scaleResult struct {
	Profile    string
	N, Rounds  int
	Setup      time.Duration   // starting the N clients until every one is ready
	Alone      []time.Duration // round trips of one client process alone (the floor, >= scaleAloneRounds)
	Lat        []time.Duration // every round trip of the N clients, made at once
	Phase      time.Duration   // from the first request to the last answer
	PhaseCPU   time.Duration   // the daemon's CPU time meanwhile
	RSS        [3]uint64       // daemon VmRSS in bytes: before the clients, with them, after they exit
	Goroutines [3]int          // the same for runtime.NumGoroutine
	Left       map[string]int  // scaleLeakKeys after the clients exited
}

// daemonRSS is this process's VmRSS (/proc/self/status) in bytes, after a garbage collection
// that returns freed memory to the kernel (debug.FreeOSMemory): the memory the daemon holds,
// not garbage the collector has yet to find.
func daemonRSS() uint64 {
	debug.FreeOSMemory()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range bytes.Split(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(l, []byte("VmRSS:")); ok {
			f := bytes.Fields(v)
			if len(f) >= 1 {
				kb, _ := strconv.ParseUint(string(f[0]), 10, 64)
				return kb << 10
			}
		}
	}
	return 0
}

// statsOf reads the daemon's stats file.
func statsOf(mnt string) (map[string]int, error) {
	b, err := os.ReadFile(filepath.Join(mnt, nsexec.StatsPath))
	if err != nil {
		return nil, err
	}
	m := map[string]int{}
	for _, l := range bytes.Split(b, []byte("\n")) {
		if f := bytes.Fields(l); len(f) == 2 {
			n, err := strconv.Atoi(string(f[1]))
			if err == nil {
				m[string(f[0])] = n
			}
		}
	}
	return m, nil
}

// runScale mounts f's profile in a temporary directory and runs n client processes of one queue
// and scaleMemMiB of mapped VRAM each, rounds barrier round trips each, all at once.
func runScale(f *serveFlags, n, rounds int) (*scaleResult, error) {
	dir, err := os.MkdirTemp("", "kfdemu-bench-scale-")
	if err != nil {
		return nil, err
	}
	defer os.Remove(dir)
	g := *f
	g.mount = dir
	srv, _, err := mountEmulator(&g, newLogger("warn"))
	if err != nil {
		return nil, err
	}
	defer srv.Unmount()
	r := &scaleResult{Profile: g.profile, N: n, Rounds: rounds}
	spec := clientSpec{queues: 1, memMiB: scaleMemMiB}

	// The floor: one client process alone. It also warms what the daemon sets up once (worker
	// pools, the first process's tables), which the baseline below then includes.
	alone, err := startClients(dir, 1, spec, time.Minute)
	if err != nil {
		return nil, err
	}
	aloneRounds := max(rounds, scaleAloneRounds)
	if err := alone[0].send(aloneRounds, scaleRTTimeout); err != nil {
		return nil, err
	}
	r.Alone, err = alone[0].result(time.Now().Add(time.Duration(aloneRounds) * scaleRTTimeout))
	if err2 := stopClients(alone, 30*time.Second); err == nil {
		err = err2
	}
	if err != nil {
		return nil, err
	}
	if err := waitNoProcessFor(dir, 30*time.Second); err != nil {
		return nil, err
	}
	time.Sleep(500 * time.Millisecond)
	r.RSS[0], r.Goroutines[0] = daemonRSS(), runtime.NumGoroutine()

	start := time.Now()
	ps, err := startClients(dir, n, spec, scaleSetupTimeout)
	if err != nil {
		return nil, err
	}
	r.Setup = time.Since(start)
	stopped := false
	defer func() {
		if !stopped {
			stopClients(ps, 30*time.Second)
		}
	}()
	start, cpu0 := time.Now(), selfCPU()
	for _, p := range ps {
		if err := p.send(rounds, scaleRTTimeout); err != nil {
			return nil, err
		}
	}
	deadline := time.Now().Add(time.Duration(rounds) * scaleRTTimeout)
	for _, p := range ps {
		lat, err := p.result(deadline)
		if err != nil {
			return nil, err
		}
		r.Lat = append(r.Lat, lat...)
	}
	r.Phase, r.PhaseCPU = time.Since(start), selfCPU()-cpu0
	r.RSS[1], r.Goroutines[1] = daemonRSS(), runtime.NumGoroutine()

	stopped = true
	if err := stopClients(ps, time.Minute); err != nil {
		return nil, err
	}
	if err := waitNoProcessFor(dir, time.Minute); err != nil {
		return nil, err
	}
	st, err := statsOf(dir)
	if err != nil {
		return nil, err
	}
	r.Left = map[string]int{}
	for _, k := range scaleLeakKeys {
		r.Left[k] = st[k]
	}
	time.Sleep(500 * time.Millisecond)
	r.RSS[2], r.Goroutines[2] = daemonRSS(), runtime.NumGoroutine()
	return r, nil
}

// PerProcessRSS is the daemon's RSS growth per client process, in bytes.
func (r *scaleResult) PerProcessRSS() float64 {
	return (float64(r.RSS[1]) - float64(r.RSS[0])) / float64(r.N)
}

// PerProcessGoroutines is the daemon's goroutine growth per client process.
func (r *scaleResult) PerProcessGoroutines() float64 {
	return float64(r.Goroutines[1]-r.Goroutines[0]) / float64(r.N)
}

func (r *scaleResult) figures() []figure {
	const mib = 1 << 20
	lat := slices.Clone(r.Lat)
	slices.Sort(lat)
	p50, p99 := percentiles(lat)
	a50, _ := percentiles(r.Alone)
	left, leftText := 0, ""
	for _, k := range scaleLeakKeys {
		left += r.Left[k]
		leftText += fmt.Sprintf("%s %d, ", k, r.Left[k])
	}
	procs := fmt.Sprintf("%d processes", r.N)
	return []figure{
		{Name: "scale: barrier round trip, " + procs + " at once", Unit: "ns", Value: float64(p50), P99: float64(p99),
			Max: float64(lat[len(lat)-1]), Floor: "one client process alone (same run)", FloorValue: float64(a50),
			Ratio: ratio(float64(p50), float64(a50)),
			Note: fmt.Sprintf("%d of %d round trips answered in %v (%.0f/s, daemon CPU %v each), max %v; "+
				"%s (1 AQL queue and %d MiB of VRAM mapped each, %s) ready in %v",
				len(r.Lat), r.N*r.Rounds, r.Phase.Round(time.Millisecond), float64(len(r.Lat))/r.Phase.Seconds(),
				(r.PhaseCPU / time.Duration(len(r.Lat))).Round(time.Microsecond), lat[len(lat)-1].Round(time.Microsecond),
				procs, scaleMemMiB, r.Profile, r.Setup.Round(time.Millisecond))},
		{Name: "scale: daemon RSS with " + procs, Unit: "MiB", Value: float64(r.RSS[1]) / mib,
			Floor: "daemon RSS before the clients", FloorValue: float64(r.RSS[0]) / mib, Ratio: ratio(float64(r.RSS[1]), float64(r.RSS[0])),
			Note: fmt.Sprintf("%.0f KiB per process; after they exit %.1f MiB (%+.1f MiB)", r.PerProcessRSS()/1024,
				float64(r.RSS[2])/mib, (float64(r.RSS[2])-float64(r.RSS[0]))/mib)},
		{Name: "scale: daemon goroutines with " + procs, Unit: "goroutines", Value: float64(r.Goroutines[1]),
			Floor: "daemon goroutines before the clients", FloorValue: float64(r.Goroutines[0]),
			Ratio: ratio(float64(r.Goroutines[1]), float64(r.Goroutines[0])),
			Note:  fmt.Sprintf("%.2f per process; after they exit %d", r.PerProcessGoroutines(), r.Goroutines[2])},
		{Name: "scale: left after " + procs + " exit", Unit: "objects", Value: float64(left),
			Note: "stats file: " + leftText[:len(leftText)-2]},
	}
}
