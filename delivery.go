package demiurge

import "context"

// Delivery kinds: what a turn or a slot asks to send. Only messages may write
// history; progress and notices are always transient.
const (
	DeliveryKindMessage  = "message"
	DeliveryKindProgress = "progress"
	DeliveryKindNotice   = "notice"
)

// History policies of deliveries and prompt fragments.
const (
	HistoryPersist     = "persist"      // written to history, visible to later model calls
	HistoryModelHidden = "model_hidden" // written to history for people, hidden from the model
	HistoryTransient   = "transient"    // never written to history
)

// ValidHistoryPolicy reports whether p is one of the three history policies.
func ValidHistoryPolicy(p string) bool {
	return p == HistoryPersist || p == HistoryModelHidden || p == HistoryTransient
}

// Content block types. Control blocks are delivery-only: a slot cannot send
// one.
const (
	BlockText    = "text"
	BlockImage   = "image"
	BlockAudio   = "audio"
	BlockVideo   = "video"
	BlockFile    = "file"
	BlockControl = "control"
)

// DeliveryBlock is one part of a delivery. Media blocks refer to a stored
// artifact by URI; Caption is their text fallback.
type DeliveryBlock struct {
	Type       string         `json:"type"`
	Text       string         `json:"text,omitempty"`
	URI        string         `json:"uri,omitempty"`
	ArtifactID string         `json:"artifact_id,omitempty"`
	MediaType  string         `json:"media_type,omitempty"`
	Caption    string         `json:"caption,omitempty"`
	Metadata   map[string]any `json:"metadata,omitempty"`
}

// DeliveryIntent is one delivery a turn asks for. The caller (slot runtime,
// turn engine) has already resolved the history policy from its phase rules;
// the delivery runtime validates what it is given and refuses the rest.
type DeliveryIntent struct {
	SessionID       string
	TurnID          string
	Channel         string
	ConversationKey string
	Source          string
	ReplyTo         string
	Kind            string // DeliveryKindMessage (default), DeliveryKindProgress, DeliveryKindNotice
	// Text is shorthand for a single text block; give Text or Blocks.
	Text   string
	Blocks []DeliveryBlock
	// Visible says whether the outbound is shown on the route.
	Visible       bool
	HistoryPolicy string // persist, model_hidden or transient: required
	// HistoryText is the transcript text; it defaults to the fallback text of
	// a text-only delivery and is required for other deliveries that write
	// history.
	HistoryText string
	// FailureHistoryText is recorded on the history message (metadata
	// delivery_failure_text) when the send fails, beside the text, which is
	// never rewritten; it defaults to HistoryText (and is then not repeated).
	FailureHistoryText string
	Metadata           map[string]any
}

// Route is a live interactive surface (the CLI, an operator gateway, a chat
// adapter) bound to one session. Deliver hands one outbound to the surface and
// returns nil when the surface has taken it; an error means the surface did
// not take it. An error coded EUNAVAILABLE or ETIMEOUT asks for a later
// attempt; any other error is final. A Route that cannot tell whether the
// surface took the outbound must not use those two codes. Deliver should
// return when ctx ends; the delivery runtime stops waiting at its send
// deadline either way. A Route may be called from several goroutines.
type Route interface {
	Deliver(ctx context.Context, out Outbound) error
}

// Outbound is one delivery as a route sees it.
type Outbound struct {
	DeliveryID      string
	SessionID       string
	TurnID          string
	Channel         string
	ConversationKey string
	Kind            string // message, progress or notice
	Text            string // fallback text: text blocks and captions joined by "\n\n"
	Blocks          []DeliveryBlock
	// Visible is always true for outbounds the delivery runtime dispatches:
	// history-only deliveries never reach a route.
	Visible  bool
	Metadata map[string]any
}

type routeTokenKey struct{}

// WithRouteToken returns ctx carrying the route token admitted for a turn.
// Deliveries made under it go to that route only.
func WithRouteToken(ctx context.Context, token string) context.Context {
	return context.WithValue(ctx, routeTokenKey{}, token)
}

// RouteToken returns the route token carried by ctx, if any.
func RouteToken(ctx context.Context) (string, bool) {
	t, ok := ctx.Value(routeTokenKey{}).(string)
	return t, ok && t != ""
}
