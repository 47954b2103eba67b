// Package filelock is an exclusive advisory lock on a file (flock on Unix,
// LockFileEx on Windows). Each acquisition opens its own file description,
// so a lock excludes other processes and other goroutines of this process
// alike; it dies with the process, so a crash never leaves it held.
package filelock

import (
	"errors"
	"os"
	"path/filepath"
)

// ErrBusy is what TryLock returns when another holder has the lock.
var ErrBusy = errors.New("lock busy")

// Lock is one held lock.
type Lock struct{ f *os.File }

// TryLock takes the lock at path without blocking, creating the file (and
// its directory, 0700) when missing. ErrBusy when another holder has it;
// any other error is the file system's.
func TryLock(path string) (*Lock, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := lockFD(f); err != nil {
		f.Close()
		return nil, err
	}
	return &Lock{f: f}, nil
}

// Unlock releases the lock; it is safe to call on nil and more than once.
func (l *Lock) Unlock() {
	if l == nil || l.f == nil {
		return
	}
	_ = unlockFD(l.f)
	_ = l.f.Close()
	l.f = nil
}
