package core

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/demiurge/demiurge"
	"github.com/demiurge/demiurge/internal/yamlx"
)

// Load reads the Agent Core in dir: agent.yaml, the authored surface
// (SOUL.md, pipelines.yaml, slots), authored tools when slots.tools is set,
// and the skills index. It only reads: a failed load changes nothing on disk.
//
// Every error is a *demiurge.Error with code ECONFIG and a one-line message
// naming the file ("agents/<id>/…" when dir is inside an agents directory,
// else the full path), the line for YAML, and the key or field at fault.
func Load(dir string) (*Core, error) {
	l, err := newLoader(dir)
	if err != nil {
		return nil, err
	}
	return l.load()
}

// LoadSaved is Load for a checkout of a revision the core repository
// saved: one that passed its core_load gate, which is Load. It checks
// everything Load checks except that authored input schemas compile (the
// gate compiled them), so that a turn of a process that calls no authored
// tool compiles no JSON Schema.
func LoadSaved(dir string) (*Core, error) {
	l, err := newLoader(dir)
	if err != nil {
		return nil, err
	}
	l.saved = true
	return l.load()
}

func (l *loader) load() (*Core, error) {
	manifestPath := filepath.Join(l.dir, "agent.yaml")
	data, err := l.read(manifestPath, yamlx.MaxBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, demiurge.Errorf(demiurge.ECONFIG, "missing agent.yaml: %s", l.show(manifestPath))
	}
	if err != nil {
		return nil, l.readErr(manifestPath, err)
	}
	doc, err := yamlx.Parse(l.show(manifestPath), data)
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := doc.Decode(&m); err != nil {
		return nil, err
	}
	if err := m.validate(doc, l.id); err != nil {
		return nil, err
	}
	m.applyDefaults()
	c := &Core{
		ID:            m.Agent.ID,
		Dir:           l.dir,
		Manifest:      m,
		MaxModelSteps: m.Runtime.MaxModelSteps,
		Builtins:      BuiltinTools(m.Tools.Toolsets),
		display:       l.shown,
	}

	surface, problem := l.resolve(m.Runtime.SurfaceRoot)
	if problem != "" {
		return nil, doc.Errorf(doc.Line("runtime", "surface_root"), "invalid runtime.surface_root %q: %s", m.Runtime.SurfaceRoot, problem)
	}
	if ok, _ := isDir(surface); !ok {
		return nil, demiurge.Errorf(demiurge.ECONFIG, "%s: missing authored surface: %s", l.shown, l.rel(surface))
	}
	c.SurfaceRoot = surface

	for _, root := range []struct{ key, value string }{{"schedules", m.Slots.Schedules}, {"mcp", m.Slots.MCP}} {
		// Loaded elsewhere (SchedulesDir, MCPDir), but checked here so that
		// a root leading out of the core fails the load.
		if root.value == "" {
			continue
		}
		if _, problem := l.resolve(root.value); problem != "" {
			return nil, doc.Errorf(doc.Line("slots", root.key), "invalid slots.%s %q: %s", root.key, root.value, problem)
		}
	}
	if c.Soul, err = l.loadSoul(doc, m, surface); err != nil {
		return nil, err
	}
	if err := l.loadSlots(c); err != nil {
		return nil, err
	}
	if err := l.loadTools(doc, c); err != nil {
		return nil, err
	}
	if err := l.loadSkills(doc, c); err != nil {
		return nil, err
	}
	if err := l.loadSchedules(c); err != nil {
		return nil, err
	}
	return c, nil
}

// loadSoul reads slots.soul (when set) and <surface>/SOUL.md, each once,
// and joins their trimmed texts with a blank line.
func (l *loader) loadSoul(doc *yamlx.Document, m Manifest, surface string) (string, error) {
	type candidate struct {
		abs      string
		required bool
	}
	var candidates []candidate
	if m.Slots.Soul != "" {
		abs, problem := l.resolve(m.Slots.Soul)
		if problem != "" {
			return "", doc.Errorf(doc.Line("slots", "soul"), "invalid slots.soul %q: %s", m.Slots.Soul, problem)
		}
		candidates = append(candidates, candidate{abs, true})
	}
	candidates = append(candidates, candidate{filepath.Join(surface, "SOUL.md"), false})
	var parts []string
	seen := map[string]bool{}
	for _, cand := range candidates {
		if seen[cand.abs] {
			continue
		}
		seen[cand.abs] = true
		data, err := l.read(cand.abs, maxTextBytes)
		if errors.Is(err, fs.ErrNotExist) {
			if cand.required {
				return "", doc.Errorf(doc.Line("slots", "soul"), "slots.soul file not found: %s", l.rel(cand.abs))
			}
			continue
		}
		if err != nil {
			return "", l.readErr(cand.abs, err)
		}
		if text := strings.TrimSpace(string(data)); text != "" {
			parts = append(parts, text)
		}
	}
	return strings.Join(parts, "\n\n"), nil
}

// Workspace returns runtime.workspace resolved against the core directory,
// or "" when the core does not set one.
func (c *Core) Workspace() string {
	w := c.Manifest.Runtime.Workspace
	if w == nil {
		return ""
	}
	p := strings.TrimSpace(*w)
	if !filepath.IsAbs(p) {
		p = filepath.Join(c.Dir, p)
	}
	return filepath.Clean(p)
}

// SchedulesDir returns the absolute schedules root (slots.schedules, default
// <surface>/schedules); it may not exist.
func (c *Core) SchedulesDir() string { return c.root(c.Manifest.Slots.Schedules, "schedules") }

// MCPDir returns the absolute MCP declarations root (slots.mcp, default
// <surface>/mcp); it may not exist.
func (c *Core) MCPDir() string { return c.root(c.Manifest.Slots.MCP, "mcp") }

// SkillsDir returns the absolute skills root (slots.skills, default
// <surface>/skills); it may not exist.
func (c *Core) SkillsDir() string { return c.root(c.Manifest.Slots.Skills, "skills") }

// ToolsDir returns the absolute authored-tools root, or "" when slots.tools
// is not set.
func (c *Core) ToolsDir() string {
	if c.Manifest.Slots.Tools == "" {
		return ""
	}
	return c.root(c.Manifest.Slots.Tools, "")
}

func (c *Core) root(configured, def string) string {
	if configured != "" {
		return filepath.Join(c.Dir, filepath.FromSlash(filepathClean(configured)))
	}
	return filepath.Join(c.SurfaceRoot, def)
}

func filepathClean(p string) string { return filepath.ToSlash(filepath.Clean(filepath.FromSlash(p))) }

// RelPath returns the core-relative slash path of abs (a path inside the
// core), as used for slot paths and provenance.
func (c *Core) RelPath(abs string) string {
	r, err := filepath.Rel(c.Dir, abs)
	if err != nil {
		return filepath.ToSlash(abs)
	}
	return filepath.ToSlash(r)
}

// DisplayPath names a file of the core the way load errors do:
// "agents/<id>/<rel>" when the core lives in an agents directory.
func (c *Core) DisplayPath(abs string) string { return c.display + "/" + c.RelPath(abs) }
