package turn

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/redact"
)

// This file is the live observation of a turn (Request.OnToolCall and
// Request.OnStep): what a terminal UI draws as tool cards and usage. It
// costs nothing when nobody observes: no closure, no redaction pass, no
// approver wrapper is made unless the callback is set.

// ToolCallPhase is the moment of a tool call a ToolCallEvent reports.
type ToolCallPhase string

// The phases of a tool call, in the order they can happen. Every observed
// call has a ToolCallRequested and a ToolCallEnded event; between them it
// may wait for approval (once) and run (once). A call refused before it ran
// (invalid arguments, a capability or approval denial, an unknown tool) has
// no ToolCallRunning event.
const (
	ToolCallRequested        ToolCallPhase = "requested"
	ToolCallAwaitingApproval ToolCallPhase = "awaiting_approval"
	ToolCallRunning          ToolCallPhase = "running"
	ToolCallEnded            ToolCallPhase = "ended"
)

// Bounds of the display texts of a ToolCallEvent.
const (
	// SummaryChars bounds Summary and ResultSummary (the spec's tool-row
	// summary: 160 characters, marker "...[truncated]").
	SummaryChars = 160
	// OutputExcerptChars bounds Output.
	OutputExcerptChars = 2000
	// TailLines bounds ToolDisplay.Tail.
	TailLines = 20
)

// ToolDisplay is what a card shows of a tool beyond its status: the file
// and unified diff of write_file and patch, the command, exit code and
// output tail of terminal. Only the fields of the call's tool are set, and
// only redacted text reaches them.
type ToolDisplay struct {
	// Path is the workspace path of a file tool (read_file, write_file,
	// patch, search_files) as the tool showed it.
	Path string
	// Diff is the unified diff write_file or patch produced ("" when the
	// file did not change or the call did not succeed), bounded by the
	// tool.
	Diff string
	// Command is the terminal command (redacted), known from the start.
	Command string
	// Cwd is where the terminal command ran, as the tool showed it.
	Cwd string
	// HasExitCode reports that ExitCode is the command's exit status.
	HasExitCode bool
	ExitCode    int
	TimedOut    bool
	// Tail is the last TailLines lines of the command's output (stdout,
	// then stderr).
	Tail string
	// TaskID is the background task a terminal call with background=true
	// started.
	TaskID string
}

// StepEvent is one model step of the turn (Request.OnStep): the provider
// call returned.
type StepEvent struct {
	SessionID string
	TurnID    string
	StepID    string // "<turn id>_step_<n>"
	N         int    // 1 for the first step
	Model     string
	// Usage is what the provider reported for this call (zero: nothing).
	Usage demiurge.Usage
	// Total is the usage of the turn so far, this step included.
	Total demiurge.Usage
	// ToolCalls is how many tool calls the model asked for; a step with
	// none is the turn's final answer.
	ToolCalls int
}

// CardStatus is the status a tool card shows for the event: one of
// succeeded, denied, invalid, failed, timed_out and cancelled once the
// call ended (not_found counts as invalid, indeterminate as failed), ""
// before.
func (e ToolCallEvent) CardStatus() demiurge.EffectStatus {
	if !e.Done {
		return ""
	}
	switch e.Status {
	case demiurge.EffectNotFound:
		return demiurge.EffectInvalid
	case demiurge.EffectIndeterminate, "":
		return demiurge.EffectFailed
	}
	return e.Status
}

// callObserver reports one call's phases. The approval phase is reported
// from the approval runtime's goroutine while the turn waits for the
// answer, so the callback runs under mu; once the end is reported nothing
// else is.
type callObserver struct {
	fn   func(ToolCallEvent)
	base ToolCallEvent // the fields every phase carries

	mu      sync.Mutex
	ended   bool
	running time.Time
}

// observeCall starts the observation of call and reports it requested;
// slot is the path of the slot whose ctx.tools.call it is ("" for the
// model's).
func observeCall(fn func(ToolCallEvent), stepID, slot string, call demiurge.ToolCall) *callObserver {
	o := &callObserver{fn: fn, base: ToolCallEvent{
		CallID: call.ID, Name: call.Name, Arguments: call.Arguments, StepID: stepID, Slot: slot,
		StartedAt: time.Now(), Summary: argumentSummary(call.Name, call.Arguments),
	}}
	if call.Name == "terminal" {
		o.base.Display.Command = displayCommand(call.Arguments)
	}
	o.emit(ToolCallRequested, nil)
	return o
}

func (o *callObserver) emit(phase ToolCallPhase, edit func(*ToolCallEvent)) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.ended {
		return
	}
	ev := o.base
	ev.Phase = phase
	if phase == ToolCallRunning {
		o.running = time.Now()
	}
	if edit != nil {
		edit(&ev)
	}
	if phase == ToolCallEnded {
		o.ended = true
		ev.Done = true
	}
	o.fn(ev)
}

// context returns tc with the hooks that report approval and running for
// this call.
func (o *callObserver) context(tc effect.TurnContext) effect.TurnContext {
	if tc.Approver != nil {
		tc.Approver = observedApprover{inner: tc.Approver, o: o}
	}
	tc.OnRun = func(string) { o.emit(ToolCallRunning, nil) }
	return tc
}

