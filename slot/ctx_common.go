package slot

import (
	"fmt"

	sl "go.starlark.net/starlark"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/policy"
	"github.com/demiurge/demiurge/starlark"
)

// turnObject builds ctx.turn. Frozen values may be shared by the slots of a
// phase, parallel ones included, so it is built once per phase run.
func turnObject(t demiurge.TurnInfo) (*starlark.Object, error) {
	meta, err := metadataValue("turn metadata", t.Metadata)
	if err != nil {
		return nil, err
	}
	return starlark.NewObject("ctx.turn", sl.StringDict{
		"session_id":    sl.String(t.SessionID),
		"turn_id":       sl.String(t.TurnID),
		"core_id":       sl.String(t.CoreID),
		"core_revision": sl.String(t.CoreRevision),
		"user_input": starlark.NewObject("ctx.turn.user_input", sl.StringDict{
			"content":  sl.String(t.UserInput),
			"metadata": meta, // frozen, so sharing it is safe
		}),
		"metadata": meta,
	}), nil
}

// metadataValue converts Host metadata for authored code. A value that is not
// JSON-compatible is a Host defect, reported as EINTERNAL.
func metadataValue(what string, m map[string]any) (sl.Value, error) {
	if m == nil {
		return sl.NewDict(0), nil
	}
	v, err := starlark.ToStarlark(m)
	if err != nil {
		return nil, demiurge.WrapError(demiurge.EINTERNAL, err, "%s is not JSON-compatible", what)
	}
	return v, nil
}

// capabilityObject builds ctx.capability for the slot at s.RelPath. A grant
// comes from the pinned snapshot (caps) or from the slot's own slot.yaml
// list; with neither, every check fails closed.
func capabilityObject(caps demiurge.CapabilityChecker, s demiurge.SlotSpec) *starlark.Object {
	return starlark.CapabilityObject(s.RelPath, slotCan(caps, s))
}

// slotCan answers capability questions for the slot at s.RelPath, as
// ctx.capability.can does: the pinned snapshot or the slot's own slot.yaml
// list grants; with neither it fails closed. An empty capability is never
// granted.
func slotCan(caps demiurge.CapabilityChecker, s demiurge.SlotSpec) func(string) bool {
	declared := policy.NewGrants(nil, map[string][]string{s.RelPath: s.Capabilities})
	return func(c string) bool {
		return c != "" && (declared.Can(c, s.RelPath) || (caps != nil && caps.Can(c, s.RelPath)))
	}
}

// historyRoles is the canonical order of the roles ctx.history may read.
var historyRoles = []string{demiurge.RoleUser, demiurge.RoleAssistant, demiurge.RoleTool}

// historyObject builds ctx.history.
func historyObject(h demiurge.HistoryReader) *starlark.Object {
	return starlark.NewObject("ctx.history", sl.StringDict{
		"recent_messages": sl.NewBuiltin("recent_messages", func(th *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
			var limit int
			var roles sl.Value
			if err := sl.UnpackArgs(b.Name(), args, kwargs, "limit", &limit, "roles??", &roles); err != nil {
				return nil, err
			}
			allowed, err := historyRoleFilter(b.Name(), roles)
			if err != nil {
				return nil, err
			}
			if limit <= 0 || len(allowed) == 0 || h == nil {
				return sl.NewList(nil), nil
			}
			msgs, err := h.RecentMessages(starlark.Context(th), limit, allowed)
			if err != nil {
				return nil, err
			}
			return historyList(msgs, limit, allowed)
		}),
	})
}

// historyRoleFilter intersects the requested roles with user/assistant/tool,
// in canonical order. None means all three.
func historyRoleFilter(fn string, roles sl.Value) ([]string, error) {
	if roles == nil {
		return historyRoles, nil
	}
	if _, ok := roles.(sl.String); ok {
		return nil, fmt.Errorf("%s: roles must be a list of strings, got string", fn)
	}
	it, ok := roles.(sl.Iterable)
	if !ok {
		return nil, fmt.Errorf("%s: roles must be a list of strings, got %s", fn, roles.Type())
	}
	want := map[string]bool{}
	iter := it.Iterate()
	defer iter.Done()
	var v sl.Value
	for iter.Next(&v) {
		r, ok := v.(sl.String)
		if !ok {
			return nil, fmt.Errorf("%s: roles must be a list of strings, got an element of type %s", fn, v.Type())
		}
		want[string(r)] = true
	}
	var out []string
	for _, r := range historyRoles {
		if want[r] {
			out = append(out, r)
		}
	}
	return out, nil
}

// historyList renders messages as the dicts authored code sees. The reader's
// contract is repeated here (kind message, allowed roles, last limit) so a
// lax reader cannot widen what a slot reads.
func historyList(msgs []demiurge.Message, limit int, roles []string) (sl.Value, error) {
	allowed := map[string]bool{}
	for _, r := range roles {
		allowed[r] = true
	}
	var keep []demiurge.Message
	for _, m := range msgs {
		if (m.Content.Kind == "" || m.Content.Kind == "message") && allowed[m.Role] {
			keep = append(keep, m)
		}
	}
	if len(keep) > limit {
		keep = keep[len(keep)-limit:]
	}
	items := make([]sl.Value, 0, len(keep))
	for _, m := range keep {
		md := m.Content.Metadata
		item := map[string]any{
			"message_id":    m.ID,
			"role":          m.Role,
			"content":       m.Content.Text,
			"turn_id":       m.TurnID,
			"created_at":    nil,
			"visible":       m.Visible,
			"model_visible": m.Content.ModelVisible,
			"step_id":       stringOrNil(md["step_id"]),
			"tool_call_id":  stringOrNil(md["tool_call_id"]),
			"tool_name":     stringOrNil(md["tool_name"]),
			"tool_calls":    toolCalls(md["tool_calls"]),
			"is_error":      nil,
		}
		if !m.CreatedAt.IsZero() {
			item["created_at"] = demiurge.FormatTime(m.CreatedAt)
		}
		if m.Role == demiurge.RoleTool {
			if b, ok := md["is_error"].(bool); ok {
				item["is_error"] = b
			}
		}
		v, err := starlark.ToStarlark(item)
		if err != nil {
			return nil, demiurge.WrapError(demiurge.EINTERNAL, err, "history message %s is not JSON-compatible", m.ID)
		}
		items = append(items, v)
	}
	return sl.NewList(items), nil
}

func stringOrNil(v any) any {
	if s, ok := v.(string); ok {
		return s
	}
	return nil
}

// toolCalls keeps the dict entries of a tool_calls metadata list.
func toolCalls(v any) []any {
	out := []any{}
	list, ok := v.([]any)
	if !ok {
		return out
	}
	for _, c := range list {
		if m, ok := c.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}
