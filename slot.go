package demiurge

import (
	"context"
	"time"
)

// Slot pipeline phases.
const (
	PhaseBootstrap = "bootstrap"
	PhaseInput     = "input"
	PhaseOutput    = "output"
)

// Slot lanes.
const (
	LaneSerial   = "serial"
	LaneParallel = "parallel"
)

// Slot failure policies.
const (
	FailSoft = "soft" // record the failure and continue the pipeline
	FailHard = "hard" // fail the phase (and the turn)
)

// SlotSpec is one slot as the core loader resolved it. The turn engine
// converts the loader's types into SlotSpecs, so the slot runtime does not
// depend on the loader.
type SlotSpec struct {
	ID               string
	Phase            string // PhaseBootstrap, PhaseInput, PhaseOutput ("" = the phase being run)
	Lane             string // LaneSerial or LaneParallel ("" = serial); bootstrap is serial only
	RelPath          string // core-relative slot path, e.g. "agent/input/base_input"; the capability subject
	ModulePath       string // absolute path of module.star (or module.py, run by the Python worker); names the module in errors
	CoreDir          string // absolute core directory; a Python module's imports are read beneath it
	Source           []byte // module source; nil = read ModulePath at each invocation
	Function         string // entry function ("" = "process")
	FailurePolicy    string // FailSoft or FailHard ("" = soft)
	HistoryPolicy    string // slot default; "" when slot.yaml does not declare one (the phase default applies)
	DefaultPlacement string // carried for the context assembler; the slot runtime does not read it
	Timeout          time.Duration
	Capabilities     []string // grants declared by slot.yaml for RelPath
}

// SlotIntent is one delivery a slot asked for: plain data the turn engine
// turns into history messages and outbox rows. DeliveryID is the id the slot
// was handed back; it is fresh per intent.
type SlotIntent struct {
	DeliveryID         string
	Kind               string // DeliveryKindMessage, DeliveryKindProgress, DeliveryKindNotice
	Blocks             []SlotBlock
	Visible            bool
	HistoryPolicy      string // resolved: persist, model_hidden or transient
	HistoryText        string
	FailureHistoryText string // "" = the history text
	Metadata           map[string]any
	SlotID             string
}

// SlotBlock is one content block of a slot intent (BlockText, BlockImage,
// BlockAudio, BlockVideo or BlockFile). For media blocks Source is a URL
// (http or https) or an absolute path checked to lie inside the workspace or
// the session artifact root.
type SlotBlock struct {
	Type      string
	Text      string
	Source    string
	Caption   string
	MediaType string
	Summary   string
	Metadata  map[string]any // artifact_metadata
}

// Placements of context contributions.
const (
	PlacementSystemContext   = "system_context"
	PlacementPreHistory      = "pre_history"
	PlacementPreCurrentUser  = "pre_current_user"
	PlacementPostCurrentUser = "post_current_user"
)

// Contribution is text the input phase adds to the provider context.
type Contribution struct {
	Placement string
	Role      string
	Text      string
}

// Event types of a slot phase's diagnostic log.
const (
	SlotEventStarted       = "module.started"
	SlotEventCompleted     = "module.completed"
	SlotEventFailed        = "module.failed"
	SlotEventReturnIgnored = "module.return_ignored"
)

// SlotEvent is one entry of a slot phase's diagnostic log. Data always
// carries slot_path and lane; completed and failed events add elapsed_ms,
// failed events failure_policy and discarded_intents, return_ignored
// return_type.
type SlotEvent struct {
	Type   string
	SlotID string
	Phase  string
	Error  string // module.failed: "<module path>:<line>: <msg>"
	Data   map[string]any
}

// HistoryReader reads the session transcript for a slot's ctx.history. It
// must be safe for concurrent use (parallel slots read at once).
type HistoryReader interface {
	// RecentMessages returns the last limit messages of kind "message" whose
	// role is in roles (a subset of user, assistant, tool), oldest first.
	// limit is always > 0 here. It must return promptly once ctx is done
	// (the phase waits for every slot). Errors carry their domain code; the
	// message reaches authored code and the diagnostic log, so it must be safe.
	RecentMessages(ctx context.Context, limit int, roles []string) ([]Message, error)
}

// CapabilityChecker answers capability questions against the capability
// snapshot pinned at turn admission. It must be safe for concurrent use and
// must fail closed.
type CapabilityChecker interface {
	// Can reports whether capability is granted to the slot at slotPath.
	Can(capability, slotPath string) bool
}

