//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package cli

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// echoOff turns off the echo of the terminal r is (keeping its line
// editing), so a typed key is not shown; restore turns it back on. ok is
// false when r is not a terminal.
func echoOff(r io.Reader) (restore func(), ok bool) {
	f, isFile := r.(*os.File)
	if !isFile {
		return nil, false
	}
	fd := -1
	if rc, err := f.SyscallConn(); err == nil {
		_ = rc.Control(func(d uintptr) { fd = int(d) })
	}
	if fd < 0 {
		return nil, false
	}
	old, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	if err != nil {
		return nil, false
	}
	quiet := *old
	quiet.Lflag &^= unix.ECHO
	if err := unix.IoctlSetTermios(fd, ioctlSetTermios, &quiet); err != nil {
		return nil, false
	}
	return func() { _ = unix.IoctlSetTermios(fd, ioctlSetTermios, old) }, true
}
