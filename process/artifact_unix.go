//go:build unix

package process

import (
	"errors"
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
