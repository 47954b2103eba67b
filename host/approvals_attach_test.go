package host_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/host"
	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/turn"
)

// delegatingScript is a parent turn that starts a child agent (the
// evolver core) and ends at once by asking the user, so that only the
// child takes the script's next items: one write_file call, then its
// answer.
func delegatingScript() []demiurge.ModelResponse {
	return []demiurge.ModelResponse{
		{ToolCalls: []demiurge.ToolCall{
			{ID: "call_delegate", Name: "delegate_task", Arguments: map[string]any{"goal": "write the note", "core_id": "evolver"}},
			{ID: "call_clarify", Name: "clarify", Arguments: map[string]any{"question": "anything else?"}},
		}},
		demiurgetest.Call("write_file", map[string]any{"path": "child.txt", "content": "from the child"}),
		demiurgetest.Reply("child done"),
	}
}

// runDelegation runs the parent turn in a session of its own and waits for
// the child's task; it returns the parent session and the child's task.
func runDelegation(t *testing.T, h *host.Host, sid string) demiurge.Task {
	t.Helper()
	ctx := context.Background()
	res, err := h.Run(ctx, turn.Request{Text: "delegate", NewSession: true, NewSessionID: sid})
	if err != nil || res.Outcome != turn.OutcomeNeedsUser {
		t.Fatalf("parent turn: %v %+v", err, res)
	}
	tasks, err := h.TurnTasks(ctx, sid, res.TurnID)
	if err != nil || len(tasks) != 1 || tasks[0].Kind != demiurge.TaskKindAgentSpawn {
		t.Fatalf("parent tasks: %v %+v", err, tasks)
	}
	wctx, cancel := context.WithTimeout(ctx, feedDeadline)
	defer cancel()
	task, err := h.WaitTask(wctx, tasks[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	return task
}

// childWrite is the child's write_file call as recorded, and whether the
// file exists in the workspace.
func childWrite(t *testing.T, h *host.Host, task demiurge.Task) (demiurge.ToolCallRecord, bool) {
	t.Helper()
	parts := strings.Split(task.ResultRef, ":") // session:<child session>:<child turn>
	if len(parts) != 3 {
		t.Fatalf("task %s result_ref %q (status %s)", task.ID, task.ResultRef, task.Status)
	}
	calls, err := host.StoreOf(h).ToolCalls(context.Background(), parts[2])
	if err != nil || len(calls) != 1 || calls[0].ToolName != "write_file" {
		t.Fatalf("child calls %v %+v", err, calls)
	}
	_, err = os.Stat(filepath.Join(h.Home().WorkspaceDir(), "child.txt"))
	return calls[0], err == nil
}

func denialReason(c demiurge.ToolCallRecord) string {
	data, _ := c.Result["data"].(map[string]any)
	approval, _ := data["approval"].(map[string]any)
	reason, _ := approval["reason"].(string)
	return reason
}

// A child agent's question goes to the approver attached to the session
// that started it, and its answer applies.
func TestAttachedApproverAnswersChildAgent(t *testing.T) {
	h := openScripted(t, delegatingScript()...)
	sid := demiurge.NewID("session")
	approver := demiurgetest.NewApprover(effect.DecisionAllowOnce)
	detach := h.AttachApprover(sid, approver)
	defer detach()

	task := runDelegation(t, h, sid)
	if task.Status != demiurge.TaskSucceeded {
		t.Fatalf("child task %s", task.Status)
	}
	reqs := approver.Requests()
	if len(reqs) != 1 || reqs[0].Tool != "write_file" || !strings.HasPrefix(reqs[0].SessionID, "session_child_") {
		t.Fatalf("attached approver was asked %+v", reqs)
	}
	if call, written := childWrite(t, h, task); !written || call.Status != "succeeded" {
		t.Fatalf("child write %s, file written %v", call.Status, written)
	}
}

// With nothing attached, a child's question is denied as it always was.
func TestChildAgentWithoutApproverIsDenied(t *testing.T) {
	h := openScripted(t, delegatingScript()...)
	elsewhere := demiurgetest.NewApprover(effect.DecisionAllowOnce)
	defer h.AttachApprover(demiurge.NewID("session"), elsewhere)()

	task := runDelegation(t, h, demiurge.NewID("session"))
	call, written := childWrite(t, h, task)
	if written || call.Status != "failed" || denialReason(call) != effect.ReasonNoOperator {
		t.Fatalf("child write %s (%q), file written %v", call.Status, denialReason(call), written)
	}
	if elsewhere.Asked() != 0 {
		t.Fatal("another session's approver was asked")
	}
}

// blockingApprover never answers: it reports the question and waits for
// its context, then reports why it ended.
type blockingApprover struct {
	asked chan effect.ApprovalRequest
	ended chan error
}

func newBlockingApprover() *blockingApprover {
	return &blockingApprover{asked: make(chan effect.ApprovalRequest, 1), ended: make(chan error, 1)}
}

func (a *blockingApprover) Approve(ctx context.Context, req effect.ApprovalRequest) (string, error) {
	a.asked <- req
	<-ctx.Done()
	a.ended <- context.Cause(ctx)
	return effect.DecisionAllowOnce, nil // too late: it must not count
}

// Detaching the approver while it is asked denies the question.
func TestDetachDeniesPendingQuestion(t *testing.T) {
	h := openScripted(t, delegatingScript()...)
	sid := demiurge.NewID("session")
	approver := newBlockingApprover()
	detach := h.AttachApprover(sid, approver)
	go func() {
		<-approver.asked
		detach()
	}()
	task := runDelegation(t, h, sid)
	call, written := childWrite(t, h, task)
	if written || call.Status != "failed" || !strings.Contains(denialReason(call), "detached") {
		t.Fatalf("child write %s (%q), file written %v", call.Status, denialReason(call), written)
	}
	select {
	case <-approver.ended:
	case <-time.After(feedDeadline):
		t.Fatal("the detached approver's context was not cancelled")
	}
	detach() // a second detach is harmless
}

// A background question nobody answers in time is denied.
func TestUnansweredBackgroundQuestionTimesOut(t *testing.T) {
	h := openScripted(t, delegatingScript()...)
	host.SetBackgroundApprovalTimeout(h, 200*time.Millisecond)
	sid := demiurge.NewID("session")
	approver := newBlockingApprover()
	defer h.AttachApprover(sid, approver)()

	task := runDelegation(t, h, sid)
	call, written := childWrite(t, h, task)
	if written || call.Status != "failed" || !strings.Contains(denialReason(call), "in time") {
		t.Fatalf("child write %s (%q), file written %v", call.Status, denialReason(call), written)
	}
	if cause := <-approver.ended; !errors.Is(cause, context.DeadlineExceeded) && !strings.Contains(cause.Error(), "in time") {
		t.Fatalf("approver ended by %v", cause)
	}
}
