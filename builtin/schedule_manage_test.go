package builtin_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/builtin"
	"github.com/demiurge/demiurge/core"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/policy"
)

// newScheduleEnv is newEnv with the base input and output slots a schedule
// names by default, and the schedule.manage grant.
func newScheduleEnv(t *testing.T) *env {
	t.Helper()
	e := newEnv(t)
	writeFiles(t, e.core, map[string]string{
		"agent/input/base_input/slot.yaml":     "failure_policy: hard\n",
		"agent/input/base_input/module.star":   "def process(ctx):\n    pass\n",
		"agent/output/base_output/slot.yaml":   "failure_policy: hard\n",
		"agent/output/base_output/module.star": "def process(ctx):\n    pass\n",
	})
	e.tc.Grants = policy.NewGrants([]string{"fs.read", "fs.write", "schedule.manage"}, nil)
	return e
}

func (e *env) scheduleFile(name string) (string, bool) {
	b, err := os.ReadFile(filepath.Join(e.core, "agent", "schedules", name))
	if errors.Is(err, os.ErrNotExist) {
		return "", false
	}
	if err != nil {
		e.t.Fatal(err)
	}
	return string(b), true
}

func (e *env) schedules() []core.Schedule {
	e.t.Helper()
	c := e.loads()
	got, err := c.Schedules()
	if err != nil {
		e.t.Fatal(err)
	}
	return got
}

func decoded(t *testing.T, out effect.Outcome) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(out.Content), &m); err != nil {
		t.Fatalf("content is not JSON: %v: %q", err, out.Content)
	}
	return m
}

func TestScheduleManageLifecycle(t *testing.T) {
	e := newScheduleEnv(t)

	out := e.call("schedule_manage", map[string]any{"action": "create", "schedule_id": "daily", "schedule": "0 9 * * *", "prompt": "Summarise the inbox"})
	wantOK(t, out)
	res := decoded(t, out)
	sched, _ := res["schedule"].(map[string]any)
	if res["action"] != "create" || sched["schedule_id"] != "daily" || sched["relative_path"] != "agent/schedules/daily.yaml" ||
		sched["enabled"] != true || sched["next_run"] == nil || res["runtime_timezone"] == nil || res["runtime_local_now"] == nil {
		t.Errorf("create result = %v", res)
	}
	got := e.schedules()
	if len(got) != 1 || got[0].ID != "daily" || got[0].Cron != "0 9 * * *" || got[0].Prompt != "Summarise the inbox" || !got[0].Enabled ||
		got[0].Delivery.Mode != "local" || len(got[0].Slots.Input) != 1 {
		t.Fatalf("schedules after create = %+v", got)
	}

	wantOK(t, e.call("schedule_manage", map[string]any{"action": "update", "schedule_id": "daily", "schedule": "@hourly"}))
	wantOK(t, e.call("schedule_manage", map[string]any{"action": "update", "schedule_id": "daily", "prompt": "Check the build"}))
	if got := e.schedules(); got[0].Cron != "@hourly" || got[0].Prompt != "Check the build" {
		t.Errorf("after update = %+v", got[0])
	}
	wantOK(t, e.call("schedule_manage", map[string]any{"action": "disable", "schedule_id": "daily"}))
	if got := e.schedules(); got[0].Enabled {
		t.Error("still enabled after disable")
	}
	wantOK(t, e.call("schedule_manage", map[string]any{"action": "enable", "schedule_id": "daily"}))
	if got := e.schedules(); !got[0].Enabled {
		t.Error("still disabled after enable")
	}

	list := decoded(t, e.call("schedule_manage", map[string]any{"action": "list"}))
	items, _ := list["schedules"].([]any)
	if list["count"] != float64(1) || len(items) != 1 || items[0].(map[string]any)["prompt_preview"] != "Check the build" {
		t.Errorf("list = %v", list)
	}
	if def := decoded(t, e.call("schedule_manage", map[string]any{})); def["count"] != float64(1) {
		t.Errorf("default action is not list: %v", def)
	}

	wantOK(t, e.call("schedule_manage", map[string]any{"action": "delete", "schedule_id": "daily"}))
	if _, ok := e.scheduleFile("daily.yaml"); ok {
		t.Error("file still there after delete")
	}
	if list := decoded(t, e.call("schedule_manage", map[string]any{"action": "list"})); list["count"] != float64(0) {
		t.Errorf("list after delete = %v", list)
	}
}

