//go:build unix

package process

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// openNoFollow refuses a symbolic link as the final path component.
const openNoFollow = syscall.O_NOFOLLOW

// errnoName returns the symbolic name of the errno inside err ("ENOSPC"),
// or "".
func errnoName(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return unix.ErrnoName(errno)
	}
	return ""
}

// writeBoth writes a and then b to f, in one system call when it can.
func writeBoth(f *os.File, a, b []byte) (int, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, err
	}
	var n int
	var werr error
	if err := rc.Write(func(fd uintptr) bool {
		for {
			n, werr = unix.Writev(int(fd), [][]byte{a, b})
			if werr != syscall.EINTR {
				return true
			}
		}
	}); err != nil {
		return 0, err
	}
	if werr != nil {
		return 0, werr
	}
	if n < len(a) {
		// A partial write: the rest goes the ordinary way, which
		// reports why it stopped.
		m, err := f.Write(a[n:])
		if n += m; err != nil {
			return n, err
		}
	}
	if rest := n - len(a); rest < len(b) {
		m, err := f.Write(b[rest:])
		return n + m, err
	}
	return n, nil
}
