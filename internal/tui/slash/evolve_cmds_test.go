package slash_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/demiurge/demiurge/internal/demiurgetest"
	"github.com/demiurge/demiurge/internal/tui/slash"
)

const newSoul = "You answer in haiku.\n"

// TestEvolveReviewPromoteAndRollback runs the whole flow in place: the
// evolver proposes a change, the review is shown with its diff, a no
// keeps live, a yes promotes, and /rollback (after its own question)
// makes the old tree live again.
func TestEvolveReviewPromoteAndRollback(t *testing.T) {
	h := newHost(t,
		demiurgetest.Call("write_file", map[string]any{"path": "assistant/agent/SOUL.md", "content": "You answer in limericks.\n"}),
		demiurgetest.Reply("rewrote SOUL.md for limericks"),
		demiurgetest.Call("write_file", map[string]any{"path": "assistant/agent/SOUL.md", "content": newSoul}),
		demiurgetest.Reply("rewrote SOUL.md for haiku"),
	)
	env := newEnv(t, h)
	soul := filepath.Join(h.Home().CoreDir("assistant"), "agent", "SOUL.md")
	before, err := os.ReadFile(soul)
	if err != nil {
		t.Fatal(err)
	}
	base, _, err := h.CoreRevisions()
	if err != nil {
		t.Fatal(err)
	}

	// A first run, declined: live stays.
	declined := run(t, env, "/evolve answer in limericks")
	if declined.Confirm == nil {
		t.Fatalf("/evolve = %+v, want a promotion question", declined)
	}
	runID := runIDOf(t, declined.Notice)
	no, err := declined.Confirm.OnNo(context.Background())
	if err != nil || !strings.Contains(no.Notice, "/evolve promote "+runID) {
		t.Fatalf("no = %+v, %v", no, err)
	}
	if live, _, _ := h.CoreRevisions(); live != base {
		t.Fatal("a declined promotion changed live")
	}
	if got := run(t, env, "/evolve discard "+runID).Notice; got != "discarded evolve run "+runID {
		t.Fatalf("discard = %q", got)
	}
	if got := fails(t, env, "/evolve review "+runID); !strings.Contains(got, "evolve run not found") {
		t.Fatalf("review of a discarded run: %q", got)
	}

	// A second run, accepted.
	out := run(t, env, "/evolve answer in haiku")
	contains(t, "/evolve", out.Notice, "## Evolve run ", "run_id: `", "agents_root: `", "report: `",
		": passed", "- proposal revision: `", "- base revision: `"+base, "- M `assistant/agent/SOUL.md`", "- report: `",
		"```diff\n", "+You answer in haiku.", "```")
	if out.Confirm == nil || !strings.Contains(out.Confirm.Question, "Promote run") {
		t.Fatalf("/evolve confirm = %+v", out.Confirm)
	}
	if live, _, _ := h.CoreRevisions(); live != base {
		t.Fatal("the evolve run changed live before the promotion")
	}
	yes, err := out.Confirm.OnYes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	contains(t, "promotion", yes.Notice, "new revision: `", "takes effect next turn")
	promoted, previous, _ := h.CoreRevisions()
	if promoted == base || previous != base {
		t.Fatalf("after the promotion live %s previous %s, base %s", promoted, previous, base)
	}
	if b, _ := os.ReadFile(soul); string(b) != newSoul {
		t.Fatalf("live SOUL.md = %q", b)
	}

	// /rollback asks; no keeps live, yes rolls back.
	ask := run(t, env, "/rollback")
	if ask.Confirm == nil || !strings.Contains(ask.Confirm.Question, promoted[:12]) || !strings.Contains(ask.Confirm.Question, base[:12]) {
		t.Fatalf("/rollback = %+v", ask)
	}
	if no, err := ask.Confirm.OnNo(context.Background()); err != nil || !strings.HasPrefix(no.Notice, "No rollback") {
		t.Fatalf("rollback no = %+v %v", no, err)
	}
	if live, _, _ := h.CoreRevisions(); live != promoted {
		t.Fatal("a declined rollback changed live")
	}
	done, err := ask.Confirm.OnYes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rolled, prev, _ := h.CoreRevisions()
	if done.Notice != "rollback committed: `"+rolled[:12]+"`  \nprevious: `"+promoted[:12]+"`" || prev != promoted {
		t.Fatalf("rollback = %q (live %s previous %s)", done.Notice, rolled, prev)
	}
	if b, _ := os.ReadFile(soul); string(b) != string(before) {
		t.Fatalf("SOUL.md after the rollback = %q, want the original", b)
	}
	if got := run(t, env, "/rollback 0000000000000000"); got.Confirm == nil {
		t.Fatalf("/rollback <rev> = %+v", got)
	} else if res, _ := got.Confirm.OnYes(context.Background()); res.Level != slash.LevelError || !strings.HasPrefix(res.Notice, "rollback failed: ") {
		t.Fatalf("rollback to an unknown revision = %+v", res)
	}
}

// runIDOf reads the run id an /evolve notice names.
func runIDOf(t *testing.T, notice string) string {
	t.Helper()
	_, rest, ok := strings.Cut(notice, "run_id: `")
	id, _, ok2 := strings.Cut(rest, "`")
	if !ok || !ok2 || id == "" {
		t.Fatalf("no run id in:\n%s", notice)
	}
	return id
}

// TestEvolveManualReviewIsConfirmedInPlace: a proposal that grants the
// core new authority is promoted only on the user's yes in front of its
// review; "/evolve promote" without the token shows the review again and
// asks.
func TestEvolveManualReviewIsConfirmedInPlace(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	h0 := newHostAt(t, home)
	manifest, err := os.ReadFile(filepath.Join(h0.Home().CoreDir("assistant"), "agent.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := h0.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	loose := strings.Replace(string(manifest), "    session.read: {}\n", "    session.read: {}\n    secret.bind:DEPLOY_TOKEN: {}\n", 1)
	if loose == string(manifest) {
		t.Fatal("template agent.yaml has no `session.read` grant to add after")
	}
	h := newHostAt(t, home,
		demiurgetest.Call("write_file", map[string]any{"path": "assistant/agent.yaml", "content": loose}),
		demiurgetest.Reply("granted secret.bind"),
	)
	env := newEnv(t, h)
	base, _, _ := h.CoreRevisions()

	out := run(t, env, "/evolve deploy access")
	contains(t, "/evolve", out.Notice, ": passed", "- approval change: `", "secret.bind:DEPLOY_TOKEN", "- manual review token: `mcp-review:")
	if out.Confirm == nil || !strings.Contains(out.Confirm.Question, "loosens approval") {
		t.Fatalf("/evolve confirm = %+v", out.Confirm)
	}
	runID := runIDOf(t, out.Notice)
	if _, err := out.Confirm.OnNo(context.Background()); err != nil {
		t.Fatal(err)
	}

	again := run(t, env, "/evolve promote "+runID)
	contains(t, "/evolve promote without a token", again.Notice, "requires manual", "## Review "+runID+": passed", "manual review token")
	if again.Confirm == nil {
		t.Fatalf("/evolve promote = %+v, want the question again", again)
	}
	if live, _, _ := h.CoreRevisions(); live != base {
		t.Fatal("promoted without the user's yes")
	}
	yes, err := again.Confirm.OnYes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	contains(t, "promotion", yes.Notice, "new revision: `", "takes effect next turn")
	if live, _, _ := h.CoreRevisions(); live == base {
		t.Fatal("a yes did not promote")
	}
}