// An update keeps the file's other settings and its .yml name.
func TestScheduleManageUpdateKeepsSettings(t *testing.T) {
	e := newScheduleEnv(t)
	e.deps.CoreLoader = func(dir string) error { _, err := core.Load(dir); return err }
	writeFiles(t, e.core, map[string]string{
		"agent.yaml":                 "schema_version: 1\nagent:\n  id: demo\nchannels:\n  ops:\n    type: webhook\n    delivery_targets: {team: \"https://example.com/team\"}\n",
		"agent/schedules/report.yml": "schedule: \"0 8 * * 1\"\nprompt: Weekly report\ndelivery:\n  mode: webhook\n  channel: ops\n  target: team\n",
	})
	wantOK(t, e.call("schedule_manage", map[string]any{"action": "update", "schedule_id": "report", "prompt": "Weekly report, short"}))
	got := e.schedules()
	if len(got) != 1 || got[0].RelPath != "agent/schedules/report.yml" || got[0].Prompt != "Weekly report, short" ||
		got[0].Delivery.ChannelName() != "ops" || got[0].Delivery.Target != "team" || got[0].Cron != "0 8 * * 1" {
		t.Errorf("after update = %+v", got)
	}
}

func TestScheduleManageAutoID(t *testing.T) {
	e := newScheduleEnv(t)
	for _, want := range []string{"send-the-daily-report", "send-the-daily-report-2"} {
		out := e.call("schedule_manage", map[string]any{"action": "create", "schedule": "@daily", "prompt": "Send the Daily report!"})
		wantOK(t, out)
		if got := decoded(t, out)["schedule"].(map[string]any)["schedule_id"]; got != want {
			t.Errorf("auto id = %v, want %s", got, want)
		}
	}
	out := e.call("schedule_manage", map[string]any{"action": "create", "schedule": "@daily", "prompt": "¿¿¿"})
	wantOK(t, out)
	if got := decoded(t, out)["schedule"].(map[string]any)["schedule_id"]; got != "schedule" {
		t.Errorf("auto id of a prompt without letters = %v", got)
	}
}

