package turn

import (
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/core"
	"github.com/demiurge/demiurge/effect"
)

// Request asks for one turn.
type Request struct {
	CoreID string
	Text   string
	// Attachments are the files that came with the message (a channel
	// stored them where the turn may read them); input slots see their
	// descriptors in ctx.input.attachments.
	Attachments []demiurge.InboundAttachment

	// Session selection: SessionID resumes that session (owned lookup);
	// NewSession starts a fresh one; neither continues the session bound to
	// (CoreID, Channel, ConversationKey).
	SessionID    string
	NewSession   bool
	NewSessionID string // with NewSession: the id the session gets ("" generated)
	// TurnID is the id the turn gets ("" generated; else it must have the
	// turn_ prefix). A channel inbox reserves it durably before the turn
	// starts, so that after a crash it can tell whether the turn began.
	TurnID          string
	Channel         string
	ConversationKey string
	Scope           demiurge.PrincipalScope // zero: the local operator

	Workspace string
	Provider  string // "" or "auto": resolved from the core and config
	Model     string

	// Route receives this turn's deliveries while the turn runs (nil: the
	// deliveries are recorded as unrouted).
	Route demiurge.Route
	// Approver answers approval prompts (nil: every prompt is a denial).
	Approver effect.Approver
	// Stream receives assistant text deltas as the provider produces them.
	Stream func(delta string)
	// OnAdmitted is called once the turn has an id, before any model call.
	OnAdmitted func(sessionID, turnID string)
	// OnToolCall observes the turn's tool calls as they happen (nil: not
	// observed), the model's and the slots' (ctx.tools.call, with
	// ToolCallEvent.Slot set): each call is reported requested (Done false), possibly
	// awaiting approval and running, and ended with its status (Done
	// true); see ToolCallPhase. The calls of one turn are never
	// concurrent and arrive in that order; the approval phase comes from
	// the approval runtime's goroutine while the turn waits, the others
	// from the turn's goroutine. It must not block for long: the turn
	// waits for it.
	OnToolCall func(ToolCallEvent)
	// OnStep observes each model step once its provider call returned,
	// with the usage the provider reported (nil: not observed). It runs
	// on the turn's goroutine.
	OnStep func(StepEvent)

	// Delegation makes this a delegated child turn (nil: a top-level turn).
	Delegation *Delegation
	// ProtectedNames are extra file names the turn's file tools refuse to
	// write (the evolver's dependency files).
	ProtectedNames []string
}

// Delegation is what a delegated child turn inherits from its parent.
// Only the Host sets it.
type Delegation struct {
	Depth           int // the child's depth: parent's + 1
	ParentSessionID string
	ParentTurnID    string
	ParentSlot      string
	TaskID          string
	// InputSlots and OutputSlots are the slot ids the child runs, in
	// pipeline order (nil: the whole pipeline; empty: none).
	InputSlots, OutputSlots []string
	UseBootstrap            bool
	// ToolPolicy narrows the child's tools, in its catalog and at dispatch.
	ToolPolicy *effect.ToolPolicy
	// SystemContext is injected as one system-context instruction (the
	// fork context); "" adds nothing.
	SystemContext string
}

// Outcomes of a turn.
const (
	OutcomeCompleted = demiurge.TurnCompleted
	OutcomeNeedsUser = demiurge.TurnNeedsUser
	OutcomeFailed    = demiurge.TurnFailed
	OutcomeCancelled = demiurge.TurnCancelled
	OutcomeLost      = demiurge.TurnLost
)

// Result is what a finished turn reports. Error is set for failed and
// cancelled turns and is already sanitized.
type Result struct {
	SessionID    string
	TurnID       string
	CoreID       string
	CoreRevision string
	Outcome      demiurge.TurnStatus
	Text         string
	Error        *demiurge.Error
	ToolCalls    []ToolCallSummary
	Deliveries   []DeliverySummary
	// Usage is the provider usage of the turn's model steps (zero when the
	// provider reported none); Steps is the number of model calls the
	// turn made (compaction requests not included).
	Usage demiurge.Usage
	Steps int
	// AgentResult is what the output slots set through ctx.result (nil
	// when none did): a parent's ctx.agents.run returns it.
	AgentResult any
}

// ToolCallSummary is one tool call of the turn, as the model saw its result.
type ToolCallSummary struct {
	CallID           string
	Name             string
	Status           demiurge.EffectStatus
	IsError          bool
	ExecutionStarted bool
	Content          string
}

// ToolCallEvent is one observation of a tool call (Request.OnToolCall).
// Arguments are the model view (redacted with the turn's secrets as known
// when the call started); Status and IsError are set once Done. Every text
// field is redacted: nothing here holds a secret the turn knows of, nor a
// credential a command line names.
type ToolCallEvent struct {
	CallID    string
	Name      string
	Arguments map[string]any
	Done      bool
	Status    demiurge.EffectStatus // the effect's status; CardStatus maps it to a card's
	IsError   bool

	// Phase is the moment reported; Done is Phase == ToolCallEnded.
	Phase  ToolCallPhase
	StepID string
	// Slot is the core-relative path of the slot whose ctx.tools.call
	// this is (e.g. agent/input/base_input), "" for a call of the model.
	Slot string
	// StartedAt is when the call was requested.
	StartedAt time.Time
	// Summary is the one-line summary of the arguments (argumentSummary:
	// "$ <command>", "write_file: <path>", compact JSON, ...), at most
	// SummaryChars characters.
	Summary string
	// Approval is the question put to the operator (ToolCallAwaitingApproval
	// only), redacted and bounded by the approval runtime.
	Approval *effect.ApprovalRequest

	// Set when Done:
	//
	// Duration is how long the call ran (from ToolCallRunning), or, for a
	// call that never ran, how long it took to be refused.
	Duration time.Duration
	// Output is the operator view of the result, at most
	// OutputExcerptChars characters (then "...[truncated N chars]").
	Output string
	// ResultSummary is Output shortened to one line of SummaryChars, or
	// Summary when the output is empty.
	ResultSummary string

	// Display is the tool's own display data; Command is set from the
	// start, the rest when Done.
	Display ToolDisplay
}

// DeliverySummary is one delivery of the turn.
type DeliverySummary struct {
	DeliveryID    string
	Status        string
	Text          string
	Kind          string // message, progress or notice
	HistoryPolicy string
	Visible       bool
}

// Snapshot is a loaded core pinned at one revision.
type Snapshot struct {
	Core     *core.Core
	Revision string
}
