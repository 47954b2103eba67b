package store

import (
	"context"
	"database/sql"
	"sync"
	"sync/atomic"
	"time"
)

// The log is checkpointed into the database off the commit path. SQLite's
// own automatic checkpoint runs inside the commit that crosses its
// threshold: that commit copies every page of the log into the database
// and syncs both files, so every few turns one turn pays for all of them.
// Here, every checkpointEvery commits wake a goroutine the DB owns, which
// runs a PASSIVE checkpoint on a connection of its own: it copies what no
// reader still needs, never waits for a lock and never blocks a writer or
// a reader. A turn rewrites the same pages (the indexes' newest leaves,
// the session's row), so a checkpoint every few turns copies each of them
// once where one per turn copied them every turn.
//
// The writer keeps SQLite's automatic checkpoint as a backstop, at two
// heights. A process too short to wake the checkpointer (a `demiurge run`
// makes a handful of commits) leaves its log to the next process, which
// reads it back at open (keeper.go): the backstop of such a process,
// walBackstopPages, keeps that log under 1 MiB. A process that has woken
// the checkpointer is a long one; its log restarts from its beginning only
// when a write finds every frame already copied, which commits that follow
// each other without a pause keep from happening, so the log grows until
// a commit reaches the backstop and copies and syncs inside a turn. Its
// writer's backstop is raised to longBackstopPages, which makes that rare
// (about one turn in twenty of back-to-back turns with a tool call), and
// it truncates the log as it closes, when nothing else reads it, so it
// leaves the next process an empty log.
const (
	checkpointEvery   = 32
	walBackstopPages  = 256
	longBackstopPages = 2048
	// truncateTimeout bounds the final checkpoint of close.
	truncateTimeout = 5 * time.Second
)

// checkpointer is the goroutine that checkpoints the log, and its
// connection, opened on its first wake-up.
type checkpointer struct {
	path   string
	wake   chan struct{} // capacity 1: wake-ups coalesce while one runs
	cancel context.CancelFunc
	done   chan struct{}

	long atomic.Bool // a commit has woken it: the process is a long one

	mu   sync.Mutex // guards conn
	conn *sql.DB
}

func startCheckpointer(path string) *checkpointer {
	ctx, cancel := context.WithCancel(context.Background())
	c := &checkpointer{path: path, wake: make(chan struct{}, 1), cancel: cancel, done: make(chan struct{})}
	go c.run(ctx)
	return c
}

// committed is called after each commit, with the number of commits so
// far.
func (c *checkpointer) committed(n int64) {
	if n%checkpointEvery != 0 {
		return
	}
	c.long.Store(true)
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// backstop is the automatic checkpoint the writer should have now.
func (c *checkpointer) backstop() int {
	if c.long.Load() {
		return longBackstopPages
	}
	return walBackstopPages
}

func (c *checkpointer) run(ctx context.Context) {
	defer close(c.done)
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.wake:
			// A failed checkpoint loses nothing: the log keeps every
			// commit, and the next wake-up or the backstop copies it.
			_ = c.checkpoint(ctx)
		}
	}
}

func (c *checkpointer) checkpoint(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.execLocked(ctx, "PRAGMA wal_checkpoint(PASSIVE)")
}

// execLocked runs a checkpoint pragma on the connection, opening it on
// first use. The caller holds mu.
func (c *checkpointer) execLocked(ctx context.Context, pragma string) error {
	if c.conn == nil {
		conn, err := sql.Open("sqlite", dsn(c.path, "_pragma=busy_timeout(0)"))
		if err != nil {
			return err
		}
		conn.SetMaxOpenConns(1)
		c.conn = conn
	}
	_, err := c.conn.ExecContext(ctx, pragma)
	return err
}

// close stops the goroutine (interrupting a checkpoint that runs); in a
// process long enough to have woken it, it then copies and truncates the
// log, unless something else is using the database (busy: the log stays,
// and nothing is lost); and it closes its connection. The read pool is
// still open, so closing this connection leaves the log in place
// (keeper.go).
func (c *checkpointer) close() error {
	c.cancel()
	<-c.done
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.long.Load() {
		ctx, cancel := context.WithTimeout(context.Background(), truncateTimeout)
		_ = c.execLocked(ctx, "PRAGMA wal_checkpoint(TRUNCATE)")
		cancel()
	}
	if c.conn == nil {
		return nil
	}
	return c.conn.Close()
}
