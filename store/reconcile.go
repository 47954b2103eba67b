package store

import (
	"context"
	"database/sql"

	"github.com/demiurge/demiurge"
)

// Messages written by restart reconciliation.
const (
	LostTurnMessage        = "interrupted: host process exited before the turn finished"
	LostTaskSummary        = "task lost: host restarted before completion"
	UnknownDeliveryMessage = "interrupted: host process exited while sending"
)

// Reconciliation candidates, each read through an index on the open
// statuses (idx_turns_running, idx_tasks_status, idx_outbox_status).
const (
	sqlRunningTurns      = `SELECT turn_id, host_id FROM turns WHERE status = 'running'`
	sqlOpenTasks         = `SELECT task_id, host_id, process_pid, process_marker, status, claim_host_id FROM tasks WHERE status IN ('queued', 'running', 'blocked_needs_user')`
	sqlSendingDeliveries = `SELECT o.delivery_id, COALESCE(o.host_id, tr.host_id) FROM outbox o
  LEFT JOIN turns tr ON tr.turn_id = o.owner_turn_id WHERE o.status = 'sending'`
)

// ReconcileReport counts what Reconcile changed. The IDs let the caller
// follow up (for example, emit completion notifications for lost tasks).
type ReconcileReport struct {
	GoneHosts         int // hosts found gone without having stopped (now marked stopped, event host.stopped)
	TurnsLost         int
	TasksLost         int
	DeliveriesUnknown int // outbox rows left sending by a gone host
	LeasesReleased    int // session leases held by gone hosts
	ClaimsReleased    int // claims of gone hosts on queued tasks, back in the queue
	Work              WorkRecovery
	LostTurnIDs       []string
	LostTaskIDs       []string
	// LostTaskProcesses are the processes recorded (task.process_recorded)
	// for the tasks now lost. The caller ends each one's group only if its
	// start marker still matches (process.KillGroupIfSame): the pid alone
	// may name an unrelated process by now.
	LostTaskProcesses []TaskProcess
}

// TaskProcess is the newest process a task recorded.
type TaskProcess struct {
	TaskID string
	PID    int
	Marker string
}

// Changed reports whether reconciliation changed anything.
func (r ReconcileReport) Changed() bool {
	w := r.Work
	return r.GoneHosts+r.TurnsLost+r.TasksLost+r.DeliveriesUnknown+r.LeasesReleased+r.ClaimsReleased+
		w.Recovered+w.MarkedUnknown+w.Corrupt+w.DeliveriesUnknown > 0
}

// Reconcile marks work left behind by gone Host processes. A Host is gone when it is stopped, when its
// process on this machine is dead (see hostAlive), or when its lease expired
// (for a Host on another machine or one without a start marker). Work whose
// host_id is empty (legacy) or names no registered Host counts as gone;
// selfHostID is always alive.
//
// For gone hosts only:
//   - running turns → turn.lost {status lost, error {code "lost", message}};
//   - running/blocked_needs_user tasks, and queued tasks queued for that
//     Host alone → task.lost {status lost, summary, error {message}};
//   - queued tasks it had merely claimed go back to the queue (the claim
//     is dropped; a task queued for any Host is never lost);
//   - outbox rows in sending → delivery.unknown (and their delivery.send work
//     item, if still sending, → work.unknown); nothing is re-sent;
//   - session leases they hold are released;
//   - a gone Host that never stopped is marked stopped (host.stopped
//     {reason "gone"}), so it is probed once.
//
// Then RecoverWork runs. Everything happens in one transaction, every change
// is an event with an idempotency key, and the host list is read in that
// same transaction, so a Host that registers concurrently is never
// mistaken for a gone one and two concurrent reconcilers append once.
func (db *DB) Reconcile(ctx context.Context, selfHostID string) (ReconcileReport, error) {
	var rep ReconcileReport
	err := db.write(ctx, func(t *wtx) error {
		rep = ReconcileReport{}
		alive, gone, err := t.liveHosts(selfHostID)
		if err != nil {
			return err
		}
		rep.GoneHosts = gone
		if err := t.reconcileTurns(alive, &rep); err != nil {
			return err
		}
		if err := t.reconcileTasks(alive, &rep); err != nil {
			return err
		}
		if err := t.reconcileDeliveries(alive, &rep); err != nil {
			return err
		}
		if err := t.reconcileLeases(alive, &rep); err != nil {
			return err
		}
		if rep.Work, err = t.recoverWork(); err != nil {
			return err
		}
		if _, err := t.exec(`DELETE FROM hosts WHERE stopped_at IS NOT NULL AND stopped_at < ?`,
			demiurge.FormatTime(t.now.Add(-hostRetention))); err != nil {
			return err
		}
		if !rep.Changed() {
			return nil
		}
		agg := selfHostID
		if agg == "" {
			agg = "reconciler"
		}
		_, err = t.append([]demiurge.Event{demiurge.NewEvent(demiurge.AggHost, agg, demiurge.HostReconciledPayload{
			GoneHosts: rep.GoneHosts, TurnsLost: rep.TurnsLost, TasksLost: rep.TasksLost,
			DeliveriesUnknown: rep.DeliveriesUnknown + rep.Work.DeliveriesUnknown, LeasesReleased: rep.LeasesReleased,
			WorkRecovered: rep.Work.Recovered, WorkUnknown: rep.Work.Unknown, WorkCorrupt: rep.Work.Corrupt,
			WorkDeferred: rep.Work.Deferred, ClaimsReleased: rep.ClaimsReleased,
		})}, "", nil)
		return err
	})
	return rep, err
}