// AgentSpawner starts child agents for a slot's ctx.agents: spawn is the
// same agent.spawn task delegate_task starts, run the same child flow
// synchronously (no task), each with the slot's path as parent slot and its
// grants checked for agents.spawn:<core> or agents.run:<core>.
type AgentSpawner interface {
	// Spawn starts a child agent and returns its handle {task_id, core_id,
	// session_id, status}. args holds core_id, raw_input, context,
	// input_slots, output_slots, use_bootstrap and tools, as the slot
	// passed them (JSON-compatible values).
	Spawn(ctx context.Context, slotPath string, args map[string]any) (map[string]any, error)
	// Run runs a child agent turn to its end and returns the
	// AgentRunResult {content, core_id, session_id, turn_id, result,
	// deliveries, tools, metadata}; args as for Spawn.
	Run(ctx context.Context, slotPath string, args map[string]any) (map[string]any, error)
}

// ToolCaller runs a tool for a slot's ctx.tools.call: the turn's catalog,
// origin authored, the registry capability and the approval a model call
// gets (prompts go to the turn's approver). The slot runtime has already
// checked tool.call:<name> for the slot.
type ToolCaller interface {
	// CallTool returns the ToolResult fields {content, data, is_error,
	// terminate, model_output, display_output}; a failed or refused call is
	// a result with is_error, not an error. An error means the Host could
	// not run the call at all (the turn is going away, the store failed).
	CallTool(ctx context.Context, slotPath, name string, args map[string]any) (map[string]any, error)
}

// StateStore keeps the turn's view of the authored state documents
// (ctx.state.core, ctx.state.session): the stored document with the
// turn's own writes over it, so a write is visible to a later read of the
// same turn. It must be safe for concurrent use. The slot runtime checks
// the capabilities and the target before calling it.
type StateStore interface {
	// Document returns the document of scope (StateScopeCore or
	// StateScopeSession). The caller must not modify it.
	Document(ctx context.Context, scope string) (map[string]any, error)
	// Write applies op (StateSet, StateMerge, StateAppend) at target with
	// patch for the slot at slotPath and returns the new value at target.
	// The write is durable with the turn's next write.
	Write(ctx context.Context, scope, slotPath, target, op string, patch any) (any, error)
}

// TurnInfo is what a slot's ctx.turn exposes. Metadata is JSON-compatible;
// it is both ctx.turn.metadata and ctx.turn.user_input.metadata.
type TurnInfo struct {
	SessionID    string
	TurnID       string
	CoreID       string
	CoreRevision string
	UserInput    string
	Metadata     map[string]any
}

// BootstrapEnv is the environment of the bootstrap phase.
type BootstrapEnv struct {
	SessionID    string
	CoreID       string
	CoreRevision string
	Workspace    string
	Caps         CapabilityChecker // nil denies every capability
}

// InputEnv is the environment of the input phase.
type InputEnv struct {
	Turn        TurnInfo
	RawText     string
	Attachments []any // JSON-compatible descriptors, exposed read-only
	Workspace   string
	SessionRoot string        // <home>/runtime/artifacts/<session>; "" if none
	History     HistoryReader // nil reads as an empty history
	Caps        CapabilityChecker
	Agents      AgentSpawner // ctx.agents.spawn/run; nil: not available
	Tools       ToolCaller   // ctx.tools.call; nil: not available
	State       StateStore   // ctx.state; nil: not available
}

// OutputEnv is the environment of the output phase.
type OutputEnv struct {
	Turn         TurnInfo
	ResponseText string
	Metadata     map[string]any // ctx.output.metadata (interaction metadata)
	Workspace    string
	SessionRoot  string
	History      HistoryReader
	Caps         CapabilityChecker
	Agents       AgentSpawner
	Tools        ToolCaller
	State        StateStore
}

// BootstrapResult is the outcome of the bootstrap phase.
type BootstrapResult struct {
	Snapshot string // fragments joined "\n\n"; "" is a valid snapshot
	Events   []SlotEvent
}

// InputResult is the outcome of the input phase.
type InputResult struct {
	UserText          string // user fragments joined "\n\n"; never empty on success
	PersistedUserText string // user fragments whose policy is persist
	SystemContext     string // system fragments joined "\n\n"
	Contributions     []Contribution
	// Skills are the skill names serial slots that completed asked
	// ctx.skills.activate for (capability checked), first request first,
	// each once; the turn engine adds the known ones to the system context.
	Skills  []string
	Intents []SlotIntent
	Events  []SlotEvent
}

// OutputResult is the outcome of the output phase.
type OutputResult struct {
	Intents   []SlotIntent
	Result    any  // the agent result set through ctx.result (JSON-compatible)
	ResultSet bool // reports whether any slot set the result (Result may be nil)
	Events    []SlotEvent
}
