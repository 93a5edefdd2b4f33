package fs

import (
	"bytes"
	"fmt"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/kfdemu/kfdemu/gpu/sdma"
	"github.com/kfdemu/kfdemu/kfd/abi"
	"golang.org/x/sys/unix"
)

// TestSDMAMemoryKinds copies through an SDMA queue between VRAM, GTT and userptr memory (the
// client's own anonymous pages, reached by the daemon with process_vm) with unaligned offsets and
// sizes, then fills, all through the mount; the CPU checks every byte through its mappings.
func TestSDMAMemoryKinds(t *testing.T) {
	mnt, _ := mountDriver(t, "mi210")
	c, err := openClient(mnt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.close)
	const size = 1 << 16
	var unmaps [][]byte
	t.Cleanup(func() {
		for _, m := range unmaps {
			unix.Munmap(m)
		}
	})
	alloc := func(va, n uint64, flags uint32) []byte {
		_, m, err := c.alloc(va, n, flags)
		if err != nil {
			t.Fatal(err)
		}
		unmaps = append(unmaps, m)
		return m
	}
	ring := alloc(0x100000000, 4096, abi.KFD_IOC_ALLOC_MEM_FLAGS_GTT)
	rp := alloc(0x100010000, 4096, abi.KFD_IOC_ALLOC_MEM_FLAGS_GTT)
	wp := alloc(0x100020000, 4096, abi.KFD_IOC_ALLOC_MEM_FLAGS_GTT)
	vram := alloc(0x200000000, size, abi.KFD_IOC_ALLOC_MEM_FLAGS_VRAM)
	gtt := alloc(0x300000000, size, abi.KFD_IOC_ALLOC_MEM_FLAGS_GTT)
	// Userptr: the test's own pages, registered at their CPU address.
	user, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	unmaps = append(unmaps, user)
	uva := uint64(uintptr(unsafe.Pointer(&user[0])))
	ua := abi.AllocMemoryOfGPUArgs{VAAddr: uva, Size: size, GPUID: c.gpu, Flags: abi.KFD_IOC_ALLOC_MEM_FLAGS_USERPTR | abi.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE, MmapOffset: uva}
	if e := ioctl(c.kfd, abi.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &ua); e != 0 {
		t.Fatalf("ALLOC userptr: %v", e)
	}
	ids := []uint32{c.gpu}
	if e := ioctl(c.kfd, abi.AMDKFD_IOC_MAP_MEMORY_TO_GPU, &abi.MapMemoryToGPUArgs{Handle: ua.Handle, DeviceIDsArrayPtr: uint64(uintptr(unsafe.Pointer(&ids[0]))), NDevices: 1}); e != 0 {
		t.Fatalf("MAP userptr: %v", e)
	}
	q := abi.CreateQueueArgs{RingBaseAddress: 0x100000000, RingSize: 4096, GPUID: c.gpu, QueueType: abi.KFD_IOC_QUEUE_TYPE_SDMA,
		QueuePercentage: 100, ReadPointerAddress: 0x100010000, WritePointerAddress: 0x100020000}
	if e := ioctl(c.kfd, abi.AMDKFD_IOC_CREATE_QUEUE, &q); e != 0 {
		t.Fatalf("CREATE_QUEUE SDMA: %v", e)
	}
	t.Cleanup(func() { ioctl(c.kfd, abi.AMDKFD_IOC_DESTROY_QUEUE, &abi.DestroyQueueArgs{QueueID: q.QueueID}) })
	const slice = 8192
	bell, err := unix.Mmap(c.kfd, int64(q.DoorbellOffset&^(slice-1)), slice, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	unmaps = append(unmaps, bell)
	doorbell := (*atomic.Uint64)(unsafe.Pointer(&bell[q.DoorbellOffset&(slice-1)]))
	wptr := (*atomic.Uint64)(unsafe.Pointer(&wp[0]))
	fence := (*atomic.Uint32)(unsafe.Pointer(&gtt[size-8]))
	var pos uint64
	seq := uint32(0)
	run := func(p []byte) {
		t.Helper()
		seq++
		p = sdma.AppendFence(p, 0x300000000+size-8, seq)
		for i := range p {
			ring[(pos+uint64(i))%4096] = p[i]
		}
		pos += uint64(len(p))
		wptr.Store(pos)
		doorbell.Store(pos)
		deadline := time.Now().Add(5 * time.Second)
		for fence.Load() != seq {
			if time.Now().After(deadline) {
				t.Fatalf("SDMA packets not executed (read pointer %d, write %d)", (*atomic.Uint64)(unsafe.Pointer(&rp[0])).Load(), pos)
			}
			time.Sleep(100 * time.Microsecond)
		}
	}
	kinds := []struct {
		name string
		va   uint64
		mem  []byte
	}{{"vram", 0x200000000, vram}, {"gtt", 0x300000000, gtt}, {"userptr", uva, user}}
	for si, src := range kinds {
		for di, dst := range kinds {
			if si == di {
				continue
			}
			t.Run(fmt.Sprintf("%s_to_%s", src.name, dst.name), func(t *testing.T) {
				so, do, n := uint64(3+si*7), uint64(5+di*11), uint32(size/2-13) // unaligned offsets and size
				for i := range src.mem[:size-16] {
					src.mem[i] = byte(i*31 + si)
				}
				run(sdma.AppendCopyLinear(nil, dst.va+do, src.va+so, n))
				if !bytes.Equal(dst.mem[do:do+uint64(n)], src.mem[so:so+uint64(n)]) {
					t.Errorf("copy %s -> %s differs", src.name, dst.name)
				}
			})
		}
	}
	run(sdma.AppendConstFill(nil, uva+1, 0x5a, sdma.FillByte, 999))
	if user[0] == 0x5a || user[1000] == 0x5a || bytes.Count(user[1:1000], []byte{0x5a}) != 999 {
		t.Error("byte fill of userptr memory wrong")
	}
}
