package delivery

import (
	"strings"

	"github.com/demiurge/demiurge"
)

// Delivery kinds.
const (
	KindMessage  = "message"
	KindProgress = "progress"
	KindNotice   = "notice"
)

// History policies (spec host-runtime §5.4).
const (
	HistoryPersist     = "persist"      // the text joins the model-visible transcript
	HistoryModelHidden = "model_hidden" // persisted for people, hidden from the model
	HistoryTransient   = "transient"    // no history row
)

// Block types.
const (
	BlockText    = "text"
	BlockImage   = "image"
	BlockAudio   = "audio"
	BlockVideo   = "video"
	BlockFile    = "file"
	BlockControl = "control"
)

// Block is one part of a delivery. Media blocks refer to a stored artifact by
// URI; Caption is their text fallback.
type Block struct {
	Type       string         `json:"type"`
	Text       string         `json:"text,omitempty"`
	URI        string         `json:"uri,omitempty"`
	ArtifactID string         `json:"artifact_id,omitempty"`
	MediaType  string         `json:"media_type,omitempty"`
	Caption    string         `json:"caption,omitempty"`
	Metadata   map[string]any `json:"metadata,omitempty"`
}

// Intent is one delivery a turn asks for. The caller (slot runtime, turn
// engine) has already resolved the history policy from its phase rules; this
// package validates what it is given and refuses the rest.
type Intent struct {
	SessionID       string
	TurnID          string
	Channel         string
	ConversationKey string
	Source          string
	ReplyTo         string
	Kind            string // message (default), progress, notice
	// Text is shorthand for a single text block; give Text or Blocks.
	Text   string
	Blocks []Block
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

// normalized is a validated intent with its defaults applied.
type normalized struct {
	Intent
	blocks       []Block
	fallbackText string
}

// validate applies defaults and checks in, with the exact messages of spec
// host-runtime §5.4 where it gives them. Errors are EINVALID.
func validate(in Intent) (normalized, error) {
	n := normalized{Intent: in}
	if in.SessionID == "" {
		return n, demiurge.Errorf(demiurge.EINVALID, "delivery requires a session_id")
	}
	if in.TurnID == "" {
		return n, demiurge.Errorf(demiurge.EINVALID, "delivery requires a turn_id")
	}
	if n.Kind == "" {
		n.Kind = KindMessage
	}
	switch n.Kind {
	case KindMessage, KindProgress, KindNotice:
	default:
		return n, demiurge.Errorf(demiurge.EINVALID, "invalid delivery kind: %s", n.Kind)
	}
	switch in.HistoryPolicy {
	case HistoryPersist, HistoryModelHidden, HistoryTransient:
	case "":
		return n, demiurge.Errorf(demiurge.EINVALID, "delivery history policy is required: persist, model_hidden or transient")
	default:
		return n, demiurge.Errorf(demiurge.EINVALID, "invalid history policy: %s", in.HistoryPolicy)
	}
	if n.Kind != KindMessage && in.HistoryPolicy != HistoryTransient {
		return n, demiurge.Errorf(demiurge.EINVALID, "%s deliveries are always transient", n.Kind)
	}
	if !in.Visible && in.HistoryPolicy == HistoryTransient {
		return n, demiurge.Errorf(demiurge.EINVALID, "send with visible=False and write_history=False has no effect")
	}
	switch {
	case in.Text != "" && len(in.Blocks) > 0:
		return n, demiurge.Errorf(demiurge.EINVALID, "delivery takes text or blocks, not both")
	case len(in.Blocks) > 0:
		n.blocks = append([]Block(nil), in.Blocks...)
	default:
		n.blocks = []Block{{Type: BlockText, Text: in.Text}}
	}
	textOnly := true
	var parts []string
	for i, b := range n.blocks {
		switch b.Type {
		case BlockText:
			if b.Text != "" {
				parts = append(parts, b.Text)
			}
			continue
		case BlockImage, BlockAudio, BlockVideo, BlockFile, BlockControl:
		default:
			return n, demiurge.Errorf(demiurge.EINVALID, "delivery block %d: unknown block type %q", i, b.Type)
		}
		textOnly = false
		if b.Caption != "" {
			parts = append(parts, b.Caption)
		}
	}
	n.fallbackText = strings.Join(parts, "\n\n")
	if in.HistoryPolicy != HistoryTransient && n.HistoryText == "" {
		if !textOnly {
			return n, demiurge.Errorf(demiurge.EINVALID, "non-text send_* with write_history=True requires history_text")
		}
		n.HistoryText = n.fallbackText
	}
	if n.FailureHistoryText == "" {
		n.FailureHistoryText = n.HistoryText
	}
	return n, nil
}

// writesHistory reports whether the intent persists a transcript message.
func (n normalized) writesHistory() bool { return n.HistoryPolicy != HistoryTransient }
