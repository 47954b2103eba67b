package builtin_test

import (
	"strings"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/policy"
)

// TestArgumentMessages: where the spec names the sentence a tool answers
// bad arguments with, the model sees exactly that sentence even though the
// argument schema refused the call first; the adapter, given the same
// arguments, says the same. Arguments no sentence covers keep the
// schema's message.
func TestArgumentMessages(t *testing.T) {
	e := newEnv(t)
	e.tc.Grants = policy.NewGrants([]string{"fs.read", "fs.write", "task.control", "schedule.manage", "tool.call:evolve_core"}, nil)
	d := newDispatcher(e)
	for _, tt := range []struct {
		tool string
		args map[string]any
		want string
		// direct: the adapter called with the same arguments answers the
		// same (false where the adapter needs a Host part the test has not).
		direct bool
	}{
		{"task_control", map[string]any{"task_id": "task_1", "command": "retry"}, "unsupported task_control command: retry", true},
		{"task_control", map[string]any{"command": "retry"}, "task_id is required", true},
		{"task_status", map[string]any{}, "task_id is required", true},
		{"task_status", map[string]any{"task_id": "  "}, "task_id is required", true},
		{"yield_until", map[string]any{"timeout_seconds": 5}, "task_id is required", true},
		{"task_list", map[string]any{"kind": "schedule.fire"}, "unsupported background task kind: schedule.fire", true},
		{"delegate_task", map[string]any{"goal": "g", "context_mode": "shared"}, "unsupported context_mode: shared", false},
		{"delegate_task", map[string]any{}, "goal is required", false},
		{"delegate_task", map[string]any{"context_mode": "shared"}, "goal is required", false},
		{"delegate_task", map[string]any{"goal": "g", "notify_policy": "loud"}, "unsupported notify_policy: loud", false},
		{"delegate_task", map[string]any{"goal": "g", "max_depth": -1}, "delegation depth limit exceeded: max_depth=-1", false},
		{"delegate_task", map[string]any{"goal": "g", "tools": "some"}, "tools must be 'all', 'none', or a list of tool ids", false},
		{"delegate_task", map[string]any{"goal": "g", "tools": 5}, "tools must be 'all', 'none', or a list of tool ids", false},
		{"delegate_task", map[string]any{"goal": "g", "tools": []any{1}}, "tools items must be strings", false},
		{"delegate_task", map[string]any{"goal": "g", "tool_policy": map[string]any{"bogus": 1}}, "tool_policy has an unknown field: bogus", false},
		{"delegate_task", map[string]any{"goal": "g", "use_bootstrap": "yes"}, "use_bootstrap must be a boolean", false},
		{"delegate_task", map[string]any{"goal": "g", "input_slots": "some"}, "input_slots must be 'all' or a list of slot ids", false},
		{"delegate_task", map[string]any{"goal": "g", "output_slots": []any{3}}, "output_slots items must be strings", false},
		{"todo", map[string]any{"action": "archive"}, "unsupported todo action: archive", true},
		{"schedule_manage", map[string]any{"action": "pause"}, "unsupported schedule_manage action: pause", true},
		{"skill_manage", map[string]any{"action": "rename", "name": "x"}, "unsupported skill_manage action: rename", true},
		{"skill_manage", map[string]any{"action": "create"}, "name is required", true},
		{"evolve_core", map[string]any{"action": "merge"}, "unsupported evolve_core action: merge", true},
		{"search_files", map[string]any{"query": "x", "target": "lines"}, "unsupported search target: lines", true},
		{"search_files", map[string]any{"target": "lines"}, "unsupported search target: lines", true},
		{"search_files", map[string]any{"target": "content", "max_results": 500}, "query is required for content search", true},
	} {
		res := d.call(nil, tt.tool, tt.args)
		if res.Status != demiurge.EffectInvalid || res.ModelView != tt.want || res.ExecutionStarted {
			t.Errorf("%s %v: %s %q, want invalid %q", tt.tool, tt.args, res.Status, res.ModelView, tt.want)
		}
		if tt.direct {
			if out := e.call(tt.tool, tt.args); !out.IsError || out.Content != tt.want {
				t.Errorf("%s %v: the adapter says %q, the dispatcher %q", tt.tool, tt.args, out.Content, tt.want)
			}
		}
	}
	// Arguments no sentence covers keep the schema's message.
	for _, tt := range []struct {
		tool string
		args map[string]any
	}{
		{"delegate_task", map[string]any{"goal": "g", "extra": 1}},
		{"yield_until", map[string]any{"task_id": "task_1", "timeout_seconds": 500}},
		{"task_status", map[string]any{"task_id": "task_1", "view": "debug"}},
		{"read_file", map[string]any{"path": 7}},
	} {
		res := d.call(nil, tt.tool, tt.args)
		if res.Status != demiurge.EffectInvalid || !strings.HasPrefix(res.ModelView, "invalid arguments for "+tt.tool+": at /") {
			t.Errorf("%s %v: %s %q, want the schema's message", tt.tool, tt.args, res.Status, res.ModelView)
		}
	}
}
