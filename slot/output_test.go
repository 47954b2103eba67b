package slot_test

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/starlark"
)

const (
	outSerial   = "output/serial.star"
	outParallel = "output/parallel.star"
)

func outputEnv(t *testing.T) demiurge.OutputEnv {
	return demiurge.OutputEnv{
		Turn:         testTurn(),
		ResponseText: "the answer",
		Metadata:     map[string]any{"channel": "cli"},
		Workspace:    t.TempDir(),
		SessionRoot:  t.TempDir(),
	}
}

func runOutput(t *testing.T, env demiurge.OutputEnv, specs ...demiurge.SlotSpec) demiurge.OutputResult {
	t.Helper()
	res, err := newRuntime(starlark.Options{}).RunOutput(context.Background(), specs, env)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestOutputSendIntents(t *testing.T) {
	env := outputEnv(t)
	res := runOutput(t, env, spec(t, demiurge.PhaseOutput, "", outSerial, "send_variants"))
	text := func(s string) []demiurge.SlotBlock { return []demiurge.SlotBlock{{Type: demiurge.BlockText, Text: s}} }
	want := []demiurge.SlotIntent{
		{Kind: demiurge.DeliveryKindMessage, Blocks: text("the answer"), Visible: true, HistoryPolicy: demiurge.HistoryPersist, HistoryText: "the answer"},
		{Kind: demiurge.DeliveryKindMessage, Blocks: text("hidden"), Visible: true, HistoryPolicy: demiurge.HistoryModelHidden, HistoryText: "hidden"},
		{Kind: demiurge.DeliveryKindMessage, Blocks: text("not stored"), Visible: true, HistoryPolicy: demiurge.HistoryTransient, HistoryText: "not stored"},
		{Kind: demiurge.DeliveryKindMessage, Blocks: text("silent"), Visible: false, HistoryPolicy: demiurge.HistoryPersist, HistoryText: "silent"},
		{Kind: demiurge.DeliveryKindMessage, Blocks: text("custom"), Visible: true, HistoryPolicy: demiurge.HistoryPersist, HistoryText: "H", FailureHistoryText: "F",
			Metadata: map[string]any{"k": []any{int64(1), "two"}}},
		{Kind: demiurge.DeliveryKindProgress, Blocks: text("step 1"), Visible: true, HistoryPolicy: demiurge.HistoryTransient},
		{Kind: demiurge.DeliveryKindNotice, Blocks: text("note"), Visible: true, HistoryPolicy: demiurge.HistoryTransient},
		{Kind: demiurge.DeliveryKindMessage, Visible: true, HistoryPolicy: demiurge.HistoryTransient, Blocks: []demiurge.SlotBlock{{
			Type: demiurge.BlockImage, Source: "https://example.com/a.png", Caption: "pic", MediaType: "image/png", Summary: "a picture"}}},
		{Kind: demiurge.DeliveryKindMessage, Visible: true, HistoryPolicy: demiurge.HistoryPersist, HistoryText: "the report", Blocks: []demiurge.SlotBlock{{
			Type: demiurge.BlockFile, Source: filepath.Join(env.Workspace, "report.txt"), Metadata: map[string]any{"pages": int64(2)}}}},
	}
	if len(res.Intents) != len(want) {
		t.Fatalf("%d intents, want %d: %+v", len(res.Intents), len(want), res.Intents)
	}
	seen := map[string]bool{}
	for i, got := range res.Intents {
		if got.SlotID != "send_variants" || got.DeliveryID == "" || seen[got.DeliveryID] {
			t.Errorf("intent %d: slot %q delivery id %q (want fresh ids)", i, got.SlotID, got.DeliveryID)
		}
		seen[got.DeliveryID] = true
		got.SlotID, got.DeliveryID = "", ""
		if !reflect.DeepEqual(got, want[i]) {
			t.Errorf("intent %d=%+v\nwant      %+v", i, got, want[i])
		}
	}
}

func TestOutputSendErrors(t *testing.T) {
	tests := []struct {
		fn     string
		marker string
		msg    string
	}{
		{"invalid_policy", "invalid-policy", "invalid history policy: forever"},
		{"invisible_transient", "invisible", "send with visible=False and write_history=False has no effect"},
		{"progress_invisible", "progress-invisible", "send with visible=False and write_history=False has no effect"},
		{"source_dict", "source-dict", "send_image source must be a path, URL, or ArtifactRef; pass summary=... and artifact_metadata=... instead of an artifact dict"},
		{"source_int", "source-int", "send_audio source must be a path, URL, or ArtifactRef"},
		{"source_outside", "source-outside", "attachment path is outside the workspace or session: ../outside.mp4"},
		{"media_without_history_text", "media-history", "non-text send_* with write_history=True requires history_text"},
	}
	for _, tt := range tests {
		t.Run(tt.fn, func(t *testing.T) {
			res := runOutput(t, outputEnv(t), spec(t, demiurge.PhaseOutput, "", outSerial, tt.fn))
			if got, want := failure(t, res.Events, tt.fn), at(t, outSerial, tt.marker)+tt.msg; got != want {
				t.Fatalf("error=%q\nwant  %q", got, want)
			}
			if len(res.Intents) != 0 {
				t.Fatalf("intents=%+v, want none from a failed slot", res.Intents)
			}
		})
	}
}

func TestOutputParallelLane(t *testing.T) {
	tests := []struct {
		fn     string
		marker string
		msg    string
	}{
		{"writes_history", "parallel-history", "parallel output modules cannot write session history"},
		{"explicit_persist", "parallel-explicit", "parallel output modules cannot write session history"},
		{"sets_result", "parallel-result", "parallel output modules cannot modify the current agent result"},
	}
	for _, tt := range tests {
		t.Run(tt.fn, func(t *testing.T) {
			res := runOutput(t, outputEnv(t), spec(t, demiurge.PhaseOutput, demiurge.LaneParallel, outParallel, tt.fn))
			if got, want := failure(t, res.Events, tt.fn), at(t, outParallel, tt.marker)+tt.msg; got != want {
				t.Fatalf("error=%q\nwant  %q", got, want)
			}
			if res.ResultSet {
				t.Fatal("a parallel slot set the result")
			}
		})
	}

	// A plain send from the parallel lane is transient, even when the slot
	// declares persist (the lane cannot write history).
	s := spec(t, demiurge.PhaseOutput, demiurge.LaneParallel, outParallel, "default_send")
	s.HistoryPolicy = demiurge.HistoryPersist
	res := runOutput(t, outputEnv(t), s)
	if len(res.Intents) != 1 || res.Intents[0].HistoryPolicy != demiurge.HistoryTransient {
		t.Fatalf("intents=%+v, want one transient", res.Intents)
	}
}

func TestOutputSlotDefaultHistoryPolicy(t *testing.T) {
	s := spec(t, demiurge.PhaseOutput, "", outSerial, "send_variants")
	s.HistoryPolicy = demiurge.HistoryModelHidden
	res := runOutput(t, outputEnv(t), s)
	// Only the sends that say nothing about history take the slot default.
	if got := res.Intents[0].HistoryPolicy; got != demiurge.HistoryModelHidden {
		t.Fatalf("default send policy=%s, want the slot's model_hidden", got)
	}
	if got := res.Intents[2].HistoryPolicy; got != demiurge.HistoryTransient {
		t.Fatalf("write_history=False policy=%s, want transient", got)
	}
}

func TestOutputResultMerge(t *testing.T) {
	env := outputEnv(t)
	res := runOutput(t, env, spec(t, demiurge.PhaseOutput, "", outSerial, "result_merge"))
	merged := map[string]any{"a": int64(1), "b": map[string]any{"y": int64(2)}, "c": []any{int64(1), 2.5, nil, true}}
	want := map[string]any{"a": int64(1), "b": map[string]any{"y": int64(2)}, "c": []any{int64(1), 2.5, nil, true}, "seen": merged, "returned": merged}
	if !res.ResultSet || !reflect.DeepEqual(res.Result, want) {
		t.Fatalf("result=%#v\nwant   %#v", res.Result, want)
	}
}

func TestOutputResultRules(t *testing.T) {
	out := func(fn string) demiurge.SlotSpec { return spec(t, demiurge.PhaseOutput, "", outSerial, fn) }
	tests := []struct {
		name  string
		specs []demiurge.SlotSpec
		want  any
		set   bool
	}{
		{"unset", []demiurge.SlotSpec{out("send_variants")}, nil, false},
		{"dict onto dict merges across slots", []demiurge.SlotSpec{out("result_first"), out("result_dict_onto_dict")},
			map[string]any{"a": int64(1), "b": int64(2), "prior": map[string]any{"a": int64(1)}}, true},
		{"list replaces dict", []demiurge.SlotSpec{out("result_first"), out("result_list")}, []any{int64(1), int64(2)}, true},
		{"dict replaces list", []demiurge.SlotSpec{out("result_list"), out("result_dict_onto_list")}, map[string]any{"z": int64(1)}, true},
		{"None replaces", []demiurge.SlotSpec{out("result_first"), out("result_none")}, nil, true},
		{"failed slot's write dropped", []demiurge.SlotSpec{out("result_first"), out("result_set_then_fail")}, map[string]any{"a": int64(1)}, true},
		{"value is a copy", []demiurge.SlotSpec{out("result_first"), out("result_value_copy")}, map[string]any{"a": int64(1), "copy_mutated": false}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := runOutput(t, outputEnv(t), tt.specs...)
			if res.ResultSet != tt.set || !reflect.DeepEqual(res.Result, tt.want) {
				t.Fatalf("result=%#v set=%v, want %#v set=%v", res.Result, res.ResultSet, tt.want, tt.set)
			}
		})
	}
}

