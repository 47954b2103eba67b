package builtin

import (
	"fmt"
	"strings"

	"github.com/demiurge/demiurge/effect"
)

// The tools' own sentences for arguments the schema refuses (see
// effect.ArgumentMessenger), for the tools whose adapters keep their
// checks inline: each function repeats, without side effects, the first
// checks its adapter makes, so a call the schema refuses reads exactly as
// the same call would if the adapter saw it ("unsupported todo action:
// archive", "run_id is required for evolve_core review"). The task tools,
// delegate_task and search_files share one check between both paths
// instead (tasks.go, package delegation, search_files.go).

var (
	_ effect.ArgumentMessenger = evolveTool{}
	_ effect.ArgumentMessenger = scheduleTool{}
)

// ArgumentError is evolve_core's check of action, goal and run_id.
func (evolveTool) ArgumentError(args map[string]any, _ string) string {
	_, _, msg := evolveArgs(args)
	return msg
}

// ArgumentError is schedule_manage's check of its action.
func (scheduleTool) ArgumentError(args map[string]any, _ string) string {
	if action := scheduleAction(args); !contains(scheduleActions, action) {
		return fmt.Sprintf("unsupported schedule_manage action: %s", action)
	}
	return ""
}

// todoArgsError is todo's check of its action (spec tool-runtime §1.3).
func todoArgsError(args map[string]any) string {
	action := strings.ToLower(strings.TrimSpace(stringArg(args, "action")))
	if action != "" && !contains(todoActions, action) {
		return fmt.Sprintf("unsupported todo action: %s", action)
	}
	return ""
}

// skillArgsError is skill_manage's check of its action and name.
func skillArgsError(args map[string]any) string {
	action := strings.ToLower(strings.TrimSpace(stringArg(args, "action")))
	if !contains(skillActions, action) {
		return fmt.Sprintf("unsupported skill_manage action: %s", action)
	}
	name := strings.TrimSpace(stringArg(args, "name"))
	if name == "" {
		return "name is required"
	}
	if !validSkillName(name) {
		return "name must be a single non-hidden relative skill id"
	}
	return ""
}
