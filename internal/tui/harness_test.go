package tui

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/turn"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// fakeEngine records what the model asked of the host side.
type fakeEngine struct {
	started   []turnSpec
	cancelled []int
	commands  []string
	forgotten []string
	histories []string
	watched   []string
	callbacks []func(context.Context) (outcome, error)
}

func (f *fakeEngine) startTurn(s turnSpec)  { f.started = append(f.started, s) }
func (f *fakeEngine) cancelTurn(seq int)    { f.cancelled = append(f.cancelled, seq) }
func (f *fakeEngine) command(line string)   { f.commands = append(f.commands, line) }
func (f *fakeEngine) loadHistory(id string) { f.histories = append(f.histories, id) }
func (f *fakeEngine) loadConversation()     { f.histories = append(f.histories, "") }
func (f *fakeEngine) refresh(string)        {}
func (f *fakeEngine) watch(id string)       { f.watched = append(f.watched, id) }
func (f *fakeEngine) forget(id string)      { f.forgotten = append(f.forgotten, id) }
func (f *fakeEngine) suggest(token string) []suggestion {
	var out []suggestion
	for _, c := range []string{"/help", "/exit", "/quit", "/tool-display"} {
		if strings.HasPrefix(c, token) {
			s := suggestion{name: c, description: "the " + c + " command", group: "Core"}
			if c == "/tool-display" {
				s.usage, s.group = "/tool-display quiet|summary|full", "Tools"
			}
			out = append(out, s)
		}
	}
	return out
}
func (f *fakeEngine) complete(_ *Model, in string) []string {
	var out []string
	for _, c := range []string{"/help", "/exit", "/quit", "/tool-display summary"} {
		if strings.HasPrefix(c, in) {
			out = append(out, c)
		}
	}
	return out
}
func (f *fakeEngine) callback(fn func(context.Context) (outcome, error)) {
	f.callbacks = append(f.callbacks, fn)
}

// t0 is the fixed clock of the tests.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// newTestModel is a model at a fixed size and clock.
func newTestModel(t *testing.T, w, h int, cfg Config) (*Model, *fakeEngine) {
	t.Helper()
	eng := &fakeEngine{}
	if cfg.Now == nil {
		cfg.Now = func() time.Time { return t0 }
	}
	if cfg.Status.coreID == "" {
		cfg.Status = statusInfo{coreID: "assistant", revision: "0123456789abcdef", provider: "fake", model: "fake/demo"}
	}
	m := newModel(eng, cfg)
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return m, eng
}

func send(m *Model, msgs ...tea.Msg) tea.Cmd {
	var last tea.Cmd
	for _, msg := range msgs {
		_, last = m.Update(msg)
	}
	return last
}

// press sends key presses named as bubbletea spells them.
func press(m *Model, keys ...string) tea.Cmd {
	var last tea.Cmd
	for _, k := range keys {
		last = send(m, keyMsg(k))
	}
	return last
}

func keyMsg(k string) tea.KeyPressMsg {
	mods := map[string]tea.KeyMod{"ctrl": tea.ModCtrl, "alt": tea.ModAlt, "shift": tea.ModShift}
	special := map[string]rune{
		"enter": tea.KeyEnter, "esc": tea.KeyEscape, "tab": tea.KeyTab, "backspace": tea.KeyBackspace,
		"up": tea.KeyUp, "down": tea.KeyDown, "left": tea.KeyLeft, "right": tea.KeyRight,
		"pgup": tea.KeyPgUp, "pgdown": tea.KeyPgDown, "home": tea.KeyHome, "end": tea.KeyEnd, "delete": tea.KeyDelete,
	}
	var mod tea.KeyMod
	parts := strings.Split(k, "+")
	for _, p := range parts[:len(parts)-1] {
		mod |= mods[p]
	}
	last := parts[len(parts)-1]
	if r, ok := special[last]; ok {
		return tea.KeyPressMsg{Code: r, Mod: mod}
	}
	r := []rune(last)[0]
	if mod != 0 {
		return tea.KeyPressMsg{Code: r, Mod: mod}
	}
	return tea.KeyPressMsg{Code: r, Text: last}
}

// typeText types s one key at a time.
func typeText(m *Model, s string) {
	for _, r := range s {
		send(m, tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

// screen is the frame as the terminal shows it without colours: escape
// codes stripped, trailing spaces trimmed.
func screen(m *Model) string {
	v := m.View()
	lines := strings.Split(stripANSI(v.Content), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

// asciiScreen is the frame downsampled as under NO_COLOR: attributes
// kept, every colour gone.
func asciiScreen(t *testing.T, m *Model) string {
	t.Helper()
	var buf bytes.Buffer
	w := &colorprofile.Writer{Forward: &buf, Profile: colorprofile.Ascii}
	if _, err := w.WriteString(m.View().Content); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// golden compares got with testdata/name.golden (-update rewrites it).
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if string(want) != got {
		t.Fatalf("%s differs from the golden file:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// A turn in progress, driven by the messages the bridge would post.
func startTestTurn(m *Model, text string) int {
	typeText(m, text)
	press(m, "enter")
	return m.seq
}

func toolStart(seq int, id, name string, args map[string]any) toolMsg {
	return toolMsg{seq: seq, ev: turn.ToolCallEvent{CallID: id, Name: name, Arguments: args}, at: t0}
}

func toolEnd(seq int, id, name string, args map[string]any, status demiurge.EffectStatus, after time.Duration) toolMsg {
	return toolMsg{seq: seq, at: t0.Add(after), ev: turn.ToolCallEvent{CallID: id, Name: name, Arguments: args, Done: true,
		Status: status, IsError: status != demiurge.EffectSucceeded}}
}

func done(seq int, outcome demiurge.TurnStatus, calls ...turn.ToolCallSummary) turnDoneMsg {
	return turnDoneMsg{seq: seq, res: turn.Result{SessionID: "session_0123456789abcdefgh", TurnID: "turn_1", Outcome: outcome, ToolCalls: calls}}
}

func writeQuestion(callID string) *question {
	return newQuestion(effect.ApprovalRequest{
		SessionID: "session_0123456789abcdefgh", CallID: callID, Tool: "write_file", Action: "fs.write",
		Target: "notes.txt", Risk: "medium", Capability: "fs.write", Summary: "write_file notes.txt",
		Preview: map[string]any{"path": "notes.txt", "content": "hello\nworld\n"},
	})
}

func resize(w, h int) tea.WindowSizeMsg { return tea.WindowSizeMsg{Width: w, Height: h} }
