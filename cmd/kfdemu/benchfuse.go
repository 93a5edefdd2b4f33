package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// rawFUSE is the machine's own floor for the bench's FUSE figures: a file system served by one OS
// thread that reads /dev/fuse and writes the replies itself (no go-fuse, no emulator). Two kinds:
// one file whose every ioctl answers ENOTTY (the ioctl figures: its latency tail is the kernel's
// and the scheduler's, where the woken reader runs: on a VM, a wake-up that lands on an idle vCPU
// costs tens of µs more than one on the client's own, which the daemon's own no-op ioctl cannot
// separate from go-fuse's readers and the Go scheduler), and a read-only mirror of a directory with
// the emulator's sys caching (the topology snapshot: FUSE's own kernel path, mirrorFloor).
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
	if os.Getenv(fuseFloorEnv) == "1" && (len(os.Args) == 3 || len(os.Args) == 4) && os.Args[1] == fuseFloorArg {
		os.Exit(runFuseFloor(os.Args[2], strings.Join(os.Args[3:], "")))
	}
}

// FUSE protocol numbers (<linux/fuse.h>; the protocol is 7.31 as the replies below lay it out).
const (
	fuseLookup      = 1
	fuseForget      = 2
	fuseGetattr     = 3
	fuseReadlink    = 5
	fuseOpen        = 14
	fuseRead        = 15
	fuseRelease     = 18
	fuseFlush       = 25
	fuseInit        = 26
	fuseOpendir     = 27
	fuseReaddir     = 28
	fuseReleasedir  = 29
	fuseInterrupt   = 36
	fuseDestroy     = 38
	fuseIoctl       = 39
	fuseBatchForget = 42

	fuseCacheSymlinks = 1 << 23 // INIT flag: the kernel caches READLINK answers

	fuseInHeaderSize = 40
	fuseAttrSize     = 88
	fuseRootID       = 1
	rawFileID        = 2
)

// startRawFUSE starts the floor's server on a new temporary directory (mount(2) itself: root only;
// an error otherwise) and returns once it is mounted: the one-file tree of the ioctl floor, or with
// mirror a read-only mirror of that directory (mirrorFloor).
func startRawFUSE(mirror string) (*rawFUSE, error) {
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
	args := []string{fuseFloorArg, dir}
	if mirror != "" {
		args = append(args, mirror)
	}
	r.cmd = exec.Command(self, args...)
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

// runFuseFloor is the child: it mounts dir and serves it (rawServe) until the unmount: the ioctl
// floor's file, or with mirror a mirror of that directory.
func runFuseFloor(dir, mirror string) int {
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
	flags, reply := uint32(0), ioctlFloor()
	if mirror != "" {
		flags, reply = fuseCacheSymlinks, mirrorFloor(mirror)
	}
	if err := rawServe(dev, flags, reply); err != nil {
		fmt.Fprintf(os.Stderr, "kfdemu: minimal FUSE server: %v\n", err)
		unix.Unmount(dir, unix.MNT_DETACH)
		return 1
	}
	return 0
}

// rawServe is the reader: one locked OS thread, requests answered in the order read by reply, until
// the connection ends (ENODEV: nil). INIT is answered here (protocol 7.31) with the flags initFlags
// the kernel offers; FORGET, BATCH_FORGET and INTERRUPT get no reply.
func rawServe(dev int, initFlags uint32, reply func(op uint32, node uint64, in []byte) ([]byte, unix.Errno)) error {
	runtime.LockOSThread()
	buf := make([]byte, 1<<20+4096) // at least max_write plus headers, as the kernel asks
	var hdr [16]byte
	var init [64]byte
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
		var body []byte
		var errno unix.Errno
		switch op {
		case fuseForget, fuseBatchForget, fuseInterrupt:
			continue
		case fuseInit:
			if len(in) < 16 {
				return errors.New("short FUSE INIT")
			}
			clear(init[:])
			le.PutUint32(init[0:], 7)                 // major
			le.PutUint32(init[4:], 31)                // minor
			le.PutUint32(init[8:], le.Uint32(in[8:])) // max_readahead as asked
			le.PutUint32(init[12:], le.Uint32(in[12:])&initFlags)
			le.PutUint16(init[16:], 16)    // max_background
			le.PutUint16(init[18:], 12)    // congestion_threshold
			le.PutUint32(init[20:], 1<<20) // max_write
			le.PutUint32(init[24:], 1)     // time_gran
			body = init[:]
		default:
			body, errno = reply(op, node, in)
		}
		if errno != 0 {
			body = nil
		}
		le.PutUint32(hdr[0:], uint32(16+len(body)))
		le.PutUint32(hdr[4:], uint32(-int32(errno)))
		le.PutUint64(hdr[8:], unique)
		// ENOENT: the request was interrupted meanwhile; anything else ends the server.
		if _, err := unix.Writev(dev, [][]byte{hdr[:], body}); err != nil && !errors.Is(err, unix.ENOENT) {
			return err
		}
	}
}

