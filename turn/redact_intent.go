package turn

import (
	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/redact"
)

// redactIntent returns a slot's delivery intent as it may be stored and
// sent: every text, caption, summary and metadata value redacted (operator
// view) with the turn's secrets, which by now hold everything discovered in
// the turn's tool calls, so a slot cannot deliver a credential a tool read.
func redactIntent(in demiurge.SlotIntent, red *redact.Redactor) demiurge.SlotIntent {
	str := func(s string) string { return red.String(s, redact.Operator) }
	out := in
	out.HistoryText, out.FailureHistoryText = str(in.HistoryText), str(in.FailureHistoryText)
	out.Metadata = redactMap(red, in.Metadata)
	out.Blocks = make([]demiurge.SlotBlock, len(in.Blocks))
	for i, b := range in.Blocks {
		b.Text, b.Caption, b.Summary = str(b.Text), str(b.Caption), str(b.Summary)
		b.Metadata = redactMap(red, b.Metadata)
		out.Blocks[i] = b
	}
	return out
}

func redactMap(red *redact.Redactor, m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	return redactArgs(red, m, redact.Operator)
}
