package slash_test

import (
	"context"
	"strings"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/internal/tui/slash"
)

// TestSubagentsListAndCancel: a real background terminal task of the
// session is listed with the operator view, offered for cancellation,
// kept on a no, cancelled on a yes.
func TestSubagentsListAndCancel(t *testing.T) {
	h := newHost(t,
		demiurgetest.Call("terminal", map[string]any{"command": "echo started-line; sleep 120", "background": true}),
		demiurgetest.Reply("started it"),
	)
	env := newEnv(t, h)
	if got := run(t, env, "/subagents").Notice; got != "No background tasks for this session." {
		t.Fatalf("/subagents without a session = %q", got)
	}
	env.turn(t, "run it in the background")
	tasks, err := h.SessionTasks(context.Background(), env.session, 10)
	if err != nil || len(tasks) != 1 {
		t.Fatalf("tasks = %+v, %v", tasks, err)
	}
	id := tasks[0].ID
	eventually(t, "the task runs and logs", func() bool {
		v, err := h.TaskStatus(context.Background(), id)
		return err == nil && v.Task.Status == demiurge.TaskRunning && len(v.Logs) > 0
	})

	list := run(t, env, "/subagents")
	contains(t, "/subagents", list.Notice, "# Background tasks\n\n", "task_id", "kind", "status", "core", "session", "summary",
		"\n| "+id, demiurge.TaskKindTerminalExec, "running", "assistant")
	if list.Picker == nil || len(list.Picker.Items) != 1 || list.Picker.Items[0].ID != id || list.Picker.Items[0].Time.IsZero() {
		t.Fatalf("/subagents picker = %+v", list.Picker)
	}
	detail := run(t, env, "/subagents "+id).Notice
	contains(t, "/subagents <id>", detail, "# Background task\n\n", "- task_id: `"+id+"`", "- kind: `terminal.exec`", "- status: `running`",
		"- owner_session_id: `"+env.session+"`", "## Log\n\n", "started-line")

	// Pick → confirm → no: the task keeps running.
	ask, err := list.Picker.OnPick(context.Background(), id)
	if err != nil || ask.Confirm == nil || !strings.Contains(ask.Confirm.Question, id) {
		t.Fatalf("pick = %+v, %v", ask, err)
	}
	no, err := ask.Confirm.OnNo(context.Background())
	if err != nil || no.Notice != "Task "+id+" keeps running." {
		t.Fatalf("no = %+v, %v", no, err)
	}
	if v, _ := h.TaskStatus(context.Background(), id); v.Task.Status != demiurge.TaskRunning {
		t.Fatalf("after no the task is %s", v.Task.Status)
	}

	// /subagents cancel <id> → yes: cancelled.
	cancel := run(t, env, "/subagents cancel "+id)
	if cancel.Confirm == nil {
		t.Fatalf("/subagents cancel = %+v, want a question", cancel)
	}
	yes, err := cancel.Confirm.OnYes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	contains(t, "cancelled", yes.Notice, "# Cancelled task", "- status: `cancelled`")
	if v, _ := h.TaskStatus(context.Background(), id); v.Task.Status != demiurge.TaskCancelled {
		t.Fatalf("after yes the task is %s", v.Task.Status)
	}
	again := run(t, env, "/subagents")
	if again.Picker != nil || !strings.Contains(again.Notice, "cancelled") {
		t.Fatalf("/subagents after cancel = %+v", again)
	}
	if got := run(t, env, "/subagents cancel "+id); got.Confirm != nil || !strings.Contains(got.Notice, "already cancelled") {
		t.Fatalf("cancel of a cancelled task = %+v", got)
	}

	// Another session does not see the task.
	other := newEnv(t, h)
	other.turn(t, "elsewhere")
	if got := fails(t, other, "/subagents "+id); got != "Background task not found in this session: "+id {
		t.Fatalf("other session: %q", got)
	}
	if got := fails(t, env, "/subagents task_nope"); got != "Background task not found in this session: task_nope" {
		t.Fatalf("unknown task: %q", got)
	}
	if got := slash.Complete(context.Background(), env, "/subagents "); len(got) != 2 || got[0] != "/subagents cancel" || got[1] != "/subagents "+id {
		t.Fatalf("completion = %q", got)
	}
	if got := slash.Complete(context.Background(), env, "/subagents cancel "); len(got) != 0 {
		t.Fatalf("cancel completion offers finished tasks: %q", got)
	}
}
