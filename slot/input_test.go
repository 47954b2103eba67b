package slot_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/starlark"
)

const (
	inSerial   = "input/serial.star"
	inParallel = "input/parallel.star"
)

func inputEnv() demiurge.InputEnv {
	return demiurge.InputEnv{Turn: testTurn(), RawText: "hello there", Workspace: "/work/space"}
}

func TestInputSerialContributions(t *testing.T) {
	rt := newRuntime(starlark.Options{})
	res, err := rt.RunInput(context.Background(), []demiurge.SlotSpec{spec(t, demiurge.PhaseInput, "", inSerial, "user_and_system")}, inputEnv())
	if err != nil {
		t.Fatal(err)
	}
	if want := "hello there\n\nextra user\n\nhidden part\n\ntransient user"; res.UserText != want {
		t.Errorf("UserText=%q, want %q", res.UserText, want)
	}
	if want := "hello there\n\nextra user"; res.PersistedUserText != want {
		t.Errorf("PersistedUserText=%q, want %q", res.PersistedUserText, want)
	}
	if want := "system note\n\nsecond system"; res.SystemContext != want {
		t.Errorf("SystemContext=%q, want %q", res.SystemContext, want)
	}
	want := []demiurge.Contribution{{Placement: demiurge.PlacementSystemContext, Role: demiurge.RoleSystem, Text: "system note\n\nsecond system"}}
	if !reflect.DeepEqual(res.Contributions, want) {
		t.Errorf("Contributions=%+v, want %+v", res.Contributions, want)
	}
}

func TestInputSlotDefaultHistoryPolicyForUserFragments(t *testing.T) {
	s := spec(t, demiurge.PhaseInput, "", inSerial, "base")
	s.HistoryPolicy = demiurge.HistoryTransient
	res, err := newRuntime(starlark.Options{}).RunInput(context.Background(), []demiurge.SlotSpec{s}, inputEnv())
	if err != nil {
		t.Fatal(err)
	}
	if res.UserText != "hello there" || res.PersistedUserText != "" {
		t.Fatalf("UserText=%q Persisted=%q, want the text unpersisted under a transient slot", res.UserText, res.PersistedUserText)
	}
}

func TestInputErrors(t *testing.T) {
	tests := []struct {
		fn     string
		marker string
		msg    string
	}{
		{"bad_role", "bad-role", "invalid input context role: assistant"},
		{"bad_policy", "bad-policy", "invalid history policy: forever"},
		{"mutate_turn", "mutate-turn", "cannot insert into frozen hash table"},
		{"assign_raw_text", "assign-raw", "can't assign to .raw_text field of ctx.input"},
	}
	rt := newRuntime(starlark.Options{})
	for _, tt := range tests {
		t.Run(tt.fn, func(t *testing.T) {
			specs := []demiurge.SlotSpec{spec(t, demiurge.PhaseInput, "", inSerial, tt.fn), spec(t, demiurge.PhaseInput, "", inSerial, "base")}
			res, err := rt.RunInput(context.Background(), specs, inputEnv())
			if err != nil {
				t.Fatalf("soft failure returned %v", err)
			}
			if got, want := failure(t, res.Events, tt.fn), at(t, inSerial, tt.marker)+tt.msg; got != want {
				t.Fatalf("error=%q, want %q", got, want)
			}
		})
	}
}

func TestInputWithoutUserMessage(t *testing.T) {
	rt := newRuntime(starlark.Options{})
	res, err := rt.RunInput(context.Background(), []demiurge.SlotSpec{spec(t, demiurge.PhaseInput, "", inSerial, "nothing")}, inputEnv())
	wantCode(t, err, demiurge.EINVALID)
	if err.Error() != "input pipeline did not produce a user message" {
		t.Fatalf("err=%q", err)
	}
	completed(t, res.Events, "nothing")
}

