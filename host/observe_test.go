package host_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/host"
	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/turn"
)

// testKey is a provider credential the Host knows: the turn's secret set
// starts with it (it is in the environment under an API_KEY name), so it
// must never reach a tool card.
const testKey = "sk-feedtest-0123456789abcdefghijklmnop"

// openScripted opens a Host on a temp home whose fake provider answers
// with responses, and whose environment holds testKey.
func openScripted(tb *testing.T, responses ...demiurge.ModelResponse) *host.Host {
	tb.Helper()
	// The Host takes its credentials from the process environment.
	tb.Setenv("DEMIURGE_FEEDTEST_API_KEY", testKey)
	h, err := host.Open(context.Background(), host.Options{
		Home: tb.TempDir(), FakeScript: demiurgetest.Script(tb, responses...),
	})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := h.Close(context.Background()); err != nil {
			tb.Error(err)
		}
	})
	return h
}

// callRecorder keeps the observations of a turn's tool calls.
type callRecorder struct {
	mu  sync.Mutex
	evs []turn.ToolCallEvent
}

func (r *callRecorder) observe(ev turn.ToolCallEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.evs = append(r.evs, ev)
}

func (r *callRecorder) events() []turn.ToolCallEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]turn.ToolCallEvent(nil), r.evs...)
}

func phases(evs []turn.ToolCallEvent) string {
	var out []string
	for _, e := range evs {
		out = append(out, string(e.Phase))
	}
	return strings.Join(out, ",")
}

// A write_file call is seen requested, waiting for approval (with the
// question), running and succeeded, with its diff; the secret it writes
// appears nowhere in what the card gets.
func TestToolCallObservationWriteFile(t *testing.T) {
	h := openScripted(t,
		demiurgetest.Call("write_file", map[string]any{"path": "notes.txt", "content": "hello\nkey=" + testKey + "\n"}),
		demiurgetest.Reply("written"))
	rec := &callRecorder{}
	res, err := h.Run(context.Background(), turn.Request{
		Text: "write it", NewSession: true,
		Approver: demiurgetest.NewApprover(effect.DecisionAllowOnce), OnToolCall: rec.observe,
	})
	if err != nil || res.Outcome != turn.OutcomeCompleted {
		t.Fatalf("turn: %v %+v", err, res)
	}
	evs := rec.events()
	if got := phases(evs); got != "requested,awaiting_approval,running,ended" {
		t.Fatalf("phases %s", got)
	}
	for _, e := range evs {
		if e.CallID != evs[0].CallID || e.Name != "write_file" || e.Summary != "write_file: notes.txt" || e.StepID == "" {
			t.Fatalf("event %+v", e)
		}
	}
	if q := evs[1].Approval; q == nil || q.Tool != "write_file" || q.SessionID != res.SessionID {
		t.Fatalf("approval phase carries %+v", evs[1].Approval)
	}
	end := evs[3]
	if !end.Done || end.Status != demiurge.EffectSucceeded || end.CardStatus() != demiurge.EffectSucceeded || end.IsError {
		t.Fatalf("end %+v", end)
	}
	if end.Output != "wrote 49 chars to notes.txt" || end.ResultSummary != end.Output || end.Duration < 0 || end.Display.Path != "notes.txt" {
		t.Fatalf("end output %q summary %q duration %v display %+v", end.Output, end.ResultSummary, end.Duration, end.Display)
	}
	if !strings.Contains(end.Display.Diff, "+++ b/notes.txt") || !strings.Contains(end.Display.Diff, "+hello") {
		t.Fatalf("diff %q", end.Display.Diff)
	}
	for _, e := range evs {
		for _, s := range []string{e.Summary, e.Output, e.ResultSummary, e.Display.Diff, e.Display.Command, e.Display.Tail} {
			if strings.Contains(s, testKey) {
				t.Fatalf("the secret reached the card in %q", s)
			}
		}
		if content, _ := e.Arguments["content"].(string); strings.Contains(content, testKey) {
			t.Fatalf("the secret reached the card's arguments: %q", content)
		}
	}
	if b, err := os.ReadFile(filepath.Join(h.Home().WorkspaceDir(), "notes.txt")); err != nil || !strings.Contains(string(b), testKey) {
		t.Fatalf("the file holds %q (%v): the effect itself runs with the raw arguments", b, err)
	}
}

// A terminal call shows its command from the start and its exit code and
// output tail at the end; a command-line credential is removed from both.
func TestToolCallObservationTerminal(t *testing.T) {
	h := openScripted(t,
		demiurgetest.Call("terminal", map[string]any{"command": "echo one; echo two; echo three >&2; exit 3 # --password=hunter2"}),
		demiurgetest.Reply("ran"))
	rec := &callRecorder{}
	res, err := h.Run(context.Background(), turn.Request{
		Text: "run it", NewSession: true,
		Approver: demiurgetest.NewApprover(effect.DecisionAllowOnce), OnToolCall: rec.observe,
	})
	if err != nil || res.Outcome != turn.OutcomeCompleted {
		t.Fatalf("turn: %v %+v", err, res)
	}
	evs := rec.events()
	if got := phases(evs); got != "requested,awaiting_approval,running,ended" {
		t.Fatalf("phases %s", got)
	}
	start, end := evs[0], evs[len(evs)-1]
	if !strings.HasPrefix(start.Summary, "$ echo one; echo two") || !strings.HasPrefix(start.Display.Command, "echo one;") {
		t.Fatalf("start summary %q command %q", start.Summary, start.Display.Command)
	}
	for _, e := range evs {
		if strings.Contains(e.Summary, "hunter2") || strings.Contains(e.Display.Command, "hunter2") {
			t.Fatalf("the password reached the card: %q / %q", e.Summary, e.Display.Command)
		}
	}
	d := end.Display
	if end.Status != demiurge.EffectFailed || !d.HasExitCode || d.ExitCode != 3 || d.TimedOut {
		t.Fatalf("end status %s display %+v", end.Status, d)
	}
	if d.Tail != "one\ntwo\nthree" {
		t.Fatalf("tail %q", d.Tail)
	}
}

