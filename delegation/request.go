package delegation

import (
	"cmp"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/effect"
)

// Request is one delegation as the caller wrote it. Tools, ToolPolicy,
// InputSlots and OutputSlots keep their raw JSON shape: Spawn normalises
// them in the spec's order, after the checks that come first.
type Request struct {
	Goal         string
	CoreID       string // "" : the caller's core
	ContextMode  string // "" : isolated
	NotifyPolicy string // "" : return_to_parent
	MaxDepth     int    // 0 : DefaultMaxDepth; below 0 no delegation is deep enough
	Tools        any    // nil | "all" | "none" | []any of ids
	ToolPolicy   any    // nil | {deny, allow, allow_exact, max_risk}
	InputSlots   any    // nil | "all" | []any of ids
	OutputSlots  any
	UseBootstrap any // nil | bool
	ParentSlot   string
	// SlotPath is the calling slot for ctx.agents.spawn: the capability is
	// checked against its grants ("" : the core-wide defaults).
	SlotPath string
	// Context is extra context for the child, given by a slot; it is
	// injected like the fork context.
	Context string
}

// parseArgs reads the delegate_task arguments as the original does: the
// text arguments trimmed (a value of another type read as its text), the
// rest as they are. Every check runs in Spawn, in the spec's order.
func parseArgs(args map[string]any) Request {
	r := Request{
		Goal: argText(args["goal"]), CoreID: argText(args["core_id"]),
		ContextMode: argText(args["context_mode"]), NotifyPolicy: argText(args["notify_policy"]),
		Tools: args["tools"], ToolPolicy: args["tool_policy"],
		InputSlots: args["input_slots"], OutputSlots: args["output_slots"], UseBootstrap: args["use_bootstrap"],
	}
	switch v := args["max_depth"].(type) {
	case float64:
		r.MaxDepth = int(v)
	case int:
		r.MaxDepth = v
	case int64:
		r.MaxDepth = int(v)
	case json.Number:
		n, _ := v.Int64()
		r.MaxDepth = int(n)
	}
	return r
}

// argText is one text argument, trimmed; nil is "", a value of another
// type its default formatting.
func argText(v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return strings.TrimSpace(t)
	default:
		return strings.TrimSpace(fmt.Sprint(t))
	}
}

// ArgumentError is delegate_task's own sentence for args (the first
// failure, with the spec's exact text), "" when they pass: the steps that
// read the arguments alone, in the spec's order. The effect runtime asks for it when the schema refuses the
// arguments, so the model sees "unsupported context_mode: shared" rather
// than a JSON Schema error. The checks that need the turn (the capability,
// the depth reached, the child limits, the child's registry and pipeline)
// are left to Spawn, which runs the same checks with them.
func ArgumentError(args map[string]any) string {
	r := parseArgs(args)
	for _, check := range []func() error{
		func() error { return checkGoal(r) },
		func() error { _, err := contextMode(r); return err },
		func() error { return checkDepth(0, maxDepth(r)) },
		func() error { _, err := notifyPolicy(r); return err },
		func() error { _, _, err := normaliseTools(r.Tools); return err },
		func() error { _, err := parseToolPolicy(r.ToolPolicy); return err },
		func() error { _, err := readUseBootstrap(r); return err },
		func() error { _, _, err := normaliseSlots("input", r.InputSlots); return err },
		func() error { _, _, err := normaliseSlots("output", r.OutputSlots); return err },
	} {
		if err := check(); err != nil {
			return demiurge.ErrorMessage(err)
		}
	}
	return ""
}

// checkGoal is step 1.
func checkGoal(r Request) error {
	if strings.TrimSpace(r.Goal) == "" {
		return invalidf("goal is required")
	}
	return nil
}

// contextMode is step 4: isolated (the default) or fork.
func contextMode(r Request) (string, error) {
	return choice(r.ContextMode, "context_mode", "isolated", "fork")
}

// choice is a text argument that must be one of allowed, the first one
// when it is absent: "unsupported <name>: <value>" otherwise.
func choice(value, name string, allowed ...string) (string, error) {
	value = cmp.Or(value, allowed[0])
	if !slices.Contains(allowed, value) {
		return "", invalidf("unsupported %s: %s", name, value)
	}
	return value, nil
}

// maxDepth is max_depth as the original reads it (int(v) or 2): absent or
// 0 is DefaultMaxDepth, anything else counts as given, negatives too.
func maxDepth(r Request) int {
	if r.MaxDepth == 0 {
		return DefaultMaxDepth
	}
	return r.MaxDepth
}

// checkDepth is step 5 for a turn at depth.
func checkDepth(depth, maxDepth int) error {
	if depth >= maxDepth {
		return invalidf("delegation depth limit exceeded: max_depth=%d", maxDepth)
	}
	return nil
}

// notifyPolicy is step 8: return_to_parent (the default) or silent.
func notifyPolicy(r Request) (string, error) {
	return choice(r.NotifyPolicy, "notify_policy", "return_to_parent", "silent")
}

// readUseBootstrap reads use_bootstrap: absent or null is false.
func readUseBootstrap(r Request) (bool, error) {
	switch v := r.UseBootstrap.(type) {
	case nil:
		return false, nil
	case bool:
		return v, nil
	default:
		return false, invalidf("use_bootstrap must be a boolean")
	}
}