func TestInputFailedSlotLeavesNoTrace(t *testing.T) {
	rt := newRuntime(starlark.Options{})
	specs := []demiurge.SlotSpec{spec(t, demiurge.PhaseInput, "", inSerial, "adds_then_fails"), spec(t, demiurge.PhaseInput, "", inSerial, "base")}
	res, err := rt.RunInput(context.Background(), specs, inputEnv())
	if err != nil {
		t.Fatal(err)
	}
	if res.UserText != "hello there" {
		t.Fatalf("UserText=%q, want only the completed slot's fragment", res.UserText)
	}
	if len(res.Intents) != 0 {
		t.Fatalf("intents=%+v, want the failed slot's send dropped", res.Intents)
	}
	if f := events(res.Events, demiurge.SlotEventFailed, "adds_then_fails")[0]; f.Data["discarded_intents"] != 1 {
		t.Fatalf("failed event data=%v, want discarded_intents 1", f.Data)
	}
}

func TestInputSendsAreTransientByDefault(t *testing.T) {
	rt := newRuntime(starlark.Options{})
	s := spec(t, demiurge.PhaseInput, "", inSerial, "sends")
	res, err := rt.RunInput(context.Background(), []demiurge.SlotSpec{s}, inputEnv())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Intents) != 2 {
		t.Fatalf("intents=%+v, want 2", res.Intents)
	}
	n, m := res.Intents[0], res.Intents[1]
	if n.Kind != demiurge.DeliveryKindNotice || n.HistoryPolicy != demiurge.HistoryTransient || !n.Visible || n.Blocks[0].Text != "working" {
		t.Errorf("notice=%+v", n)
	}
	if m.Kind != demiurge.DeliveryKindMessage || m.HistoryPolicy != demiurge.HistoryTransient || m.HistoryText != "echo: hello there" || m.SlotID != "sends" {
		t.Errorf("message=%+v", m)
	}
	if !strings.HasPrefix(m.DeliveryID, "delivery_") || res.UserText != "delivery "+m.DeliveryID {
		t.Errorf("delivery id %q not handed back to the slot (user text %q)", m.DeliveryID, res.UserText)
	}

	// A declared slot default beats the input phase default.
	s.HistoryPolicy = demiurge.HistoryPersist
	res, err = rt.RunInput(context.Background(), []demiurge.SlotSpec{s}, inputEnv())
	if err != nil {
		t.Fatal(err)
	}
	if res.Intents[0].HistoryPolicy != demiurge.HistoryTransient || res.Intents[1].HistoryPolicy != demiurge.HistoryPersist {
		t.Fatalf("policies=%s,%s, want notice transient and message persist", res.Intents[0].HistoryPolicy, res.Intents[1].HistoryPolicy)
	}
}

