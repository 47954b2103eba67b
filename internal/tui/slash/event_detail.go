package slash

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/demiurge/demiurge"
)

// detailChars bounds an event's detail before the table cuts it to its
// column.
const detailChars = 160

// eventDetail is the one-line detail of an event in a trace table: what
// the tool was called with and what it answered, who said what, how a
// turn ended; the compact payload for the other events. Every payload
// is the stored one, which the Host redacted before writing it.
func eventDetail(e demiurge.Event) string {
	var p map[string]any
	if err := json.Unmarshal(e.Payload, &p); err != nil {
		return "(payload does not decode)"
	}
	tool, _ := p["tool_name"].(string)
	var d string
	switch e.Type {
	case demiurge.EvToolCallStarted:
		args, _ := p["args"].(map[string]any)
		d = tool + " " + compactJSON(args)
	case demiurge.EvToolCallCompleted, demiurge.EvToolCallFailed:
		verdict := "ok"
		if status, _ := p["status"].(string); status != "succeeded" {
			verdict = "error"
		}
		result, _ := p["result"].(map[string]any)
		d = tool + " " + verdict + ": " + resultText(result)
	case demiurge.EvMessagePersisted:
		role, _ := p["role"].(string)
		content, _ := p["content"].(map[string]any)
		text, _ := content["text"].(string)
		d = orText(role, demiurge.RoleUser) + ": " + text
		if visible, ok := p["visible"].(bool); ok && !visible {
			d += " (hidden)"
		}
	case demiurge.EvTurnStarted:
		core, _ := p["core_id"].(string)
		rev, _ := p["core_revision"].(string)
		d = "core " + core + "@" + short(rev)
	case demiurge.EvTurnCompleted, demiurge.EvTurnFailed, demiurge.EvTurnCancelled, demiurge.EvTurnLost:
		status, _ := p["status"].(string)
		d = orText(status, strings.TrimPrefix(e.Type, "turn."))
		if errInfo, ok := p["error"].(map[string]any); ok {
			if msg, _ := errInfo["message"].(string); msg != "" {
				d += ": " + msg
			}
		}
	case demiurge.EvDeliveryQueued, demiurge.EvDeliverySending, demiurge.EvDeliverySent, demiurge.EvDeliveryFailed,
		demiurge.EvDeliveryRetryScheduled, demiurge.EvDeliveryUnknown, demiurge.EvDeliveryUnrouted:
		d = deliveryDetail(e.Type, p)
	default:
		delete(p, "session_id")
		d = compactJSON(p)
	}
	return shorten(d, detailChars, "...")
}

// deliveryDetail is "<status> [to <channel>] [(attempt n)][: last error]".
func deliveryDetail(typ string, p map[string]any) string {
	d, _ := p["status"].(string)
	d = orText(d, strings.TrimPrefix(typ, "delivery."))
	if ch, _ := p["channel"].(string); ch != "" {
		d += " to " + ch
	}
	if n, ok := p["attempts"].(float64); ok && n > 0 {
		d += " (attempt " + strconv.Itoa(int(n)) + ")"
	}
	if msg, _ := p["last_error"].(string); msg != "" {
		d += ": " + msg
	}
	return d
}

// eventTurn is the turn an event belongs to ("" for the session's own).
func eventTurn(e demiurge.Event) string {
	if e.AggregateType == demiurge.AggTurn {
		return e.AggregateID
	}
	var p struct {
		TurnID      string `json:"turn_id"`
		OwnerTurnID string `json:"owner_turn_id"`
	}
	_ = json.Unmarshal(e.Payload, &p)
	return orText(p.TurnID, p.OwnerTurnID)
}

// resultText is the text of a stored tool result: its content, else its
// compact JSON.
func resultText(r map[string]any) string {
	if c, ok := r["content"].(string); ok {
		return oneLine(c)
	}
	if len(r) == 0 {
		return ""
	}
	return compactJSON(r)
}

// compactJSON is v as JSON: keys sorted (encoding/json sorts map keys),
// no HTML escaping, no spaces.
func compactJSON(v map[string]any) string {
	if len(v) == 0 {
		return "{}"
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "(not JSON)"
	}
	return strings.TrimSpace(b.String())
}
