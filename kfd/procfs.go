package kfd

import (
	"sort"
	"strconv"

	"github.com/kfdemu/kfdemu/kfd/abi"
	"github.com/kfdemu/kfdemu/topology"
)

// ProcTree renders the process directories of /sys/class/kfd/kfd/proc as they are now
// (kfd_process.c kfd_procfs_add_sysfs_files, kfd_procfs_add_queue): proc/<pid>/pasid ("%d\n"),
// vram_<gpuid> (the process's VRAM BOs on that GPU, "%llu\n") and queues/<qid>/{size,type,gpuid}
// (ring size in bytes, enum kfd_queue_type, gpu id; "%llu\n", "%u\n", "%u\n"). rocm-smi's
// --showpids reads pasid and the queues' gpuid. One tree per call: the caller serves a snapshot.
func (d *Driver) ProcTree() *topology.Tree {
	file := func(name, text string) *topology.Tree {
		b := []byte(text)
		return &topology.Tree{Name: name, Kind: topology.File, Mode: 0444, Content: func() []byte { return b }}
	}
	dir := func(name string, c ...*topology.Tree) *topology.Tree {
		return &topology.Tree{Name: name, Kind: topology.Dir, Mode: 0555, Children: c}
	}
	root := dir("proc")
	for _, p := range d.sortedProcs() {
		p.mu.Lock()
		pd := dir(strconv.Itoa(p.tgid), file("pasid", strconv.FormatUint(uint64(p.pasid), 10)+"\n"))
		var gpus []uint32
		for id := range p.pdds {
			gpus = append(gpus, id)
		}
		sort.Slice(gpus, func(i, j int) bool { return gpus[i] < gpus[j] })
		for _, id := range gpus {
			var vram uint64
			for _, b := range p.bos {
				if b.gpu == id && allocDomain(b.flags) == allocVRAM {
					vram += b.size
				}
			}
			pd.Children = append(pd.Children, file("vram_"+strconv.FormatUint(uint64(id), 10), strconv.FormatUint(vram, 10)+"\n"))
		}
		qs := dir("queues")
		var qids []uint32
		for id := range p.queues {
			qids = append(qids, id)
		}
		sort.Slice(qids, func(i, j int) bool { return qids[i] < qids[j] })
		for _, id := range qids {
			q := p.queues[id]
			qs.Children = append(qs.Children, dir(strconv.FormatUint(uint64(id), 10),
				file("size", strconv.FormatUint(uint64(q.args.RingSize), 10)+"\n"),
				file("type", strconv.Itoa(kfdQueueType(q.args.QueueType))+"\n"),
				file("gpuid", strconv.FormatUint(uint64(q.pd.gpuID), 10)+"\n")))
		}
		pd.Children = append(pd.Children, qs)
		p.mu.Unlock()
		root.Children = append(root.Children, pd)
	}
	return root
}

// kfdQueueType maps an ioctl queue type to enum kfd_queue_type (kfd_priv.h: COMPUTE 0, SDMA 1,
// HIQ 2, DIQ 3, SDMA_XGMI 4), as set_queue_properties_from_user does.
func kfdQueueType(t uint32) int {
	switch t {
	case abi.KFD_IOC_QUEUE_TYPE_SDMA:
		return 1
	case abi.KFD_IOC_QUEUE_TYPE_SDMA_XGMI:
		return 4
	}
	return 0
}
