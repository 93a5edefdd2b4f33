package kfd

import (
	"encoding/binary"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kfdemu/kfdemu/kfd/abi"
	"github.com/kfdemu/kfdemu/topology"
)

// TestProcTree: proc/<pid> has what kfd_create_process and kfd_procfs_add_queue create, with
// amdkfd's formats (the queue attributes without a newline), and the values follow the process:
// VRAM BOs, the SDMA activity word after an SDMA queue's read pointer (kept when the queue goes),
// time spent evicted, SVM counters; dispatches count their waves against the process's PASID.
func TestProcTree(t *testing.T) {
	e := newEnv(t, "mi210")
	e.acquire(e.gpu)
	id := strconv.FormatUint(uint64(e.gpu), 10)
	vram := abi.AllocMemoryOfGPUArgs{VAAddr: 0x200000000, Size: 3 << 20, GPUID: e.gpu, Flags: allocVRAM | abi.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE}
	if errno := e.do(abi.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &vram); errno != 0 {
		t.Fatal(errno)
	}
	const base = 0x600000000
	e.alloc(base, 4096)         // ring
	e.alloc(base+0x10000, 4096) // read pointer page
	e.alloc(base+0x20000, 4096) // write pointer page
	sq := abi.CreateQueueArgs{RingBaseAddress: base, RingSize: 4096, GPUID: e.gpu, QueueType: abi.KFD_IOC_QUEUE_TYPE_SDMA,
		QueuePercentage: 100, ReadPointerAddress: base + 0x10000, WritePointerAddress: base + 0x20000}
	if errno := e.do(abi.AMDKFD_IOC_CREATE_QUEUE, &sq); errno != 0 {
		t.Fatalf("create SDMA queue: %v", errno)
	}
	cq := e.queueArgs(0x700000000)
	if errno := e.do(abi.AMDKFD_IOC_CREATE_QUEUE, &cq); errno != 0 {
		t.Fatalf("create AQL queue: %v", errno)
	}
	p := e.d.procs[e.c.tgid]
	// The SDMA firmware's activity counter, as read_sdma_queue_counter finds it at rptr + 8.
	binary.LittleEndian.PutUint64(p.boAt(e.gpu, base+0x10000).mem[8:], 12345)

	read := func(path string) string {
		t.Helper()
		n := e.d.ProcTree().Child(strconv.Itoa(e.c.tgid))
		for _, c := range strings.Split(path, "/") {
			if n == nil {
				break
			}
			n = n.Child(c)
		}
		if n == nil || n.Kind != topology.File {
			t.Fatalf("proc/%d/%s missing", e.c.tgid, path)
		}
		return string(n.Content())
	}
	var names []string
	for _, c := range e.d.ProcTree().Child(strconv.Itoa(e.c.tgid)).Children {
		names = append(names, c.Name)
	}
	if want := []string{"pasid", "queues", "stats_" + id, "vram_" + id, "sdma_" + id, "counters_" + id}; !slices.Equal(names, want) {
		t.Errorf("proc/<pid>: %v, want %v (kfd_create_process's order)", names, want)
	}
	for path, want := range map[string]string{
		"pasid":                                 strconv.Itoa(int(p.pasid)) + "\n",
		"queues/" + itoa(sq.QueueID) + "/size":  "4096",
		"queues/" + itoa(sq.QueueID) + "/type":  "1", // KFD_QUEUE_TYPE_SDMA
		"queues/" + itoa(sq.QueueID) + "/gpuid": id,
		"queues/" + itoa(cq.QueueID) + "/type":  "0", // KFD_QUEUE_TYPE_COMPUTE (AQL format)
		"vram_" + id:                            strconv.Itoa(3<<20) + "\n",
		"sdma_" + id:                            "123\n", // SDMA_ACTIVITY_DIVISOR 100
		"stats_" + id + "/evicted_ms":           "0\n",
		"stats_" + id + "/cu_occupancy":         "0\n", // queues, but no wave resident
		"counters_" + id + "/faults":            "0\n",
		"counters_" + id + "/page_in":           "0\n",
		"counters_" + id + "/page_out":          "0\n",
	} {
		if got := read(path); got != want {
			t.Errorf("%s = %q, want %q", path, got, want)
		}
	}
	if o := p.queues[cq.QueueID].engine().Owner; o != p.pasid {
		t.Errorf("the AQL queue's dispatches count against %d, want the PASID %d", o, p.pasid)
	}
	// Evicted for at least 30 ms: evicted_ms grows at the restore.
	if err := e.d.EvictQueues(e.c.tgid); err != nil {
		t.Fatal(err)
	}
	time.Sleep(30 * time.Millisecond)
	if got := read("stats_" + id + "/evicted_ms"); got != "0\n" {
		t.Errorf("evicted_ms while evicted: %q (amdkfd adds at the restore)", got)
	}
	if err := e.d.RestoreQueues(e.c.tgid); err != nil {
		t.Fatal(err)
	}
	if ms, _ := strconv.Atoi(strings.TrimSuffix(read("stats_"+id+"/evicted_ms"), "\n")); ms < 30 {
		t.Errorf("evicted_ms after 30 ms evicted: %d", ms)
	}
	// A destroyed SDMA queue's activity stays (sdma_past_activity_counter).
	if errno := e.do(abi.AMDKFD_IOC_DESTROY_QUEUE, &abi.DestroyQueueArgs{QueueID: sq.QueueID}); errno != 0 {
		t.Fatal(errno)
	}
	if got := read("sdma_" + id); got != "123\n" {
		t.Errorf("sdma_%s after the queue's destruction: %q", id, got)
	}
	if errno := e.do(abi.AMDKFD_IOC_DESTROY_QUEUE, &abi.DestroyQueueArgs{QueueID: cq.QueueID}); errno != 0 {
		t.Fatal(errno)
	}
}

func itoa(v uint32) string { return strconv.FormatUint(uint64(v), 10) }
