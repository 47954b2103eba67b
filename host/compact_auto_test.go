package host_test

import (
	"context"
	"testing"

	"github.com/demiurge/demiurge/host"
	"github.com/demiurge/demiurge/turn"
)

// Automatic compaction frees a real share of the window each time: a
// session whose turns each add a large tool result and answer compacts
// every few turns, not on every turn once it first crossed the threshold
// (each compaction is a model call).
func TestAutomaticCompactionIsNotEveryTurn(t *testing.T) {
	ctx := context.Background()
	h, err := host.Open(ctx, host.Options{Home: t.TempDir(), Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close(context.Background()) })
	const turns = 40
	var sessionID string
	summaries := map[string]bool{}
	changes := 0
	for i := range turns {
		res, err := h.Run(ctx, turn.Request{Text: "please tools_list"})
		if err != nil || res.Outcome != turn.OutcomeCompleted {
			t.Fatalf("turn %d: %+v, %v", i, res, err)
		}
		sessionID = res.SessionID
		s, err := h.Session(ctx, sessionID)
		if err != nil {
			t.Fatal(err)
		}
		if id := s.CompactionSummaryID; id != "" && !summaries[id] {
			summaries[id] = true
			changes++
		}
	}
	if changes == 0 {
		t.Fatalf("%d turns of large tool results never compacted", turns)
	}
	if changes > turns/2 {
		t.Fatalf("%d compactions in %d turns: compaction runs on nearly every turn", changes, turns)
	}
}
