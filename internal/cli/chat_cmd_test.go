package cli_test

import (
	"strings"
	"testing"

	"github.com/demiurge/demiurge/internal/demiurgetest"
)

// Off a terminal chat is the line mode: one line in, the reply out; the
// slash commands switch sessions; an unknown one is reported on stderr
// and the chat goes on; /exit ends it with exit 0.
func TestChatLineMode(t *testing.T) {
	h := newHome(t)
	r := h.run("hello\n/help\n/sessions\n/new\nagain\n/resume\n/resume session_missing\n/bogus\n/exit\nnever sent\n", "chat")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"[fake] hello\n", "Commands: /new", "  SESSION", "(the next message starts a fresh session)\n", "[fake] again\n"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "never sent") {
		t.Error("input after /exit was processed")
	}
	for _, want := range []string{"demiurge: usage: /resume SESSION_ID\n", "session_missing", "demiurge: unknown command: /bogus"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	var sessions []struct {
		SessionID string `json:"session_id"`
	}
	h.decode(0, &sessions, "sessions", "list", "--json")
	if len(sessions) != 2 {
		t.Fatalf("/new should leave two sessions, got %d", len(sessions))
	}
	first := sessions[1].SessionID
	if r := h.run("/resume "+first+"\nthird\n", "chat"); r.code != 0 || !strings.Contains(r.stdout, "(resumed "+first+")\n[fake] third\n") {
		t.Fatalf("resume: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
	// The end of the input ends the chat too; the bare command is chat.
	if r := h.run("bare\n"); r.code != 0 || r.stdout != "[fake] bare\n" {
		t.Fatalf("bare demiurge: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
}

// A tool call is one line in the chat's output.
func TestChatShowsToolCalls(t *testing.T) {
	h := newHome(t)
	script := demiurgetest.Script(t, demiurgetest.Call("tools_list", nil), demiurgetest.Reply("listed"))
	r := h.run("go\n", "chat", "--fake-script", script)
	if r.code != 0 || !strings.Contains(r.stdout, "· tools_list {} … ok\nlisted\n") {
		t.Fatalf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
}