// liveHosts returns the ids of the live Hosts and the number of gone ones.
// Hosts that stopped are neither (their rows wait for hostRetention, one
// per process that ever ran, so they are not read at all).
func (t *wtx) liveHosts(selfHostID string) (map[string]bool, int, error) {
	rows, err := t.query(sqlHostsNotStopped)
	if err != nil {
		return nil, 0, err
	}
	var hosts []hostRow
	for rows.Next() {
		h, err := scanHost(rows)
		if err != nil {
			rows.Close()
			return nil, 0, err
		}
		hosts = append(hosts, h)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, 0, err
	}
	alive := map[string]bool{}
	if selfHostID != "" {
		alive[selfHostID] = true
	}
	gone := 0
	for _, h := range hosts {
		if alive[h.id] {
			continue
		}
		if t.db.hostAlive(h, t.now) {
			alive[h.id] = true
			continue
		}
		// Vanished without stopping: record it as stopped so it is not
		// probed again and its row ages out like any stopped host's.
		gone++
		if _, err := t.exec(sqlHostStop, t.nowText(), h.id); err != nil {
			return nil, 0, err
		}
		if _, err := t.append([]demiurge.Event{demiurge.NewEvent(demiurge.AggHost, h.id, demiurge.HostStoppedPayload{
			Reason: "gone", PID: h.pid, Hostname: h.hostname})}, "host:"+h.id+":gone", nil); err != nil {
			return nil, 0, err
		}
	}
	return alive, gone, nil
}

// idHost is one (id, host_id) pair of a reconciliation candidate.
type idHost struct{ id, host string }

func collectIDHosts(rows *sql.Rows, err error) ([]idHost, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []idHost
	for rows.Next() {
		var r idHost
		var host ns
		if err := rows.Scan(&r.id, &host); err != nil {
			return nil, err
		}
		r.host = host.String
		out = append(out, r)
	}
	return out, rows.Err()
}

func (t *wtx) reconcileTurns(alive map[string]bool, rep *ReconcileReport) error {
	turns, err := collectIDHosts(t.query(sqlRunningTurns))
	if err != nil {
		return err
	}
	for _, tr := range turns {
		if alive[tr.host] {
			continue
		}
		ev := demiurge.NewEvent(demiurge.AggTurn, tr.id, demiurge.TurnLostPayload{
			Status: demiurge.TurnLost, HostID: tr.host,
			Error: &demiurge.ErrorInfo{Code: "lost", Message: LostTurnMessage},
		})
		if _, err := t.append([]demiurge.Event{ev}, "reconcile:turn:"+tr.id+":lost", nil); err != nil {
			return err
		}
		rep.TurnsLost++
		rep.LostTurnIDs = append(rep.LostTurnIDs, tr.id)
	}
	return nil
}

