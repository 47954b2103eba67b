package authored_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/demiurge/demiurge/authored"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/policy"
)

// ctx.capability grants from the turn's pinned grants for the tool path
// (path grants, then defaults) or from the tool's own capabilities list.
func TestCtxCapabilityCan(t *testing.T) {
	f := newFixture(t, fixtureCore, authored.Options{})
	check := []any{"net.fetch", "path.only", "fs.read", "fs.write", "counter.run", ""}
	tests := []struct {
		name   string
		grants policy.Grants
		want   map[string]any
	}{
		{"core grants", coreGrants(f.core), map[string]any{
			"net.fetch": true, "path.only": true, "fs.read": true, "fs.write": false, "counter.run": true, "": false,
		}},
		{"no grants", policy.Grants{}, map[string]any{
			"net.fetch": true, "path.only": false, "fs.read": false, "fs.write": false, "counter.run": false, "": false,
		}},
		{"other path's grants", policy.NewGrants(nil, map[string][]string{"agent/tools/gated_path": {"fs.write"}}), map[string]any{
			"net.fetch": true, "path.only": false, "fs.read": false, "fs.write": false, "counter.run": false, "": false,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := f.invokeWith(t, t.Context(), "probe", map[string]any{"check": check}, turnContext(f.core, tt.grants))
			if out.IsError || !reflect.DeepEqual(out.Data, tt.want) {
				t.Fatalf("outcome %#v, want data %v", out, tt.want)
			}
		})
	}
}

func TestCtxCapabilityRequire(t *testing.T) {
	f := newFixture(t, fixtureCore, authored.Options{})
	line := lineOf(t, "agent/tools/probe/module.star", "require")
	if out := f.invoke(t, "probe", map[string]any{"require": []any{"net.fetch", "path.only", "fs.read"}}); out.IsError || out.Content != "ok" {
		t.Fatalf("granted require: %#v", out)
	}
	out := f.invoke(t, "probe", map[string]any{"require": []any{"net.fetch", "fs.write"}})
	want := failedWith(fmt.Sprintf("agent/tools/probe/module.star:%d: capability denied: fs.write for agent/tools/probe", line))
	if !reflect.DeepEqual(out, want) {
		t.Fatalf("outcome=%#v\nwant    %#v", out, want)
	}
}

// A tool's singular capability is checked before the module is read, against
// path grants and defaults only: the tool's own capabilities list never
// satisfies it, even in a snapshot that merged that list into the path grants.
func TestToolCapabilityGate(t *testing.T) {
	f := newFixture(t, fixtureCore, authored.Options{})
	merged := map[string][]string{}
	for _, tool := range f.core.Tools {
		merged[tool.RelPath] = f.core.CapabilityGrants(tool.RelPath) // includes component lists
	}
	mergedGrants := policy.NewGrants(f.core.CapabilityGrants(""), merged)
	denied := func(tool, capability string) effect.Outcome {
		return effect.Outcome{IsError: true, Denial: "capability", Content: "capability denied: " + capability + " for agent/tools/" + tool}
	}
	ran := effect.Outcome{Content: "ran", ExecutionStarted: true}
	tests := []struct {
		name   string
		tool   string
		grants policy.Grants
		want   effect.Outcome
	}{
		{"own list does not self-grant", "gated_self", coreGrants(f.core), denied("gated_self", "fs.write")},
		{"own list merged into the snapshot", "gated_self", mergedGrants, denied("gated_self", "fs.write")},
		{"path grant", "gated_path", coreGrants(f.core), ran},
		{"path grant missing from the turn", "gated_path", policy.NewGrants([]string{"fs.read"}, nil), denied("gated_path", "fs.write")},
		{"turn grant the core does not make", "gated_self", policy.NewGrants([]string{"fs.write"}, nil), denied("gated_self", "fs.write")},
		{"default", "gated_default", coreGrants(f.core), ran},
		{"no grants", "gated_default", policy.Grants{}, denied("gated_default", "fs.read")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := f.invokeWith(t, t.Context(), tt.tool, nil, turnContext(f.core, tt.grants))
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("outcome=%#v\nwant    %#v", got, tt.want)
			}
		})
	}
}

// A denied gate never reads the module.
func TestGateRunsBeforeRead(t *testing.T) {
	f := newFixture(t, fixtureCore, authored.Options{})
	out := f.invokeWith(t, t.Context(), "counted", nil, turnContext(f.core, policy.Grants{}))
	if out.Denial != "capability" || f.loads.n.Load() != 0 {
		t.Fatalf("outcome %#v, loads %d: want a denial before any load", out, f.loads.n.Load())
	}
}