func TestScheduleManageRefusals(t *testing.T) {
	for _, tt := range []struct {
		name  string
		files map[string]string
		args  map[string]any
		want  string
	}{
		{"bad cron", nil, map[string]any{"action": "create", "schedule_id": "x", "schedule": "61 * * * *", "prompt": "p"},
			`invalid cron expression "61 * * * *": end of range (61) above maximum (59): 61 (use 5 fields: minute hour day-of-month month day-of-week, or @hourly, @daily, @weekly, @monthly, @yearly)`},
		{"bad cron on update", map[string]string{"agent/schedules/x.yaml": "schedule: \"@daily\"\nprompt: p\n"},
			map[string]any{"action": "update", "schedule_id": "x", "schedule": "@every 1h"},
			`invalid cron expression "@every 1h": @every is not supported: use a cron expression`},
		{"create without schedule", nil, map[string]any{"action": "create", "prompt": "p"}, "schedule is required for create"},
		{"create without prompt", nil, map[string]any{"action": "create", "schedule": "@daily"}, "prompt is required for create"},
		{"empty prompt", nil, map[string]any{"action": "create", "schedule": "@daily", "prompt": "  "}, "prompt must not be empty"},
		{"bad id", nil, map[string]any{"action": "create", "schedule_id": "../x", "schedule": "@daily", "prompt": "p"},
			"schedule_id must start with a letter or digit and contain only letters, digits, underscores, or hyphens (at most 64)"},
		{"exists", map[string]string{"agent/schedules/x.yaml": "schedule: \"@daily\"\nprompt: p\n"},
			map[string]any{"action": "create", "schedule_id": "x", "schedule": "@daily", "prompt": "p"}, "schedule already exists: x"},
		{"missing", nil, map[string]any{"action": "enable", "schedule_id": "x"}, "schedule not found: x"},
		{"missing id", nil, map[string]any{"action": "delete"}, "schedule_id is required for delete"},
		{"update without change", map[string]string{"agent/schedules/x.yaml": "schedule: \"@daily\"\nprompt: p\n"},
			map[string]any{"action": "update", "schedule_id": "x"}, "update requires schedule or prompt"},
		{"duplicate", map[string]string{"agent/schedules/x.yaml": "schedule: \"@daily\"\nprompt: p\n", "agent/schedules/x.yml": "schedule: \"@daily\"\nprompt: p\n"},
			map[string]any{"action": "list"}, "schedule_manage: the core does not load: agents/demo/agent/schedules/x.yml: duplicate schedule id x: agent/schedules/x.yaml, agent/schedules/x.yml"},
		{"unknown action", nil, map[string]any{"action": "rename", "schedule_id": "x"}, "unsupported schedule_manage action: rename"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newScheduleEnv(t)
			writeFiles(t, e.core, tt.files)
			before := snapshot(t, e.core)
			wantRefused(t, e.call("schedule_manage", tt.args), tt.want, "")
			sameSnapshot(t, before, snapshot(t, e.core))
		})
	}
}

// The default slots must exist in the core: the core's decoder refuses the
// schedule before anything is written.
func TestScheduleManageValidatesAgainstCore(t *testing.T) {
	e := newEnv(t) // no input or output slots
	e.tc.Grants = policy.NewGrants([]string{"schedule.manage"}, nil)
	before := snapshot(t, e.core)
	out := e.call("schedule_manage", map[string]any{"action": "create", "schedule_id": "x", "schedule": "@daily", "prompt": "p"})
	wantRefused(t, out, `invalid schedule: agents/demo/agent/schedules/x.yaml:6: unknown input schedule module "base_input" (input slots of the core: none)`, "")
	sameSnapshot(t, before, snapshot(t, e.core))
}

// A change after which the core does not load is undone exactly.
func TestScheduleManageRollsBack(t *testing.T) {
	e := newScheduleEnv(t)
	writeFiles(t, e.core, map[string]string{"agent/schedules/x.yaml": "schedule: \"@daily\"\nprompt: keep me\n"})
	e.deps.CoreLoader = func(string) error {
		return demiurge.Errorf(demiurge.ECONFIG, "agents/demo/agent.yaml:1: broken elsewhere")
	}
	before := snapshot(t, e.core)
	for _, args := range []map[string]any{
		{"action": "create", "schedule_id": "y", "schedule": "@daily", "prompt": "p"},
		{"action": "update", "schedule_id": "x", "prompt": "changed"},
		{"action": "disable", "schedule_id": "x"},
		{"action": "delete", "schedule_id": "x"},
	} {
		out := e.call("schedule_manage", args)
		want := "schedule " + args["action"].(string) + " rolled back because core load failed: agents/demo/agent.yaml:1: broken elsewhere"
		if !out.IsError || out.Content != want {
			t.Errorf("%v: %q, want %q", args, out.Content, want)
		}
		sameSnapshot(t, before, snapshot(t, e.core))
	}
}

func TestScheduleManageSymlinkedRoot(t *testing.T) {
	e := newScheduleEnv(t)
	outside := mkdir(t, filepath.Join(t.TempDir(), "elsewhere"))
	symlink(t, outside, filepath.Join(e.core, "agent", "schedules"))
	out := e.call("schedule_manage", map[string]any{"action": "create", "schedule_id": "x", "schedule": "@daily", "prompt": "p"})
	if !out.IsError || out.ExecutionStarted {
		t.Fatalf("outcome = %+v, want a refusal", out)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("wrote outside the core: %v", entries)
	}
}

