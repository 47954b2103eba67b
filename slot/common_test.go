package slot_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/policy"
	"github.com/demiurge/demiurge/starlark"
)

const commonFile = "common/common.star"

func commonSpec(t *testing.T, fn string) demiurge.SlotSpec {
	return spec(t, demiurge.PhaseInput, "", commonFile, fn)
}

func decodeUser(t *testing.T, res demiurge.InputResult) map[string]any {
	t.Helper()
	var got map[string]any
	if err := json.Unmarshal([]byte(res.UserText), &got); err != nil {
		t.Fatalf("user text %q: %v", res.UserText, err)
	}
	return got
}

func TestCapabilities(t *testing.T) {
	s := commonSpec(t, "caps")
	s.Capabilities = []string{"state.core.read"}
	env := inputEnv()
	env.Caps = policy.NewGrants([]string{"task.control"}, map[string][]string{
		"agent/input/caps":  {"tool.call:echo", "mcp.call:*"},
		"agent/input/other": {"agents.spawn:evolver"},
	})
	res, err := newRuntime(starlark.Options{}).RunInput(context.Background(), []demiurge.SlotSpec{s}, env)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"snapshot_path": true, "snapshot_default": true, "wildcard": true, "declared": true, "denied": false, "empty": false}
	if got := decodeUser(t, res); !reflect.DeepEqual(got, want) {
		t.Fatalf("can()=%v, want %v", got, want)
	}
}

func TestCapabilityRequireDenied(t *testing.T) {
	tests := []struct {
		name string
		caps demiurge.CapabilityChecker
	}{
		{"no checker fails closed", nil},
		{"grant of another slot", policy.NewGrants(nil, map[string][]string{"agent/input/other": {"agents.spawn:evolver"}})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := inputEnv()
			env.Caps = tt.caps
			specs := []demiurge.SlotSpec{hard(commonSpec(t, "require_denied"))}
			res, err := newRuntime(starlark.Options{}).RunInput(context.Background(), specs, env)
			msg := at(t, commonFile, "require-denied") + "capability denied: agents.spawn:evolver for agent/input/require_denied"
			if got := failure(t, res.Events, "require_denied"); got != msg {
				t.Fatalf("error=%q, want %q", got, msg)
			}
			wantCode(t, err, demiurge.EINVALID)
		})
	}
}

