package slash_test

import (
	"context"
	"strings"
	"testing"

	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/internal/tui/slash"
	"github.com/demiurge/demiurge/turn"
)

func TestSessionsResumeAndNew(t *testing.T) {
	h := newHost(t)
	env := newEnv(t, h)
	if got := run(t, env, "/sessions").Notice; got != "No sessions of core assistant yet." {
		t.Fatalf("/sessions empty = %q", got)
	}
	env.turn(t, "the older session")
	older := env.session
	env.session = ""
	env.turn(t, "the newer session")
	newer := env.session

	list := run(t, env, "/sessions").Notice
	contains(t, "/sessions", list, "## Sessions\n\n| #", "session_id", "updated", "channel", "messages", "preview",
		"\n| 1   | *   | "+newer, "| 2 ", "\n| 2   |     | "+older)
	if got := run(t, env, "/sessions 1").Notice; strings.Contains(got, older) || !strings.Contains(got, newer) {
		t.Fatalf("/sessions 1 = %s", got)
	}

	// The picker: newest first, each with its title, preview and time.
	pick := run(t, env, "/resume")
	p := pick.Picker
	if p == nil || p.Title != "Resume session" || len(p.Items) != 2 || pick.Notice != "" {
		t.Fatalf("/resume = %+v", pick)
	}
	if p.Items[0].ID != newer || !strings.HasSuffix(p.Items[0].Title, "(current)") || p.Items[1].ID != older || p.Items[1].Time.IsZero() {
		t.Fatalf("picker items = %+v", p.Items)
	}
	if !strings.Contains(p.Items[1].Preview+p.Items[1].Title, "the older session") {
		t.Fatalf("older item = %+v, want its text shown", p.Items[1])
	}
	picked, err := p.OnPick(context.Background(), older)
	if err != nil || picked.Action != slash.ActionResume || picked.SessionID != older || picked.Notice != "resumed session: "+older {
		t.Fatalf("pick = %+v, %v", picked, err)
	}
	env.apply(picked)

	for line, want := range map[string]string{
		"/resume 1": newer, "/resume 2": older, "/resume " + newer: newer, "/resume `<" + older + ">`": older, `/resume "[` + newer + `]"`: newer,
	} {
		got := run(t, env, line)
		if got.Action != slash.ActionResume || got.SessionID != want {
			t.Errorf("%s = %+v, want a resume of %s", line, got, want)
		}
	}
	for line, want := range map[string]string{
		"/resume 3":            "Session number out of range: 3",
		"/resume 0":            "Session number out of range: 0",
		"/resume session_nope": "session not found or not authorized",
		"/resume ``":           "session id is required",
	} {
		if got := fails(t, env, line); got != want {
			t.Errorf("%s: %q, want %q", line, got, want)
		}
	}
	if got := slash.Complete(context.Background(), env, "/resume session_"); len(got) != 2 || got[0] != "/resume "+newer || got[1] != "/resume "+older {
		t.Fatalf("/resume completion = %q", got)
	}

	// A session switch waits for the running turn.
	env.busy = true
	for _, line := range []string{"/resume", "/resume 1", "/new"} {
		if got := fails(t, env, line); !strings.Contains(got, "a turn is running") {
			t.Errorf("%s while busy: %q", line, got)
		}
	}
	if _, err := p.OnPick(context.Background(), newer); err == nil {
		t.Error("a pick while busy switched the session")
	}
	env.busy = false

	// /new names the fresh session; the UI's next turn starts it.
	fresh := run(t, env, "/new")
	if fresh.Action != slash.ActionNewSession || !strings.HasPrefix(fresh.SessionID, "session_") || fresh.Notice != "new session: "+fresh.SessionID {
		t.Fatalf("/new = %+v", fresh)
	}
	res, err := h.Run(context.Background(), turn.Request{Text: "hi", NewSession: true, NewSessionID: fresh.SessionID, Workspace: env.workspace,
		Approver: demiurgetest.NewApprover("deny")})
	if err != nil || res.SessionID != fresh.SessionID {
		t.Fatalf("turn in the new session: %+v %v", res, err)
	}
	if again := run(t, env, "/new"); again.SessionID == fresh.SessionID {
		t.Fatal("two /new gave one id")
	}
}
