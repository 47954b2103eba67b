package host

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/builtin"
	"github.com/demiurge/demiurge/builtin/terminal"
	"github.com/demiurge/demiurge/controlplane"
	"github.com/demiurge/demiurge/core"
	"github.com/demiurge/demiurge/delegation"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/mcp"
	"github.com/demiurge/demiurge/turn"
)

// startTasks builds the control plane and the task worker with its task
// bodies (background terminal, child agents), wires the model-facing task
// tools into deps, and starts the worker.
func (h *Host) startTasks(ctx context.Context, deps *builtin.Deps) error {
	h.control = controlplane.New(h.store, controlplane.Options{})
	h.tasks = controlplane.NewWorker(h.control, h.store, controlplane.WorkerOptions{
		HostID: h.lease.ID(), Logger: h.logger, Subscribe: h.store.Subscribe,
		MaxActive:    cmp.Or(h.maxActiveTasks, h.config.Runtime.MaxActiveTasks),
		OwnQueueOnly: h.oneShot,
	})

	terminals := terminal.NewTasks(deps.Terminal(), h.tasks)
	h.tasks.Handle(demiurge.TaskKindTerminalExec, terminals.Run)

	children := h.children
	h.tasks.Handle(demiurge.TaskKindAgentSpawn, func(ctx context.Context, t demiurge.Task, th *controlplane.Handle) (demiurge.TaskResult, error) {
		return children.Run(ctx, t, th)
	})
	h.tasks.Handle(demiurge.TaskKindScheduleFire, h.runScheduled)
	h.tasks.Handle(demiurge.TaskKindEvolverRun, h.runEvolver)

	for kind, run := range h.taskRunners {
		h.tasks.Handle(kind, run)
	}

	deps.TerminalTasks, deps.Tasks, deps.Delegator = terminals, taskControl{h}, children
	deps.Evolution = coreEvolution{h}
	h.tasks.OnCompletion(h.deliverCompletion)
	// Task admission closes first of all but the scheduler: active tasks
	// are cancelled and drained before the turns and processes they use
	// go away.
	if err := h.closers.opened("tasks", 10*time.Second, h.tasks.Close); err != nil {
		return err
	}
	return h.tasks.Start(ctx)
}

// newDelegation builds the child-agent service. It is made before the
// turn engine (slots reach it through ctx.agents.spawn) and reaches the
// worker and the engine only when a delegation happens.
func (h *Host) newDelegation() *delegation.Service {
	return delegation.New(delegation.Deps{
		Submit: func(ctx context.Context, spec demiurge.TaskSpec, src demiurge.TaskOrigin) (demiurge.Task, error) {
			return h.tasks.Submit(ctx, spec, src)
		},
		Tasks: h.store.ListTasks,
		LoadCore: func(ctx context.Context, id string) (*core.Core, error) {
			snap, err := h.cores.Load(ctx, id)
			return snap.Core, err
		},
		VisibleTools: h.visibleTools,
		History: func(ctx context.Context, sessionID string, limit int) ([]demiurge.Message, error) {
			return h.sessions.History(ctx, sessionID, limit)
		},
		RunChild: h.runChild,
		Audit:    h.store.Append,
	})
}

// visibleTools lists the tool ids a turn of the (already loaded) core c
// would see, in registry order, and whether c declares MCP servers. The
// catalog is prepared without a turn, so no MCP server is connected.
func (h *Host) visibleTools(ctx context.Context, c *core.Core) ([]string, bool, error) {
	cat, err := h.catalogs.Prepare(ctx, turn.Snapshot{Core: c}, effect.TurnContext{})
	if err != nil {
		return nil, false, err
	}
	var ids []string
	for _, e := range cat.Entries() {
		ids = append(ids, e.Name)
	}
	// Declarations that do not parse still declare servers.
	decls, err := mcp.LoadCore(c)
	return ids, err != nil || len(decls) > 0, nil
}

// runChild runs a delegated child turn: a fresh session owned by the
// child's delegated scope, on the channel "agent", with the resolved
// slots and tool policy. Its deliveries stay in the child session.
func (h *Host) runChild(ctx context.Context, c delegation.ChildTurn) (delegation.ChildResult, error) {
	// While the child runs, its questions go to the approver attached up
	// its lineage (approvals_attach.go).
	defer h.links.child(c.SessionID, c.ParentSessionID)()
	res, err := h.turns.Run(ctx, turn.Request{
		CoreID: c.CoreID, Text: c.Goal,
		NewSession: true, NewSessionID: c.SessionID,
		Channel: "agent", ConversationKey: c.SessionID,
		Scope:     c.Scope(),
		Workspace: c.Workspace,
		Approver:  h.links.forwarder(c.ParentSessionID),
		Delegation: &turn.Delegation{
			Depth: c.Depth, ParentSessionID: c.ParentSessionID, ParentTurnID: c.ParentTurnID,
			ParentSlot: c.ParentSlot, TaskID: c.TaskID,
			InputSlots: c.InputSlots, OutputSlots: c.OutputSlots, UseBootstrap: c.UseBootstrap,
			ToolPolicy: c.ToolPolicy, SystemContext: c.SystemContext,
		},
	})
	// The child's scope ends with its turn: its MCP connections close.
	if eerr := h.mcp.EvictScope(context.WithoutCancel(ctx), c.SessionID, c.TaskID); eerr != nil {
		h.logger.Warn("evict child MCP scope", "task_id", c.TaskID, "err", eerr)
	}
	if err != nil {
		return delegation.ChildResult{}, err
	}
	out := delegation.ChildResult{
		SessionID: res.SessionID, TurnID: res.TurnID, Outcome: res.Outcome, Text: res.Text,
		NeedsUser: res.Outcome == turn.OutcomeNeedsUser,
	}
	for _, d := range res.Deliveries {
		out.Deliveries = append(out.Deliveries, d.Text)
		out.Items = append(out.Items, delegation.ChildDelivery{Kind: d.Kind, Text: d.Text, HistoryPolicy: d.HistoryPolicy, Visible: d.Visible})
	}
	for _, c := range res.ToolCalls {
		out.Tools = append(out.Tools, delegation.ChildTool{Name: c.Name, Content: c.Content, IsError: c.IsError})
	}
	out.Result = res.AgentResult
	if res.Error != nil {
		out.Error = res.Error.Message
	}
	return out, nil
}

