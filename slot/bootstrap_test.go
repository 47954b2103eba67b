package slot_test

import (
	"context"
	"strings"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/starlark"
)

const bootFile = "bootstrap/serial.star"

func bootEnv() demiurge.BootstrapEnv {
	return demiurge.BootstrapEnv{SessionID: "sess_1", CoreID: "assistant", CoreRevision: "rev_abc", Workspace: "/work/space"}
}

func TestBootstrapSnapshot(t *testing.T) {
	rt := newRuntime(starlark.Options{})
	specs := []demiurge.SlotSpec{
		spec(t, demiurge.PhaseBootstrap, "", bootFile, "add_two"),
		spec(t, demiurge.PhaseBootstrap, demiurge.LaneSerial, bootFile, "describe"),
	}
	res, err := rt.RunBootstrap(context.Background(), specs, bootEnv())
	if err != nil {
		t.Fatal(err)
	}
	want := "first fragment\n\nsecond for sess_1\n\n" +
		"sess_1|assistant|rev_abc|/work/space|describe|agent/bootstrap/describe|/work/space"
	if res.Snapshot != want {
		t.Fatalf("snapshot=%q, want %q", res.Snapshot, want)
	}
	var types []string
	for _, e := range res.Events {
		types = append(types, e.Type+":"+e.SlotID)
		if e.Phase != demiurge.PhaseBootstrap || e.Data["slot_path"] != "agent/bootstrap/"+e.SlotID || e.Data["lane"] != demiurge.LaneSerial {
			t.Errorf("event %+v lacks phase, slot_path or lane", e)
		}
	}
	if got, want := strings.Join(types, ","), "module.started:add_two,module.completed:add_two,module.started:describe,module.completed:describe"; got != want {
		t.Fatalf("events=%s, want %s", got, want)
	}
}

func TestBootstrapEmptySnapshot(t *testing.T) {
	res, err := newRuntime(starlark.Options{}).RunBootstrap(context.Background(), nil, bootEnv())
	if err != nil || res.Snapshot != "" || len(res.Events) != 0 {
		t.Fatalf("res=%+v err=%v, want an empty snapshot and no events", res, err)
	}
}

func TestBootstrapSoftFailureContinues(t *testing.T) {
	rt := newRuntime(starlark.Options{})
	specs := []demiurge.SlotSpec{
		spec(t, demiurge.PhaseBootstrap, "", bootFile, "fails_after_add"),
		spec(t, demiurge.PhaseBootstrap, "", bootFile, "add_two"),
	}
	res, err := rt.RunBootstrap(context.Background(), specs, bootEnv())
	if err != nil {
		t.Fatalf("soft failure returned %v", err)
	}
	if got, want := failure(t, res.Events, "fails_after_add"), at(t, bootFile, "bootstrap-fail")+"fail: bootstrap broke"; got != want {
		t.Fatalf("failed error=%q, want %q", got, want)
	}
	if f := events(res.Events, demiurge.SlotEventFailed, "fails_after_add")[0]; f.Data["failure_policy"] != demiurge.FailSoft {
		t.Fatalf("failed event data=%v, want failure_policy soft", f.Data)
	}
	if strings.Contains(res.Snapshot, "never committed") {
		t.Fatalf("snapshot %q kept a failed slot's fragment", res.Snapshot)
	}
	if res.Snapshot != "first fragment\n\nsecond for sess_1" {
		t.Fatalf("snapshot=%q, want the second slot's fragments", res.Snapshot)
	}
}

func TestBootstrapHardFailureStops(t *testing.T) {
	rt := newRuntime(starlark.Options{})
	specs := []demiurge.SlotSpec{
		hard(spec(t, demiurge.PhaseBootstrap, "", bootFile, "fails_after_add")),
		spec(t, demiurge.PhaseBootstrap, "", bootFile, "add_two"),
	}
	res, err := rt.RunBootstrap(context.Background(), specs, bootEnv())
	wantCode(t, err, demiurge.EINVALID)
	pos := at(t, bootFile, "bootstrap-fail")
	if got, want := err.Error(), "bootstrap slot fails_after_add failed: "+pos+"fail: bootstrap broke"; got != want {
		t.Fatalf("err=%q, want %q", got, want)
	}
	if res.Snapshot != "" {
		t.Fatalf("snapshot=%q after a hard failure, want none", res.Snapshot)
	}
	failure(t, res.Events, "fails_after_add")
	if len(events(res.Events, demiurge.SlotEventStarted, "add_two")) != 0 {
		t.Fatal("a slot after the hard failure ran")
	}
}

func TestBootstrapReturnIgnored(t *testing.T) {
	res, err := newRuntime(starlark.Options{}).RunBootstrap(context.Background(),
		[]demiurge.SlotSpec{spec(t, demiurge.PhaseBootstrap, "", bootFile, "returns_value")}, bootEnv())
	if err != nil {
		t.Fatal(err)
	}
	ig := events(res.Events, demiurge.SlotEventReturnIgnored, "returns_value")
	if len(ig) != 1 || ig[0].Data["return_type"] != "dict" {
		t.Fatalf("return_ignored events=%+v, want one with return_type dict", ig)
	}
	completed(t, res.Events, "returns_value")
	if res.Snapshot != "returned" {
		t.Fatalf("snapshot=%q, want the fragment kept", res.Snapshot)
	}
}

func TestShippedSessionContext(t *testing.T) {
	s := demiurge.SlotSpec{ID: "session_context", RelPath: "agent/bootstrap/session_context", ModulePath: fixture(t, "shipped/bootstrap/session_context/module.star")}
	res, err := newRuntime(starlark.Options{}).RunBootstrap(context.Background(), []demiurge.SlotSpec{s}, bootEnv())
	if err != nil {
		t.Fatal(err)
	}
	if want := "Session environment:\n- Workspace: `/work/space`"; res.Snapshot != want {
		t.Fatalf("snapshot=%q, want %q", res.Snapshot, want)
	}
}
