package turn

import (
	"strings"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/effect"
)

// RecordedToolCall is a recorded tool call as the ToolCallEvent that ended
// it showed it live: the summary, duration, output excerpt and display
// data, rebuilt from the call's durable arguments and result (a resumed
// session's cards). status is the effect status of the call's end event;
// "" takes the record's own: succeeded, failed, and, for a call whose end
// was never recorded (its turn was cancelled or lost mid-call), cancelled.
// Everything comes from the durable views, redacted when they were written.
func RecordedToolCall(rec demiurge.ToolCallRecord, status demiurge.EffectStatus) ToolCallEvent {
	content, _ := rec.Result["content"].(string)
	isError, _ := rec.Result["is_error"].(bool)
	data, _ := rec.Result["data"].(map[string]any)
	if status == "" {
		switch rec.Status {
		case "succeeded":
			status = demiurge.EffectSucceeded
		case "failed":
			status = demiurge.EffectFailed
		default:
			status = demiurge.EffectCancelled
		}
	}
	ev := ToolCallEvent{
		CallID: rec.CallID, Name: rec.ToolName, Arguments: rec.Args, StepID: rec.StepID,
		Phase: ToolCallEnded, Done: true, Status: status,
		IsError:   isError || status != demiurge.EffectSucceeded,
		StartedAt: rec.CreatedAt,
		Summary:   argumentSummary(rec.ToolName, rec.Args),
		Output:    effect.TruncateText(content, OutputExcerptChars),
	}
	if !rec.CompletedAt.IsZero() && rec.CompletedAt.After(rec.CreatedAt) {
		ev.Duration = rec.CompletedAt.Sub(rec.CreatedAt)
	}
	ev.ResultSummary = ev.Summary
	if s := strings.TrimSpace(content); s != "" {
		ev.ResultSummary = Shorten(s, SummaryChars)
	}
	if rec.ToolName == "terminal" {
		ev.Display.Command = displayCommand(rec.Args)
	}
	fillDisplay(&ev.Display, rec.ToolName, data, content)
	return ev
}
