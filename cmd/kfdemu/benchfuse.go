package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
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
type rawFUSE struct {
	dir  string
	dev  int
	conn uint32 // the connection's number in fusectl (the mount's minor device number)
	done chan error
	once sync.Once
	err  error
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

// startRawFUSE mounts the floor file system in a new temporary directory (mount(2) itself: root
// only; an error otherwise) and serves it until stop.
func startRawFUSE() (*rawFUSE, error) {
	dir, err := os.MkdirTemp("", "kfdemu-fuse-floor-")
	if err != nil {
		return nil, err
	}
	dev, err := unix.Open("/dev/fuse", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		os.Remove(dir)
		return nil, err
	}
	opts := fmt.Sprintf("fd=%d,rootmode=40000,user_id=%d,group_id=%d", dev, os.Geteuid(), os.Getegid())
	if err := unix.Mount("kfdemu-floor", dir, "fuse.kfdemu-floor", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
		unix.Close(dev)
		os.Remove(dir)
		return nil, fmt.Errorf("mount: %w", err)
	}
	r := &rawFUSE{dir: dir, dev: dev, done: make(chan error, 1)}
	go r.serve()
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

// stop unmounts (the reader gets ENODEV once no file of the mount is open) and waits for the
// reader; one still serving after 5 s (a file left open) has its connection aborted through
// fusectl, where that is mounted. Later calls return the first's answer.
func (r *rawFUSE) stop() error {
	r.once.Do(func() {
		uerr := unix.Unmount(r.dir, unix.MNT_DETACH)
		var err error
		select {
		case err = <-r.done:
		case <-time.After(5 * time.Second):
			abort := fmt.Sprintf("/sys/fs/fuse/connections/%d/abort", r.conn)
			if werr := os.WriteFile(abort, []byte("1"), 0); werr != nil {
				err = fmt.Errorf("minimal FUSE server still serving after unmount (a file open?); %w", werr)
				break // the reader is left blocked: closing its descriptor would not wake it
			}
			err = <-r.done
		}
		unix.Close(r.dev)
		os.Remove(r.dir)
		r.err = errors.Join(uerr, err)
	})
	return r.err
}

// serve is the reader: one locked OS thread, requests answered in the order read.
func (r *rawFUSE) serve() {
	runtime.LockOSThread()
	buf := make([]byte, 1<<20+4096) // at least max_write plus headers, as the kernel asks
	out := make([]byte, 256)
	le := binary.LittleEndian
	for {
		n, err := unix.Read(r.dev, buf)
		switch {
		case errors.Is(err, unix.ENODEV):
			r.done <- nil
			return
		case errors.Is(err, unix.EINTR), errors.Is(err, unix.ENOENT): // ENOENT: an interrupted request
			continue
		case err != nil:
			r.done <- err
			return
		case n < fuseInHeaderSize:
			r.done <- fmt.Errorf("short FUSE request (%d bytes)", n)
			return
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
		if _, err := unix.Write(r.dev, out[:16+size]); err != nil && !errors.Is(err, unix.ENOENT) {
			r.done <- err
			return
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
