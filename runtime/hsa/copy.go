package hsa

import (
	"fmt"
	"time"

	"github.com/kfdemu/kfdemu/internal/hrtimer"
	"github.com/kfdemu/kfdemu/runtime/kmt"
)

// sdmaCopier is the runtime's SDMA queue on the first GPU (ROCr's BlitSdma): COPY_LINEAR packets
// followed by a FENCE whose sequence number the CPU waits for.
type sdmaCopier struct {
	q        *kmt.Queue
	ring     *kmt.Memory
	fence    *kmt.Memory
	rb       []byte
	rptr     func() uint64
	wptr     func(uint64)
	pos, seq uint64
}

const sdmaRingSize = 64 << 10

func (r *Runtime) newCopier() (*sdmaCopier, error) {
	g := r.d.GPUs()[0]
	c := &sdmaCopier{}
	var err error
	if c.ring, err = r.d.AllocGTT(g, sdmaRingSize, kmt.Coherent); err != nil {
		return nil, err
	}
	if c.fence, err = r.d.AllocGTT(g, 4096, kmt.Coherent); err != nil {
		c.ring.Free()
		return nil, err
	}
	for _, m := range []*kmt.Memory{c.ring, c.fence} {
		if err := m.Map(); err != nil {
			c.ring.Free()
			c.fence.Free()
			return nil, err
		}
	}
	if c.q, err = r.d.CreateQueue(kmt.QueueSpec{GPU: g, Type: kmt.QueueSDMA, RingVA: c.ring.VA, RingSize: sdmaRingSize}); err != nil {
		c.ring.Free()
		c.fence.Free()
		return nil, err
	}
	rp, wp, ok := c.q.Indices()
	if !ok {
		return nil, fmt.Errorf("%w: SDMA queue without thunk-owned pointers", ErrInvalidArgument)
	}
	c.rb = c.ring.Bytes()
	c.rptr, c.wptr = rp.Load, wp.Store
	return c, nil
}

// Copy copies n bytes from src to dst (GPU virtual addresses of buffers mapped on the first GPU,
// such as pool buffers) with the SDMA engine and waits for the copy to finish
// (hsa_memory_copy / hsa_amd_memory_async_copy followed by a wait).
func (r *Runtime) Copy(dst, src uint64, n uint64) error {
	if err := r.check(); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	r.copyMu.Lock()
	defer r.copyMu.Unlock()
	if r.copier == nil {
		c, err := r.newCopier()
		if err != nil {
			return wrap(err)
		}
		r.copier = c
	}
	return r.copier.copy(dst, src, n)
}

func (c *sdmaCopier) copy(dst, src, n uint64) error {
	var p []byte
	for off := uint64(0); off < n; {
		k := min(n-off, sdmaMaxCopy)
		p = appendCopyLinear(p, dst+off, src+off, uint32(k))
		off += k
		if len(p) > sdmaRingSize/2 || off == n {
			if err := c.submit(p); err != nil {
				return err
			}
			p = p[:0]
		}
	}
	return nil
}

// submit appends p and a FENCE to the ring, rings the doorbell with the byte write pointer and
// waits for the fence.
func (c *sdmaCopier) submit(p []byte) error {
	c.seq++
	p = appendFence(p, c.fence.VA, uint32(c.seq))
	for c.pos+uint64(len(p))-c.rptr() > sdmaRingSize {
		hrtimer.Sleep(10 * time.Microsecond)
	}
	for i := range p {
		c.rb[(c.pos+uint64(i))%sdmaRingSize] = p[i]
	}
	c.pos += uint64(len(p))
	c.wptr(c.pos)
	c.q.RingDoorbell(c.pos)
	fence := kmt.Word32(c.fence.Bytes(), 0)
	start := time.Now()
	for fence.Load() != uint32(c.seq) {
		if time.Since(start) > 10*time.Second {
			return fmt.Errorf("hsa: SDMA copy did not finish (read pointer %d, write %d)", c.rptr(), c.pos)
		}
		hrtimer.Sleep(20 * time.Microsecond) // time.Sleep: at least 1 ms in an otherwise idle process
	}
	return nil
}