// Schema is the delegate_task argument schema of the spec, plus the seed's
// tool_policy.
func Schema() map[string]any {
	idList := map[string]any{"type": "array", "items": map[string]any{"type": "string"}}
	slotSel := map[string]any{"anyOf": []any{map[string]any{"type": "string", "enum": []any{"all"}}, idList, map[string]any{"type": "null"}}}
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"goal":          map[string]any{"type": "string", "description": "What the child agent should do."},
			"core_id":       map[string]any{"type": "string", "description": "Agent Core the child runs (default: this core)."},
			"context_mode":  map[string]any{"type": "string", "enum": []any{"isolated", "fork"}, "default": "isolated"},
			"notify_policy": map[string]any{"type": "string", "enum": []any{"return_to_parent", "silent"}, "default": "return_to_parent"},
			"max_depth":     map[string]any{"type": "integer", "minimum": 0},
			"tools": map[string]any{"anyOf": []any{
				map[string]any{"type": "string", "enum": []any{"all", "none"}}, idList, map[string]any{"type": "null"},
			}, "description": "The child's tools: all, none, or a list of tool ids."},
			"tool_policy": map[string]any{
				"type": "object", "additionalProperties": false,
				"properties": map[string]any{
					"deny": idList, "allow": idList, "allow_exact": idList,
					"max_risk": map[string]any{"type": "string", "enum": []any{"low", "medium", "high", "critical"}},
				},
			},
			"input_slots":   slotSel,
			"output_slots":  slotSel,
			"use_bootstrap": map[string]any{"type": "boolean", "default": false},
		},
		"required":             []any{"goal"},
		"additionalProperties": false,
	}
}

// refused is a tool error result: nothing was started.
func refused(msg string) effect.Outcome {
	return effect.Outcome{IsError: true, Content: msg, Data: map[string]any{"executionStarted": false}}
}

// spawned is the success result, exactly {"task_id": id}.
func spawned(id string) effect.Outcome {
	body, _ := json.Marshal(map[string]any{"task_id": id})
	return effect.Outcome{Content: string(body), Data: map[string]any{"task_id": id}, ExecutionStarted: true}
}

// errorText is a coded error's message; an uncoded one is hidden.
func errorText(err error) string {
	if demiurge.ErrorCode(err) == demiurge.EINTERNAL {
		return "delegation failed"
	}
	return demiurge.ErrorMessage(err)
}

func invalidf(format string, args ...any) error {
	return demiurge.Errorf(demiurge.EINVALID, format, args...)
}

// normaliseTools reads tools (step 9): nil means all.
func normaliseTools(v any) (all bool, ids []string, err error) {
	switch t := v.(type) {
	case nil:
		return true, nil, nil
	case string:
		switch t {
		case "all":
			return true, nil, nil
		case "none":
			return false, []string{}, nil
		}
	case []any:
		ids, err := idList(t, "tools items must be strings", "tool id must not be empty", "duplicate tool id: %s")
		return false, ids, err
	}
	return false, nil, invalidf("tools must be 'all', 'none', or a list of tool ids")
}

// normaliseSlots reads one phase's slot selection (step 10):
// nil or [] means the defaults.
func normaliseSlots(kind string, v any) (all bool, ids []string, err error) {
	switch t := v.(type) {
	case nil:
		return false, nil, nil
	case string:
		if t == "all" {
			return true, nil, nil
		}
	case []any:
		if len(t) == 0 {
			return false, nil, nil
		}
		ids, err := idList(t, kind+"_slots items must be strings", kind+" slot id must not be empty", "duplicate "+kind+" slot id: %s")
		return false, ids, err
	}
	return false, nil, invalidf("%s_slots must be 'all' or a list of slot ids", kind)
}

func idList(items []any, notString, empty, dup string) ([]string, error) {
	out := make([]string, 0, len(items))
	seen := map[string]bool{}
	for _, it := range items {
		s, ok := it.(string)
		if !ok {
			return nil, invalidf("%s", notString)
		}
		s = strings.TrimSpace(s)
		if s == "" {
			return nil, invalidf("%s", empty)
		}
		if seen[s] {
			return nil, invalidf(dup, s)
		}
		seen[s] = true
		out = append(out, s)
	}
	return out, nil
}

// parseToolPolicy reads the seed's tool_policy object.
func parseToolPolicy(v any) (*effect.ToolPolicy, error) {
	if v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, invalidf("tool_policy must be an object")
	}
	p := &effect.ToolPolicy{}
	for key, val := range m {
		switch key {
		case "deny", "allow", "allow_exact":
			items, ok := val.([]any)
			if !ok {
				return nil, invalidf("tool_policy.%s must be a list of tool names", key)
			}
			ids, err := idList(items, fmt.Sprintf("tool_policy.%s items must be strings", key), "tool id must not be empty", "duplicate tool id: %s")
			if err != nil {
				return nil, err
			}
			for _, pat := range ids {
				if _, err := path.Match(pat, ""); err != nil {
					return nil, invalidf("tool_policy.%s has a malformed pattern: %s", key, pat)
				}
			}
			switch key {
			case "deny":
				p.Deny = ids
			case "allow":
				p.Allow = ids
			default:
				p.AllowExact = ids
			}
		case "max_risk", "risk_ceiling", "risk":
			s, _ := val.(string)
			switch s {
			case "low", "medium", "high", "critical":
				p.MaxRisk = s
			default:
				return nil, invalidf("tool_policy.%s must be low, medium, high or critical", key)
			}
		default:
			return nil, invalidf("tool_policy has an unknown field: %s", key)
		}
	}
	return p, nil
}
