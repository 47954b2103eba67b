package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/authored"
	"github.com/demiurge/demiurge/builtin"
	"github.com/demiurge/demiurge/cmd/bench/internal/procstat"
	"github.com/demiurge/demiurge/core"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/policy"
	"github.com/demiurge/demiurge/redact"
	"github.com/demiurge/demiurge/starlark"
)

// Targets of the EffectRuntime figures.
const (
	catalogTarget   = 5 * time.Millisecond
	dispatchTarget  = 50 * time.Microsecond
	readTarget      = 5 * time.Millisecond
	readRSSTarget   = 8.0  // MiB
	searchRSSTarget = 16.0 // MiB
	gib             = 1 << 30
)

// catalogRows measures catalog preparation for a core with 200 authored
// tools: the builtin and authored definitions, metadata and approval
// folding, schema compilation and collision checks, as every turn does.
func catalogRows(dir string, c counts) ([]row, error) {
	agents := filepath.Join(dir, "agents")
	if err := core.InstallTemplates(agents, "assistant", false); err != nil {
		return nil, err
	}
	tools := filepath.Join(agents, "assistant", "agent", "tools")
	for i := range 200 {
		d := filepath.Join(tools, fmt.Sprintf("tool_%03d", i))
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
		yaml := fmt.Sprintf("description: Tool %d.\ninput_schema:\n  type: object\n  properties:\n    n%d: {type: integer, maximum: %d}\n  additionalProperties: false\nrisk: low\napproval_policy: auto\n", i, i, i+1)
		if err := os.WriteFile(filepath.Join(d, "tool.yaml"), []byte(yaml), 0o600); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(d, "module.star"), []byte("def execute(ctx, args):\n    return \"ok\"\n"), 0o600); err != nil {
			return nil, err
		}
	}
	cr, err := core.Load(filepath.Join(agents, "assistant"))
	if err != nil {
		return nil, err
	}
	interp := starlark.NewRuntime(starlark.Options{})
	prepare := func() error {
		cat, err := effect.Prepare(effect.Sources{
			CoreID: cr.ID, Revision: "bench",
			Builtins: builtin.Definitions(cr.Manifest.Tools.Toolsets, builtin.Deps{}),
			Authored: authored.Definitions(cr, interp, authored.Options{}),
		})
		if err == nil && len(cat.Entries()) < 200 {
			err = fmt.Errorf("catalog has %d entries", len(cat.Entries()))
		}
		return err
	}
	samples, err := sample(c.turnWarm, c.turns, prepare)
	if err != nil {
		return nil, err
	}
	return timedRows(figCatalog, samples, catalogTarget), nil
}

// dispatchRows measures one no-op builtin call through the dispatcher:
// binding, schema validation, capability, approval (auto), the adapter, and
// redaction into the five views.
func dispatchRows(c counts) ([]row, error) {
	noop := effect.AdapterFunc(func(context.Context, effect.Invocation) (effect.Outcome, error) {
		return effect.Outcome{Content: "ok", ExecutionStarted: true}, nil
	})
	cat, err := effect.NewCatalog("bench", "r", []effect.Definition{{
		Name: "noop", Source: effect.SourceBuiltin, Capability: "fs.read", ApprovalPolicy: effect.ApprovalAuto, Adapter: noop,
		Schema: map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}, "additionalProperties": false},
	}})
	if err != nil {
		return nil, err
	}
	rt := effect.NewRuntime(effect.Options{Approvals: effect.NewApprovalRuntime(effect.ApprovalOptions{})})
	req, _ := cat.Bind(demiurge.ToolCall{ID: "c", Name: "noop", Arguments: map[string]any{"path": "README.md"}}, demiurge.OriginModel)
	var rows []row
	for _, set := range []struct {
		figure  string
		secrets *effect.Secrets
	}{{figDispatch, effect.NewSecrets()}, {figDispatch200, effect.NewSecrets(benchSecrets(200)...)}} {
		tc := effect.TurnContext{CoreID: "bench", CoreRevision: "r", Grants: policy.NewGrants([]string{"fs.read"}, nil), Secrets: set.secrets}
		call := func() error {
			if res := rt.Execute(context.Background(), cat, req, tc); res.Status != demiurge.EffectSucceeded {
				return fmt.Errorf("no-op call: %s %s", res.Status, res.ModelView)
			}
			return nil
		}
		samples, err := sample(100, 20*c.turns, call)
		if err != nil {
			return nil, err
		}
		s := summarize(samples)
		rows = append(rows,
			row{figure: set.figure + ", median", value: us(s.median), target: fmt.Sprintf("≤ %g µs", float64(dispatchTarget)/float64(time.Microsecond)), verdict: check(s.median <= dispatchTarget)},
			row{figure: set.figure + ", p95", value: us(s.p95)})
	}
	return rows, nil
}