// Through the dispatcher: list runs without approval, mutations ask the
// operator with the schedule as target, bad input is refused before
// asking, and the capability is checked.
func TestScheduleManageApprovals(t *testing.T) {
	e := newScheduleEnv(t)
	cat, err := effect.NewCatalog(e.tc.CoreID, e.tc.CoreRevision, builtin.Definitions([]string{"schedule"}, e.deps))
	if err != nil {
		t.Fatal(err)
	}
	rt := effect.NewRuntime(effect.Options{Approvals: effect.NewApprovalRuntime(effect.ApprovalOptions{})})
	exec := func(tc effect.TurnContext, args map[string]any) demiurge.EffectResult {
		req, ok := cat.Bind(demiurge.ToolCall{ID: "c1", Name: "schedule_manage", Arguments: args}, demiurge.OriginModel)
		if !ok {
			t.Fatal("schedule_manage not bound")
		}
		return rt.Execute(context.Background(), cat, req, tc)
	}
	create := map[string]any{"action": "create", "schedule_id": "daily", "schedule": "0 9 * * *", "prompt": "hello"}

	headless := e.tc // no operator: a prompt is a denial
	if res := exec(headless, map[string]any{"action": "list"}); res.Status != demiurge.EffectSucceeded {
		t.Errorf("list without an operator: %s %q", res.Status, res.ModelView)
	}
	if res := exec(headless, create); res.Status != demiurge.EffectDenied {
		t.Errorf("create without an operator: %s %q", res.Status, res.ModelView)
	}

	deny := &recordingApprover{decision: effect.DecisionDeny}
	tc := e.tc
	tc.Approver = deny
	if res := exec(tc, create); res.Status != demiurge.EffectDenied || !strings.HasPrefix(res.ModelView, "approval denied: create schedule schedules/daily (0 9 * * *)") {
		t.Errorf("denied create: %s %q", res.Status, res.ModelView)
	}
	if _, ok := e.scheduleFile("daily.yaml"); ok {
		t.Error("a denied create wrote the file")
	}
	if res := exec(tc, map[string]any{"action": "create", "schedule": "* *", "prompt": "p"}); res.Status != demiurge.EffectInvalid {
		t.Errorf("bad cron: %s %q", res.Status, res.ModelView)
	}

	allow := &recordingApprover{decision: effect.DecisionAllowOnce}
	tc.Approver = allow
	if res := exec(tc, create); res.Status != demiurge.EffectSucceeded {
		t.Fatalf("allowed create: %s %q", res.Status, res.ModelView)
	}
	if res := exec(tc, map[string]any{"action": "list"}); res.Status != demiurge.EffectSucceeded {
		t.Errorf("list: %s", res.Status)
	}
	asked := append(deny.requests(), allow.requests()...)
	if len(asked) != 2 {
		t.Fatalf("operator asked %d times, want 2 (the two creates): %+v", len(asked), asked)
	}
	if q := asked[1]; q.Action != "schedule.create" || q.Target != "schedules/daily" || q.Capability != "schedule.manage" || q.Risk != "high" {
		t.Errorf("approval request = %+v", q)
	}

	noGrant := tc
	noGrant.Grants = policy.NewGrants([]string{"fs.read"}, nil)
	if res := exec(noGrant, map[string]any{"action": "delete", "schedule_id": "daily"}); res.Status != demiurge.EffectDenied || res.Data["denial"] != "capability" {
		t.Errorf("delete without schedule.manage: %s %v", res.Status, res.Data)
	}
	if _, ok := e.scheduleFile("daily.yaml"); !ok {
		t.Error("the file is gone after a refused delete")
	}
}
