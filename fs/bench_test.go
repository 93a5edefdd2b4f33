package fs

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"

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

func readAll(b *testing.B, files []string) {
	buf := make([]byte, 8192)
	for _, f := range files {
		fd, err := os.Open(f)
		if err != nil {
			b.Fatal(err)
		}
		fd.Read(buf)
		fd.Close()
	}
}

// BenchmarkTopologyRead reads every file of the captured 65-node MI300X CPX tree through the mount
// and from a tmpfs copy of the same tree in the same run; ratio = mount / tmpfs (issue 2: <= 2).
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
	if err := topology.WriteTree(filepath.Join(tmp, "topology"), tree); err != nil {
		b.Fatal(err)
	}
	mountFiles := listFiles(b, filepath.Join(dir, "sys/devices/virtual/kfd/kfd/topology"))
	tmpFiles := listFiles(b, filepath.Join(tmp, "topology"))
	readAll(b, mountFiles) // warm the kernel caches, as a real sysfs is warm
	readAll(b, tmpFiles)
	var mountNs, tmpNs int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := nowNs()
		readAll(b, mountFiles)
		t1 := nowNs()
		readAll(b, tmpFiles)
		t2 := nowNs()
		mountNs += t1 - t0
		tmpNs += t2 - t1
	}
	b.ReportMetric(float64(mountNs)/float64(b.N)/1e6, "ms-mount/op")
	b.ReportMetric(float64(tmpNs)/float64(b.N)/1e6, "ms-tmpfs/op")
	b.ReportMetric(float64(mountNs)/float64(tmpNs), "ratio")
	b.ReportMetric(float64(len(mountFiles)), "files")
}
