package store_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/store"
)

// Writes cancelled at any moment leave no connection behind: once the
// database is closed, no descriptor of this process refers to its files.
// (A transaction cancelled mid-flight used to leave the writer connection
// unfreeable, its files open for the life of the process.)
func TestCancelledWritesLeaveNothingOpen(t *testing.T) {
	demiurgetest.SQLiteOnly(t, "descriptors of the SQLite file's connections")
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		db, err := store.Open(context.Background(), filepath.Join(dir, "runtime.sqlite3"), store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			for ctx.Err() == nil {
				_, _ = db.ClaimDueWork(ctx, "delivery.send", "owner", time.Minute, 16)
			}
		}()
		time.Sleep(time.Duration(i%8) * 250 * time.Microsecond) // cancel at varying points of a write
		cancel()
		<-done
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		if left := openUnder(t, dir); len(left) != 0 {
			t.Fatalf("round %d: still open after Close: %v", i, left)
		}
	}
}

// openUnder lists this process's descriptors that refer to files under dir.
func openUnder(t *testing.T, dir string) []string {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, fd := range fds {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name()))
		if err == nil && strings.HasPrefix(target, dir+string(os.PathSeparator)) {
			out = append(out, target)
		}
	}
	return out
}
