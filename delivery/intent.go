package delivery

import (
	"cmp"
	"strings"

	"github.com/demiurge/demiurge"
)

// normalized is a validated intent with its defaults applied.
type normalized struct {
	demiurge.DeliveryIntent
	blocks       []demiurge.DeliveryBlock
	fallbackText string
}

// validate applies defaults and checks in, with the exact messages of the
// spec where it gives them. Errors are EINVALID.
func validate(in demiurge.DeliveryIntent) (normalized, error) {
	n := normalized{DeliveryIntent: in}
	if in.SessionID == "" {
		return n, demiurge.Errorf(demiurge.EINVALID, "delivery requires a session_id")
	}
	if in.TurnID == "" {
		return n, demiurge.Errorf(demiurge.EINVALID, "delivery requires a turn_id")
	}
	n.Kind = cmp.Or(n.Kind, demiurge.DeliveryKindMessage)
	switch n.Kind {
	case demiurge.DeliveryKindMessage, demiurge.DeliveryKindProgress, demiurge.DeliveryKindNotice:
	default:
		return n, demiurge.Errorf(demiurge.EINVALID, "invalid delivery kind: %s", n.Kind)
	}
	switch in.HistoryPolicy {
	case demiurge.HistoryPersist, demiurge.HistoryModelHidden, demiurge.HistoryTransient:
	case "":
		return n, demiurge.Errorf(demiurge.EINVALID, "delivery history policy is required: persist, model_hidden or transient")
	default:
		return n, demiurge.Errorf(demiurge.EINVALID, "invalid history policy: %s", in.HistoryPolicy)
	}
	if n.Kind != demiurge.DeliveryKindMessage && in.HistoryPolicy != demiurge.HistoryTransient {
		return n, demiurge.Errorf(demiurge.EINVALID, "%s deliveries are always transient", n.Kind)
	}
	if !in.Visible && in.HistoryPolicy == demiurge.HistoryTransient {
		return n, demiurge.Errorf(demiurge.EINVALID, "send with visible=False and write_history=False has no effect")
	}
	switch {
	case in.Text != "" && len(in.Blocks) > 0:
		return n, demiurge.Errorf(demiurge.EINVALID, "delivery takes text or blocks, not both")
	case len(in.Blocks) > 0:
		n.blocks = append([]demiurge.DeliveryBlock(nil), in.Blocks...)
	default:
		n.blocks = []demiurge.DeliveryBlock{{Type: demiurge.BlockText, Text: in.Text}}
	}
	textOnly := true
	var parts []string
	for i, b := range n.blocks {
		switch b.Type {
		case demiurge.BlockText:
			if b.Text != "" {
				parts = append(parts, b.Text)
			}
			continue
		case demiurge.BlockImage, demiurge.BlockAudio, demiurge.BlockVideo, demiurge.BlockFile, demiurge.BlockControl:
		default:
			return n, demiurge.Errorf(demiurge.EINVALID, "delivery block %d: unknown block type %q", i, b.Type)
		}
		textOnly = false
		if b.Caption != "" {
			parts = append(parts, b.Caption)
		}
	}
	n.fallbackText = strings.Join(parts, "\n\n")
	if in.HistoryPolicy != demiurge.HistoryTransient && n.HistoryText == "" {
		if !textOnly {
			return n, demiurge.Errorf(demiurge.EINVALID, "non-text send_* with write_history=True requires history_text")
		}
		n.HistoryText = n.fallbackText
	}
	n.FailureHistoryText = cmp.Or(n.FailureHistoryText, n.HistoryText)
	return n, nil
}

// writesHistory reports whether the intent persists a transcript message.
func (n normalized) writesHistory() bool { return n.HistoryPolicy != demiurge.HistoryTransient }
