package host

import (
	"os"
	"path/filepath"
	"time"

	"github.com/demiurge/demiurge"
)

// initLockWait bounds how long Init waits for another process's Init; an
// Init takes milliseconds, so running out means a stuck holder.
const initLockWait = 30 * time.Second

// lockInit takes the home's init lock (<home>/runtime/init.lock), waiting
// for a concurrent Init. Installing the templates is several file writes:
// without the lock, one first run could commit the core baseline from a
// tree another first run is still writing (a half tree, or its temporary
// files). The lock dies with the process; closing the file releases it.
func lockInit(h Home) (*os.File, error) {
	path := filepath.Join(h.RuntimeDir(), "init.lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, demiurge.WrapError(demiurge.ECONFIG, err, "open %s: %s", path, demiurge.IOReason(err))
	}
	deadline := time.Now().Add(initLockWait)
	for {
		busy, err := tryLock(f)
		switch {
		case err != nil:
			f.Close()
			return nil, demiurge.WrapError(demiurge.ECONFIG, err, "lock %s: %s", path, demiurge.IOReason(err))
		case !busy:
			return f, nil
		case time.Now().After(deadline):
			f.Close()
			return nil, demiurge.Errorf(demiurge.EUNAVAILABLE, "runtime home is being initialised by another process (lock %s held for %s)", path, initLockWait)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
