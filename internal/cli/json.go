package cli

import (
	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/turn"
)

// The --json object of `demiurge run`. Field names and order are
// part of the CLI contract.
type runOutput struct {
	SessionID    string        `json:"session_id"`
	TurnID       string        `json:"turn_id"`
	CoreID       string        `json:"core_id"`
	CoreRevision string        `json:"core_revision"`
	Outcome      string        `json:"outcome"`
	Text         string        `json:"text"`
	Error        *errorOutput  `json:"error"`
	ToolCalls    []toolCallOut `json:"tool_calls"`
	Deliveries   []deliveryOut `json:"deliveries"`
	Tasks        []taskOut     `json:"tasks"`
	// Usage is an added field of the contract: the provider usage of the
	// turn's model steps.
	Usage usageOut `json:"usage"`
}

// usageOut is the provider usage of a turn: prompt (input) and completion
// (output) tokens as the provider reported them, and the model calls made.
type usageOut struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	TotalTokens      int64 `json:"total_tokens"`
	Steps            int   `json:"steps"`
}

type errorOutput struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type toolCallOut struct {
	CallID           string `json:"call_id"`
	Name             string `json:"name"`
	Status           string `json:"status"`
	IsError          bool   `json:"is_error"`
	ExecutionStarted bool   `json:"execution_started"`
	Content          string `json:"content"`
}

type deliveryOut struct {
	DeliveryID string `json:"delivery_id"`
	Status     string `json:"status"`
	Text       string `json:"text"`
}

type taskOut struct {
	TaskID string `json:"task_id"`
	Kind   string `json:"kind"`
	Status string `json:"status"`
}

func runJSON(r turn.Result, tasks []demiurge.Task) runOutput {
	out := runOutput{
		SessionID: r.SessionID, TurnID: r.TurnID, CoreID: r.CoreID, CoreRevision: r.CoreRevision,
		Outcome: string(r.Outcome), Text: r.Text,
		ToolCalls: []toolCallOut{}, Deliveries: []deliveryOut{}, Tasks: []taskOut{},
		Usage: usageOut{PromptTokens: r.Usage.InputTokens, CompletionTokens: r.Usage.OutputTokens,
			TotalTokens: r.Usage.InputTokens + r.Usage.OutputTokens, Steps: r.Steps},
	}
	if r.Error != nil {
		out.Error = &errorOutput{Code: r.Error.Code, Message: r.Error.Message}
	}
	for _, t := range tasks {
		out.Tasks = append(out.Tasks, taskOut{TaskID: t.ID, Kind: t.Kind, Status: t.Status})
	}
	for _, c := range r.ToolCalls {
		out.ToolCalls = append(out.ToolCalls, toolCallOut{CallID: c.CallID, Name: c.Name, Status: string(c.Status),
			IsError: c.IsError, ExecutionStarted: c.ExecutionStarted, Content: c.Content})
	}
	for _, d := range r.Deliveries {
		out.Deliveries = append(out.Deliveries, deliveryOut{DeliveryID: d.DeliveryID, Status: d.Status, Text: d.Text})
	}
	return out
}
