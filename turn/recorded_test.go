package turn

import (
	"testing"
	"time"

	"github.com/demiurge/demiurge"
)

// A recorded call comes back as its end event showed it: the effect
// status given, else the record's own, a call without an end cancelled.
func TestRecordedToolCall(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	rec := demiurge.ToolCallRecord{
		CallID: "call_1", ToolName: "terminal", Status: "failed",
		Args:      map[string]any{"command": "make test"},
		Result:    map[string]any{"content": "exit_code: 2\nstdout:\nFAIL\n", "is_error": true, "data": map[string]any{"exit_code": float64(2), "output": map[string]any{"stdout": map[string]any{"total_chars": float64(5)}}}},
		CreatedAt: t0, CompletedAt: t0.Add(1500 * time.Millisecond),
	}
	ev := RecordedToolCall(rec, demiurge.EffectTimedOut)
	if !ev.Done || ev.CardStatus() != demiurge.EffectTimedOut || !ev.IsError || ev.Duration != 1500*time.Millisecond {
		t.Fatalf("ended: %+v", ev)
	}
	if ev.Summary != "$ make test" || ev.Display.Command != "make test" || !ev.Display.HasExitCode || ev.Display.ExitCode != 2 || ev.Display.Tail != "FAIL" {
		t.Fatalf("display: %q %+v", ev.Summary, ev.Display)
	}
	if got := RecordedToolCall(rec, "").CardStatus(); got != demiurge.EffectFailed {
		t.Fatalf("without an end status: %s", got)
	}
	rec.Status, rec.CompletedAt, rec.Result = "running", time.Time{}, nil
	if got := RecordedToolCall(rec, ""); got.CardStatus() != demiurge.EffectCancelled || got.Duration != 0 {
		t.Fatalf("a call that never ended: %+v", got)
	}
}
