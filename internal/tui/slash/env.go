package slash

import (
	"strings"

	"github.com/demiurge/demiurge/host"
)

// Env is what the commands need from the running terminal UI. The UI
// implements it; every method is called on the goroutine that runs
// Dispatch (or a Picker's or Confirm's callback), so an implementation
// whose state the UI's own goroutine also changes must guard it.
type Env interface {
	// Host is the open Host the UI runs its turns on.
	Host() *host.Host
	// CoreID is the core the UI talks to (never "": the UI resolves the
	// default core before it starts).
	CoreID() string
	// SessionID is the current session, "" while the next message is to
	// start a fresh one and none has been named yet.
	SessionID() string
	// Workspace is the workspace directory of the UI's turns.
	Workspace() string
	// Provider and Model are the --provider and --model choices of the UI
	// ("" or "auto": resolved from the core, the fallback and config.yaml).
	Provider() string
	Model() string

	// BusyMode is what a message sent while a turn runs does; SetBusyMode
	// changes it for this UI (it is not persisted).
	BusyMode() BusyMode
	SetBusyMode(BusyMode)
	// ToolDisplay is how tool calls are shown; SetToolDisplay changes it
	// for this UI (not persisted).
	ToolDisplay() ToolDisplay
	SetToolDisplay(ToolDisplay)

	// Busy reports whether a turn of the UI runs now.
	Busy() bool
	// Interrupt asks the running turn to stop (it ends as cancelled and
	// the session goes on); reason is what the UI shows. It reports false
	// when no turn runs. It does not wait for the turn to end (the UI
	// shows "turn interrupted" once it has) and leaves the queued messages
	// in place.
	Interrupt(reason string) bool
	// Queued are the messages waiting for the running turn to end, oldest
	// first.
	Queued() []string
	// ClearQueue drops the waiting messages and reports how many there
	// were.
	ClearQueue() int
	// Enqueue adds text as a user message after the waiting ones; when no
	// turn runs it starts at once.
	Enqueue(text string)
}

// BusyMode is what a message sent while a turn runs does (channel.busy_mode,
// /busy).
type BusyMode string

// Busy modes.
const (
	// BusyInterrupt cancels the running turn; the message runs next.
	BusyInterrupt BusyMode = "interrupt"
	// BusyQueue keeps the message until the running turn ends.
	BusyQueue BusyMode = "queue"
)

// ParseBusyMode reads a busy mode, case-insensitively.
func ParseBusyMode(s string) (BusyMode, bool) {
	switch BusyMode(strings.ToLower(strings.TrimSpace(s))) {
	case BusyInterrupt:
		return BusyInterrupt, true
	case BusyQueue:
		return BusyQueue, true
	}
	return "", false
}

// ToolDisplay is how the transcript shows tool calls (ui.tool_display,
// /tool-display).
type ToolDisplay string

// Tool display modes.
const (
	// ToolQuiet shows no tool calls.
	ToolQuiet ToolDisplay = "quiet"
	// ToolSummary shows one line per call.
	ToolSummary ToolDisplay = "summary"
	// ToolFull shows the line and the call's arguments and result.
	ToolFull ToolDisplay = "full"
)

// toolDisplayAliases are the spellings /tool-display takes (spec surfaces
// §2.11).
var toolDisplayAliases = map[string]ToolDisplay{
	"quiet": ToolQuiet, "off": ToolQuiet, "none": ToolQuiet, "hidden": ToolQuiet,
	"summary": ToolSummary, "brief": ToolSummary,
	"full": ToolFull, "verbose": ToolFull,
}

// ParseToolDisplay reads a tool display mode or one of its aliases
// (off, none, hidden; brief; verbose), case-insensitively.
func ParseToolDisplay(s string) (ToolDisplay, bool) {
	d, ok := toolDisplayAliases[strings.ToLower(strings.TrimSpace(s))]
	return d, ok
}
