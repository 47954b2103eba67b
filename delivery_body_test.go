package demiurge

import (
	"maps"
	"testing"
)

// A compacted body reads back as the full one, and a body that was never
// compacted (written before) reads unchanged.
func TestDeliveryBodyCompactsAndExpands(t *testing.T) {
	cases := []map[string]any{
		{"fallback_text": "hi", "history_text": "hi", "failure_history_text": "hi"},
		{"fallback_text": "look\n\na cat", "history_text": "[image: a cat]", "failure_history_text": "[image: a cat]"},
		{"fallback_text": "hi", "history_text": "hi", "failure_history_text": "hi (not delivered)"},
		{"fallback_text": "hi", "history_text": "", "failure_history_text": ""}, // transient
		{"fallback_text": "", "history_text": "", "failure_history_text": ""},
	}
	for _, full := range cases {
		compact := CompactDeliveryBody(maps.Clone(full))
		if got := ExpandDeliveryBody(maps.Clone(compact)); !maps.Equal(got, full) {
			t.Errorf("%v: compacted to %v, expanded to %v", full, compact, got)
		}
		if got := ExpandDeliveryBody(maps.Clone(full)); !maps.Equal(got, full) {
			t.Errorf("an uncompacted body changed on read: %v became %v", full, got)
		}
	}
	compact := CompactDeliveryBody(map[string]any{"fallback_text": "x", "history_text": "x", "failure_history_text": "x"})
	if len(compact) != 1 {
		t.Errorf("the usual text-only body keeps repeats: %v", compact)
	}
	if got := ExpandDeliveryBody(map[string]any{"status": "other"}); len(got) != 1 {
		t.Errorf("a body without fallback_text gained keys: %v", got)
	}
}
