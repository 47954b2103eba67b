package filelock

import (
	"errors"
	"path/filepath"
	"testing"
)

func TestTryLockExcludesUntilUnlock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "x.lock")
	l, err := TryLock(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := TryLock(path); !errors.Is(err, ErrBusy) {
		t.Fatalf("second TryLock = %v, want ErrBusy", err)
	}
	l.Unlock()
	l.Unlock() // idempotent
	l2, err := TryLock(path)
	if err != nil {
		t.Fatalf("TryLock after Unlock = %v", err)
	}
	l2.Unlock()
	var none *Lock
	none.Unlock()
}
