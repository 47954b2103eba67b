package tui

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/turn"
)

var writeArgs = map[string]any{"path": "notes.txt", "content": "hello\nworld\n"}

// Every state of a tool card, drawn in summary mode at 80 columns.
func TestGoldenToolCardStates(t *testing.T) {
	cases := []struct {
		name string
		run  func(m *Model, seq int)
	}{
		{"running", func(m *Model, seq int) {
			send(m, toolStart(seq, "c1", "write_file", writeArgs))
		}},
		{"waiting", func(m *Model, seq int) {
			send(m, toolStart(seq, "c1", "write_file", writeArgs), approvalMsg{seq: seq, q: writeQuestion("c1")})
		}},
		{"succeeded", func(m *Model, seq int) {
			send(m, toolStart(seq, "c1", "write_file", writeArgs), toolEnd(seq, "c1", "write_file", writeArgs, demiurge.EffectSucceeded, 1500*time.Millisecond))
		}},
		{"denied", func(m *Model, seq int) {
			send(m, toolStart(seq, "c1", "write_file", writeArgs), toolEnd(seq, "c1", "write_file", writeArgs, demiurge.EffectDenied, 0))
		}},
		{"invalid", func(m *Model, seq int) {
			args := map[string]any{"path": "/etc/passwd", "content": "x"}
			send(m, toolStart(seq, "c1", "write_file", args), toolEnd(seq, "c1", "write_file", args, demiurge.EffectInvalid, 2*time.Millisecond))
		}},
		{"failed", func(m *Model, seq int) {
			args := map[string]any{"url": "https://example.com"}
			send(m, toolStart(seq, "c1", "web_extract", args), toolEnd(seq, "c1", "web_extract", args, demiurge.EffectFailed, 300*time.Millisecond))
			send(m, done(seq, demiurge.TurnCompleted, turn.ToolCallSummary{CallID: "c1", Name: "web_extract", Status: demiurge.EffectFailed, IsError: true, Content: "fetch failed: connection refused"}))
		}},
		{"timed_out", func(m *Model, seq int) {
			args := map[string]any{"command": "sleep 100"}
			send(m, toolStart(seq, "c1", "terminal", args), toolEnd(seq, "c1", "terminal", args, demiurge.EffectTimedOut, 61*time.Second))
			send(m, done(seq, demiurge.TurnCompleted, turn.ToolCallSummary{CallID: "c1", Name: "terminal", Status: demiurge.EffectTimedOut, IsError: true, Content: "exit_code: 124\ntimed_out: true\n"}))
		}},
		{"cancelled", func(m *Model, seq int) {
			args := map[string]any{"command": "sleep 100"}
			send(m, toolStart(seq, "c1", "terminal", args))
			press(m, "ctrl+c")
			send(m, done(seq, demiurge.TurnCancelled))
		}},
		{"terminal", func(m *Model, seq int) {
			args := map[string]any{"command": "go test ./..."}
			out := "exit_code: 1\nstdout:\nok  a\nok  b\nFAIL c\n--- FAIL: TestX\nFAIL\n"
			send(m, toolStart(seq, "c1", "terminal", args), toolEnd(seq, "c1", "terminal", args, demiurge.EffectSucceeded, 2*time.Second))
			send(m, done(seq, demiurge.TurnCompleted, turn.ToolCallSummary{CallID: "c1", Name: "terminal", Status: demiurge.EffectSucceeded, Content: out}))
		}},
		{"patch", func(m *Model, seq int) {
			args := map[string]any{"path": "main.go", "old": "a := 1\nb := 2\nc := 3", "new": "a := 1\nb := 20\nc := 3"}
			send(m, toolStart(seq, "c1", "patch", args), toolEnd(seq, "c1", "patch", args, demiurge.EffectSucceeded, 40*time.Millisecond))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, _ := newTestModel(t, 80, 24, Config{})
			seq := startTestTurn(m, "do it")
			c.run(m, seq)
			golden(t, "card_"+c.name, screen(m))
		})
	}
}

// The approval panel: summary, risk, capability, target and the preview,
// shortened, then in full after f; a second question waits behind it.
func TestGoldenApprovalPanel(t *testing.T) {
	m, _ := newTestModel(t, 80, 30, Config{})
	seq := startTestTurn(m, "write the notes")
	long := strings.Repeat("line of the note\n", 12)
	q := writeQuestion("c1")
	q.req.Preview = map[string]any{"path": "notes.txt", "content": long}
	q.req.Notes = []string{"confined to the workspace"}
	send(m, toolStart(seq, "c1", "write_file", map[string]any{"path": "notes.txt", "content": long}), approvalMsg{seq: seq, q: q},
		approvalMsg{seq: seq, q: writeQuestion("c2")})
	golden(t, "approval", screen(m))
	press(m, "f")
	golden(t, "approval_full", screen(m))
}

// At 60 columns everything still fits, cut and wrapped, never wider than
// the screen; below the minimum one line says the terminal is too small.
func TestGoldenNarrowAndTooSmall(t *testing.T) {
	m, _ := newTestModel(t, 60, 20, Config{})
	seq := startTestTurn(m, "a long request that has to wrap around at sixty columns for sure")
	send(m, streamMsg{seq: seq, delta: "Here is **bold** text and a list:\n\n- first item that is long enough to wrap at this width\n- second\n\n```go\nfmt.Println(\"a fairly long line of code that will not fit in sixty columns\")\n```\n"})
	send(m, toolStart(seq, "c1", "terminal", map[string]any{"command": "echo a very long command line that will certainly need cutting"}))
	out := screen(m)
	for i, l := range strings.Split(out, "\n") {
		if width(l) > 60 {
			t.Fatalf("line %d is %d columns wide: %q", i, width(l), l)
		}
	}
	golden(t, "narrow60", out)

	send(m, resize(39, 20))
	golden(t, "too_small", screen(m))
	send(m, resize(60, 9))
	if got := screen(m); !strings.HasPrefix(got, "terminal too small") || strings.Count(got, "\n") != 0 {
		t.Fatalf("a short terminal: %q", got)
	}
	send(m, resize(60, 20))
	if got := screen(m); got != out {
		t.Fatalf("resizing back does not give the same frame:\n%s\n--- before\n%s", got, out)
	}
}

