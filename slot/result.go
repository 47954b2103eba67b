package slot

// Intent kinds.
const (
	IntentMessage  = "message"
	IntentProgress = "progress"
	IntentNotice   = "notice"
)

// Block types.
const (
	BlockText  = "text"
	BlockImage = "image"
	BlockAudio = "audio"
	BlockVideo = "video"
	BlockFile  = "file"
)

// Intent is one delivery a slot asked for: plain data the turn engine turns
// into history messages and outbox rows. DeliveryID is the id the slot was
// handed back; it is fresh per intent.
type Intent struct {
	DeliveryID         string
	Kind               string // IntentMessage, IntentProgress, IntentNotice
	Blocks             []Block
	Visible            bool
	HistoryPolicy      string // resolved: persist, model_hidden or transient
	HistoryText        string
	FailureHistoryText string // "" = the history text
	Metadata           map[string]any
	SlotID             string
}

// Block is one content block of an intent. For media blocks Source is a URL
// (http or https) or an absolute path checked to lie inside the workspace or
// the session artifact root.
type Block struct {
	Type      string
	Text      string
	Source    string
	Caption   string
	MediaType string
	Summary   string
	Metadata  map[string]any // artifact_metadata
}

// Placements of context contributions (spec host-runtime §4.3).
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

// Event types of the turn's diagnostic log.
const (
	EventStarted        = "module.started"
	EventCompleted      = "module.completed"
	EventFailed         = "module.failed"
	EventReturnIgnored  = "module.return_ignored"
	eventDataSlotPath   = "slot_path"
	eventDataLane       = "lane"
	eventDataElapsed    = "elapsed_ms"
	eventDataPolicy     = "failure_policy"
	eventDataDiscarded  = "discarded_intents"
	eventDataReturnType = "return_type"
)

// Event is one entry of the turn's diagnostic log. Data always carries
// slot_path and lane; completed and failed events add elapsed_ms, failed
// events failure_policy and discarded_intents, return_ignored return_type.
type Event struct {
	Type   string
	SlotID string
	Phase  string
	Error  string // module.failed: "<module path>:<line>: <msg>"
	Data   map[string]any
}

// BootstrapResult is the outcome of the bootstrap phase.
type BootstrapResult struct {
	Snapshot string // fragments joined "\n\n"; "" is a valid snapshot
	Events   []Event
}

// InputResult is the outcome of the input phase.
type InputResult struct {
	UserText          string // user fragments joined "\n\n"; never empty on success
	PersistedUserText string // user fragments whose policy is persist
	SystemContext     string // system fragments joined "\n\n"
	Contributions     []Contribution
	Intents           []Intent
	Events            []Event
}

// OutputResult is the outcome of the output phase.
type OutputResult struct {
	Intents   []Intent
	Result    any  // the agent result set through ctx.result (JSON-compatible)
	ResultSet bool // reports whether any slot set the result (Result may be nil)
	Events    []Event
}
