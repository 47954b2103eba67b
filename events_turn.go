package demiurge

import (
	"cmp"
	"encoding/json"
)

// ErrorInfo is the error object of a turn or task event.
type ErrorInfo struct {
	Code    string `json:"code,omitempty"`
	Message string `json:"message"`
}

// TurnStartedPayload records a running turn (aggregate turn "<turn id>").
type TurnStartedPayload struct {
	SessionID    string `json:"session_id"`
	Status       string `json:"status,omitempty"` // running
	CoreID       string `json:"core_id,omitempty"`
	CoreRevision string `json:"core_revision,omitempty"`
	HostID       string `json:"host_id,omitempty"`
	InputRef     string `json:"input_ref,omitempty"`
}

// TurnEnd is the payload of the terminal turn events; Status defaults to
// the event type's suffix (needs_user comes with turn.completed).
type TurnEnd struct {
	SessionID string     `json:"session_id,omitempty"`
	Status    string     `json:"status,omitempty"`
	HostID    string     `json:"host_id,omitempty"`
	ResultRef string     `json:"result_ref,omitempty"`
	Error     *ErrorInfo `json:"error,omitempty"`
}

// The terminal turn events, one type each over TurnEnd.
type (
	TurnCompletedPayload TurnEnd
	TurnFailedPayload    TurnEnd
	TurnCancelledPayload TurnEnd
	TurnLostPayload      TurnEnd
)

func (TurnStartedPayload) Type() string   { return EvTurnStarted }
func (TurnCompletedPayload) Type() string { return EvTurnCompleted }
func (TurnFailedPayload) Type() string    { return EvTurnFailed }
func (TurnCancelledPayload) Type() string { return EvTurnCancelled }
func (TurnLostPayload) Type() string      { return EvTurnLost }

// As returns e as the payload of the terminal turn event typ.
func (e TurnEnd) As(typ string) (EventPayload, error) {
	switch typ {
	case EvTurnCompleted:
		return TurnCompletedPayload(e), nil
	case EvTurnFailed:
		return TurnFailedPayload(e), nil
	case EvTurnCancelled:
		return TurnCancelledPayload(e), nil
	case EvTurnLost:
		return TurnLostPayload(e), nil
	}
	return nil, notOfFamily(typ, "terminal turn")
}

// ToolCallStartedPayload records a tool call the turn runs (aggregate
// tool_call "<call record id>"); Args are the redacted arguments.
type ToolCallStartedPayload struct {
	TurnID           string         `json:"turn_id"`
	StepID           string         `json:"step_id"`
	ToolName         string         `json:"tool_name"`
	Status           string         `json:"status"` // running
	ProviderCallID   string         `json:"provider_call_id"`
	Args             map[string]any `json:"args,omitempty"`
	EffectSource     string         `json:"effect_source"`
	EffectProvenance string         `json:"effect_provenance"`
	CoreRevision     string         `json:"core_revision"`
}

// UnmarshalJSON reads the payload and the legacy spelling "name" of
// tool_name.
func (p *ToolCallStartedPayload) UnmarshalJSON(b []byte) error {
	type plain ToolCallStartedPayload
	var v struct {
		plain
		Name string `json:"name"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*p = ToolCallStartedPayload(v.plain)
	p.ToolName = cmp.Or(p.ToolName, v.Name)
	return nil
}

// ToolCallEnd is the payload of the end of a tool call; Status is
// succeeded or failed (default: by the event type), Result the durable
// (redacted) view of the effect's result.
type ToolCallEnd struct {
	TurnID       string         `json:"turn_id"`
	StepID       string         `json:"step_id"`
	ToolName     string         `json:"tool_name"`
	Status       string         `json:"status"`
	EffectStatus string         `json:"effect_status"`
	EffectError  *EffectError   `json:"effect_error"`
	Result       map[string]any `json:"result"`
}

// The ends of a tool call, one type each over ToolCallEnd.
type (
	ToolCallCompletedPayload ToolCallEnd
	ToolCallFailedPayload    ToolCallEnd
)

func (ToolCallStartedPayload) Type() string   { return EvToolCallStarted }
func (ToolCallCompletedPayload) Type() string { return EvToolCallCompleted }
func (ToolCallFailedPayload) Type() string    { return EvToolCallFailed }

// As returns e as the payload of the tool call event typ.
func (e ToolCallEnd) As(typ string) (EventPayload, error) {
	switch typ {
	case EvToolCallCompleted:
		return ToolCallCompletedPayload(e), nil
	case EvToolCallFailed:
		return ToolCallFailedPayload(e), nil
	}
	return nil, notOfFamily(typ, "tool call end")
}