// deliverCompletion brings a finished task's notice into the session that
// started it: one model-visible message the next
// turn of that session sees, marked synthetic. It is idempotent per
// completion, so a redelivery after a crash does not duplicate it.
func (h *Host) deliverCompletion(ctx context.Context, c controlplane.Completion) error {
	if c.SessionID == "" {
		return nil
	}
	_, err := h.sessions.AppendMessage(ctx, demiurge.MessageInput{
		SessionID: c.SessionID, TurnID: c.Task.OwnerTurnID, Role: demiurge.RoleUser,
		Text: completionText(c), Visible: true, ModelVisible: true, Channel: "system", Source: "background_task",
		Metadata: map[string]any{
			"synthetic": true, "trigger": "background_task", "event_id": c.WorkID, "task_id": c.TaskID,
			"task_kind": c.Task.Kind, "source_tool": sourceTool(c), "task_status": c.Task.Status,
			"owner_turn_id": c.Task.OwnerTurnID, "result_ref": c.Task.ResultRef, "completion_claim_id": c.ClaimID,
		},
		IdempotencyKey: "task_completion:" + c.WorkID + ":message",
	})
	return err
}

// completionText is the synthetic inbound text of a task completion.
func completionText(c controlplane.Completion) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[SYSTEM: Background task event]\ntask_id: %s\nkind: %s\nsource_tool: %s\nstatus: %s\n",
		c.TaskID, c.Task.Kind, sourceTool(c), c.Task.Status)
	if c.Summary != "" {
		fmt.Fprintf(&b, "\nSummary:\n%s\n", c.Summary)
	}
	if c.Task.ResultRef != "" {
		fmt.Fprintf(&b, "\nResult ref: %s\n", c.Task.ResultRef)
	}
	if tail, ok := c.Payload["log_tail"].([]any); ok && len(tail) > 0 {
		b.WriteString("\nLog tail:\n")
		for _, l := range tail {
			fmt.Fprintf(&b, "%v\n", l)
		}
	}
	b.WriteString("\nReply with a concise status update for the user. Do not rerun the task; use task_status or task_list for detail.")
	return b.String()
}

// sourceTool is the tool that started the task, as its submission
// recorded it (every submitter records one).
func sourceTool(c controlplane.Completion) string {
	if s, ok := c.Payload["source_tool"].(string); ok && s != "" {
		return s
	}
	return c.Task.Kind
}

// WaitTasks waits until this Host runs no task: those a turn started and
// any they started in turn. A task that ends blocked on the user counts
// as done here: nothing of this Host runs it any more.
func (h *Host) WaitTasks(ctx context.Context) error {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for len(h.tasks.Active()) > 0 {
		select {
		case <-ctx.Done():
			return demiurge.WrapError(demiurge.ECANCELED, ctx.Err(), "stopped waiting for tasks")
		case <-t.C:
		}
	}
	return nil
}

// CancelTasks cancels every task this Host runs; each ends recorded as
// cancelled (or as whatever it reached first).
func (h *Host) CancelTasks(ctx context.Context) error {
	var errs []error
	for _, id := range h.tasks.Active() {
		if _, err := h.tasks.Cancel(ctx, id, "task cancelled: the run that started it exited"); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// TurnTasks lists the tasks a turn started, oldest first.
func (h *Host) TurnTasks(ctx context.Context, sessionID, turnID string) ([]demiurge.Task, error) {
	if sessionID == "" || turnID == "" {
		return nil, nil
	}
	all, err := h.store.ListTasks(ctx, demiurge.TaskFilter{OwnerSessionID: sessionID, Limit: demiurge.MaxTaskLimit})
	if err != nil {
		return nil, err
	}
	var out []demiurge.Task
	for i := len(all) - 1; i >= 0; i-- {
		if all[i].OwnerTurnID == turnID {
			out = append(out, all[i])
		}
	}
	return out, nil
}

// EnqueueTask queues a background task in the ledger without running it
// here: a Host whose worker runs its kind claims and starts it, this one
// or another Host of a shared ledger. anyHost false keeps it for this
// Host (work bound to this machine).
func (h *Host) EnqueueTask(ctx context.Context, spec demiurge.TaskSpec, src demiurge.TaskOrigin, anyHost bool) (demiurge.Task, error) {
	src.HostID = ""
	if !anyHost {
		src.HostID = h.lease.ID()
	}
	return h.tasks.Enqueue(ctx, spec, src)
}

// HostID is this Host process's id in the ledger (its hosts row and the
// host_id of what it runs).
func (h *Host) HostID() string { return h.lease.ID() }

// EnqueueTasks queues many background tasks for any Host at once, in one
// write (controlplane.Worker.EnqueueMany): a task or an error per spec.
func (h *Host) EnqueueTasks(ctx context.Context, specs []demiurge.TaskSpec, src demiurge.TaskOrigin) ([]demiurge.Task, []error, error) {
	src.HostID = ""
	return h.tasks.EnqueueMany(ctx, specs, src)
}