func TestOutputResultErrors(t *testing.T) {
	tests := []struct {
		fn     string
		marker string
		msg    string
	}{
		{"result_not_json", "result-set", "ctx.result value must be JSON-compatible, got set"},
		{"result_nan", "result-nan", "ctx.result values must be finite JSON numbers"},
		{"result_int_key", "result-key", "ctx.result object keys must be strings"},
		{"result_artifact_outside", "result-outside", "result artifact path is outside the workspace or session: /etc/passwd"},
		{"result_artifact_bad_metadata", "result-metadata", "result artifact metadata must be an object"},
	}
	for _, tt := range tests {
		t.Run(tt.fn, func(t *testing.T) {
			res := runOutput(t, outputEnv(t), spec(t, demiurge.PhaseOutput, "", outSerial, tt.fn))
			if got, want := failure(t, res.Events, tt.fn), at(t, outSerial, tt.marker)+tt.msg; got != want {
				t.Fatalf("error=%q\nwant  %q", got, want)
			}
			if res.ResultSet {
				t.Fatalf("result %v set by a failed slot", res.Result)
			}
		})
	}
}

func TestOutputResultArtifactPathResolved(t *testing.T) {
	env := outputEnv(t)
	res := runOutput(t, env, spec(t, demiurge.PhaseOutput, "", outSerial, "result_artifact_inside"))
	got := res.Result.(map[string]any)["artifact"].(map[string]any)["path"]
	if want := filepath.Join(env.Workspace, "out/report.txt"); got != want {
		t.Fatalf("artifact path=%v, want %s", got, want)
	}
}

