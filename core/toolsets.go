package core

// Toolsets is the builtin toolset membership table:
// toolset name -> builtin tool names in catalog order. The catalog and the
// core loader both read it; treat it as read-only.
var Toolsets = map[string][]string{
	"coding": {
		"read_file", "write_file", "patch", "search_files", "terminal", "web_extract",
		"skills_list", "skill_view", "skill_manage", "todo", "clarify", "session_search",
	},
	"demiurge_control": {
		"tools_list", "task_list", "delegate_task", "task_status", "task_control",
		"yield_until", "evolve_core", "rollback_core",
	},
	"schedule": {"schedule_manage"},
}

// BuiltinTools returns the builtin tool names of the given toolsets: their
// members in toolset order, de-duplicated (first occurrence wins). Unknown
// toolset names contribute nothing; Load rejects them.
func BuiltinTools(toolsets []string) []string {
	var names []string
	seen := map[string]bool{}
	for _, ts := range toolsets {
		for _, name := range Toolsets[ts] {
			if !seen[name] {
				seen[name] = true
				names = append(names, name)
			}
		}
	}
	return names
}
