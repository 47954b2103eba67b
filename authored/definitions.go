package authored

import (
	"cmp"
	"path/filepath"
	"time"

	"github.com/demiurge/demiurge/core"
	"github.com/demiurge/demiurge/effect"
	"github.com/demiurge/demiurge/policy"
	"github.com/demiurge/demiurge/starlark"
)

// Defaults of Options.
const (
	DefaultTimeout   = 30 * time.Second
	DefaultMaxSteps  = starlark.DefaultMaxSteps
	DefaultMaxSource = starlark.DefaultMaxSource
)

// Options configure the authored tools of one core. tool.yaml has no timeout
// or budget key, so these apply to every tool. Zero fields take the defaults.
type Options struct {
	Timeout   time.Duration // deadline of one execute call (default 30 s)
	MaxSteps  uint64        // Starlark step budget of one execute call (default 10,000,000)
	MaxSource int           // largest module read, in bytes (default 1 MiB)
	// Python runs module.py tools (the Host's Python worker); nil fails
	// their calls.
	Python starlark.ForeignRunner
}

func (o Options) withDefaults() Options {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxSteps == 0 {
		o.MaxSteps = DefaultMaxSteps
	}
	if o.MaxSource <= 0 {
		o.MaxSource = DefaultMaxSource
	}
	return o
}

// Definitions returns one effect.Definition per authored tool of c, in the
// core's order (sorted by name). It reads no file and compiles nothing; see
// the package doc for what Invoke does. rt runs every call and must be the
// Host's shared runtime, so that compiled modules are cached across turns.
func Definitions(c *core.Core, rt *starlark.Runtime, opts Options) []effect.Definition {
	if c == nil || len(c.Tools) == 0 {
		return nil
	}
	opts = opts.withDefaults()
	defaults := c.Manifest.Capabilities.Defaults
	defaultKeys := make([]string, 0, len(defaults))
	for k := range defaults {
		defaultKeys = append(defaultKeys, k)
	}
	out := make([]effect.Definition, 0, len(c.Tools))
	for _, t := range c.Tools {
		schema := t.InputSchema
		if len(schema) == 0 {
			schema = map[string]any{"type": "object", "properties": map[string]any{}}
		}
		a := &adapter{
			name:       t.Name,
			coreDir:    c.Dir,
			relPath:    t.RelPath,
			modulePath: t.ModulePath,
			display:    displayPath(c.Dir, t.ModulePath),
			function:   cmp.Or(t.Function, "execute"),
			capability: t.Capability,
			rt:         rt,
			python:     core.IsPython(t.ModulePath),
			opts:       opts,
		}
		if len(t.Capabilities) > 0 {
			a.declared = policy.NewGrants(nil, map[string][]string{t.RelPath: t.Capabilities})
		}
		if t.Capability != "" {
			// The core's own sources for the gate, components excluded: even
			// a turn snapshot that merged the tool's list into its path
			// grants cannot let the tool grant itself the call.
			var path []string
			for k := range c.Manifest.Capabilities.Slots[t.RelPath] {
				path = append(path, k)
			}
			a.gate = policy.NewGrants(defaultKeys, map[string][]string{t.RelPath: path})
		}
		prov := t.Provenance()
		out = append(out, effect.Definition{
			Name:              t.Name,
			Description:       t.Description,
			Schema:            schema,
			Source:            effect.SourceAuthored,
			AdapterKey:        prov,
			Provenance:        prov,
			SlotPath:          t.RelPath,
			Risk:              cmp.Or(t.Risk, "medium"),
			Capability:        t.Capability,
			ApprovalPolicy:    cmp.Or(t.ApprovalPolicy, effect.ApprovalPrompt),
			ModelOutputPolicy: cmp.Or(t.ModelOutputPolicy, "content"),
			DisplayPolicy:     cmp.Or(t.DisplayPolicy, "summary"),
			Adapter:           a,
		})
	}
	return out
}

// displayPath is how errors name the module: core-relative with forward
// slashes ("agent/tools/echo/module.star"), so a model never sees the Host's
// directory layout. It falls back to the absolute path outside the core.
func displayPath(coreDir, modulePath string) string {
	rel, err := filepath.Rel(coreDir, modulePath)
	if err != nil || rel == ".." || len(rel) > 3 && rel[:3] == ".."+string(filepath.Separator) {
		return modulePath
	}
	return filepath.ToSlash(rel)
}