// benchSecrets returns n distinct secrets of realistic length, as a turn
// holds after the Host's credentials and many discoveries.
func benchSecrets(n int) []redact.Secret {
	out := make([]redact.Secret, n)
	for i := range out {
		out[i] = redact.Secret{Name: fmt.Sprintf("BENCH_%d", i), Value: fmt.Sprintf("bench-secret-%04d-%x", i, i*7919+104729), Source: "bench"}
	}
	return out
}

// fileRows measures read_file with a 20,000-character window of a 1 GiB
// file, and search_files over a tree holding 1 GiB: wall time and the
// growth of this process's peak resident memory while they run.
func fileRows(dir string, c counts) ([]row, error) {
	ws := filepath.Join(dir, "ws")
	if err := os.MkdirAll(filepath.Join(ws, "tree"), 0o755); err != nil {
		return nil, err
	}
	text := strings.Repeat("a line of searchable text in a large file\n", 6000) // ~250 KiB
	if err := sparseFile(filepath.Join(ws, "huge.txt"), text, gib); err != nil {
		return nil, err
	}
	for i := range 64 { // 64 × 16 MiB
		if err := sparseFile(filepath.Join(ws, "tree", fmt.Sprintf("f%02d.txt", i)), text, 16<<20); err != nil {
			return nil, err
		}
	}
	cat, err := effect.NewCatalog("bench", "r", builtin.Definitions([]string{"coding"}, builtin.Deps{}))
	if err != nil {
		return nil, err
	}
	rt := effect.NewRuntime(effect.Options{})
	tc := effect.TurnContext{CoreID: "bench", CoreRevision: "r", Workspace: ws, Grants: policy.NewGrants([]string{"fs.read"}, nil)}
	run := func(name string, args map[string]any) error {
		req, _ := cat.Bind(demiurge.ToolCall{ID: "c", Name: name, Arguments: args}, demiurge.OriginModel)
		if res := rt.Execute(context.Background(), cat, req, tc); res.Status != demiurge.EffectSucceeded {
			return fmt.Errorf("%s: %s %.200s", name, res.Status, res.ModelView)
		}
		return nil
	}
	read := func() error {
		return run("read_file", map[string]any{"path": "huge.txt", "offset": 100000, "limit": 20000})
	}
	search := func() error { return run("search_files", map[string]any{"query": "needle-not-there", "path": "tree"}) }

	readGrowth, err := peakGrowth(read)
	if err != nil {
		return nil, err
	}
	samples, err := sample(3, c.turns, read)
	if err != nil {
		return nil, err
	}
	searchGrowth, err := peakGrowth(search)
	if err != nil {
		return nil, err
	}
	rows := timedRows(figReadFile, samples, readTarget)
	rows = append(rows,
		row{figure: figReadFile + ", peak RSS growth", value: fmt.Sprintf("%.1f MiB", readGrowth), target: fmt.Sprintf("≤ %g MiB", readRSSTarget), verdict: check(readGrowth <= readRSSTarget)},
		row{figure: figSearch + ", peak RSS growth", value: fmt.Sprintf("%.1f MiB", searchGrowth), target: fmt.Sprintf("≤ %g MiB", searchRSSTarget), verdict: check(searchGrowth <= searchRSSTarget)},
	)
	return rows, nil
}

// sparseFile writes head and extends the file to size with a hole.
func sparseFile(path, head string, size int64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(head); err != nil {
		f.Close()
		return err
	}
	if err := f.Truncate(size); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// peakGrowth runs fn once and returns how far this process's peak resident
// memory (VmHWM, reset through /proc/self/clear_refs) rose above its
// resident memory before the call, in MiB.
func peakGrowth(fn func() error) (float64, error) {
	debug.FreeOSMemory()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		return 0, fmt.Errorf("reset peak RSS: %w", err)
	}
	before, err := procstat.Status("/proc/self/status")
	if err != nil {
		return 0, err
	}
	if err := fn(); err != nil {
		return 0, err
	}
	after, err := procstat.Status("/proc/self/status")
	if err != nil {
		return 0, err
	}
	return max(after["VmHWM"]-before["VmRSS"], 0), nil
}

// sample runs fn warm times, then n timed times.
func sample(warm, n int, fn func() error) ([]time.Duration, error) {
	for range warm {
		if err := fn(); err != nil {
			return nil, err
		}
	}
	out := make([]time.Duration, 0, n)
	for range n {
		start := time.Now()
		if err := fn(); err != nil {
			return nil, err
		}
		out = append(out, time.Since(start))
	}
	return out, nil
}

func us(d time.Duration) string {
	return fmt.Sprintf("%.1f µs", float64(d)/float64(time.Microsecond))
}
