package kmt

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// TopologyDir is the sysfs topology directory under the root (kfd_topology.c; libhsakmt's
// topology.c reads KFD_SYSFS_PATH_NODES under it).
const TopologyDir = "sys/devices/virtual/kfd/kfd/topology"

// Properties is one sysfs "properties" file: "name value" lines. Numeric values are in Values;
// values that are not unsigned integers (a cache's sibling_map) are kept verbatim in Text.
type Properties struct {
	Values map[string]uint64
	Text   map[string]string
	Order  []string // keys in file order
}

// Get returns a numeric property, 0 when absent.
func (p Properties) Get(key string) uint64 { return p.Values[key] }

// Has reports whether key is present.
func (p Properties) Has(key string) bool {
	_, ok := p.Values[key]
	if !ok {
		_, ok = p.Text[key]
	}
	return ok
}

// ErrSyntax is returned by ParseProperties for a line that is not "name value".
var ErrSyntax = errors.New("kmt: malformed sysfs properties line")

// ParseProperties parses kfd_topology.c's sysfs_show_*_prop output: one "name value" pair per line
// (sysfs_show_32bit_prop / sysfs_show_64bit_prop print "%s %u" / "%s %llu"; caches' sibling_map is a
// comma-separated list). Keys must be unique.
func ParseProperties(b []byte) (Properties, error) {
	p := Properties{Values: map[string]uint64{}, Text: map[string]string{}}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for line := 1; sc.Scan(); line++ {
		l := strings.TrimSpace(sc.Text())
		if l == "" {
			continue
		}
		k, v, ok := strings.Cut(l, " ")
		v = strings.TrimSpace(v)
		if !ok || k == "" || v == "" {
			return Properties{}, fmt.Errorf("%w: line %d %q", ErrSyntax, line, l)
		}
		if p.Has(k) {
			return Properties{}, fmt.Errorf("%w: line %d: duplicate key %q", ErrSyntax, line, k)
		}
		if n, err := strconv.ParseUint(v, 10, 64); err == nil {
			p.Values[k] = n
		} else {
			p.Text[k] = v
		}
		p.Order = append(p.Order, k)
	}
	if err := sc.Err(); err != nil {
		return Properties{}, fmt.Errorf("%w: %v", ErrSyntax, err)
	}
	return p, nil
}

// Topology is one consistent snapshot of the sysfs topology (hsaKmtAcquireSystemProperties).
type Topology struct {
	GenerationID uint64
	System       Properties // system_properties: platform_oem, platform_id, platform_rev
	Nodes        []*Node    // in node-id order
}

// Node is nodes/N: its properties and sub-objects. GPUID is 0 for CPU-only nodes.
type Node struct {
	ID       uint32
	GPUID    uint32
	Name     string
	Props    Properties
	MemBanks []Properties
	Caches   []Properties
	IOLinks  []Properties
	P2PLinks []Properties
}

// IsGPU reports a node with compute cores (ROCr: NumFComputeCores > 0 makes a GpuAgent).
func (n *Node) IsGPU() bool { return n.Props.Get("simd_count") > 0 && n.GPUID != 0 }

// IsCPU reports a node with CPU cores (ROCr: NumCPUCores > 0 makes a CpuAgent).
func (n *Node) IsCPU() bool { return n.Props.Get("cpu_cores_count") > 0 }

// RenderMinor is drm_render_minor (the node's /dev/dri/renderD<minor>).
func (n *Node) RenderMinor() uint32 { return uint32(n.Props.Get("drm_render_minor")) }

// GfxVersion is gfx_target_version as major, minor, stepping (90010 -> 9, 0, 10).
func (n *Node) GfxVersion() (major, minor, stepping uint32) {
	v := uint32(n.Props.Get("gfx_target_version"))
	return v / 10000, v / 100 % 100, v % 100
}

// GfxName is the LLVM processor name ("gfx90a") derived from gfx_target_version the way ROCr's
// IsaRegistry names ISAs: "gfx" major, minor and stepping, the last two in hex.
func (n *Node) GfxName() string {
	if n.Props.Get("gfx_target_version") == 0 {
		return ""
	}
	ma, mi, st := n.GfxVersion()
	return fmt.Sprintf("gfx%d%x%x", ma, mi, st)
}

// ComputeUnits is simd_count / simd_per_cu (libhsakmt NumFComputeCores / NumSIMDPerCU).
func (n *Node) ComputeUnits() uint32 {
	if spc := n.Props.Get("simd_per_cu"); spc != 0 {
		return uint32(n.Props.Get("simd_count") / spc)
	}
	return 0
}

// HeapSize sums size_in_bytes of the memory banks of the given heap types.
func (n *Node) HeapSize(types ...uint64) uint64 {
	var s uint64
	for _, b := range n.MemBanks {
		for _, t := range types {
			if b.Get("heap_type") == t {
				s += b.Get("size_in_bytes")
			}
		}
	}
	return s
}