func TestInputTurnContext(t *testing.T) {
	env := inputEnv()
	env.Attachments = []any{map[string]any{"kind": "image", "path": "a.png"}}
	res, err := newRuntime(starlark.Options{}).RunInput(context.Background(), []demiurge.SlotSpec{spec(t, demiurge.PhaseInput, "", inSerial, "turn_info")}, env)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(res.UserText), &got); err != nil {
		t.Fatalf("user text %q: %v", res.UserText, err)
	}
	want := map[string]any{
		"session_id": "sess_1", "turn_id": "turn_1", "core_id": "assistant", "core_revision": "rev_abc",
		"user_input": "hello there",
		"user_meta":  map[string]any{"channel": "cli", "n": float64(2)},
		"meta":       map[string]any{"channel": "cli", "n": float64(2)},
		"slot_id":    "turn_info", "slot_path": "agent/input/turn_info", "workspace": "/work/space",
		"raw_text": "hello there", "raw_input": "hello there",
		"attachments": []any{map[string]any{"kind": "image", "path": "a.png"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ctx seen by the slot=%v\nwant %v", got, want)
	}
}

func TestInputParallelRefusesPromptWrites(t *testing.T) {
	rt := newRuntime(starlark.Options{})
	specs := []demiurge.SlotSpec{
		spec(t, demiurge.PhaseInput, demiurge.LaneParallel, inParallel, "add_refused"),
		spec(t, demiurge.PhaseInput, demiurge.LaneParallel, inParallel, "add_context_refused"),
		spec(t, demiurge.PhaseInput, "", inSerial, "base"),
	}
	res, err := rt.RunInput(context.Background(), specs, inputEnv())
	if err != nil {
		t.Fatal(err)
	}
	const msg = "parallel input modules cannot modify the current prompt"
	for fn, marker := range map[string]string{"add_refused": "parallel-add", "add_context_refused": "parallel-add-context"} {
		if got, want := failure(t, res.Events, fn), at(t, inParallel, marker)+msg; got != want {
			t.Errorf("%s: error=%q, want %q", fn, got, want)
		}
		if ev := events(res.Events, demiurge.SlotEventStarted, fn); len(ev) != 1 || ev[0].Data["lane"] != demiurge.LaneParallel {
			t.Errorf("%s: started events %+v, want one in the parallel lane", fn, ev)
		}
	}
	if res.UserText != "hello there" {
		t.Fatalf("UserText=%q", res.UserText)
	}
	// Events: serial slots first, then parallel slots in declaration order.
	var order []string
	for _, e := range res.Events {
		if e.Type == demiurge.SlotEventStarted {
			order = append(order, e.SlotID)
		}
	}
	if got := strings.Join(order, ","); got != "base,add_refused,add_context_refused" {
		t.Fatalf("event order=%s", got)
	}
}

// TestInputLanesRunConcurrently proves the parallel slot runs while the
// serial lane runs: both wait at a barrier in the history reader that opens
// only when both have arrived. Run one after the other, the first would wait
// until its deadline and fail.
func TestInputLanesRunConcurrently(t *testing.T) {
	h := newHistory()
	env := inputEnv()
	env.History = h
	par := spec(t, demiurge.PhaseInput, demiurge.LaneParallel, inParallel, "rendezvous")
	par.ID = "parallel_rendezvous"
	par.Timeout = 5 * time.Second
	ser := spec(t, demiurge.PhaseInput, demiurge.LaneSerial, inSerial, "rendezvous")
	ser.Timeout = 5 * time.Second

	start := time.Now()
	res, err := newRuntime(starlark.Options{}).RunInput(context.Background(), []demiurge.SlotSpec{ser, par}, env)
	if err != nil {
		t.Fatal(err)
	}
	if elapsed := time.Since(start); elapsed > 4*time.Second {
		t.Fatalf("phase took %v: the lanes did not overlap", elapsed)
	}
	completed(t, res.Events, "rendezvous")
	completed(t, res.Events, "parallel_rendezvous")
	if res.UserText != "serial arrived" {
		t.Fatalf("UserText=%q", res.UserText)
	}
	if len(res.Intents) != 1 || res.Intents[0].SlotID != "parallel_rendezvous" || res.Intents[0].Kind != demiurge.DeliveryKindProgress {
		t.Fatalf("intents=%+v, want the parallel slot's progress", res.Intents)
	}
	if calls := h.callLog(); len(calls) != 2 {
		t.Fatalf("history calls=%v, want one per lane", calls)
	}
}

func TestInputHardParallelFailure(t *testing.T) {
	specs := []demiurge.SlotSpec{
		hard(spec(t, demiurge.PhaseInput, demiurge.LaneParallel, inParallel, "add_refused")),
		spec(t, demiurge.PhaseInput, "", inSerial, "base"),
	}
	res, err := newRuntime(starlark.Options{}).RunInput(context.Background(), specs, inputEnv())
	wantCode(t, err, demiurge.EINVALID)
	want := "input slot add_refused failed: " + at(t, inParallel, "parallel-add") + "parallel input modules cannot modify the current prompt"
	if err.Error() != want {
		t.Fatalf("err=%q, want %q", err, want)
	}
	completed(t, res.Events, "base") // the serial lane still ran; the events come back
}

func TestShippedBaseInput(t *testing.T) {
	s := demiurge.SlotSpec{ID: "base_input", RelPath: "agent/input/base_input", ModulePath: fixture(t, "shipped/input/base_input/module.star")}
	res, err := newRuntime(starlark.Options{}).RunInput(context.Background(), []demiurge.SlotSpec{s}, inputEnv())
	if err != nil {
		t.Fatal(err)
	}
	if res.UserText != "hello there" || res.PersistedUserText != "hello there" || res.SystemContext != "" || len(res.Contributions) != 0 {
		t.Fatalf("res=%+v", res)
	}
}