// ioctlFloor answers the one-file tree of the ioctl floor: every ioctl ENOTTY.
func ioctlFloor() func(op uint32, node uint64, in []byte) ([]byte, unix.Errno) {
	le := binary.LittleEndian
	out := make([]byte, 256)
	return func(op uint32, node uint64, in []byte) ([]byte, unix.Errno) {
		clear(out)
		switch op {
		case fuseLookup:
			if node != fuseRootID || string(in) != "f\x00" {
				return nil, unix.ENOENT
			}
			le.PutUint64(out[0:], rawFileID)
			le.PutUint64(out[16:], 3600) // entry_valid
			le.PutUint64(out[24:], 3600) // attr_valid
			rawAttr(out[40:], rawFileID)
			return out[:40+fuseAttrSize], 0
		case fuseGetattr:
			le.PutUint64(out[0:], 3600)
			rawAttr(out[16:], node)
			return out[:16+fuseAttrSize], 0
		case fuseOpen, fuseOpendir:
			return out[:16], 0 // fh 0
		case fuseFlush, fuseRelease, fuseReleasedir, fuseDestroy:
			return nil, 0
		case fuseIoctl:
			return nil, unix.ENOTTY
		}
		return nil, unix.ENOSYS
	}
}

// rawAttr fills a fuse_attr: the root directory or the file.
func rawAttr(b []byte, node uint64) {
	st := unix.Stat_t{Mode: unix.S_IFREG | 0o666, Nlink: 1, Uid: uint32(os.Geteuid()), Gid: uint32(os.Getegid())}
	if node == fuseRootID {
		st.Mode = unix.S_IFDIR | 0o755
	}
	fuseAttr(b, node, &st)
}

// fuseAttr fills a fuse_attr (include/uapi/linux/fuse.h) with node id and st's fields.
func fuseAttr(b []byte, id uint64, st *unix.Stat_t) {
	le := binary.LittleEndian
	le.PutUint64(b[0:], id)
	le.PutUint64(b[8:], uint64(st.Size))
	le.PutUint64(b[16:], uint64(st.Blocks))
	le.PutUint64(b[24:], uint64(st.Atim.Sec))
	le.PutUint64(b[32:], uint64(st.Mtim.Sec))
	le.PutUint64(b[40:], uint64(st.Ctim.Sec))
	le.PutUint32(b[60:], st.Mode)
	le.PutUint32(b[64:], uint32(st.Nlink))
	le.PutUint32(b[68:], st.Uid)
	le.PutUint32(b[72:], st.Gid)
	le.PutUint32(b[80:], uint32(st.Blksize))
}

