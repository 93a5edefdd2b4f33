package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// rawFUSE is the machine's own floor for a FUSE ioctl round trip: a file system of one file served
// by one OS thread that reads /dev/fuse and writes the replies itself (no go-fuse, no emulator),
// answering every ioctl ENOTTY. Its latency tail is the kernel's and the scheduler's (where the
// woken reader runs: on a VM, a wake-up that lands on an idle vCPU costs tens of µs more than one
// on the client's own), which the ioctl figure's own no-op floor, served by the daemon, cannot
// separate from go-fuse's readers and the Go scheduler.
//
// The server is a child process (this binary re-executed with fuseFloorArg and fuseFloorEnv=1, as
// the bench's clients are): a Go process that is a client of a FUSE server of its own can deadlock
// in a stop-the-world of its collector (seen in a CI dry run: the server's goroutine, back from
// read(2), waiting for a P; the collector waiting for the goroutine whose system call waited for
// the server's reply). The child mounts DIR, prints "ready" and serves until it reads the end of
// its stdin (its parent gone or done), when it unmounts (MNT_DETACH) and exits once no file of the
// mount is open (read(2) then answers ENODEV).
type rawFUSE struct {
	dir  string
	conn uint32 // the connection's number in fusectl (the mount's minor device number)
	cmd  *exec.Cmd
	in   io.WriteCloser
	exit chan error
	once sync.Once
	err  error
}

const (
	fuseFloorArg = "__fuse-floor"
	fuseFloorEnv = "KFDEMU_FUSE_FLOOR"
)

func init() {
	if os.Getenv(fuseFloorEnv) == "1" && len(os.Args) == 3 && os.Args[1] == fuseFloorArg {
		os.Exit(runFuseFloor(os.Args[2]))
	}
}

// FUSE protocol numbers (<linux/fuse.h>; the protocol is 7.31 as the replies below lay it out).
const (
	fuseLookup      = 1
	fuseForget      = 2
	fuseGetattr     = 3
	fuseOpen        = 14
	fuseRelease     = 18
	fuseFlush       = 25
	fuseInit        = 26
	fuseOpendir     = 27
	fuseReleasedir  = 29
	fuseInterrupt   = 36
	fuseDestroy     = 38
	fuseIoctl       = 39
	fuseBatchForget = 42

	fuseInHeaderSize = 40
	fuseAttrSize     = 88
	fuseRootID       = 1
	rawFileID        = 2
)

// startRawFUSE starts the floor's server on a new temporary directory (mount(2) itself: root only;
// an error otherwise) and returns once it is mounted.
func startRawFUSE() (*rawFUSE, error) {
	dir, err := os.MkdirTemp("", "kfdemu-fuse-floor-")
	if err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		os.Remove(dir)
		return nil, err
	}
	r := &rawFUSE{dir: dir, exit: make(chan error, 1)}
	r.cmd = exec.Command(self, fuseFloorArg, dir)
	r.cmd.Env = append(os.Environ(), fuseFloorEnv+"=1")
	r.cmd.Stderr = os.Stderr
	out, err := r.cmd.StdoutPipe()
	if err == nil {
		r.in, err = r.cmd.StdinPipe()
	}
	if err == nil {
		err = r.cmd.Start()
	}
	if err != nil {
		os.Remove(dir)
		return nil, err
	}
	go func() { r.exit <- r.cmd.Wait() }()
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(out).ReadString('\n')
		line <- strings.TrimSpace(s)
		io.Copy(io.Discard, out)
	}()
	select {
	case s := <-line:
		if s != "ready" {
			r.stop()
			return nil, fmt.Errorf("minimal FUSE server: %s", strings.TrimPrefix(s, "error "))
		}
	case <-time.After(10 * time.Second):
		r.stop()
		return nil, errors.New("minimal FUSE server: not ready after 10 s")
	}
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		r.stop()
		return nil, err
	}
	r.conn = unix.Minor(st.Dev)
	return r, nil
}

// file is the served file's path.
func (r *rawFUSE) file() string { return filepath.Join(r.dir, "f") }

// stop ends the server: it unmounts at the end of its stdin and exits once no file of the mount is
// open. One still serving after 5 s (a file left open) has its connection aborted through fusectl,
// where that is mounted, then is killed. Later calls return the first's answer.
func (r *rawFUSE) stop() error {
	r.once.Do(func() {
		r.in.Close()
		var err error
		select {
		case err = <-r.exit:
		case <-time.After(5 * time.Second):
			abort := fmt.Sprintf("/sys/fs/fuse/connections/%d/abort", r.conn)
			werr := os.WriteFile(abort, []byte("1"), 0)
			select {
			case err = <-r.exit:
			case <-time.After(5 * time.Second):
				r.cmd.Process.Kill()
				<-r.exit
				err = fmt.Errorf("minimal FUSE server still serving 10 s after its unmount (a file open?), killed; abort: %v", werr)
			}
		}
		unix.Unmount(r.dir, unix.MNT_DETACH) // a server that never mounted or died: nothing, or its dead mount
		os.Remove(r.dir)
		r.err = err
	})
	return r.err
}

