package builtin

import (
	"github.com/demiurge/demiurge/builtin/delegate"
	"github.com/demiurge/demiurge/builtin/dialog"
	"github.com/demiurge/demiurge/builtin/evolve"
	"github.com/demiurge/demiurge/builtin/files"
	"github.com/demiurge/demiurge/builtin/schedules"
	"github.com/demiurge/demiurge/builtin/sessions"
	"github.com/demiurge/demiurge/builtin/skills"
	"github.com/demiurge/demiurge/builtin/tasks"
	"github.com/demiurge/demiurge/builtin/terminal"
	"github.com/demiurge/demiurge/builtin/todo"
	"github.com/demiurge/demiurge/builtin/web"
	"github.com/demiurge/demiurge/effect"
)

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
	"tools_list":     func(Deps) effect.Definition { return dialog.ToolsList() },
	"clarify":        func(Deps) effect.Definition { return dialog.Clarify() },
	"read_file":      func(d Deps) effect.Definition { return files.ReadFile(d.files()) },
	"write_file":     func(d Deps) effect.Definition { return files.WriteFile(d.files()) },
	"patch":          func(d Deps) effect.Definition { return files.Patch(d.files()) },
	"search_files":   func(d Deps) effect.Definition { return files.SearchFiles(d.files()) },
	"skills_list":    func(d Deps) effect.Definition { return skills.SkillsList(d.skills()) },
	"skill_view":     func(d Deps) effect.Definition { return skills.SkillView(d.skills()) },
	"skill_manage":   func(d Deps) effect.Definition { return skills.SkillManage(d.skills()) },
	"todo":           func(d Deps) effect.Definition { return todo.Todo(todo.Deps{Home: d.Home}) },
	"session_search": func(d Deps) effect.Definition { return sessions.SessionSearch(sessions.Deps{Sessions: d.Sessions}) },
	"terminal":       func(d Deps) effect.Definition { return terminal.Terminal(d.Terminal()) },
	"web_extract":    func(d Deps) effect.Definition { return web.WebExtract(web.Deps{URLPolicy: d.URLPolicy}) },
	"task_list":      func(d Deps) effect.Definition { return tasks.TaskList(tasks.Deps{Tasks: d.Tasks}) },
	"task_status":    func(d Deps) effect.Definition { return tasks.TaskStatus(tasks.Deps{Tasks: d.Tasks}) },
	"task_control":   func(d Deps) effect.Definition { return tasks.TaskControl(tasks.Deps{Tasks: d.Tasks}) },
	"yield_until":    func(d Deps) effect.Definition { return tasks.YieldUntil(tasks.Deps{Tasks: d.Tasks}) },
	"delegate_task":  func(d Deps) effect.Definition { return delegate.DelegateTask(delegate.Deps{Delegator: d.Delegator}) },
	"evolve_core":    func(d Deps) effect.Definition { return evolve.EvolveCore(evolve.Deps{Evolution: d.Evolution}) },
	"rollback_core":  func(d Deps) effect.Definition { return evolve.RollbackCore(evolve.Deps{Evolution: d.Evolution}) },

	"schedule_manage": func(d Deps) effect.Definition {
		return schedules.ScheduleManage(schedules.Deps{CoreDir: d.CoreDir, CoreLoader: d.CoreLoader, Timezone: d.Timezone})
	},
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
