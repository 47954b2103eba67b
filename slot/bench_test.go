package slot_test

import (
	"context"
	"testing"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/slot"
	"github.com/demiurge/demiurge/starlark"
)

// BenchmarkShippedSlots measures the per-turn slot overhead of a default core:
// session_context (bootstrap), base_input and base_output, each read from disk
// and run as a real turn would, with the module cache warm.
func BenchmarkShippedSlots(b *testing.B) {
	rt := slot.NewRuntime(starlark.NewRuntime(starlark.Options{}), slot.Options{})
	boot := []demiurge.SlotSpec{{ID: "session_context", RelPath: "agent/bootstrap/session_context", ModulePath: fixture(b, "shipped/bootstrap/session_context/module.star")}}
	in := []demiurge.SlotSpec{{ID: "base_input", RelPath: "agent/input/base_input", ModulePath: fixture(b, "shipped/input/base_input/module.star")}}
	out := []demiurge.SlotSpec{{ID: "base_output", RelPath: "agent/output/base_output", ModulePath: fixture(b, "shipped/output/base_output/module.star")}}
	ws := b.TempDir()
	ctx := context.Background()
	turn := testTurn()

	b.ReportAllocs()
	for b.Loop() {
		br, err := rt.RunBootstrap(ctx, boot, demiurge.BootstrapEnv{SessionID: turn.SessionID, CoreID: turn.CoreID, CoreRevision: turn.CoreRevision, Workspace: ws})
		if err != nil || br.Snapshot == "" {
			b.Fatal(err)
		}
		ir, err := rt.RunInput(ctx, in, demiurge.InputEnv{Turn: turn, RawText: turn.UserInput, Workspace: ws})
		if err != nil || ir.UserText != turn.UserInput {
			b.Fatal(err)
		}
		or, err := rt.RunOutput(ctx, out, demiurge.OutputEnv{Turn: turn, ResponseText: "the answer", Workspace: ws})
		if err != nil || len(or.Intents) != 1 {
			b.Fatal(err)
		}
	}
}
