package host

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/controlplane"
	"github.com/demiurge/demiurge/core"
	"github.com/demiurge/demiurge/schedule"
	"github.com/demiurge/demiurge/session"
	"github.com/demiurge/demiurge/turn"
)

// newScheduler builds the scheduler over this Host: schedules come from
// every core of the home, and an occurrence runs as a schedule.fire task
// whose body is one turn in a fresh session owned by the scheduler's
// system scope.
func (h *Host) newScheduler(tz schedule.Timezone) (*schedule.Scheduler, error) {
	return schedule.New(schedule.Options{
		Store:    h.store,
		Cores:    h.coreSchedules,
		Fire:     h.fireSchedule,
		Location: tz.Location,
		OwnerID:  "scheduler_" + h.lease.ID(),
		Logger:   h.logger,
	})
}

// coreSchedules lists the schedules of every core in the home.
func (h *Host) coreSchedules(ctx context.Context) ([]schedule.CoreSchedules, error) {
	entries, err := os.ReadDir(h.home.AgentsDir())
	if err != nil {
		return nil, demiurge.WrapError(demiurge.ECONFIG, err, "read %s: %s", h.home.AgentsDir(), demiurge.IOReason(err))
	}
	var out []schedule.CoreSchedules
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if _, err := os.Stat(filepath.Join(h.home.CoreDir(e.Name()), "agent.yaml")); err != nil {
			continue
		}
		cs := schedule.CoreSchedules{CoreID: e.Name()}
		snap, err := h.cores.Load(ctx, e.Name())
		if err == nil {
			cs.Schedules, err = snap.Core.Schedules()
		}
		cs.Err = err
		out = append(out, cs)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CoreID < out[j].CoreID })
	return out, nil
}

// fireSchedule runs one occurrence as a schedule.fire task and waits for
// it: the scheduler records the work item's outcome from the answer.
func (h *Host) fireSchedule(ctx context.Context, occ schedule.Occurrence) error {
	payload := map[string]any{
		"task_id": occ.RunID, "core_id": occ.CoreID, "notify_policy": "silent",
		"source_tool": "scheduler", "metadata": occ.Metadata(),
		"schedule_id": occ.ScheduleID, "prompt": occ.Schedule.Prompt,
		"input_slots": occ.Schedule.Slots.Input, "output_slots": occ.Schedule.Slots.Output,
	}
	if d := occ.Schedule.Delivery; d.Mode != core.ScheduleDeliveryLocal {
		payload["delivery_channel"], payload["delivery_target"] = d.ChannelName(), d.DeliveryTarget()
	}
	task, err := h.tasks.Submit(ctx, demiurge.TaskSpec{
		Kind: demiurge.TaskKindScheduleFire, Payload: payload, IdempotencyKey: occ.IdempotencyKey(),
	}, demiurge.TaskOrigin{Actor: "host.scheduler", CoreID: occ.CoreID})
	if err != nil {
		return err
	}
	id := task.ID
	task, err = h.tasks.Wait(ctx, id)
	if err != nil {
		if ctx.Err() != nil {
			// The scheduler gave up on this run (it is stopping, or the
			// claim was lost): the run must not go on unrecorded.
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			if _, cerr := h.tasks.Cancel(cctx, id, "schedule run cancelled"); cerr != nil {
				h.logger.Warn("cancel abandoned schedule run", "task_id", id, "err", cerr)
			}
		}
		return err
	}
	if task.Status != demiurge.TaskSucceeded {
		msg, _ := task.Error["message"].(string)
		if msg == "" {
			msg = "schedule run " + task.Status
		}
		return demiurge.Errorf(demiurge.EINTERNAL, "%s", msg)
	}
	return nil
}

// runScheduled is the schedule.fire task body: one turn of the schedule's
// prompt in a fresh session owned by principal:scheduler:<core>:<id>:<run>.
func (h *Host) runScheduled(ctx context.Context, task demiurge.Task, hd *controlplane.Handle) (demiurge.TaskResult, error) {
	p := hd.Payload()
	coreID, _ := p["core_id"].(string)
	scheduleID, _ := p["schedule_id"].(string)
	prompt, _ := p["prompt"].(string)
	sessionID := demiurge.NewID("session_schedule")
	scope, err := session.SchedulerScope(coreID, scheduleID, task.ID, sessionID)
	if err != nil {
		return demiurge.TaskResult{}, err
	}
	var deleg *turn.Delegation
	in, out := stringList(p["input_slots"]), stringList(p["output_slots"])
	if in != nil || out != nil {
		deleg = &turn.Delegation{InputSlots: in, OutputSlots: out, UseBootstrap: true, TaskID: task.ID}
	}
	ws, err := h.Workspace(ctx, coreID, h.home.WorkspaceDir())
	if err != nil {
		return demiurge.TaskResult{}, err
	}
	req := turn.Request{
		CoreID: coreID, Text: prompt, NewSession: true, NewSessionID: sessionID,
		Channel: "schedule", ConversationKey: sessionID,
		Scope: scope, Workspace: ws, Delegation: deleg,
	}
	if channel, _ := p["delivery_channel"].(string); channel != "" {
		target, _ := p["delivery_target"].(string)
		route, closeRoute, err := h.scheduleRoute(ctx, coreID, channel, target)
		if err != nil {
			return demiurge.TaskResult{}, err
		}
		defer closeRoute()
		req.Route = route
	}
	res, err := h.turns.Run(ctx, req)
	if err != nil {
		return demiurge.TaskResult{}, err
	}
	r := demiurge.TaskResult{
		Summary:   res.Text,
		ResultRef: "session:" + res.SessionID + ":" + res.TurnID,
		Metadata:  map[string]any{"session_id": res.SessionID, "turn_id": res.TurnID, "outcome": string(res.Outcome)},
	}
	switch res.Outcome {
	case turn.OutcomeCompleted:
	case turn.OutcomeNeedsUser:
		r.Failed, r.Error = true, "schedule run requested user input"
	default:
		r.Failed, r.Error = true, "schedule run "+string(res.Outcome)
		if res.Error != nil {
			r.Error += ": " + res.Error.Message
		}
	}
	return r, nil
}

func stringList(v any) []string {
	switch t := v.(type) {
	case []string:
		if len(t) == 0 {
			return nil
		}
		return t
	case []any:
		var out []string
		for _, x := range t {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// ListSchedules lists every core's schedules with their next and last run.
func (h *Host) ListSchedules(ctx context.Context) ([]schedule.Status, error) {
	return h.scheduler.List(ctx)
}

// RunSchedule runs a schedule of a core now and waits for the run.
func (h *Host) RunSchedule(ctx context.Context, coreID, scheduleID string) (schedule.Run, error) {
	return h.scheduler.RunNow(ctx, coreID, scheduleID)
}

// Timezone is the zone the schedules' cron expressions are read in.
func (h *Host) Timezone() schedule.Timezone { return h.timezone }
