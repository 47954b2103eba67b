package tui

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/demiurge/demiurge/coregate"
	"github.com/demiurge/demiurge/corerepo"
	"github.com/demiurge/demiurge/host"
	"github.com/demiurge/demiurge/internal/demiurgetest"
)

// A slot's ctx.tools.call reaches the UI as a model's call does: a card
// naming the slot, waiting for the operator's approval, then succeeded;
// the slot gets the result.
func TestLiveSlotToolCallCard(t *testing.T) {
	home := t.TempDir()
	if _, err := host.Init(home, ""); err != nil {
		t.Fatal(err)
	}
	core := filepath.Join(home, "agents", "assistant")
	writeCoreFile(t, filepath.Join(core, "agent/input/base_input/slot.yaml"), "failure_policy: hard\ncapabilities: [tool.call:echo]\n")
	writeCoreFile(t, filepath.Join(core, "agent/input/base_input/module.star"), `
def process(ctx):
    ctx.input.add_context(ctx.input.raw_text, role = "user")
    r = ctx.tools.call("echo", {"text": "from the slot"})
    ctx.input.progress("the slot got " + r.content)
`)
	echo := filepath.Join(core, "agent/tools/echo/tool.yaml")
	b, err := os.ReadFile(echo)
	if err != nil {
		t.Fatal(err)
	}
	writeCoreFile(t, echo, strings.Replace(string(b), "approval_policy: auto", "approval_policy: prompt", 1))
	saveConfirmed(t, home)

	l := newLiveHome(t, home, "ask", demiurgetest.Reply("the answer"))
	startTestTurn(l.m, "hi")
	l.until("the question", func() bool { return len(l.m.questions) > 0 })
	if s := screen(l.m); !strings.Contains(s, "? echo from agent/input/base_input") || !strings.Contains(s, "waiting for approval") {
		t.Fatalf("no waiting card for the slot's call:\n%s", s)
	}
	press(l.m, "y")
	l.until("the reply", l.shows("the answer"))
	l.until("the turn's end", func() bool { return l.m.running == nil })
	s := screen(l.m)
	if !strings.Contains(s, "✓ echo from agent/input/base_input") || !strings.Contains(s, "succeeded") {
		t.Fatalf("the slot's card did not succeed:\n%s", s)
	}
	if !strings.Contains(s, "the slot got from the slot") {
		t.Fatalf("the slot did not get the result:\n%s", s)
	}
}

func writeCoreFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// saveConfirmed saves the hand edits of the home's cores as the operator
// would, confirming the grants they add.
func saveConfirmed(t *testing.T, home string) {
	t.Helper()
	ctx := context.Background()
	repo, err := host.OpenRepo(ctx, home, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	_, err = repo.Save(ctx, corerepo.SaveOptions{Reason: "test"})
	var ge *coregate.GateError
	if errors.As(err, &ge) && ge.Token != "" {
		_, err = repo.Save(ctx, corerepo.SaveOptions{Reason: "test", Confirm: ge.Token})
	}
	if err != nil {
		t.Fatal(err)
	}
}
