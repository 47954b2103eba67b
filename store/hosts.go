package store

import (
	"context"
	"os"
	"sync"
	"time"

	"github.com/demiurge/demiurge"
)

// Host lease timing: a live Host refreshes its row every
// HostHeartbeatInterval; a row not refreshed for HostTTL marks a gone Host.
// The TTL bounds how long the work of a Host on another machine that died
// stays out of service (a Host of this machine is asked directly), and
// tolerates four missed beats.
const (
	HostTTL               = 6 * time.Second
	HostHeartbeatInterval = 1500 * time.Millisecond
	// hostRetention is how long rows of stopped Hosts are kept.
	hostRetention = 24 * time.Hour
)

// HostInfo names the process a Host runs in. Zero fields default to this
// process: os.Getpid(), process.StartMarker(pid) (passed by the caller), os.Hostname().
type HostInfo struct {
	PID         int
	StartMarker string
	Hostname    string
}

// Host is one registered Host process. It owns a heartbeat goroutine that
// keeps its lease alive until Close.
type Host struct {
	db     *DB
	id     string
	cancel context.CancelFunc
	done   chan struct{}

	closeOnce sync.Once
	closeErr  error
}

// ID returns the host_id (host_…).
func (h *Host) ID() string { return h.id }

var (
	sqlHostInsert = `INSERT INTO hosts (host_id, pid, start_marker, hostname, started_at, heartbeat_at, expires_at, stopped_at)
  VALUES (?, ?, ?, ?, ?, ?, ?, NULL)`
	sqlHostHeartbeat = `UPDATE hosts SET heartbeat_at = ?, expires_at = ? WHERE host_id = ? AND stopped_at IS NULL`
	sqlHostStop      = `UPDATE hosts SET stopped_at = ? WHERE host_id = ? AND stopped_at IS NULL`
	sqlHostByID      = `SELECT host_id, pid, start_marker, hostname, expires_at, stopped_at FROM hosts WHERE host_id = ?`
)

// StartHost registers a Host process (a hosts row and event host.started)
// and starts its heartbeat. The caller must Close the Host; DB.Close closes
// any Host still open.
func (db *DB) StartHost(ctx context.Context, info HostInfo) (*Host, error) {
	db.hostMu.Lock()
	closed := db.closed
	db.hostMu.Unlock()
	if closed {
		return nil, db.closedError()
	}
	if info.PID <= 0 {
		info.PID = os.Getpid()
	}
	if info.Hostname == "" {
		info.Hostname = db.hostname
	}
	id := demiurge.NewID("host")
	err := db.write(ctx, func(t *wtx) error {
		now := t.nowText()
		if _, err := t.exec(sqlHostInsert, id, info.PID, nullable(info.StartMarker), nullable(info.Hostname),
			now, now, demiurge.FormatTime(t.now.Add(HostTTL))); err != nil {
			return err
		}
		_, err := t.append([]demiurge.Event{demiurge.NewEvent(demiurge.AggHost, id, demiurge.HostStartedPayload{
			PID: info.PID, Hostname: info.Hostname, StartMarker: info.StartMarker})}, "", nil)
		return err
	})
	if err != nil {
		return nil, err
	}
	hctx, cancel := context.WithCancel(context.Background())
	h := &Host{db: db, id: id, cancel: cancel, done: make(chan struct{})}
	db.hostMu.Lock()
	defer db.hostMu.Unlock()
	if db.closed {
		// Close ran meanwhile and will not see h: never start its goroutine.
		cancel()
		return nil, db.closedError()
	}
	db.hosts[h] = struct{}{}
	go h.heartbeat(hctx)
	return h, nil
}

// heartbeat refreshes the lease until ctx ends. A failed refresh is logged
// and retried at the next tick.
func (h *Host) heartbeat(ctx context.Context) {
	defer close(h.done)
	tick := time.NewTicker(HostHeartbeatInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		// A row update with no event: it takes no ledger lock, so a busy
		// ledger never delays a Host's heartbeat.
		err := h.db.writeRows(ctx, func(t *wtx) error {
			_, err := t.exec(sqlHostHeartbeat, t.nowText(), demiurge.FormatTime(t.now.Add(HostTTL)), h.id)
			return err
		})
		if err != nil && ctx.Err() == nil {
			h.db.log.Warn("runtime store: host heartbeat failed", "host_id", h.id, "err", err)
		}
	}
}

// Close stops the heartbeat, waits for it, then marks the Host stopped
// (stopped_at and event host.stopped). It is idempotent; later calls
// return the first result.
func (h *Host) Close(ctx context.Context) error {
	h.closeOnce.Do(func() {
		h.cancel()
		select {
		case <-h.done:
		case <-ctx.Done():
			h.closeErr = ctxError(ctx, "stop host heartbeat")
			<-h.done // the goroutine ends promptly once cancelled
		}
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		err := h.db.write(wctx, func(t *wtx) error {
			res, err := t.exec(sqlHostStop, t.nowText(), h.id)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n == 0 {
				return nil
			}
			_, err = t.append([]demiurge.Event{demiurge.NewEvent(demiurge.AggHost, h.id, demiurge.HostStoppedPayload{})}, "", nil)
			return err
		})
		if h.closeErr == nil {
			h.closeErr = err
		}
		h.db.hostMu.Lock()
		delete(h.db.hosts, h)
		h.db.hostMu.Unlock()
	})
	return h.closeErr
}

// hostRow is what liveness needs of a hosts row.
type hostRow struct {
	id, marker, hostname string
	pid                  int
	expires, stopped     ns
}

func scanHost(r scanner) (hostRow, error) {
	var h hostRow
	var marker, hostname ns
	err := r.Scan(&h.id, &h.pid, &marker, &hostname, &h.expires, &h.stopped)
	h.marker, h.hostname = marker.String, hostname.String
	return h, err
}

// hostAlive decides whether a registered Host still runs. A stopped Host is
// gone. On this machine the process is asked: a dead process means gone at
// once (no TTL wait), and a live process that matches its start marker is
// alive even past its lease (a stalled heartbeat must not get live work
// marked lost). Otherwise — another machine, or no marker to identify the
// process — the lease decides.
func (db *DB) hostAlive(h hostRow, now time.Time) bool {
	if h.stopped.Valid {
		return false
	}
	if h.hostname != "" && h.hostname == db.hostname {
		if !db.processAlive(h.pid, h.marker) {
			return false
		}
		if h.marker != "" {
			return true
		}
	}
	return h.expires.Valid && h.expires.String > demiurge.FormatTime(now)
}

// hostAliveByID is hostAlive for one host id; an unknown id is gone.
func (t *wtx) hostAliveByID(id string) (bool, error) {
	h, err := scanHost(t.queryRow(sqlHostByID, id))
	if isNoRows(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return t.db.hostAlive(h, t.now), nil
}
