package demiurge

import (
	"errors"
	"io/fs"
	"syscall"
)

// IOReason returns the public reason of a failed file, pipe or process
// operation, for a user-facing message that already names what failed: the
// operating system's error text ("no such file or directory", "permission
// denied") without the path or any other detail of the cause, which stays in
// the wrapped error. A path error without a system error reads as its own
// short reason, any other error as the io/fs sentinel it matches, or as
// "unexpected error".
func IOReason(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno.Error()
	}
	// A path error's own reason is short and public ("not a regular file");
	// the path is what the message names already.
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Err != nil && errors.Unwrap(pe.Err) == nil {
		return pe.Err.Error()
	}
	for _, sentinel := range []error{fs.ErrNotExist, fs.ErrPermission, fs.ErrExist, fs.ErrClosed, fs.ErrInvalid} {
		if errors.Is(err, sentinel) {
			return sentinel.Error()
		}
	}
	return "unexpected error"
}
