package kfd

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Doorbells without polling. A client rings a doorbell with a store to its slice of the kfd
// memfd, which nothing reports (package doorbell). When the doorbell watcher has seen no store
// for a while it calls armDoorbells: for each process with queues, mmnotify arms a touch notice
// on the client's mappings of its doorbell slices, then the slices' pages are punched out of the
// memfd (fallocate PUNCH_HOLE unmaps a page from every process's page tables) and their contents
// put back. The client's next store to a doorbell page faults, the fault is the notice
// (exceptions/page_fault_user, through eBPF), and the watcher wakes within microseconds instead
// of its 50 ms deep-idle poll. On amdkfd the doorbell is MMIO the CP sees directly; this is the
// stand-in that keeps an idle daemon idle.
//
// Contents survive the punch exactly: before punching, the current pages are pinned by vmsplice
// into a pipe, so a store the client makes to the old page before the punch unmaps it is still
// read back from the pipe afterwards; each word is then restored into the new page with a
// compare-and-swap from zero, so a store the client made to the new page in between (it faulted,
// so a notice is on its way) wins. A store of 0 in that window would be overwritten; the notice's
// kick of every queue covers it (the queues read their write pointers, not the doorbell).

// armDoorbells is the doorbell watcher's arm function (doorbell.Watcher.SetArm). It reports
// whether every process with queues is armed.
func (d *Driver) armDoorbells() bool {
	if d.mm == nil || !d.mm.TouchAvailable() {
		return false
	}
	d.mu.Lock()
	procs := make([]*Process, 0, len(d.procs))
	for _, p := range d.procs {
		procs = append(procs, p)
	}
	d.mu.Unlock()
	all := true
	for _, p := range procs {
		if !p.armDoorbells() {
			all = false
		}
	}
	return all
}

// armDoorbells arms the process's touch notice and takes its doorbell pages out of its page
// tables, unless it is still armed from before (no fault since: the pages are still out).
func (p *Process) armDoorbells() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dead || len(p.queues) == 0 {
		return true
	}
	if p.mm == nil {
		return false
	}
	if p.mm.Armed() {
		return true
	}
	var slices [][2]int64
	for _, pd := range p.pdds {
		if pd.doorbellMem != nil {
			slices = append(slices, [2]int64{pd.doorbellOff, pd.doorbellOff + int64(len(pd.doorbellMem))})
		}
	}
	ranges, err := mappingsOf(p.tgid, slices)
	if err != nil {
		p.d.log.Debug("doorbell arming: reading the client's mappings", "tgid", p.tgid, "err", err)
		return false
	}
	if err := p.mm.ArmTouch(ranges, p.d.bells.Touched); err != nil {
		p.d.log.Debug("doorbell arming", "tgid", p.tgid, "err", err)
		return false
	}
	for _, pd := range p.pdds {
		if pd.doorbellMem == nil {
			continue
		}
		if err := p.kfdSpace.zap(pd.doorbellOff, pd.doorbellMem); err != nil {
			p.d.log.Warn("doorbell arming: cannot take the doorbell pages out; polling them instead", "tgid", p.tgid, "err", err)
			p.mm.Disarm()
			return false
		}
	}
	return true
}

// mappingsOf returns the client's virtual ranges that map the kfd file at offsets in slices,
// from /proc/PID/maps ("start-end perms offset dev inode path"). Doorbell slices sit at offsets at
// or above fixedBase, which only the kfd device file uses (render nodes allocate below it).
func mappingsOf(tgid int, slices [][2]int64) ([][2]uint64, error) {
	f, err := os.Open("/proc/" + strconv.Itoa(tgid) + "/maps")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out [][2]uint64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		v, ok := parseMapsLine(sc.Text())
		fields := strings.Fields(sc.Text())
		// The client maps the device file (passthrough shows its path); the daemon's own view of
		// the memfd (a client in the daemon's process: kfdemu bench) is not a client store.
		if !ok || len(fields) < 6 || strings.HasPrefix(fields[5], "/memfd:") {
			continue
		}
		off, err := strconv.ParseUint(fields[2], 16, 64)
		if err != nil || off < fixedBase {
			continue
		}
		s, e := v.Start, v.End
		for _, sl := range slices {
			a, b := max(off, uint64(sl[0])), min(off+(e-s), uint64(sl[1]))
			if a < b {
				out = append(out, [2]uint64{s + (a - off), s + (b - off)})
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// zap takes the pages behind mem (the daemon's mapping of [off, off+len(mem))) out of every
// process's page tables and keeps their contents (see the comment at the top of the file).
func (s *space) zap(off int64, mem []byte) error {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return err
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	if _, err := unix.FcntlInt(uintptr(p[1]), unix.F_SETPIPE_SZ, len(mem)); err != nil {
		return fmt.Errorf("pipe size: %w", err)
	}
	iov := []unix.Iovec{{Base: &mem[0]}}
	iov[0].SetLen(len(mem))
	if n, err := unix.Vmsplice(p[1], iov, 0); err != nil || n != len(mem) {
		return fmt.Errorf("vmsplice: %d of %d bytes: %v", n, len(mem), err)
	}
	if err := unix.Fallocate(int(s.f.Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, off, int64(len(mem))); err != nil {
		return fmt.Errorf("punch: %w", err) // nothing changed
	}
	old := make([]byte, len(mem))
	if _, err := io.ReadFull(fdReader(p[0]), old); err != nil {
		return fmt.Errorf("reading the pinned pages back: %w", err) // cannot happen: the pipe holds them
	}
	for i := 0; i+8 <= len(mem); i += 8 {
		if v := binary.LittleEndian.Uint64(old[i:]); v != 0 {
			word64(mem[i:]).CompareAndSwap(0, v)
		}
	}
	return nil
}

type fdReader int

func (f fdReader) Read(b []byte) (int, error) {
	n, err := unix.Read(int(f), b)
	if n == 0 && err == nil {
		return 0, io.EOF
	}
	return n, err
}
