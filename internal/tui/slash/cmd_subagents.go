package slash

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/controlplane"
)

// Bounds of /subagents.
const (
	listedTasks  = 50 // tasks listed, newest first
	taskLogLines = 40 // log lines of the detail view
	taskSummary  = 36 // summary characters in the list
)

// cmdSubagents is the operator's view of the session's background tasks
// (child agents, detached terminal commands, evolve runs): the list, one
// task in detail, or its cancellation after a confirmation.
func cmdSubagents(ctx context.Context, env Env, args string) (Outcome, error) {
	fields := strings.Fields(args)
	switch {
	case len(fields) == 0:
		return listTasks(ctx, env)
	case fields[0] == "cancel" && len(fields) == 2:
		return confirmCancel(ctx, env, fields[1])
	case fields[0] == "cancel":
		return Outcome{}, usageBecause("subagents", "cancel takes one task id")
	case len(fields) == 1:
		v, err := sessionTask(ctx, env, fields[0])
		if err != nil {
			return Outcome{}, err
		}
		return notice(taskView("Background task", v)), nil
	}
	return Outcome{}, usage("subagents")
}

// listTasks is the table of the session's tasks and, when some still run,
// a picker that offers to cancel one.
func listTasks(ctx context.Context, env Env) (Outcome, error) {
	if env.SessionID() == "" {
		return notice("No background tasks for this session."), nil
	}
	h := env.Host()
	tasks, err := h.SessionTasks(ctx, env.SessionID(), listedTasks)
	if err != nil {
		return Outcome{}, err
	}
	if len(tasks) == 0 {
		return notice("No background tasks for this session."), nil
	}
	t := table{title: "Background tasks", level: 1, headers: []string{"task_id", "kind", "status", "core", "session", "summary"}}
	picker := &Picker{Title: "Cancel a background task (Esc keeps them all)", OnPick: func(ctx context.Context, id string) (Outcome, error) {
		return confirmCancel(ctx, env, id)
	}}
	for _, tk := range tasks {
		v, err := h.TaskStatus(ctx, tk.ID)
		if err != nil {
			return Outcome{}, err
		}
		summary := orText(v.Summary, sourceTool(tk))
		t.rows = append(t.rows, []string{tk.ID, tk.Kind, tk.Status, tk.CoreID, childSession(tk), shorten(summary, taskSummary, "...")})
		if demiurge.TaskActive(tk.Status) {
			picker.Items = append(picker.Items, Item{ID: tk.ID, Title: tk.Kind + " · " + tk.Status, Preview: summary, Time: tk.CreatedAt})
		}
	}
	out := notice(t.String())
	if len(picker.Items) > 0 {
		out.Picker = picker
	}
	return out, nil
}

// confirmCancel asks before cancelling one of the session's tasks; a task
// that already ended is shown as it is.
func confirmCancel(ctx context.Context, env Env, id string) (Outcome, error) {
	v, err := sessionTask(ctx, env, id)
	if err != nil {
		return Outcome{}, err
	}
	if demiurge.TaskTerminal(v.Task.Status) {
		return notice(taskView("Background task (already "+v.Task.Status+")", v)), nil
	}
	q := fmt.Sprintf("Cancel task %s (%s, %s)?", id, v.Task.Kind, v.Task.Status)
	return Outcome{Notice: taskView("Background task", v), Confirm: &Confirm{Question: q,
		OnYes: func(ctx context.Context) (Outcome, error) {
			h := env.Host()
			if _, err := h.CancelTask(ctx, id); err != nil {
				return Outcome{}, err
			}
			after, err := h.TaskStatus(ctx, id)
			if err != nil {
				return Outcome{}, err
			}
			return notice(taskView("Cancelled task", after)), nil
		},
		OnNo: func(context.Context) (Outcome, error) {
			return notice("Task " + id + " keeps running."), nil
		},
	}}, nil
}

// sessionTask reads a task of this session (a task of another session is
// not found here, like an unknown one).
func sessionTask(ctx context.Context, env Env, id string) (controlplane.OperatorView, error) {
	v, err := env.Host().TaskStatus(ctx, id)
	if errNotFound(err) || (err == nil && (env.SessionID() == "" || v.Task.OwnerSessionID != env.SessionID())) {
		return controlplane.OperatorView{}, demiurge.Errorf(demiurge.ENOTFOUND, "Background task not found in this session: %s", id)
	}
	return v, err
}

// taskView is one task as markdown: its fields, its source and its log
// tail (the operator view; the Host redacts what it logs).
func taskView(title string, v controlplane.OperatorView) string {
	tk := v.Task
	var b strings.Builder
	b.WriteString("# " + title + "\n\n")
	for _, kv := range [][2]string{
		{"task_id", tk.ID}, {"kind", tk.Kind}, {"status", tk.Status}, {"core", tk.CoreID},
		{"owner_session_id", tk.OwnerSessionID}, {"owner_turn_id", tk.OwnerTurnID},
		{"started", clockIf(tk.StartedAt)}, {"completed", clockIf(tk.CompletedAt)},
		{"result_ref", tk.ResultRef}, {"summary", oneLine(v.Summary)},
	} {
		if kv[1] != "" {
			b.WriteString("- " + kv[0] + ": " + code(kv[1]) + "\n")
		}
	}
	if msg, _ := tk.Error["message"].(string); msg != "" {
		b.WriteString("- error: " + code(oneLine(msg)) + "\n")
	}
	if len(tk.Source) > 0 {
		b.WriteString("\n## Source\n\n")
		for _, k := range slices.Sorted(maps.Keys(tk.Source)) {
			b.WriteString("- " + k + ": " + code(valueText(tk.Source[k])) + "\n")
		}
	}
	if len(v.Logs) > 0 {
		logs := v.Logs[max(0, len(v.Logs)-taskLogLines):]
		lines := make([]string, len(logs))
		for i, l := range logs {
			lines[i] = l.Text
		}
		b.WriteString("\n## Log\n\n" + fence(".text", strings.Join(lines, "\n")) + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// sourceTool names what started a task, for a task without a summary yet.
func sourceTool(tk demiurge.Task) string {
	if s, _ := tk.Source["source_tool"].(string); s != "" {
		return "started by " + s
	}
	return ""
}

// childSession is the session a child agent task runs in ("" for other
// kinds).
func childSession(tk demiurge.Task) string {
	if s, _ := tk.Source["child_session_id"].(string); s != "" {
		return s
	}
	meta, _ := tk.Source["metadata"].(map[string]any)
	s, _ := meta["child_session_id"].(string)
	return s
}

func valueText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case map[string]any:
		return compactJSON(x)
	}
	return fmt.Sprint(v)
}

// code is text as inline code, whatever backticks it holds.
func code(s string) string {
	s = oneLine(s)
	ticks := "`"
	for strings.Contains(s, ticks) {
		ticks += "`"
	}
	pad := ""
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		pad = " "
	}
	return ticks + pad + s + pad + ticks
}

func clockIf(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return clock(t)
}
