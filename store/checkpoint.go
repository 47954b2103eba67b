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
// a reader. The writer keeps SQLite's automatic checkpoint at
// walBackstopPages as a backstop: for a process too short to wake the
// checkpointer (a `demiurge run` makes fewer than checkpointAfter commits
// and exits within checkpointDelay), and for a log that never restarts.
// A log restarts from its beginning only when a write finds every frame
// already copied; a process that commits turn after turn without a pause
// keeps the checkpointer a commit behind, so its log grows to the
// backstop, and the commit that reaches it copies and syncs inside a turn.
// The backstop is high enough that this is rare (about every tenth turn
// of back-to-back turns with a tool call) and low enough that the log the
// next process reads back at open (keeper.go) stays a few MiB. A process
// whose checkpointer ran truncates the log as it closes, when nothing else
// reads it, so a long-lived Host leaves the next one an empty log.
const (
	checkpointEvery  = 4
	checkpointAfter  = 8
	checkpointDelay  = time.Second
	walBackstopPages = 1024
	// truncateTimeout bounds the final checkpoint of close.
	truncateTimeout = 5 * time.Second
)

// checkpointer is the goroutine that checkpoints the log, and its
// connection, opened on its first wake-up.
type checkpointer struct {
	path   string
	opened time.Time
	wake   chan struct{} // capacity 1: wake-ups coalesce while one runs
	cancel context.CancelFunc
	done   chan struct{}

	woken atomic.Bool // a commit has woken it: the process is a long one

	mu   sync.Mutex // guards conn
	conn *sql.DB
}

func startCheckpointer(path string) *checkpointer {
	ctx, cancel := context.WithCancel(context.Background())
	c := &checkpointer{path: path, opened: time.Now(), wake: make(chan struct{}, 1), cancel: cancel, done: make(chan struct{})}
	go c.run(ctx)
	return c
}

// committed is called after each commit, with the number of commits so
// far. Nothing wakes it before checkpointAfter commits or checkpointDelay
// after Open: a short process (a `demiurge run`) would only interrupt the
// checkpoint at its exit, and the backstop bounds what such processes
// leave in the log. A process that goes on committing wakes it from its
// first turns, before the log reaches the backstop inside a commit.
func (c *checkpointer) committed(n int64) {
	if n%checkpointEvery != 0 || (n < checkpointAfter && time.Since(c.opened) < checkpointDelay) {
		return
	}
	c.woken.Store(true)
	select {
	case c.wake <- struct{}{}:
	default:
	}
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
	if c.woken.Load() {
		ctx, cancel := context.WithTimeout(context.Background(), truncateTimeout)
		_ = c.execLocked(ctx, "PRAGMA wal_checkpoint(TRUNCATE)")
		cancel()
	}
	if c.conn == nil {
		return nil
	}
	return c.conn.Close()
}