// mirrorFloor answers a read-only mirror of the directory root with the caching the emulator's
// sys connection asks for (fs/sysfs.go, fs/noopendir.go): OPEN, OPENDIR and FLUSH answered ENOSYS
// (the kernel then stops sending them), entries and attributes valid for an hour, page cache kept,
// symlink targets cached (FUSE_CACHE_SYMLINKS in INIT). Node IDs are handed out per path and never
// forgotten (a bench's tree is small).
func mirrorFloor(root string) func(op uint32, node uint64, in []byte) ([]byte, unix.Errno) {
	le := binary.LittleEndian
	paths := map[uint64]string{fuseRootID: root}
	ids := map[string]uint64{root: fuseRootID}
	out := make([]byte, 1<<20+256)
	return func(op uint32, node uint64, in []byte) ([]byte, unix.Errno) {
		p, ok := paths[node]
		if !ok {
			return nil, unix.ESTALE
		}
		clear(out[:256])
		switch op {
		case fuseLookup:
			name, _, _ := strings.Cut(string(in), "\x00")
			child := filepath.Join(p, name)
			var st unix.Stat_t
			if err := unix.Lstat(child, &st); err != nil {
				return nil, errnoOf(err)
			}
			id, ok := ids[child]
			if !ok {
				id = uint64(len(paths) + 1)
				paths[id], ids[child] = child, id
			}
			le.PutUint64(out[0:], id)
			le.PutUint64(out[16:], 3600) // entry_valid
			le.PutUint64(out[24:], 3600) // attr_valid
			fuseAttr(out[40:], id, &st)
			return out[:40+fuseAttrSize], 0
		case fuseGetattr:
			var st unix.Stat_t
			if err := unix.Lstat(p, &st); err != nil {
				return nil, errnoOf(err)
			}
			le.PutUint64(out[0:], 3600)
			fuseAttr(out[16:], node, &st)
			return out[:16+fuseAttrSize], 0
		case fuseReadlink:
			n, err := unix.Readlink(p, out)
			if err != nil {
				return nil, errnoOf(err)
			}
			return out[:n], 0
		case fuseRead:
			if len(in) < 24 {
				return nil, unix.EINVAL
			}
			off, size := int64(le.Uint64(in[8:])), min(int(le.Uint32(in[16:])), len(out))
			fd, err := unix.Open(p, unix.O_RDONLY|unix.O_CLOEXEC, 0)
			if err != nil {
				return nil, errnoOf(err)
			}
			defer unix.Close(fd)
			n, err := unix.Pread(fd, out[:size], off)
			if err != nil {
				return nil, errnoOf(err)
			}
			return out[:n], 0
		case fuseReaddir:
			if len(in) < 24 {
				return nil, unix.EINVAL
			}
			off, size := int(le.Uint64(in[8:])), min(int(le.Uint32(in[16:])), len(out))
			ents, err := os.ReadDir(p)
			if err != nil {
				return nil, unix.EIO
			}
			n := 0
			for i := off; i < len(ents); i++ {
				name := ents[i].Name()
				rec := 24 + (len(name)+7)&^7
				if n+rec > size {
					break
				}
				clear(out[n : n+rec])
				le.PutUint64(out[n:], uint64(i+2))   // ino: any non-zero value
				le.PutUint64(out[n+8:], uint64(i+1)) // off: the next entry's index
				le.PutUint32(out[n+16:], uint32(len(name)))
				le.PutUint32(out[n+20:], direntType(ents[i].Type()))
				copy(out[n+24:], name)
				n += rec
			}
			return out[:n], 0
		case fuseRelease, fuseReleasedir:
			return nil, 0
		}
		return nil, unix.ENOSYS // OPEN, OPENDIR, FLUSH among them
	}
}

// direntType is a fuse_dirent's type (DT_* of <dirent.h>).
func direntType(m fs.FileMode) uint32 {
	switch {
	case m.IsDir():
		return unix.DT_DIR
	case m&fs.ModeSymlink != 0:
		return unix.DT_LNK
	case m.IsRegular():
		return unix.DT_REG
	}
	return unix.DT_UNKNOWN
}

// errnoOf is err's errno (EIO for an error that carries none).
func errnoOf(err error) unix.Errno {
	var e unix.Errno
	if errors.As(err, &e) {
		return e
	}
	return unix.EIO
}
