//go:build unix

package cli

import (
	"errors"
	"io"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// interruptibleInput makes a read of r stoppable when r is a file (a
// terminal, a pipe): each Read first polls the file together with a wake
// pipe, so wake ends a read that is waiting for the operator. Other readers
// are returned as they are, and cannot be interrupted.
func interruptibleInput(r io.Reader) (in io.Reader, wake func(), interruptible bool) {
	f, ok := r.(*os.File)
	if !ok {
		return r, func() {}, false
	}
	// The descriptor through SyscallConn: Fd would switch a non-blocking
	// input to blocking mode.
	fd := -1
	if rc, err := f.SyscallConn(); err == nil {
		_ = rc.Control(func(d uintptr) { fd = int(d) })
	}
	var p [2]int
	if fd < 0 || unix.Pipe2(p[:], unix.O_CLOEXEC) != nil {
		return r, func() {}, false
	}
	var once sync.Once
	return &pollReader{f: f, fd: fd, wakeR: p[0]}, func() { once.Do(func() { unix.Close(p[1]) }) }, true
}

// pollReader reads f once poll says it is readable, or fails with
// errStopped once the wake pipe's write end is closed.
type pollReader struct {
	f      *os.File
	fd     int
	wakeR  int
	closed bool
}

// release closes the wake pipe's read end; the reader goroutine calls it
// when it returns.
func (r *pollReader) release() {
	if !r.closed {
		r.closed = true
		unix.Close(r.wakeR)
	}
}

func (r *pollReader) Read(b []byte) (int, error) {
	if r.closed {
		return 0, errStopped
	}
	fds := []unix.PollFd{
		{Fd: int32(r.fd), Events: unix.POLLIN},
		{Fd: int32(r.wakeR), Events: unix.POLLIN},
	}
	for {
		_, err := unix.Poll(fds, -1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return 0, err
		}
		if fds[1].Revents != 0 {
			r.release()
			return 0, errStopped
		}
		if fds[0].Revents&unix.POLLNVAL != 0 {
			return 0, os.ErrClosed
		}
		if fds[0].Revents != 0 { // readable, hung up or in error: read says which
			return r.f.Read(b)
		}
	}
}
