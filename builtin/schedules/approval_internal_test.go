package schedules

import (
	"testing"

	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/policy"
)

func TestScheduleManageApprovalFacts(t *testing.T) {
	def := ScheduleManage(Deps{})
	if def.Risk != "high" || def.Capability != "schedule.manage" {
		t.Fatalf("metadata = %s %s", def.Risk, def.Capability)
	}
	for _, tt := range []struct {
		args     map[string]any
		action   string
		target   string
		ruleKey  string
		baseline policy.Policy
	}{
		{map[string]any{"action": "list"}, "schedule.list", "schedules", "", ""},
		{map[string]any{"action": "create", "schedule": "@daily", "prompt": "p"}, "schedule.create", "schedules/(auto)",
			"schedule_manage:schedule.manage:create:schedules/(auto)", policy.Prompt},
		{map[string]any{"action": "delete", "schedule_id": "x"}, "schedule.delete", "schedules/x",
			"schedule_manage:schedule.manage:delete:schedules/x", policy.Prompt},
		{map[string]any{"action": "Bogus"}, "schedule.bogus", "schedules/(auto)",
			"schedule_manage:schedule.manage:bogus:schedules/(auto)", policy.Prompt},
	} {
		a, out := effect.DecodeArgs(effect.Invocation{Args: tt.args}, scheduleArgs{})
		if out != nil {
			t.Fatal(out.Content)
		}
		f := scheduleFacts(a)
		if f.Action != tt.action || f.Target != tt.target || string(f.RuleKey) != tt.ruleKey || f.Baseline != tt.baseline {
			t.Errorf("%v: facts = %+v", tt.args, f)
		}
	}
}
