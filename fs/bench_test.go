package fs

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/kfdemu/kfdemu/internal/testenv"
	"github.com/kfdemu/kfdemu/topology"
)

func listFiles(b *testing.B, root string) []string {
	var files []string
	filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			files = append(files, p)
		}
		return nil
	})
	if len(files) == 0 {
		b.Fatalf("no files under %s", root)
	}
	return files
}

// readAll reads each file as libhsakmt does (fopen, fread, fclose): open(2), read(2), close(2).
// os.Open would also register each descriptor with Go's netpoller, which accepts FUSE files and
// refuses tmpfs files, charging the mount two epoll_ctl calls per file the floor never makes.
func readAll(b *testing.B, files []string) {
	buf := make([]byte, 8192)
	for _, f := range files {
		fd, err := unix.Open(f, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			b.Fatal(f, err)
		}
		for {
			n, err := unix.Read(fd, buf)
			if n <= 0 || err != nil {
				break
			}
		}
		unix.Close(fd)
	}
}

// BenchmarkTopologyRead reads every file of the captured 65-node MI300X CPX tree through the mount
// and from a tmpfs copy of the same tree in the same run; ratio = mount / tmpfs (issue 20: <= 1.2).
// The copy sits at the mount's path (TMP/sys/devices/virtual/kfd/kfd/topology, TMP as deep as the
// mount point), since every path component costs a lookup on either side; ratio-short-path is
// against a copy at the tmpfs directory's root, five components shorter (the floor until
// 2026-12-05).
func BenchmarkTopologyRead(b *testing.B) {
	testenv.NeedMount(b)
	cpxFixture := testenv.Shared(b, "fixtures/topology/topo-mi300-cpx/topology")
	tree, err := topology.LoadCapture(cpxFixture)
	if err != nil {
		b.Fatal(err)
	}
	sys, _ := topology.ReadSystem(cpxFixture)
	dir := filepath.Join(b.TempDir(), "mnt")
	srv, err := Mount(dir, Options{System: sys, Capture: tree, Log: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Unmount()
	tmp, err := os.MkdirTemp("/dev/shm", "kfdemu-bench-")
	if err != nil {
		b.Skip("no tmpfs at /dev/shm")
	}
	defer os.RemoveAll(tmp)
	const treePath = "sys/devices/virtual/kfd/kfd/topology"
	depth := func(p string) int { return strings.Count(filepath.Clean(p), "/") }
	deep := tmp
	for depth(deep) < depth(dir) {
		deep = filepath.Join(deep, "d")
	}
	deep = filepath.Join(deep, treePath)
	short := filepath.Join(tmp, "topology")
	for _, root := range []string{deep, short} {
		if err := topology.WriteTree(root, tree); err != nil {
			b.Fatal(err)
		}
	}
	sets := [][]string{listFiles(b, filepath.Join(dir, treePath)), listFiles(b, deep), listFiles(b, short)}
	for _, files := range sets {
		readAll(b, files) // warm the kernel caches, as a real sysfs is warm
	}
	var ns [3]int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j, files := range sets {
			t0 := nowNs()
			readAll(b, files)
			ns[j] += nowNs() - t0
		}
	}
	b.ReportMetric(float64(ns[0])/float64(b.N)/1e6, "ms-mount/op")
	b.ReportMetric(float64(ns[1])/float64(b.N)/1e6, "ms-tmpfs/op")
	b.ReportMetric(float64(ns[0])/float64(ns[1]), "ratio")
	b.ReportMetric(float64(ns[0])/float64(ns[2]), "ratio-short-path")
	mountFiles := sets[0]
	b.ReportMetric(float64(len(mountFiles)), "files")
}
