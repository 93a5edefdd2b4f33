package kfd

import (
	"encoding/binary"
	"sort"
	"strconv"

	"github.com/kfdemu/kfdemu/kfd/abi"
	"github.com/kfdemu/kfdemu/topology"
)

// ProcTree renders the process directories of /sys/class/kfd/kfd/proc as they are now, as
// kfd_create_process and kfd_procfs_add_queue create them (kfd_process.c), in that order:
//
//	proc/<pid>/pasid                  "%d\n"
//	proc/<pid>/queues/<qid>/{size,type,gpuid}  ring bytes, enum kfd_queue_type, gpu id: "%llu", "%d",
//	                                  "%u" without a newline (kfd_procfs_queue_show)
//	proc/<pid>/stats_<gpuid>/evicted_ms    time the process's queues were evicted, "%llu\n"
//	proc/<pid>/stats_<gpuid>/cu_occupancy  CUs its resident waves fill (kfd_get_cu_occupancy), "%d\n"
//	proc/<pid>/vram_<gpuid>           its VRAM BOs' bytes, "%llu\n"
//	proc/<pid>/sdma_<gpuid>           SDMA activity (kfd_sdma_activity_worker), "%llu\n"
//	proc/<pid>/counters_<gpuid>/{faults,page_in,page_out}  SVM GPUs only, "%llu\n"
//
// rocm-smi's --showpids reads them. One tree per call: the caller serves a snapshot.
func (d *Driver) ProcTree() *topology.Tree {
	file := func(name, text string) *topology.Tree {
		b := []byte(text)
		return &topology.Tree{Name: name, Kind: topology.File, Mode: 0444, Content: func() []byte { return b }}
	}
	dir := func(name string, c ...*topology.Tree) *topology.Tree {
		return &topology.Tree{Name: name, Kind: topology.Dir, Mode: 0555, Children: c}
	}
	u64 := func(v uint64) string { return strconv.FormatUint(v, 10) + "\n" }
	root := dir("proc")
	for _, p := range d.sortedProcs() {
		p.mu.Lock()
		pd := dir(strconv.Itoa(p.tgid), file("pasid", strconv.FormatUint(uint64(p.pasid), 10)+"\n"))
		qs := dir("queues")
		var qids []uint32
		for id := range p.queues {
			qids = append(qids, id)
		}
		sort.Slice(qids, func(i, j int) bool { return qids[i] < qids[j] })
		queues := map[uint32]int{} // per gpu_id
		for _, id := range qids {
			q := p.queues[id]
			queues[q.pd.gpuID]++
			qs.Children = append(qs.Children, dir(strconv.FormatUint(uint64(id), 10),
				file("size", strconv.FormatUint(uint64(q.args.RingSize), 10)),
				file("type", strconv.Itoa(kfdQueueType(q.args.QueueType))),
				file("gpuid", strconv.FormatUint(uint64(q.pd.gpuID), 10))))
		}
		pd.Children = append(pd.Children, qs)
		devs := p.sortedPDDs()
		ids := make([]string, len(devs))
		for i, dv := range devs {
			ids[i] = strconv.FormatUint(uint64(dv.gpuID), 10)
		}
		evicted := uint64(p.evictedFor.Milliseconds())
		for i, dv := range devs {
			occ := 0 // kfd_get_cu_occupancy: 0 without queues on the device
			if queues[dv.gpuID] > 0 {
				dev := d.shaderDevice(dv.gpuID)
				w, per := dev.ResidentWaves(p.pasid), dev.WavesPerCU()
				occ = (w + per - 1) / per
			}
			pd.Children = append(pd.Children, dir("stats_"+ids[i], file("evicted_ms", u64(evicted)),
				file("cu_occupancy", strconv.Itoa(occ)+"\n")))
		}
		for i, dv := range devs {
			var vram uint64
			for _, b := range p.bos {
				if b.gpu == dv.gpuID && allocDomain(b.flags) == allocVRAM {
					vram += b.size
				}
			}
			sdma := dv.sdmaPast
			for _, id := range qids {
				if q := p.queues[id]; q.pd == dv && countsSDMAActivity(q.args.QueueType) {
					sdma += q.sdmaActivity()
				}
			}
			pd.Children = append(pd.Children, file("vram_"+ids[i], u64(vram)), file("sdma_"+ids[i], u64(sdma/sdmaActivityDivisor)))
		}
		for i, dv := range devs {
			if c, ok := p.svm.Counters(dv.gpuID); ok {
				pd.Children = append(pd.Children, dir("counters_"+ids[i],
					file("faults", u64(c.Faults)), file("page_in", u64(c.PageIn)), file("page_out", u64(c.PageOut))))
			}
		}
		p.mu.Unlock()
		root.Children = append(root.Children, pd)
	}
	return root
}

// sdmaActivityDivisor is SDMA_ACTIVITY_DIVISOR (kfd_priv.h): sdma_<gpuid> shows the counters / 100.
const sdmaActivityDivisor = 100

// countsSDMAActivity: kfd_sdma_activity_worker and destroy_queue_cpsch read the activity counter of
// KFD_QUEUE_TYPE_SDMA and SDMA_XGMI queues only (not SDMA_BY_ENG_ID).
func countsSDMAActivity(t uint32) bool {
	return t == abi.KFD_IOC_QUEUE_TYPE_SDMA || t == abi.KFD_IOC_QUEUE_TYPE_SDMA_XGMI
}

// sdmaActivity is read_sdma_queue_counter: the u64 after the queue's read pointer, which kfd_priv.h
// says the SDMA firmware keeps at 100 MHz. The SDMA model does not write it, on purpose: every
// client through libhsakmt (ROCr's BlitSdma, kfdtest) passes &q->rptr of its struct queue
// (queues.c), whose next field is the eop_buffer pointer free_queue frees when non-NULL (NULL for
// SDMA queues), so a counter written there would make libhsakmt free garbage. The word reads as
// whatever the client keeps there: 0 under libhsakmt.
// It reads through a port of its own: the queue's port belongs to the queue's engine goroutine. The
// read takes no retry fault (whose handler takes Process.mu, held here): the read pointer is in a
// BO the queue holds mapped (kfd_queue_acquire_buffers; UNMAP gets EBUSY meanwhile).
func (q *queue) sdmaActivity() uint64 {
	if q.pd.vm == nil {
		return 0
	}
	pt := q.pd.vm.NewPort()
	defer pt.Close()
	var b [8]byte
	if pt.Read(q.args.ReadPointerAddress+8, b[:]) != nil {
		return 0 // amdkfd: pr_debug "Failed to read SDMA queue active counter", not counted
	}
	return binary.LittleEndian.Uint64(b[:])
}

// kfdQueueType maps an ioctl queue type to enum kfd_queue_type (kfd_priv.h: COMPUTE 0, SDMA 1,
// HIQ 2, DIQ 3, SDMA_XGMI 4, SDMA_BY_ENG_ID 5), as set_queue_properties_from_user does.
func kfdQueueType(t uint32) int {
	switch t {
	case abi.KFD_IOC_QUEUE_TYPE_SDMA:
		return 1
	case abi.KFD_IOC_QUEUE_TYPE_SDMA_XGMI:
		return 4
	case abi.KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID:
		return 5
	}
	return 0
}
