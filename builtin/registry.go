package builtin

import "github.com/demiurge/demiurge/effect"

// Toolsets lists the builtin toolsets and their members in catalog order
// (spec tool-runtime §1.1).
var Toolsets = map[string][]string{
	"coding": {"read_file", "write_file", "patch", "search_files", "terminal", "web_extract",
		"skills_list", "skill_view", "skill_manage", "todo", "clarify", "session_search"},
	"demiurge_control": {"tools_list", "task_list", "delegate_task", "task_status", "task_control",
		"yield_until", "evolve_core", "rollback_core"},
	"schedule": {"schedule_manage"},
}

// tools maps a builtin name to its definition constructor.
var tools = map[string]func() effect.Definition{
	"tools_list": toolsList,
	"clarify":    clarify,
}

// Definitions returns the definitions of the named toolsets' tools that this
// build provides, in toolset order without duplicates. Unknown toolsets are
// rejected earlier, by the core loader.
func Definitions(toolsets []string) []effect.Definition {
	seen := map[string]bool{}
	var out []effect.Definition
	for _, ts := range toolsets {
		for _, name := range Toolsets[ts] {
			if seen[name] {
				continue
			}
			seen[name] = true
			if mk, ok := tools[name]; ok {
				out = append(out, mk())
			}
		}
	}
	return out
}

func objectSchema(props map[string]any, required ...string) map[string]any {
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		req := make([]any, len(required))
		for i, r := range required {
			req[i] = r
		}
		s["required"] = req
	}
	return s
}