func TestOutputParallelReadsCommittedResult(t *testing.T) {
	res := runOutput(t, outputEnv(t),
		spec(t, demiurge.PhaseOutput, demiurge.LaneParallel, outParallel, "reads_result"),
		spec(t, demiurge.PhaseOutput, "", outSerial, "result_first"))
	completed(t, res.Events, "reads_result")
	if len(res.Intents) != 1 {
		t.Fatalf("intents=%+v", res.Intents)
	}
	// The parallel slot races the serial one: it sees the result before or
	// after the commit, never a half-written one.
	if got := res.Intents[0].Blocks[0].Text; got != "result is None" && got != `result is {"a": 1}` {
		t.Fatalf("parallel slot read %q", got)
	}
}

func TestOutputContextFields(t *testing.T) {
	env := outputEnv(t)
	res := runOutput(t, env, spec(t, demiurge.PhaseOutput, "", outSerial, "output_fields"))
	want := map[string]any{"response_text": "the answer", "content": "the answer", "metadata": map[string]any{"channel": "cli"}, "workspace": env.Workspace}
	if !reflect.DeepEqual(res.Result, want) {
		t.Fatalf("result=%v, want %v", res.Result, want)
	}
}

func TestOutputHardFailure(t *testing.T) {
	specs := []demiurge.SlotSpec{hard(spec(t, demiurge.PhaseOutput, "", outSerial, "invalid_policy")), spec(t, demiurge.PhaseOutput, "", outSerial, "result_first")}
	res, err := newRuntime(starlark.Options{}).RunOutput(context.Background(), specs, outputEnv(t))
	wantCode(t, err, demiurge.EINVALID)
	if want := "output slot invalid_policy failed: " + at(t, outSerial, "invalid-policy") + "invalid history policy: forever"; err.Error() != want {
		t.Fatalf("err=%q, want %q", err, want)
	}
	if res.ResultSet || len(res.Intents) != 0 || len(events(res.Events, demiurge.SlotEventStarted, "result_first")) != 0 {
		t.Fatalf("res=%+v, want only the failed slot's events", res)
	}
}

func TestShippedBaseOutput(t *testing.T) {
	s := demiurge.SlotSpec{ID: "base_output", RelPath: "agent/output/base_output", ModulePath: fixture(t, "shipped/output/base_output/module.star")}
	res := runOutput(t, outputEnv(t), s)
	if len(res.Intents) != 1 {
		t.Fatalf("intents=%+v", res.Intents)
	}
	in := res.Intents[0]
	if in.Kind != demiurge.DeliveryKindMessage || in.HistoryPolicy != demiurge.HistoryPersist || !in.Visible || in.HistoryText != "the answer" || in.Blocks[0].Text != "the answer" {
		t.Fatalf("intent=%+v", in)
	}
}
