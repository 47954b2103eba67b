package authored_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/authored"
	"github.com/demiurge/demiurge/effect"
)

func TestResults(t *testing.T) {
	f := newFixture(t, fixtureCore, authored.Options{})
	tests := []struct {
		tool string
		args map[string]any
		want effect.Outcome
	}{
		{"defaults", nil, effect.Outcome{}},
		{"echo", map[string]any{"text": "hi"}, effect.Outcome{Content: "hi"}},
		{"dict_result", nil, effect.Outcome{
			Content: "done", ModelOutput: "done (model)", Terminate: true,
			Data: map[string]any{"n": int64(1), "list": []any{int64(1), "a", nil}, "nested": map[string]any{"ok": true}},
		}},
		{"other_result", nil, effect.Outcome{Content: `[1, "two", None]`}},
		{"forged_denial", nil, effect.Outcome{Content: "refused", IsError: true, Data: map[string]any{"kept": int64(1)}}},
		{"output_set", nil, effect.Outcome{Content: "staged", Data: map[string]any{"k": "v"}}},
		{"output_set", map[string]any{"override": "returned"}, effect.Outcome{Content: "returned", Data: map[string]any{"k": "v"}}},
		{"output_set", map[string]any{"fail": true}, effect.Outcome{Content: "staged", IsError: true, Data: map[string]any{"k": "v"}}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s%v", tt.tool, tt.args), func(t *testing.T) {
			got := f.invoke(t, tt.tool, tt.args)
			tt.want.ExecutionStarted = true
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("outcome=%#v\nwant    %#v", got, tt.want)
			}
		})
	}
}

func TestCtxFacts(t *testing.T) {
	f := newFixture(t, fixtureCore, authored.Options{})
	out := f.invoke(t, "ctx_info", map[string]any{"b": []any{1.5, "x"}, "a": nil, "n": 3.0, "f": 2.5, "big": 1e300})
	var got map[string]any
	if err := json.Unmarshal([]byte(out.Content), &got); err != nil {
		t.Fatalf("content %q: %v", out.Content, err)
	}
	want := map[string]any{
		"turn":      []any{"ses_1", "turn_1", "demo", "rev_1"},
		"slot_id":   "ctx_info",
		"slot_path": "agent/tools/ctx_info",
		"workspace": "/work/space",
		"args":      map[string]any{"a": nil, "b": []any{1.5, "x"}, "n": 3.0, "f": 2.5, "big": 1e300},
		// Integral JSON numbers arrive as ints; others stay floats.
		"types": map[string]any{"a": "NoneType", "b": "list", "n": "int", "f": "float", "big": "float"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ctx=%v\nwant %v", got, want)
	}
}

func TestAuthoredFailures(t *testing.T) {
	f := newFixture(t, fixtureCore, authored.Options{})
	tests := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"runtime_error", nil, fmt.Sprintf("agent/tools/runtime_error/module.star:%d: unknown binary op: int + string",
			lineOf(t, "agent/tools/runtime_error/module.star", "add"))},
		{"bad_keys", nil, "agent/tools/bad_keys/module.star: invalid result: unknown key(s) alpha, zeta (allowed: content, data, is_error, terminate, model_output, display_output)"},
		{"bad_type", nil, "agent/tools/bad_type/module.star: invalid result: content must be a string, got int"},
		{"output_set", map[string]any{"bad": true}, fmt.Sprintf("agent/tools/output_set/module.star:%d: set: data must be a dict, got list",
			lineOf(t, "agent/tools/output_set/module.star", "bad_set"))},
		{"mutate_args", map[string]any{"x": 1}, fmt.Sprintf("agent/tools/mutate_args/module.star:%d: cannot insert into frozen hash table",
			lineOf(t, "agent/tools/mutate_args/module.star", "mutate"))},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			got := f.invoke(t, tt.tool, tt.args)
			want := effect.Outcome{Content: tt.want, IsError: true, ExecutionStarted: true}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("outcome=%#v\nwant    %#v", got, want)
			}
		})
	}
}

func TestStepBudgetStopsLoop(t *testing.T) {
	f := newFixture(t, fixtureCore, authored.Options{MaxSteps: 10_000, Timeout: time.Minute})
	start := time.Now()
	out := f.invoke(t, "spin", nil)
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Fatalf("budget stop took %v", elapsed)
	}
	if !out.IsError || !out.ExecutionStarted || out.Denial != "" {
		t.Fatalf("outcome %#v, want failed", out)
	}
	if !strings.HasPrefix(out.Content, "agent/tools/spin/module.star:") || !strings.HasSuffix(out.Content, ": step budget of 10000 steps exhausted") {
		t.Fatalf("content %q, want the module position and the budget", out.Content)
	}
}

func TestToolDeadlineStopsLoop(t *testing.T) {
	f := newFixture(t, fixtureCore, authored.Options{MaxSteps: math.MaxUint64, Timeout: 50 * time.Millisecond})
	start := time.Now()
	out := f.invoke(t, "spin", nil)
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Fatalf("deadline stop took %v", elapsed)
	}
	if !out.IsError || !out.ExecutionStarted {
		t.Fatalf("outcome %#v, want failed", out)
	}
	if !strings.HasPrefix(out.Content, "agent/tools/spin/module.star:") || !strings.HasSuffix(out.Content, ": deadline of 50ms exceeded") {
		t.Fatalf("content %q, want the module position and the deadline", out.Content)
	}
}

// When the caller's context ends, Invoke returns the error so the dispatcher
// can report cancelled or timed_out rather than an authored failure.
func TestCallerContextIsAGoError(t *testing.T) {
	f := newFixture(t, fixtureCore, authored.Options{MaxSteps: math.MaxUint64, Timeout: time.Minute})
	spin := f.def(t, "spin").Adapter
	tc := turnContext(f.core, coreGrants(f.core))

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(30*time.Millisecond, cancel)
	if _, err := run(ctx, spin, effect.Invocation{Turn: tc}); demiurge.ErrorCode(err) != demiurge.ECANCELED {
		t.Fatalf("cancelled caller: err=%v, want code %s", err, demiurge.ECANCELED)
	}

	dctx, dcancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer dcancel()
	if _, err := run(dctx, spin, effect.Invocation{Turn: tc}); demiurge.ErrorCode(err) != demiurge.ETIMEOUT {
		t.Fatalf("expired caller: err=%v, want code %s", err, demiurge.ETIMEOUT)
	}
}

func TestNoRuntimeIsAHostFailure(t *testing.T) {
	c := loadCore(t, fixtureCore)
	d := authored.Definitions(c, nil, authored.Options{})[0]
	_, err := run(context.Background(), d.Adapter, effect.Invocation{Turn: turnContext(c, coreGrants(c))})
	if demiurge.ErrorCode(err) != demiurge.EINTERNAL {
		t.Fatalf("err=%v, want an internal error", err)
	}
}

// The runtime caches compiled modules: calls after the first reuse it, and
// calls of different tools never share results.
func TestRepeatedCallsReuseTheModule(t *testing.T) {
	f := newFixture(t, fixtureCore, authored.Options{})
	tc := turnContext(f.core, coreGrants(f.core))
	for i := range 3 {
		if out := f.invokeWith(t, context.Background(), "counted", nil, tc); out.Content != "counted" {
			t.Fatalf("call %d: %#v", i, out)
		}
	}
	if got := f.loads.n.Load(); got != 1 {
		t.Fatalf("module top level ran %d times for 3 calls, want 1", got)
	}
}
