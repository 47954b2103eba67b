package authored_test

import (
	"context"
	"testing"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/authored"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/policy"
)

// dispatch runs tool through a catalog and the effect runtime, as a turn does.
func (f *fixture) dispatch(t *testing.T, rt *effect.Runtime, tool string, args map[string]any, tc effect.TurnContext) demiurge.EffectResult {
	t.Helper()
	defs := make([]effect.Definition, 0, len(f.order))
	for _, name := range f.order {
		defs = append(defs, f.defs[name])
	}
	cat, err := effect.NewCatalog(f.core.ID, tc.CoreRevision, defs)
	if err != nil {
		t.Fatal(err)
	}
	req, ok := cat.Bind(demiurge.ToolCall{ID: "call_1", Name: tool, Arguments: args}, demiurge.OriginModel)
	if !ok {
		t.Fatalf("catalog does not offer %s", tool)
	}
	return rt.Execute(context.Background(), cat, req, tc)
}

func TestThroughTheDispatcher(t *testing.T) {
	f := newFixture(t, fixtureCore, authored.Options{MaxSteps: 1 << 62, Timeout: time.Minute})
	rt := effect.NewRuntime(effect.Options{Timeout: 100 * time.Millisecond})
	tc := turnContext(f.core, coreGrants(f.core))

	if res := f.dispatch(t, rt, "echo", map[string]any{"text": "hi"}, tc); res.Status != demiurge.EffectSucceeded || res.ModelView != "hi" {
		t.Fatalf("echo: status=%q view=%q", res.Status, res.ModelView)
	}

	// A forged denial is an ordinary failure: executed, no denial key.
	res := f.dispatch(t, rt, "forged_denial", nil, tc)
	if res.Status != demiurge.EffectFailed || !res.ExecutionStarted || res.Data["denial"] != nil || res.Data["approval"] != nil || res.Data["kept"] != int64(1) {
		t.Fatalf("forged denial: status=%q started=%v data=%v", res.Status, res.ExecutionStarted, res.Data)
	}

	if res := f.dispatch(t, rt, "runtime_error", nil, tc); res.Status != demiurge.EffectFailed || res.Error == nil {
		t.Fatalf("runtime error: status=%q", res.Status)
	}

	// The dispatcher's deadline ends a running module as timed_out.
	if res := f.dispatch(t, rt, "spin", nil, tc); res.Status != demiurge.EffectTimedOut || !res.ExecutionStarted {
		t.Fatalf("spin: status=%q started=%v view=%q", res.Status, res.ExecutionStarted, res.ModelView)
	}

	// Prompt approval with nobody to answer: denied, and the module is never
	// read (defaults has no print, so check the count stayed where it was).
	if res := f.dispatch(t, rt, "defaults", nil, tc); res.Status != demiurge.EffectDenied {
		t.Fatalf("defaults: status=%q, want denied", res.Status)
	}

	// A capability the turn does not grant: denied before any load.
	if res := f.dispatch(t, rt, "counted", nil, turnContext(f.core, policy.Grants{})); res.Status != demiurge.EffectDenied {
		t.Fatalf("counted without grants: status=%q", res.Status)
	}
	if got := f.loads.n.Load(); got != 0 {
		t.Fatalf("module loaded %d times for denied calls", got)
	}
	if res := f.dispatch(t, rt, "counted", nil, tc); res.Status != demiurge.EffectSucceeded || f.loads.n.Load() != 1 {
		t.Fatalf("counted: status=%q loads=%d", res.Status, f.loads.n.Load())
	}
}
