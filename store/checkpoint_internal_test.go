package store

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
)

// filler is an event payload of a test: a block of text.
type filler struct {
	Text string `json:"text"`
}

func (filler) Type() string { return "test.filler" }

// The log reaches the database file without any commit crossing SQLite's
// automatic threshold: the checkpointer copies it in the background, and
// Close stops it.
func TestCheckpointerCopiesTheLogInTheBackground(t *testing.T) {
	sqliteOnly(t)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ckpt.sqlite3")
	db, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			db.Close()
		}
	}()
	size := func() int64 {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	before := size()
	// Fewer pages than walBackstopPages: only the checkpointer can move
	// them into the database file.
	for i := range 2 * checkpointEvery {
		ev := demiurge.NewEvent("test", demiurge.NewID("t"), filler{Text: strings.Repeat("x", 3000)})
		if _, err := db.Append(ctx, []demiurge.Event{ev}, "", nil); err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for size() <= before {
		if time.Now().After(deadline) {
			t.Fatalf("database file still %d bytes after %d commits: the log was not checkpointed", size(), 2*checkpointEvery)
		}
		time.Sleep(10 * time.Millisecond)
	}
	c := db.ckpt
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	closed = true
	select {
	case <-c.done:
	default:
		t.Fatal("the checkpointer goroutine outlived Close")
	}
}

// A process whose checkpointer ran leaves an empty log behind it, so the
// next process has nothing to read back at open, and its writer's backstop
// was raised meanwhile; a short process, whose checkpointer never ran,
// keeps the low backstop and leaves its log in place (keeper.go).
func TestALongProcessRaisesTheBackstopAndTruncatesTheLog(t *testing.T) {
	sqliteOnly(t)
	ctx := context.Background()
	for _, long := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "ckpt.sqlite3")
		db, err := Open(ctx, path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		// With the last write below: one short of waking the
		// checkpointer, or one past it.
		commits := checkpointEvery - 2
		if long {
			commits = checkpointEvery
		}
		for i := range commits {
			ev := demiurge.NewEvent("test", demiurge.NewID("t"), filler{Text: strings.Repeat("x", 1000)})
			if _, err := db.Append(ctx, []demiurge.Event{ev}, "", nil); err != nil {
				t.Fatalf("append %d: %v", i, err)
			}
		}
		// The next write takes the writer connection with the backstop
		// the process has earned.
		ev := demiurge.NewEvent("test", demiurge.NewID("t"), filler{Text: "last"})
		if _, err := db.Append(ctx, []demiurge.Event{ev}, "", nil); err != nil {
			t.Fatal(err)
		}
		want := walBackstopPages
		if long {
			want = longBackstopPages
		}
		db.wmu.Lock()
		var got int
		err = db.wconn.QueryRowContext(ctx, "PRAGMA wal_autocheckpoint").Scan(&got)
		db.wmu.Unlock()
		if err != nil || got != want {
			t.Errorf("long=%v: the writer's automatic checkpoint is %d (%v), want %d", long, got, err, want)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path + "-wal")
		if err != nil {
			t.Fatalf("long=%v: %v", long, err)
		}
		if long && fi.Size() != 0 {
			t.Errorf("the checkpointer ran, and the log is still %d bytes after Close", fi.Size())
		}
		if !long && fi.Size() == 0 {
			t.Error("a short process truncated its log at Close")
		}
	}
}