func (t *wtx) reconcileTasks(alive map[string]bool, rep *ReconcileReport) error {
	tasks, err := t.openTasks()
	if err != nil {
		return err
	}
	for _, tk := range tasks {
		if tk.status == demiurge.TaskQueued && tk.claim != "" && !alive[tk.claim] {
			if _, err := t.exec(`UPDATE tasks SET claim_host_id = NULL, claim_expires_at = NULL
  WHERE task_id = ? AND claim_host_id = ?`, tk.id, tk.claim); err != nil {
				return err
			}
			rep.ClaimsReleased++
			t.note(demiurge.TopicTasks)
		}
		if alive[tk.host] || tk.status == demiurge.TaskQueued && tk.host == "" {
			continue
		}
		ev := demiurge.NewEvent(demiurge.AggTask, tk.id, demiurge.TaskLostPayload{
			Status: demiurge.TaskLost, Summary: LostTaskSummary, Error: &demiurge.ErrorInfo{Message: LostTaskSummary},
		})
		if _, err := t.append([]demiurge.Event{ev}, "reconcile:task:"+tk.id+":lost", nil); err != nil {
			return err
		}
		rep.TasksLost++
		rep.LostTaskIDs = append(rep.LostTaskIDs, tk.id)
		// A process tree is ended only from its own machine: a pid means
		// nothing on another, whatever its start marker.
		if tk.pid > 0 && tk.marker != "" && t.hostOnThisMachine(tk.host) {
			rep.LostTaskProcesses = append(rep.LostTaskProcesses, TaskProcess{TaskID: tk.id, PID: tk.pid, Marker: tk.marker})
		}
	}
	return nil
}

// openTask is one reconciliation candidate task with its recorded process.
type openTask struct {
	id, host, marker string
	status, claim    string
	pid              int
}

func (t *wtx) openTasks() ([]openTask, error) {
	rows, err := t.query(sqlOpenTasks)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []openTask
	for rows.Next() {
		var tk openTask
		var host, marker, claim ns
		var pid sql.NullInt64
		if err := rows.Scan(&tk.id, &host, &pid, &marker, &tk.status, &claim); err != nil {
			return nil, err
		}
		tk.host, tk.pid, tk.marker, tk.claim = host.String, int(pid.Int64), marker.String, claim.String
		out = append(out, tk)
	}
	return out, rows.Err()
}

// reconcileDeliveries: the sending Host of an outbox row is its own host_id,
// else the host of the turn that queued it.
func (t *wtx) reconcileDeliveries(alive map[string]bool, rep *ReconcileReport) error {
	rows, err := collectIDHosts(t.query(sqlSendingDeliveries))
	if err != nil {
		return err
	}
	for _, d := range rows {
		if alive[d.host] {
			continue
		}
		ev := demiurge.NewEvent(demiurge.AggDelivery, d.id, demiurge.DeliveryUnknownPayload{
			Status: demiurge.DeliveryUnknown, LastError: UnknownDeliveryMessage})
		if _, err := t.append([]demiurge.Event{ev}, "delivery:"+d.id+":unknown", nil); err != nil {
			return err
		}
		rep.DeliveriesUnknown++
		w, ok, err := t.workItem(d.id)
		if err != nil {
			return err
		}
		if ok && w.Kind == demiurge.WorkKindDeliverySend && w.Status == demiurge.WorkSending {
			if _, err := t.append([]demiurge.Event{demiurge.NewEvent(demiurge.AggWork, w.ID, demiurge.WorkUnknownPayload{
				Status: demiurge.WorkUnknown, LastError: UnknownDeliveryMessage, ClearClaim: true,
			})}, "work:"+w.ID+":unknown:"+w.ClaimID, nil); err != nil {
				return err
			}
		}
	}
	return nil
}

func (t *wtx) reconcileLeases(alive map[string]bool, rep *ReconcileReport) error {
	leases, err := collectIDHosts(t.query(`SELECT session_id, host_id FROM session_leases`))
	if err != nil {
		return err
	}
	for _, l := range leases {
		if alive[l.host] {
			continue
		}
		if _, err := t.exec(sqlLeaseDeleteHost, l.id, l.host); err != nil {
			return err
		}
		rep.LeasesReleased++
	}
	return nil
}

// hostOnThisMachine reports whether Host id registered from this machine
// (its hosts row names this machine's host name). A Host whose row is
// gone counts as this machine's only when it has no row at all and the
// ledger is SQLite, a file of this machine.
func (t *wtx) hostOnThisMachine(id string) bool {
	var hostname ns
	err := t.queryRow(`SELECT hostname FROM hosts WHERE host_id = ?`, id).Scan(&hostname)
	if err != nil {
		return t.db.dialect.engine != Postgres
	}
	return hostname.String == t.db.hostname
}