func TestHistoryWindow(t *testing.T) {
	h := newHistory(
		message("m1", demiurge.RoleUser, "first", nil),
		message("m2", demiurge.RoleAssistant, "reply", map[string]any{"step_id": "turn_0_step_1", "tool_calls": []any{map[string]any{"id": "c1", "name": "echo"}, "junk"}}),
		message("m3", demiurge.RoleTool, "tool out", map[string]any{"tool_call_id": "c1", "tool_name": "echo", "is_error": true}),
		message("m4", demiurge.RoleSystem, "system note", nil),
		message("m5", demiurge.RoleUser, "second", map[string]any{"is_error": true}),
	)
	env := inputEnv()
	env.History = h
	res, err := newRuntime(starlark.Options{}).RunInput(context.Background(), []demiurge.SlotSpec{commonSpec(t, "history")}, env)
	if err != nil {
		t.Fatal(err)
	}
	got := decodeUser(t, res)
	item := func(id, role, text string, visible bool, extra map[string]any) map[string]any {
		m := map[string]any{
			"message_id": id, "role": role, "content": text, "turn_id": "turn_0", "created_at": "2025-01-02T03:04:05.006Z",
			"visible": visible, "model_visible": true, "step_id": nil, "tool_call_id": nil, "tool_name": nil,
			"tool_calls": []any{}, "is_error": nil,
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	tool := item("m3", "tool", "tool out", false, map[string]any{"tool_call_id": "c1", "tool_name": "echo", "is_error": true})
	want := map[string]any{
		"last2":         []any{tool, item("m5", "user", "second", true, nil)},
		"tools":         []any{tool},
		"none":          []any{},
		"unknown_roles": []any{},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("history=%v\nwant    %v", got, want)
	}
	// limit 0 and role sets without an allowed role never reach the reader.
	if calls := h.callLog(); !reflect.DeepEqual(calls, []string{"2:user,assistant,tool", "10:tool"}) {
		t.Fatalf("reader calls=%v", calls)
	}

	// The assistant's tool_calls keep only dict entries.
	h2 := newHistory(h.msgs[1])
	env.History = h2
	res, err = newRuntime(starlark.Options{}).RunInput(context.Background(), []demiurge.SlotSpec{commonSpec(t, "history")}, env)
	if err != nil {
		t.Fatal(err)
	}
	last := decodeUser(t, res)["last2"].([]any)[0].(map[string]any)
	if !reflect.DeepEqual(last["tool_calls"], []any{map[string]any{"id": "c1", "name": "echo"}}) || last["step_id"] != "turn_0_step_1" {
		t.Fatalf("assistant item=%v", last)
	}
}

func TestHistoryWithoutReaderIsEmpty(t *testing.T) {
	res, err := newRuntime(starlark.Options{}).RunInput(context.Background(), []demiurge.SlotSpec{commonSpec(t, "history")}, inputEnv())
	if err != nil {
		t.Fatal(err)
	}
	if got := decodeUser(t, res)["last2"]; !reflect.DeepEqual(got, []any{}) {
		t.Fatalf("last2=%v, want []", got)
	}
}

func TestHistoryBadRoles(t *testing.T) {
	res, err := newRuntime(starlark.Options{}).RunInput(context.Background(),
		[]demiurge.SlotSpec{commonSpec(t, "history_bad_roles"), commonSpec(t, "base")}, inputEnv())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := failure(t, res.Events, "history_bad_roles"), at(t, commonFile, "history-roles")+"recent_messages: roles must be a list of strings, got string"; got != want {
		t.Fatalf("error=%q, want %q", got, want)
	}
}

func TestStepBudgetEnforced(t *testing.T) {
	rt := newRuntime(starlark.Options{MaxSteps: 10_000})
	res, err := rt.RunInput(context.Background(), []demiurge.SlotSpec{hard(commonSpec(t, "burn"))}, inputEnv())
	wantCode(t, err, demiurge.EINVALID)
	msg := failure(t, res.Events, "burn")
	if !strings.HasPrefix(msg, fixture(t, commonFile)+":") || !strings.HasSuffix(msg, ": step budget of 10000 steps exhausted") {
		t.Fatalf("error=%q, want the module position and the step budget", msg)
	}
	if !strings.Contains(err.Error(), "input slot burn failed: "+msg) {
		t.Fatalf("err=%q does not carry the slot error", err)
	}
}

func TestDeadlineEnforced(t *testing.T) {
	s := commonSpec(t, "spin")
	s.Timeout = 50 * time.Millisecond
	start := time.Now()
	res, err := newRuntime(starlark.Options{MaxSteps: 1 << 62}).RunInput(context.Background(), []demiurge.SlotSpec{s, commonSpec(t, "base")}, inputEnv())
	if err != nil {
		t.Fatalf("soft deadline failure returned %v", err)
	}
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Fatalf("phase took %v with a 50ms slot deadline", elapsed)
	}
	if msg := failure(t, res.Events, "spin"); !strings.HasSuffix(msg, ": deadline of 50ms exceeded") || !strings.HasPrefix(msg, fixture(t, commonFile)+":") {
		t.Fatalf("error=%q, want the module position and the deadline", msg)
	}
	completed(t, res.Events, "base") // the phase went on
}

func TestCallerCancellationAbortsSoftPhase(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(30*time.Millisecond, cancel)
	par := spec(t, demiurge.PhaseInput, demiurge.LaneParallel, commonFile, "spin")
	par.ID = "parallel_spin"
	specs := []demiurge.SlotSpec{par, commonSpec(t, "spin"), commonSpec(t, "base")}
	res, err := newRuntime(starlark.Options{MaxSteps: 1 << 62}).RunInput(ctx, specs, inputEnv())
	wantCode(t, err, demiurge.ECANCELED)
	failure(t, res.Events, "spin")
	failure(t, res.Events, "parallel_spin") // awaited, not leaked
	if len(events(res.Events, demiurge.SlotEventStarted, "base")) != 0 {
		t.Fatal("a slot ran after the caller cancelled")
	}
}

func TestErrorPositions(t *testing.T) {
	res, err := newRuntime(starlark.Options{}).RunInput(context.Background(),
		[]demiurge.SlotSpec{commonSpec(t, "runtime_error"), commonSpec(t, "calls_helper"), commonSpec(t, "base")}, inputEnv())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := failure(t, res.Events, "runtime_error"), at(t, commonFile, "runtime-error")+`key "missing" not in dict`; got != want {
		t.Errorf("error=%q, want %q", got, want)
	}
	// The innermost frame in the module names the line.
	if got, want := failure(t, res.Events, "calls_helper"), at(t, commonFile, "helper-error")+"unknown binary op: string + int"; got != want {
		t.Errorf("error=%q, want %q", got, want)
	}
}

func TestModuleProblems(t *testing.T) {
	dir := t.TempDir()
	missing := demiurge.SlotSpec{ID: "missing", RelPath: "agent/input/missing", ModulePath: filepath.Join(dir, "module.star")}
	syntax := demiurge.SlotSpec{ID: "syntax", RelPath: "agent/input/syntax", ModulePath: "/core/agent/input/syntax/module.star", Source: []byte("def process(ctx)\n    pass\n")}
	nofn := demiurge.SlotSpec{ID: "nofn", RelPath: "agent/input/nofn", ModulePath: "/core/agent/input/nofn/module.star", Source: []byte("def other(ctx):\n    pass\n")}
	base := commonSpec(t, "base")

	res, err := newRuntime(starlark.Options{}).RunInput(context.Background(), []demiurge.SlotSpec{missing, syntax, nofn, base}, inputEnv())
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{
		"missing": missing.ModulePath + ": cannot read module: no such file or directory",
		"syntax":  "/core/agent/input/syntax/module.star:2:1: got newline, want ':'",
		"nofn":    "/core/agent/input/nofn/module.star: module does not define process",
	} {
		if got := failure(t, res.Events, id); got != want {
			t.Errorf("%s: error=%q, want %q", id, got, want)
		}
	}

	_, err = newRuntime(starlark.Options{}).RunInput(context.Background(), []demiurge.SlotSpec{hard(missing), base}, inputEnv())
	wantCode(t, err, demiurge.EINTERNAL)
	_, err = newRuntime(starlark.Options{}).RunInput(context.Background(), []demiurge.SlotSpec{hard(syntax), base}, inputEnv())
	wantCode(t, err, demiurge.EINVALID)
}

func TestSpecValidation(t *testing.T) {
	ok := spec(t, demiurge.PhaseInput, "", commonFile, "base")
	mod := func(f func(*demiurge.SlotSpec)) demiurge.SlotSpec { s := ok; f(&s); return s }
	tests := []struct {
		name  string
		phase string
		specs []demiurge.SlotSpec
		want  string
	}{
		{"empty id", demiurge.PhaseInput, []demiurge.SlotSpec{mod(func(s *demiurge.SlotSpec) { s.ID = "" })}, "input slot id must not be empty"},
		{"duplicate", demiurge.PhaseInput, []demiurge.SlotSpec{ok, ok}, "duplicate input pipeline slot: base"},
		{"wrong phase", demiurge.PhaseOutput, []demiurge.SlotSpec{ok}, "slot base belongs to the input phase, not output"},
		{"bad lane", demiurge.PhaseInput, []demiurge.SlotSpec{mod(func(s *demiurge.SlotSpec) { s.Lane = "sideways" })}, "slot base: invalid lane: sideways"},
		{"parallel bootstrap", demiurge.PhaseBootstrap, []demiurge.SlotSpec{mod(func(s *demiurge.SlotSpec) { s.Phase, s.Lane = "", demiurge.LaneParallel })}, "bootstrap slot base cannot run in the parallel lane"},
		{"bad failure policy", demiurge.PhaseInput, []demiurge.SlotSpec{mod(func(s *demiurge.SlotSpec) { s.FailurePolicy = "medium" })}, "slot base: invalid failure_policy: medium"},
		{"bad history policy", demiurge.PhaseInput, []demiurge.SlotSpec{mod(func(s *demiurge.SlotSpec) { s.HistoryPolicy = "forever" })}, "slot base: invalid history policy: forever"},
		{"no module", demiurge.PhaseInput, []demiurge.SlotSpec{mod(func(s *demiurge.SlotSpec) { s.ModulePath = "" })}, "slot base has no module path"},
	}
	rt := newRuntime(starlark.Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			var evs []demiurge.SlotEvent
			switch tt.phase {
			case demiurge.PhaseBootstrap:
				var r demiurge.BootstrapResult
				r, err = rt.RunBootstrap(context.Background(), tt.specs, bootEnv())
				evs = r.Events
			case demiurge.PhaseInput:
				var r demiurge.InputResult
				r, err = rt.RunInput(context.Background(), tt.specs, inputEnv())
				evs = r.Events
			default:
				var r demiurge.OutputResult
				r, err = rt.RunOutput(context.Background(), tt.specs, outputEnv(t))
				evs = r.Events
			}
			wantCode(t, err, demiurge.EINVALID)
			if err.Error() != tt.want {
				t.Fatalf("err=%q, want %q", err, tt.want)
			}
			if len(evs) != 0 {
				t.Fatalf("events=%+v, want nothing run", evs)
			}
		})
	}
}
