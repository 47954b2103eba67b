package authored_test

import (
	"reflect"
	"slices"
	"testing"

	"github.com/demiurge/demiurge/authored"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/starlark"
)

func TestDefinitionsMetadata(t *testing.T) {
	f := newFixture(t, fixtureCore, authored.Options{})
	if got, want := len(f.order), len(f.core.Tools); got != want || want == 0 {
		t.Fatalf("%d definitions for %d tools", got, want)
	}
	if !slices.IsSorted(f.order) {
		t.Fatalf("definitions not in name order: %v", f.order)
	}
	for _, name := range f.order {
		d := f.defs[name]
		rel := "agent/tools/" + name
		if d.Source != effect.SourceAuthored || d.SlotPath != rel || d.AdapterKey != "authored:"+rel || d.Provenance != "authored:"+rel {
			t.Errorf("%s: source=%q slot_path=%q adapter_key=%q provenance=%q", name, d.Source, d.SlotPath, d.AdapterKey, d.Provenance)
		}
		if d.Adapter == nil {
			t.Errorf("%s: no adapter", name)
		}
	}

	defaults := f.def(t, "defaults")
	want := effect.Definition{
		Name: "defaults", Description: "A tool with every default.",
		Schema: map[string]any{"type": "object", "properties": map[string]any{}},
		Source: "authored", AdapterKey: "authored:agent/tools/defaults", Provenance: "authored:agent/tools/defaults",
		SlotPath: "agent/tools/defaults", Risk: "medium", Capability: "", ApprovalPolicy: "prompt",
		ModelOutputPolicy: "content", DisplayPolicy: "summary",
	}
	defaults.Adapter = nil
	if !reflect.DeepEqual(defaults, want) {
		t.Fatalf("defaults=%+v\nwant      %+v", defaults, want)
	}

	echo := f.def(t, "echo")
	wantSchema := map[string]any{
		"type":       "object",
		"properties": map[string]any{"text": map[string]any{"type": "string"}},
		"required":   []any{"text"},
	}
	if !reflect.DeepEqual(echo.Schema, wantSchema) {
		t.Fatalf("echo schema=%#v, want %#v", echo.Schema, wantSchema)
	}
	if echo.Risk != "low" || echo.ApprovalPolicy != "auto" || echo.DisplayPolicy != "full" {
		t.Fatalf("echo risk=%q approval=%q display=%q", echo.Risk, echo.ApprovalPolicy, echo.DisplayPolicy)
	}
	if got := f.def(t, "gated_self").Capability; got != "fs.write" {
		t.Fatalf("gated_self capability=%q, want fs.write", got)
	}

	// The definitions bind into a catalog as they are.
	defs := make([]effect.Definition, 0, len(f.order))
	for _, name := range f.order {
		defs = append(defs, f.defs[name])
	}
	cat, err := effect.NewCatalog(f.core.ID, "rev_1", defs)
	if err != nil {
		t.Fatal(err)
	}
	if md := cat.Entries()[0].ModelMetadata(); md["source"] != "authored" || md["slot_path"] != "agent/tools/"+f.order[0] {
		t.Fatalf("model metadata %v", md)
	}
}

func TestDefinitionsWithoutTools(t *testing.T) {
	if defs := authored.Definitions(nil, starlark.NewRuntime(starlark.Options{}), authored.Options{}); len(defs) != 0 {
		t.Fatalf("nil core gave %d definitions", len(defs))
	}
}
