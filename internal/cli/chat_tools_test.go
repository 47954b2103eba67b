package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/demiurge/demiurge/turn"
)

func TestShortArgs(t *testing.T) {
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{nil, "{}"},
		{map[string]any{"command": "ls"}, `{command: "ls"}`},
		{map[string]any{"path": "a.txt", "content": "hi"}, `{content: "hi", path: "a.txt"}`},
		{map[string]any{"n": 3, "ok": true, "x": nil, "list": []any{"a"}}, `{list: ["a"], n: 3, ok: true, x: null}`},
		{map[string]any{"s": strings.Repeat("a", 60)}, `{s: "` + strings.Repeat("a", 39) + `…"}`},
		{map[string]any{"s": "line\nnext\x1b[2J"}, `{s: "line\nnext\x1b[2J"}`},
	} {
		if got := shortArgs(c.args); got != c.want {
			t.Errorf("shortArgs(%v) = %s, want %s", c.args, got, c.want)
		}
	}
	long := map[string]any{}
	for _, k := range []string{"a", "b", "c", "d", "e", "f"} {
		long[k] = strings.Repeat(k, 30)
	}
	if got := shortArgs(long); len([]rune(got)) > 102 || !strings.HasSuffix(got, "…}") {
		t.Errorf("long arguments not cut: %s", got)
	}
}

func TestToolLines(t *testing.T) {
	start := turn.ToolCallEvent{Name: "terminal", Arguments: map[string]any{"command": "ls"}}
	done := start
	done.Done, done.Status = true, "succeeded"
	denied := start
	denied.Done, denied.Status = true, "denied"

	t.Run("terminal", func(t *testing.T) {
		var b bytes.Buffer
		o := &chatOut{w: &b, terminal: true}
		o.Write([]byte("thinking"))
		o.toolCall(start)
		o.toolCall(done)
		want := "thinking\n· terminal {command: \"ls\"} … ok\n"
		if b.String() != want {
			t.Fatalf("got %q, want %q", b.String(), want)
		}
	})
	t.Run("terminal, question in between", func(t *testing.T) {
		var b bytes.Buffer
		o := &chatOut{w: &b, terminal: true}
		o.toolCall(start)
		o.endLine() // a question is asked on the other stream
		b.WriteString("[question]\n")
		o.toolCall(denied)
		want := "· terminal {command: \"ls\"} …\n[question]\n· terminal {command: \"ls\"} … denied\n"
		if b.String() != want {
			t.Fatalf("got %q, want %q", b.String(), want)
		}
	})
	t.Run("line mode", func(t *testing.T) {
		var b bytes.Buffer
		o := &chatOut{w: &b}
		o.toolCall(start)
		if b.Len() != 0 {
			t.Fatalf("line mode printed a start: %q", b.String())
		}
		o.toolCall(done)
		o.Write([]byte("reply"))
		o.endLine()
		want := "· terminal {command: \"ls\"} … ok\nreply\n"
		if b.String() != want {
			t.Fatalf("got %q, want %q", b.String(), want)
		}
	})
}
