package dialog

import (
	"context"
	"fmt"
	"strings"

	"github.com/demiurge/demiurge/builtin/internal/tool"
	"github.com/demiurge/demiurge/effect"
)

const maxClarifyChoices = 4

func Clarify() effect.Definition {
	return effect.Definition{
		Name:        "clarify",
		Description: "Ask the user a question and end the turn until they answer. Offer up to four choices when useful.",
		Schema: tool.ObjectSchema(map[string]any{
			"question": map[string]any{"type": "string", "description": "The question to ask."},
			"choices":  map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "maxItems": maxClarifyChoices},
		}, "question"),
		Source:         effect.SourceBuiltin,
		Risk:           "low",
		ApprovalPolicy: effect.ApprovalAuto,
		Adapter:        tool.Simple(clarifyArgs{}, nil, runClarify),
	}
}

type clarifyArgs struct {
	Question string   `json:"question"`
	Choices  []string `json:"choices"`
}

func runClarify(_ context.Context, _ effect.Invocation, args clarifyArgs) (effect.Outcome, error) {
	q := strings.TrimSpace(args.Question)
	if q == "" {
		return effect.Outcome{IsError: true, Content: "clarify requires a non-empty question"}, nil
	}
	var choices []any
	for _, c := range args.Choices {
		if strings.TrimSpace(c) != "" {
			choices = append(choices, c)
		}
		if len(choices) == maxClarifyChoices {
			break
		}
	}
	return effect.Outcome{
		Content:          q,
		ModelOutput:      fmt.Sprintf("Need user input: %s", q),
		Data:             map[string]any{"needs_user": true, "question": q, "choices": choices},
		Terminate:        true,
		ExecutionStarted: true,
	}, nil
}
