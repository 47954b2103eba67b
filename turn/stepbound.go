package turn

import (
	"fmt"

	"github.com/demiurge/demiurge"
)

// DefaultMaxToolCallsPerStep is the tool-call bound of one model step when
// the Host sets none.
const DefaultMaxToolCallsPerStep = 32

// maxToolCallsPerStep is the configured bound, or the default.
func (x *Execution) maxToolCallsPerStep() int {
	if n := x.d.MaxToolCallsPerStep; n > 0 {
		return n
	}
	return DefaultMaxToolCallsPerStep
}

// boundStep keeps a model step's tool calls within the bound: the calls past
// it keep their ids (the provider expects an answer to each) but lose their
// arguments, so neither the persisted step nor the replay carries them, and
// are answered without running. It returns the step to record and the
// number of calls to run.
func boundStep(resp demiurge.ModelResponse, limit int) (demiurge.ModelResponse, int) {
	if len(resp.ToolCalls) <= limit {
		return resp, len(resp.ToolCalls)
	}
	calls := make([]demiurge.ToolCall, len(resp.ToolCalls))
	copy(calls, resp.ToolCalls)
	for i := limit; i < len(calls); i++ {
		calls[i].Arguments = map[string]any{}
	}
	resp.ToolCalls = calls
	return resp, limit
}

// overStepBound is the answer to a call past the step's bound.
func overStepBound(limit, total int) string {
	return fmt.Sprintf("tool call not run: a model step may make at most %d tool calls and this one made %d; make the remaining calls in the next step", limit, total)
}