// ReadTopology takes a snapshot of dir (ROOT/TopologyDir) as libhsakmt's topology_take_snapshot
// does: read generation_id, everything, generation_id again; retry while it changes.
func ReadTopology(dir string) (*Topology, error) {
	for try := 0; try < 10; try++ {
		g1, err := readUint(filepath.Join(dir, "generation_id"))
		if err != nil {
			return nil, err
		}
		t, err := readTopologyOnce(dir)
		if err != nil {
			// A node may vanish mid-read during hot-unplug: retry if the generation moved.
			if g2, err2 := readUint(filepath.Join(dir, "generation_id")); err2 == nil && g2 != g1 {
				continue
			}
			return nil, err
		}
		g2, err := readUint(filepath.Join(dir, "generation_id"))
		if err != nil {
			return nil, err
		}
		if g1 == g2 {
			t.GenerationID = g1
			return t, nil
		}
	}
	return nil, ErrTopologyUnstable
}

// readFile reads a sysfs file as libhsakmt does (fopen, read to the end, fclose): plain open(2),
// read(2) and close(2). os.ReadFile would also register the descriptor with Go's netpoller
// (two epoll_ctl calls and an fcntl per file) wherever epoll accepts it, and it accepts FUSE files
// (and sysfs's own kernfs files), unlike files on tmpfs: a topology snapshot reads thousands.
func readFile(path string) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	for err == unix.EINTR {
		fd, err = unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	b := make([]byte, 0, 4096) // a sysfs attribute is at most a page
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := unix.Read(fd, b[len(b):cap(b)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			return b, nil
		}
		b = b[:len(b)+n]
	}
}

func readUint(path string) (uint64, error) {
	b, err := readFile(path)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("kmt: %s: %w", path, err)
	}
	return n, nil
}

func readProps(path string) (Properties, error) {
	b, err := readFile(path)
	if err != nil {
		return Properties{}, err
	}
	p, err := ParseProperties(b)
	if err != nil {
		return Properties{}, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// numberedDirs lists the numerically named subdirectories of dir in numeric order; a missing dir
// is empty.
func numberedDirs(dir string) ([]uint32, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ids []uint32
	for _, e := range ents {
		if n, err := strconv.ParseUint(e.Name(), 10, 32); err == nil {
			ids = append(ids, uint32(n))
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids, nil
}

func readSub(dir, sub string) ([]Properties, error) {
	ids, err := numberedDirs(filepath.Join(dir, sub))
	if err != nil {
		return nil, err
	}
	out := make([]Properties, 0, len(ids))
	for _, id := range ids {
		p, err := readProps(filepath.Join(dir, sub, strconv.Itoa(int(id)), "properties"))
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

func readTopologyOnce(dir string) (*Topology, error) {
	sys, err := readProps(filepath.Join(dir, "system_properties"))
	if err != nil {
		return nil, err
	}
	t := &Topology{System: sys}
	ids, err := numberedDirs(filepath.Join(dir, "nodes"))
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		nd := filepath.Join(dir, "nodes", strconv.Itoa(int(id)))
		n := &Node{ID: id}
		// libhsakmt: a node whose gpu_id cannot be read (EPERM under a device cgroup) is not
		// supported; it stays in the list as a node without a GPU.
		if g, err := readUint(filepath.Join(nd, "gpu_id")); err == nil {
			n.GPUID = uint32(g)
		}
		if b, err := readFile(filepath.Join(nd, "name")); err == nil {
			n.Name = strings.TrimSpace(string(b))
		}
		if n.Props, err = readProps(filepath.Join(nd, "properties")); err != nil {
			return nil, err
		}
		if n.MemBanks, err = readSub(nd, "mem_banks"); err != nil {
			return nil, err
		}
		if n.Caches, err = readSub(nd, "caches"); err != nil {
			return nil, err
		}
		if n.IOLinks, err = readSub(nd, "io_links"); err != nil {
			return nil, err
		}
		if n.P2PLinks, err = readSub(nd, "p2p_links"); err != nil {
			return nil, err
		}
		t.Nodes = append(t.Nodes, n)
	}
	return t, nil
}

// GPUs lists the GPU nodes.
func (t *Topology) GPUs() []*Node {
	var out []*Node
	for _, n := range t.Nodes {
		if n.IsGPU() {
			out = append(out, n)
		}
	}
	return out
}

// Node returns node id.
func (t *Topology) Node(id uint32) (*Node, error) {
	for _, n := range t.Nodes {
		if n.ID == id {
			return n, nil
		}
	}
	return nil, fmt.Errorf("%w: %d", ErrNoNode, id)
}
