package turn

import "github.com/demiurge/demiurge"

// noteStep takes one returned provider call into account: its usage joins
// the turn's, is recorded durably when the provider reported any (one
// model.step.completed event that rides with the turn's next write, so a
// step costs no transaction of its own), and is reported to OnStep.
func (l *modelLoop) noteStep(stepID string, n int, resp demiurge.ModelResponse) {
	t := l.t
	t.usage = t.usage.Add(resp.Usage)
	if !resp.Usage.IsZero() {
		t.record(demiurge.EventBatch{Events: []demiurge.Event{demiurge.NewEvent(demiurge.AggModelStep, stepID, demiurge.ModelStepCompletedPayload{
			SessionID: t.session.ID, TurnID: t.turnID, StepID: stepID, Model: l.model,
			InputTokens: resp.Usage.InputTokens, OutputTokens: resp.Usage.OutputTokens, CachedTokens: resp.Usage.CachedTokens,
		})}})
	}
	if fn := t.req.OnStep; fn != nil {
		fn(StepEvent{
			SessionID: t.session.ID, TurnID: t.turnID, StepID: stepID, N: n, Model: l.model,
			Usage: resp.Usage, Total: t.usage, ToolCalls: len(resp.ToolCalls),
		})
	}
}
