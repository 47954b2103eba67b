package slash_test

import (
	"strings"
	"testing"

	"github.com/demiurge/demiurge/internal/demiurgetest"
)

// rows counts the body rows of a table in out.
func rows(out string) int {
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "| ---") {
			return len(lines) - i - 1
		}
	}
	return -1
}

func TestLastTraceAndEvents(t *testing.T) {
	h := newHost(t,
		demiurgetest.Call("write_file", map[string]any{"path": "notes.txt", "content": "hello"}),
		demiurgetest.Reply("I wrote notes.txt"),
	)
	env := newEnv(t, h)
	for _, line := range []string{"/last", "/trace", "/trace last"} {
		if got := run(t, env, line).Notice; got != "no turns yet" {
			t.Fatalf("%s before a turn = %q", line, got)
		}
	}
	if got := run(t, env, "/events").Notice; !strings.HasPrefix(got, "No events yet") {
		t.Fatalf("/events before a turn = %q", got)
	}
	first := env.turn(t, "write the notes")
	contains(t, "/last with a tool call", run(t, env, "/last").Notice, "## Last turn "+first.TurnID, "**you:** write the notes",
		"**reply:** I wrote notes\\.txt", "## Tool calls\n\n| #", "tool", "status", "arguments", "result",
		"\n| 1   | write_file", "succeeded", `{"content":"hello","path":"notes.txt"}`)
	second := env.turn(t, "thanks")

	last := run(t, env, "/last").Notice
	contains(t, "/last", last, "## Last turn "+second.TurnID, "- status: completed", "took ", "**you:** thanks", "**reply:** \\[fake\\] thanks")
	if strings.Contains(last, "Tool calls") {
		t.Fatalf("/last of a turn without tools shows tool calls:\n%s", last)
	}

	trace := run(t, env, "/trace "+first.TurnID).Notice
	contains(t, "/trace", trace, "## Trace "+first.TurnID+"\n\n", "time", "type", "detail",
		"turn.started", "core assistant@",
		"message.persisted", "user: write the notes",
		"tool.call.started", `write_file {"content":"hello","path":"notes.txt"}`,
		"tool.call.completed", "write_file ok: ",
		"message.persisted", "assistant: I wrote notes.txt",
		"delivery.queued", "queued to cli", "delivery.unrouted", "unrouted (attempt 1): no_interactive_route",
		"turn.completed", "completed")
	if strings.Contains(trace, "thanks") {
		t.Fatal("the trace of the first turn shows the second")
	}
	contains(t, "/trace last", run(t, env, "/trace last").Notice, "## Trace "+second.TurnID)
	// An unknown id falls back quietly to the latest turn.
	contains(t, "/trace unknown", run(t, env, "/trace turn_nope").Notice, "## Trace "+second.TurnID)

	events := run(t, env, "/events").Notice
	contains(t, "/events", events, "## Events\n\n", "time", "type", "turn", "detail", "turn.completed")
	if n := rows(events); n != 10 {
		t.Fatalf("/events shows %d rows, want 10:\n%s", n, events)
	}
	if n := rows(run(t, env, "/events 3").Notice); n != 3 {
		t.Fatalf("/events 3 shows %d rows", n)
	}
	started := run(t, env, "/events turn.started").Notice
	contains(t, "/events turn.started", started, first.TurnID, second.TurnID)
	if n := rows(started); n != 2 || strings.Contains(started, "message.persisted") {
		t.Fatalf("/events turn.started:\n%s", started)
	}
	calls := run(t, env, "/events tool.call.completed 5").Notice
	if n := rows(calls); n != 1 || !strings.Contains(calls, "write_file ok") || !strings.Contains(calls, first.TurnID) {
		t.Fatalf("/events tool.call.completed 5:\n%s", calls)
	}
	if got := run(t, env, "/events no.such.type").Notice; got != "No no.such.type events in this session." {
		t.Fatalf("/events of a missing type = %q", got)
	}
}