// end reports the call's result: its status, how long it ran, a redacted
// excerpt of its output and the tool's display data. red knows every
// secret the turn met, the call's own result included.
func (o *callObserver) end(res demiurge.EffectResult, red *redact.Redactor) {
	o.emit(ToolCallEnded, func(ev *ToolCallEvent) {
		now := time.Now()
		from := o.running
		if from.IsZero() {
			from = ev.StartedAt
		}
		ev.Duration = now.Sub(from)
		ev.Status, ev.IsError = res.Status, res.IsError()
		// A secret the call revealed is hidden in what was known before.
		ev.Summary = red.String(ev.Summary, redact.Operator)
		ev.Display.Command = red.String(ev.Display.Command, redact.Operator)
		ev.Output = effect.TruncateText(res.OperatorView, OutputExcerptChars)
		ev.ResultSummary = ev.Summary
		if s := strings.TrimSpace(res.OperatorView); s != "" {
			ev.ResultSummary = Shorten(s, SummaryChars)
		}
		fillDisplay(&ev.Display, ev.Name, res.Data, res.OperatorView)
	})
}

// observedApprover reports the question before the operator is asked.
type observedApprover struct {
	inner effect.Approver
	o     *callObserver
}

func (a observedApprover) Approve(ctx context.Context, req effect.ApprovalRequest) (string, error) {
	a.o.emit(ToolCallAwaitingApproval, func(ev *ToolCallEvent) { ev.Approval = &req })
	return a.inner.Approve(ctx, req)
}

// fillDisplay takes the tool's display facts from the result's data (its
// model view) and content (its operator view), redacted like every view.
func fillDisplay(d *ToolDisplay, tool string, data map[string]any, content string) {
	if p, ok := data["path"].(string); ok {
		d.Path = p
	}
	switch tool {
	case "write_file", "patch":
		d.Diff, _ = data["diff"].(string)
	case "terminal":
		d.Cwd, _ = data["cwd"].(string)
		d.TaskID, _ = data["task_id"].(string)
		if code, ok := number(data["exit_code"]); ok {
			d.HasExitCode, d.ExitCode = true, code
		}
		d.TimedOut, _ = data["timed_out"].(bool)
		stdout, stderr := terminalStreams(content, data)
		d.Tail = tail(strings.TrimRight(joinNonEmpty(stdout, stderr), "\n"), TailLines)
	}
}

// terminalStreams splits a terminal result's content ("exit_code: N",
// then "stdout:" and "stderr:" sections for the streams that printed
// anything) into the two streams' text. Which sections exist is read from
// the data's per-stream counts, so output that itself prints "stderr:" is
// not mistaken for the section.
func terminalStreams(content string, data map[string]any) (stdout, stderr string) {
	out, _ := data["output"].(map[string]any)
	printed := func(stream string) bool {
		st, _ := out[stream].(map[string]any)
		n, _ := number(st["total_chars"])
		return n > 0
	}
	rest := content
	if printed("stderr") {
		if i := strings.LastIndex(rest, "\nstderr:\n"); i >= 0 {
			rest, stderr = rest[:i], rest[i+len("\nstderr:\n"):]
		}
	}
	if printed("stdout") {
		if i := strings.Index(rest, "\nstdout:\n"); i >= 0 {
			stdout = rest[i+len("\nstdout:\n"):]
		}
	}
	return stdout, stderr
}

func number(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case int64:
		return int(n), true
	case float64:
		return int(n), true
	case json.Number:
		i, err := n.Int64()
		return int(i), err == nil
	}
	return 0, false
}

func joinNonEmpty(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return strings.TrimRight(a, "\n") + "\n" + b
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	end := len(s)
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '\n' {
			if n--; n == 0 {
				return s[i+1 : end]
			}
		}
	}
	return s
}

// argumentSummary is the one-line summary of a call's arguments (the
// spec's start summary): terminal "$ <command>" (or "running terminal"),
// the file tools "<name>: <path>" (or the name), other tools the compact
// sorted-key JSON of their arguments, "running" without arguments; then
// shortened to SummaryChars. The arguments are the model view, and
// command-line credentials are removed on top.
func argumentSummary(name string, args map[string]any) string {
	var s string
	switch name {
	case "terminal":
		s = "running terminal"
		if c := displayCommand(args); c != "" {
			s = "$ " + c
		}
	case "read_file", "write_file", "patch":
		s = name
		for _, k := range []string{"path", "file_path"} {
			if p, ok := args[k].(string); ok && p != "" {
				s = name + ": " + p
				break
			}
		}
	default:
		if len(args) == 0 {
			s = "running"
			break
		}
		s = sortedJSON(args)
	}
	return Shorten(effect.RedactText(s), SummaryChars)
}

// displayCommand is the terminal command of args, credentials removed.
func displayCommand(args map[string]any) string {
	c, _ := args["command"].(string)
	return effect.RedactCommand(c)
}

// sortedJSON is the compact JSON of args with sorted keys (encoding/json
// sorts map keys), or a placeholder when it has none.
func sortedJSON(args map[string]any) string {
	b, err := json.Marshal(args)
	if err != nil {
		keys := make([]string, 0, len(args))
		for k := range args {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return fmt.Sprintf("arguments: %s", strings.Join(keys, ", "))
	}
	return string(b)
}

// shortenMarker ends a shortened text.
const shortenMarker = "...[truncated]"

// Shorten is the spec's shorten(text, limit): whitespace runs collapse to
// one space; a text longer than limit keeps its first limit-len(marker)
// characters and the marker.
func Shorten(s string, limit int) string {
	s = strings.Join(strings.FieldsFunc(s, unicode.IsSpace), " ")
	n := utf8.RuneCountInString(s)
	if n <= limit {
		return s
	}
	keep := limit
	if limit > len(shortenMarker) {
		keep = limit - len(shortenMarker)
	}
	cut := 0
	for i := range s {
		if keep == 0 {
			cut = i
			break
		}
		keep--
	}
	if limit <= len(shortenMarker) {
		return s[:cut]
	}
	return s[:cut] + shortenMarker
}
