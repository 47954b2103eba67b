package session_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/session"
)

func TestAppendMessage(t *testing.T) {
	ctx := context.Background()
	rt, db := newRuntime(t)
	s, _, err := rt.Resolve(ctx, cliRequest("assistant"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := rt.AppendMessage(ctx, session.MessageInput{
		SessionID: s.ID, TurnID: "turn_1", Role: demiurge.RoleUser, Text: "  hello\nworld ",
		Visible: true, ModelVisible: true, Channel: "cli", Source: "local", Metadata: map[string]any{"k": "v"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if demiurge.IDPrefix(m.ID) != "msg" || m.Seq <= 0 || m.Content.Kind != "message" {
		t.Fatalf("message=%+v: want msg_ id, seq > 0, kind message", m)
	}
	got, err := db.RecentMessages(ctx, s.ID, demiurge.MessageFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("messages=%d, want 1", len(got))
	}
	g := got[0]
	if g.ID != m.ID || g.Seq != m.Seq || g.TurnID != "turn_1" || g.Role != demiurge.RoleUser || !g.Visible ||
		g.Content.Text != "  hello\nworld " || !g.Content.ModelVisible || g.Content.Channel != "cli" ||
		g.Content.Source != "local" || g.Content.Metadata["k"] != "v" {
		t.Fatalf("stored message=%+v, want %+v", g, m)
	}
	s, err = db.Session(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if s.MessageCount != 1 || s.Preview != "hello world" || s.Title != "hello world" {
		t.Fatalf("session count=%d preview=%q title=%q", s.MessageCount, s.Preview, s.Title)
	}

	_, err = rt.AppendMessage(ctx, session.MessageInput{SessionID: "session_missing", Role: demiurge.RoleUser, Text: "x"})
	wantCode(t, err, demiurge.ENOTFOUND)
	if got, want := err.Error(), "session not found: session_missing"; got != want {
		t.Fatalf("error=%q, want %q", got, want)
	}
	_, err = rt.AppendMessage(ctx, session.MessageInput{SessionID: s.ID, Role: "robot", Text: "x"})
	wantCode(t, err, demiurge.EINVALID)
}

func TestHistoryWindow(t *testing.T) {
	ctx := context.Background()
	rt, db := newRuntime(t)
	s, _, err := rt.Resolve(ctx, cliRequest("assistant"))
	if err != nil {
		t.Fatal(err)
	}
	// 10,000 messages in one batch (fast), a mix of what history replays and
	// what it must skip.
	const total = 10000
	batch := make([]demiurge.Event, 0, total)
	for i := range total {
		role, kind, modelVisible := demiurge.RoleUser, "message", true
		switch {
		case i%2 == 1:
			role = demiurge.RoleAssistant
		}
		switch {
		case i%10 == 3:
			modelVisible = false // model_hidden delivery history
		case i%10 == 7:
			kind = "notice"
		case i%10 == 9:
			role = "operator_note"
		}
		id := demiurge.NewID("msg")
		batch = append(batch, demiurge.Event{
			AggregateType: demiurge.AggMessage, AggregateID: id, Type: demiurge.EvMessagePersisted,
			Payload: payloadJSON(t, map[string]any{"session_id": s.ID, "role": role, "visible": true,
				"content": map[string]any{"text": fmt.Sprintf("m%05d", i), "kind": kind, "model_visible": modelVisible}}),
		})
	}
	if _, err := db.Append(ctx, batch, "", nil); err != nil {
		t.Fatal(err)
	}
	newest, err := rt.AppendMessage(ctx, session.MessageInput{SessionID: s.ID, Role: demiurge.RoleAssistant, Text: "newest", Visible: true, ModelVisible: true})
	if err != nil {
		t.Fatal(err)
	}

	h, err := rt.History(ctx, s.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(h), session.DefaultHistoryLimit; got != want {
		t.Fatalf("history len=%d, want %d", got, want)
	}
	if last := h[len(h)-1]; last.ID != newest.ID || last.Content.Text != "newest" {
		t.Fatalf("history ends with %q, want the newest message", last.Content.Text)
	}
	for i, m := range h {
		if i > 0 && m.Seq <= h[i-1].Seq {
			t.Fatalf("history not chronological at %d: seq %d after %d", i, m.Seq, h[i-1].Seq)
		}
		if m.Content.Kind != "message" || !m.Content.ModelVisible || (m.Role != demiurge.RoleUser && m.Role != demiurge.RoleAssistant) {
			t.Fatalf("history[%d]=%+v: should have been filtered", i, m)
		}
	}
	// The window is the newest 199 replayable seeded messages + "newest":
	// 7 of every 10 seeded messages qualify.
	var want []string
	for i := total - 1; i >= 0 && len(want) < session.DefaultHistoryLimit-1; i-- {
		if r := i % 10; r != 3 && r != 7 && r != 9 {
			want = append([]string{fmt.Sprintf("m%05d", i)}, want...)
		}
	}
	if got := h[0].Content.Text; got != want[0] {
		t.Fatalf("history starts at %q, want %q", got, want[0])
	}

	small, err := rt.History(ctx, s.ID, 5)
	if err != nil || len(small) != 5 || small[4].ID != newest.ID {
		t.Fatalf("History(5)=%d messages (%v), want 5 ending with the newest", len(small), err)
	}
	_, err = rt.History(ctx, "session_missing", 5)
	wantCode(t, err, demiurge.ENOTFOUND)
}

func TestSetBootstrapAndUpdate(t *testing.T) {
	ctx := context.Background()
	rt, db := newRuntime(t)
	s, _, err := rt.Resolve(ctx, cliRequest("assistant"))
	if err != nil {
		t.Fatal(err)
	}
	if s.BootstrapInitialized {
		t.Fatal("new session is bootstrap-initialized")
	}
	if err := rt.SetBootstrap(ctx, s.ID, "snapshot text"); err != nil {
		t.Fatal(err)
	}
	if err := rt.Update(ctx, s.ID, session.Update{Model: "m9"}); err != nil {
		t.Fatal(err)
	}
	got, err := db.Session(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.BootstrapContext != "snapshot text" || !got.BootstrapInitialized || got.Model != "m9" || got.Workspace != "/w" {
		t.Fatalf("session=%+v: want bootstrap kept across update", got)
	}
	wantCode(t, rt.SetBootstrap(ctx, "session_missing", "x"), demiurge.ENOTFOUND)
}

func TestTurnTerminalOnce(t *testing.T) {
	ctx := context.Background()
	rt, db := newRuntime(t)
	s, _, err := rt.Resolve(ctx, cliRequest("assistant"))
	if err != nil {
		t.Fatal(err)
	}
	start := func(id string) {
		t.Helper()
		if err := rt.StartTurn(ctx, session.TurnStart{TurnID: id, SessionID: s.ID, CoreID: "assistant", CoreRevision: "rev1", HostID: "host_1"}); err != nil {
			t.Fatal(err)
		}
	}
	status := func(id string) string {
		t.Helper()
		tr, err := db.Turn(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return tr.Status
	}

	start("turn_a")
	if got := status("turn_a"); got != demiurge.TurnRunning {
		t.Fatalf("started turn status=%q", got)
	}
	if err := rt.FinishTurn(ctx, "turn_a", demiurge.TurnCompleted, nil); err != nil {
		t.Fatal(err)
	}
	if err := rt.FinishTurn(ctx, "turn_a", demiurge.TurnCompleted, nil); err != nil {
		t.Fatalf("repeat finish with the same status: %v", err)
	}
	err = rt.FinishTurn(ctx, "turn_a", demiurge.TurnFailed, &demiurge.ErrorInfo{Message: "late"})
	wantCode(t, err, demiurge.ECONFLICT)
	if got, want := err.Error(), "turn turn_a already ended: completed"; got != want {
		t.Fatalf("error=%q, want %q", got, want)
	}
	// Starting it again does not reopen it.
	start("turn_a")
	if got := status("turn_a"); got != demiurge.TurnCompleted {
		t.Fatalf("restarted turn status=%q, want completed", got)
	}

	start("turn_b")
	if err := rt.FinishTurn(ctx, "turn_b", demiurge.TurnNeedsUser, nil); err != nil {
		t.Fatal(err)
	}
	if got := status("turn_b"); got != demiurge.TurnNeedsUser {
		t.Fatalf("needs_user turn status=%q", got)
	}
	if evs := events(t, db, demiurge.EvTurnCompleted, "turn_b"); len(evs) != 1 || payloadOf(t, evs[0])["status"] != "needs_user" {
		t.Fatalf("needs_user events=%v, want one turn.completed with status needs_user", evs)
	}

	start("turn_c")
	tr, err := db.Turn(ctx, "turn_c")
	if err != nil {
		t.Fatal(err)
	}
	if tr.CoreID != "assistant" || tr.CoreRevision != "rev1" || tr.HostID != "host_1" || tr.SessionID != s.ID {
		t.Fatalf("turn=%+v", tr)
	}
	if err := rt.FinishTurn(ctx, "turn_c", demiurge.TurnFailed, &demiurge.ErrorInfo{Code: "internal", Message: "boom"}); err != nil {
		t.Fatal(err)
	}
	tr, _ = db.Turn(ctx, "turn_c")
	if tr.Status != demiurge.TurnFailed || tr.Error["message"] != "boom" || tr.CompletedAt.IsZero() {
		t.Fatalf("failed turn=%+v", tr)
	}

	wantCode(t, rt.FinishTurn(ctx, "turn_missing", demiurge.TurnCompleted, nil), demiurge.ENOTFOUND)
	wantCode(t, rt.FinishTurn(ctx, "turn_c", "done", nil), demiurge.EINVALID)
	wantCode(t, rt.StartTurn(ctx, session.TurnStart{TurnID: "turn_x", SessionID: "session_missing"}), demiurge.ENOTFOUND)
}

func TestTurnTerminalOnceUnderRace(t *testing.T) {
	ctx := context.Background()
	rt, db := newRuntime(t)
	s, _, err := rt.Resolve(ctx, cliRequest("assistant"))
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.StartTurn(ctx, session.TurnStart{TurnID: "turn_r", SessionID: s.ID}); err != nil {
		t.Fatal(err)
	}
	statuses := []string{demiurge.TurnCompleted, demiurge.TurnFailed, demiurge.TurnCancelled, demiurge.TurnNeedsUser, demiurge.TurnLost}
	errs := make([]error, len(statuses))
	var wg sync.WaitGroup
	for i, st := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = rt.FinishTurn(ctx, "turn_r", st, nil)
		}()
	}
	wg.Wait()
	var terminal int
	for _, typ := range []string{demiurge.EvTurnCompleted, demiurge.EvTurnFailed, demiurge.EvTurnCancelled, demiurge.EvTurnLost} {
		terminal += len(events(t, db, typ, "turn_r"))
	}
	if terminal != 1 {
		t.Fatalf("terminal events=%d, want exactly 1", terminal)
	}
	tr, err := db.Turn(ctx, "turn_r")
	if err != nil {
		t.Fatal(err)
	}
	var winners int
	for i, err := range errs {
		switch demiurge.ErrorCode(err) {
		case "":
			winners++
			if statuses[i] != tr.Status {
				t.Fatalf("FinishTurn(%s) succeeded but the turn ended %s", statuses[i], tr.Status)
			}
		case demiurge.ECONFLICT:
		default:
			t.Fatalf("FinishTurn(%s): %v", statuses[i], err)
		}
	}
	if winners != 1 {
		t.Fatalf("winners=%d, want 1", winners)
	}
}

// payloadOf decodes the payload of e as a map, the way a generic reader
// sees it.
func payloadOf(t testing.TB, e demiurge.Event) map[string]any {
	t.Helper()
	var m map[string]any
	if err := e.Decode(&m); err != nil {
		t.Fatalf("payload of %s: %v", e.Type, err)
	}
	return m
}

// payloadJSON encodes p as an event payload written by hand, in the shapes
// the store accepts from any writer.
func payloadJSON(t testing.TB, p map[string]any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
