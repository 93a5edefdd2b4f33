package hsa

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/kfdemu/kfdemu/internal/testenv"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kfdemu/kfdemu/gpu/sdma"
)

// flatMem is device memory for an SDMA queue in a test: one byte slice at base.
type flatMem struct {
	mu   sync.Mutex
	base uint64
	b    []byte
}

func (m *flatMem) span(va uint64, n int) ([]byte, error) {
	if va < m.base || va-m.base+uint64(n) > uint64(len(m.b)) {
		return nil, fmt.Errorf("fault at %#x", va)
	}
	return m.b[va-m.base : va-m.base+uint64(n)], nil
}

func (m *flatMem) Read(va uint64, p []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, err := m.span(va, len(p))
	copy(p, s)
	return err
}

func (m *flatMem) Write(va uint64, p []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, err := m.span(va, len(p))
	copy(s, p)
	return err
}

func (m *flatMem) Atomic(va uint64, size int, f func(uint64) uint64) (uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, err := m.span(va, size)
	if err != nil {
		return 0, err
	}
	var old uint64
	if size == 4 {
		old = uint64(binary.LittleEndian.Uint32(s))
	} else {
		old = binary.LittleEndian.Uint64(s)
	}
	if f != nil {
		if size == 4 {
			binary.LittleEndian.PutUint32(s, uint32(f(old)))
		} else {
			binary.LittleEndian.PutUint64(s, f(old))
		}
	}
	return old, nil
}

type sdmaHost struct{ err chan error }

func (h *sdmaHost) Interrupt(*sdma.Queue, uint32)     {}
func (h *sdmaHost) Timestamp() uint64                 { return 0 }
func (h *sdmaHost) QueueError(_ *sdma.Queue, e error) { h.err <- e }

// TestSDMAPacketsAgainstDevice runs the runtime's own COPY_LINEAR and FENCE packets on the emulated
// engine's decoder (two independent implementations of one layout): every byte is copied, at the
// largest count too, and the fence lands.
func TestSDMAPacketsAgainstDevice(t *testing.T) {
	const base, ring, rptr, wptr, src, dst, fence = 0x10_0000_0000, 0x10_0000_0000, 0x10_0000_1000,
		0x10_0000_1008, 0x10_0001_0000, 0x10_0051_0000, 0x10_0000_1100
	m := &flatMem{base: base, b: make([]byte, 0xa2_0000)}
	for i := 0; i < sdmaMaxCopy+0x1000; i++ {
		m.b[src-base+uint64(i)] = byte(i*13 + 7)
	}
	h := &sdmaHost{err: make(chan error, 1)}
	q, err := sdma.New(sdma.Config{RingBase: ring, RingSizeBytes: 4096, ReadPtrVA: rptr, WritePtrVA: wptr, Memory: m, Host: h})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Start(); err != nil {
		t.Fatal(err)
	}
	defer q.Stop()
	var p []byte
	p = appendCopyLinear(p, dst, src, sdmaMaxCopy) // the largest count: 22 bits of n-1
	p = appendCopyLinear(p, dst+sdmaMaxCopy, src+sdmaMaxCopy, 3)
	p = appendFence(p, fence, 0xfeedf00d)
	copy(m.b[ring-base:], p)
	m.Atomic(wptr, 8, func(uint64) uint64 { return uint64(len(p)) })
	q.Kick()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if v, _ := m.Atomic(fence, 4, nil); v == 0xfeedf00d {
			break
		}
		select {
		case err := <-h.err:
			t.Fatalf("queue error: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("fence not written")
		}
		time.Sleep(time.Millisecond)
	}
	n := uint64(sdmaMaxCopy + 3)
	for i := uint64(0); i < n; i++ {
		if m.b[dst-base+i] != byte(i*13+7) {
			t.Fatalf("destination byte %#x is %#x, want %#x", i, m.b[dst-base+i], byte(i*13+7))
		}
	}
	if m.b[dst-base+n] != 0 {
		t.Error("copied past the count")
	}
}

// TestSDMAPacketsAgainstKfdtest compares the encoder with the packet structs of kfdtest's
// sdma_pkt_struct.h (ROCT 6.2.4, from the tarball beside the project), filled field by field by
// a C program.
func TestSDMAPacketsAgainstKfdtest(t *testing.T) {
	tarball := testenv.Shared(t, "kfdtest/roct-6.2.4.tar.gz")
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("skipping: gcc not found")
	}
	dir := t.TempDir()
	const hdr = "roct-6.2.4/tests/kfdtest/include/sdma_pkt_struct.h"
	if out, err := exec.Command("tar", "-xzf", tarball, "-C", dir, hdr).CombinedOutput(); err != nil {
		t.Fatalf("tar: %v\n%s", err, out)
	}
	prog := `#include <stdio.h>
#include <string.h>
#include "sdma_pkt_struct.h"
static void dump(const void *p, int n) { const unsigned *d = p; for (int i = 0; i < n / 4; i++) printf("%08x ", d[i]); printf("\n"); }
int main(void) {
	/* one destination: the struct plus one DST_ADDR element (a flexible array for broadcast) */
	unsigned buf[16]; memset(buf, 0, sizeof buf);
	SDMA_PKT_COPY_LINEAR *c = (SDMA_PKT_COPY_LINEAR *)buf;
	c->HEADER_UNION.op = SDMA_OP_COPY; c->HEADER_UNION.sub_op = SDMA_SUBOP_COPY_LINEAR;
	c->COUNT_UNION.count = 0x12345 - 1;
	c->SRC_ADDR_LO_UNION.src_addr_31_0 = 0x89abc000; c->SRC_ADDR_HI_UNION.src_addr_63_32 = 0x7f01;
	c->DST_ADDR[0].DST_ADDR_LO_UNION.dst_addr_31_0 = 0x00456000; c->DST_ADDR[0].DST_ADDR_HI_UNION.dst_addr_63_32 = 0x7f02;
	dump(c, sizeof *c + sizeof c->DST_ADDR[0]);
	SDMA_PKT_FENCE f; memset(&f, 0, sizeof f);
	f.HEADER_UNION.op = SDMA_OP_FENCE;
	f.ADDR_LO_UNION.addr_31_0 = 0xdead0008; f.ADDR_HI_UNION.addr_63_32 = 0x7f03;
	f.DATA_UNION.data = 0xfeedf00d;
	dump(&f, sizeof f);
	return 0;
}
`
	c := filepath.Join(dir, "pkt.c")
	os.WriteFile(c, []byte(prog), 0644)
	bin := filepath.Join(dir, "pkt")
	inc := filepath.Dir(filepath.Join(dir, hdr))
	if out, err := exec.Command("gcc", "-I", inc, "-o", bin, c).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	want := [][]byte{
		appendCopyLinear(nil, 0x7f02_00456000, 0x7f01_89abc000, 0x12345),
		appendFence(nil, 0x7f03_dead0008, 0xfeedf00d),
	}
	if len(lines) != len(want) {
		t.Fatalf("C program printed %q", out)
	}
	for i, l := range lines {
		var got []byte
		for _, f := range strings.Fields(l) {
			v, err := strconv.ParseUint(f, 16, 32)
			if err != nil {
				t.Fatal(errors.Join(err, fmt.Errorf("line %q", l)))
			}
			got = binary.LittleEndian.AppendUint32(got, uint32(v))
		}
		if !bytes.Equal(got, want[i]) {
			t.Errorf("packet %d: sdma_pkt_struct.h gives % x, the encoder % x", i, got, want[i])
		}
	}
}
