package procbench

import (
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/demiurge/demiurge"
)

// MeasureSyncedWrite writes bytes of zeros to a new file under dir in
// 1 MiB writes, fsyncs it and removes it, and returns the throughput in
// MB/s (the fastest of drainRounds rounds). It is what the drain's
// artifact costs at the least on the disk under dir, with no pipe, no
// redaction and no tail: the ceiling of the drain figure on a machine whose
// disk is slower than its pipes.
func MeasureSyncedWrite(dir string, bytes int64) (float64, error) {
	if bytes <= 0 {
		return 0, demiurge.Errorf(demiurge.EINVALID, "measure synced write: bytes must be positive, got %d", bytes)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return 0, err
	}
	buf := make([]byte, 1<<20)
	best := time.Duration(math.MaxInt64)
	for range drainRounds {
		d, err := timeSyncedWrite(filepath.Join(dir, "synced-write"), buf, bytes)
		if err != nil {
			return 0, err
		}
		best = min(best, d)
	}
	return float64(bytes) / 1e6 / best.Seconds(), nil
}

func timeSyncedWrite(path string, buf []byte, bytes int64) (time.Duration, error) {
	defer os.Remove(path)
	t0 := time.Now()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return 0, demiurge.WrapError(demiurge.EINTERNAL, err, "measure synced write: create")
	}
	for left := bytes; left > 0; {
		n := min(left, int64(len(buf)))
		if _, err := f.Write(buf[:n]); err != nil {
			f.Close()
			return 0, demiurge.WrapError(demiurge.EINTERNAL, err, "measure synced write: write")
		}
		left -= n
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return 0, demiurge.WrapError(demiurge.EINTERNAL, err, "measure synced write: sync")
	}
	if err := f.Close(); err != nil {
		return 0, demiurge.WrapError(demiurge.EINTERNAL, err, "measure synced write: close")
	}
	return time.Since(t0), nil
}
