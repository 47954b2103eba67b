package gitrepo

import (
	"context"
	"errors"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/internal/filelock"
)

// Lock takes the repository's mutation lock without blocking. A busy lock
// is ECONFLICT "core repository is locked: <path>", in this process as
// across processes. The caller must Unlock.
func (r *Repo) Lock() (*filelock.Lock, error) {
	l, err := r.tryLock()
	if errors.Is(err, filelock.ErrBusy) {
		return nil, r.lockedError()
	}
	return l, err
}

// LockWait retries Lock until ctx ends (ECANCELED) or wait passes (the
// Lock error): for callers that should ride out a short concurrent
// mutation rather than fail.
func (r *Repo) LockWait(ctx context.Context, wait time.Duration) (*filelock.Lock, error) {
	deadline := time.Now().Add(wait)
	for {
		l, err := r.tryLock()
		if !errors.Is(err, filelock.ErrBusy) {
			return l, err
		}
		if time.Now().After(deadline) {
			return nil, r.lockedError()
		}
		t := time.NewTimer(10 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, demiurge.WrapError(demiurge.ECANCELED, ctx.Err(), "waiting for the core repository lock")
		case <-t.C:
		}
	}
}

// Begin takes the lock (as Lock), resolves a leftover transaction and
// refuses an inconsistent repository (ECONFLICT "core repository
// consistency check failed: …"). The caller must Unlock.
func (r *Repo) Begin() (*filelock.Lock, error) {
	l, err := r.Lock()
	if err != nil {
		return nil, err
	}
	if err := r.Prepare(); err != nil {
		l.Unlock()
		return nil, err
	}
	return l, nil
}

// Prepare resolves a leftover transaction and refuses an inconsistent
// repository, as Begin does; the caller holds the lock.
func (r *Repo) Prepare() error {
	if err := r.recover(); err != nil {
		return err
	}
	if findings := r.Check(); len(findings) > 0 {
		return consistencyError(findings)
	}
	return nil
}

func (r *Repo) tryLock() (*filelock.Lock, error) {
	l, err := filelock.TryLock(r.paths.Lock)
	if err != nil && !errors.Is(err, filelock.ErrBusy) {
		return nil, IOError("lock", r.paths.Lock, err)
	}
	return l, err
}

func (r *Repo) lockedError() error {
	return demiurge.Errorf(demiurge.ECONFLICT, "core repository is locked: %s", r.paths.Lock)
}