// Under NO_COLOR the frame keeps its text and attributes and loses every
// colour.
func TestGoldenNoColour(t *testing.T) {
	m, _ := newTestModel(t, 70, 16, Config{})
	seq := startTestTurn(m, "write it")
	send(m, toolStart(seq, "c1", "write_file", writeArgs), toolEnd(seq, "c1", "write_file", writeArgs, demiurge.EffectSucceeded, time.Second))
	send(m, streamMsg{seq: seq, delta: "Wrote **notes.txt**."}, done(seq, demiurge.TurnCompleted))
	coloured := m.View().Content
	if !strings.Contains(coloured, "38;2;") {
		t.Fatal("the frame has no true-colour styles to take away")
	}
	plain := asciiScreen(t, m)
	if c := colourSGR(plain); c != "" {
		t.Fatalf("a colour survived NO_COLOR: %q", c)
	}
	if stripANSI(plain) != stripANSI(coloured) {
		t.Fatal("downsampling changed the text")
	}
	golden(t, "nocolour", stripTrailing(stripANSI(plain)))
}

// User messages right-aligned by ui.user_message_align right, in a block
// no wider than the longest line plus four.
func TestGoldenUserAlignRight(t *testing.T) {
	m, _ := newTestModel(t, 70, 12, Config{Settings: Settings{UserMessageAlign: "right"}})
	startTestTurn(m, "short one")
	golden(t, "align_right", screen(m))
}

func stripTrailing(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

var sgrSeq = regexp.MustCompile(`\x1b\[([0-9;:]*)m`)

// colourSGR returns the first SGR sequence of s that sets a colour.
func colourSGR(s string) string {
	for _, m := range sgrSeq.FindAllStringSubmatch(s, -1) {
		for _, p := range strings.FieldsFunc(m[1], func(r rune) bool { return r == ';' || r == ':' }) {
			n, _ := strconv.Atoi(p)
			if (n >= 30 && n <= 38) || (n >= 40 && n <= 48) || (n >= 90 && n <= 97) || (n >= 100 && n <= 107) {
				return m[0]
			}
		}
	}
	return ""
}

// With the tool's own display data a card shows the diff the write made
// and the command's exit code and tail; the step's usage shows in the
// status line.
func TestGoldenCardsFromDisplayData(t *testing.T) {
	m, _ := newTestModel(t, 90, 24, Config{})
	seq := startTestTurn(m, "edit and test")
	w := toolEnd(seq, "c1", "write_file", writeArgs, demiurge.EffectSucceeded, 0)
	w.ev.Phase, w.ev.Duration = turn.ToolCallEnded, 12*time.Millisecond
	w.ev.Display = turn.ToolDisplay{Path: "notes.txt", Diff: "--- a/notes.txt\n+++ b/notes.txt\n@@ -1 +1,2 @@\n-hi\n+hello\n+world\n"}
	args := map[string]any{"command": "make test"}
	r := toolEnd(seq, "c2", "terminal", args, demiurge.EffectSucceeded, 0)
	r.ev.Phase, r.ev.Duration = turn.ToolCallEnded, 3*time.Second
	r.ev.Display = turn.ToolDisplay{Command: "make test", HasExitCode: true, ExitCode: 2, Tail: "a\nb\nc\nd\ne\nmake: *** [test] Error 2"}
	send(m, toolStart(seq, "c1", "write_file", writeArgs), w, toolStart(seq, "c2", "terminal", args), r)
	send(m, stepMsg{seq: seq, usage: demiurge.Usage{InputTokens: 1200, OutputTokens: 85}})
	golden(t, "cards_display", screen(m))
}

// The phases move a card: awaiting approval, then running from the
// moment the call runs, then ended with the turn's duration.
func TestCardPhases(t *testing.T) {
	m, _ := newTestModel(t, 90, 24, Config{})
	seq := startTestTurn(m, "go")
	ev := toolStart(seq, "c1", "terminal", map[string]any{"command": "ls"})
	ev.ev.Phase = turn.ToolCallRequested
	send(m, ev)
	ev.ev.Phase = turn.ToolCallAwaitingApproval
	send(m, ev)
	if !strings.Contains(screen(m), "waiting for approval") {
		t.Fatalf("awaiting approval:\n%s", screen(m))
	}
	ev.ev.Phase = turn.ToolCallRunning
	send(m, ev)
	if !strings.Contains(screen(m), "… terminal · $ ls · running") {
		t.Fatalf("running:\n%s", screen(m))
	}
	end := toolEnd(seq, "c1", "terminal", map[string]any{"command": "ls"}, demiurge.EffectNotFound, 0)
	end.ev.Phase, end.ev.Duration = turn.ToolCallEnded, 250*time.Millisecond
	send(m, end)
	if !strings.Contains(screen(m), "✕ terminal · $ ls · invalid · 250ms") {
		t.Fatalf("ended:\n%s", screen(m))
	}
}
