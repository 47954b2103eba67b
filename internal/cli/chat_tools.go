package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/turn"
)

// chatOut is the chat's standard output. It remembers whether the last
// write ended a line, so a tool line or a question never starts in the
// middle of streamed text, and whether a tool line is still open.
type chatOut struct {
	mu       sync.Mutex // guards the fields and orders writes
	w        io.Writer
	midLine  bool // the last write did not end with a newline
	terminal bool // a started call's line is shown at once and finished later

	open   string // the open tool line's head ("" none)
	broken bool   // something was written after the open head
}

func (o *chatOut) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.write(p)
}

func (o *chatOut) write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if o.open != "" && !o.broken {
		// Output between a call's start and its end: the head is ended
		// here and the status gets a line of its own.
		o.broken = true
		if o.midLine {
			io.WriteString(o.w, "\n")
			o.midLine = false
		}
	}
	n, err := o.w.Write(p)
	if n > 0 {
		o.midLine = p[n-1] != '\n'
	}
	return n, err
}

// typed records that the operator ended a line on the terminal (its echo
// ended the prompt's line).
func (o *chatOut) typed() {
	o.mu.Lock()
	o.midLine = false
	o.mu.Unlock()
}

// endLine ends a line left open (streamed text without a newline, a tool
// line waiting for its status), before output that must start a line: the
// approval questions, written to another stream.
func (o *chatOut) endLine() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.midLine {
		io.WriteString(o.w, "\n")
		o.midLine = false
		if o.open != "" {
			o.broken = true
		}
	}
}

// toolCall shows one tool call as one line: `· name {arg: "v"} … status`.
// On a terminal the head shows when the call starts and the status is added
// when it ends (the whole line again if a question came in between); off a
// terminal the line is written once, when the call ends.
func (o *chatOut) toolCall(ev turn.ToolCallEvent) {
	if ev.Phase == turn.ToolCallAwaitingApproval || ev.Phase == turn.ToolCallRunning {
		return // the line shows a call's start and its end only
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	head := "· " + printable(ev.Name) + " " + shortArgs(ev.Arguments) + " …"
	if !ev.Done {
		if o.terminal {
			if o.midLine {
				o.write([]byte("\n"))
			}
			o.write([]byte(head))
			o.open, o.broken = head, false
		}
		return
	}
	status := toolStatus(ev.Status)
	if o.open == head && !o.broken && o.midLine {
		o.open = ""
		o.write([]byte(" " + status + "\n"))
		return
	}
	o.open = ""
	if o.midLine {
		o.write([]byte("\n"))
	}
	o.write([]byte(head + " " + status + "\n"))
}

func toolStatus(s demiurge.EffectStatus) string {
	if s == demiurge.EffectSucceeded {
		return "ok"
	}
	if s == "" {
		return "done"
	}
	return printable(string(s))
}

// shortArgs renders arguments as `{key: value, …}`: keys in order, strings
// quoted (which escapes control characters), each value and the whole cut
// short. The arguments are the model view, already redacted.
func shortArgs(args map[string]any) string {
	if len(args) == 0 {
		return "{}"
	}
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, printable(shorten(k, 24))+": "+shortValue(args[k]))
	}
	return "{" + shorten(strings.Join(parts, ", "), 100) + "}"
}

func shortValue(v any) string {
	switch x := v.(type) {
	case string:
		return strconv.Quote(shorten(x, 40))
	case nil:
		return "null"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%T", v)
	}
	return printable(shorten(string(b), 40))
}
