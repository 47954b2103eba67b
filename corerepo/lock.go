package corerepo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/demiurge/demiurge"
)

// errLockBusy is what tryLockFile returns when another holder has the lock.
var errLockBusy = errors.New("lock busy")

// fileLock is an exclusive advisory lock on a file (flock on Unix,
// LockFileEx on Windows). It excludes other processes and, because each
// acquisition opens its own file description, other goroutines of this
// process too. The lock dies with the process, so a crash never leaves it
// held.
type fileLock struct{ f *os.File }

// lockFile takes the lock at path without blocking; busy is ECONFLICT
// "core repository is locked: <path>" (spec host-runtime §7.3).
func lockFile(path string) (*fileLock, error) {
	l, err := tryLockFile(path)
	if errors.Is(err, errLockBusy) {
		return nil, lockedError(path)
	}
	return l, err
}

// lockFileWait retries lockFile until ctx ends or wait passes: for
// EnsureSaved, which runs before turns and should ride out a short
// concurrent save rather than fail the turn.
func lockFileWait(ctx context.Context, path string, wait time.Duration) (*fileLock, error) {
	deadline := time.Now().Add(wait)
	for {
		l, err := tryLockFile(path)
		if !errors.Is(err, errLockBusy) {
			return l, err
		}
		if time.Now().After(deadline) {
			return nil, lockedError(path)
		}
		t := time.NewTimer(10 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, demiurge.WrapError(demiurge.ECANCELED, ctx.Err(), "waiting for the core repository lock: %v", ctx.Err())
		case <-t.C:
		}
	}
}

func lockedError(path string) error {
	return demiurge.Errorf(demiurge.ECONFLICT, "core repository is locked: %s", path)
}

func tryLockFile(path string) (*fileLock, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, ioError("create lock directory", path, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, ioError("open lock", path, err)
	}
	if err := lockFD(f); err != nil {
		f.Close()
		if errors.Is(err, errLockBusy) {
			return nil, errLockBusy
		}
		return nil, ioError("lock", path, err)
	}
	return &fileLock{f: f}, nil
}

// unlock releases the lock; it is safe to call on nil and more than once.
func (l *fileLock) unlock() {
	if l == nil || l.f == nil {
		return
	}
	_ = unlockFD(l.f)
	_ = l.f.Close()
	l.f = nil
}