// runFuseFloor is the child: it mounts dir and serves it (rawServe) until the unmount.
func runFuseFloor(dir string) int {
	dev, err := unix.Open("/dev/fuse", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err == nil {
		opts := fmt.Sprintf("fd=%d,rootmode=40000,user_id=%d,group_id=%d", dev, os.Geteuid(), os.Getegid())
		if err = unix.Mount("kfdemu-floor", dir, "fuse.kfdemu-floor", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
			err = fmt.Errorf("mount: %w", err)
		}
	}
	if err != nil {
		fmt.Printf("error %v\n", err)
		return 1
	}
	go func() {
		io.Copy(io.Discard, os.Stdin)
		unix.Unmount(dir, unix.MNT_DETACH)
	}()
	fmt.Println("ready")
	if err := rawServe(dev); err != nil {
		fmt.Fprintf(os.Stderr, "kfdemu: minimal FUSE server: %v\n", err)
		unix.Unmount(dir, unix.MNT_DETACH)
		return 1
	}
	return 0
}

// rawServe is the reader: one locked OS thread, requests answered in the order read, until the
// connection ends (ENODEV: nil).
func rawServe(dev int) error {
	runtime.LockOSThread()
	buf := make([]byte, 1<<20+4096) // at least max_write plus headers, as the kernel asks
	out := make([]byte, 256)
	le := binary.LittleEndian
	for {
		n, err := unix.Read(dev, buf)
		switch {
		case errors.Is(err, unix.ENODEV):
			return nil
		case errors.Is(err, unix.EINTR), errors.Is(err, unix.ENOENT): // ENOENT: an interrupted request
			continue
		case err != nil:
			return err
		case n < fuseInHeaderSize:
			return fmt.Errorf("short FUSE request (%d bytes)", n)
		}
		op, unique, node := le.Uint32(buf[4:]), le.Uint64(buf[8:]), le.Uint64(buf[16:])
		in := buf[fuseInHeaderSize:n]
		body := out[16:]
		clear(body)
		size, errno := 0, unix.Errno(0)
		switch op {
		case fuseForget, fuseBatchForget, fuseInterrupt:
			continue // no reply
		case fuseInit:
			le.PutUint32(body[0:], 7)                 // major
			le.PutUint32(body[4:], 31)                // minor
			le.PutUint32(body[8:], le.Uint32(in[8:])) // max_readahead as asked
			le.PutUint16(body[16:], 16)               // max_background
			le.PutUint16(body[18:], 12)               // congestion_threshold
			le.PutUint32(body[20:], 1<<20)            // max_write
			le.PutUint32(body[24:], 1)                // time_gran
			size = 64
		case fuseLookup:
			if node != fuseRootID || string(in) != "f\x00" {
				errno = unix.ENOENT
				break
			}
			le.PutUint64(body[0:], rawFileID)
			le.PutUint64(body[16:], 3600) // entry_valid
			le.PutUint64(body[24:], 3600) // attr_valid
			rawAttr(body[40:], rawFileID)
			size = 40 + fuseAttrSize
		case fuseGetattr:
			le.PutUint64(body[0:], 3600)
			rawAttr(body[16:], node)
			size = 16 + fuseAttrSize
		case fuseOpen, fuseOpendir:
			size = 16 // fh 0
		case fuseFlush, fuseRelease, fuseReleasedir, fuseDestroy:
		case fuseIoctl:
			errno = unix.ENOTTY
		default:
			errno = unix.ENOSYS
		}
		if errno != 0 {
			size = 0
		}
		le.PutUint32(out[0:], uint32(16+size))
		le.PutUint32(out[4:], uint32(-int32(errno)))
		le.PutUint64(out[8:], unique)
		// ENOENT: the request was interrupted meanwhile; anything else ends the floor.
		if _, err := unix.Write(dev, out[:16+size]); err != nil && !errors.Is(err, unix.ENOENT) {
			return err
		}
	}
}

// rawAttr fills a fuse_attr: the root directory or the file.
func rawAttr(b []byte, node uint64) {
	le := binary.LittleEndian
	le.PutUint64(b[0:], node)
	mode := uint32(unix.S_IFREG | 0o666)
	if node == fuseRootID {
		mode = unix.S_IFDIR | 0o755
	}
	le.PutUint32(b[60:], mode)
	le.PutUint32(b[64:], 1) // nlink
	le.PutUint32(b[68:], uint32(os.Geteuid()))
	le.PutUint32(b[72:], uint32(os.Getegid()))
}
