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

// tools maps a builtin name to its definition constructor. Registry
// metadata (risk, capability, approval policy, model output policy) follows
// spec tool-runtime §1.2.
var tools = map[string]func(Deps) effect.Definition{
	"tools_list":     func(Deps) effect.Definition { return toolsList() },
	"clarify":        func(Deps) effect.Definition { return clarify() },
	"read_file":      readFile,
	"write_file":     writeFile,
	"patch":          patch,
	"search_files":   searchFiles,
	"skills_list":    skillsList,
	"skill_view":     skillView,
	"skill_manage":   skillManage,
	"todo":           todo,
	"session_search": sessionSearch,
	"terminal":       terminal,
	"web_extract":    webExtract,
	"task_list":      taskList,
	"task_status":    taskStatus,
	"task_control":   taskControl,
	"yield_until":    yieldUntil,
	"delegate_task":  delegateTask,
	"evolve_core":    evolveCore,
	"rollback_core":  rollbackCore,

	"schedule_manage": scheduleManage,
}

// Definitions returns the definitions of the named toolsets' tools that this
// build provides, in toolset order without duplicates, each bound to deps.
// Unknown toolsets are rejected earlier, by the core loader.
func Definitions(toolsets []string, deps Deps) []effect.Definition {
	seen := map[string]bool{}
	var out []effect.Definition
	for _, ts := range toolsets {
		for _, name := range Toolsets[ts] {
			if seen[name] {
				continue
			}
			seen[name] = true
			if mk, ok := tools[name]; ok {
				out = append(out, mk(deps))
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