// A denied call ends denied without ever running; an unknown tool ends
// invalid on the card.
func TestToolCallObservationDeniedAndUnknown(t *testing.T) {
	h := openScripted(t,
		demiurgetest.Call("write_file", map[string]any{"path": "x.txt", "content": "x"}),
		demiurgetest.Call("no_such_tool", map[string]any{"a": 1}),
		demiurgetest.Reply("done"))
	rec := &callRecorder{}
	_, err := h.Run(context.Background(), turn.Request{
		Text: "try", NewSession: true,
		Approver: demiurgetest.NewApprover(effect.DecisionDeny), OnToolCall: rec.observe,
	})
	if err != nil {
		t.Fatal(err)
	}
	evs := rec.events()
	if got := phases(evs); got != "requested,awaiting_approval,ended,requested,ended" {
		t.Fatalf("phases %s", got)
	}
	if e := evs[2]; e.CardStatus() != demiurge.EffectDenied || !strings.HasPrefix(e.Output, "approval denied:") {
		t.Fatalf("denied end %+v", e)
	}
	if e := evs[4]; e.Status != demiurge.EffectNotFound || e.CardStatus() != demiurge.EffectInvalid || evs[3].Summary != `{"a":1}` {
		t.Fatalf("unknown tool end %+v (start summary %q)", e, evs[3].Summary)
	}
}

// Provider usage is reported per step, summed in the result, recorded with
// the steps and totalled per session across turns.
func TestUsagePerStepAndSession(t *testing.T) {
	step := func(r demiurge.ModelResponse, in, out int64) demiurge.ModelResponse {
		r.Usage = demiurge.Usage{InputTokens: in, OutputTokens: out}
		return r
	}
	h := openScripted(t,
		step(demiurgetest.Call("tools_list", map[string]any{}), 100, 10),
		step(demiurgetest.Reply("first"), 150, 20),
		demiurgetest.Reply("second, unreported"),
	)
	ctx := context.Background()
	var steps []turn.StepEvent
	res, err := h.Run(ctx, turn.Request{Text: "one", NewSession: true, OnStep: func(s turn.StepEvent) { steps = append(steps, s) }})
	if err != nil || res.Outcome != turn.OutcomeCompleted {
		t.Fatalf("turn: %v %+v", err, res)
	}
	if len(steps) != 2 || steps[0].N != 1 || steps[0].ToolCalls != 1 || steps[1].ToolCalls != 0 ||
		steps[0].Usage != (demiurge.Usage{InputTokens: 100, OutputTokens: 10}) ||
		steps[1].Total != (demiurge.Usage{InputTokens: 250, OutputTokens: 30}) || steps[1].TurnID != res.TurnID {
		t.Fatalf("steps %+v", steps)
	}
	if res.Usage != (demiurge.Usage{InputTokens: 250, OutputTokens: 30}) {
		t.Fatalf("result usage %+v", res.Usage)
	}
	if u, err := h.TurnUsage(ctx, res.TurnID); err != nil || u != res.Usage {
		t.Fatalf("turn usage %+v %v", u, err)
	}
	evs, err := host.StoreOf(h).Events(ctx, demiurge.EventFilter{AggregateType: demiurge.AggModelStep, Limit: 10})
	if err != nil || len(evs) != 2 || evs[0].AggregateID != res.TurnID+"_step_1" {
		t.Fatalf("step events %v %+v", err, evs)
	}
	second, err := h.Run(ctx, turn.Request{Text: "two", SessionID: res.SessionID})
	if err != nil || second.Outcome != turn.OutcomeCompleted || !second.Usage.IsZero() {
		t.Fatalf("second turn: %v %+v", err, second)
	}
	if u, err := h.SessionUsage(ctx, res.SessionID); err != nil || u != res.Usage {
		t.Fatalf("session usage %+v %v", u, err)
	}
	if u, err := h.SessionUsage(ctx, "session_nobody"); err != nil || !u.IsZero() {
		t.Fatalf("unknown session usage %+v %v", u, err)
	}
}

// A turn's trace (TurnEvents) holds its model steps' usage records.
func TestTurnEventsHoldModelSteps(t *testing.T) {
	r := demiurgetest.Reply("counted")
	r.Usage = demiurge.Usage{InputTokens: 9, OutputTokens: 4}
	h := openScripted(t, r)
	res, err := h.Run(context.Background(), turn.Request{Text: "count", NewSession: true})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := h.TurnEvents(context.Background(), res.TurnID)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if e.Type == demiurge.EvModelStepCompleted && e.AggregateID == res.TurnID+"_step_1" {
			return
		}
	}
	t.Fatalf("no model step in the turn's %d events", len(evs))
}
