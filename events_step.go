package demiurge

// AggModelStep is the aggregate of a model step's record ("<step id>",
// which is "<turn id>_step_<n>").
const AggModelStep = "model_step"

// EvModelStepCompleted records what one provider call of a turn cost. The
// turn writes it only when the provider reported usage, and it rides with
// the turn's next write (no transaction of its own).
const EvModelStepCompleted = "model.step.completed"

// ModelStepCompletedPayload is the usage of one model step (aggregate
// model_step "<step id>"). The store adds the tokens to the turn's row, so
// a session's total is a sum over its turns.
type ModelStepCompletedPayload struct {
	SessionID    string `json:"session_id"`
	TurnID       string `json:"turn_id"`
	StepID       string `json:"step_id"`
	Model        string `json:"model,omitempty"`
	InputTokens  int64  `json:"input_tokens"`
	OutputTokens int64  `json:"output_tokens"`
	CachedTokens int64  `json:"cached_tokens,omitempty"`
}

func (ModelStepCompletedPayload) Type() string { return EvModelStepCompleted }
