package demiurge

// The body of an outbox row (Delivery.Payload) repeats the delivery's text
// in up to four places: the text blocks, fallback_text, history_text and
// failure_history_text. The last two usually equal the one before them, so
// a body is stored without them when they do (CompactDeliveryBody), and
// every reader sees them restored (ExpandDeliveryBody). Bodies written
// before the compaction carry every key and read as they always did.

// CompactDeliveryBody drops history_text when it equals fallback_text and
// failure_history_text when it equals history_text. It changes body in
// place and returns it.
func CompactDeliveryBody(body map[string]any) map[string]any {
	fallback, _ := body["fallback_text"].(string)
	history, hasHistory := body["history_text"].(string)
	if !hasHistory {
		return body
	}
	if failure, ok := body["failure_history_text"].(string); ok && failure == history {
		delete(body, "failure_history_text")
	}
	if history == fallback {
		delete(body, "history_text")
	}
	return body
}

// ExpandDeliveryBody restores what CompactDeliveryBody dropped: a missing
// history_text is fallback_text, a missing failure_history_text is
// history_text. A body without fallback_text is not a delivery intent's
// and is left as it is. It changes body in place and returns it.
func ExpandDeliveryBody(body map[string]any) map[string]any {
	fallback, ok := body["fallback_text"].(string)
	if !ok {
		return body
	}
	if _, ok := body["history_text"]; !ok {
		body["history_text"] = fallback
	}
	if _, ok := body["failure_history_text"]; !ok {
		body["failure_history_text"] = body["history_text"]
	}
	return body
}
