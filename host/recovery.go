package host

import (
	"context"
	"time"

	"github.com/demiurge/demiurge/process"
	"github.com/demiurge/demiurge/store"
)

// A live Host looks for Hosts that went away while it runs (their
// process died, or their heartbeat lease expired) every goneCheckInterval
// with a read, and reconciles as soon as it finds one; it reconciles every
// recoveryInterval regardless (work items whose lease lapsed, say).
const (
	goneCheckInterval = time.Second
	recoveryInterval  = 10 * time.Second
)

// reconcile runs restart recovery:
// work of gone Hosts is marked lost or unknown in the store, and the
// process group of every task they left running is terminated if, and only
// if, its recorded start marker still names a live process. Nothing is run
// again.
func (h *Host) reconcile(ctx context.Context) (store.ReconcileReport, error) {
	rep, err := h.store.Reconcile(ctx, h.lease.ID())
	if err != nil {
		return rep, err
	}
	for _, p := range rep.LostTaskProcesses {
		if p.PID <= 0 || p.Marker == "" {
			continue
		}
		if err := process.KillGroupIfSame(p.PID, p.Marker); err != nil {
			h.logger.Warn("terminate process group of lost task", "task_id", p.TaskID, "pid", p.PID, "err", err)
		} else {
			h.logger.Info("terminated process group of lost task", "task_id", p.TaskID, "pid", p.PID)
		}
	}
	if rep.Changed() {
		h.logger.Info("restart recovery", "turns_lost", rep.TurnsLost, "tasks_lost", rep.TasksLost,
			"deliveries_unknown", rep.DeliveriesUnknown, "gone_hosts", rep.GoneHosts)
	}
	return rep, nil
}

// recoveryLoop repeats reconcile while the Host runs, so work of a Host
// that dies beside this one is recovered without a restart.
func (h *Host) recoveryLoop(ctx context.Context) {
	t := time.NewTicker(goneCheckInterval)
	defer t.Stop()
	last := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if time.Since(last) < recoveryInterval {
			gone, err := h.store.AnyHostGone(ctx, h.lease.ID())
			if err != nil || !gone {
				continue // a failed read is retried at the next tick
			}
		}
		last = time.Now()
		if _, err := h.reconcile(ctx); err != nil && ctx.Err() == nil {
			h.logger.Warn("restart recovery", "err", err)
		}
	}
}
