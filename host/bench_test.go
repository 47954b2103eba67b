package host_test

import (
	"context"
	"testing"

	"github.com/demiurge/demiurge/host"
	"github.com/demiurge/demiurge/turn"
)

// BenchmarkTurnOneToolCall measures the Host's own cost of one turn with the
// fake provider: two provider calls, one tools_list call, the bootstrap,
// input and output slots and every SQLite append, in one continuing session
// on a real runtime home. The figure the project holds itself to is the
// median of `go run ./cmd/bench` (≤ 2 ms); this benchmark is the profiling
// handle for it (-cpuprofile, -memprofile).
func BenchmarkTurnOneToolCall(b *testing.B) {
	ctx := context.Background()
	h, err := host.Open(ctx, host.Options{Home: b.TempDir(), Getenv: func(string) string { return "" }})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := h.Close(context.Background()); err != nil {
			b.Error(err)
		}
	})
	req := turn.Request{Text: "please tools_list"}
	// The first turn creates the session and runs the bootstrap slots; it
	// is setup, not the steady state being measured.
	checkToolTurn(b, h, req)
	b.ReportAllocs()
	for b.Loop() {
		checkToolTurn(b, h, req)
	}
}

// checkToolTurn runs one turn and fails the benchmark unless it completed
// with exactly one successful tools_list call, so a regression that skips
// the tool cannot pass as a speed-up.
func checkToolTurn(b *testing.B, h *host.Host, req turn.Request) {
	b.Helper()
	res, err := h.Run(context.Background(), req)
	if err != nil {
		b.Fatal(err)
	}
	if res.Outcome != turn.OutcomeCompleted {
		b.Fatalf("turn outcome %q (%+v), want %q", res.Outcome, res.Error, turn.OutcomeCompleted)
	}
	if len(res.ToolCalls) != 1 || res.ToolCalls[0].Name != "tools_list" || res.ToolCalls[0].IsError {
		b.Fatalf("tool calls %+v, want one successful tools_list", res.ToolCalls)
	}
}
