//go:build unix

package cli

import (
	"errors"
	"io"
	"os"
	"sync"
	"syscall"

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
	p, err := wakePipe()
	if fd < 0 || err != nil {
		return r, func() {}, false
	}
	var once sync.Once
	return &pollReader{f: f, fd: fd, wakeR: p[0]}, func() { once.Do(func() { unix.Close(p[1]) }) }, true
}

// wakePipe returns a close-on-exec pipe. Pipe2 is not on every Unix
// (darwin lacks it), so the flag is set under the fork lock, which keeps a
// concurrent fork from inheriting the descriptors in between.
func wakePipe() ([2]int, error) {
	var p [2]int
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	if err := unix.Pipe(p[:]); err != nil {
		return p, err
	}
	unix.CloseOnExec(p[0])
	unix.CloseOnExec(p[1])
	return p, nil
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
