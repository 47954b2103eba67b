package delegation

import (
	"cmp"
	"context"
	"strings"

	"github.com/demiurge/demiurge/effect"
)

// SpawnFromSlot is ctx.agents.spawn: the slot's arguments become a
// delegation from the slot's path (its grants decide agents.spawn:<core>),
// and the answer is the child's handle {task_id, core_id, session_id,
// status}.
func (s *Service) SpawnFromSlot(ctx context.Context, tc effect.TurnContext, slotPath string, args map[string]any) (map[string]any, error) {
	req := Request{
		Tools: args["tools"], InputSlots: args["input_slots"], OutputSlots: args["output_slots"],
		UseBootstrap: args["use_bootstrap"], ParentSlot: slotPath, SlotPath: slotPath,
	}
	req.Goal, _ = args["raw_input"].(string)
	req.CoreID, _ = args["core_id"].(string)
	switch c := args["context"].(type) {
	case string:
		req.Context = c
	case []any:
		var parts []string
		for _, p := range c {
			if s, ok := p.(string); ok && strings.TrimSpace(s) != "" {
				parts = append(parts, s)
			}
		}
		req.Context = strings.Join(parts, "\n\n")
	case nil:
	default:
		return nil, invalidf("context must be None, a string or a list of strings")
	}
	task, session, err := s.spawn(ctx, tc, req)
	if err != nil {
		return nil, err
	}
	child := cmp.Or(req.CoreID, tc.CoreID)
	return map[string]any{"task_id": task.ID, "core_id": child, "session_id": session, "status": task.Status}, nil
}
