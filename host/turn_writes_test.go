package host_test

import (
	"context"
	"testing"

	"github.com/demiurge/demiurge/host"
	"github.com/demiurge/demiurge/turn"
)

// A turn with one tool call writes in one transaction per boundary and per
// tool call: its admission (lease and turn.started), the call (the user
// message, the assistant step and tool.call.started, before the tool
// runs), and its end (the call's completion and tool message, the answer's
// delivery with its outcome, the terminal event and the lease release).
// The Host's background loops may commit beside a turn, so the fewest of
// three turns is the turn's own.
func TestTurnWriteTransactions(t *testing.T) {
	ctx := context.Background()
	h, err := host.Open(ctx, host.Options{Home: t.TempDir(), Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	req := turn.Request{Text: "please tools_list"}
	// The first turn creates the session and runs the bootstrap slots.
	if res, err := h.Run(ctx, req); err != nil || res.Outcome != turn.OutcomeCompleted {
		t.Fatalf("first turn: %+v, %v", res, err)
	}
	fewest := int64(-1)
	for range 3 {
		before := host.StoreOf(h).Commits()
		res, err := h.Run(ctx, req)
		if err != nil || res.Outcome != turn.OutcomeCompleted || len(res.ToolCalls) != 1 || res.ToolCalls[0].IsError {
			t.Fatalf("turn: %+v, %v", res, err)
		}
		if n := host.StoreOf(h).Commits() - before; fewest < 0 || n < fewest {
			fewest = n
		}
	}
	if fewest != 3 {
		t.Fatalf("a turn with one tool call committed %d write transactions, want 3", fewest)
	}
}
